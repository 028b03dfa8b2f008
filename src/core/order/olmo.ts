/**
 * OLMo's order (allenai/OLMo commit 59a53e3f68e546330ca5a99ec626e58f9ab96494, allenai/OLMo-core
 * commit fa6c5014c9f6e9ee789da2d9c20d5126fee8df0d).
 *
 * Instances are fixed-length chunks of L tokens inside each token file, in the order of the
 * config's paths; a file's tail shorter than L is dropped (OLMo `olmo/data/memmap_dataset.py`
 * `_get_file_length`, line 172: `file_size // (item_size * chunk_size)`; OLMo-core
 * `src/olmo_core/data/numpy_dataset.py` `NumpyFSLDataset`, line 679). Instance i is tokens
 * `[(i − first instance of its file)·L, … + L)` of its file.
 *
 * `global_indices.npy` (raw uint32 written through `np.memmap`, no numpy header) permutes the
 * instances; batch k is instances `global_indices[k·B, (k+1)·B)` for B instances per batch (OLMo's
 * `global_train_batch_size`; OLMo-core's `global_batch_size` is in tokens: B = that / L). Rebuilt
 * from seed and epoch when the file is missing:
 * - rule `olmo-core` (`src/olmo_core/data/data_loader.py` `_build_global_indices`, lines 667–690):
 *   `Generator(PCG64(seed + epoch)).shuffle(arange(n, uint32))`, or with `chunk_size` c > 1 the
 *   chunks `arange(n // c)` shuffled and expanded to `chunk·c + 0..c−1`; batches use the first
 *   `B·floor(n / B)` (`total_size`, lines 641–648);
 * - rule `olmo` (OLMo 1, `olmo/data/iterable_dataset.py` `_build_global_indices`, lines 91–114):
 *   the same shuffle, then cut (drop_last) or padded by repeating its start to `total_size`, a
 *   multiple of the world size (lines 56–65).
 */
import * as fs from 'fs';
import { DataError, RangeRequestError } from '../errors';
import { fmt } from '../units';
import { numpyShuffle, Pcg64 } from './rng';
import {
  InputSpan,
  InverseIndex,
  OrderCache,
  OrderRead,
  OrderSample,
  StreamFile,
  TrainingOrder,
  checkOrderUpdate,
  fileAt,
  inputUpdates,
  lastAtOrBelow,
  pushPlacedReads,
} from './order';
import { ArrayVector, FileVector, IntVector, isNpy, openNpy, openRegularFileSync } from './vector';

/** Which code's rule rebuilds `global_indices`. */
export type OlmoRule = 'olmo-core' | 'olmo';

/** Parameters of a rebuild of `global_indices`. */
export interface OlmoIndexParams {
  seed: number;
  epoch: number;
  rule: OlmoRule;
  /** OLMo-core `chunk_size` (default 1). */
  chunkSize?: number;
  /** OLMo 1: data-parallel world size (default 1) and `drop_last` (default false). */
  worldSize?: number;
  dropLast?: boolean;
}

/** Instances per file: `floor(tokens / L)` (the tail dropped). */
export function olmoInstances(files: readonly StreamFile[], L: number): number[] {
  return files.map((f) => Math.floor(f.tokens / L));
}

/**
 * Rebuilds `global_indices` as the chosen rule does.
 * @param n instances in the dataset.
 * @throws RangeRequestError for n ≥ 2^32 − 1 (OLMo asserts uint32) or a bad chunk size / world size.
 */
