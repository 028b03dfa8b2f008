/**
 * The run description `run.json`: which trainer's order a run used and its parameters. Found in
 * the dataset folder, or named by `--run FILE` (CLI) or the setting `tokenShards.run` (VS Code,
 * `src/orderService.ts`). Without one, the dataset card's sequential order.
 *
 * ```json
 * {"order": "sequential"}
 * {"order": "megatron", "cache": "ckpt/cache/GPTDataset_indices", "global_batch_size": 512, "train_iters": 50000}
 * {"order": "megatron", "sequence_length": 2048, "seed": 1234, "train_iters": 50000, "global_batch_size": 512}
 * {"order": "olmo", "global_indices": "run/global_indices.npy", "sequence_length": 4096, "global_batch_size": 512}
 * {"order": "olmo", "seed": 6198, "epoch": 0, "rule": "olmo-core", "sequence_length": 4096, "global_batch_size": 512}
 * {"order": "llm.c", "B": 64, "T": 1024, "processes": 8, "grad_accum_steps": 1}
 * ```
 *
 * Fields per order (paths are relative to the folder of `run.json`):
 * - megatron: `cache` (Megatron's `path_to_cache` folder), `split` (default `train`), `hash` (when
 *   the folder caches several datasets), `global_batch_size` (samples per step, required),
 *   `train_iters`; to rebuild or check the indices: `sequence_length`, `seed` (`random_seed`),
 *   `train_samples` (default `train_iters × global_batch_size`), `add_extra_token_to_sequence`
 *   (default true), `split_fractions` ([begin, end] of `split_matrix`, default [0, 1]).
 * - olmo: `global_indices` or `seed` + `epoch` (+ `rule` `olmo-core` | `olmo`, `chunk_size`,
 *   `world_size`, `drop_last`), `sequence_length` and `global_batch_size` (instances per batch;
 *   OLMo-core's token batch size divided by the sequence length), `paths` (the token files in the
 *   config's order, relative to the dataset folder; default the stream's file order).
 * - llm.c: `B`, `T`, `processes`, `grad_accum_steps` (default 1), `shuffle` (default true), `steps`.
 */
import * as fs from 'fs';
import * as path from 'path';
import { DataError } from '../errors';
import { parseJson } from '../safeJson';
import { READ_LIMITS, readRegularTextFile } from '../safeRead';
import { OlmoRule } from './olmo';

/** The file name looked for in a dataset folder. */
export const RUN_FILE_NAME = 'run.json';

/** A parsed `run.json` (paths resolved to absolute ones). */
export type RunDescription =
  | { order: 'sequential'; file: string }
  | {
      order: 'megatron';
      file: string;
      cache?: string;
      split: string;
      hash?: string;
      globalBatchSize: number;
      trainIters?: number;
      sequenceLength?: number;
      seed?: number;
      trainSamples?: number;
      addExtraToken?: boolean;
      splitFractions?: [number, number];
    }
  | {
      order: 'olmo';
      file: string;
      globalIndices?: string;
      seed?: number;
      epoch?: number;
      rule: OlmoRule;
      chunkSize?: number;
      worldSize?: number;
      dropLast?: boolean;
      sequenceLength: number;
      globalBatchSize: number;
      paths?: string[];
    }
  | { order: 'llm.c'; file: string; B: number; T: number; processes: number; gradAccumSteps: number; shuffle: boolean; steps?: number };

const FIELDS: Record<string, string[]> = {
  sequential: [],
  megatron: [
    'cache',
    'split',
    'hash',
    'global_batch_size',
    'train_iters',
    'sequence_length',
    'seed',
    'train_samples',
    'add_extra_token_to_sequence',
    'split_fractions',
  ],
  olmo: [
    'global_indices',
    'seed',
    'epoch',
    'rule',
    'chunk_size',
    'world_size',
    'drop_last',
    'sequence_length',
    'global_batch_size',
    'paths',
  ],
  'llm.c': ['B', 'T', 'processes', 'grad_accum_steps', 'shuffle', 'steps'],
};

/**
 * Parses and validates a run description.
 * @param file its path (relative paths inside resolve against its folder; messages name it).
 * @throws DataError with one line naming the file and the field: not JSON, not an object, an
 *   unknown order or field, a missing or mistyped value, a combination that names no order data.
 */
