/**
 * `countTerms`: occurrences per bucket of updates, one shard per task on a pool of worker
 * threads (merging parts of disjoint shard ranges: `./merge.ts`). Match rules in `./index.ts`.
 */
import type { Worker } from 'worker_threads';
import type { Dataset } from '../dataset';
import { CancelledError, DataError } from '../errors';
import { fmt } from '../units';
import type { LoadedTokenizer } from '../tokenizer';
import { defaultJobs, resolveWorkerScript, startPoolWorker, stopPoolWorkers } from '../shardPool';
import type { SearchWorkerData, SearchWorkerReply, SearchWorkerTask } from '../workers/searchWorker';
import { compileTerms, idsOnlyTokenBytes, tokenBytesOf } from './automaton';
import { CountSetup, CountTask, countTask, makeScanner } from './task';
import { parseTerms } from './terms';
import { datasetFingerprint } from './merge';
import { openOrderSpec } from '../order/openOrder';
import type { TrainingOrder } from '../order/order';
import {
  CountBucket,
  CountOptions,
  CountProgress,
  CountResult,
  DEFAULT_BUCKETS,
  SEARCH_WORKER_FILE,
  SearchInputError,
  SearchOptions,
} from './types';

/** Updates per bucket so that `updates` make about {@link DEFAULT_BUCKETS} buckets (≥ 1). */
export function defaultPer(updates: number): number {
  return Math.max(1, Math.ceil(updates / DEFAULT_BUCKETS));
}

/**
 * Finds `searchWorker.js`: `explicit` when given, else next to this bundle
 * (`<dir>/workers/searchWorker.js`), else `dist/workers/` of the nearest folder up with a
 * `package.json` (the rule of `resolveWorkerScript`, shared with verify).
 * @throws Error listing the places tried.
 */
export function resolveSearchWorker(explicit?: string, from: string = __dirname): string {
  return resolveWorkerScript(SEARCH_WORKER_FILE, 'the search worker', explicit, from);
}

/** An all-zero result: buckets of `per` updates over `updates` updates. */
export function emptyResult(
  terms: string[],
  options: SearchOptions,
  per: number,
  updates: number,
  shards?: [number, number],
  dataset?: CountResult['dataset'],
): CountResult {
  const buckets: CountBucket[] = [];
  for (let first = 0; first < updates; first += per) {
    buckets.push({ first_update: first, last_update: Math.min(updates, first + per) - 1, tokens: 0, counts: terms.map(() => 0) });
  }
  return {
    terms: [...terms],
    options: { word: options.word, ignore_case: options.ignoreCase, ids: options.ids },
    per,
    updates,
    buckets,
    totals: terms.map(() => 0),
    ...(shards ? { shards: [shards[0], shards[1]] as [number, number] } : {}),
    ...(dataset ? { dataset: { ...dataset } } : {}),
  };
}

function cloneResult(r: CountResult): CountResult {
  return {
    ...r,
    terms: [...r.terms],
    options: { ...r.options },
    buckets: r.buckets.map((b) => ({ ...b, counts: [...b.counts] })),
    totals: [...r.totals],
    ...(r.shards ? { shards: [r.shards[0], r.shards[1]] as [number, number] } : {}),
    ...(r.dataset ? { dataset: { ...r.dataset } } : {}),
    ...(r.not_read ? { not_read: [...r.not_read] } : {}),
  };
}

/** Adds the training tokens of global range `[s0, s1)` to the buckets they fall in. */
function addTokens(res: CountResult, G: number, s0: number, s1: number): void {
  const end = Math.min(s1, res.updates * G);
  const span = res.per * G;
  for (let p = s0; p < end;) {
    const bi = Math.floor(p / span);
    const stop = Math.min(end, (bi + 1) * span);
    res.buckets[bi].tokens += stop - p;
    p = stop;
  }
}

function addCells(res: CountResult, cells: number[]): void {
  const nt = res.terms.length;
  for (let i = 0; i < cells.length; i += 2) {
    const bi = Math.floor(cells[i] / nt),
      t = cells[i] % nt;
    if (bi === res.buckets.length) {
      // The "not read" cell of a count through a training order.
      res.not_read![t] += cells[i + 1];
      continue;
    }
    res.buckets[bi].counts[t] += cells[i + 1];
    res.totals[t] += cells[i + 1];
  }
}

