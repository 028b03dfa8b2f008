/**
 * Megatron-LM's GPTDataset order (NVIDIA/Megatron-LM commit d98e8a64ddf34856e74b24714e3bedb2f5a39553,
 * `megatron/core/datasets/gpt_dataset.py`, `helpers.cpp`).
 *
 * At the start of training Megatron builds three index arrays from the `.idx` sequence lengths
 * (`_build_document_sample_shuffle_indices`, gpt_dataset.py lines 475–701) and saves them in its
 * cache folder as `<hash>-GPTDataset-<split>-{document_index,sample_index,shuffle_index}.npy` next
 * to `<hash>-GPTDataset-<split>-description.txt` (the JSON of the dataset's key parameters; the
 * hash is its MD5):
 * - `document_index` (int32): the split's sequence ids repeated once per epoch and shuffled with
 *   `numpy.random.RandomState(random_seed)` (lines 734–765; with a separate final epoch, the first
 *   E−1 epochs are shuffled together and the last on its own);
 * - `sample_index` ((N+1) × 2, int32 or int64): for each sample, the position in `document_index`
 *   and the token offset in that document where it starts (`build_sample_idx`, helpers.cpp lines
 *   145–249): sample j covers tokens `[j·L, j·L + L + x)` of the documents concatenated in
 *   `document_index` order, x = `add_extra_token_to_sequence` (1: the next sample's first token is
 *   read again as the last target);
 * - `shuffle_index` (uint32, int64 past 2^32 − 2 samples): a shuffled `arange(N)`, two ranges
 *   shuffled separately with a separate final epoch (lines 768–797).
 *
 * Sample i of training is `shuffle_index[i]` (`_query_document_sample_shuffle_indices`, lines
 * 388–470); step k reads samples `[k·B, (k+1)·B)` of the global batch size B. Megatron's
 * "documents" here are the `.idx` sequences (`numel_low_level_dataset`, line 188); the stream is
 * the `.bin` in `.idx` order, so sequence s starts at the sum of the lengths before it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { DataError, RangeRequestError } from '../errors';
import { fmt } from '../units';
import { parseJson } from '../safeJson';
import { numpyShuffle, randomState } from './rng';
import {
  InputSpan,
  InverseIndex,
  OrderCache,
  OrderRead,
  OrderSample,
  SparsePrefix,
  TokenRange,
  TrainingOrder,
  checkOrderUpdate,
  pushPlacedReads,
} from './order';
import { FileVector, npyBytes, openNpy } from './vector';

/** The parameters that decide Megatron's indices (`GPTDatasetConfig` and the split's sample count). */
export interface MegatronParams {
  /** `sequence_length` L: input tokens per sample. */
  sequenceLength: number;
  /** `random_seed`. */
  seed: number;
  /** Samples requested for the split (`train_iters × global_batch_size` or `train_samples`); undefined: one epoch. */
  numSamples?: number;
  /** `add_extra_token_to_sequence` (default true: samples of L + 1 tokens). */
  addExtraToken: boolean;
  /** The split's sequences `[begin, end)` (from `split_matrix`; default all). */
  split?: [number, number];
  /** `drop_last_partial_sequence` (true for the train split). */
  dropLastPartial?: boolean;
}

/** Megatron's three index arrays, in memory. `sampleIndex` is flat: row j = (`[2j]`, `[2j+1]`). */
export interface MegatronIndices {
  documentIndex: Int32Array;
  sampleIndex: Int32Array | Float64Array;
  /** numpy dtype Megatron picks: int32 when `max(len(document_index), max length) ≤ 2^31 − 1`, else int64. */
  sampleDtype: 'i4' | 'i8';
  shuffleIndex: Uint32Array | Float64Array;
  shuffleDtype: 'u4' | 'i8';
  numEpochs: number;
  separateFinalEpoch: boolean;
}

