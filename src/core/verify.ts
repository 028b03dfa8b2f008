/**
 * Shard hash verification: sha256 of every shard file, compared with `shard_manifest.jsonl`,
 * computed in a pool of `worker_threads` so neither the extension host nor the CLI's main thread
 * does the hashing. Used by the "Verify Shard Hashes" commands, the manifest table and
 * `token-shards verify`.
 *
 * What one run does, per shard (a {@link ShardEntry}):
 * 1. `stat` on this thread: a missing file or a size other than `4 × num_tokens` is reported at
 *    once (not hashed); a file whose identity (device, inode, size, mtime, ctime; `fileIdentity.ts`) has a cached digest equal to the
 *    manifest's is reported ok without reading it (unless `ignoreCache`).
 * 2. Everything else is queued to the pool (`jobs` workers, default the number of CPU cores):
 *    each worker reads one file at a time with large sequential reads (8 MiB), hashes it, and
 *    checks that it did not grow, shrink, change, vanish or get replaced meanwhile
 *    (see `src/core/workers/verifyWorker.ts`).
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
 * Finding the worker script (the rule; `workerPath` overrides it):
 * 1. `<dir of this bundle>/workers/verifyWorker.js`: `dist/extension.js`, `dist/cli.js` and
 *    `dist/core.js` all live in `dist/`, and esbuild builds the worker to `dist/workers/`.
 * 2. Otherwise walk up from this bundle's folder to the first folder that holds `package.json`
 *    and `dist/workers/verifyWorker.js` (bundled tests in `out/test/unit` or `out/test/vscode`
 *    find the repository's `dist/` this way). Run `node esbuild.js` first.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Worker } from 'worker_threads';
import { fmt } from './errors';
import { identityOfStats } from './fileIdentity';
import { BYTES_PER_TOKEN, ShardEntry } from './manifest';
import { VerifyCache } from './verifyCache';
import type { VerifyOutcome, VerifyTask, VerifyWorkerData, VerifyWorkerReply } from './workers/verifyWorker';

/** File name of the worker bundle inside `dist/workers/`. */
export const VERIFY_WORKER_FILE = 'verifyWorker.js';
/** Default bytes per sequential read in a worker: 8 MiB. */
export const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;
/** How long a cancelled run waits for a worker's reply before terminating it (ms). */
export const CANCEL_GRACE_MS = 750;
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
  /** One sentence naming the shard, its manifest line and what was expected. */
  message: string;
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
  /** Explicit path of `verifyWorker.js` (see the file header for the default rule). */
  workerPath?: string;
  /** Called as each shard finishes (in completion order). */
  onResult?(result: ShardVerifyResult): void;
  /** Called with a snapshot at the start, every `progressIntervalMs`, and at the end. */
  onProgress?(progress: VerifyProgress): void;
  /** Interval of `onProgress` calls in ms (default 200). */
  progressIntervalMs?: number;
  hooks?: VerifyHooks;
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
}

/** Default pool size: the number of CPU cores (`os.availableParallelism()`). */
export function defaultJobs(): number {
  const n = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return Math.max(1, n || 1);
}

/**
 * Finds `verifyWorker.js` (rule in the file header).
 * @param explicit a path given by the caller; used as is when given.
 * @param from folder to start from (default: this bundle's folder).
 * @throws Error listing the places tried when no worker bundle exists.
 */
