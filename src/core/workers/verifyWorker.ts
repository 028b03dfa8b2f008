/**
 * `worker_threads` entry of shard hash verification and of the stream index, built by esbuild to
 * `dist/workers/verifyWorker.js` and driven by the pool in `src/core/shardPool.ts` (used by
 * `verify.ts` and `indexShards.ts`; see `verify.ts` for how the core finds this file).
 *
 * One worker reads one shard at a time: it opens the file, checks its size against the expected
 * size (`4 × num_tokens`), streams it with large sequential reads (`chunkBytes`, 8 MiB by default;
 * two buffers so the next read runs in libuv's thread pool while this thread works on the previous
 * chunk) through sha256 (`hash`) and/or the stream-index scanner (`scan`, `scan.ts`) —
 * one buffer, both consumers — then checks that the file was not grown, truncated, modified,
 * deleted or replaced while it was read. A scan's result never leaves the worker: the worker
 * writes the shard's stream-index entry itself (`IndexStore.saveSync`, the folder and parameters
 * key given with the task) and replies only whether that worked, so the main thread of a run over
 * 100,000 tiny shards handles no scan arrays, JSON or file writes.
 *
 * Control (no message round trip, so it works while the worker is busy): `workerData.control`
 * is a `SharedArrayBuffer` seen as an `Int32Array`:
 * - `[0]` abort flag: the parent stores 1; the worker checks it before every chunk and replies
 *   `{ kind: 'cancelled' }` for the task in hand (at most one chunk, a few ms, later).
 * - `[1]` gate generation for the test hook `hold`: after the first chunk of a task with
 *   `hold: true` the worker posts `held` and sleeps (`Atomics.wait`) until the parent bumps it.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import { parentPort, workerData } from 'worker_threads';
import { FileIdentity, identityOfStats } from '../fileIdentity';
import { IndexStore, lookOf } from '../streamIndex/entryStore';
import { IndexKernel, makeIndexKernel } from '../streamIndex/kernel';
import { ScanParams, ShardScanner } from '../streamIndex/scan';
import { LayoutDecoder } from '../formats/decode';
import type { TokenLayout } from '../formats/types';

/** Data given to each verify worker at creation. */
export interface VerifyWorkerData {
  /** Shared control words, see the file header: `[0]` abort flag, `[1]` hold-gate generation. */
  control: SharedArrayBuffer;
  /** Bytes per sequential read (the worker allocates two buffers of this size). */
  chunkBytes: number;
  /** The stream-index kernel compiled by the parent (`indexKernelModule()`); absent: the worker builds its own. */
  kernelModule?: WebAssembly.Module;
}

/** Default `sliceBytes` of a scan request: 256 KiB (fits a core's L2 cache; an 8 MiB chunk does not). */
export const DEFAULT_SLICE_BYTES = 256 * 1024;

/** Where a worker writes the stream-index entries of the files it scans (see `IndexStore`). */
export interface IndexTarget {
  /** The store's folder (absolute). */
  dir: string;
  /** `scanParamsKey` of the scan parameters. */
  paramsKey: string;
}

/** Parent → worker: read one file, hashing it and/or scanning it for the stream index. */
export interface VerifyTask {
  type: 'hash';
  /** Task id chosen by the parent, echoed in every reply. */
  id: number;
  /** Absolute path of the shard file. */
  path: string;
  /** Bytes the manifest promises (`4 × num_tokens`); any other size is reported without hashing. */
  expectedSize: number;
  /** Compute the sha256 (default true). */
  hash?: boolean;
  /**
   * Scan the first `numTokens` tokens for the stream index and write the entry into `store`
   * (absent: no scan). One object per shard size is enough (it carries no per-file field).
   */
  scan?: ScanParams & {
    numTokens: number;
    store: IndexTarget;
    /**
     * How the file stores its tokens (the format layer's layout: header, dtype, extents); absent:
     * raw little-endian uint32 from byte 0. The hash still covers every byte of the file.
     */
    layout?: TokenLayout;
    /**
     * When the task hashes too: bytes hashed, then scanned, at a time (default
     * {@link DEFAULT_SLICE_BYTES}), so the scan reads what sha256 has just brought into the core's
     * cache instead of reading a whole chunk from memory again; the chunk size = hash a whole
     * chunk, then scan it.
     */
    sliceBytes?: number;
  };
  /** Test hook: pause after the first chunk until the parent releases the gate. */
  hold?: boolean;
}