/** Python's `int(round(x))` (round half to even), for `split_matrix` × count (blended_megatron_dataset_builder.py). */
function pyRound(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** The split's sequence range from a `split_matrix` entry `[b, e]` (fractions) and the sequence count. */
export function splitRange(fractions: [number, number], numSequences: number): [number, number] {
  return [pyRound(fractions[0] * numSequences), pyRound(fractions[1] * numSequences)];
}

/**
 * Builds Megatron's indices as `_build_document_sample_shuffle_indices` does.
 * @param lengths tokens of every `.idx` sequence.
 * @throws RangeRequestError for parameters Megatron asserts against (L ≤ 1, an empty split, a
 *   final epoch larger than an epoch).
 */
export function buildMegatronIndices(lengths: Int32Array, p: MegatronParams): MegatronIndices {
  const L = p.sequenceLength;
  const x = p.addExtraToken ? 1 : 0;
  const [beg, end] = p.split ?? [0, lengths.length];
  if (!(L > 1)) throw new RangeRequestError(`sequence_length ${L} must be more than 1 (helpers.cpp asserts it)`);
  if (!(end > beg && beg >= 0 && end <= lengths.length))
    throw new RangeRequestError(
      `the split's sequences [${beg}, ${end}) are empty or outside the ${fmt(lengths.length)} sequences of the .idx`,
    );
  // _get_num_tokens_per_epoch (line 703): the split's tokens.
  let tokensPerEpoch = 0;
  for (let s = beg; s < end; s++) tokensPerEpoch += lengths[s];
  if (!(tokensPerEpoch > 1)) throw new RangeRequestError(`the split holds ${fmt(tokensPerEpoch)} tokens (helpers.cpp needs more than 1)`);
  // _get_num_epochs (line 711).
  let numEpochs = 1;
  if (p.numSamples !== undefined) {
    const requested = p.numSamples * L + x;
    for (let tokens = tokensPerEpoch; tokens < requested; tokens += tokensPerEpoch) numEpochs++;
  }
  let separateFinalEpoch = false;
  let samplesSansFinal = 0;
  if (numEpochs > 1 && p.numSamples !== undefined) {
    samplesSansFinal = Math.floor(((numEpochs - 1) * tokensPerEpoch - x) / L);
    const fromFinal = p.numSamples - samplesSansFinal;
    const perEpoch = Math.floor((tokensPerEpoch - x) / L);
    if (fromFinal < 0 || fromFinal > perEpoch + 1)
      throw new RangeRequestError(
        `${fmt(fromFinal)} samples from the final epoch is outside 0..${fmt(perEpoch + 1)} (gpt_dataset.py asserts it)`,
      );
    separateFinalEpoch = fromFinal < Math.trunc(0.8 * perEpoch);
  }
  const rng = randomState(p.seed);
  const docs = end - beg;
  const documentIndexFor = (epochs: number): Int32Array => {
    const a = new Int32Array(epochs * docs);
    for (let e = 0; e < epochs; e++) for (let d = 0; d < docs; d++) a[e * docs + d] = beg + d;
    numpyShuffle(rng, a);
    return a;
  };
  let documentIndex: Int32Array;
  if (!separateFinalEpoch) documentIndex = documentIndexFor(numEpochs);
  else {
    const first = documentIndexFor(numEpochs - 1);
    const last = documentIndexFor(1);
    documentIndex = new Int32Array(first.length + last.length);
    documentIndex.set(first);
    documentIndex.set(last, first.length);
  }
  let maxLength = 0;
  for (let s = 0; s < lengths.length; s++) if (lengths[s] > maxLength) maxLength = lengths[s];
  const sampleDtype = Math.max(documentIndex.length, maxLength) <= 0x7fff_ffff ? 'i4' : 'i8';
  const sampleIndex = buildSampleIndex(lengths, documentIndex, L, numEpochs, tokensPerEpoch, p.dropLastPartial ?? true, x, sampleDtype);
  const N = sampleIndex.length / 2 - 1;
  const shuffleDtype = N >= 0xffff_ffff - 1 ? 'i8' : 'u4';
  const shuffleIndex = shuffleDtype === 'u4' ? new Uint32Array(N) : new Float64Array(N);
  const firstRange = separateFinalEpoch ? samplesSansFinal : N;
  for (let i = 0; i < N; i++) shuffleIndex[i] = i;
  numpyShuffle(rng, shuffleIndex.subarray(0, firstRange));
  if (firstRange < N) numpyShuffle(rng, shuffleIndex.subarray(firstRange));
  return { documentIndex, sampleIndex, sampleDtype, shuffleIndex, shuffleDtype, numEpochs, separateFinalEpoch };
}

/** `build_sample_idx` (helpers.cpp lines 145–249), line for line. */
function buildSampleIndex(
  sizes: Int32Array,
  documentIdx: Int32Array,
  L: number,
  numEpochs: number,
  tokensPerEpoch: number,
  dropLast: boolean,
  x: number,
  dtype: 'i4' | 'i8',
): Int32Array | Float64Array {
  const numSamples = dropLast
    ? Math.floor((numEpochs * tokensPerEpoch - x) / L)
    : Math.ceil(Math.fround(Math.fround(numEpochs * tokensPerEpoch - x) / L));
  const out = dtype === 'i4' ? new Int32Array(2 * (numSamples + 1)) : new Float64Array(2 * (numSamples + 1));
  let s = 1;
  let docPos = 0;
  let offset = 0;
  while (s <= numSamples) {
    let remaining = L + x;
    while (remaining !== 0) {
      const length = sizes[documentIdx[docPos]] - offset;
      remaining -= length;
      if (remaining <= 0) {
        offset += remaining + length - x;
        remaining = 0;
      } else {
        if (docPos === documentIdx.length - 1) {
          offset = sizes[documentIdx[docPos]] - x;
          break;
        }
        docPos++;
        offset = 0;
      }
    }
    out[2 * s] = docPos;
    out[2 * s + 1] = offset;
    s++;
  }
  return out;
}

/** Megatron's index files of one dataset split, found in a cache folder. */
export interface MegatronCacheFiles {
  description: string;
  documentIndex: string;
  sampleIndex: string;
  shuffleIndex: string;
  /** The MD5 prefix of the file names. */
  hash: string;
}

/**
 * Finds `<hash>-GPTDataset-<split>-*.npy` in `dir`.
 * @param hash chooses among several datasets cached in one folder.
 * @throws DataError naming the folder: none found, several without `hash`, or one of the four files missing.
 */
export function findMegatronCache(dir: string, split = 'train', hash?: string): MegatronCacheFiles {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    throw new DataError(`${dir}: cannot read the Megatron cache folder (${(err as Error).message})`, dir);
  }
  const suffix = `-GPTDataset-${split}-shuffle_index.npy`;
  const hashes = names.filter((n) => n.endsWith(suffix)).map((n) => n.slice(0, -suffix.length));
  const chosen = hash ?? (hashes.length === 1 ? hashes[0] : undefined);
  if (chosen === undefined || !hashes.includes(chosen)) {
    throw new DataError(
      hashes.length === 0
        ? `${dir}: no <hash>-GPTDataset-${split}-shuffle_index.npy here (expected Megatron's index cache folder, path_to_cache)`
        : hash !== undefined
          ? `${dir}: no GPTDataset ${split} indices with hash ${hash} (found ${hashes.join(', ')})`
          : `${dir}: ${hashes.length} GPTDataset ${split} datasets are cached here (${hashes.join(', ')}); name one with "hash"`,
      dir,
    );
  }
  const base = path.join(dir, `${chosen}-GPTDataset-${split}-`);
  const files = {
    description: `${base}description.txt`,
    documentIndex: `${base}document_index.npy`,
    sampleIndex: `${base}sample_index.npy`,
    shuffleIndex: `${base}shuffle_index.npy`,
    hash: chosen,
  };
  for (const f of [files.description, files.documentIndex, files.sampleIndex]) {
    if (!fs.existsSync(f)) throw new DataError(`${f}: missing (Megatron writes the description and three index files together)`, f);
  }
  return files;
}

