/**
 * One count task = one manifest entry: scan its tokens, add each match to its bucket, and check
 * that the shard file did not change while it was read (as verify does). Run by the search
 * worker (`src/core/workers/searchWorker.ts`) and, with `jobs: 0`, on the calling thread.
 */
import * as fs from 'fs';
import { DataError } from '../errors';
import { FileIdentity, describeIdentityChange, identityOfStats } from '../fileIdentity';
import { CompiledTerms, Dfa, TokenBytes, TokenTable } from './automaton';
import { CountSink, RangeScanner, ScanOptions, TokenSource } from './scan';
import type { OrderSpec } from '../order/openOrder';
import { InputSpan, TrainingOrder, inputSpan } from '../order/order';

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
  /**
   * The file's identity when the dataset was opened (`Dataset.fileStates`): a file that grew,
   * shrank or was replaced since (before this task opened it) is refused, not counted.
   */
  identity?: FileIdentity;
}

/** Builds the scanner of a setup over a stream. */
export function makeScanner(src: TokenSource, setup: CountSetup): RangeScanner {
  const table = new TokenTable(new Dfa(setup.compiled, setup.word), setup.tokenBytes, setup.eos, undefined, setup.word);
  return new RangeScanner(src, table, setup.word);
}

/** The identity of a shard file now. @throws DataError naming the file when it cannot be stat'ed. */
function identityNow(file: string, when: string): FileIdentity {
  try {
    return identityOfStats(fs.statSync(file, { bigint: true }));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new DataError(`${file} was deleted ${when}`, file);
    throw new DataError(`${file}: cannot stat ${when}: ${(err as Error).message}`, file);
  }
}

/** Options of {@link countTask}: those of a scan, with the counts of each chunk. */
export interface CountTaskOptions extends Omit<ScanOptions, 'onChunk'> {
  /**
   * Called after each chunk with the tokens of the shard it covered and the non-zero cells
   * counted since the previous call (flat `[bucket·T + term, count, …]`; those cells are not in
   * the returned ones).
   */
  onChunk?: (tokens: number, cells: number[]) => void;
}

/** Most cells counted in a dense array (else in a map): 4 Mi cells = 32 MiB. */
const DENSE_CELLS = 1 << 22;

/** Match counts per cell (`bucket·T + term`): a dense array when the cells are few enough (one increment per match), else a map. */
class Cells {
  private readonly dense?: Float64Array;
  /** Dense mode: the cells counted since the last {@link drain}. */
  private readonly touched: number[] = [];
  private readonly map = new Map<number, number>();

  constructor(cells: number) {
    if (cells <= DENSE_CELLS) this.dense = new Float64Array(cells);
  }

  add(key: number, n = 1): void {
    const d = this.dense;
    if (!d) this.map.set(key, (this.map.get(key) ?? 0) + n);
    else {
      if (d[key] === 0) this.touched.push(key);
      d[key] += n;
    }
  }

  /** The counts as flat `[key, count, …]`, emptying them. */
  drain(): number[] {
    const out: number[] = [];
    const d = this.dense;
    if (d) {
      for (const k of this.touched) {
        out.push(k, d[k]);
        d[k] = 0;
      }
      this.touched.length = 0;
    } else {
      for (const [k, v] of this.map) out.push(k, v);
      this.map.clear();
    }
    return out;
  }
}

/**
 * Counts one shard.
 * @param order the opened {@link CountSetup.order}, when the setup has one.
 * @returns flat `[bucket·T + term, count, …]` for the non-zero cells not yet given to `opts.onChunk` (T = number of terms).
 * @throws DataError for unreadable shards, a shard that changed since the dataset was opened
 *   (`task.identity`) or while it was read (its identity before and after: `fileIdentity.ts`).
 */
export async function countTask(
  scanner: RangeScanner,
  setup: CountSetup,
  task: CountTask,
  opts: CountTaskOptions = {},
  order?: TrainingOrder,
): Promise<number[]> {
  const nt = setup.compiled.terms.length;
  const { G, updates, per } = setup;
  const notRead = Math.ceil(updates / per);
  const cells = new Cells((notRead + 1) * nt);
  const st0 = identityNow(task.path, 'before it was searched');
  // Grown, shrunk or replaced since the dataset was opened: the manifest checks made then do not
  // hold. (A touch alone is not refused: the read is compared before and after below.)
  const o = task.identity;
  if (o && (o.size !== st0.size || o.ino !== st0.ino || o.dev !== st0.dev))
    throw new DataError(
      `${task.path} ${describeIdentityChange(o, st0)} since the dataset was opened; open it again to search the new contents`,
      task.path,
    );
  // The kernel counts most matches itself, per piece of tokens: a bucket of updates in the card's
  // order; through a training order, a run of tokens read by the same updates (asked once per
  // run, `TrainingOrder.inputSpan`). The other matches come one by one, in stream order.
  const spanCells = (span: InputSpan) => (span.updates.length === 0 ? [notRead * nt] : span.updates.map((u) => Math.floor(u / per) * nt));
  let pieceCells: number[] = [];
  let counts: CountSink | undefined;
  if (order?.inputSpan) {
    // (an order without inputSpan would be asked once per token: its matches come one by one)
    counts = {
      limit: Infinity,
      piece: (g) => {
        const span = inputSpan(order, g);
        pieceCells = spanCells(span);
        return g + span.tokens;
      },
      add: (term, n) => {
        for (const c of pieceCells) cells.add(c + term, n);
      },
    };
  } else if (!order) {
    const span = G * per;
    let bucket = 0;
    counts = {
      limit: updates * G,
      piece: (g) => {
        bucket = Math.floor(g / span);
        return (bucket + 1) * span;
      },
      add: (term, n) => cells.add(bucket * nt + term, n),
    };
  }
  let matchStart = 0,
    matchEnd = 0,
    matchCells: number[] = [];
  await scanner.scanRange(
    task.startToken,
    task.startToken + task.numTokens,
    order
      ? (term, start) => {
          if (start < matchStart || start >= matchEnd) {
            const span = inputSpan(order, start);
            matchStart = start;
            matchEnd = start + span.tokens;
            matchCells = spanCells(span);
          }
          for (const c of matchCells) cells.add(c + term);
        }
      : (term, start) => {
          const u = Math.floor(start / G);
          if (u >= updates) return;
          cells.add(Math.floor(u / per) * nt + term);
        },
    { ...opts, onChunk: opts.onChunk && ((tokens) => opts.onChunk!(tokens, cells.drain())), counts },
  );
  const change = describeIdentityChange(st0, identityNow(task.path, 'while it was being searched'));
  if (change) throw new DataError(`${task.path} ${change} while it was being searched`, task.path);
  return cells.drain();
}
