/**
 * The one-pass shard scanner of the stream index: fed the token ids of one shard in order (any
 * chunk sizes), it learns in the same sequential read everything the stream index keeps about the
 * shard (see {@link ShardScan}). It runs inside the verify/index worker on the very buffer that is
 * being hashed, so it touches every token once with as little work as possible:
 *
 * - the hot loop (`kernel.ts`: WebAssembly SIMD, 16 ids per step) keeps the max id and
 *   the running document hash (two 32-bit polynomial lanes) and tests every id against
 *   `rareFloor`, the smallest id that needs attention (EOS, special ids, ids outside the
 *   vocabulary, vocabulary holes). Only those "rare" ids come back here, as events.
 * - EOS (the document separator; 100257 in dolma2) closes a document: its length (tokens,
 *   excluding the EOS), its content hash, the EOS-free run before it, and the per-block EOS count
 *   are recorded there.
 *
 * Units: every offset here is a **local** token offset inside the shard (0-based); the stream
 * index adds the shard's global start. No `fs`, no Node APIs: pure computation.
 *
 * Document content hash (for the exact-duplicate summary): for ids v₀…vₙ₋₁ of a document (EOS
 * excluded), each lane is `h = Σ vᵢ · P^(n−1−i) mod 2³²` computed as `h = h·P + v`. Two lanes with
 * different odd multipliers give 64 bits. Being polynomial, the hash of a document that spans
 * shards is the exact combination of its parts ({@link combineHash}), so documents crossing shard
 * edges are hashed too.
 */

import {
  EVENTS_AT,
  HASH_P1,
  HASH_P2,
  IndexKernel,
  powMod32,
  SCRATCH_AT,
  SCRATCH_BYTES,
  sharedIndexKernel,
  ST_EOS,
  ST_EVENTS,
  ST_FLOOR,
  ST_H1,
  ST_H2,
  ST_MAX,
} from './kernel';

/** Tokens per block of the positions summary (16,384): a document number anywhere = prefix counts + a scan of at most one block. */
export const INDEX_BLOCK_TOKENS = 16384;
/** EOS-free runs at least this long (tokens) are kept individually per shard (the threshold setting cannot go below it). */
export const LONG_RUN_FLOOR = 16384;
/** At most this many long runs are kept per shard (the longest ones; the count of all of them is kept too). */
export const LONG_RUN_CAP = 256;
/** "No EOS in this block" in the per-block first/last EOS arrays. */
export const NO_EOS = 0xffff;
/** First offsets kept per special id and for unknown ids. */
export const FIRST_OFFSETS_KEPT = 8;
/** Buckets of the document-length histogram: bucket b holds lengths in [2^(b−1), 2^b) (bucket 0: length 0). */
export const LENGTH_BUCKETS = 40;
/** Tokens at the start of a shard given to `diagnoseIds` for the dtype look. */
export const LOOK_SAMPLE_TOKENS = 65536;

/** What the scanner needs to know about the vocabulary. */
export interface ScanParams {
  /** The EOS id that separates documents. */
  eos: number;
  /** Ids at or above this are unknown (the tokenizer's vocabulary size). */
  vocabSize: number;
  /** Special/added token ids other than EOS (anywhere in the stream they are "inside a document"). */
  specialIds: number[];
  /** Ids below `vocabSize` that have no token (holes in the vocabulary): unknown as well. */
  holeIds?: number[];
  /**
   * The text of each of `specialIds` in the tokenizer (`<|pad|>`), for messages that name the
   * token; not part of the parameters key (names do not change what a scan finds).
   */
  specialNames?: Record<number, string>;
}

/** A polynomial hash of a token run: two 32-bit lanes (unsigned) and the run length in tokens. */
export interface RunHash {
  h1: number;
  h2: number;
  /** Tokens hashed. */
  length: number;
}

/** An EOS-free run inside one shard: `start` local offset, `length` tokens. */
export interface LocalRun {
  start: number;
  length: number;
}