/** What `description.txt` (Megatron's `unique_description`, JSON) says about the indices. */
export interface MegatronDescription {
  sequenceLength: number;
  seed: number;
  numSamples?: number;
  addExtraToken: boolean;
  /** `split_matrix` entry of `index_split`. */
  splitFractions?: [number, number];
  indexSplit?: string;
  datasetPath?: string;
}

const SPLITS = ['train', 'valid', 'test'];

/**
 * Parses `description.txt`.
 * @throws DataError naming the file and the field: not JSON, `sequence_length` or `random_seed` missing or not an integer.
 */
export function parseMegatronDescription(text: string, file: string): MegatronDescription {
  const r = parseJson(text);
  if (!r.ok) throw new DataError(`${file}: not JSON (${r.error}); expected Megatron's unique_description`, file);
  const o = r.value as Record<string, unknown>;
  if (typeof o !== 'object' || o === null) throw new DataError(`${file}: expected a JSON object (Megatron's unique_description)`, file);
  const int = (k: string): number => {
    const v = o[k];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      throw new DataError(`${file}: "${k}" is ${JSON.stringify(v)}; expected a non-negative integer`, file);
    return v;
  };
  const indexSplit = typeof o.index_split === 'string' ? o.index_split : undefined;
  let splitFractions: [number, number] | undefined;
  const m = o.split_matrix;
  const at = indexSplit ? SPLITS.indexOf(indexSplit) : -1;
  if (Array.isArray(m) && at >= 0) {
    const e = m[at] as unknown;
    if (Array.isArray(e) && e.length === 2 && e.every((v) => typeof v === 'number')) splitFractions = [e[0] as number, e[1] as number];
  }
  return {
    sequenceLength: int('sequence_length'),
    seed: int('random_seed'),
    numSamples: o.num_samples === null || o.num_samples === undefined ? undefined : int('num_samples'),
    addExtraToken: o.add_extra_token_to_sequence === undefined ? true : o.add_extra_token_to_sequence === true,
    splitFractions,
    indexSplit,
    datasetPath: typeof o.dataset_path === 'string' ? o.dataset_path : undefined,
  };
}

