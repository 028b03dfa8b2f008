/**
 * The training order: what the trainer fed at each optimizer update, in terms of the token stream.
 * Every place that says "update k" asks one {@link TrainingOrder}:
 *
 * - forward, {@link TrainingOrder.update}: update k's samples in batch order, each as the stream
 *   ranges it was assembled from (a Megatron sample crosses documents that lie anywhere in the
 *   stream; an OLMo instance or an llm.c row is one range);
 * - inverse, {@link TrainingOrder.reads}: every (update, sample, position) that read global token
 *   offset t — none for a token the run never read (a dropped tail, an epoch not trained), several
 *   for a token read in several epochs or both as a sample's last input and the next one's target.
 *
 * Orders: the dataset card's sequential order (`sequential.ts`, the default), Megatron-LM's
 * GPTDataset (`megatron.ts`), OLMo (`olmo.ts`), llm.c (`llmc.ts`). The inverses that need a
 * permutation inverted are built once and cached on disk ({@link OrderCache}), like the stream index.
 *
 * Units: offsets and lengths in tokens of the stream (global token offsets), updates and samples
 * 0-based.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { threadId } from 'worker_threads';
import { RangeRequestError } from '../errors';
import { fmt } from '../units';
import { identityKeyOfStats } from '../fileIdentity';
import { ArrayVector, FileVector, IntVector } from './vector';

/** The orders this tool knows. */
export type OrderKind = 'sequential' | 'megatron' | 'olmo' | 'llm.c';

/** Stream tokens `[start, end)` (global token offsets). */
export interface TokenRange {
  start: number;
  end: number;
}

/** A file of the stream as an order sees it: where its tokens sit in the stream. */
export interface StreamFile {
  /** Name shown in messages (relative to the dataset folder). */
  name: string;
  /** Global token offset of the file's first token. */
  start: number;
  /** Tokens stored in the file. */
  tokens: number;
}

/**
 * Binary search: the last index i of `0..n−1` whose `key(i) ≤ x`, for keys ascending; 0 when
 * none is (the caller checks `key(0)`).
 */