/** Document-length statistics (tokens, EOS excluded) over a set of documents. */
export interface LengthStats {
  count: number;
  /** Sum of lengths (exact below 2^53). */
  sum: number;
  /** Smallest length (0 when `count` is 0). */
  min: number;
  max: number;
  /** `LENGTH_BUCKETS` counts: bucket 0 = length 0, bucket b = [2^(b−1), 2^b). */
  hist: number[];
}

/** Occurrences of one special id (or of unknown ids): total count and the first few local offsets. */
export interface IdOccurrences {
  count: number;
  /** Up to {@link FIRST_OFFSETS_KEPT} first local offsets, ascending. */
  first: number[];
}

/** Everything one pass learns about one shard. Local offsets; tokens as units. */
export interface ShardScan {
  numTokens: number;
  eosCount: number;
  /** EOS count per block of {@link INDEX_BLOCK_TOKENS} tokens (last block may be short). */
  blockEos: Uint32Array;
  /** Offset inside its block of each block's first EOS, {@link NO_EOS} when none. */
  blockFirstEos: Uint16Array;
  /** Offset inside its block of each block's last EOS, {@link NO_EOS} when none. */
  blockLastEos: Uint16Array;
  /** Local offset of the first EOS, -1 when none. */
  firstEos: number;
  /** Local offset of the last EOS, -1 when none. */
  lastEos: number;
  /** Lengths of documents that start and end (EOS) inside this shard: between two of its EOS. */
  innerDocs: LengthStats;
  /** The longest EOS-free run strictly between two EOS of this shard (length 0 at 0 when fewer than two EOS). */
  longestInner: LocalRun;
  /** Inner runs of at least {@link LONG_RUN_FLOOR} tokens (the longest {@link LONG_RUN_CAP}, ascending by start). */
  longRuns: LocalRun[];
  /** How many inner runs reached {@link LONG_RUN_FLOOR} (may exceed `longRuns.length`). */
  longRunCount: number;
  /** Special ids other than EOS, by id. */
  specials: Record<number, IdOccurrences>;
  /** Ids ≥ vocabulary size or in a vocabulary hole. */
  unknown: IdOccurrences;
  /** Largest id in the shard (0 for an empty shard). */
  maxId: number;
  /** Hash of the tokens before the first EOS (the whole shard when it has none). */
  leadHash: RunHash;
  /** Hash of the tokens after the last EOS (length 0 when it ends with EOS; unused when no EOS). */
  trailHash: RunHash;
  /**
   * Documents fully inside the shard, 4 uint32 each: hash lane 1, hash lane 2, local start, length
   * (tokens, EOS excluded). Used for the duplicate summary only.
   */
  innerDocHashes: Uint32Array;
  /** The first {@link LOOK_SAMPLE_TOKENS} ids (for the dtype look, `diagnoseIds`). */
  lookSample: Uint32Array;
}

/** An empty {@link LengthStats}. */
export function emptyLengthStats(): LengthStats {
  return { count: 0, sum: 0, min: 0, max: 0, hist: new Array(LENGTH_BUCKETS).fill(0) };
}

/**
 * Bucket of a length in {@link LengthStats.hist}: its bit length (`⌊log₂ len⌋ + 1`; 0 for 0).
 * Lengths below 2³² use `Math.clz32` (it runs once per document: `Math.log2` is a C call that
 * cost more than the rest of the scanner's per-document work on short documents).
 */
export function lengthBucket(len: number): number {
  if (len <= 0) return 0;
  const b = len < 0x1_0000_0000 ? 32 - Math.clz32(len) : Math.floor(Math.log2(len)) + 1;
  return Math.min(LENGTH_BUCKETS - 1, b);
}

/** Adds one document length to `s`. */
export function addLength(s: LengthStats, len: number): void {
  if (s.count === 0 || len < s.min) s.min = len;
  if (len > s.max) s.max = len;
  s.count++;
  s.sum += len;
  s.hist[lengthBucket(len)]++;
}

