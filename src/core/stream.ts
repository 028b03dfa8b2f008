/**
 * TokenStream: the global token stream of a dataset (or one lone `.u32` file) as one array of
 * uint32 token ids addressed by **global token offset**. Reads are ranged (`FileHandle.read` at a
 * byte position), never whole files, and may cross shard edges. File handles are pooled and
 * closed after {@link HANDLE_IDLE_MS} without use.
 *
 * Units: every offset and count in this module is in **tokens** unless the name says bytes.
 * Offsets reach 5.2e10 tokens (2.1e11 bytes): plain JS numbers (exact to 2^53), never 32-bit ints.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BYTES_PER_TOKEN } from './manifest';
import { DataError, RangeRequestError, fmt } from './errors';

/** How long an unused file handle stays open, in milliseconds. */
export const HANDLE_IDLE_MS = 5_000;

/** One file's place in the stream. */
export interface StreamSegment {
  /** Absolute path of the `.u32` file. */
  path: string;
  /** Global token offset of the file's first token. */
  startToken: number;
  /** Tokens in the file that belong to the stream. */
  numTokens: number;
}

/** Where a global token offset lives. */
export interface SegmentLocation {
  /** Index into {@link TokenStream.segments}. */
  segment: number;
  /** Token offset inside that file (0-based). */
  localToken: number;
}

const LITTLE_ENDIAN_HOST = os.endianness() === 'LE';

interface PooledHandle { handle: Promise<fs.promises.FileHandle>; timer?: NodeJS.Timeout; busy: number }

/** A read-only view of uint32 tokens across contiguous files. */
export class TokenStream {
  /** Total tokens in the stream (sum of segment sizes). */
  readonly totalTokens: number;
  private readonly pool = new Map<string, PooledHandle>();
  private readonly starts: number[];

  /**
   * @param segments files sorted by `startToken`, contiguous from 0 (the manifest validation
   *   reports gaps; a stream over a gapped manifest reads the listed files back to back).
   */
  constructor(readonly segments: readonly StreamSegment[]) {
    this.starts = segments.map((s) => s.startToken);
    const last = segments[segments.length - 1];
    this.totalTokens = last ? last.startToken + last.numTokens : 0;
  }

  /**
   * A stream over one `.u32` file with no manifest: offsets are the file's own (local).
   * Trailing bytes that do not make a whole token are left out (see {@link trailingBytes}).
   * @throws DataError when the file cannot be stat'ed.
   */
  static async fromFile(file: string): Promise<{ stream: TokenStream; sizeBytes: number; trailingBytes: number }> {
    let st: fs.Stats;
    try {
      st = await fs.promises.stat(file);
    } catch (err) {
      throw new DataError(`${file}: cannot open: ${(err as Error).message}`, file);
    }
    const numTokens = Math.floor(st.size / BYTES_PER_TOKEN);
    return {
      stream: new TokenStream([{ path: path.resolve(file), startToken: 0, numTokens }]),
      sizeBytes: st.size,
      trailingBytes: st.size % BYTES_PER_TOKEN,
    };
  }