/**
 * Compares rebuilt indices with Megatron's cached files, element by element.
 * @returns undefined when equal, else one sentence naming the file, the element and both values.
 */
export function compareMegatronIndices(
  built: MegatronIndices,
  files: Pick<MegatronCacheFiles, 'documentIndex' | 'sampleIndex' | 'shuffleIndex'>,
): string | undefined {
  const pairs: [string, ArrayLike<number>][] = [
    [files.documentIndex, built.documentIndex],
    [files.sampleIndex, built.sampleIndex],
    [files.shuffleIndex, built.shuffleIndex],
  ];
  for (const [file, want] of pairs) {
    const { vector } = openNpy(file);
    try {
      if (vector.length !== want.length)
        return `${file}: ${fmt(vector.length)} elements, but the rebuild from the parameters gives ${fmt(want.length)}`;
      const CHUNK = 1 << 20;
      for (let s = 0; s < want.length; s += CHUNK) {
        const got = vector.readRange(s, Math.min(CHUNK, want.length - s));
        for (let k = 0; k < got.length; k++) {
          if (got[k] !== want[s + k])
            return `${file}: element ${fmt(s + k)} is ${got[k]}, but the rebuild from the parameters gives ${want[s + k]}`;
        }
      }
    } finally {
      vector.close();
    }
  }
  return undefined;
}

/** Writes built indices as Megatron would (`numpy.save`) to `files`. */
export function writeMegatronIndices(
  built: MegatronIndices,
  files: Pick<MegatronCacheFiles, 'documentIndex' | 'sampleIndex' | 'shuffleIndex'>,
  cache: OrderCache,
): void {
  cache.writeAtomic(files.documentIndex, npyBytes(built.documentIndex, 'i4', [built.documentIndex.length]));
  cache.writeAtomic(files.sampleIndex, npyBytes(built.sampleIndex, built.sampleDtype, [built.sampleIndex.length / 2, 2]));
  cache.writeAtomic(files.shuffleIndex, npyBytes(built.shuffleIndex, built.shuffleDtype, [built.shuffleIndex.length]));
}