/** Merges `b` into `a`. */
export function mergeLengthStats(a: LengthStats, b: LengthStats): void {
  if (b.count === 0) return;
  if (a.count === 0 || b.min < a.min) a.min = b.min;
  if (b.max > a.max) a.max = b.max;
  a.count += b.count;
  a.sum += b.sum;
  for (let i = 0; i < LENGTH_BUCKETS; i++) a.hist[i] += b.hist[i];
}

/** The hash of `a` followed by `b` (polynomial hashes combine exactly). */
export function combineHash(a: RunHash, b: RunHash): RunHash {
  if (a.length === 0) return { ...b };
  if (b.length === 0) return { ...a };
  return {
    h1: (Math.imul(a.h1, powMod32(HASH_P1, b.length)) + b.h1) >>> 0,
    h2: (Math.imul(a.h2, powMod32(HASH_P2, b.length)) + b.h2) >>> 0,
    length: a.length + b.length,
  };
}

/** The hash of a whole array of ids (reference implementation for tests). */
export function hashIds(ids: ArrayLike<number>): RunHash {
  let h1 = 0,
    h2 = 0;
  for (let i = 0; i < ids.length; i++) {
    h1 = (Math.imul(h1, HASH_P1) + ids[i]) | 0;
    h2 = (Math.imul(h2, HASH_P2) + ids[i]) | 0;
  }
  return { h1: h1 >>> 0, h2: h2 >>> 0, length: ids.length };
}

/** Kinds of rare ids in the lookup table. */
const RARE_EOS = 1,
  RARE_SPECIAL = 2,
  RARE_HOLE = 3;

/** What the scanners need to know about rare ids, derived from {@link ScanParams}. */
interface RareIds {
  eos: number;
  vocab: number;
  /** Smallest id that needs the slow path. */
  floor: number;
  /** Kind of each id in [floor, vocab): 0 normal, else RARE_*. */
  table: Uint8Array;
}

/** The last {@link RareIds} built, the parameters object it was built for, and their key. */
let lastRare: { params: ScanParams; key: string; rare: RareIds } | undefined;

/**
 * The rare ids of `params`, shared by the scanners of one worker while the parameters stay the
 * same: the table is up to vocab bytes (1 MiB without a tokenizer), which a new table per shard
 * allocated again for each of 100,000 tiny shards. The same parameters object
 * (one per shard size and task message) is recognised without building the key. Read-only once built.
 */
function rareIdsOf(params: ScanParams): RareIds {
  if (lastRare?.params === params) return lastRare.rare;
  const key = `${params.eos}|${params.vocabSize}|${params.specialIds.join(',')}|${(params.holeIds ?? []).join(',')}`;
  if (lastRare?.key === key) {
    lastRare.params = params;
    return lastRare.rare;
  }
  const eos = params.eos >>> 0;
  const vocab = Math.max(0, Math.floor(params.vocabSize));
  let floor = vocab;
  for (const list of [[eos], params.specialIds, params.holeIds ?? []]) for (const id of list) if (id >= 0 && id < floor) floor = id;
  const table = new Uint8Array(Math.max(0, vocab - floor));
  for (const id of params.holeIds ?? []) if (id >= floor && id < vocab) table[id - floor] = RARE_HOLE;
  for (const id of params.specialIds) if (id >= floor && id < vocab && id !== eos) table[id - floor] = RARE_SPECIAL;
  if (eos >= floor && eos < vocab) table[eos - floor] = RARE_EOS;
  const rare = { eos, vocab, floor, table };
  lastRare = { params, key, rare };
  return rare;
}

/**
 * Scans one shard in one pass. Call {@link push} with consecutive chunks of its ids, then
 * {@link finish}. Not reusable.
 */
