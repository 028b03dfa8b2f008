/**
 * One count task = one manifest entry: scan its tokens, add each match to its bucket, and check
 * that the shard file did not change while it was read (as verify does). Run by the search
 * worker (`src/core/workers/searchWorker.ts`) and, with `jobs: 0`, on the calling thread.
 */
import * as fs from 'fs';
import { DataError } from '../errors';
import { CompiledTerms, Dfa, TokenBytes, TokenTable } from './automaton';
import { RangeScanner, ScanOptions, TokenSource } from './scan';
import type { OrderSpec } from '../order/openOrder';
import { TrainingOrder, inputUpdates } from '../order/order';

/** Everything a counter needs besides the stream (plain data: posted to workers). */
export interface CountSetup {
  compiled: CompiledTerms;
  tokenBytes: TokenBytes;
  eos: number;
  word: boolean;
  /** Tokens per update. */
  G: number;
  /** Whole updates in the stream. */
  updates: number;
  /** Updates per bucket. */
  per: number;
  /**
   * The run's training order, when it is not the card's sequential one: a match then counts once
   * in each update that read its first token as a model input, and in the "not read" cell
   * (bucket index = number of buckets) when no update did.
   */
  order?: OrderSpec;
}

/** One shard to count. */
export interface CountTask {
  /** Manifest entry index. */
  index: number;
  path: string;
  startToken: number;
  numTokens: number;
}

/** Builds the scanner of a setup over a stream. */
export function makeScanner(src: TokenSource, setup: CountSetup): RangeScanner {
  const table = new TokenTable(new Dfa(setup.compiled), setup.tokenBytes, setup.eos);
  return new RangeScanner(src, table, setup.word);
}

/** The stat fields that say a file changed. */
function statOf(file: string): fs.Stats {
  try {
    return fs.statSync(file);
  } catch (err) {
    throw new DataError(`${file}: cannot open: ${(err as Error).message}`, file);
  }
}

/**
 * Counts one shard.
 * @param order the opened {@link CountSetup.order}, when the setup has one.
 * @returns flat `[bucket·T + term, count, …]` for the non-zero cells (T = number of terms).
 * @throws DataError for unreadable shards or a shard that changed while it was read.
 */
export async function countTask(
  scanner: RangeScanner,
  setup: CountSetup,
  task: CountTask,
  opts: ScanOptions = {},
  order?: TrainingOrder,
): Promise<number[]> {
  const nt = setup.compiled.terms.length;
  const { G, updates, per } = setup;
  const cells = new Map<number, number>();
  const notRead = Math.ceil(updates / per);
  const st0 = statOf(task.path);
  await scanner.scanRange(
    task.startToken,
    task.startToken + task.numTokens,
    order
      ? (term, start) => {
          const us = inputUpdates(order, start);
          if (us.length === 0) {
            const key = notRead * nt + term;
            cells.set(key, (cells.get(key) ?? 0) + 1);
          }
          for (const u of us) {
            const key = Math.floor(u / per) * nt + term;
            cells.set(key, (cells.get(key) ?? 0) + 1);
          }
        }
      : (term, start) => {
          const u = Math.floor(start / G);
          if (u >= updates) return;
          const key = Math.floor(u / per) * nt + term;
          cells.set(key, (cells.get(key) ?? 0) + 1);
        },
    opts,
  );
  let st1: fs.Stats;
  try {
    st1 = fs.statSync(task.path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new DataError(`${task.path} was deleted while it was being searched`, task.path);
    throw new DataError(`cannot stat ${task.path} after reading it: ${(err as Error).message}`, task.path);
  }
  if (st1.ino !== st0.ino || st1.dev !== st0.dev)
    throw new DataError(`${task.path} was replaced by another file while it was being searched`, task.path);
  if (st1.size !== st0.size) {
    throw new DataError(
      `${task.path} ${st1.size > st0.size ? 'grew' : 'shrank'} from ${st0.size} to ${st1.size} bytes while it was being searched`,
      task.path,
    );
  }
  if (st1.mtimeMs !== st0.mtimeMs) throw new DataError(`${task.path} was modified while it was being searched (mtime changed)`, task.path);
  const out: number[] = [];
  for (const [k, v] of cells) out.push(k, v);
  return out;
}