/** How a {@link MegatronOrder} is set up. */
export interface MegatronOrderOptions {
  /** Tokens of every `.idx` sequence. */
  lengths: Int32Array;
  /** The three index files (Megatron's, or this tool's rebuild). */
  files: Pick<MegatronCacheFiles, 'documentIndex' | 'sampleIndex' | 'shuffleIndex'>;
  sequenceLength: number;
  addExtraToken: boolean;
  /** Samples per step (the global batch size). */
  globalBatchSize: number;
  /** Steps trained (`train_iters`); default: every full batch of the shuffle index. */
  trainIters?: number;
  /** Where the inverses are cached. */
  cache: OrderCache;
  /** Where the indices came from, for {@link TrainingOrder.description}. */
  source: string;
}

/** {@link TrainingOrder} of a Megatron GPTDataset run (see the module comment). */
export class MegatronOrder implements TrainingOrder {
  readonly kind = 'megatron' as const;
  readonly numUpdates: number;
  readonly samplesPerUpdate: number;
  readonly sampleTokens: number;
  readonly inputTokens: number;
  readonly description: string;
  /** Samples in the index (`len(shuffle_index)`). */
  readonly numSamples: number;
  private readonly documentIndex: FileVector;
  private readonly sampleIndex: FileVector;
  private readonly shuffleIndex: FileVector;
  private readonly lengths: Int32Array;
  private readonly starts: SparsePrefix;
  private docPrefix?: SparsePrefix;
  private shuffleInverse?: InverseIndex;
  private documentInverse?: InverseIndex;
  private readonly x: number;
  /** The sample {@link checkSampleStart} passed last. */
  private lastCheckedSample = -1;

  /** @throws DataError for index files that are not Megatron's shapes or do not fit together. */
  constructor(private readonly o: MegatronOrderOptions) {
    const { files } = o;
    this.lengths = o.lengths;
    this.x = o.addExtraToken ? 1 : 0;
    this.inputTokens = o.sequenceLength;
    this.sampleTokens = o.sequenceLength + this.x;
    this.samplesPerUpdate = o.globalBatchSize;
    const opened: FileVector[] = [];
    try {
      const d = openNpy(files.documentIndex);
      opened.push(d.vector);
      const s = openNpy(files.sampleIndex);
      opened.push(s.vector);
      const sh = openNpy(files.shuffleIndex);
      opened.push(sh.vector);
      if (d.shape.length !== 1)
        throw new DataError(`${files.documentIndex}: shape (${d.shape.join(', ')}); expected one dimension`, files.documentIndex);
      if (s.shape.length !== 2 || s.shape[1] !== 2 || s.shape[0] < 1)
        throw new DataError(`${files.sampleIndex}: shape (${s.shape.join(', ')}); expected (samples + 1, 2)`, files.sampleIndex);
      if (sh.shape.length !== 1 || sh.shape[0] > s.shape[0] - 1)
        throw new DataError(
          `${files.shuffleIndex}: shape (${sh.shape.join(', ')}); expected (${fmt(s.shape[0] - 1)},), one entry per sample of ${path.basename(files.sampleIndex)}`,
          files.shuffleIndex,
        );
      this.documentIndex = d.vector;
      this.sampleIndex = s.vector;
      this.shuffleIndex = sh.vector;
    } catch (err) {
      for (const v of opened) v.close();
      throw err;
    }
    this.numSamples = this.shuffleIndex.length;
    const full = Math.floor(this.numSamples / o.globalBatchSize);
    if (o.trainIters !== undefined && o.trainIters > full) {
      this.close();
      throw new RangeRequestError(
        `train_iters ${fmt(o.trainIters)} needs ${fmt(o.trainIters * o.globalBatchSize)} samples; ${o.files.shuffleIndex} has ${fmt(this.numSamples)}`,
      );
    }
    this.numUpdates = o.trainIters ?? full;
    this.starts = new SparsePrefix(this.lengths.length, (i) => this.lengths[i]);
    this.description = `megatron GPTDataset (${o.source}): ${fmt(this.numSamples)} samples of ${fmt(this.sampleTokens)} tokens, ${fmt(o.globalBatchSize)} per update, ${fmt(this.numUpdates)} updates`;
  }

