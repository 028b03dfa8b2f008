/**
 * A small pool of `worker_threads` that read shard files (sha256 and/or the stream-index scan, see
 * `workers/verifyWorker.ts`), shared by shard verification (`verify.ts`) and the stream index
 * (`indexShards.ts`).
 *
 * - {@link ShardReadPool.run} takes a list of jobs and feeds them to `jobs` workers, one file per
 *   worker at a time — or, for small files (at most {@link BATCH_FILE_BYTES}), up to
 *   {@link BATCH_FILES} consecutive ones in one message, answered by one message: 100,000 tiny
 *   shards cost ~3,000 round trips instead of 100,000. Each finished job is
 *   reported through `onDone` in completion order.
 * - Progress: {@link ShardReadPool.bytesInFlight} (bytes of the files in hand read so far; a batch
 *   counts when it is done) and {@link ShardReadPool.running} (keys of the jobs in hand).
 * - Cancellation: abort the `signal`. Workers see a shared flag before every chunk (a few ms of
 *   work), drop the file in hand and reply `cancelled`; `run` resolves once every worker has
 *   replied, or after {@link CANCEL_GRACE_MS} for a worker stuck in a read (it is terminated).
 *   Jobs not finished are not reported.
 * - A worker that dies (crash, `exit`) reports its job (every job of its batch) as `unreadable` and
 *   is replaced, so the queue keeps draining.
 * - Warm workers (`keepWarm`): when a run ends, its idle workers are kept for the next run of
 *   this process (the extension host verifies and indexes many times) for {@link WARM_IDLE_MS},
 *   unreferenced (they never keep a process alive), at most {@link defaultJobs} of them. A
 *   one-run process (the CLI) does not keep them: their memory is freed before the run's end
 *   work (cache save, index prune), which keeps the peak down. Any run takes
 *   kept workers of the same script and chunk size. A kept worker has its code
 *   compiled and, once it has scanned, its stream-index kernel instantiated and optimised: a
 *   fresh worker costs ~30–60 ms of start-up and warm-up per run, which a run over a few big
 *   shards pays in full. {@link closeIdleReadWorkers} ends them at once.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ResourceLimits, Worker } from 'worker_threads';
import type { VerifyBatch, VerifyOutcome, VerifyTask, VerifyWorkerData, VerifyWorkerReply } from './workers/verifyWorker';

/** How long a cancelled run waits for a worker's reply before terminating it (ms). */
export const CANCEL_GRACE_MS = 750;
/** Files of at most this many bytes are sent to a worker several at a time (256 KiB). */
export const BATCH_FILE_BYTES = 256 * 1024;
/** Files per batch at most. */
export const BATCH_FILES = 64;
/** Bytes per batch at most (a batch is one uninterrupted piece of a worker's work; cancel waits for it). */
export const BATCH_BYTES = 4 * 1024 * 1024;
/**
 * Young-generation heap of a read worker (MB). V8's default lets it grow to ~34 MB per worker
 * while a run over 100,000 tiny shards allocates a little per shard (scan state, index entry
 * text): with two workers that alone put `verify` over 300 MB. The workers'
 * big buffers live outside the heap, so a small young generation costs nothing measurable.
 */
export const READ_WORKER_YOUNG_MB = 8;

/** Default pool size: the number of CPU cores (`os.availableParallelism()`). */
export function defaultJobs(): number {
  const n = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return Math.max(1, n || 1);
}

/**
 * Finds a worker bundle `dist/workers/<file>` for the pools of this folder (verify and index:
 * `verifyWorker.js`; search: `searchWorker.js`). The rule:
 * 1. `explicit` when given;
 * 2. `<from>/workers/<file>`: `dist/extension.js`, `dist/cli.js` and `dist/core.js` all live in
 *    `dist/`, and esbuild builds the workers to `dist/workers/`;
 * 3. otherwise `dist/workers/<file>` in the first folder up from `from` that holds it and a
 *    `package.json` (bundled tests in `out/test/unit` find the repository's `dist/` this way).
 * @param what how the error names the worker ("the hash worker").
 * @throws Error listing the places tried; run `node esbuild.js` first.
 */
