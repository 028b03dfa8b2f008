/**
 * The stream index: what one sequential pass per shard learns (`scan.ts`), kept on disk per shard
 * (`entryStore.ts`) and combined into answers about the whole stream: global document numbers at
 * any offset and where documents lie (`queries.ts`), document-length statistics and the longest
 * EOS-free run ({@link StreamIndex.summary}), anomalies (`anomalies.ts`) and an
 * exact-duplicate-document summary ({@link StreamIndex.duplicates}). Built by `indexShards.ts`.
 *
 * Units: offsets and lengths in tokens; global unless the name says local.
 */
import { CancelledError } from '../errors';
import { mapLimit } from '../concurrency';
import { statIdentity } from '../fileIdentity';
import { Schedule } from '../schedule';
import { TokenStream } from '../stream';
import { LONG_RUN_FLOOR, LengthStats, RunHash, ScanParams, addLength, combineHash, emptyLengthStats, mergeLengthStats } from './scan';
import { IndexStore, ShardIndexRecord, scanParamsKey } from './entryStore';
import { GlobalRun, IndexQueries, IndexSegment } from './queries';
import { Anomaly, DEFAULT_EOS_FREE_RUN_THRESHOLD, findAnomalies } from './anomalies';
import type { DelimiterRole } from '../formats/types';

/** Distinct documents the duplicate summary remembers at most (memory ≈ 32 bytes each); past it, the summary says where it stopped. */
export const DEFAULT_DUPLICATE_CAP = 1 << 21;
/** Pairs the duplicate summary lists. */
export const DUPLICATE_PAIRS_LISTED = 20;

/** The duplicate-document summary. */
export interface DuplicateSummary {
  /** Documents compared (every non-empty document of the covered range). */
  documents: number;
  /** Documents whose content (64-bit hash and length) equals an earlier document's. */
  duplicates: number;
  /** The first pairs: a document and the earlier one it repeats. */
  pairs: { document: number; start: number; length: number; earlierDocument: number; earlierStart: number }[];
  /** When the memory cap stopped it: the global offset up to which documents were compared. */
  stoppedAt?: number;
  /** Segments whose `.docs` file was missing (not compared). */
  missingSegments: number;
}

/**
 * The index of a whole stream: {@link IndexQueries} (document numbers) plus the whole-stream
 * summary, anomalies and duplicates.
 */
export class StreamIndex extends IndexQueries {
  private summaryMemo?: StreamSummary;

  /**
   * @param records one per segment, undefined where not indexed (or stale).
   * @param specialNames the text of special token ids (`<|pad|>`), named in anomaly messages.
   * @param role what the EOS / delimiter id does (`documentRule.ts`; `closes` unless the format says `opens`).
   */
  constructor(
    stream: TokenStream,
    segments: readonly IndexSegment[],
    records: readonly (ShardIndexRecord | undefined)[],
    eos: number,
    private readonly specialNames: Readonly<Record<number, string>> = {},
    role: DelimiterRole = 'closes',
  ) {
    super(stream, segments, records, eos, role);
  }

  /** Whole-stream facts (complete or not: covers the indexed prefix, `coveredTokens`). */
  summary(): StreamSummary {
    if (!this.summaryMemo) this.summaryMemo = this.computeSummary();
    return this.summaryMemo;
  }

  private computeSummary(): StreamSummary {
    const docs = emptyLengthStats();
    const longRuns: GlobalRun[] = [];
    let longest: GlobalRun = { start: 0, length: 0, closed: true };
    let longRunCount = 0;
    let open = { start: 0, length: 0 };
    const consider = (r: GlobalRun, keep: boolean) => {
      if (r.length > longest.length) longest = r;
      if (keep && r.length >= LONG_RUN_FLOOR) {
        longRunCount++;
        longRuns.push(r);
      }
    };
    const n = this.readyUpTo;
    for (let s = 0; s < n; s++) {
      const rec = this.records[s]!;
      const g = this.segments[s].startToken;
      if (rec.eosCount === 0) {
        open.length += rec.numTokens;
        continue;
      }
      const lead: GlobalRun = { start: open.start, length: open.length + rec.firstEos, closed: true };
      consider(lead, true);
      // An opening delimiter at offset 0 begins document 0: no empty document before it.
      if (!(this.lead && lead.start === 0)) addLength(docs, lead.length);
      mergeLengthStats(docs, rec.innerDocs);
      if (rec.longestInner.length > longest.length)
        longest = { start: g + rec.longestInner.start, length: rec.longestInner.length, closed: true };
      for (const r of rec.longRuns) longRuns.push({ start: g + r.start, length: r.length, closed: true });
      longRunCount += rec.longRunCount;
      open = { start: g + rec.lastEos + 1, length: rec.numTokens - rec.lastEos - 1 };
    }
    const coveredTokens = n > 0 ? this.segments[n - 1].startToken + this.segments[n - 1].numTokens : 0;
    // The last document: after a closing EOS only when tokens follow it; after an opening delimiter always.
    if (this.complete && (open.length > 0 || (this.rule.role === 'opens' && this.totalEos! > 0))) {
      const last: GlobalRun = { start: open.start, length: open.length, closed: false };
      consider(last, true);
      addLength(docs, last.length);
    }
    longRuns.sort((a, b) => a.start - b.start);
    return {
      documents: docs,
      longestRun: longest,
      longRuns,
      longRunCount,
      coveredTokens,
      complete: this.complete,
      openRunAtEnd: this.complete ? undefined : open,
    };
  }

