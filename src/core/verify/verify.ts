/**
 * Shard hash verification: sha256 of every shard file, compared with `shard_manifest.jsonl`,
 * computed in a pool of `worker_threads` so neither the extension host nor the CLI's main thread
 * does the hashing. Used by the "Verify Shard Hashes" commands, the manifest table and
 * `token-shards verify`.
 *
 * What one run does, per shard (a {@link ShardEntry}):
 * 1. `stat` on this thread: a missing file or a size other than `4 × num_tokens` is reported at
 *    once (not hashed); a file whose identity (device, inode, size, mtime, ctime;
 *    `fileIdentity.ts`) has a cached digest equal to the manifest's is reported ok without
 *    reading it (unless `ignoreCache`). Stats run 256 at a time (bounded memory for 100,000
 *    shards).
 * 2. Everything else is queued to the worker pool (`shardPool.ts`; `jobs` workers, default the
 *    number of CPU cores): each worker reads one file at a time with large sequential reads
 *    (8 MiB), hashes it (and, with `index`, scans the same buffer for the stream index,
 *    `streamIndex.ts`), and checks that it did not grow, shrink, change, vanish or get replaced
 *    meanwhile (see `src/core/workers/verifyWorker.ts`). With `index`, shards answered from the
 *    cache but not indexed yet are read once more for the index only.
 * 3. Results arrive through `onResult` as shards finish; progress (bytes hashed, rate, time left)
 *    through `onProgress` every `progressIntervalMs`. Digests of fully read files go to the
 *    {@link VerifyCache} given, which is saved at the end (and every 30 s of a long run).
 *
 * Cancellation: abort the `signal`. Workers see a shared flag before every chunk (a few ms of
 * work), drop the file in hand and reply; the run resolves as soon as every worker has replied
 * (workers that do not reply within {@link CANCEL_GRACE_MS} — e.g. stuck in a read on a dead
 * network disk — are terminated). Nothing is recorded for a shard that was not finished: it is
 * listed in {@link VerifyReport.unfinished}, never in `results` or the cache.
 *
 * Text for people (units, progress line, summary) lives in `verify/format.ts`.
 *
 * Finding the worker script (the rule; `workerPath` overrides it):
 * 1. `<dir of this bundle>/workers/verifyWorker.js`: `dist/extension.js`, `dist/cli.js` and
 *    `dist/core.js` all live in `dist/`, and esbuild builds the worker to `dist/workers/`.
 * 2. Otherwise walk up from this bundle's folder to the first folder that holds `package.json`
 *    and `dist/workers/verifyWorker.js` (bundled tests in `out/test/unit` or `out/test/vscode`
 *    find the repository's `dist/` this way). Run `node esbuild.js` first.
 */
import * as fs from 'fs';
import { fmt } from '../units';
import { identityKeyOfStats, identityOfStats } from '../fileIdentity';
import { BYTES_PER_TOKEN, ShardEntry } from '../manifest';
import { ReadJob, ShardReadPool, defaultJobs, prestartReadWorkers, resolveWorkerScript } from '../shardPool';
import { Schedule } from '../schedule';
import { IndexStore, scanParamsKey } from '../streamIndex/entryStore';
import { describeUpdates, updatesTouching } from '../streamIndex/anomalies';
import { indexKernelModule } from '../streamIndex/kernel';
import { ScanParams } from '../streamIndex/scan';
import { VerifyCache } from './cache';
import type { VerifyOutcome } from '../workers/verifyWorker';

/** File name of the worker bundle inside `dist/workers/`. */
export const VERIFY_WORKER_FILE = 'verifyWorker.js';
/** Default bytes per sequential read in a worker: 8 MiB. */
export const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;
export { CANCEL_GRACE_MS, defaultJobs } from '../shardPool';
/** How often a long run saves the cache while it runs (ms). */
export const CACHE_SAVE_INTERVAL_MS = 30_000;