export class ShardScanner {
  private readonly eos: number;
  private readonly vocab: number;
  /** Smallest id that needs the slow path. */
  private readonly rareFloor: number;
  /** Kind of each id in [rareFloor, vocab): 0 normal, else RARE_*. */
  private readonly table: Uint8Array;
  private pos = 0;
  /** Hot-loop state between pushes (the kernel is shared by the thread's scanners): max id, hash lanes (uint32). */
  private maxId = 0;
  private h1 = 0;
  private h2 = 0;
  private readonly blockEos: Uint32Array;
  private readonly blockFirst: Uint16Array;
  private readonly blockLast: Uint16Array;
  private eosCount = 0;
  private firstEos = -1;
  private lastEos = -1;
  private readonly inner = emptyLengthStats();
  private longestInner: LocalRun = { start: 0, length: 0 };
  private longRuns: LocalRun[] = [];
  private longRunCount = 0;
  private readonly specials: Record<number, IdOccurrences> = {};
  private readonly unknown: IdOccurrences = { count: 0, first: [] };
  private lead: RunHash | undefined;
  /** Grown by doubling from a few documents: a tiny shard allocates next to nothing (100,000 of them in one run). */
  private docHashes: Uint32Array = new Uint32Array(4 * 16);
  private docCount = 0;
  private readonly look: Uint32Array;
  private lookFilled = 0;

  /**
   * @param params vocabulary facts (EOS, vocabulary size, special ids, holes).
   * @param numTokens tokens the shard holds (the block array is sized from it).
   * @param kernel the hot loop (default: this thread's shared kernel); ids that live in its memory
   *   (`ids.buffer === kernel.buffer`, e.g. the worker's read buffers) are scanned in place, others
   *   are copied through its scratch area.
   */
  constructor(
    params: ScanParams,
    readonly numTokens: number,
    private readonly kernel: IndexKernel = sharedIndexKernel(),
  ) {
    const rare = rareIdsOf(params);
    this.eos = rare.eos;
    this.vocab = rare.vocab;
    this.rareFloor = rare.floor;
    this.table = rare.table;
    this.blockEos = new Uint32Array(Math.ceil(numTokens / INDEX_BLOCK_TOKENS));
    this.blockFirst = new Uint16Array(this.blockEos.length).fill(NO_EOS);
    this.blockLast = new Uint16Array(this.blockEos.length).fill(NO_EOS);
    this.look = new Uint32Array(Math.min(LOOK_SAMPLE_TOKENS, numTokens));
  }

  /** Feeds the next `ids.length` ids of the shard (consecutive with the previous call). */
  push(ids: Uint32Array): void {
    const n = ids.length;
    if (this.lookFilled < this.look.length) {
      const k = Math.min(n, this.look.length - this.lookFilled);
      this.look.set(ids.subarray(0, k), this.lookFilled);
      this.lookFilled += k;
    }
    const k = this.kernel;
    const w = k.words;
    w[ST_FLOOR] = this.rareFloor;
    w[ST_EOS] = this.eos;
    w[ST_MAX] = this.maxId;
    w[ST_H1] = this.h1;
    w[ST_H2] = this.h2;
    w[ST_EVENTS] = 0;
    if (ids.buffer === k.buffer) this.run(ids.byteOffset, n, this.pos);
    else {
      const room = SCRATCH_BYTES / 4;
      for (let o = 0; o < n; o += room) {
        const part = ids.subarray(o, Math.min(n, o + room));
        new Uint32Array(k.buffer, SCRATCH_AT, part.length).set(part);
        this.run(SCRATCH_AT, part.length, this.pos + o);
      }
    }
    this.maxId = w[ST_MAX];
    this.h1 = w[ST_H1];
    this.h2 = w[ST_H2];
    this.pos += n;
  }