export function lastAtOrBelow(n: number, key: (i: number) => number, x: number): number {
  let lo = 0,
    hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (key(mid) <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The file holding global token `offset` (files ascending by start), or -1 when none does. */
export function fileAt(files: readonly StreamFile[], offset: number): number {
  if (files.length === 0 || offset < files[0].start) return -1;
  const i = lastAtOrBelow(files.length, (k) => files[k].start, offset);
  return offset < files[i].start + files[i].tokens ? i : -1;
}

/** One sample (a sequence, an instance, a row) of an update. */
export interface OrderSample {
  /** 0-based place of the sample in its update's batch. */
  slot: number;
  /**
   * The order's own number of the sample: the card's sequence within the update, Megatron's
   * sample index (a row of `sample_index`), OLMo's instance index, llm.c's batch index inside its shard.
   */
  sample: number;
  /** The stream ranges the trainer read for it, in the order it concatenated them; their lengths sum to {@link TrainingOrder.sampleTokens} (less for a padded Megatron sample). */
  pieces: TokenRange[];
  /** llm.c: the data-parallel process (rank) that read it. */
  process?: number;
  /** llm.c: the row of the process's B × T batch. */
  row?: number;
  /** llm.c: the shard file (0-based in the stream's file order) it was read from. */
  file?: number;
}

/** One reading of a stream token by the run. */
export interface OrderRead {
  update: number;
  /** The sample's place in the update's batch. */
  slot: number;
  /** As {@link OrderSample.sample}. */
  sample: number;
  /** 0-based position of the token among the sample's tokens. */
  position: number;
  /** True when the token is only the sample's last target (position = {@link TrainingOrder.inputTokens}), not an input. */
  target: boolean;
  process?: number;
  row?: number;
}

/** A run's training order (see the module comment). */
export interface TrainingOrder {
  readonly kind: OrderKind;
  /** Updates of the run (0-based updates `0..numUpdates−1`). */
  readonly numUpdates: number;
  /** Samples per update (the global batch size in samples). */
  readonly samplesPerUpdate: number;
  /** Tokens the trainer reads per sample: inputs plus the extra target token where it reads one. */
  readonly sampleTokens: number;
  /** Tokens of a sample that are model inputs (the rest, at most one, is a target only). */
  readonly inputTokens: number;
  /** One line for `info` and the update view: the order, its parameters and where they came from. */
  readonly description: string;
  /**
   * Update k's samples in batch order.
   * @throws RangeRequestError unless `0 ≤ k < numUpdates`; DataError when the order's files are inconsistent.
   */
  update(k: number): OrderSample[];
  /** Every reading of stream token `offset` by the run, sorted by update (then slot); empty when the run never read it. */
  reads(offset: number): OrderRead[];
  /**
   * Optional, for counts over the stream (matches come in stream order): the updates that read
   * token `offset` as a model input (as {@link inputUpdates}) and how many tokens from `offset` on
   * (≥ 1) are read as inputs by exactly those updates — a count asks once per such run of tokens,
   * not once per match. Orders without it are asked per token ({@link inputSpan}).
   */
  inputSpan?(offset: number): InputSpan;
  /** Releases open files. */
  close(): void;
}

/**
 * Validates an update index against an order.
 * @throws RangeRequestError naming the valid range.
 */
export function checkOrderUpdate(order: Pick<TrainingOrder, 'numUpdates'>, k: number): void {
  if (!Number.isInteger(k) || k < 0 || k >= order.numUpdates) {
    throw new RangeRequestError(
      order.numUpdates === 0
        ? 'the run has no complete update'
        : `update ${k} is outside 0..${fmt(order.numUpdates - 1)} (updates are 0-based)`,
    );
  }
}

/**
 * Appends to `out` the reads of a sample that sits at positions `places` of a batch-ordered index
 * (`shuffle_index`, `global_indices`): place q is update `floor(q / B)`, slot `q mod B`; places
 * past the run's last update are not read.
 */
export function pushPlacedReads(
  out: OrderRead[],
  places: number[],
  order: Pick<TrainingOrder, 'samplesPerUpdate' | 'numUpdates'>,
  read: Pick<OrderRead, 'sample' | 'position' | 'target'>,
): void {
  const B = order.samplesPerUpdate;
  for (const q of places) {
    const update = Math.floor(q / B);
    if (update < order.numUpdates) out.push({ update, slot: q - update * B, ...read });
  }
}

/** The updates reading a run of stream tokens as model inputs (see {@link TrainingOrder.inputSpan}). */
export interface InputSpan {
  /** Updates, ascending, each once; empty when the run reads none of the tokens as an input. */
  updates: number[];
  /** Tokens of the run, from the offset asked (≥ 1). */
  tokens: number;
}

/** {@link TrainingOrder.inputSpan} of `order`, or a span of one token from {@link inputUpdates} for an order without it. */
export function inputSpan(order: TrainingOrder, offset: number): InputSpan {
  return order.inputSpan ? order.inputSpan(offset) : { updates: inputUpdates(order, offset), tokens: 1 };
}

/** The updates that read stream token `offset` as a model input (ascending, each once). */
export function inputUpdates(order: TrainingOrder, offset: number): number[] {
  const out: number[] = [];
  // Reads come sorted by update: equal updates are neighbours.
  for (const r of order.reads(offset)) if (!r.target && out[out.length - 1] !== r.update) out.push(r.update);
  return out;
}

/** Marks a position never taken in an {@link InverseIndex}. */
const NONE = 0xffff_ffff;
/** Elements read per chunk while inverting a file-backed index (8 MB of doubles). */
const INVERT_CHUNK = 1 << 20;

/**
 * The inverse of an index array `a` of length n whose values lie in `0..domain−1`: for each value
 * v, the positions p with `a[p] = v` (Megatron's `shuffle_index`, OLMo's `global_indices`, the
 * document index). The first position per value is kept in a uint32 vector (4 bytes per value; in
 * memory after a build, on disk after a load); further ones (a value repeated: OLMo's padding,
 * Megatron's documents across epochs) in {@link repeats}, sorted ascending.
 */
export class InverseIndex {
  constructor(
    /** First position of each value, {@link NONE} for none. */
    readonly first: IntVector,
    /** Values that occur more than once: their later positions, ascending. */
    readonly repeats: Map<number, number[]>,
  ) {}

  /** Values the index covers. */
  get domain(): number {
    return this.first.length;
  }

  /** Positions of value `v`, ascending (empty when it never occurs or lies outside the domain). */
  positions(v: number): number[] {
    if (!(v >= 0 && v < this.first.length)) return [];
    const p = this.first.get(v);
    if (p === NONE) return [];
    const more = this.repeats.get(v);
    return more ? [p, ...more] : [p];
  }

  /**
   * Inverts `a`. Values outside `0..domain−1` are an error of the caller's file.
   * @param describe names a position for the message (`"shuffle_index.npy element 12"`).
   * @throws RangeError naming the position and value; positions must stay below 2^32 − 1.
   */
  static build(a: IntVector, domain: number, describe: (p: number) => string): InverseIndex {
    if (a.length >= NONE)
      throw new RangeError(`${describe(a.length - 1)}: ${fmt(a.length)} positions are more than this inverse holds (2^32 − 1)`);
    const first = new Uint32Array(domain).fill(NONE);
    const repeats = new Map<number, number[]>();
    const visit = (v: number, p: number): void => {
      if (!(v >= 0 && v < domain && Number.isInteger(v))) throw new RangeError(`${describe(p)} is ${v}, outside 0..${fmt(domain - 1)}`);
      if (first[v] === NONE) first[v] = p;
      else {
        const list = repeats.get(v);
        if (list) list.push(p);
        else repeats.set(v, [p]);
      }
    };
    if (a instanceof FileVector) {
      for (let s = 0; s < a.length; s += INVERT_CHUNK) {
        const chunk = a.readRange(s, Math.min(INVERT_CHUNK, a.length - s));
        for (let k = 0; k < chunk.length; k++) visit(chunk[k], s + k);
      }
    } else if (a instanceof ArrayVector) {
      const arr = a.array;
      for (let p = 0; p < arr.length; p++) visit(arr[p], p);
    } else {
      for (let p = 0; p < a.length; p++) visit(a.get(p), p);
    }
    return new InverseIndex(new ArrayVector(first), repeats);
  }
}

/** Bumped when the layout or meaning of a cached file changes: older entries are then not found. */
const CACHE_VERSION = 1;

/**
 * Where training-order caches live: one folder chosen by the caller, never the dataset folder — the
 * CLI's `$XDG_CACHE_HOME/token-shard-inspector/training-order/` (else `~/.cache/…`), the
 * extension's `globalStorageUri/training-order/`. Entries are named by a hash of what they were
 * built from (the identities of the source files — device, inode, size, times — and the order's
 * parameters), so a changed source file or parameter finds no entry and the entry is rebuilt;
 * an entry's size is checked on load.
 */
export class OrderCache {
  constructor(readonly dir: string) {}

  /** The CLI's folder: `$XDG_CACHE_HOME/token-shard-inspector/training-order` when absolute, else under `~/.cache`. */
  static cliDefault(env: NodeJS.ProcessEnv = process.env): OrderCache {
    const xdg = env.XDG_CACHE_HOME;
    const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
    return new OrderCache(path.join(base, 'token-shard-inspector', 'training-order'));
  }

  /**
   * The key of an entry: a hash of the source files' identities and `params` (JSON-able).
   * @throws the file-system error when a source file cannot be stat'ed.
   */
  key(sources: string[], params: unknown): string {
    const ids = sources.map((f) => identityKeyOfStats(fs.statSync(f, { bigint: true })));
    return crypto
      .createHash('sha256')
      .update(JSON.stringify({ v: CACHE_VERSION, ids, params }))
      .digest('hex')
      .slice(0, 32);
  }

  /** The path of entry `key`'s part `name`. */
  file(key: string, name: string): string {
    return path.join(this.dir, `${key}-${name}`);
  }

  /**
   * The inverse stored under `key`/`name`, or built by `build` and stored (a failed write leaves
   * the built inverse usable: the cache is an optimisation).
   */
  inverse(key: string, name: string, domain: number, build: () => InverseIndex): InverseIndex {
    const bin = this.file(key, `${name}.inv`);
    const meta = this.file(key, `${name}.json`);
    try {
      const m = JSON.parse(fs.readFileSync(meta, 'utf8')) as { domain?: unknown; repeats?: unknown };
      if (m.domain === domain && Array.isArray(m.repeats) && fs.statSync(bin).size === domain * 4) {
        const repeats = new Map<number, number[]>(m.repeats as [number, number[]][]);
        return new InverseIndex(FileVector.open(bin, 'u4', 0, domain), repeats);
      }
    } catch {
      // No entry, or an unreadable one: rebuild below.
    }
    const inv = build();
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      const arr = (inv.first as ArrayVector).array as Uint32Array;
      this.writeAtomic(bin, Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength));
      this.writeAtomic(meta, JSON.stringify({ domain, repeats: [...inv.repeats] }));
    } catch {
      // Not writable: the inverse is still correct, only not kept.
    }
    return inv;
  }

  /** Writes through a temporary file and a rename (no fsync: a validated cache). */
  writeAtomic(file: string, data: string | Buffer): void {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}-${threadId}.tmp`;
    try {
      fs.writeFileSync(tmp, data);
      fs.renameSync(tmp, file);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw err;
    }
  }
}

/**
 * Prefix sums of a long list of non-negative lengths, kept sparsely: one double per 16 entries
 * (8 bytes per 16 documents), the rest summed on demand from the lengths (at most 15 additions:
 * `count` through a Megatron order asks this once per match).
 * `at(i)` = sum of lengths `0..i−1`. The block sums can be kept on disk ({@link blocks}, {@link
 * fromBlocks}): building them reads every length once, which a search worker should not repeat.
 */
export class SparsePrefix {
  static readonly BLOCK = 16;
  /** Sum of lengths before each block of {@link BLOCK} entries, plus the total when `length` is a multiple of it. */
  readonly blocks: Float64Array;

  /**
   * @param length the number of entries. @param len entry i's length (called once per entry here, up to 15 times per {@link at}).
   * @param blocks the block sums of an earlier build of the same lengths (not called per entry then).
   */
  constructor(
    readonly length: number,
    private readonly len: (i: number) => number,
    blocks?: Float64Array,
  ) {
    if (blocks && blocks.length === Math.floor(length / SparsePrefix.BLOCK) + 1) {
      this.blocks = blocks;
      const last = Math.floor(length / SparsePrefix.BLOCK);
      let sum = blocks[last];
      for (let i = last * SparsePrefix.BLOCK; i < length; i++) sum += len(i);
      this.total = sum;
      return;
    }
    this.blocks = new Float64Array(Math.floor(length / SparsePrefix.BLOCK) + 1);
    let sum = 0;
    for (let i = 0; i < length; i++) {
      if (i % SparsePrefix.BLOCK === 0) this.blocks[i / SparsePrefix.BLOCK] = sum;
      sum += len(i);
    }
    if (length % SparsePrefix.BLOCK === 0) this.blocks[length / SparsePrefix.BLOCK] = sum;
    this.total = sum;
  }

  /** Sum of all lengths. */
  readonly total: number;

  /** Sum of lengths `0..i−1` (0 ≤ i ≤ length). */
  at(i: number): number {
    const b = Math.floor(i / SparsePrefix.BLOCK);
    let sum = this.blocks[b];
    for (let k = b * SparsePrefix.BLOCK; k < i; k++) sum += this.len(k);
    return sum;
  }

  /** The entry holding position `t` (0 ≤ t < total): the largest i with at(i) ≤ t and a non-empty length. */
  find(t: number): number {
    const lo = lastAtOrBelow(this.blocks.length, (b) => this.blocks[b], t);
    let i = lo * SparsePrefix.BLOCK;
    let sum = this.blocks[lo];
    while (i < this.length) {
      const l = this.len(i);
      if (t < sum + l) return i;
      sum += l;
      i++;
    }
    return this.length;
  }
}