/**
 * Parent → worker: several small files, read one after the other (each as a {@link VerifyTask};
 * no `progress` messages), answered by one `batch-done` with an outcome per file in order. Once
 * the abort flag is set, the files not started are `cancelled`.
 */
export interface VerifyBatch {
  type: 'batch';
  /** Batch id chosen by the parent, echoed in the reply. */
  id: number;
  tasks: VerifyTask[];
}

/** How a task ended. Sizes in bytes; `identity` is the file's (device, inode, size, mtime, ctime) when it was opened. */
export type VerifyOutcome =
  /**
   * The whole file was read (hashed when asked, scanned when asked) and did not change meanwhile.
   * A scanned file's index entry was written (`indexed`) or could not be (`indexError`: one
   * sentence naming the folder).
   */
  | { kind: 'read'; sha256?: string; size: number; identity: FileIdentity; indexed?: boolean; indexError?: string }
  /** The file does not exist. */
  | { kind: 'missing'; message: string }
  /** The file exists but its size differs from the expected size (not hashed). */
  | { kind: 'size-mismatch'; size: number }
  /** The file changed while it was read (grew, shrank, modified, deleted, replaced). */
  | { kind: 'changed'; message: string; size?: number }
  /** The file could not be opened or read (permissions, I/O error, not a regular file). */
  | { kind: 'unreadable'; message: string }
  /** The abort flag was set before the file was finished; nothing may be recorded for it. */
  | { kind: 'cancelled' };

/** Worker → parent messages. */
export type VerifyWorkerReply =
  /** Cumulative bytes of the task hashed so far (sent after every chunk). */
  | { type: 'progress'; id: number; bytes: number }
  /** Test hook: the worker is paused after the first chunk of task `id`. */
  | { type: 'held'; id: number }
  /** The task ended. */
  | { type: 'done'; id: number; outcome: VerifyOutcome }
  /** Every file of a batch ended (one outcome per task, same order). */
  | { type: 'batch-done'; id: number; outcomes: VerifyOutcome[] };

const data = workerData as VerifyWorkerData;
const control = new Int32Array(data.control);
const chunkBytes = Math.max(4096, data.chunkBytes | 0);
// Whole multiples of 4 bytes (a chunk is a Uint32Array view).
const chunkSize = Math.floor(chunkBytes / 4) * 4;
let buffers: Buffer[] = [Buffer.allocUnsafeSlow(chunkSize), Buffer.allocUnsafeSlow(chunkSize)];
let kernel: IndexKernel | undefined;
/** The index stores written by this worker, by folder (each makes its folder once; no records kept). */
const stores = new Map<string, IndexStore>();

function storeOf(dir: string): IndexStore {
  let store = stores.get(dir);
  if (!store) stores.set(dir, (store = new IndexStore(dir, { remember: false })));
  return store;
}

/**
 * The stream-index kernel, made on the first scan task; from then on both read buffers live in its
 * memory, so the scanner walks the very bytes sha256 reads, without a copy.
 */
function scanKernel(): IndexKernel {
  if (!kernel) {
    kernel = makeIndexKernel(2 * chunkSize, 'auto', data.kernelModule);
    buffers = [kernel.area.subarray(0, chunkSize), kernel.area.subarray(chunkSize, 2 * chunkSize)];
  }
  return kernel;
}

/** One slice of a read buffer: its bytes (for sha256) and the same bytes as token ids (for the scan). */
interface Slice {
  bytes: Buffer;
  ids: Uint32Array;
}

/** The full slices of each read buffer for one slice size, made once (not two views per slice per read). */
let slices: { size: number; of: Slice[][] } | undefined;

/**
 * The slices covering the first `n` bytes of read buffer `which`, `size` bytes each (a multiple of
 * 4); the last one is shorter when `n` is not a multiple of `size`. Full slices are cached.
 */