  /** Runs the kernel over `n` ids at byte `ptr` of its memory (local offset `base`), handling its events. */
  private run(ptr: number, n: number, base: number): void {
    const k = this.kernel;
    const w = k.words;
    const eos = this.eos;
    for (let i = 0; ;) {
      i = k.scan(ptr, i, n);
      const events = w[ST_EVENTS];
      for (let e = 0, q = EVENTS_AT / 4; e < events; e++, q += 4) {
        const v = w[q + 1];
        if (v === eos) this.onEos(base + w[q], w[q + 2], w[q + 3]);
        else this.onRare(v, base + w[q]);
      }
      w[ST_EVENTS] = 0;
      if (i >= n) return;
    }
  }

  /** An EOS at local offset `p`; `h1`/`h2` hash the tokens since the previous EOS (or the shard start). */
  private onEos(p: number, h1: number, h2: number): void {
    const b = Math.floor(p / INDEX_BLOCK_TOKENS);
    const within = p - b * INDEX_BLOCK_TOKENS;
    if (this.blockEos[b]++ === 0) this.blockFirst[b] = within;
    this.blockLast[b] = within;
    this.eosCount++;
    const prev = this.lastEos;
    if (prev < 0) {
      this.firstEos = p;
      this.lead = { h1, h2, length: p };
    } else {
      const start = prev + 1;
      const len = p - start;
      addLength(this.inner, len);
      if (len > this.longestInner.length) this.longestInner = { start, length: len };
      if (len >= LONG_RUN_FLOOR) {
        this.longRunCount++;
        this.longRuns.push({ start, length: len });
        if (this.longRuns.length > 2 * LONG_RUN_CAP) this.trimLongRuns();
      }
      if (4 * this.docCount + 4 > this.docHashes.length) {
        const bigger = new Uint32Array(this.docHashes.length * 2);
        bigger.set(this.docHashes);
        this.docHashes = bigger;
      }
      const o = 4 * this.docCount++;
      this.docHashes[o] = h1;
      this.docHashes[o + 1] = h2;
      this.docHashes[o + 2] = start;
      this.docHashes[o + 3] = len;
    }
    this.lastEos = p;
  }

  /** A special, hole or unknown id at local offset `p`. */
  private onRare(v: number, p: number): void {
    const kind = v < this.vocab ? this.table[v - this.rareFloor] : RARE_HOLE;
    if (kind === 0) return;
    const occ = kind === RARE_SPECIAL ? (this.specials[v] ??= { count: 0, first: [] }) : this.unknown;
    occ.count++;
    if (occ.first.length < FIRST_OFFSETS_KEPT) occ.first.push(p);
  }

  private trimLongRuns(): void {
    this.longRuns.sort((a, b) => b.length - a.length || a.start - b.start);
    this.longRuns.length = Math.min(this.longRuns.length, LONG_RUN_CAP);
  }

  /**
   * Ends the scan.
   * @throws Error when fewer or more tokens were pushed than `numTokens` (a caller bug or a file
   *   that changed size while read).
   */
  finish(): ShardScan {
    if (this.pos !== this.numTokens) throw new Error(`the scanner got ${this.pos} tokens, expected ${this.numTokens}`);
    this.trimLongRuns();
    this.longRuns.sort((a, b) => a.start - b.start);
    const tail: RunHash = {
      h1: this.h1,
      h2: this.h2,
      length: this.lastEos < 0 ? this.numTokens : this.numTokens - this.lastEos - 1,
    };
    return {
      numTokens: this.numTokens,
      eosCount: this.eosCount,
      blockEos: this.blockEos,
      blockFirstEos: this.blockFirst,
      blockLastEos: this.blockLast,
      firstEos: this.firstEos,
      lastEos: this.lastEos,
      innerDocs: this.inner,
      longestInner: this.longestInner,
      longRuns: this.longRuns,
      longRunCount: this.longRunCount,
      specials: this.specials,
      unknown: this.unknown,
      maxId: this.maxId,
      leadHash: this.lead ?? tail,
      trailHash: this.lastEos < 0 ? { h1: 0, h2: 0, length: 0 } : tail,
      innerDocHashes: this.docHashes.slice(0, 4 * this.docCount),
      lookSample: this.look,
    };
  }
}