/**
 * Outcome of one shard:
 * - `ok`: the file's sha256 equals the manifest's;
 * - `mismatch`: the file was read to the end and its sha256 differs;
 * - `missing`: no file at the path;
 * - `size-mismatch`: the size differs from `4 × num_tokens` (not hashed);
 * - `changed`: the file grew, shrank, was modified, deleted or replaced while it was read;
 * - `unreadable`: it could not be opened or read (permissions, I/O error, a folder);
 * - `no-hash`: the manifest line has no `sha256`; the file was hashed but cannot be checked.
 */
export type ShardStatus = 'ok' | 'mismatch' | 'missing' | 'size-mismatch' | 'changed' | 'unreadable' | 'no-hash';

/** Every status, in the order summaries list them. */
export const SHARD_STATUSES: readonly ShardStatus[] = ['ok', 'mismatch', 'missing', 'size-mismatch', 'changed', 'unreadable', 'no-hash'];

/** The verification result of one shard. Sizes are in bytes, times in ms since the epoch. */
export interface ShardVerifyResult {
  /** `ShardEntry.index` (position after sorting by start token). */
  index: number;
  /** The manifest's `shard` field (path relative to the root). */
  shard: string;
  /** Absolute path of the file. */
  path: string;
  /** 1-based line of the shard in `shard_manifest.jsonl`. */
  line: number;
  status: ShardStatus;
  /** The manifest's sha256 (lower-case hex), when the line has one. */
  expectedSha256?: string;
  /** The file's sha256, when it was read to the end (or taken from the cache). */
  actualSha256?: string;
  /** `4 × num_tokens`. */
  expectedSize: number;
  /** Size on disk, when the file exists. */
  actualSize?: number;
  /** When the file was hashed (for cached results: when the cached hash was computed). */
  checkedAt: number;
  /** True when the digest came from the cache (the file was not read in this run). */
  fromCache: boolean;
  /**
   * One sentence naming the shard, its manifest line and what was expected; for a shard that is
   * not ok (with `schedule`), a second one naming the updates it feeds.
   */
  message: string;
  /** For a shard that is not ok (with `schedule`): the updates that read it, first and last (0-based, inclusive). */
  updates?: [number, number];
}

/** A progress snapshot. `bytes…` count only the files hashed in this run (cache hits are free). */
export interface VerifyProgress {
  /** Shards in the run. */
  shardsTotal: number;
  /** Shards finished (any status, cache hits included). */
  shardsDone: number;
  /** Of those, answered from the cache. */
  shardsFromCache: number;
  /** Indices of the shards being hashed right now. */
  running: number[];
  /** Bytes to hash in this run (sum of the queued shards' expected sizes). */
  bytesTotal: number;
  /** Bytes hashed so far (a finished shard counts in full, whatever its outcome). */
  bytesDone: number;
  /** Milliseconds since the run started. */
  elapsedMs: number;
  /** Hashing rate since the first file was queued (bytes per second; 0 until known). */
  bytesPerSecond: number;
  /** Estimated milliseconds left, once the rate is known. */
  etaMs?: number;
}

/** Test hooks (deterministic scheduling for tests; never used by the product). */
export interface VerifyHooks {
  /**
   * Called after the first chunk of each hashed shard has been read and hashed; the worker stays
   * paused until the returned promise settles (the file is unfinished meanwhile).
   */
  onFirstChunk?(index: number): void | Promise<void>;
}

