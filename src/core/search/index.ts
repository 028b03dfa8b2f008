/**
 * Search the stream: count and list the occurrences of literal terms over training time.
 *
 * ## What a match is (exact; the README says the same)
 * - A **document** is the bytes of the tokens between two EOS ids (an added token contributes its
 *   content's UTF-8 bytes, as the decode does; an id with no token contributes no bytes). A match
 *   never crosses an EOS; it does cross token edges and shard edges.
 * - A term is a literal string (UTF-8). An **occurrence** is every byte position in a document
 *   where the term starts; overlapping occurrences each count ("aa" occurs 3 times in "aaaa").
 * - An occurrence's **place** is the global offset of the token that holds its first byte; its
 *   update is `offset ÷ G` (0-based), then sequence and position as everywhere else. An
 *   occurrence that starts in the look-ahead token(s) (after the last whole update) belongs to no
 *   update: it is not counted by {@link countTerms} (and {@link findTerms} lists it with
 *   `update: null`).
 * - `word`: the characters just before and after the occurrence are not letters, digits or `_`
 *   (Unicode `\p{L}`, `\p{N}`); a document edge (EOS, start or end of the stream) counts as a
 *   non-word character; bytes that are not valid UTF-8 decode to U+FFFD, a non-word character.
 * - `ignoreCase`: Unicode simple case folding (the folding of JavaScript's `/iu` regular
 *   expressions, `CaseFolding.txt` statuses C and S): each character of the term matches every
 *   character with the same simple fold, whatever its UTF-8 length.
 * - `ids`: a term given as token ids (`"791,4062"`) matches exact runs of ids anywhere, EOS
 *   included when the term names it; its place is its first token. `word`/`ignoreCase` do not
 *   apply (rejected by {@link parseTerms}).
 *
 * Results are identical to a byte-level reference over decoded documents
 * (`scripts/reference_search.py`), never approximately equal.
 *
 * ## How (speed: token speed, not decode speed)
 * All terms are compiled into one automaton over bytes (ids for `ids`), expanded into a table
 * indexed by (state, token id) that moves through all of a token's bytes at once and records
 * the matches it completes, so the scan is one table lookup per token. Count scans run in
 * worker threads (`src/core/workers/searchWorker.ts`), one shard per task, reading big
 * sequential ranges through {@link TokenStream}.
 *
 * Units: offsets and counts of tokens are global token offsets / tokens; `bytesPerSecond` is
 * bytes of token storage read per second.
 */
import type { Dataset } from '../dataset';
import type { LoadedTokenizer } from '../tokenizer';

/** Most terms one search accepts. */
export const MAX_TERMS = 64;
/** Longest term in UTF-8 bytes (for `ids` terms: in ids). */
export const MAX_TERM_BYTES = 1000;
/** Buckets {@link defaultPer} aims at. */
export const DEFAULT_BUCKETS = 400;
/** Worker bundle name, found next to the bundle or in `<package>/dist/workers/`. */
export const SEARCH_WORKER_FILE = 'searchWorker.js';

/** How terms match (see the file header). */
export interface SearchOptions {
  /** Whole word: no letter, digit or `_` just before or after. */
  word: boolean;
  /** Unicode simple case folding. */
  ignoreCase: boolean;
  /** Terms are comma-separated token ids matched as exact runs. */
  ids: boolean;
}

/**
 * Bad search input (empty term, whitespace-only term, term over {@link MAX_TERM_BYTES} bytes,
 * more than {@link MAX_TERMS} terms, non-uint32 ids, `per` 0, shard range outside the manifest,
 * mismatched parts in {@link mergeCounts}). The message is one line; the CLI exits 2.
 */
export class SearchInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SearchInputError';
  }
}

/** Counts of one bucket of `per` consecutive updates. */
export interface CountBucket {
  /** First update of the bucket (0-based). */
  first_update: number;
  /** Last update of the bucket (inclusive). */
  last_update: number;
  /** Training tokens of the bucket that were scanned (all of `(last−first+1)·G` for a whole-stream
   *  count; for a `shards` part only those inside its shards, so parts add up). */
  tokens: number;
  /** Occurrences per term, in the order of {@link CountResult.terms}. */
  counts: number[];
}

/**
 * The result of {@link countTerms}: exactly the CLI's `count --json` shape.
 * `buckets` cover updates `0..updates−1` in order, `per` updates each (the last may be shorter).
 */
export interface CountResult {
  /** The terms as parsed by {@link parseTerms} (ids terms as `"791,4062"`). */
  terms: string[];
  options: { word: boolean; ignore_case: boolean; ids: boolean };
  /** Updates per bucket (≥ 1). */
  per: number;
  /** Whole updates in the stream (`Schedule.numUpdates`). */
  updates: number;
  buckets: CountBucket[];
  /** Occurrences per term over all buckets. */
  totals: number[];
  /** Manifest entries `[A, B)` (in `start_token` order) this part scanned; absent = the whole stream. */
  shards?: [number, number];
}

/** Progress of a running count, reported when a shard finishes (and about every 250 ms). */
export interface CountProgress {
  shardsDone: number;
  shardsTotal: number;
  /** Tokens of the scanned shards done so far. */
  tokensDone: number;
  tokensTotal: number;
  /** Bytes of token storage read per second so far. */
  bytesPerSecond: number;
  /** Estimated time left in ms, null until a rate is known. */
  etaMs: number | null;
  /** The counts of the finished shards (same shape as the final result; buckets of unfinished
   *  shards are partly filled). A fresh object each time: safe to keep or post. */
  partial: CountResult;
}