  /**
   * The anomalies of the indexed segments (see `AnomalyKind` in `anomalies.ts`).
   * @param threshold EOS-free runs longer than this many tokens are reported (at least {@link LONG_RUN_FLOOR}).
   */
  anomalies(schedule: Schedule, threshold: number = DEFAULT_EOS_FREE_RUN_THRESHOLD): Anomaly[] {
    return findAnomalies(this, this.summary().longRuns, schedule, threshold, this.specialNames);
  }

  /**
   * The exact-duplicate summary over the indexed prefix: documents whose (64-bit content hash,
   * length) equals an earlier document's. Reads every `.docs` file once (16 bytes per document)
   * and keeps one table entry per distinct document (≈ 32 bytes), up to `cap` distinct documents.
   * @param opts.onProgress called after each shard: documents numbered so far (compared or
   *   empty) of `total` (the documents of the covered range), and ms since the start.
   * @throws CancelledError when `signal` fires (checked between shards).
   */
  async duplicates(
    store: IndexStore,
    opts: { cap?: number; signal?: AbortSignal; onProgress?(done: number, total: number, elapsedMs: number): void } = {},
  ): Promise<DuplicateSummary> {
    const t0 = Date.now();
    const total = this.summary().documents.count;
    const cap = opts.cap ?? DEFAULT_DUPLICATE_CAP;
    const table = new DocTable(cap);
    const out: DuplicateSummary = { documents: 0, duplicates: 0, pairs: [], missingSegments: 0 };
    let docNo = 0;
    let openHash: RunHash = { h1: 0, h2: 0, length: 0 };
    let openStart = 0;
    // An opening delimiter at offset 0 begins document 0: the empty run before it is no document.
    let skipLead = this.lead === 1;
    const add = (h: RunHash, start: number): boolean => {
      if (skipLead) {
        skipLead = false;
        if (start === 0 && h.length === 0) return true;
      }
      // Empty documents (EOS right after EOS) are not compared: they would all "repeat" each other.
      if (h.length === 0) {
        docNo++;
        return true;
      }
      const prev = table.insert(h.h1, h.h2, h.length, docNo, start);
      if (prev === FULL) {
        out.stoppedAt = start;
        return false;
      }
      out.documents++;
      if (prev) {
        out.duplicates++;
        if (out.pairs.length < DUPLICATE_PAIRS_LISTED)
          out.pairs.push({ document: docNo, start, length: h.length, earlierDocument: prev.doc, earlierStart: prev.start });
      }
      docNo++;
      return true;
    };
    outer: for (let s = 0; s < this.readyUpTo; s++) {
      if (opts.signal?.aborted) throw new CancelledError();
      const rec = this.records[s]!;
      const g = this.segments[s].startToken;
      if (rec.eosCount === 0) {
        openHash = combineHash(openHash, rec.leadHash);
        continue;
      }
      if (!add(combineHash(openHash, rec.leadHash), openStart)) break;
      const docs = await store.loadDocHashes(rec, this.segments[s].shard);
      if (!docs) {
        out.missingSegments++;
        docNo += rec.eosCount - 1;
      } else {
        for (let i = 0; i < docs.length; i += 4) {
          if (!add({ h1: docs[i], h2: docs[i + 1], length: docs[i + 3] }, g + docs[i + 2])) break outer;
        }
      }
      openHash = rec.trailHash;
      openStart = g + rec.lastEos + 1;
      opts.onProgress?.(docNo, total, Date.now() - t0);
      await new Promise((r) => setImmediate(r));
    }
    if (out.stoppedAt === undefined && this.complete && openHash.length > 0) add(openHash, openStart);
    return out;
  }
}