  private sequence(docPos: number): number {
    const s = this.documentIndex.get(docPos);
    if (!(s >= 0 && s < this.lengths.length))
      throw new DataError(
        `${this.o.files.documentIndex}: element ${fmt(docPos)} is ${s}, not a sequence of the .idx (0..${fmt(this.lengths.length - 1)})`,
        this.o.files.documentIndex,
      );
    return s;
  }

  /** The stream ranges of sample `j` (a row of `sample_index`), as `_query_document_sample_shuffle_indices` assembles it. */
  samplePieces(j: number): TokenRange[] {
    const si = this.sampleIndex;
    const begPos = si.get(2 * j),
      begOff = si.get(2 * j + 1),
      endPos = si.get(2 * j + 2),
      endOff = si.get(2 * j + 3);
    const pieces: TokenRange[] = [];
    for (let p = begPos; p <= endPos; p++) {
      const seq = this.sequence(p);
      const off = p === begPos ? begOff : 0;
      const stop = p < endPos ? this.lengths[seq] : endOff + this.x;
      if (off < 0 || stop > this.lengths[seq] || stop < off) {
        throw new DataError(
          `${this.o.files.sampleIndex}: sample ${fmt(j)} reads tokens ${off}..${stop} of sequence ${fmt(seq)}, which has ${fmt(this.lengths[seq])} (the index files do not belong to this .idx)`,
          this.o.files.sampleIndex,
        );
      }
      const base = this.starts.at(seq);
      if (stop > off) pieces.push({ start: base + off, end: base + stop });
    }
    return pieces;
  }

  update(k: number): OrderSample[] {
    checkOrderUpdate(this, k);
    const B = this.samplesPerUpdate;
    const out: OrderSample[] = [];
    for (let slot = 0; slot < B; slot++) {
      const j = this.shuffleIndex.get(k * B + slot);
      out.push({ slot, sample: j, pieces: this.samplePieces(j) });
    }
    return out;
  }

  /** The shuffle index inverted: position of each sample in training order (built once, cached). */
  shuffleRanks(): InverseIndex {
    if (!this.shuffleInverse) {
      const sh = this.shuffleIndex;
      const N = this.sampleIndex.length / 2 - 1;
      const key = this.o.cache.key([this.o.files.shuffleIndex], { kind: 'megatron-shuffle' });
      this.shuffleInverse = this.o.cache.inverse(key, 'shuffle', N, () =>
        InverseIndex.build(sh, N, (p) => `${sh.file}: element ${fmt(p)}`),
      );
    }
    return this.shuffleInverse;
  }

  private documentPositions(): InverseIndex {
    if (!this.documentInverse) {
      const d = this.documentIndex;
      const key = this.o.cache.key([this.o.files.documentIndex], { kind: 'megatron-documents', sequences: this.lengths.length });
      this.documentInverse = this.o.cache.inverse(key, 'documents', this.lengths.length, () =>
        InverseIndex.build(d, this.lengths.length, (p) => `${d.file}: element ${fmt(p)}`),
      );
    }
    return this.documentInverse;
  }

  /**
   * Tokens before each position of the document index (sparse prefix sums). Its block sums are
   * kept in the order cache next to the inverses: each search worker of a count loads them
   * instead of reading the whole document index again.
   */
  private flatPrefix(): SparsePrefix {
    if (this.docPrefix) return this.docPrefix;
    const n = this.documentIndex.length;
    const len = (p: number) => this.lengths[this.sequence(p)];
    const file = this.o.cache.file(
      this.o.cache.key([this.o.files.documentIndex], { kind: 'megatron-flat', sequences: this.lengths.length, block: SparsePrefix.BLOCK }),
      'flat.f64',
    );
    let kept: Float64Array | undefined;
    try {
      const b = fs.readFileSync(file);
      if (b.byteLength === (Math.floor(n / SparsePrefix.BLOCK) + 1) * 8)
        kept = new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    } catch {
      // Not kept yet: built below.
    }
    this.docPrefix = new SparsePrefix(n, len, kept);
    if (!kept) {
      try {
        const bl = this.docPrefix.blocks;
        this.o.cache.writeAtomic(file, Buffer.from(bl.buffer, bl.byteOffset, bl.byteLength));
      } catch {
        // Not writable: the prefix is still correct, only not kept.
      }
    }
    return this.docPrefix;
  }

