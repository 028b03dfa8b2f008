/**
 * Queries of the stream index: global document numbers at any offset, the k-th EOS, where a
 * document lies, per-page EOS facts and a segment's numbering, each instant (at most one
 * {@link INDEX_BLOCK_TOKENS}-token block read) from the per-shard records of `entryStore.ts`.
 *
 * Numbering convention: the one document rule of `documentRule.ts`. With the EOS closing documents
 * (the default), document n (0-based) at global offset o = the number of EOS ids in [0, o); a
 * document's length is in tokens and **excludes** its closing EOS; the last document of a stream
 * that does not end with EOS has no EOS and runs to the end of the stream. With a delimiter that
 * opens documents (llm.c), a document begins at its delimiter and its length counts it. The
 * records hold delimiter positions only, so one index serves both readings.
 *
 * Units: offsets and lengths in tokens; global unless the name says local.
 */
import { RangeRequestError } from '../errors';
import { count as countOf, fmt } from '../units';
import { TokenStream } from '../stream';
import { INDEX_BLOCK_TOKENS } from './scan';
import { ShardIndexRecord } from './entryStore';
import type { DelimiterRole, TokenLayout } from '../formats/types';
import { DocumentRule, boundaryOf, countEnd, documentCountOf } from '../documentRule';

/** One segment of the stream as the index needs it. */
export interface IndexSegment {
  path: string;
  startToken: number;
  numTokens: number;
  /** Manifest line (1-based), 0 for a lone file. */
  line: number;
  /** The manifest's `shard` field (relative path) or the file name. */
  shard: string;
  /** How the file stores its tokens (format layer); absent: raw uint32 from byte 0. */
  layout?: TokenLayout;
}

/** An EOS-free run in the stream: `start` global offset, `length` tokens. */
export interface GlobalRun {
  start: number;
  length: number;
  /** True when an EOS ends it; false when it runs to the end of the stream. */
  closed: boolean;
}

/**
 * Where a document lies: number (0-based), global start, length (tokens up to the next delimiter:
 * a closing EOS excluded, an opening delimiter included), whether a delimiter follows it.
 */
export interface DocumentInfo {
  document: number;
  start: number;
  /** Tokens up to the next delimiter; absent when the index ends before the document does (incomplete index). */
  length?: number;
  /** True when a delimiter follows it (its EOS, or the next document's opening delimiter); false for the stream's last document without one. */
  closed: boolean;
}

/**
 * Document numbers over the whole stream, built from per-shard records (some may be missing:
 * numbering then works up to the first missing shard, see {@link readyUpTo}). The base of
 * `StreamIndex` (`streamIndex.ts`), which adds the whole-stream summary, anomalies and duplicates.
 */
export class IndexQueries {
  /** EOS before each segment (valid for segments ≤ readyUpTo). */
  protected readonly eosBefore: number[];
  /** Number of leading segments that are indexed: offsets in them have instant document numbers. */
  readonly readyUpTo: number;
  /** Block prefix sums per record (shared by hard links). */
  private readonly prefixes = new WeakMap<ShardIndexRecord, Float64Array>();
  /** The document rule: {@link eos} and what it does. */
  readonly rule: DocumentRule;
  /** Delimiters that begin no document: 1 when it opens documents and the stream's first token is one (`documentRule.ts`). */
  protected readonly lead: 0 | 1;

  /**
   * @param records one per segment, undefined where not indexed (or stale).
   * @param role what the EOS / delimiter id does (`closes` unless the format says `opens`).
   */
  constructor(
    readonly stream: TokenStream,
    readonly segments: readonly IndexSegment[],
    readonly records: readonly (ShardIndexRecord | undefined)[],
    readonly eos: number,
    role: DelimiterRole = 'closes',
  ) {
    this.rule = { delimiter: eos, role };
    const first = records.findIndex((r, i) => !r || segments[i].numTokens > 0);
    const firstRec = first >= 0 ? records[first] : undefined;
    this.lead = role === 'opens' && firstRec?.firstEos === 0 ? 1 : 0;
    let ready = 0;
    while (ready < records.length && records[ready]) ready++;
    this.readyUpTo = ready;
    this.eosBefore = new Array(ready + 1);
    let n = 0;
    for (let i = 0; i <= ready; i++) {
      this.eosBefore[i] = n;
      if (i < ready) n += records[i]!.eosCount;
    }
  }

  /** True when every segment is indexed. */
  get complete(): boolean {
    return this.readyUpTo === this.segments.length;
  }

  /** Segments indexed (anywhere). */
  get indexedCount(): number {
    return this.records.filter((r) => r).length;
  }

  /** EOS ids in the whole stream (complete index only). */
  get totalEos(): number | undefined {
    return this.complete ? this.eosBefore[this.readyUpTo] : undefined;
  }

