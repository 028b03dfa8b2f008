/**
 * The one writer every `token-shards` command prints its results through (standard output).
 *
 * - Back-pressure: {@link OutputWriter.write} resolves when the stream accepted the text (after
 *   `drain` when its buffer was full), so outputs of any size run in bounded memory.
 * - Errors: the first write error (ENOSPC on a full disk, EIO, `> /dev/full`…) is kept; the next
 *   write and {@link OutputWriter.finish} throw {@link OutputError} ("cannot write to standard
 *   output: …"), which the CLI turns into one stderr line and exit 1 — a truncated output never
 *   ends with exit 0.
 * - EPIPE (the reader went away: `… | head -1`) is not an error: writes then reject with
 *   {@link OutputClosed}, which the CLI ends quietly with exit 0 (what `cat` and `grep` do).
 */
import type { Writable } from 'stream';

/** A failed write to the output; exit 1. The message names the output and the system's reason. */
export class OutputError extends Error {
  constructor(
    readonly output: string,
    readonly reason: NodeJS.ErrnoException,
  ) {
    super(`cannot write to ${output}: ${describeWriteError(reason)}`);
    this.name = 'OutputError';
  }
}

/** The reader of the output went away (EPIPE); the command stops and the CLI exits 0 without a word. */
export class OutputClosed extends Error {
  readonly code = 'EPIPE';
  constructor(readonly output: string) {
    super(`${output} was closed by its reader`);
    this.name = 'OutputClosed';
  }
}

/** "no space left on device (ENOSPC)": the reason of a write error, without Node's "write" suffix. */
function describeWriteError(e: NodeJS.ErrnoException): string {
  const words: Record<string, string> = {
    ENOSPC: 'no space left on device',
    EDQUOT: 'disk quota exceeded',
    EIO: 'input/output error',
    EFBIG: 'file too large',
    EBADF: 'it is not open for writing',
    EROFS: 'read-only file system',
  };
  const reason =
    (e.code && words[e.code]) ??
    String(e.message ?? e)
      .replace(/^[A-Z]+: /, '')
      .replace(/, write$/, '');
  return e.code ? `${reason} (${e.code})` : reason;
}

/** The stream an {@link OutputWriter} writes to: a Node writable, with `isTTY` when it is a terminal. */
export type OutputStream = NodeJS.WritableStream & {
  write(s: string | Uint8Array, cb?: (err?: Error | null) => void): boolean;
  isTTY?: boolean;
};

/**
 * Wraps a writable stream (process.stdout, or a test's PassThrough). Listens to its `error`
 * event for its whole life, so an error is never an unhandled exception and never lost.
 */
export class OutputWriter {
  private failure?: NodeJS.ErrnoException;
  private closed = false;
  private last: Promise<void> = Promise.resolve();

  /**
   * @param stream where results go.
   * @param name how messages name it ("standard output").
   */
  constructor(
    readonly stream: OutputStream,
    readonly name = 'standard output',
  ) {
    stream.on('error', (e: NodeJS.ErrnoException) => this.fail(e));
  }

  /** True when the stream is a terminal. */
  get isTTY(): boolean {
    return this.stream.isTTY === true;
  }

  /** The stream as a Node `Writable`, for code that pipes into a sink (export); its errors are still seen here. */
  get writable(): Writable {
    return this.stream as unknown as Writable;
  }

  private fail(e: NodeJS.ErrnoException): void {
    if (e.code === 'EPIPE' || (e.code === 'ERR_STREAM_DESTROYED' && this.closed)) this.closed = true;
    else this.failure ??= e;
  }

  /** Throws when an earlier write failed ({@link OutputError}) or the reader went away ({@link OutputClosed}). */
  check(): void {
    if (this.failure) throw new OutputError(this.name, this.failure);
    if (this.closed) throw new OutputClosed(this.name);
  }

  /** The error a command should end with when the output failed (undefined while it has not). */
  error(): OutputError | OutputClosed | undefined {
    try {
      this.check();
      return undefined;
    } catch (e) {
      return e as OutputError | OutputClosed;
    }
  }

  /**
   * Queues `s` without waiting (short outputs: one line, a table). A failure is kept and thrown
   * by the next {@link write}, {@link check} or {@link finish}.
   */
  put(s: string | Uint8Array): void {
    if (this.failure || this.closed) return;
    this.last = new Promise<void>((resolve) => {
      this.stream.write(s, (err) => {
        if (err) this.fail(err as NodeJS.ErrnoException);
        resolve();
      });
    });
  }

  /**
   * Writes `s`, waiting while the stream's buffer is full.
   * @throws OutputError when this or an earlier write failed; OutputClosed after EPIPE.
   */
  async write(s: string | Uint8Array): Promise<void> {
    this.check();
    let full = false;
    const done = new Promise<void>((resolve) => {
      full = !this.stream.write(s, (err) => {
        if (err) this.fail(err as NodeJS.ErrnoException);
        resolve();
      });
    });
    this.last = done;
    // Waiting for the callback of every write would cost a turn of the event loop per write; a
    // full buffer is waited for (the callback comes once the data left the buffer).
    if (full) await done;
    this.check();
  }

  /**
   * Waits until everything written so far was handed to the system.
   * @throws OutputError when a write failed; OutputClosed after EPIPE.
   */
  async finish(): Promise<void> {
    await this.settle();
    this.check();
  }

  /**
   * Waits until the writes handed to the stream so far are done and their errors, if any, are
   * kept (never throws). Writes nobody waited for (a sink fed through {@link writable}, as export
   * does) may still be in flight and their errors arrive on a later tick; a command whose reads
   * never leave the microtask queue (the CLI reads synchronously) can end before them. An empty
   * write queued behind them calls back once they are done; a failure among them is kept.
   */
  async settle(): Promise<void> {
    await this.last;
    const w = this.stream as unknown as Writable;
    if (!this.failure && !this.closed && !w.destroyed) await new Promise<void>((resolve) => this.stream.write('', () => resolve()));
    await new Promise<void>((resolve) => setImmediate(resolve));
    // A stream that failed keeps its error (`errored`) before it emits it (fs streams: after closing the file).
    if (w.errored) this.fail(w.errored as NodeJS.ErrnoException);
  }
}