/**
 * Counts the occurrences of `terms` per bucket of `per` updates over the whole stream or the
 * shards `[A, B)`, in worker threads (`jobs: 0` counts on the calling thread: tests, tools).
 * An occurrence counts in the bucket of its place's update; occurrences in the look-ahead
 * token(s) are not counted. Buckets always cover all updates of the stream; with `shards`,
 * a bucket's `tokens` are those of its updates inside the scanned shards, so parts add up.
 * @param tok the tokenizer; undefined is allowed for runs of token ids (`options.ids`), which need no bytes.
 * @throws SearchInputError for bad terms/`per`/`shards` (or text terms without a tokenizer); DataError for a missing/unreadable
 *   shard, a gap in the manifest, or a shard that changed while it was read; CancelledError
 *   when `signal` fires (nothing partial is returned).
 */
export async function countTerms(
  ds: Dataset,
  tok: LoadedTokenizer | undefined,
  terms: string[],
  options: SearchOptions,
  opts: CountOptions = {},
): Promise<CountResult> {
  terms = parseTerms(terms, options);
  const order = opts.order ? await openOrderSpec(opts.order) : undefined;
  try {
    if (order) {
      if (opts.shards)
        throw new SearchInputError(
          'a count through a training order covers the whole stream (no shard ranges: their parts cannot be merged by update)',
        );
      // The inverses are built here, once, before the workers load them from the cache.
      order.reads(0);
    }
    return await countWith(ds, tok, terms, options, opts, order);
  } finally {
    order?.close();
  }
}

