/**
 * Opens the training order a run description names ({@link RunDescription}) over a dataset's
 * stream: the one place that turns `run.json` into the {@link TrainingOrder} everything asks.
 */
import * as fs from 'fs';
import { DataError } from '../errors';
import { fmt } from '../units';
import { READ_LIMITS, readRegularTextFile } from '../safeRead';
import { Schedule } from '../schedule';
import { LlmcOrder } from './llmc';
import {
  MegatronCacheFiles,
  MegatronOrder,
  MegatronParams,
  buildMegatronIndices,
  compareMegatronIndices,
  findMegatronCache,
  parseMegatronDescription,
  splitRange,
  writeMegatronIndices,
} from './megatron';
import { OlmoIndexParams, OlmoOrder, buildOlmoGlobalIndices, olmoInstances, openOlmoGlobalIndices } from './olmo';
import { FileVector } from './vector';
import { OrderCache, StreamFile, TrainingOrder } from './order';
import { RunDescription } from './runFile';
import { SequentialOrder } from './sequential';

/** What an order needs of the dataset. */
export interface OrderInputs {
  /** The stream's files in stream order, with absolute paths. */
  files: (StreamFile & { path: string })[];
  /** The dataset's schedule (the sequential order). */
  schedule: Schedule;
  /** A Megatron `.bin`/`.idx` dataset: its `.idx` path and sequence lengths (the `.idx` order is the stream order). */
  megatron?: { idxFile: string; lengths: Int32Array };
  /** Where built indices and inverses are cached. */
  cache: OrderCache;
}

/** OLMo-core's and OLMo 1's code, for the description of a rebuild. */
const OLMO_RULES = {
  'olmo-core': "OLMo-core's rule (src/olmo_core/data/data_loader.py _build_global_indices, commit fa6c5014)",
  olmo: "OLMo 1's rule (olmo/data/iterable_dataset.py _build_global_indices, commit 59a53e3f)",
} as const;

/**
 * The run's training order; the card's sequential order when `run` is undefined or sequential.
 * @throws DataError with one line naming the run file (or the index file) and what is wrong.
 */
export async function openTrainingOrder(run: RunDescription | undefined, inputs: OrderInputs): Promise<TrainingOrder> {
  if (!run || run.order === 'sequential') return new SequentialOrder(inputs.schedule);
  switch (run.order) {
    case 'megatron':
      return openMegatron(run, inputs);
    case 'olmo':
      return openOlmo(run, inputs);
    default:
      return new LlmcOrder({
        files: inputs.files,
        B: run.B,
        T: run.T,
        processes: run.processes,
        gradAccumSteps: run.gradAccumSteps,
        shuffle: run.shuffle,
        steps: run.steps,
      });
  }
}

async function openMegatron(run: Extract<RunDescription, { order: 'megatron' }>, inputs: OrderInputs): Promise<TrainingOrder> {
  const m = inputs.megatron;
  if (!m)
    throw new DataError(`${run.file}: order "megatron" needs a Megatron .bin/.idx dataset (its .idx gives the sequence lengths)`, run.file);
  const B = run.globalBatchSize;
  const numSamples = run.trainSamples ?? (run.trainIters !== undefined ? run.trainIters * B : undefined);
  let files: Pick<MegatronCacheFiles, 'documentIndex' | 'sampleIndex' | 'shuffleIndex'>;
  let source: string;
  let L: number;
  let extra: boolean;
  if (run.cache !== undefined) {
    const found = findMegatronCache(run.cache, run.split, run.hash);
    const desc = parseMegatronDescription(
      await readRegularTextFile(found.description, "Megatron's index description", READ_LIMITS.sideFile),
      found.description,
    );
    L = desc.sequenceLength;
    if (run.sequenceLength !== undefined && run.sequenceLength !== L) {
      throw new DataError(`${run.file}: "sequence_length" is ${run.sequenceLength}, but ${found.description} says ${L}`, run.file);
    }
    extra = run.addExtraToken ?? desc.addExtraToken;
    files = found;
    source = `cache ${found.hash} in ${run.cache}`;
    if (run.seed !== undefined) {
      const fractions = run.splitFractions ?? desc.splitFractions;
      const built = buildMegatronIndices(m.lengths, {
        sequenceLength: L,
        seed: run.seed,
        numSamples: numSamples ?? desc.numSamples,
        addExtraToken: extra,
        split: fractions ? splitRange(fractions, m.lengths.length) : undefined,
      });
      const diff = compareMegatronIndices(built, found);
      if (diff) throw new DataError(`${run.file}: the cached indices are not Megatron's rebuild from seed ${run.seed}: ${diff}`, run.file);
      source += `, checked against the rebuild from seed ${run.seed}`;
    }
  } else {
    L = run.sequenceLength!;
    extra = run.addExtraToken ?? true;
    const params: MegatronParams = {
      sequenceLength: L,
      seed: run.seed!,
      numSamples,
      addExtraToken: extra,
      split: run.splitFractions ? splitRange(run.splitFractions, m.lengths.length) : undefined,
    };
    const key = inputs.cache.key([m.idxFile], { kind: 'megatron-indices', params });
    const paths = {
      documentIndex: inputs.cache.file(key, 'document_index.npy'),
      sampleIndex: inputs.cache.file(key, 'sample_index.npy'),
      shuffleIndex: inputs.cache.file(key, 'shuffle_index.npy'),
    };
    if (!Object.values(paths).every((p) => fs.existsSync(p)))
      writeMegatronIndices(buildMegatronIndices(m.lengths, params), paths, inputs.cache);
    files = paths;
    source = `rebuilt from seed ${run.seed} as gpt_dataset.py does (commit d98e8a64)`;
  }
  return new MegatronOrder({
    lengths: m.lengths,
    files,
    sequenceLength: L,
    addExtraToken: extra,
    globalBatchSize: B,
    trainIters: run.trainIters,
    cache: inputs.cache,
    source,
  });
}