/** Options of {@link verifyShards}. */
export interface VerifyOptions {
  /** Worker threads (default {@link defaultJobs}: the number of CPU cores); at most the number of shards to hash. */
  jobs?: number;
  /** Abort to cancel; see the file header. */
  signal?: AbortSignal;
  /** Where digests are looked up and recorded; without it nothing is cached. */
  cache?: VerifyCache;
  /** Re-hash every shard even when the cache knows it (results are still recorded). */
  ignoreCache?: boolean;
  /** Bytes per read (default 8 MiB). */
  chunkBytes?: number;
  /** With `index`: bytes hashed, then scanned, at a time (default 256 KiB; `chunkBytes` = a whole chunk hashed, then scanned). */
  sliceBytes?: number;
  /**
   * Keep the read workers for the next run of this process (warm: ~30–60 ms less per run; see
   * `shardPool.ts`). For a long-lived process that verifies many times (the extension host);
   * default false (the CLI: one run, its memory freed before the cache is saved).
   */
  keepWorkersWarm?: boolean;
  /** Explicit path of `verifyWorker.js` (see the file header for the default rule). */
  workerPath?: string;
  /** Called as each shard finishes (in completion order). */
  onResult?(result: ShardVerifyResult): void;
  /** Called with a snapshot at the start, every `progressIntervalMs`, and at the end. */
  onProgress?(progress: VerifyProgress): void;
  /** Interval of `onProgress` calls in ms (default 200). */
  progressIntervalMs?: number;
  hooks?: VerifyHooks;
  /** The training schedule: shards that are not ok then name the updates they feed (`updates`, message). */
  schedule?: Schedule;
  /**
   * Build the stream index in the same read (each hashed buffer is scanned too; shards answered
   * from the cache but not indexed yet are read for the index only).
   */
  index?: {
    store: IndexStore;
    params: ScanParams;
    /** Called when a shard's index entry was written (by `ShardEntry.index`). */
    onIndexed?(index: number): void;
  };
}

/** What a run found. */
export interface VerifyReport {
  /** Results of finished shards, sorted by index. */
  results: ShardVerifyResult[];
  /** Count per status (finished shards only). */
  counts: Record<ShardStatus, number>;
  /** True when the run was cancelled before every shard finished. */
  cancelled: boolean;
  /** Indices of shards that did not finish (cancelled): nothing was recorded for them. */
  unfinished: number[];
  /** Shards answered from the cache. */
  fromCache: number;
  /**
   * Bytes of the shards read and hashed to the end in this run. Shards answered from the cache,
   * refused without hashing (wrong size, not a regular file, unreadable) or that changed while
   * read do not count, so `bytesHashed / elapsedMs` is a real throughput.
   */
  bytesHashed: number;
  /** Wall time of the run in ms. */
  elapsedMs: number;
  /** Worker threads used. */
  jobs: number;
  /** Set when the cache could not be saved (one sentence); the results are still valid. */
  cacheError?: string;
  /** Shards whose stream-index entry was written in this run (with `index`). */
  indexed: number;
  /** The first index write error (one sentence), when any. */
  indexError?: string;
  /** Where the run's time went (see {@link VerifyTiming}). */
  timing: VerifyTiming;
}

/**
 * Where a run's time went. Wall times in ms (`performance.now()`), from the start of the run
 * (the call of {@link verifyShards}) unless said otherwise; CPU time in ms.
 */
export interface VerifyTiming {
  /** When the run started, in ms since this process started (`performance.timeOrigin`): the CLI's start-up before the run. */
  startedAtMs: number;
  /** The stat and cache pass (step 1 of the file header) took this long. */
  triageMs: number;
  /**
   * When the first chunk had been read and hashed (the first progress reply of a worker; a batch
   * of small files: when the batch was done); undefined when nothing was read.
   */
  firstByteMs?: number;
  /** From the first job handed to the pool to the last one finished (0 when nothing was read). */
  readMs: number;
  /** The end work after the last read: index prune and cache save. */
  finishMs: number;
  /**
   * CPU time of the whole process during the run (user + system, every thread: the workers and
   * libuv's read threads too; `process.cpuUsage`). In the extension host it includes whatever
   * else the host did meanwhile.
   */
  cpuMs: number;
}

/**
 * Finds `verifyWorker.js` (rule in the file header; `resolveWorkerScript`).
 * @param explicit a path given by the caller; used as is when given.
 * @param from folder to start from (default: this bundle's folder).
 * @throws Error listing the places tried when no worker bundle exists.
 */
export function resolveVerifyWorker(explicit?: string, from: string = __dirname): string {
  return resolveWorkerScript(VERIFY_WORKER_FILE, 'the hash worker', explicit, from);
}

/**
 * Starts the read workers a coming {@link verifyShards} (or `indexShards`) run will take, so they
 * start while the caller parses the manifest and the tokenizer (`prestartReadWorkers`). Give the
 * same `jobs`, `chunkBytes` and `workerPath` as the run; `index` when it will scan (the workers
 * then get the compiled stream-index kernel).
 * @throws Error when the worker script cannot be found (see {@link resolveVerifyWorker}).
 */