export function parseRunDescription(text: string, file: string): RunDescription {
  const r = parseJson(text);
  if (!r.ok) throw new DataError(`${file}: not JSON (${r.error})`, file);
  const o = r.value as Record<string, unknown>;
  if (typeof o !== 'object' || o === null || Array.isArray(o))
    throw new DataError(`${file}: expected a JSON object like {"order": "megatron", …}`, file);
  const order = o.order;
  if (typeof order !== 'string' || !(order in FIELDS)) {
    throw new DataError(
      `${file}: "order" is ${JSON.stringify(order) ?? 'missing'}; expected one of ${Object.keys(FIELDS)
        .map((k) => `"${k}"`)
        .join(', ')}`,
      file,
    );
  }
  for (const k of Object.keys(o)) {
    if (k !== 'order' && !FIELDS[order].includes(k)) {
      throw new DataError(
        `${file}: unknown field "${k}" for order "${order}" (expected ${FIELDS[order].length ? FIELDS[order].map((f) => `"${f}"`).join(', ') : 'none'})`,
        file,
      );
    }
  }
  const dir = path.dirname(file);
  const bad = (k: string, want: string): DataError => new DataError(`${file}: "${k}" is ${JSON.stringify(o[k])}; expected ${want}`, file);
  const int = (k: string, min: number): number | undefined => {
    const v = o[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min)
      throw bad(k, min === 0 ? 'a non-negative integer' : 'a positive integer');
    return v;
  };
  const need = (k: string, min: number, why: string): number => {
    const v = int(k, min);
    if (v === undefined) throw new DataError(`${file}: "${k}" is missing; ${why}`, file);
    return v;
  };
  const bool = (k: string): boolean | undefined => {
    const v = o[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') throw bad(k, 'true or false');
    return v;
  };
  const str = (k: string): string | undefined => {
    const v = o[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '') throw bad(k, 'a non-empty string');
    return v;
  };
  const pathOf = (k: string): string | undefined => {
    const v = str(k);
    return v === undefined ? undefined : path.resolve(dir, v);
  };
  switch (order) {
    case 'sequential':
      return { order, file };
    case 'megatron': {
      let splitFractions: [number, number] | undefined;
      if (o.split_fractions !== undefined) {
        const s = o.split_fractions;
        if (
          !Array.isArray(s) ||
          s.length !== 2 ||
          !s.every((v) => typeof v === 'number' && v >= 0 && v <= 1) ||
          !((s[0] as number) < (s[1] as number))
        ) {
          throw bad('split_fractions', "[begin, end] with 0 ≤ begin < end ≤ 1 (an entry of Megatron's split_matrix)");
        }
        splitFractions = [s[0] as number, s[1] as number];
      }
      const d = {
        order,
        file,
        cache: pathOf('cache'),
        split: str('split') ?? 'train',
        hash: str('hash'),
        globalBatchSize: need('global_batch_size', 1, 'Megatron steps read global_batch_size samples'),
        trainIters: int('train_iters', 0),
        sequenceLength: int('sequence_length', 2),
        seed: int('seed', 0),
        trainSamples: int('train_samples', 1),
        addExtraToken: bool('add_extra_token_to_sequence'),
        splitFractions,
      } as const;
      if (!['train', 'valid', 'test'].includes(d.split)) throw bad('split', '"train", "valid" or "test"');
      if (d.cache === undefined) {
        if (d.sequenceLength === undefined || d.seed === undefined || (d.trainSamples === undefined && d.trainIters === undefined)) {
          throw new DataError(
            `${file}: without "cache", Megatron's indices are rebuilt and need "sequence_length", "seed" and "train_iters" or "train_samples"`,
            file,
          );
        }
      }
      return d;
    }
    case 'olmo': {
      const rule = str('rule') ?? 'olmo-core';
      if (rule !== 'olmo-core' && rule !== 'olmo')
        throw bad('rule', '"olmo-core" (OLMo-core\'s data_loader.py) or "olmo" (OLMo 1\'s iterable_dataset.py)');
      let paths: string[] | undefined;
      if (o.paths !== undefined) {
        if (!Array.isArray(o.paths) || o.paths.length === 0 || !o.paths.every((p) => typeof p === 'string' && p !== ''))
          throw bad('paths', 'a list of token file names');
        paths = o.paths as string[];
      }
      const d = {
        order,
        file,
        globalIndices: pathOf('global_indices'),
        seed: int('seed', 0),
        epoch: int('epoch', 0),
        rule,
        chunkSize: int('chunk_size', 1),
        worldSize: int('world_size', 1),
        dropLast: bool('drop_last'),
        sequenceLength: need('sequence_length', 1, 'OLMo instances are sequence_length tokens'),
        globalBatchSize: need('global_batch_size', 1, 'OLMo batches are global_batch_size instances'),
        paths,
      } as const;
      if (d.globalIndices === undefined && (d.seed === undefined || d.epoch === undefined)) {
        throw new DataError(
          `${file}: OLMo's order needs "global_indices" (the global_indices.npy file) or "seed" and "epoch" to rebuild it`,
          file,
        );
      }
      return d;
    }
    default:
      return {
        order: 'llm.c',
        file,
        B: need('B', 1, 'llm.c reads B rows per process'),
        T: need('T', 1, 'llm.c reads rows of T tokens'),
        processes: need('processes', 1, 'the number of data-parallel processes decides where each reads'),
        gradAccumSteps: int('grad_accum_steps', 1) ?? 1,
        shuffle: bool('shuffle') ?? true,
        steps: int('steps', 0),
      };
  }
}

/**
 * Reads and parses a run description file (a regular file of at most 16 MiB: `safeRead.ts`, so a
 * FIFO or device at the path cannot hang the read).
 * @throws DataError naming the file when it cannot be read, or as {@link parseRunDescription}.
 */
export async function readRunDescription(file: string): Promise<RunDescription> {
  let text: string;
  try {
    text = await readRegularTextFile(file, 'a run description (run.json)', READ_LIMITS.sideFile);
  } catch (err) {
    if (err instanceof DataError) throw err;
    throw new DataError(
      `${file}: cannot read the run description (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      file,
    );
  }
  return parseRunDescription(text, file);
}

/** The `run.json` of a dataset folder, when it has one. */
export function findRunFile(datasetDir: string): string | undefined {
  const f = path.join(datasetDir, RUN_FILE_NAME);
  return fs.existsSync(f) ? f : undefined;
}