function openOlmo(run: Extract<RunDescription, { order: 'olmo' }>, inputs: OrderInputs): TrainingOrder {
  let files: StreamFile[] = inputs.files;
  if (run.paths) {
    files = run.paths.map((name) => {
      const f = inputs.files.find((x) => x.name === name);
      if (!f)
        throw new DataError(
          `${run.file}: "paths" names ${JSON.stringify(name)}, which is not a file of the stream (${inputs.files.length} files: ${inputs.files
            .slice(0, 3)
            .map((x) => x.name)
            .join(', ')}…)`,
          run.file,
        );
      return f;
    });
  }
  const n = olmoInstances(files, run.sequenceLength).reduce((a, b) => a + b, 0);
  const params = {
    seed: run.seed!,
    epoch: run.epoch!,
    rule: run.rule,
    chunkSize: run.chunkSize,
    worldSize: run.worldSize,
    dropLast: run.dropLast,
  };
  const rebuild = run.seed !== undefined && run.epoch !== undefined;
  const common = { files, sequenceLength: run.sequenceLength, globalBatchSize: run.globalBatchSize, cache: inputs.cache };
  if (run.globalIndices === undefined) {
    // Rebuilt once and kept in the cache (raw uint32, as OLMo writes it): the next open, and each
    // search worker, reads it instead of shuffling again.
    const sources = inputs.files.map((f) => f.path);
    const kept = inputs.cache.file(
      inputs.cache.key(sources, { kind: 'olmo-indices', params, n, L: run.sequenceLength }),
      'global_indices.npy',
    );
    let indices: FileVector | Uint32Array;
    try {
      indices = FileVector.open(kept, 'u4');
      if (indices.length !== rebuiltLength(n, params)) {
        indices.close();
        throw new Error('stale');
      }
    } catch {
      const built = buildOlmoGlobalIndices(n, params);
      indices = built;
      try {
        inputs.cache.writeAtomic(kept, Buffer.from(built.buffer, built.byteOffset, built.byteLength));
      } catch {
        // Not writable: the rebuilt indices serve this run only.
      }
    }
    return new OlmoOrder({
      ...common,
      indices,
      source: `global indices rebuilt from seed ${run.seed} + epoch ${run.epoch} by ${OLMO_RULES[run.rule]}`,
      cacheSources: sources,
      cacheParams: params,
    });
  }
  const vector = openOlmoGlobalIndices(run.globalIndices);
  if (rebuild) {
    const built = buildOlmoGlobalIndices(n, params);
    const got = vector.readRange(0, Math.min(vector.length, built.length));
    const at = got.findIndex((v, i) => v !== built[i]);
    if (at >= 0 || vector.length !== built.length) {
      vector.close();
      throw new DataError(
        at >= 0
          ? `${run.globalIndices}: element ${fmt(at)} is ${got[at]}, but ${OLMO_RULES[run.rule]} from seed ${run.seed} + epoch ${run.epoch} gives ${built[at]}`
          : `${run.globalIndices}: ${fmt(vector.length)} indices, but ${OLMO_RULES[run.rule]} gives ${fmt(built.length)}`,
        run.globalIndices,
      );
    }
  }
  return new OlmoOrder({
    ...common,
    indices: vector,
    source: `${run.globalIndices}${rebuild ? `, checked against ${OLMO_RULES[run.rule]}` : ''}`,
    cacheSources: [run.globalIndices],
    cacheParams: {},
  });
}

/** Length of a rebuilt `global_indices` for n instances (as {@link buildOlmoGlobalIndices} makes it). */
function rebuiltLength(n: number, p: OlmoIndexParams): number {
  if (p.rule === 'olmo-core') return p.chunkSize && p.chunkSize > 1 ? Math.floor(n / p.chunkSize) * p.chunkSize : n;
  const ws = p.worldSize ?? 1;
  return (p.dropLast && n % ws !== 0 ? Math.ceil((n - ws) / ws) : Math.ceil(n / ws)) * ws;
}

/**
 * Plain data that opens the same order again in another thread (the search workers): the run
 * description, the stream's files, the schedule, Megatron's lengths and the cache folder.
 */
export interface OrderSpec {
  run: RunDescription;
  files: OrderInputs['files'];
  settings: Schedule['settings'];
  storedTokens: number;
  megatron?: OrderInputs['megatron'];
  cacheDir: string;
}

/** The {@link OrderSpec} of a run over inputs. */
export function orderSpec(run: RunDescription, inputs: OrderInputs): OrderSpec {
  return {
    run,
    files: inputs.files,
    settings: inputs.schedule.settings,
    storedTokens: inputs.schedule.storedTokens,
    megatron: inputs.megatron,
    cacheDir: inputs.cache.dir,
  };
}

/** Opens an {@link OrderSpec} (as {@link openTrainingOrder}). */
export function openOrderSpec(spec: OrderSpec): Promise<TrainingOrder> {
  return openTrainingOrder(spec.run, {
    files: spec.files,
    schedule: new Schedule(spec.settings, spec.storedTokens),
    megatron: spec.megatron,
    cache: new OrderCache(spec.cacheDir),
  });
}