export function prestartVerifyWorkers(opts: Pick<VerifyOptions, 'jobs' | 'chunkBytes' | 'workerPath'> & { index: boolean }): void {
  prestartReadWorkers(opts.jobs && opts.jobs > 0 ? Math.floor(opts.jobs) : defaultJobs(), {
    workerFile: resolveVerifyWorker(opts.workerPath),
    chunkBytes: opts.chunkBytes ?? DEFAULT_CHUNK_BYTES,
    kernelModule: opts.index ? indexKernelModule() : undefined,
  });
}

/** A count of zero for every status. */
export function emptyCounts(): Record<ShardStatus, number> {
  return Object.fromEntries(SHARD_STATUSES.map((s) => [s, 0])) as Record<ShardStatus, number>;
}

/**
 * Verifies shards against their manifest hashes (see the file header).
 * @param shards manifest entries to verify (any subset, e.g. one shard).
 * @returns the report; cancellation resolves (with `cancelled: true`), it does not reject.
 * @throws Error only when the worker script cannot be found (see {@link resolveVerifyWorker});
 *   every per-shard problem is a result.
 */
export async function verifyShards(shards: readonly ShardEntry[], opts: VerifyOptions = {}): Promise<VerifyReport> {
  return new VerifyRun(shards, opts).run();
}

/** How many shards are stat'ed between two yields to the event loop (bounded blocking, flat memory). */
const STAT_BATCH = 256;

/**
 * One verification run: the stat/cache pass, the hashing loop on the pool, progress and the report.
 * Jobs are keyed by position in `shards` (results are stored in one array by position).
 */
class VerifyRun {
  private readonly t0 = Date.now();
  /** The run's start for {@link VerifyTiming} (`performance.now()`) and the process CPU time then. */
  private readonly perf0 = performance.now();
  private readonly cpu0 = process.cpuUsage();
  /** Result of each shard by its position in `shards` (undefined: not finished). */
  private readonly results: (ShardResult | undefined)[];
  private finished = 0;
  private readonly counts = emptyCounts();
  private fromCache = 0;
  private indexed = 0;
  /** The first stream-index write error (one sentence). */
  private indexError?: string;
  private lastSave = Date.now();
  private cacheError?: string;
  /** Queued reads: hash (+ scan when indexing) for shards to verify, scan only for cached shards without an index. */
  private readonly jobs: ReadJob[] = [];
  private bytesTotal = 0;
  private bytesFinished = 0;
  private bytesHashed = 0;
  private hashStart = Date.now();
  private pool?: ShardReadPool;
  /** With `index`: the store entries the shards' files use now (kept by the prune after the run). */
  private readonly liveIndex = new Set<string>();

  constructor(
    private readonly shards: readonly ShardEntry[],
    private readonly opts: VerifyOptions,
  ) {
    this.results = new Array(shards.length);
  }