export function resolveWorkerScript(file: string, what: string, explicit: string | undefined, from: string): string {
  if (explicit) return path.resolve(explicit);
  const tried: string[] = [];
  const beside = path.join(from, 'workers', file);
  tried.push(beside);
  if (fs.existsSync(beside)) return beside;
  for (let dir = path.resolve(from); ;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) {
      const candidate = path.join(dir, 'dist', 'workers', file);
      tried.push(candidate);
      if (fs.existsSync(candidate)) return candidate;
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error(`cannot find ${what} ${file} (tried ${tried.join(', ')}); run \`node esbuild.js\` to build dist/workers/.`);
}

/** What a pool hears from one of its workers. */
export interface PoolWorkerEvents<R> {
  /** A reply (the worker's `postMessage`). */
  onMessage(msg: R): void;
  /** The worker threw; `message` is the error's. */
  onError(message: string): void;
  /** The worker stopped (crash, `process.exit`, or `terminate()` by the pool). */
  onExit(code: number): void;
}

/**
 * Starts one worker of a pool (the shard read pool here, the search count pool): the script
 * from {@link resolveWorkerScript}, its `workerData`, and the pool's handlers; `resourceLimits`
 * as `new Worker` takes them (default: V8's).
 */
export function startPoolWorker<R>(
  workerFile: string,
  workerData: unknown,
  events: PoolWorkerEvents<R>,
  resourceLimits?: ResourceLimits,
): Worker {
  const worker = new Worker(workerFile, { workerData, resourceLimits });
  worker.on('message', (msg: R) => events.onMessage(msg));
  worker.on('error', (err: Error) => events.onError(err.message));
  worker.on('exit', (code) => events.onExit(code));
  return worker;
}

/** Terminates a pool's workers and waits for them (a worker that is already gone is fine). */
export async function stopPoolWorkers(workers: readonly Worker[]): Promise<void> {
  await Promise.all(workers.map((w) => w.terminate().catch(() => 0)));
}

/** One file to read. */
export interface ReadJob {
  /** The caller's key (e.g. the shard's index); reported back in `running` and `onDone`. */
  key: number;
  path: string;
  /** Size the file must have (bytes); any other size is reported without reading. */
  expectedSize: number;
  /** What to do with the bytes (see `VerifyTask`): hash, scan, or both. */
  hash: boolean;
  scan?: VerifyTask['scan'];
}

/** Options of a pool. */
export interface ShardReadPoolOptions {
  /** Worker threads (at least 1; capped by the number of jobs of a run). */
  jobs: number;
  /** The worker script (`dist/workers/verifyWorker.js`). */
  workerFile: string;
  /** Bytes per read. */
  chunkBytes: number;
  /** The stream-index kernel module for the workers (`indexKernelModule()`), when the jobs scan. */
  kernelModule?: WebAssembly.Module;

  signal?: AbortSignal;
  /** Test hook: after the first chunk of each job, the worker waits until the returned promise settles. */
  onFirstChunk?(key: number): void | Promise<void>;
  /** Keep the idle workers for the next run of this process (see the file header; default false: end them). */
  keepWarm?: boolean;
}

/** How long a read worker left idle by a run is kept for the next one (ms). */
export const WARM_IDLE_MS = 30_000;

/** A read worker and where its events go: the slot of the run using it, or nowhere while idle. */
interface ReadWorker {
  worker: Worker;
  control: Int32Array;
  /** `workerFile|chunkBytes`: only a run with the same script and buffers can reuse it. */
  kind: string;
  events?: PoolWorkerEvents<VerifyWorkerReply>;
  /** Ends the worker when it stayed idle for {@link WARM_IDLE_MS}. */
  idleTimer?: NodeJS.Timeout;
}

/** Idle read workers of this process, oldest first. */
const idleWorkers: ReadWorker[] = [];

/** Takes an idle worker of this kind, or undefined. */
function takeIdle(kind: string): ReadWorker | undefined {
  const i = idleWorkers.findIndex((w) => w.kind === kind);
  if (i < 0) return undefined;
  const [w] = idleWorkers.splice(i, 1);
  clearTimeout(w.idleTimer);
  w.worker.ref();
  return w;
}

/** Keeps a worker for the next run (or ends it when enough are kept already). */
function park(w: ReadWorker): void {
  w.events = undefined;
  if (idleWorkers.length >= defaultJobs()) {
    void w.worker.terminate();
    return;
  }
  w.worker.unref();
  w.idleTimer = setTimeout(() => {
    const i = idleWorkers.indexOf(w);
    if (i >= 0) idleWorkers.splice(i, 1);
    void w.worker.terminate();
  }, WARM_IDLE_MS);
  w.idleTimer.unref();
  idleWorkers.push(w);
}

/**
 * Ends the idle read workers kept for reuse (see the file header): before measuring a cold
 * start, or when the caller will not read again soon.
 * @returns how many were ended.
 */
export async function closeIdleReadWorkers(): Promise<number> {
  const all = idleWorkers.splice(0);
  for (const w of all) clearTimeout(w.idleTimer);
  await stopPoolWorkers(all.map((w) => w.worker));
  return all.length;
}

interface Slot {
  worker: Worker;
  control: Int32Array;
  /** The worker as the warm list knows it. */
  read: ReadWorker;
  /** The job (or batch of jobs) in hand; `bytes` read so far. */
  current?: { jobs: ReadJob[]; id: number; bytes: number };
  dead: boolean;
}

/** What a read worker is made with (a pool's options, or {@link prestartReadWorkers}'). */
type ReadWorkerSpec = Pick<ShardReadPoolOptions, 'workerFile' | 'chunkBytes' | 'kernelModule'>;

/** `workerFile|chunkBytes`: the kind of worker a pool with these options takes. */
function kindOf(spec: ReadWorkerSpec): string {
  return `${spec.workerFile}|${spec.chunkBytes}`;
}

/** Starts one read worker (not yet in a run, not in the idle list). */
function startReadWorker(spec: ReadWorkerSpec): ReadWorker {
  const shared = new SharedArrayBuffer(8);
  const data: VerifyWorkerData = { control: shared, chunkBytes: spec.chunkBytes, kernelModule: spec.kernelModule };
  const w = { control: new Int32Array(shared), kind: kindOf(spec) } as ReadWorker;
  w.worker = startPoolWorker<VerifyWorkerReply>(
    spec.workerFile,
    data,
    {
      onMessage: (msg) => w.events?.onMessage(msg),
      onError: (message) => w.events?.onError(message),
      onExit: (code) => {
        // An idle worker that stops (its timer, or a crash) leaves the warm list.
        const i = idleWorkers.indexOf(w);
        if (i >= 0) {
          idleWorkers.splice(i, 1);
          clearTimeout(w.idleTimer);
        }
        w.events?.onExit(code);
      },
    },
    { maxYoungGenerationSizeMb: READ_WORKER_YOUNG_MB },
  );
  return w;
}

/**
 * Starts read workers ahead of a run, into the idle list a run takes its workers from (see the
 * file header): a command that will read calls this first, so that the threads start (Node's
 * start-up of a thread, the worker bundle's compile, ~40–80 ms each) while its own thread parses
 * the manifest and the tokenizer, instead of after. Tops the idle workers of this kind up to
 * `jobs` (at most {@link defaultJobs}); like any idle worker they never keep the process alive
 * and end after {@link WARM_IDLE_MS} unused. A worker that cannot start is left to the run
 * (which reports it per job).
 * @param jobs workers the run will use.
 */
export function prestartReadWorkers(jobs: number, spec: ReadWorkerSpec): void {
  const kind = kindOf(spec);
  let have = idleWorkers.filter((w) => w.kind === kind).length;
  for (; have < Math.min(jobs, defaultJobs()); have++) {
    try {
      park(startReadWorker(spec));
    } catch {
      return;
    }
  }
}

/** The pool; one {@link run} at a time. */
export class ShardReadPool {
  private readonly slots: Slot[] = [];
  private queue: readonly ReadJob[] = [];
  private next = 0;
  private taskId = 0;
  private cancelled = false;
  private settled = false;
  private graceTimer?: NodeJS.Timeout;
  private resolveRun?: () => void;
  private onDone?: (job: ReadJob, outcome: Exclude<VerifyOutcome, { kind: 'cancelled' }>) => void;
  /**
   * When the first bytes of a run had been read and handled by a worker (`performance.now()` of
   * its first progress reply, or of a batch's reply); undefined until then.
   */
  firstDataAt?: number;

  constructor(private readonly opts: ShardReadPoolOptions) {
    this.cancelled = !!opts.signal?.aborted;
  }

  /** True once the signal fired. */
  get isCancelled(): boolean {
    return this.cancelled;
  }

  /** Keys of the jobs being read now. */
  running(): number[] {
    return this.slots.flatMap((s) => (s.current ? s.current.jobs.map((j) => j.key) : []));
  }

  /** Bytes read so far of the jobs in hand. */
  bytesInFlight(): number {
    return this.slots.reduce((n, s) => n + (s.current?.bytes ?? 0), 0);
  }

  /** Workers started by the last run. */
  get size(): number {
    return this.slots.length;
  }

  /**
   * Reads every job (or until cancelled), calling `onDone` for each finished one. Never rejects:
   * a worker that cannot start turns every job into an `unreadable` outcome.
   * @returns whether the signal fired during the run (jobs not reported through `onDone` did not finish).
   */
  async run(
    jobs: readonly ReadJob[],
    onDone: (job: ReadJob, outcome: Exclude<VerifyOutcome, { kind: 'cancelled' }>) => void,
  ): Promise<{ cancelled: boolean }> {
    this.queue = jobs;
    this.next = 0;
    this.onDone = onDone;
    this.settled = false;
    if (jobs.length === 0 || this.cancelled) return { cancelled: this.cancelled && jobs.length > 0 };
    const signal = this.opts.signal;
    const onAbort = () => this.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await new Promise<void>((resolve) => {
        this.resolveRun = resolve;
        const n = Math.max(1, Math.min(this.opts.jobs, jobs.length));
        try {
          for (let i = 0; i < n; i++) this.slots.push(this.spawn());
        } catch (err) {
          for (const j of jobs) onDone(j, { kind: 'unreadable', message: `cannot start a read worker: ${(err as Error).message}` });
          this.next = jobs.length;
          this.finishRun();
          return;
        }
        for (const s of [...this.slots]) this.dispatch(s);
        if (signal?.aborted) this.abort();
      });
    } finally {
      signal?.removeEventListener('abort', onAbort);
      for (const s of this.slots) {
        const reusable = !s.dead && !s.current;
        s.dead = true;
        // An idle worker is kept warm for the next run; one still busy (stuck after a cancel) is ended.
        if (reusable && this.opts.keepWarm) park(s.read);
        else void s.worker.terminate();
      }
    }
    return { cancelled: this.cancelled };
  }

  private finishRun(): void {
    if (this.settled) return;
    this.settled = true;
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.resolveRun?.();
  }

  private maybeDone(): void {
    if (this.settled) return;
    if (this.slots.some((s) => s.current && !s.dead)) return;
    if (!this.cancelled && this.next < this.queue.length) return;
    this.finishRun();
  }

  private dispatch(slot: Slot): void {
    if (this.cancelled || slot.dead || this.next >= this.queue.length) {
      this.maybeDone();
      return;
    }
    const hold = !!this.opts.onFirstChunk;
    const id = ++this.taskId;
    const jobs = [this.queue[this.next++]];
    // Small files travel together (not with the test hook, which pauses inside one file).
    if (!hold && jobs[0].expectedSize <= BATCH_FILE_BYTES) {
      let bytes = jobs[0].expectedSize;
      while (jobs.length < BATCH_FILES && this.next < this.queue.length) {
        const j = this.queue[this.next];
        if (j.expectedSize > BATCH_FILE_BYTES || bytes + j.expectedSize > BATCH_BYTES) break;
        jobs.push(j);
        bytes += j.expectedSize;
        this.next++;
      }
    }
    const task = (job: ReadJob, taskId: number): VerifyTask => ({
      type: 'hash',
      id: taskId,
      path: job.path,
      expectedSize: job.expectedSize,
      hash: job.hash,
      scan: job.scan,
      hold,
    });
    slot.current = { jobs, id, bytes: 0 };
    if (jobs.length === 1) slot.worker.postMessage(task(jobs[0], id));
    else slot.worker.postMessage({ type: 'batch', id, tasks: jobs.map((j) => task(j, id)) } satisfies VerifyBatch);
  }

  /** The job or batch in hand ended: one outcome per job, in order. */
  private complete(slot: Slot, outcomes: VerifyOutcome[]): void {
    const cur = slot.current;
    if (!cur) return;
    slot.current = undefined;
    cur.jobs.forEach((job, i) => {
      const outcome = outcomes[i] ?? { kind: 'cancelled' };
      if (outcome.kind !== 'cancelled') this.onDone?.(job, outcome);
    });
    this.dispatch(slot);
    this.maybeDone();
  }

  private abort(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    for (const s of this.slots) {
      Atomics.store(s.control, 0, 1);
      Atomics.add(s.control, 1, 1);
      Atomics.notify(s.control, 1);
    }
    this.graceTimer = setTimeout(() => {
      for (const s of this.slots)
        if (s.current) {
          s.dead = true;
          s.current = undefined;
          void s.worker.terminate();
        }
      this.maybeDone();
    }, CANCEL_GRACE_MS);
    this.maybeDone();
  }

  private spawn(): Slot {
    const kind = kindOf(this.opts);
    const slot = { dead: false } as Slot;
    const events: PoolWorkerEvents<VerifyWorkerReply> = {
      onMessage: (msg) => this.onMessage(slot, msg),
      onError: (message) => this.crashed(slot, message),
      onExit: (code) => {
        if (!this.settled) this.crashed(slot, `exit code ${code}`);
      },
    };
    const read = takeIdle(kind) ?? startReadWorker(this.opts);
    read.events = events;
    // A kept worker may carry the abort flag of the run that left it.
    Atomics.store(read.control, 0, this.cancelled ? 1 : 0);
    slot.read = read;
    slot.worker = read.worker;
    slot.control = read.control;
    return slot;
  }

  private onMessage(slot: Slot, msg: VerifyWorkerReply): void {
    const cur = slot.current;
    if (!cur || msg.id !== cur.id) return;
    if (this.firstDataAt === undefined && (msg.type === 'progress' || msg.type === 'batch-done')) this.firstDataAt = performance.now();
    if (msg.type === 'progress') cur.bytes = msg.bytes;
    else if (msg.type === 'held') {
      void Promise.resolve()
        .then(() => this.opts.onFirstChunk?.(cur.jobs[0].key))
        .catch(() => undefined)
        .then(() => {
          Atomics.add(slot.control, 1, 1);
          Atomics.notify(slot.control, 1);
        });
    } else if (msg.type === 'done') this.complete(slot, [msg.outcome]);
    else if (msg.type === 'batch-done') this.complete(slot, msg.outcomes);
  }

  private crashed(slot: Slot, why: string): void {
    if (slot.dead) return;
    slot.dead = true;
    const cur = slot.current;
    if (cur && !this.cancelled) {
      this.complete(
        slot,
        cur.jobs.map((j) => ({ kind: 'unreadable', message: `the read worker stopped while reading ${j.path}: ${why}` })),
      );
      const fresh = this.spawn();
      this.slots.push(fresh);
      this.dispatch(fresh);
    } else {
      slot.current = undefined;
      this.maybeDone();
    }
  }
}