  reads(offset: number): OrderRead[] {
    if (!(offset >= 0 && offset < this.starts.total)) return [];
    const seq = this.starts.find(offset);
    const within = offset - this.starts.at(seq);
    const L = this.inputTokens;
    const N = this.sampleIndex.length / 2 - 1;
    const flat = this.flatPrefix();
    const ranks = this.shuffleRanks();
    const out: OrderRead[] = [];
    for (const p of this.documentPositions().positions(seq)) {
      const f = flat.at(p) + within;
      const j = Math.floor(f / L);
      const cands: [number, number][] = [[j, f - j * L]];
      if (this.x === 1 && j >= 1 && f === j * L) cands.unshift([j - 1, L]);
      for (const [sample, position] of cands) {
        if (sample >= N) continue;
        this.checkSampleStart(sample, flat);
        pushPlacedReads(out, ranks.positions(sample), this, { sample, position, target: position === L });
      }
    }
    return out.sort((a, b) => a.update - b.update || a.slot - b.slot);
  }

  /**
   * The updates reading token `offset` as an input, and for how many tokens they stay the same:
   * within the token's `.idx` sequence, until any of its document-index places crosses into the
   * next sample (sample j holds inputs `[j·L, (j+1)·L)` of the concatenated documents; the shared
   * token at `(j+1)·L` is only sample j's target). Equal to {@link inputUpdates} at every token of the span.
   */
  inputSpan(offset: number): InputSpan {
    if (!(offset >= 0 && offset < this.starts.total)) return { updates: [], tokens: 1 };
    const seq = this.starts.find(offset);
    const within = offset - this.starts.at(seq);
    const L = this.inputTokens;
    const B = this.samplesPerUpdate;
    const N = this.sampleIndex.length / 2 - 1;
    const flat = this.flatPrefix();
    const ranks = this.shuffleRanks();
    let tokens = this.lengths[seq] - within;
    const updates: number[] = [];
    for (const p of this.documentPositions().positions(seq)) {
      const f = flat.at(p) + within;
      const j = Math.floor(f / L);
      tokens = Math.min(tokens, (j + 1) * L - f);
      if (j >= N) continue;
      this.checkSampleStart(j, flat);
      for (const q of ranks.positions(j)) {
        const u = Math.floor(q / B);
        if (u < this.numUpdates) updates.push(u);
      }
    }
    updates.sort((a, b) => a - b);
    return { updates: updates.filter((u, i) => i === 0 || u !== updates[i - 1]), tokens };
  }

  /** Sample j must start at token j·L of the concatenated documents (helpers.cpp); a cache that says otherwise does not belong to this `.idx`. */
  private checkSampleStart(j: number, flat: SparsePrefix): void {
    // Matches of a count come in stream order: the same sample is asked about many times in a row.
    if (j === this.lastCheckedSample) return;
    const at = flat.at(this.sampleIndex.get(2 * j)) + this.sampleIndex.get(2 * j + 1);
    if (at !== j * this.inputTokens) {
      throw new DataError(
        `${this.o.files.sampleIndex}: sample ${fmt(j)} starts at token ${fmt(at)} of the concatenated documents; expected ${fmt(j * this.inputTokens)} (sequence_length ${this.inputTokens}): the index files do not belong to this .idx or this sequence length`,
        this.o.files.sampleIndex,
      );
    }
    this.lastCheckedSample = j;
  }

  close(): void {
    this.documentIndex.close();
    this.sampleIndex.close();
    this.shuffleIndex.close();
  }
}
