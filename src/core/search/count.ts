/**
 * `countTerms`: occurrences per bucket of updates, one shard per task on a pool of worker
 * threads; `mergeCounts`: adds the results of disjoint shard ranges. Match rules in `./index.ts`.
 */
import type { Worker } from 'worker_threads';
import type { Dataset } from '../dataset';
import { CancelledError, DataError, fmt } from '../errors';
import type { LoadedTokenizer } from '../tokenizer';
import { defaultJobs, resolveWorkerScript, startPoolWorker, stopPoolWorkers } from '../shardPool';
import type { SearchWorkerData, SearchWorkerReply, SearchWorkerTask } from '../workers/searchWorker';
import { compileTerms, tokenBytesOf } from './automaton';
import { CountSetup, CountTask, countTask, makeScanner } from './task';
import { parseTerms } from './terms';
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
export function emptyResult(terms: string[], options: SearchOptions, per: number, updates: number, shards?: [number, number]): CountResult {
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
 * @throws SearchInputError for bad terms/`per`/`shards`; DataError for a missing/unreadable
 *   shard, a gap in the manifest, or a shard that changed while it was read; CancelledError
 *   when `signal` fires (nothing partial is returned).
 */
export async function countTerms(
  ds: Dataset,
  tok: LoadedTokenizer,
  terms: string[],
  options: SearchOptions,
  opts: CountOptions = {},
): Promise<CountResult> {
  terms = parseTerms(terms, options);
  const order = opts.order ? openOrderSpec(opts.order) : undefined;
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
  tok: LoadedTokenizer,
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
  const result = emptyResult(terms, options, per, updates, opts.shards ? [A, B] : undefined);
  if (order) {
    result.order = order.kind;
    result.not_read = terms.map(() => 0);
    for (const b of result.buckets) b.tokens = (b.last_update - b.first_update + 1) * order.samplesPerUpdate * order.inputTokens;
  }
  const setup: CountSetup = {
    compiled: compileTerms(terms, options),
    tokenBytes: tokenBytesOf(tok),
    eos: ds.settings.eosTokenId,
    word: options.word,
    G,
    updates,
    per,
    order: opts.order,
  };
  const tasks: CountTask[] = ds.shards
    .slice(A, B)
    .map((e) => ({ index: e.index, path: e.path, startToken: e.startToken, numTokens: e.numTokens }));
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
  const finishTask = (t: CountTask, cells: number[]) => {
    addCells(result, cells);
    if (!order) addTokens(result, G, t.startToken, t.startToken + t.numTokens);
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
          onChunk: (k) => {
            inFlight.set(t.index, (inFlight.get(t.index) ?? 0) + k);
            progress(false);
          },
        },
        order,
      );
      finishTask(t, cells);
    }
    return result;
  }

  const workerFile = resolveSearchWorker(opts.workerFile);
  const data: SearchWorkerData = { setup, segments: ds.stream.segments.map((s) => ({ ...s })) };
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
          inFlight.set(t.index, (inFlight.get(t.index) ?? 0) + m.tokens);
          progress(false);
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

function isCountResult(x: unknown): x is CountResult {
  const r = x as CountResult;
  return (
    !!r &&
    typeof r === 'object' &&
    Array.isArray(r.terms) &&
    typeof r.per === 'number' &&
    typeof r.updates === 'number' &&
    Array.isArray(r.buckets) &&
    Array.isArray(r.totals) &&
    !!r.options &&
    typeof r.options === 'object'
  );
}

/**
 * Adds partial results of disjoint shard ranges (`count --shards`) into one: counts, totals and
 * bucket tokens are summed. The parts' ranges must tile one contiguous range `[A, B)`, which the
 * result names in `shards` (compare with a whole-stream count ignoring `shards`).
 * @throws SearchInputError when parts overlap or leave a gap, differ in terms, options, per or
 *   updates, or a part is not a count result (the message names the part by `labels[i]`, e.g. its
 *   file, else `part N`, 1-based).
 */
export function mergeCounts(parts: CountResult[], labels?: string[]): CountResult {
  if (parts.length === 0) throw new SearchInputError('nothing to merge');
  const name = (i: number) => labels?.[i] ?? `part ${i + 1}`;
  parts.forEach((p, i) => {
    if (!isCountResult(p)) throw new SearchInputError(`${name(i)} is not a count result (expected the JSON of \`count --json\`)`);
    if (!p.shards) throw new SearchInputError(`${name(i)} has no "shards" range; only results of \`count --shards A:B\` can be merged`);
  });
  const first = parts[0];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  parts.forEach((p, i) => {
    if (!same(p.terms, first.terms))
      throw new SearchInputError(
        `${name(i)} counts other terms (${JSON.stringify(p.terms)}) than ${name(0)} (${JSON.stringify(first.terms)})`,
      );
    if (!same(p.options, first.options))
      throw new SearchInputError(
        `${name(i)} has other options (${JSON.stringify(p.options)}) than ${name(0)} (${JSON.stringify(first.options)})`,
      );
    if (p.per !== first.per) throw new SearchInputError(`${name(i)} has --per ${p.per}, ${name(0)} has ${first.per}`);
    if (p.updates !== first.updates || p.buckets.length !== first.buckets.length) {
      throw new SearchInputError(
        `${name(i)} covers ${p.updates} updates, ${name(0)} ${first.updates}: parts of different datasets or schedules`,
      );
    }
  });
  const order = parts.map((p, i) => ({ i, s: p.shards! })).sort((x, y) => x.s[0] - y.s[0]);
  for (let k = 1; k < order.length; k++) {
    const a = order[k - 1],
      b = order[k];
    if (b.s[0] < a.s[1])
      throw new SearchInputError(`${name(a.i)} (shards ${a.s[0]}:${a.s[1]}) and ${name(b.i)} (shards ${b.s[0]}:${b.s[1]}) overlap`);
    if (b.s[0] > a.s[1]) throw new SearchInputError(`shards ${a.s[1]}:${b.s[0]} are in no part (between ${name(a.i)} and ${name(b.i)})`);
  }
  const out = cloneResult(first);
  out.shards = [order[0].s[0], order[order.length - 1].s[1]];
  for (const p of parts.slice(1)) {
    p.buckets.forEach((b, bi) => {
      const o = out.buckets[bi];
      if (b.first_update !== o.first_update || b.last_update !== o.last_update)
        throw new SearchInputError(`bucket ${bi} of a part covers other updates`);
      o.tokens += b.tokens;
      b.counts.forEach((c, t) => {
        o.counts[t] += c;
      });
    });
    p.totals.forEach((c, t) => {
      out.totals[t] += c;
    });
  }
  return out;
}