/** Whole-stream facts from {@link StreamIndex.summary}. */
export interface StreamSummary {
  /** Lengths of every document in the covered range (tokens, the delimiter excluded: a closing EOS or an opening delimiter, `documentRule.ts`). */
  documents: LengthStats;
  longestRun: GlobalRun;
  /** Runs of at least {@link LONG_RUN_FLOOR} tokens (per shard only the longest 256 are kept), by start. */
  longRuns: GlobalRun[];
  /** How many runs reached {@link LONG_RUN_FLOOR}. */
  longRunCount: number;
  /** Tokens covered (the indexed prefix of the stream). */
  coveredTokens: number;
  complete: boolean;
  /** Incomplete index: the run still open at the end of the covered range. */
  openRunAtEnd?: { start: number; length: number };
}

const FULL = Symbol('full');

/** Open-addressing table of document keys (hash lanes + length) → first (document, start). */
class DocTable {
  private keys: Uint32Array;
  private vals: Float64Array;
  private mask: number;
  private size = 0;
  constructor(private readonly cap: number) {
    const slots = 1 << 12;
    this.keys = new Uint32Array(slots * 3);
    this.vals = new Float64Array(slots * 2);
    this.mask = slots - 1;
  }

  /** Inserts a key; returns the earlier entry when present, FULL when the cap is reached, else undefined. */
  insert(h1: number, h2: number, len: number, doc: number, start: number): { doc: number; start: number } | undefined | typeof FULL {
    let i = (Math.imul(h1 ^ (h2 >>> 7) ^ len, 0x9e3779b1) >>> 0) & this.mask;
    for (;;) {
      const k = i * 3;
      if (this.vals[2 * i] === 0) break;
      if (this.keys[k] === h1 && this.keys[k + 1] === h2 && this.keys[k + 2] === len)
        return { doc: this.vals[2 * i] - 1, start: this.vals[2 * i + 1] };
      i = (i + 1) & this.mask;
    }
    if (this.size >= this.cap) return FULL;
    const k = i * 3;
    this.keys[k] = h1;
    this.keys[k + 1] = h2;
    this.keys[k + 2] = len;
    this.vals[2 * i] = doc + 1;
    this.vals[2 * i + 1] = start;
    this.size++;
    if (this.size * 2 > this.mask + 1) this.grow();
    return undefined;
  }

  private grow(): void {
    const oldK = this.keys,
      oldV = this.vals,
      oldSlots = this.mask + 1;
    const slots = oldSlots * 2;
    this.keys = new Uint32Array(slots * 3);
    this.vals = new Float64Array(slots * 2);
    this.mask = slots - 1;
    this.size = 0;
    for (let j = 0; j < oldSlots; j++) {
      if (oldV[2 * j] === 0) continue;
      const h1 = oldK[3 * j],
        h2 = oldK[3 * j + 1],
        len = oldK[3 * j + 2];
      let i = (Math.imul(h1 ^ (h2 >>> 7) ^ len, 0x9e3779b1) >>> 0) & this.mask;
      while (this.vals[2 * i] !== 0) i = (i + 1) & this.mask;
      this.keys[3 * i] = h1;
      this.keys[3 * i + 1] = h2;
      this.keys[3 * i + 2] = len;
      this.vals[2 * i] = oldV[2 * j];
      this.vals[2 * i + 1] = oldV[2 * j + 1];
      this.size++;
    }
  }
}

/**
 * Loads the records of every segment from the store (stat + one small JSON read each; records of
 * hard links are shared) and returns the stream index. Every file is stat'ed now, never taken
 * from an identity learned earlier (a dataset opened before a shard was touched and re-indexed
 * would look up the old entry, which the build pruned). A file that cannot be stat'ed has no
 * record; a damaged entry has none either (one warning through the store, `entryStore.ts`).
 */
export async function openStreamIndex(
  stream: TokenStream,
  segments: readonly IndexSegment[],
  store: IndexStore,
  params: ScanParams,
  role: DelimiterRole = 'closes',
): Promise<StreamIndex> {
  const key = scanParamsKey(params);
  const records = await mapLimit(segments, async (seg) => {
    const id = await statIdentity(seg.path).catch(() => undefined);
    if (!id || (!seg.layout && Math.floor(id.size / 4) !== seg.numTokens)) return undefined;
    return store.load(id, key, { shard: seg.shard, numTokens: seg.layout ? seg.numTokens : undefined });
  });
  return new StreamIndex(stream, segments, records, params.eos, params.specialNames, role);
}