  async run(): Promise<VerifyReport> {
    const { opts } = this;
    const signal = opts.signal;
    if (!signal?.aborted) await this.triage();
    const triaged = performance.now();
    let readEnd = triaged;
    this.bytesTotal = this.jobs.reduce((n, j) => n + j.expectedSize, 0);
    this.hashStart = Date.now();
    let cancelled = !!signal?.aborted;
    if (this.jobs.length > 0 && !cancelled) {
      const jobs = Math.max(1, Math.min(opts.jobs && opts.jobs > 0 ? Math.floor(opts.jobs) : defaultJobs(), 64, this.jobs.length));
      const onFirstChunk = opts.hooks?.onFirstChunk;
      this.pool = new ShardReadPool({
        jobs,
        workerFile: resolveVerifyWorker(opts.workerPath),
        chunkBytes: opts.chunkBytes ?? DEFAULT_CHUNK_BYTES,
        kernelModule: opts.index ? indexKernelModule() : undefined,
        keepWarm: opts.keepWorkersWarm,
        signal,
        onFirstChunk: onFirstChunk ? (key) => onFirstChunk(this.shards[key].index) : undefined,
      });
      opts.onProgress?.(this.snapshot());
      const timer = opts.onProgress ? setInterval(() => opts.onProgress!(this.snapshot()), opts.progressIntervalMs ?? 200) : undefined;
      try {
        cancelled = (await this.pool.run(this.jobs, (job, outcome) => this.done(job, outcome))).cancelled;
      } finally {
        if (timer) clearInterval(timer);
      }
      readEnd = performance.now();
    }
    // Index entries were written: delete those no file can use any more (rewritten or replaced shards).
    if (opts.index && this.indexed > 0) await opts.index.store.prune(this.liveIndex);
    // Shards neither finished nor (when not cancelled) left: only possible when cancelled.
    const unfinished: number[] = [];
    if (cancelled) this.shards.forEach((e, i) => this.results[i] || unfinished.push(e.index));
    opts.onProgress?.(this.snapshot());
    await this.saveCache();
    const end = performance.now();
    const cpu = process.cpuUsage(this.cpu0);
    const firstByte = this.pool?.firstDataAt;
    const timing: VerifyTiming = {
      startedAtMs: this.perf0,
      triageMs: triaged - this.perf0,
      firstByteMs: firstByte !== undefined ? firstByte - this.perf0 : undefined,
      readMs: readEnd - triaged,
      finishMs: end - readEnd,
      cpuMs: (cpu.user + cpu.system) / 1000,
    };
    const results: ShardVerifyResult[] = [];
    for (const r of this.results) if (r) results.push(r);
    return {
      results: results.sort((a, b) => a.index - b.index),
      counts: this.counts,
      cancelled: cancelled && unfinished.length > 0,
      unfinished,
      fromCache: this.fromCache,
      bytesHashed: this.bytesHashed,
      elapsedMs: Date.now() - this.t0,
      jobs: this.pool?.size ?? 0,
      cacheError: this.cacheError,
      indexed: this.indexed,
      indexError: this.indexError,
      timing,
    };
  }

