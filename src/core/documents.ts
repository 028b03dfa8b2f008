/**
 * Documents in the token stream. Where the format has no document index, documents are separated
 * by the EOS / delimiter id (100257 in dolma2, per the dataset card) by the one rule of
 * `documentRule.ts`: by default each EOS **closes** the document before it, so document `n`
 * (0-based) is the tokens after the n-th EOS up to and including the (n+1)-th EOS; where the
 * format's delimiter **opens** documents (llm.c), document `n` begins at its delimiter. Document 0
 * starts at global token 0. A document may begin many shards before a given offset, so backward
 * scans are bounded and say so when the bound is hit.
 *
 * Units: offsets and counts are in tokens.
 */
import { TokenStream } from './stream';
import type { DelimiterRole, FormatDocuments } from './formats/types';
import { DocumentRule, boundaryOf, countEnd, leadingDelimiters } from './documentRule';
import type { StreamIndex } from './streamIndex/streamIndex';
import { CancelledError, RangeRequestError } from './errors';
import { count, fmt } from './units';

/** Tokens read per chunk while scanning (4 MiB). */
export const SCAN_CHUNK_TOKENS = 1 << 20;

/**
 * Tokens a front end may scan (counting EOS tokens) to number documents without asking: the
 * default of the `tokenShards.documentScanLimit` setting (package.json) and the CLI's budget.
 */
export const DEFAULT_DOCUMENT_SCAN_LIMIT = 25_000_000;

/**
 * The document around an offset. `start`/`end` are global token offsets, `end` exclusive (a
 * closing EOS is inside; the next document's opening delimiter is not).
 */
export interface DocumentBounds {
  /** First token of the document (its opening delimiter, where the delimiter opens documents), or the scan bound when `startKnown` is false. */
  start: number;
  /** One past the closing EOS, the offset of the next opening delimiter, or the scan bound / stream end when `endKnown` is false. */
  end: number;
  /** False when no delimiter (nor the stream start) was found within the scan limit: the document "starts before `start`". */
  startKnown: boolean;
  /**
   * False when the document's end was not found within the scan limit; at the stream end: false
   * for a closing EOS missing there, true where the delimiter opens documents (the stream end ends it).
   */
  endKnown: boolean;
  /** Tokens from `start` up to the next delimiter: a closing EOS excluded, an opening delimiter included (what `locate` prints as `document_length`). */
  length: number;
}

/**
 * The document of a format's index (Megatron `.idx`, datatrove `.ds.index`, Dolma `.csv.gz`)
 * holding global token `offset`: its 0-based number and token range `[start, end)`; the entry's
 * tokens, its stored EOS included. Binary search over the starts.
 * @param totalTokens the stream's length (the last document's end).
 * @throws RangeRequestError when `offset` is outside `[0, totalTokens)`.
 */
export function formatDocumentAt(
  documents: FormatDocuments,
  offset: number,
  totalTokens: number,
): { document: number; start: number; end: number } {
  if (!Number.isSafeInteger(offset) || offset < 0 || offset >= totalTokens) {
    throw new RangeRequestError(`token offset ${fmt(offset)} is outside the stream [0, ${fmt(totalTokens)})`);
  }
  const starts = documents.starts;
  let lo = 0,
    hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { document: lo, start: starts[lo] ?? 0, end: lo + 1 < starts.length ? starts[lo + 1] : totalTokens };
}

/** Counts occurrences of `id` in an array (the scanning hot loop). */
export function countId(ids: Uint32Array, id: number): number {
  let n = 0;
  for (let i = 0; i < ids.length; i++) if (ids[i] === id) n++;
  return n;
}

/**
 * Finds the document containing global token `offset` by the document rule (`documentRule.ts`):
 * the last delimiter in `[0, countEnd(offset))` gives its start, the first one from there its end.
 * @param limit how many tokens to scan in each direction before giving up (reported via
 *   `startKnown`/`endKnown` = false).
 * @param role what `eos` does (`Dataset.format.delimiter`; `closes` by default).
 * @throws RangeRequestError when `offset` is outside the stream.
 */