async function countWith(
  ds: Dataset,
  tok: LoadedTokenizer | undefined,
  terms: string[],
  options: SearchOptions,
  opts: CountOptions,
  order: TrainingOrder | undefined,
): Promise<CountResult> {
  const updates = order ? order.numUpdates : ds.schedule.numUpdates;
  const G = ds.schedule.G;
  const per = opts.per ?? defaultPer(updates);
  if (!Number.isSafeInteger(per) || per < 1) throw new SearchInputError(`--per ${per}: expected a whole number of updates ≥ 1`);
  const n = ds.shards.length;
  const [A, B] = opts.shards ?? [0, n];
  if (!Number.isInteger(A) || !Number.isInteger(B) || A < 0 || B > n || A >= B) {
    throw new SearchInputError(`--shards ${A}:${B}: expected A:B with 0 ≤ A < B ≤ ${fmt(n)} (the manifest's entries)`);
  }
  const signal = opts.signal;
  if (signal?.aborted) throw new CancelledError();
  // A part (`--shards`) names its dataset, so `merge` can check that the parts belong together.
  const result = opts.shards
    ? emptyResult(terms, options, per, updates, [A, B], { fingerprint: datasetFingerprint(ds), shards: n })
    : emptyResult(terms, options, per, updates);
  const compiled = compileTerms(terms, options);
  if (!tok && compiled.mode !== 'ids')
    throw new SearchInputError(
      'text terms need a tokenizer (tokenizer.json next to the data, or --tokenizer FILE); runs of token ids (--ids) do not',
    );
  if (order) {
    result.order = order.kind;
    result.not_read = terms.map(() => 0);
    for (const b of result.buckets) b.tokens = (b.last_update - b.first_update + 1) * order.samplesPerUpdate * order.inputTokens;
  }
  const setup: CountSetup = {
    compiled,
    tokenBytes: tok ? tokenBytesOf(tok) : idsOnlyTokenBytes(compiled),
    eos: ds.settings.eosTokenId,
    word: options.word,
    G,
    updates,
    per,
    order: opts.order,
  };
  const tasks: CountTask[] = ds.shards.slice(A, B).map((e) => ({
    index: e.index,
    path: e.path,
    startToken: e.startToken,
    numTokens: e.numTokens,
    identity: ds.fileStates[e.index]?.identity,
  }));
  const tokensTotal = tasks.reduce((s, t) => s + t.numTokens, 0);
  const t0 = Date.now();
  let tokensFinished = 0,
    shardsDone = 0,
    lastReport = 0;
  const inFlight = new Map<number, number>();
  const progress = (force: boolean) => {
    if (!opts.onProgress) return;
    const now = Date.now();
    if (!force && now - lastReport < 100) return;
    lastReport = now;
    let tokensDone = tokensFinished;
    for (const v of inFlight.values()) tokensDone += v;
    const elapsed = (now - t0) / 1000;
    const rate = elapsed > 0 ? tokensDone / elapsed : 0;
    const p: CountProgress = {
      shardsDone,
      shardsTotal: tasks.length,
      tokensDone,
      tokensTotal,
      bytesPerSecond: rate * 4,
      etaMs: rate > 0 && tokensDone > 0 ? ((tokensTotal - tokensDone) / rate) * 1000 : null,
      partial: cloneResult(result),
    };
    opts.onProgress(p);
  };
  // Counts arrive per chunk (the first curve point within a chunk's time of the start), the rest when the shard is done.
  const chunkDone = (t: CountTask, tokens: number, cells: number[]) => {
    const done = inFlight.get(t.index) ?? 0;
    addCells(result, cells);
    if (!order) addTokens(result, G, t.startToken + done, t.startToken + done + tokens);
    inFlight.set(t.index, done + tokens);
    progress(false);
  };
  const finishTask = (t: CountTask, cells: number[]) => {
    addCells(result, cells);
    if (!order) addTokens(result, G, t.startToken + (inFlight.get(t.index) ?? 0), t.startToken + t.numTokens);
    inFlight.delete(t.index);
    tokensFinished += t.numTokens;
    shardsDone++;
    progress(shardsDone === tasks.length);
  };

  const jobs = Math.min(opts.jobs ?? defaultJobs(), tasks.length, 64);
  if (jobs <= 0) {
    const scanner = makeScanner(ds.stream, setup);
    for (const t of tasks) {
      if (signal?.aborted) throw new CancelledError();
      const cells = await countTask(
        scanner,
        setup,
        t,
        {
          signal,
          chunkTokens: opts.chunkTokens,
          onChunk: (k, cells) => chunkDone(t, k, cells),
        },
        order,
      );
      finishTask(t, cells);
    }
    return result;
  }

  const workerFile = resolveSearchWorker(opts.workerFile);
  const data: SearchWorkerData = { setup, segments: ds.stream.segments.map((s) => ({ ...s })), chunkTokens: opts.chunkTokens };
  const workers: Worker[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      let next = 0,
        done = 0,
        failed = false;
      const fail = (err: Error) => {
        if (!failed) {
          failed = true;
          reject(err);
        }
      };
      const onAbort = () => fail(new CancelledError());
      signal?.addEventListener('abort', onAbort, { once: true });
      const give = (w: Worker) => {
        if (failed || next >= tasks.length) return;
        const msg: SearchWorkerTask = { type: 'task', id: next, task: tasks[next] };
        next++;
        w.postMessage(msg);
      };
      const onReply = (w: Worker, m: SearchWorkerReply) => {
        if (failed) return;
        const t = tasks[m.id];
        if (m.type === 'chunk') {
          chunkDone(t, m.tokens, m.cells);
          return;
        }
        if (m.type === 'error') {
          fail(new DataError(m.message, m.file));
          return;
        }
        finishTask(t, m.cells);
        if (++done === tasks.length) {
          signal?.removeEventListener('abort', onAbort);
          resolve();
          return;
        }
        give(w);
      };
      for (let i = 0; i < jobs; i++) {
        const w: Worker = startPoolWorker<SearchWorkerReply>(workerFile, data, {
          onMessage: (m) => onReply(w, m),
          onError: (message) => fail(new Error(`search worker failed: ${message}`)),
          onExit: (code) => {
            if (done < tasks.length) fail(new Error(`search worker exited (code ${code}) before the scan finished`));
          },
        });
        workers.push(w);
        give(w);
      }
    });
  } finally {
    await stopPoolWorkers(workers);
  }
  return result;
}
