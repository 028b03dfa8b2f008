/**
 * `worker_threads` entry of shard hash verification, built by esbuild to
 * `dist/workers/verifyWorker.js` and driven by `src/core/verify.ts` (see its header for how the
 * core finds this file).
 *
 * One worker hashes one shard at a time: it opens the file, checks its size against the
 * manifest's `4 × num_tokens`, streams it through sha256 with large sequential reads
 * (`chunkBytes`, 8 MiB by default; two buffers so the next read runs in libuv's thread pool while
 * this thread hashes the previous chunk), then checks that the file was not grown, truncated,
 * modified, deleted or replaced while it was read.
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

/** Data given to each verify worker at creation. */
export interface VerifyWorkerData {
  /** Shared control words, see the file header: `[0]` abort flag, `[1]` hold-gate generation. */
  control: SharedArrayBuffer;
  /** Bytes per sequential read (the worker allocates two buffers of this size). */
  chunkBytes: number;
}

/** Parent → worker: hash one file. */
export interface VerifyTask {
  type: 'hash';
  /** Task id chosen by the parent, echoed in every reply. */
  id: number;
  /** Absolute path of the shard file. */
  path: string;
  /** Bytes the manifest promises (`4 × num_tokens`); any other size is reported without hashing. */
  expectedSize: number;
  /** Test hook: pause after the first chunk until the parent releases the gate. */
  hold?: boolean;
}

/** How a task ended. Sizes in bytes; `identity` is the file's (device, inode, size, mtime, ctime) when it was opened. */
export type VerifyOutcome =
  /** The whole file was read and hashed and did not change meanwhile. */
  | { kind: 'hashed'; sha256: string; size: number; identity: FileIdentity }
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
  | { type: 'done'; id: number; outcome: VerifyOutcome };

const data = workerData as VerifyWorkerData;
const control = new Int32Array(data.control);
const chunkBytes = Math.max(4096, data.chunkBytes | 0);
const buffers = [Buffer.allocUnsafe(chunkBytes), Buffer.allocUnsafe(chunkBytes)];

function aborted(): boolean {
  return Atomics.load(control, 0) !== 0;
}

function post(msg: VerifyWorkerReply): void {
  parentPort!.postMessage(msg);
}

function readAt(fd: number, buf: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.read(fd, buf, 0, length, position, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

function fstat(fd: number): Promise<fs.BigIntStats> {
  return new Promise((resolve, reject) => fs.fstat(fd, { bigint: true }, (err, st) => (err ? reject(err) : resolve(st))));
}

/** An fs error as one phrase, led by its code once ("EACCES: permission denied, open '…'"; Node's messages usually start with the code already). */
function errText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const message = String(e.message ?? err);
  return e.code && !message.startsWith(e.code) ? `${e.code}: ${message}` : message;
}

/** Hashes one file; never throws (every failure becomes an outcome). */
async function hashFile(task: VerifyTask): Promise<VerifyOutcome> {
  const file = task.path;
  let fd: number;
  try {
    // Non-blocking open: a FIFO listed as a shard would otherwise block this worker (and its
    // libuv thread) until some process writes to it; the fstat below then rejects it.
    fd = await new Promise<number>((resolve, reject) => fs.open(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0),
      (err, f) => (err ? reject(err) : resolve(f))));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing', message: `${file} does not exist` };
    return { kind: 'unreadable', message: `cannot open ${file}: ${errText(err)}` };
  }
  try {
    const st0 = await fstat(fd);
    if (!st0.isFile()) return { kind: 'unreadable', message: `${file} is not a regular file` };
    if (Number(st0.size) !== task.expectedSize) return { kind: 'size-mismatch', size: Number(st0.size) };
    const hash = crypto.createHash('sha256');
    const size = task.expectedSize;
    let pos = 0;
    let which = 0;
    let pending: Promise<number> | undefined = size > 0 ? readAt(fd, buffers[0], Math.min(chunkBytes, size), 0) : undefined;
    let first = true;
    while (pending) {
      const n = await pending;
      pending = undefined;
      if (n === 0) {
        return { kind: 'changed', message: `${file} shrank while it was read: only ${pos} of ${size} bytes could be read` };
      }
      const buf = buffers[which];
      const next = pos + n;
      // Start the next read into the other buffer before hashing this one.
      if (next < size && !aborted()) {
        which ^= 1;
        pending = readAt(fd, buffers[which], Math.min(chunkBytes, size - next), next);
      }
      hash.update(n === buf.length ? buf : buf.subarray(0, n));
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
    const digest = hash.digest('hex');
    // Did the file change while we read it? Compare the open handle with its state at open time,
    // and the path with the handle (deleted or replaced by a new file under the same name).
    const st1 = await fstat(fd);
    let st2: fs.BigIntStats;
    try {
      st2 = await fs.promises.stat(file, { bigint: true });
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
      return { kind: 'changed', message: `${file} ${verb} from ${st0.size} to ${st1.size} bytes while it was being verified`, size: Number(st1.size) };
    }
    if (st1.mtimeNs !== st0.mtimeNs || st1.ctimeNs !== st0.ctimeNs) {
      return { kind: 'changed', message: `${file} was modified while it was being verified (${st1.mtimeNs !== st0.mtimeNs ? 'mtime' : 'ctime'} changed)`, size: Number(st1.size) };
    }
    return { kind: 'hashed', sha256: digest, size: Number(st0.size), identity: identityOfStats(st0) };
  } catch (err) {
    return { kind: 'unreadable', message: `cannot read ${file}: ${errText(err)}` };
  } finally {
    fs.close(fd, () => undefined);
  }
}

parentPort!.on('message', (task: VerifyTask) => {
  if (task.type !== 'hash') return;
  if (aborted()) {
    post({ type: 'done', id: task.id, outcome: { kind: 'cancelled' } });
    return;
  }
  void hashFile(task).then((outcome) => post({ type: 'done', id: task.id, outcome }));
});