export function resolveVerifyWorker(explicit?: string, from: string = __dirname): string {
  if (explicit) return path.resolve(explicit);
  const tried: string[] = [];
  const beside = path.join(from, 'workers', VERIFY_WORKER_FILE);
  tried.push(beside);
  if (fs.existsSync(beside)) return beside;
  let dir = path.resolve(from);
  for (;;) {
    const candidate = path.join(dir, 'dist', 'workers', VERIFY_WORKER_FILE);
    if (fs.existsSync(path.join(dir, 'package.json'))) {
      tried.push(candidate);
      if (fs.existsSync(candidate)) return candidate;
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error(`cannot find the hash worker ${VERIFY_WORKER_FILE} (tried ${tried.join(', ')}); run \`node esbuild.js\` to build dist/workers/.`);
}

/** A count of zero for every status. */
export function emptyCounts(): Record<ShardStatus, number> {
  return Object.fromEntries(SHARD_STATUSES.map((s) => [s, 0])) as Record<ShardStatus, number>;
}

interface Slot {
  worker: Worker;
  control: Int32Array;
  /** The task in hand. */
  current?: { task: VerifyTask; entry: ShardEntry; bytes: number };
  dead: boolean;
}

/**
 * Verifies shards against their manifest hashes (see the file header).
 * @param shards manifest entries to verify (any subset, e.g. one shard).
 * @returns the report; cancellation resolves (with `cancelled: true`), it does not reject.
 * @throws Error only when the worker script cannot be found (see {@link resolveVerifyWorker});
 *   every per-shard problem is a result.
 */
export async function verifyShards(shards: readonly ShardEntry[], opts: VerifyOptions = {}): Promise<VerifyReport> {
  const t0 = Date.now();
  const signal = opts.signal;
  const cache = opts.cache;
  const results = new Map<number, ShardVerifyResult>();
  const counts = emptyCounts();
  let fromCache = 0;
  let lastSave = Date.now();
  let cacheError: string | undefined;
  const saveCache = async () => {
    if (!cache) return;
    try {
      await cache.save();
    } catch (err) {
      cacheError = `cannot save the verification cache ${cache.file}: ${(err as Error).message}`;
    }
  };

  const finish = (r: ShardVerifyResult) => {
    results.set(r.index, r);
    counts[r.status]++;
    if (r.fromCache) fromCache++;
    opts.onResult?.(r);
  };

  // 1. stat + cache lookup on this thread (cheap), queue the rest.
  const queue: ShardEntry[] = [];
  if (!signal?.aborted) {
    const stats = await Promise.all(shards.map((e) => fs.promises.stat(e.path, { bigint: true }).then((st) => st, (err: NodeJS.ErrnoException) => err)));
    shards.forEach((e, i) => {
      const st = stats[i];
      const expectedSize = e.numTokens * BYTES_PER_TOKEN;
      if (st instanceof Error) {
        if (st.code === 'ENOENT') {
          cache?.delete(e.path);
          finish(makeResult(e, { kind: 'missing', message: `${e.path} does not exist` }, false));
        } else {
          queue.push(e); // let the worker produce the exact error
        }
        return;
      }
      if (st.isFile() && Number(st.size) !== expectedSize) {
        finish(makeResult(e, { kind: 'size-mismatch', size: Number(st.size) }, false));
        return;
      }
      const hit = !opts.ignoreCache && e.sha256 && st.isFile() ? cache?.lookup(e.path, identityOfStats(st)) : undefined;
      if (hit && hit.sha256 === e.sha256) {
        finish({ ...makeResult(e, { kind: 'hashed', sha256: hit.sha256, size: hit.identity.size, identity: hit.identity }, true), checkedAt: hit.checkedAt });
        return;
      }
      queue.push(e);
    });
  }
  const bytesTotal = queue.reduce((s, e) => s + e.numTokens * BYTES_PER_TOKEN, 0);
  let bytesFinished = 0; // bytes of finished hashed-queue shards (counted in full, for progress)
  let bytesHashed = 0; // bytes of the shards actually hashed to the end (the report's bytesHashed)
  const jobs = Math.max(1, Math.min(opts.jobs && opts.jobs > 0 ? Math.floor(opts.jobs) : defaultJobs(), 64, Math.max(1, queue.length)));
  const hashStart = Date.now();

  const slots: Slot[] = [];
  const snapshot = (): VerifyProgress => {
    const running = slots.filter((s) => s.current).map((s) => s.current!.entry.index);
    const inFlight = slots.reduce((s, sl) => s + (sl.current?.bytes ?? 0), 0);
    const bytesDone = Math.min(bytesTotal, bytesFinished + inFlight);
    const elapsed = Date.now() - hashStart;
    const rate = elapsed > 0 && bytesDone > 0 ? (bytesDone / elapsed) * 1000 : 0;
    return {
      shardsTotal: shards.length, shardsDone: results.size, shardsFromCache: fromCache, running,
      bytesTotal, bytesDone, elapsedMs: Date.now() - t0, bytesPerSecond: rate,
      etaMs: rate > 0 ? ((bytesTotal - bytesDone) / rate) * 1000 : undefined,
    };
  };

  let cancelled = !!signal?.aborted;
  if (queue.length > 0 && !cancelled) {
    const workerFile = resolveVerifyWorker(opts.workerPath);
    const chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    let nextTask = 0;
    let taskId = 0;
    opts.onProgress?.(snapshot());
    const timer = opts.onProgress ? setInterval(() => opts.onProgress!(snapshot()), opts.progressIntervalMs ?? 200) : undefined;
    let detachAbort = () => { /* set below */ };

    await new Promise<void>((resolveRun) => {
      let settled = false;
      let graceTimer: NodeJS.Timeout | undefined;
      const maybeDone = () => {
        if (settled) return;
        const busy = slots.some((s) => s.current && !s.dead);
        if (busy) return;
        if (!cancelled && nextTask < queue.length) return;
        settled = true;
        if (graceTimer) clearTimeout(graceTimer);
        resolveRun();
      };
      const dispatch = (slot: Slot) => {
        if (cancelled || slot.dead || nextTask >= queue.length) { maybeDone(); return; }
        const entry = queue[nextTask++];
        const task: VerifyTask = { type: 'hash', id: ++taskId, path: entry.path, expectedSize: entry.numTokens * BYTES_PER_TOKEN,
          hold: !!opts.hooks?.onFirstChunk };
        slot.current = { task, entry, bytes: 0 };
        slot.worker.postMessage(task);
      };
      const complete = (slot: Slot, outcome: VerifyOutcome) => {
        const cur = slot.current;
        if (!cur) return;
        slot.current = undefined;
        if (outcome.kind !== 'cancelled') {
          bytesFinished += cur.task.expectedSize;
          if (outcome.kind === 'hashed') bytesHashed += outcome.size;
          const r = makeResult(cur.entry, outcome, false);
          if (outcome.kind === 'hashed' && cache) {
            cache.record(cur.entry.path, { identity: outcome.identity, sha256: outcome.sha256, checkedAt: r.checkedAt });
          } else if (outcome.kind === 'missing') {
            cache?.delete(cur.entry.path);
          }
          finish(r);
          if (cache && Date.now() - lastSave > CACHE_SAVE_INTERVAL_MS) {
            lastSave = Date.now();
            void saveCache();
          }
        }
        dispatch(slot);
        maybeDone();
      };
      const onAbort = () => {
        if (cancelled) return;
        cancelled = true;
        for (const s of slots) {
          Atomics.store(s.control, 0, 1);
          Atomics.add(s.control, 1, 1);
          Atomics.notify(s.control, 1);
        }
        graceTimer = setTimeout(() => {
          for (const s of slots) if (s.current) { s.dead = true; s.current = undefined; void s.worker.terminate(); }
          maybeDone();
        }, CANCEL_GRACE_MS);
        maybeDone();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      detachAbort = () => signal?.removeEventListener('abort', onAbort);

      const spawn = (): Slot => {
        const shared = new SharedArrayBuffer(8);
        const data: VerifyWorkerData = { control: shared, chunkBytes };
        const slot: Slot = { worker: new Worker(workerFile, { workerData: data }), control: new Int32Array(shared), dead: false };
        if (cancelled) Atomics.store(slot.control, 0, 1);
        slot.worker.on('message', (msg: VerifyWorkerReply) => {
          if (!slot.current || msg.id !== slot.current.task.id) return;
          if (msg.type === 'progress') slot.current.bytes = msg.bytes;
          else if (msg.type === 'held') {
            const index = slot.current.entry.index;
            void Promise.resolve().then(() => opts.hooks?.onFirstChunk?.(index)).catch(() => undefined).then(() => {
              Atomics.add(slot.control, 1, 1);
              Atomics.notify(slot.control, 1);
            });
          } else if (msg.type === 'done') complete(slot, msg.outcome);
        });
        const crashed = (why: string) => {
          if (slot.dead) return;
          slot.dead = true;
          const cur = slot.current;
          if (cur && !cancelled) {
            complete(slot, { kind: 'unreadable', message: `the hash worker stopped while reading ${cur.entry.path}: ${why}` });
            // Replace the worker so the queue keeps draining.
            const fresh = spawn();
            slots.push(fresh);
            dispatch(fresh);
          } else {
            slot.current = undefined;
            maybeDone();
          }
        };
        slot.worker.on('error', (err) => crashed(err.message));
        slot.worker.on('exit', (code) => { if (!settled) crashed(`exit code ${code}`); });
        return slot;
      };
      try {
        for (let i = 0; i < jobs; i++) slots.push(spawn());
      } catch (err) {
        // Worker creation failed (e.g. the script is not valid): report every queued shard.
        for (const e of queue) finish(makeResult(e, { kind: 'unreadable', message: `cannot start a hash worker: ${(err as Error).message}` }, false));
        nextTask = queue.length;
        settled = true;
        resolveRun();
        return;
      }
      for (const s of [...slots]) dispatch(s);
      if (signal?.aborted) onAbort();
    });
    if (timer) clearInterval(timer);
    detachAbort();
    for (const s of slots) { s.dead = true; void s.worker.terminate(); }
  }
  // Shards neither finished nor (when not cancelled) left: only possible when cancelled.
  const unfinished = cancelled ? shards.map((e) => e.index).filter((i) => !results.has(i)) : [];
  opts.onProgress?.(snapshot());
  await saveCache();
  return {
    results: [...results.values()].sort((a, b) => a.index - b.index),
    counts, cancelled: cancelled && unfinished.length > 0, unfinished, fromCache,
    bytesHashed, elapsedMs: Date.now() - t0, jobs: queue.length ? jobs : 0, cacheError,
  };
}

/** Builds the result of one shard from a worker outcome (never `cancelled`). */
function makeResult(e: ShardEntry, o: Exclude<VerifyOutcome, { kind: 'cancelled' }>, cached: boolean): ShardVerifyResult {
  const expectedSize = e.numTokens * BYTES_PER_TOKEN;
  const where = `${e.shard} (shard_manifest.jsonl line ${e.line})`;
  const base = {
    index: e.index, shard: e.shard, path: e.path, line: e.line, expectedSha256: e.sha256, expectedSize,
    checkedAt: Date.now(), fromCache: cached,
  };
  switch (o.kind) {
    case 'hashed': {
      const common = { ...base, actualSha256: o.sha256, actualSize: o.size };
      if (!e.sha256) return { ...common, status: 'no-hash', message: `${where}: the manifest line has no sha256, so the file cannot be checked; it hashes to ${o.sha256}.` };
      if (o.sha256 === e.sha256) return { ...common, status: 'ok', message: `${where}: sha256 matches (${o.sha256.slice(0, 12)}…).` };
      return { ...common, status: 'mismatch',
        message: `${where}: sha256 mismatch: the file hashes to ${o.sha256} but the manifest says ${e.sha256}; the file is corrupt or not this dataset's version.` };
    }
    case 'missing':
      return { ...base, status: 'missing', message: `${where}: file not found at ${e.path}; expected ${fmt(expectedSize)} bytes.` };
    case 'size-mismatch': {
      const d = o.size - expectedSize;
      return { ...base, status: 'size-mismatch', actualSize: o.size,
        message: `${where}: ${fmt(o.size)} bytes on disk but num_tokens ${fmt(e.numTokens)} needs ${fmt(expectedSize)} bytes (${d > 0 ? `${fmt(d)} extra` : `${fmt(-d)} short`}); not hashed.` };
    }
    case 'changed':
      return { ...base, status: 'changed', actualSize: o.size, message: `${where}: ${o.message}; verify again once nothing is writing to it.` };
    case 'unreadable':
      return { ...base, status: 'unreadable', message: `${where}: ${o.message}.` };
  }
}

/** Decimal gigabytes with 2 decimals below 10 GB, 1 above ("0.42", "12.3"). */
export function formatGB(bytes: number): string {
  const gb = bytes / 1e9;
  return gb < 10 ? gb.toFixed(2) : gb.toFixed(1);
}

/**
 * Bytes hashed so far for a progress line, unit included: decimal MB below 1 GB ("0 MB", "8.00 MB",
 * "42.5 MB", "812 MB"), else {@link formatGB} GB ("1.20 GB"). Never "0.00 GB" for a small dataset.
 */
export function formatDone(bytes: number): string {
  if (bytes >= 1e9) return `${formatGB(bytes)} GB`;
  if (bytes <= 0) return '0 MB';
  const mb = bytes / 1e6;
  return `${mb >= 100 ? mb.toFixed(0) : mb >= 10 ? mb.toFixed(1) : mb.toFixed(2)} MB`;
}

/** Bytes for people in decimal units: "812 B", "1.00 MB", "4.97 GB", "210 GB". */
export function formatBytes(bytes: number): string {
  const units: [number, string][] = [[1e12, 'TB'], [1e9, 'GB'], [1e6, 'MB'], [1e3, 'kB']];
  for (const [u, name] of units) {
    if (bytes >= u) {
      const v = bytes / u;
      return `${v >= 100 ? v.toFixed(0) : v.toFixed(2)} ${name}`;
    }
  }
  return `${bytes} B`;
}

/** A duration for people: "640 ms", "6.3 s", "45 s", "3 min 20 s", "1 h 05 min". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/**
 * The one-line progress text shared by the CLI and the notification:
 * "shard 12 of 2,098 · 1.20 GB done · 1.62 GB/s · 2 min 10 s left" ("… · 8.00 MB done · …" below 1 GB). `i` counts finished shards
 * plus those being hashed now.
 */
export function formatVerifyProgress(p: VerifyProgress): string {
  const i = Math.min(p.shardsTotal, p.shardsDone + p.running.length);
  const parts = [`shard ${fmt(Math.max(i, 1))} of ${fmt(p.shardsTotal)}`, `${formatDone(p.bytesDone)} done`];
  if (p.bytesPerSecond > 0) parts.push(`${(p.bytesPerSecond / 1e9).toFixed(2)} GB/s`);
  if (p.etaMs !== undefined && p.bytesDone < p.bytesTotal) parts.push(`${formatDuration(p.etaMs)} left`);
  return parts.join(' · ');
}

/**
 * A one-line summary of a report, faults first: "2,098 ok" or "3 mismatched · 1 missing · 2,094 ok"
 * (+ " · cancelled, 12 not checked"); when some shards were answered from the cache it says so
 * ("2,098 ok · 2,090 not re-read (cached)"), so nobody mistakes a cache hit for a hash.
 */
export function formatVerifySummary(r: Pick<VerifyReport, 'counts' | 'cancelled' | 'unfinished'> & { fromCache?: number }): string {
  const labels: Record<ShardStatus, string> = {
    ok: 'ok', mismatch: 'mismatched', missing: 'missing', 'size-mismatch': 'wrong size',
    changed: 'changed while read', unreadable: 'unreadable', 'no-hash': 'without a manifest hash',
  };
  // Faults first ("3 mismatched · 2,095 ok"): they are what the reader must act on.
  const order = [...SHARD_STATUSES.filter((s) => s !== 'ok'), 'ok' as const];
  const parts = order.filter((s) => r.counts[s] > 0).map((s) => `${fmt(r.counts[s])} ${labels[s]}`);
  if (r.fromCache) parts.push(`${fmt(r.fromCache)} not re-read (cached)`);
  if (r.cancelled) parts.push(`cancelled, ${fmt(r.unfinished.length)} not checked`);
  return parts.join(' · ') || 'nothing to verify';
}

/** True when every finished shard is ok and nothing was left unfinished. */
export function reportAllOk(r: Pick<VerifyReport, 'counts' | 'cancelled' | 'unfinished'>): boolean {
  return !r.cancelled && r.unfinished.length === 0 && SHARD_STATUSES.every((s) => s === 'ok' || r.counts[s] === 0);
}