export function buildOlmoGlobalIndices(n: number, p: OlmoIndexParams): Uint32Array {
  if (n >= 0xffff_ffff) throw new RangeRequestError(`${fmt(n)} instances do not fit OLMo's uint32 indices`);
  const rng = new Pcg64(p.seed + p.epoch);
  if (p.rule === 'olmo-core') {
    const c = p.chunkSize ?? 1;
    if (!(Number.isSafeInteger(c) && c >= 1)) throw new RangeRequestError(`chunk_size ${c} is not a positive integer`);
    if (c === 1) {
      const a = new Uint32Array(n);
      for (let i = 0; i < n; i++) a[i] = i;
      numpyShuffle(rng, a);
      return a;
    }
    const chunks = new Uint32Array(Math.floor(n / c));
    for (let i = 0; i < chunks.length; i++) chunks[i] = i;
    numpyShuffle(rng, chunks);
    const a = new Uint32Array(chunks.length * c);
    for (let i = 0; i < chunks.length; i++) for (let j = 0; j < c; j++) a[i * c + j] = chunks[i] * c + j;
    return a;
  }
  const ws = p.worldSize ?? 1;
  if (!(Number.isSafeInteger(ws) && ws >= 1)) throw new RangeRequestError(`world_size ${ws} is not a positive integer`);
  const perRank = p.dropLast && n % ws !== 0 ? Math.ceil((n - ws) / ws) : Math.ceil(n / ws);
  const total = perRank * ws;
  const shuffled = new Uint32Array(n);
  for (let i = 0; i < n; i++) shuffled[i] = i;
  numpyShuffle(rng, shuffled);
  if (total <= n) return shuffled.slice(0, total);
  const a = new Uint32Array(total);
  for (let i = 0; i < total; i++) a[i] = shuffled[i % n];
  return a;
}

/**
 * Opens a `global_indices` file: raw little-endian uint32 (as OLMo writes it) or a real `.npy`
 * of `<u4`.
 * @throws DataError for an `.npy` of another dtype or shape, or a raw file whose size is not a multiple of 4.
 */
export function openOlmoGlobalIndices(file: string): FileVector {
  const fd = openRegularFileSync(file, "OLMo's global indices");
  const head = Buffer.alloc(8);
  const got = fs.readSync(fd, head, 0, 8, 0);
  const size = fs.fstatSync(fd).size;
  fs.closeSync(fd);
  if (isNpy(head.subarray(0, got))) {
    const { vector, shape } = openNpy(file);
    if (vector.dtype !== 'u4' || shape.length !== 1) {
      vector.close();
      throw new DataError(
        `${file}: a .npy of '<${vector.dtype}' shape (${shape.join(', ')}); expected OLMo's global indices, one dimension of '<u4'`,
        file,
      );
    }
    return vector;
  }
  if (size % 4 !== 0) throw new DataError(`${file}: byte ${fmt(size)}: ${fmt(size)} bytes is not a whole number of uint32 indices`, file);
  return FileVector.open(file, 'u4');
}

/** How an {@link OlmoOrder} is set up. */
export interface OlmoOrderOptions {
  /** The token files in the order of OLMo's config `paths`. */
  files: StreamFile[];
  sequenceLength: number;
  /** Instances per batch. */
  globalBatchSize: number;
  /** The global indices: a file ({@link openOlmoGlobalIndices}) or a rebuild. */
  indices: FileVector | Uint32Array;
  /** Where the indices came from (the file, or the rule, seed and epoch of a rebuild), for the description. */
  source: string;
  cache: OrderCache;
  /** Source files of the cache key (the indices file; for a rebuild the key parameters are in {@link cacheParams}). */
  cacheSources: string[];
  cacheParams: unknown;
}

/** {@link TrainingOrder} of an OLMo run (see the module comment). */
export class OlmoOrder implements TrainingOrder {
  readonly kind = 'olmo' as const;
  readonly numUpdates: number;
  readonly samplesPerUpdate: number;
  readonly sampleTokens: number;
  readonly inputTokens: number;
  readonly description: string;
  /** Instances in the dataset. */
  readonly numInstances: number;
  private readonly firstInstance: number[];
  private readonly indices: IntVector;
  private inverse?: InverseIndex;
  /** The files sorted by stream offset (the config's order may differ from the stream's), and their places in {@link OlmoOrderOptions.files}. */
  private readonly byStart: StreamFile[];
  private readonly byStartIndex: number[];