/** Options of {@link countTerms}. */
export interface CountOptions {
  /** Updates per bucket (default {@link defaultPer}). */
  per?: number;
  /** Manifest entries `[A, B)` to scan (default all). */
  shards?: [number, number];
  /** Worker threads (default: CPU cores, at most the number of shards). */
  jobs?: number;
  /** Cancels the scan: the promise rejects with `CancelledError`. */
  signal?: AbortSignal;
  /** Called with progress and the partial counts as shards finish. */
  onProgress?: (p: CountProgress) => void;
  /** Explicit path of `searchWorker.js` (default: found like verify finds its worker). */
  workerFile?: string;
}

/** One occurrence, as listed by {@link findTerms} (stream order). */
export interface Occurrence {
  /** The term as parsed. */
  term: string;
  /** Index of the term in the parsed list. */
  termIndex: number;
  /** Global token offset of the token holding the occurrence's first byte (first id for `ids`). */
  offset: number;
  /** 0-based update, or null in the look-ahead token(s). */
  update: number | null;
  /** Sequence within the update, or null in the look-ahead. */
  sequence: number | null;
  /** Position within the sequence, or null in the look-ahead. */
  position: number | null;
  /** Decoded text around the occurrence (up to `context` characters each side, never across an EOS). */
  context: string;
  /** UTF-16 index in `context` where the match starts. */
  matchStart: number;
  /** UTF-16 index in `context` just after the match. */
  matchEnd: number;
}

/** Options of {@link findTerms}. */
export interface FindOptions {
  /** Most occurrences to yield (default 100). */
  limit?: number;
  /** Characters of context each side (default 60). */
  context?: number;
  /** First global token offset where an occurrence may start (default 0). */
  fromOffset?: number;
  /** Occurrences start before this global token offset (default: end of stream). */
  toOffset?: number;
  /** Cancels: the iterator throws `CancelledError`. */
  signal?: AbortSignal;
}

/**
 * Validates and normalizes search terms.
 * - text terms: kept as given (no trimming); rejected when empty, only whitespace, or over
 *   {@link MAX_TERM_BYTES} UTF-8 bytes, or when they contain a lone surrogate;
 * - `ids` terms: comma/space separated uint32 ids, normalized to `"791,4062"`; at most
 *   {@link MAX_TERM_BYTES} ids;
 * - at most {@link MAX_TERMS} terms; duplicates are kept (each counted in its own column).
 * @throws SearchInputError with a one-line message naming the term.
 */
export function parseTerms(raw: string[], options: SearchOptions): string[] {
  void raw; void options;
  throw new Error('not implemented');
}

/** Updates per bucket so that `updates` make about {@link DEFAULT_BUCKETS} buckets (≥ 1). */
export function defaultPer(updates: number): number {
  return Math.max(1, Math.ceil(updates / DEFAULT_BUCKETS));
}

/**
 * Parses `A:B` (manifest entries A..B−1, 0-based, in `start_token` order; `A:` = to the end,
 * `:B` = from 0) against a dataset of `numShards` entries.
 * @throws SearchInputError when malformed, empty or outside `[0, numShards]`.
 */
export function parseShardRange(spec: string, numShards: number): [number, number] {
  void spec; void numShards;
  throw new Error('not implemented');
}

/**
 * Counts the occurrences of `terms` per bucket of `per` updates over the whole stream or the
 * shards `[A, B)`, in worker threads.
 * @param terms terms from {@link parseTerms} (same options).
 * @throws SearchInputError for bad `per`/`shards`; DataError for a missing/unreadable shard, a
 *   gap in the manifest, or a shard that changed while it was read (named as verify does);
 *   CancelledError when `signal` fires.
 */
export async function countTerms(ds: Dataset, tok: LoadedTokenizer, terms: string[], options: SearchOptions,
  opts: CountOptions = {}): Promise<CountResult> {
  void ds; void tok; void terms; void options; void opts;
  throw new Error('not implemented');
}

/**
 * Lists occurrences in stream order, scanning lazily (the host is never blocked for more than
 * one chunk of about a million tokens). Memory is bounded by `limit`.
 * @throws (from the iterator) DataError for unreadable shards; CancelledError when `signal` fires.
 */
export function findTerms(ds: Dataset, tok: LoadedTokenizer, terms: string[], options: SearchOptions,
  opts: FindOptions = {}): AsyncIterable<Occurrence> {
  void ds; void tok; void terms; void options; void opts;
  throw new Error('not implemented');
}

/**
 * Adds partial results of disjoint shard ranges (`count --shards`) into one: counts, totals and
 * bucket tokens are summed. The parts' ranges must tile one contiguous range `[A, B)`, which the
 * result names in `shards` (compare with a whole-stream count ignoring `shards`).
 * @throws SearchInputError when parts overlap or leave a gap, differ in terms, options, per or
 *   updates, or a part is not a count result (the message names the part by its index).
 */
export function mergeCounts(parts: CountResult[]): CountResult {
  void parts;
  throw new Error('not implemented');
}