  /**
   * Finds the segment holding global token `offset`.
   * @throws RangeRequestError when `offset` is outside `[0, totalTokens)`.
   */
  locate(offset: number): SegmentLocation {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset >= this.totalTokens) {
      throw new RangeRequestError(`token offset ${fmt(offset)} is outside the stream [0, ${fmt(this.totalTokens)})`);
    }
    let lo = 0, hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= offset) lo = mid; else hi = mid - 1;
    }
    return { segment: lo, localToken: offset - this.starts[lo] };
  }

  /**
   * Reads global tokens `[start, start + count)`, crossing file edges.
   * @param start global token offset (≥ 0).
   * @param count number of tokens; the range must lie inside the stream.
   * @returns a fresh `Uint32Array` of length `count` (host byte order).
   * @throws RangeRequestError for a range outside the stream;
   *   DataError when a file is shorter than the manifest says (short read) or unreadable.
   */
  async read(start: number, count: number): Promise<Uint32Array> {
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeRequestError(`token count ${count} is not a non-negative integer`);
    if (!Number.isSafeInteger(start) || start < 0 || start + count > this.totalTokens) {
      throw new RangeRequestError(`tokens [${fmt(start)}, ${fmt(start + count)}) are outside the stream [0, ${fmt(this.totalTokens)})`);
    }
    if (count === 0) return new Uint32Array(0);
    // Every element is overwritten by the reads below, so skip zero-filling: a large
    // allocUnsafe Buffer owns its ArrayBuffer at offset 0 (4-byte aligned).
    const raw = count * BYTES_PER_TOKEN > 4096 ? Buffer.allocUnsafe(count * BYTES_PER_TOKEN) : Buffer.alloc(count * BYTES_PER_TOKEN);
    const out = raw.byteOffset % BYTES_PER_TOKEN === 0
      ? new Uint32Array(raw.buffer, raw.byteOffset, count)
      : new Uint32Array(count);
    let { segment } = this.locate(start);
    let pos = start;
    const jobs: Promise<void>[] = [];
    while (pos < start + count) {
      const seg = this.segments[segment];
      const local = pos - seg.startToken;
      const n = Math.min(seg.numTokens - local, start + count - pos);
      jobs.push(this.readInto(seg, local, out, pos - start, n));
      pos += n;
      segment++;
    }
    await Promise.all(jobs);
    return out;
  }

  /**
   * Reads the range `[start, start+count)` clipped to the stream (never throws for a range that
   * runs past the end; returns fewer tokens instead). Convenience for views near the end.
   */
  async readClipped(start: number, count: number): Promise<Uint32Array> {
    const s = Math.max(0, Math.min(start, this.totalTokens));
    const e = Math.max(s, Math.min(start + count, this.totalTokens));
    return this.read(s, e - s);
  }

  private async readInto(seg: StreamSegment, localToken: number, out: Uint32Array, outToken: number, n: number): Promise<void> {
    const bytes = Buffer.from(out.buffer, out.byteOffset + outToken * BYTES_PER_TOKEN, n * BYTES_PER_TOKEN);
    const position = localToken * BYTES_PER_TOKEN;
    await this.withHandle(seg.path, async (fh) => {
      let done = 0;
      while (done < bytes.length) {
        const { bytesRead } = await fh.read(bytes, done, bytes.length - done, position + done);
        if (bytesRead === 0) {
          throw new DataError(
            `${seg.path}: short read at byte ${fmt(position + done)} (token ${fmt(localToken + Math.floor(done / BYTES_PER_TOKEN))}): ` +
            `the file ends before the ${fmt(seg.numTokens)} tokens the manifest lists.`, seg.path);
        }
        done += bytesRead;
      }
    });
    if (!LITTLE_ENDIAN_HOST) {
      for (let i = 0; i < n; i++) {
        const v = out[outToken + i];
        out[outToken + i] = ((v & 0xff) << 24 | (v & 0xff00) << 8 | (v >>> 8) & 0xff00 | v >>> 24) >>> 0;
      }
    }
  }

  private async withHandle<T>(file: string, fn: (fh: fs.promises.FileHandle) => Promise<T>): Promise<T> {
    let entry = this.pool.get(file);
    if (!entry) {
      const handle = fs.promises.open(file, 'r').catch((err: Error) => {
        this.pool.delete(file);
        throw new DataError(`${file}: cannot open: ${err.message}`, file);
      });
      entry = { handle, busy: 0 };
      this.pool.set(file, entry);
    }
    const e = entry;
    if (e.timer) { clearTimeout(e.timer); e.timer = undefined; }
    e.busy++;
    try {
      return await fn(await e.handle);
    } finally {
      e.busy--;
      if (e.busy === 0 && this.pool.get(file) === e) {
        e.timer = setTimeout(() => this.closeHandle(file, e), HANDLE_IDLE_MS);
        e.timer.unref?.();
      }
    }
  }

  private closeHandle(file: string, e: PooledHandle): void {
    if (e.busy > 0 || this.pool.get(file) !== e) return;
    this.pool.delete(file);
    e.handle.then((fh) => fh.close()).catch(() => undefined);
  }

  /** Number of file handles currently open (for tests and diagnostics). */
  get openHandles(): number {
    return this.pool.size;
  }

  /** Closes every pooled handle. The stream stays usable: later reads reopen files. */
  async close(): Promise<void> {
    const entries = [...this.pool.entries()];
    this.pool.clear();
    await Promise.all(entries.map(async ([, e]) => {
      if (e.timer) clearTimeout(e.timer);
      try { await (await e.handle).close(); } catch { /* already reported on open */ }
    }));
  }
}