export async function findDocumentBounds(
  stream: TokenStream,
  offset: number,
  eos: number,
  limit: number,
  role: DelimiterRole = 'closes',
): Promise<DocumentBounds> {
  stream.locate(offset); // range check
  // Backward: the last delimiter before the split point; forward: the first one at or after it.
  const split = countEnd(role, offset);
  const lowBound = Math.max(0, split - limit);
  const before = await lastIdIn(stream, eos, lowBound, split);
  const highBound = Math.min(stream.totalTokens, split + limit);
  const after = await firstIdIn(stream, eos, split, highBound);
  const start = before >= 0 ? boundaryOf(role, before) : lowBound;
  const end = after >= 0 ? boundaryOf(role, after) : highBound;
  return {
    start,
    startKnown: before >= 0 || lowBound === 0,
    end,
    endKnown: after >= 0 || (role === 'opens' && highBound === stream.totalTokens),
    length: (after >= 0 ? after : highBound) - start,
  };
}

/** Global offset of the last `id` in tokens `[from, to)`, read backwards in chunks, or -1. */
async function lastIdIn(stream: TokenStream, id: number, from: number, to: number): Promise<number> {
  for (let hi = to; hi > from;) {
    const lo = Math.max(from, hi - SCAN_CHUNK_TOKENS);
    const i = (await stream.read(lo, hi - lo)).lastIndexOf(id);
    if (i >= 0) return lo + i;
    hi = lo;
  }
  return -1;
}

/** Global offset of the first `id` in tokens `[from, to)`, read in chunks, or -1. */
async function firstIdIn(stream: TokenStream, id: number, from: number, to: number): Promise<number> {
  for (let lo = from; lo < to;) {
    const hi = Math.min(to, lo + SCAN_CHUNK_TOKENS);
    const i = (await stream.read(lo, hi - lo)).indexOf(id);
    if (i >= 0) return lo + i;
    lo = hi;
  }
  return -1;
}

/**
 * Document numbering over a whole stream: the ONE place every front end asks (status bar, shard
 * editor cursor line, update view, Go to Document, hovers, CLI), so they always say the same number.
 *
 * With a stream index attached ({@link attachStreamIndex}, `streamIndex.ts`), numbers, document
 * starts and the document count come from it: instant (at most one block of 16,384 tokens read)
 * for every offset in the indexed shards. Without one (or past the indexed shards) it needs the EOS
 * count of every segment before the offset of interest; counts are computed on demand by scanning
 * segment files in chunks (async, cancellable, never more than one chunk of synchronous work) and
 * memoised. They can be exported and imported so a front end can persist them.
 *
 * When the storage format has its own document index ({@link FormatDocuments}: Megatron, datatrove,
 * Dolma), numbers and starts come from it, instantly, and EOS plays no part. Otherwise numbers
 * follow the document rule ({@link rule}, `documentRule.ts`): the per-segment counts are delimiter
 * counts either way, so cached counts and the stream index serve both readings.
 */
export class DocumentIndex {
  private readonly counts: (number | undefined)[];
  /** The delimiter and what it does. */
  readonly rule: DocumentRule;
  private leadMemo?: Promise<0 | 1>;
  private readonly pending = new Map<number, Promise<number>>();
  private index?: StreamIndex;
  private attachListeners = new Set<() => void>();
  /** A stream index being loaded: numbering waits for it, so no caller ever sees a number from before it. */
  private attaching?: Promise<void>;

  /**
   * @param documents the format's document index, when it has one (`Dataset.format.documents`).
   * @param role what `eos` does (`Dataset.format.delimiter`; `closes` by default). Prefer
   *   {@link documentIndexOf}, which takes all three from a dataset.
   */
  constructor(
    readonly stream: TokenStream,
    readonly eos: number,
    readonly documents?: FormatDocuments,
    role: DelimiterRole = 'closes',
  ) {
    this.counts = new Array(stream.segments.length).fill(undefined);
    this.rule = { delimiter: eos, role };
  }

  /** Delimiters that begin no document (`leadingDelimiters`): reads the stream's first token once. */
  private lead(): Promise<0 | 1> {
    if (this.rule.role !== 'opens' || this.stream.totalTokens === 0) return Promise.resolve(0);
    this.leadMemo ??= this.stream.read(0, 1).then((ids) => leadingDelimiters(this.rule, ids[0]));
    return this.leadMemo;
  }