function slicesOf(which: number, n: number, size: number): Slice[] {
  if (slices?.size !== size || slices.of[0][0]?.bytes.buffer !== buffers[0].buffer) {
    const make = (buf: Buffer): Slice[] => {
      const out: Slice[] = [];
      for (let o = 0; o + size <= buf.length; o += size) {
        const bytes = buf.subarray(o, o + size);
        out.push({ bytes, ids: new Uint32Array(bytes.buffer, bytes.byteOffset, size / 4) });
      }
      return out;
    };
    slices = { size, of: [make(buffers[0]), make(buffers[1])] };
  }
  const full = slices.of[which];
  const whole = Math.floor(n / size);
  if (whole * size === n && whole <= full.length) return whole === full.length ? full : full.slice(0, whole);
  const out = full.slice(0, whole);
  const bytes = buffers[which].subarray(whole * size, n);
  out.push({ bytes, ids: new Uint32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 4)) });
  return out;
}

function aborted(): boolean {
  return Atomics.load(control, 0) !== 0;
}

/** True while a batch is read: its files report no progress (the batch-done reply is the progress). */
let quiet = false;

function post(msg: VerifyWorkerReply): void {
  if (quiet && msg.type === 'progress') return;
  parentPort!.postMessage(msg);
}

/**
 * File operations, synchronous when `sync`: a file of at most one chunk is read with blocking calls
 * (this is a worker thread; no overlap to gain), which takes the libuv round trips out of the
 * per-file cost (what 100,000 tiny shards are made of). Bigger files use async reads so the next
 * chunk is read while this one is hashed.
 */
