/**
 * Types and limits of the search (see `./index.ts` for the match definition).
 */
import type { OrderSpec } from '../order/openOrder';
import { RangeRequestError } from '../errors';

/** Most terms one search accepts (a terms file of names: `./termsFile.ts`). */
export const MAX_TERMS = 10_000;
/** Longest term in UTF-8 bytes (for `ids` terms: in ids). */
export const MAX_TERM_BYTES = 1000;
/** Buckets `defaultPer` aims at. */
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
 * mismatched parts in `mergeCounts` (`merge.ts`)). The message is one line; the CLI exits 2. A kind of
 * {@link RangeRequestError} (bad request, not bad data).
 */
export class SearchInputError extends RangeRequestError {
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
 * The result of `countTerms`: exactly the CLI's `count --json` shape.
 * `buckets` cover updates `0..updates−1` in order, `per` updates each (the last may be shorter).
 */
export interface CountResult {
  /** The terms as parsed by `parseTerms` (ids terms as `"791,4062"`). */
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
  /**
   * Counted through a run's training order (absent: the card's sequential order): buckets hold
   * one count per update that read the occurrence's first token as an input, and their `tokens`
   * are the input tokens those updates read (updates × samples × input tokens per sample).
   */
  order?: string;
  /** With {@link order}: occurrences no update of the run read as an input, per term. */
  not_read?: number[];
  /**
   * With `shards`: the dataset the part belongs to (`datasetFingerprint` in `merge.ts`) and its
   * number of manifest entries, so `merge` refuses parts of different datasets and finds ranges
   * no part covers.
   */
  dataset?: { fingerprint: string; shards: number };
  /** A partial merge (`merge --allow-partial`): the dataset's shard ranges `[A, B)` no part covered. */
  missingShards?: [number, number][];
  /**
   * `count --share`: the outputs also give each bucket's shares (`bucketShares` in `./share.ts`),
   * always computed from the counts at output time, so a merge recomputes them from merged counts.
   */
  withShares?: boolean;
}

/** Progress of a running count, reported when a shard finishes (and about every 250 ms). */
export interface CountProgress {
  shardsDone: number;
  shardsTotal: number;
  /** Tokens scanned so far (whole chunks of each shard: their counts are in `partial`). */
  tokensDone: number;
  tokensTotal: number;
  /** Bytes of token storage read per second so far. */
  bytesPerSecond: number;
  /** Estimated time left in ms, null until a rate is known. */
  etaMs: number | null;
  /** The counts of the tokens scanned so far, chunk by chunk (same shape as the final result;
   *  a bucket's `tokens` are those scanned so far; a match that starts in one chunk and ends
   *  in the next counts with the next). A fresh object each time: safe to keep or post. */
  partial: CountResult;
}

/** Options of `countTerms`. */
export interface CountOptions {
  /** Updates per bucket (default `defaultPer`). */
  per?: number;
  /** Manifest entries `[A, B)` to scan (default all). */
  shards?: [number, number];
  /** Worker threads (default: CPU cores, at most the number of shards). */
  jobs?: number;
  /** Cancels the scan: the promise rejects with `CancelledError`. */
  signal?: AbortSignal;
  /** Called with progress and the partial counts as chunks are scanned (at most every 100 ms, and when each shard finishes). */
  onProgress?: (p: CountProgress) => void;
  /** Tokens per sequential read, and so per partial count (default 4 Mi tokens = 16 MiB). */
  chunkTokens?: number;
  /** Explicit path of `searchWorker.js` (default: found like verify finds its worker). */
  workerFile?: string;
  /**
   * The run's training order (not the sequential one) as plain data, opened here and in each
   * worker: updates and buckets follow it (see {@link CountResult.order}). Not with `shards`.
   */
  order?: OrderSpec;
}

/** One occurrence, as listed by `findTerms` (stream order). */
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

/** Options of `findTerms`. */
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