  /**
   * Uses a stream index of this stream (same segments) as the source of numbers; its per-shard EOS
   * counts seed {@link exportCounts}. `undefined` detaches (e.g. the index went stale).
   * Listeners of {@link onAttach} are told.
   */
  attachStreamIndex(index: StreamIndex | undefined): void {
    if (
      index &&
      (index.segments.length !== this.stream.segments.length ||
        index.rule.role !== this.rule.role ||
        index.segments.some((s, i) => s.startToken !== this.stream.segments[i].startToken))
    ) {
      throw new Error('the stream index belongs to another stream');
    }
    this.index = index;
    if (index)
      index.records.forEach((r, i) => {
        if (r) this.counts[i] = r.eosCount;
      });
    for (const f of [...this.attachListeners]) f();
  }

  /**
   * Attaches the stream index `loading` resolves to (undefined: none). Until it settles, every
   * numbering call waits for it (so every front end gets the same, final number).
   */
  attachWhenLoaded(loading: Promise<StreamIndex | undefined>): void {
    const p = loading.then(
      (ix) => this.attachStreamIndex(ix),
      () => undefined,
    );
    this.attaching = p;
    void p.finally(() => {
      if (this.attaching === p) this.attaching = undefined;
    });
  }

  /** Resolves once a stream index being loaded is attached (at once when none is loading). */
  async ready(): Promise<void> {
    if (this.attaching) await this.attaching;
  }

  /** The attached stream index, if any. */
  get streamIndex(): StreamIndex | undefined {
    return this.index;
  }

  /** Calls `f` whenever a stream index is attached or detached; returns the unsubscribe function. */
  onAttach(f: () => void): () => void {
    this.attachListeners.add(f);
    return () => this.attachListeners.delete(f);
  }

  /** True when the document number at `offset` is instant (an attached index covers it). */
  isInstantAt(offset: number): boolean {
    return !!this.documents || !!this.index?.covers(offset);
  }

  /** Documents in the stream when known without reading (the format's index, a complete attached index), else undefined. Valid numbers: 0..count−1. */
  get knownDocumentCount(): number | undefined {
    return this.documents ? this.documents.starts.length : this.index?.documentCount;
  }

  /** Known EOS counts per segment (undefined = not scanned yet). */
  exportCounts(): (number | undefined)[] {
    return [...this.counts];
  }

  /** Seeds counts from a cache (same length as the segments; undefined entries are rescanned). */
  importCounts(counts: (number | undefined)[]): void {
    counts.forEach((c, i) => {
      if (i < this.counts.length && typeof c === 'number') this.counts[i] = c;
    });
  }

  /** True when every segment before `segment` has a known count (numbering there is instant). */
  isReadyUpTo(segment: number): boolean {
    for (let i = 0; i < segment; i++) if (this.counts[i] === undefined) return false;
    return true;
  }

  /**
   * EOS count of one segment (scans it if not known).
   * @throws CancelledError when `signal` fires.
   */
  segmentCount(segment: number, signal?: AbortSignal): Promise<number> {
    const known = this.counts[segment];
    if (known !== undefined) return Promise.resolve(known);
    let p = this.pending.get(segment);
    if (!p) {
      const seg = this.stream.segments[segment];
      p = this.countRange(seg.startToken, seg.startToken + seg.numTokens, signal)
        .then((n) => {
          this.counts[segment] = n;
          return n;
        })
        .finally(() => this.pending.delete(segment));
      this.pending.set(segment, p);
    }
    return p;
  }

  /**
   * Number of EOS tokens in global range `[from, to)`.
   * @throws CancelledError when `signal` fires between chunks.
   */
  async countRange(from: number, to: number, signal?: AbortSignal): Promise<number> {
    let n = 0;
    for (let lo = from; lo < to; lo += SCAN_CHUNK_TOKENS) {
      if (signal?.aborted) throw new CancelledError();
      n += countId(await this.stream.read(lo, Math.min(SCAN_CHUNK_TOKENS, to - lo)), this.eos);
    }
    return n;
  }