function readAt(fd: number, buf: Buffer, length: number, position: number, sync = false): Promise<number> {
  if (sync) {
    try {
      return Promise.resolve(fs.readSync(fd, buf, 0, length, position));
    } catch (err) {
      return Promise.reject(err);
    }
  }
  return new Promise((resolve, reject) => {
    fs.read(fd, buf, 0, length, position, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

function fstat(fd: number, sync = false): Promise<fs.BigIntStats> {
  if (sync) {
    try {
      return Promise.resolve(fs.fstatSync(fd, { bigint: true }));
    } catch (err) {
      return Promise.reject(err);
    }
  }
  return new Promise((resolve, reject) => fs.fstat(fd, { bigint: true }, (err, st) => (err ? reject(err) : resolve(st))));
}

/** An fs error as one phrase, led by its code once ("EACCES: permission denied, open '…'"; Node's messages usually start with the code already). */
function errText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const message = String(e.message ?? err);
  return e.code && !message.startsWith(e.code) ? `${e.code}: ${message}` : message;
}

/**
 * Feeds byte chunks to a scanner as whole little-endian uint32 tokens, carrying the 1–3 bytes of a
 * token split by a short read, and stopping after `numTokens` tokens (trailing bytes of a lone
 * file are not tokens).
 */
class TokenFeeder {
  private carry = Buffer.alloc(4);
  private carried = 0;
  private fed = 0;
  constructor(
    private readonly scanner: ShardScanner,
    private readonly numTokens: number,
  ) {}

  /** Feeds one slice; its `ids` view is used as is when no token is split across the previous slice. */
  pushSlice(slice: Slice): void {
    if (this.carried === 0 && slice.bytes.length % 4 === 0) this.emit(slice.ids);
    else this.push(slice.bytes, slice.bytes.length);
  }

  push(buf: Buffer, n: number): void {
    let off = 0;
    if (this.carried > 0) {
      const take = Math.min(4 - this.carried, n);
      buf.copy(this.carry, this.carried, 0, take);
      this.carried += take;
      off = take;
      if (this.carried < 4) return;
      this.carried = 0;
      this.emit(new Uint32Array(this.carry.buffer.slice(this.carry.byteOffset, this.carry.byteOffset + 4)));
    }
    const whole = Math.floor((n - off) / 4);
    if (whole > 0) {
      const ids =
        off === 0
          ? new Uint32Array(buf.buffer, buf.byteOffset, whole)
          : new Uint32Array(buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + off + whole * 4));
      this.emit(ids);
    }
    const rest = n - off - whole * 4;
    if (rest > 0) {
      buf.copy(this.carry, 0, off + whole * 4, n);
      this.carried = rest;
    }
  }

  private emit(ids: Uint32Array): void {
    const room = this.numTokens - this.fed;
    if (room <= 0) return;
    const part = ids.length > room ? ids.subarray(0, room) : ids;
    this.scanner.push(part);
    this.fed += part.length;
  }
}

/** Feeds a scanner the ids of a file of another format, decoded from the same bytes that are hashed. */
class LayoutFeeder {
  private readonly decoder: LayoutDecoder;
  private fed = 0;
  constructor(scanner: ShardScanner, layout: TokenLayout, numTokens: number) {
    this.decoder = new LayoutDecoder(layout, numTokens, (ids) => {
      const room = numTokens - this.fed;
      if (room <= 0) return;
      const part = ids.length > room ? ids.subarray(0, room) : ids;
      scanner.push(part);
      this.fed += part.length;
    });
  }

  pushSlice(slice: Slice): void {
    this.decoder.push(slice.bytes);
  }

  push(buf: Buffer, n: number): void {
    this.decoder.push(buf.subarray(0, n));
  }
}

/** Reads (hashes and/or scans) one file; never throws (every failure becomes an outcome). */
async function hashFile(task: VerifyTask): Promise<VerifyOutcome> {
  const file = task.path;
  const sync = task.expectedSize <= chunkSize;
  let fd: number;
  try {
    // Non-blocking open: a FIFO listed as a shard would otherwise block this worker (and its
    // libuv thread) until some process writes to it; the fstat below then rejects it.
    const flags = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);
    fd = sync
      ? fs.openSync(file, flags)
      : await new Promise<number>((resolve, reject) => fs.open(file, flags, (err, f) => (err ? reject(err) : resolve(f))));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing', message: `${file} does not exist` };
    return { kind: 'unreadable', message: `cannot open ${file}: ${errText(err)}` };
  }
  try {
    const st0 = await fstat(fd, sync);
    if (!st0.isFile()) return { kind: 'unreadable', message: `${file} is not a regular file` };
    if (Number(st0.size) !== task.expectedSize) return { kind: 'size-mismatch', size: Number(st0.size) };
    const hash = task.hash === false ? undefined : crypto.createHash('sha256');
    const scanner = task.scan ? new ShardScanner(task.scan, task.scan.numTokens, scanKernel()) : undefined;
    const layout = task.scan?.layout;
    const feeder = scanner
      ? layout
        ? new LayoutFeeder(scanner, layout, task.scan!.numTokens)
        : new TokenFeeder(scanner, task.scan!.numTokens)
      : undefined;
    const size = task.expectedSize;
    let pos = 0;
    let which = 0;
    let pending: Promise<number> | undefined = size > 0 ? readAt(fd, buffers[0], Math.min(chunkSize, size), 0, sync) : undefined;
    let first = true;
    while (pending) {
      const n = await pending;
      pending = undefined;
      if (n === 0) {
        return { kind: 'changed', message: `${file} shrank while it was read: only ${pos} of ${size} bytes could be read` };
      }
      const cur = which;
      const buf = buffers[cur];
      const next = pos + n;
      // Start the next read into the other buffer before hashing this one.
      if (next < size && !aborted()) {
        which ^= 1;
        pending = readAt(fd, buffers[which], Math.min(chunkSize, size - next), next);
      }
      if (hash && feeder) {
        // Whole tokens (the scanner takes whole uint32 ids from each slice).
        const sliceSize = Math.max(4096, Math.floor((task.scan!.sliceBytes ?? DEFAULT_SLICE_BYTES) / 4) * 4);
        // Hash and scan slice by slice, so the scan reads what sha256 has just brought into the cache.
        for (const slice of slicesOf(cur, n, sliceSize)) {
          hash.update(slice.bytes);
          feeder.pushSlice(slice);
        }
      } else {
        hash?.update(n === buf.length ? buf : buf.subarray(0, n));
        feeder?.push(buf, n);
      }
      pos = next;
      post({ type: 'progress', id: task.id, bytes: pos });
      if (first && task.hold) {
        const gen = Atomics.load(control, 1);
        post({ type: 'held', id: task.id });
        Atomics.wait(control, 1, gen);
      }
      first = false;
      if (aborted()) {
        if (pending) await pending.catch(() => 0);
        return { kind: 'cancelled' };
      }
    }
    const digest = hash?.digest('hex');
    // Did the file change while we read it? Compare the open handle with its state at open time,
    // and the path with the handle (deleted or replaced by a new file under the same name).
    const st1 = await fstat(fd, sync);
    let st2: fs.BigIntStats;
    try {
      st2 = sync ? fs.statSync(file, { bigint: true }) : await fs.promises.stat(file, { bigint: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        return { kind: 'changed', message: `${file} was deleted while it was being verified` };
      }
      return { kind: 'unreadable', message: `cannot stat ${file} after reading it: ${errText(err)}` };
    }
    if (st2.ino !== st0.ino || st2.dev !== st0.dev) {
      return { kind: 'changed', message: `${file} was replaced by another file while it was being verified`, size: Number(st2.size) };
    }
    if (st1.size !== st0.size) {
      const verb = st1.size > st0.size ? 'grew' : 'shrank';
      return {
        kind: 'changed',
        message: `${file} ${verb} from ${st0.size} to ${st1.size} bytes while it was being verified`,
        size: Number(st1.size),
      };
    }
    if (st1.mtimeNs !== st0.mtimeNs || st1.ctimeNs !== st0.ctimeNs) {
      return {
        kind: 'changed',
        message: `${file} was modified while it was being verified (${st1.mtimeNs !== st0.mtimeNs ? 'mtime' : 'ctime'} changed)`,
        size: Number(st1.size),
      };
    }
    const identity = identityOfStats(st0);
    const outcome: VerifyOutcome = { kind: 'read', sha256: digest, size: Number(st0.size), identity };
    if (scanner) {
      const target = task.scan!.store;
      try {
        const scan = scanner.finish();
        storeOf(target.dir).saveSync(identity, target.paramsKey, scan, lookOf(scan.lookSample, task.scan!.vocabSize, scan.maxId), file);
        outcome.indexed = true;
      } catch (err) {
        outcome.indexError = `cannot write the stream index in ${target.dir}: ${errText(err)}`;
      }
    }
    return outcome;
  } catch (err) {
    return { kind: 'unreadable', message: `cannot read ${file}: ${errText(err)}` };
  } finally {
    if (sync) {
      try {
        fs.closeSync(fd);
      } catch {
        /* already closed */
      }
    } else fs.close(fd, () => undefined);
  }
}

/** Reads a batch's files in order (see {@link VerifyBatch}); never throws. */
async function readBatch(batch: VerifyBatch): Promise<VerifyOutcome[]> {
  const outcomes: VerifyOutcome[] = [];
  quiet = true;
  try {
    for (const task of batch.tasks) {
      if (aborted()) outcomes.push({ kind: 'cancelled' });
      else
        outcomes.push(
          await hashFile(task).catch((err: unknown): VerifyOutcome => ({
            kind: 'unreadable',
            message: `cannot read ${task.path}: ${errText(err)}`,
          })),
        );
    }
  } finally {
    quiet = false;
  }
  return outcomes;
}

parentPort!.on('message', (task: VerifyTask | VerifyBatch) => {
  if (task.type === 'batch') {
    void readBatch(task).then((outcomes) =>
      parentPort!.postMessage({ type: 'batch-done', id: task.id, outcomes } satisfies VerifyWorkerReply),
    );
    return;
  }
  if (task.type !== 'hash') return;
  if (aborted()) {
    post({ type: 'done', id: task.id, outcome: { kind: 'cancelled' } });
    return;
  }
  void hashFile(task).then(
    (outcome) => parentPort!.postMessage({ type: 'done', id: task.id, outcome } satisfies VerifyWorkerReply),
    (err: unknown) =>
      post({ type: 'done', id: task.id, outcome: { kind: 'unreadable', message: `cannot read ${task.path}: ${errText(err)}` } }),
  );
});