  /**
   * 1. stat + cache lookup on this thread (cheap); queue the rest. Synchronous stats in batches of
   * {@link STAT_BATCH} with a yield between batches: flat memory and linear time for 100,000 shards.
   */
  private async triage(): Promise<void> {
    const { opts } = this;
    const ix = opts.index;
    // The parameters' key hashes the special ids: once per run, not once per shard.
    const paramsKey = ix ? scanParamsKey(ix.params) : '';
    // One scan request per shard size, shared by its jobs (not an object per shard); the worker
    // writes the entry into the store itself.
    const scans = new Map<number, ReadJob['scan']>();
    const scanFor = (numTokens: number) => {
      let scan = scans.get(numTokens);
      if (!scan)
        scans.set(numTokens, (scan = { ...ix!.params, numTokens, store: { dir: ix!.store.dir, paramsKey }, sliceBytes: opts.sliceBytes }));
      return scan;
    };
    for (let b = 0; b < this.shards.length; b += STAT_BATCH) {
      if (b > 0) await new Promise<void>((r) => setImmediate(r));
      // Cancelled while sorting out cache hits (100,000 of them take seconds): the rest stay unfinished.
      if (opts.signal?.aborted) return;
      for (let i = b; i < Math.min(this.shards.length, b + STAT_BATCH); i++) {
        const e = this.shards[i];
        const expectedSize = e.numTokens * BYTES_PER_TOKEN;
        const scan = ix ? scanFor(e.numTokens) : undefined;
        let st: fs.BigIntStats;
        try {
          st = fs.statSync(e.path, { bigint: true });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
            opts.cache?.delete(e.path);
            this.finish(i, new ShardResult(e, 'missing', false));
          } else {
            this.jobs.push({ key: i, path: e.path, expectedSize, hash: true, scan }); // let the worker produce the exact error
          }
          continue;
        }
        if (ix) this.liveIndex.add(ix.store.baseName(identityOfStats(st), paramsKey));
        if (st.isFile() && Number(st.size) !== expectedSize) {
          const r = new ShardResult(e, 'size-mismatch', false);
          r.actualSize = Number(st.size);
          this.finish(i, r);
          continue;
        }
        const hit = !opts.ignoreCache && e.sha256 && st.isFile() ? opts.cache?.lookupKey(e.path, identityKeyOfStats(st)) : undefined;
        if (hit && hit.sha256 === e.sha256) {
          const r = new ShardResult(e, 'ok', true, hit.checkedAt);
          r.actualSha256 = e.sha256;
          r.actualSize = Number(st.size);
          this.finish(i, r);
          // Known good, but not indexed yet: read it for the index only (no hash).
          if (ix && !ix.store.has(identityOfStats(st), paramsKey))
            this.jobs.push({ key: i, path: e.path, expectedSize, hash: false, scan });
          continue;
        }
        this.jobs.push({ key: i, path: e.path, expectedSize, hash: true, scan });
      }
    }
  }

  private finish(pos: number, r: ShardResult): void {
    const schedule = this.opts.schedule;
    if (schedule && r.status !== 'ok') {
      const e = this.shards[pos];
      r.scheduled = true;
      const u = updatesTouching(schedule, e.startToken, e.startToken + e.numTokens);
      if (u) r.updates = u;
    }
    this.results[pos] = r;
    this.finished++;
    this.counts[r.status]++;
    if (r.fromCache) this.fromCache++;
    this.opts.onResult?.(r);
  }

  /** A job finished (any outcome but cancelled). */
  private done(job: ReadJob, outcome: Exclude<VerifyOutcome, { kind: 'cancelled' }>): void {
    const { opts } = this;
    const entry = this.shards[job.key];
    this.bytesFinished += job.expectedSize;
    if (outcome.kind === 'read' && opts.index) {
      if (outcome.indexed) {
        this.indexed++;
        opts.index.onIndexed?.(entry.index);
      } else if (outcome.indexError) this.indexError ??= outcome.indexError;
    }
    if (!job.hash) return; // an index-only read of a shard already verified from the cache
    if (outcome.kind === 'read') this.bytesHashed += outcome.size;
    const r = resultOf(entry, outcome);
    if (outcome.kind === 'read' && outcome.sha256 && opts.cache) {
      opts.cache.record(entry.path, { identity: outcome.identity, sha256: r.actualSha256!, checkedAt: r.checkedAt });
    } else if (outcome.kind === 'missing') {
      opts.cache?.delete(entry.path);
    }
    this.finish(job.key, r);
    if (opts.cache && Date.now() - this.lastSave > CACHE_SAVE_INTERVAL_MS) {
      this.lastSave = Date.now();
      void this.saveCache();
    }
  }

  private async saveCache(): Promise<void> {
    const cache = this.opts.cache;
    if (!cache) return;
    try {
      await cache.save();
    } catch (err) {
      this.cacheError = `cannot save the verification cache ${cache.file}: ${(err as Error).message}`;
    }
  }

  private snapshot(): VerifyProgress {
    const running = (this.pool?.running() ?? []).map((key) => this.shards[key].index);
    const bytesDone = Math.min(this.bytesTotal, this.bytesFinished + (this.pool?.bytesInFlight() ?? 0));
    const elapsed = Date.now() - this.hashStart;
    const rate = elapsed > 0 && bytesDone > 0 ? (bytesDone / elapsed) * 1000 : 0;
    return {
      shardsTotal: this.shards.length,
      shardsDone: this.finished,
      shardsFromCache: this.fromCache,
      running,
      bytesTotal: this.bytesTotal,
      bytesDone,
      elapsedMs: Date.now() - this.t0,
      bytesPerSecond: rate,
      etaMs: rate > 0 ? ((this.bytesTotal - bytesDone) / rate) * 1000 : undefined,
    };
  }
}

/**
 * One shard's result, kept small for runs of 100,000 shards: the strings are
 * the manifest entry's own (an ok shard's `actualSha256` is the manifest's string), and the
 * `message` sentence is built when it is read — only faults and output ever read it.
 */
class ShardResult implements ShardVerifyResult {
  readonly index: number;
  readonly shard: string;
  readonly path: string;
  readonly line: number;
  readonly expectedSha256?: string;
  actualSha256?: string;
  readonly expectedSize: number;
  actualSize?: number;
  updates?: [number, number];
  /** The worker's phrase for `changed` and `unreadable` (the message's second half). */
  detail?: string;
  /** A schedule was given: a shard that is not ok also names the updates it feeds. */
  scheduled = false;