  /**
   * 0-based number of the document containing global token `offset`: with a closing EOS, EOS
   * tokens in `[0, offset)`; in general, by the document rule (`documentRule.ts`).
   * @param onProgress called with (segments done, segments needed) while scanning.
   * @throws RangeRequestError for an offset outside the stream; CancelledError on abort.
   */
  async documentNumberAt(offset: number, signal?: AbortSignal, onProgress?: (done: number, total: number) => void): Promise<number> {
    if (this.documents) return formatDocumentAt(this.documents, offset, this.stream.totalTokens).document;
    if (this.attaching) await this.attaching;
    if (this.index?.covers(offset)) {
      const n = await this.index.documentNumberAt(offset);
      if (n !== undefined) return n;
    }
    const { segment } = this.stream.locate(offset);
    let n = -(await this.lead());
    for (let i = 0; i < segment; i++) {
      n += await this.segmentCount(i, signal);
      onProgress?.(i + 1, segment);
    }
    const start = this.stream.segments[segment].startToken;
    return n + (await this.countRange(start, countEnd(this.rule.role, offset), signal));
  }

  /**
   * Global start offset of document `n` (0-based) and the total number of documents, when `n`
   * exists. Document count includes a final document not closed by an EOS.
   * @throws RangeRequestError when there is no document `n`; CancelledError on abort.
   */
  async documentStart(n: number, signal?: AbortSignal, onProgress?: (done: number, total: number) => void): Promise<number> {
    if (!Number.isInteger(n) || n < 0) throw new RangeRequestError(`document ${n} is not a non-negative integer`);
    if (this.documents) {
      const starts = this.documents.starts;
      if (n >= starts.length)
        throw new RangeRequestError(
          `document ${fmt(n)} does not exist: the format's index lists ${count(starts.length, 'document')} (0..${fmt(starts.length - 1)})`,
        );
      return starts[n];
    }
    if (n === 0) return 0;
    if (this.attaching) await this.attaching;
    if (this.index) {
      const info = await this.index.documentInfo(n); // throws RangeRequestError past a complete index's last document
      if (info) return info.start;
    }
    const lead = await this.lead();
    let before = 0;
    const segs = this.stream.segments;
    for (let i = 0; i < segs.length; i++) {
      const c = await this.segmentCount(i, signal);
      onProgress?.(i + 1, segs.length);
      if (before + c >= n + lead) {
        // The (n + lead)-th delimiter (1-based) is in this segment: scan for it.
        let need = n + lead - before;
        const seg = segs[i];
        for (let lo = seg.startToken; lo < seg.startToken + seg.numTokens; lo += SCAN_CHUNK_TOKENS) {
          if (signal?.aborted) throw new CancelledError();
          const ids = await this.stream.read(lo, Math.min(SCAN_CHUNK_TOKENS, seg.startToken + seg.numTokens - lo));
          for (let j = 0; j < ids.length; j++) {
            if (ids[j] === this.eos && --need === 0) {
              const start = boundaryOf(this.rule.role, lo + j);
              if (start >= this.stream.totalTokens)
                throw new RangeRequestError(`document ${fmt(n)} does not exist: the stream ends with document ${fmt(n - 1)}'s EOS`);
              return start;
            }
          }
        }
      }
      before += c;
    }
    const docs = before + 1 - lead;
    throw new RangeRequestError(`document ${fmt(n)} does not exist: the stream has ${count(docs, 'document')} (0..${fmt(docs - 1)})`);
  }
}

/**
 * The {@link DocumentIndex} of a dataset: its stream, its EOS setting, the format's document index
 * and the format's delimiter role (`documentRuleOf`). Every front end builds its index here so all
 * number documents by the same rule.
 */
export function documentIndexOf(ds: {
  stream: TokenStream;
  settings: { eosTokenId: number };
  format?: { documents?: FormatDocuments; delimiter?: DelimiterRole };
}): DocumentIndex {
  return new DocumentIndex(ds.stream, ds.settings.eosTokenId, ds.format?.documents, ds.format?.delimiter ?? 'closes');
}