  constructor(private readonly o: OlmoOrderOptions) {
    const L = o.sequenceLength;
    const counts = olmoInstances(o.files, L);
    this.firstInstance = [0];
    for (const c of counts) this.firstInstance.push(this.firstInstance[this.firstInstance.length - 1] + c);
    this.numInstances = this.firstInstance[counts.length];
    this.byStartIndex = o.files.map((_, i) => i).sort((a, b) => o.files[a].start - o.files[b].start);
    this.byStart = this.byStartIndex.map((i) => o.files[i]);
    this.indices = o.indices instanceof FileVector ? o.indices : new ArrayVector(o.indices);
    this.samplesPerUpdate = o.globalBatchSize;
    this.sampleTokens = L;
    this.inputTokens = L;
    this.numUpdates = Math.floor(this.indices.length / o.globalBatchSize);
    this.description = `olmo (${o.source}): ${fmt(this.numInstances)} instances of ${fmt(L)} tokens, ${fmt(o.globalBatchSize)} per batch, ${fmt(this.numUpdates)} batches`;
  }

  /** Stream offset of instance i's first token. @throws DataError for an index past the instances (the indices belong to other files or another L). */
  instanceStart(i: number, where: number): number {
    if (!(i >= 0 && i < this.numInstances)) {
      const file = this.o.indices instanceof FileVector ? this.o.indices.file : 'the rebuilt global indices';
      throw new DataError(
        `${file}: element ${fmt(where)} is instance ${fmt(i)}, but the files hold ${fmt(this.numInstances)} instances of ${fmt(this.sampleTokens)} tokens (other files, another order of paths or another sequence length?)`,
        file,
      );
    }
    let lo = lastAtOrBelow(this.firstInstance.length - 1, (f) => this.firstInstance[f], i);
    while (this.firstInstance[lo + 1] <= i) lo++;
    return this.o.files[lo].start + (i - this.firstInstance[lo]) * this.sampleTokens;
  }

  update(k: number): OrderSample[] {
    checkOrderUpdate(this, k);
    const B = this.samplesPerUpdate;
    const out: OrderSample[] = [];
    for (let slot = 0; slot < B; slot++) {
      const i = this.indices.get(k * B + slot);
      const start = this.instanceStart(i, k * B + slot);
      out.push({ slot, sample: i, pieces: [{ start, end: start + this.sampleTokens }] });
    }
    return out;
  }

  /** Position of each instance in the global indices (built once, cached). */
  ranks(): InverseIndex {
    if (!this.inverse) {
      const key = this.o.cache.key(this.o.cacheSources, { kind: 'olmo', params: this.o.cacheParams, n: this.numInstances });
      const v = this.indices;
      const name = v instanceof FileVector ? v.file : 'the rebuilt global indices';
      this.inverse = this.o.cache.inverse(key, 'olmo', this.numInstances, () =>
        InverseIndex.build(v, this.numInstances, (p) => `${name}: element ${fmt(p)}`),
      );
    }
    return this.inverse;
  }

  reads(offset: number): OrderRead[] {
    const at = fileAt(this.byStart, offset);
    if (at < 0) return [];
    const f = this.byStartIndex[at];
    const L = this.sampleTokens;
    const local = offset - this.o.files[f].start;
    const n = Math.floor(local / L);
    if (n >= this.firstInstance[f + 1] - this.firstInstance[f]) return []; // the dropped tail
    const i = this.firstInstance[f] + n;
    const out: OrderRead[] = [];
    pushPlacedReads(out, this.ranks().positions(i), this, { sample: i, position: local - n * L, target: false });
    return out;
  }

  /**
   * The updates reading token `offset` (as {@link inputUpdates}) and for how many tokens they stay
   * the same: to the end of its instance (L tokens of one file, every one an input), or to the end
   * of the file in its dropped tail (never read).
   */
  inputSpan(offset: number): InputSpan {
    const at = fileAt(this.byStart, offset);
    if (at < 0) return { updates: [], tokens: 1 };
    const f = this.byStartIndex[at];
    const file = this.o.files[f];
    const L = this.sampleTokens;
    const local = offset - file.start;
    const n = Math.floor(local / L);
    if (n >= this.firstInstance[f + 1] - this.firstInstance[f]) return { updates: [], tokens: file.tokens - local };
    return { updates: inputUpdates(this, offset), tokens: (n + 1) * L - local };
  }

  close(): void {
    if (this.o.indices instanceof FileVector) this.o.indices.close();
  }
}