  /**
   * Documents in the stream (complete index only), by `documentCountOf` (`documentRule.ts`): with a
   * closing EOS, the EOS count plus one when the stream does not end with EOS; with an opening
   * delimiter, the delimiter count plus one when the stream does not begin with one.
   * Valid document numbers are 0..documentCount−1.
   */
  get documentCount(): number | undefined {
    if (!this.complete) return undefined;
    const total = this.eosBefore[this.readyUpTo];
    const last = this.records[this.records.length - 1];
    if (!last) return total > 0 ? total : 1;
    const d = this.rule.delimiter;
    const other = d + 1; // any id that is not the delimiter
    const endsWithEos = last.numTokens > 0 && last.lastEos === last.numTokens - 1;
    return Math.max(1, documentCountOf(this.rule, total, this.lead ? d : other, endsWithEos ? d : other));
  }

  /** True when document numbers at `offset` are instant (its segment and all before it are indexed). */
  covers(offset: number): boolean {
    if (offset < 0 || offset >= this.stream.totalTokens) return false;
    return this.segmentOf(offset) < this.readyUpTo;
  }

  /** Index of the segment holding global `offset` (the last one starting at or before it). */
  segmentOf(offset: number): number {
    const segs = this.segments;
    let lo = 0,
      hi = segs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (segs[mid].startToken <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private prefix(rec: ShardIndexRecord): Float64Array {
    let p = this.prefixes.get(rec);
    if (!p) {
      p = new Float64Array(rec.blockEos.length + 1);
      for (let i = 0; i < rec.blockEos.length; i++) p[i + 1] = p[i] + rec.blockEos[i];
      this.prefixes.set(rec, p);
    }
    return p;
  }

  /**
   * The 0-based document number at `offset` (delimiters in `[0, countEnd(offset))` less the
   * leading one, `documentRule.ts`; with a closing EOS: EOS ids before it), reading at most one
   * block ({@link INDEX_BLOCK_TOKENS} tokens).
   * @returns undefined when the offset's segment (or one before it) is not indexed.
   * @throws RangeRequestError for an offset outside the stream.
   */
  async documentNumberAt(offset: number): Promise<number | undefined> {
    this.stream.locate(offset);
    const s = this.segmentOf(offset);
    if (s >= this.readyUpTo) return undefined;
    const rec = this.records[s]!;
    // Count delimiters in the segment's local [0, end); `end` ≤ the segment's tokens.
    const end = countEnd(this.rule.role, offset) - this.segments[s].startToken;
    const blk = Math.floor(end / INDEX_BLOCK_TOKENS);
    const blockStart = blk * INDEX_BLOCK_TOKENS;
    let n = this.eosBefore[s] + this.prefix(rec)[blk] - this.lead;
    if (end > blockStart && rec.blockEos[blk] > 0) {
      const ids = await this.stream.read(this.segments[s].startToken + blockStart, end - blockStart);
      for (let i = 0; i < ids.length; i++) if (ids[i] === this.eos) n++;
    }
    return n;
  }

  /**
   * Global start of document `n ≥ 1`: the boundary of the (n + leading)-th delimiter.
   * @returns undefined when the index does not reach it.
   */
  private async nthStart(n: number): Promise<number | undefined> {
    const p = await this.nthEos(n + this.lead);
    return p === undefined ? undefined : boundaryOf(this.rule.role, p);
  }

  /**
   * Global offset of the k-th EOS of the stream (1-based), or undefined when there are fewer than
   * k in the indexed segments.
   */
  async nthEos(k: number): Promise<number | undefined> {
    if (k < 1 || k > this.eosBefore[this.readyUpTo]) return undefined;
    let lo = 0,
      hi = this.readyUpTo - 1;
    while (lo < hi) {
      // last segment with eosBefore < k
      const mid = (lo + hi + 1) >> 1;
      if (this.eosBefore[mid] < k) lo = mid;
      else hi = mid - 1;
    }
    const s = lo;
    const rec = this.records[s]!;
    let need = k - this.eosBefore[s];
    const p = this.prefix(rec);
    let blo = 0,
      bhi = rec.blockEos.length - 1;
    while (blo < bhi) {
      // last block with prefix < need
      const mid = (blo + bhi + 1) >> 1;
      if (p[mid] < need) blo = mid;
      else bhi = mid - 1;
    }
    need -= p[blo];
    const start = this.segments[s].startToken + blo * INDEX_BLOCK_TOKENS;
    const ids = await this.stream.read(start, Math.min(INDEX_BLOCK_TOKENS, rec.numTokens - blo * INDEX_BLOCK_TOKENS));
    for (let i = 0; i < ids.length; i++) if (ids[i] === this.eos && --need === 0) return start + i;
    throw new Error(`stream index out of date: block ${blo} of ${this.segments[s].shard} holds fewer EOS than indexed; rebuild the index`);
  }

  /**
   * Start, length and closing of document `n`.
   * @returns undefined when the index does not reach it (fewer EOS indexed than needed).
   * @throws RangeRequestError when `n` is not a valid document number of a completely indexed stream.
   */
  async documentInfo(n: number): Promise<DocumentInfo | undefined> {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeRequestError(`document ${n} is not a non-negative integer`);
    const count = this.documentCount;
    if (count !== undefined && n >= count)
      throw new RangeRequestError(`document ${fmt(n)} does not exist: the stream has ${countOf(count, 'document')} (0..${fmt(count - 1)})`);
    let start = 0;
    if (n > 0) {
      const e = await this.nthStart(n);
      if (e === undefined) return undefined;
      start = e;
    }
    const end = await this.nthEos(n + 1 + this.lead);
    if (end !== undefined) return { document: n, start, length: end - start, closed: true };
    if (!this.complete) return undefined;
    return { document: n, start, length: this.stream.totalTokens - start, closed: false };
  }

  /**
   * The document containing `offset`.
   * @returns undefined when the index does not cover it.
   * @throws RangeRequestError for an offset outside the stream.
   */
  async documentAt(offset: number): Promise<DocumentInfo | undefined> {
    const n = await this.documentNumberAt(offset);
    if (n === undefined) return undefined;
    const start = n === 0 ? 0 : (await this.nthStart(n))!;
    const end = await this.nthEos(n + 1 + this.lead);
    if (end !== undefined) return { document: n, start, length: end - start, closed: true };
    // No EOS after it in the indexed segments: it ends at the stream end (complete) or beyond the index.
    if (!this.complete) return { document: n, start, closed: false };
    return { document: n, start, length: this.stream.totalTokens - start, closed: false };
  }

  /**
   * EOS facts per page of `pageTokens` tokens (a multiple of {@link INDEX_BLOCK_TOKENS}) of one
   * indexed segment, from the block summary without reading the file: EOS count, first and last
   * EOS offset inside each page (-1 when none). Undefined when the segment is not indexed.
   */
  pageStats(segment: number, pageTokens: number): { eosCount: number[]; firstEos: number[]; lastEos: number[] } | undefined {
    const rec = this.records[segment];
    if (!rec || pageTokens % INDEX_BLOCK_TOKENS !== 0) return undefined;
    const per = pageTokens / INDEX_BLOCK_TOKENS;
    const pages = Math.ceil(rec.numTokens / pageTokens);
    const out = {
      eosCount: new Array<number>(pages).fill(0),
      firstEos: new Array<number>(pages).fill(-1),
      lastEos: new Array<number>(pages).fill(-1),
    };
    for (let b = 0; b < rec.blockEos.length; b++) {
      if (rec.blockEos[b] === 0) continue;
      const p = Math.floor(b / per);
      const at = (b - p * per) * INDEX_BLOCK_TOKENS;
      out.eosCount[p] += rec.blockEos[b];
      if (out.firstEos[p] < 0) out.firstEos[p] = at + rec.blockFirstEos[b];
      out.lastEos[p] = at + rec.blockLastEos[b];
    }
    return out;
  }

  /**
   * Global document numbering facts of one segment, instant (at most two block reads), by the
   * document rule (`documentRule.ts`): `docBase` = delimiters before it less the leading one (with a
   * closing EOS: the number of the document holding its first token); `headStart` = start of the
   * document holding its first token; `tailEnd` = the end (exclusive) of the document that begins
   * at the boundary of the segment's last delimiter (or holds its first token when it has none):
   * one past its closing EOS, or the offset of the next opening delimiter (`tailKnown` false when
   * that document runs to the stream end or past the indexed shards).
   * Undefined when the segment (or one before it) is not indexed.
   */
  async segmentNumbering(
    segment: number,
  ): Promise<{ docBase: number; headStart: number; tailEnd: number; tailKnown: boolean } | undefined> {
    if (segment >= this.readyUpTo) return undefined;
    const seg = this.segments[segment];
    const rec = this.records[segment]!;
    const before = this.eosBefore[segment];
    const docBase = before - (segment > 0 ? this.lead : 0);
    const head = seg.numTokens > 0 ? await this.documentNumberAt(seg.startToken) : docBase;
    const headStart = !head ? 0 : (await this.nthStart(head))!;
    const tailFrom = rec.lastEos >= 0 ? seg.startToken + boundaryOf(this.rule.role, rec.lastEos) : seg.startToken;
    if (tailFrom >= this.stream.totalTokens) return { docBase, headStart, tailEnd: this.stream.totalTokens, tailKnown: false };
    const next = await this.nthEos(before + rec.eosCount + 1);
    if (next !== undefined) return { docBase, headStart, tailEnd: boundaryOf(this.rule.role, next), tailKnown: true };
    return { docBase, headStart, tailEnd: this.complete ? this.stream.totalTokens : seg.startToken + seg.numTokens, tailKnown: false };
  }
}