  constructor(
    e: ShardEntry,
    readonly status: ShardStatus,
    readonly fromCache: boolean,
    readonly checkedAt: number = Date.now(),
  ) {
    this.index = e.index;
    this.shard = e.shard;
    this.path = e.path;
    this.line = e.line;
    this.expectedSha256 = e.sha256;
    this.expectedSize = e.numTokens * BYTES_PER_TOKEN;
  }

  /**
   * One sentence naming the shard, its manifest line and what was expected; for a shard that is
   * not ok (with a schedule), a second one naming the updates it feeds.
   */
  get message(): string {
    const where = `${this.shard} (shard_manifest.jsonl line ${this.line})`;
    const actual = this.actualSha256 ?? '';
    let m: string;
    switch (this.status) {
      case 'ok':
        return `${where}: sha256 matches (${actual.slice(0, 12)}…).`;
      case 'no-hash':
        m = `${where}: the manifest line has no sha256, so the file cannot be checked; it hashes to ${actual}.`;
        break;
      case 'mismatch':
        m = `${where}: sha256 mismatch: the file hashes to ${actual} but the manifest says ${this.expectedSha256}; the file is corrupt or not this dataset's version.`;
        break;
      case 'missing':
        m = `${where}: file not found at ${this.path}; expected ${fmt(this.expectedSize)} bytes.`;
        break;
      case 'size-mismatch': {
        const size = this.actualSize ?? 0;
        const d = size - this.expectedSize;
        m = `${where}: ${fmt(size)} bytes on disk but num_tokens ${fmt(this.expectedSize / BYTES_PER_TOKEN)} needs ${fmt(this.expectedSize)} bytes (${d > 0 ? `${fmt(d)} extra` : `${fmt(-d)} short`}); not hashed.`;
        break;
      }
      case 'changed':
        m = `${where}: ${this.detail}; verify again once nothing is writing to it.`;
        break;
      case 'unreadable':
        m = `${where}: ${this.detail}.`;
        break;
    }
    if (!this.scheduled) return m;
    return `${m} ${this.updates ? `It feeds ${describeUpdates(this.updates)}` : 'It feeds no update (look-ahead tokens only)'}.`;
  }

  /** The result as a plain object, `message` included (for JSON and anything that copies it). */
  toJSON(): ShardVerifyResult {
    const { detail: _d, scheduled: _s, ...rest } = this;
    return { ...rest, message: this.message };
  }
}

/** Builds the result of one shard from a worker outcome (never `cancelled`). */
function resultOf(e: ShardEntry, o: Exclude<VerifyOutcome, { kind: 'cancelled' }>): ShardResult {
  switch (o.kind) {
    case 'read': {
      if (!o.sha256) {
        const r = new ShardResult(e, 'unreadable', false);
        r.detail = 'the file was read but not hashed';
        return r;
      }
      const status: ShardStatus = !e.sha256 ? 'no-hash' : o.sha256 === e.sha256 ? 'ok' : 'mismatch';
      const r = new ShardResult(e, status, false);
      r.actualSha256 = status === 'ok' ? e.sha256 : o.sha256;
      r.actualSize = o.size;
      return r;
    }
    case 'missing':
      return new ShardResult(e, 'missing', false);
    case 'size-mismatch': {
      const r = new ShardResult(e, 'size-mismatch', false);
      r.actualSize = o.size;
      return r;
    }
    case 'changed': {
      const r = new ShardResult(e, 'changed', false);
      r.actualSize = o.size;
      r.detail = o.message;
      return r;
    }
    case 'unreadable': {
      const r = new ShardResult(e, 'unreadable', false);
      r.detail = o.message;
      return r;
    }
  }
}

/** True when every finished shard is ok and nothing was left unfinished. */
export function reportAllOk(r: Pick<VerifyReport, 'counts' | 'cancelled' | 'unfinished'>): boolean {
  return !r.cancelled && r.unfinished.length === 0 && SHARD_STATUSES.every((s) => s === 'ok' || r.counts[s] === 0);
}
