/**
 * TokenStream: the global token stream of a dataset (or one lone `.u32` file) as one array of
 * uint32 token ids addressed by **global token offset**. Reads are ranged (`FileHandle.read` at a
 * byte position), never whole files, and may cross shard edges. File handles are pooled and
 * closed after {@link HANDLE_IDLE_MS} without use.
 *
 * Every storage format reads through here: a segment's {@link TokenLayout} (from the format layer,
 * `formats/`) says where its tokens start (a header), how wide they are (uint16 is widened in
 * place, int32 keeps its bits) and, when they are not one run, where each run is. A segment
 * without a layout is the dataset card's raw uint32 from byte 0 and reads straight into the
 * output buffer.
 *
 * Units: every offset and count in this module is in **tokens** unless the name says bytes.
 * Offsets reach 5.2e10 tokens (2.1e11 bytes): plain JS numbers (exact to 2^53), never 32-bit ints.
 */
import { constants as bufferConstants } from 'buffer';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BYTES_PER_TOKEN } from './manifest';
import { DataError, RangeRequestError } from './errors';
import { fmt } from './units';
import { fileKind } from './safeRead';
import { TokenLayout } from './formats/types';

/** How long an unused file handle stays open, in milliseconds. */
export const HANDLE_IDLE_MS = 5_000;

/**
 * Most tokens one {@link TokenStream.read} returns: the largest Node `Buffer` (`buffer.constants.MAX_LENGTH`
 * bytes, 4 GiB on 64-bit Node 20) divided by 4 bytes per token. Bigger ranges are read in pieces.
 */
export const MAX_READ_TOKENS = Math.floor(bufferConstants.MAX_LENGTH / BYTES_PER_TOKEN);

/** One file's place in the stream. */
export interface StreamSegment {
  /** Absolute path of the `.u32` file. */
  path: string;
  /** Global token offset of the file's first token. */
  startToken: number;
  /** Tokens in the file that belong to the stream. */
  numTokens: number;
  /** How the file stores its tokens; absent: raw little-endian uint32 from byte 0 (the dataset card's `.u32`). */
  layout?: TokenLayout;
  /** 1-based line of the file's entry in `shard_manifest.jsonl`, for messages (absent for a lone file). */
  line?: number;
}

/** One contiguous read: `n` tokens at byte `position` of a file into output token `at`. */
interface ByteRun {
  position: number;
  n: number;
  at: number;
}

/** Global tokens `[from, to)` that two segments both claim (an overlapping manifest). */
interface Overlap {
  from: number;
  to: number;
  /** The earlier segment (by start) and the later one that starts inside it. */
  first: StreamSegment;
  second: StreamSegment;
}

/** Where a global token offset lives. */
export interface SegmentLocation {
  /** Index into {@link TokenStream.segments}. */
  segment: number;
  /** Token offset inside that file (0-based). */
  localToken: number;
}

const LITTLE_ENDIAN_HOST = os.endianness() === 'LE';

/**
 * Largest uint16 read scratch buffer a stream keeps for reuse, in tokens (8 MiB): a scan's chunk
 * (`search/scan.ts` DEFAULT_CHUNK_TOKENS), so a scan over uint16 data allocates no buffer per read.
 */
const MAX_KEPT_SCRATCH_TOKENS = 4 << 20;

/** Most file handles a stream keeps open between reads (busy ones are never closed). */
export const MAX_POOLED_HANDLES = 64;

interface PooledHandle {
  handle: Promise<fs.promises.FileHandle>;
  timer?: NodeJS.Timeout;
  busy: number;
}

/** A file descriptor kept open by the synchronous path ({@link TokenStream.readSync}). */
interface PooledFd {
  fd: number;
  timer?: NodeJS.Timeout;
}

/** Options of a {@link TokenStream}. */
export interface TokenStreamOptions {
  /**
   * The stream's owner runs on a thread that may block (a worker thread, the CLI process; never
   * the extension host thread): {@link TokenStream.read} then reads with the synchronous path
   * ({@link TokenStream.readSync}: `pread` on this thread, no libuv thread-pool hop per read) and
   * resolves with the same ids and rejects with the same errors. Default false: every read goes
   * through the thread pool and the calling thread never waits on a file.
   */
  blocking?: boolean;
}

/** One read planned by {@link TokenStream}: a byte run of a segment. */
interface Piece {
  seg: StreamSegment;
  run: ByteRun;
}

/** A read-only view of uint32 tokens across contiguous files. */
export class TokenStream {
  /** Total tokens in the stream (sum of segment sizes). */
  readonly totalTokens: number;
  private readonly pool = new Map<string, PooledHandle>();
  private readonly starts: number[];
  /** Per segment with extents: the local token offset where each extent starts (built on first use). */
  private readonly extentStarts = new Map<number, Float64Array>();
  /** Ranges two segments both claim, by `from` (empty for a valid manifest). */
  private readonly overlaps: Overlap[] = [];
  /** Reusable read buffers of uint16 runs ({@link runTarget}). */
  private readonly scratch: Uint16Array[] = [];
  /** Descriptors of the synchronous path, by path (closed after {@link HANDLE_IDLE_MS} without use). */
  private readonly fds = new Map<string, PooledFd>();
  /** True when {@link read} takes the synchronous path ({@link TokenStreamOptions.blocking}). */
  readonly blocking: boolean;

  /**
   * @param segments files sorted by `startToken`, contiguous from 0 (the manifest validation
   *   reports gaps and overlaps; over a gapped manifest, offsets in a hole throw DataError and the
   *   listed files still read at their own offsets; offsets two files claim throw DataError too).
   * @param opts {@link TokenStreamOptions}: whether the owner's thread may block on reads.
   */
  constructor(
    readonly segments: readonly StreamSegment[],
    opts: TokenStreamOptions = {},
  ) {
    this.blocking = !!opts.blocking;
    this.starts = segments.map((s) => s.startToken);
    const last = segments[segments.length - 1];
    this.totalTokens = last ? last.startToken + last.numTokens : 0;
    // The segment reaching furthest so far: a later one starting before its end overlaps it.
    let reach: StreamSegment | undefined;
    for (const s of segments) {
      if (s.numTokens === 0) continue;
      if (reach && s.startToken < reach.startToken + reach.numTokens)
        this.overlaps.push({
          from: s.startToken,
          to: Math.min(reach.startToken + reach.numTokens, s.startToken + s.numTokens),
          first: reach,
          second: s,
        });
      if (!reach || s.startToken + s.numTokens > reach.startToken + reach.numTokens) reach = s;
    }
  }

  /**
   * A stream over one `.u32` file with no manifest: offsets are the file's own (local).
   * Trailing bytes that do not make a whole token are left out (see {@link trailingBytes}).
   * @throws DataError when the file cannot be stat'ed or is not a regular file (a folder, FIFO or device).
   */
  static async fromFile(
    file: string,
    opts: TokenStreamOptions = {},
  ): Promise<{ stream: TokenStream; sizeBytes: number; trailingBytes: number }> {
    let st: fs.Stats;
    try {
      st = await fs.promises.stat(file);
    } catch (err) {
      throw new DataError(`${file}: cannot open: ${(err as Error).message}`, file);
    }
    if (!st.isFile()) throw notRegularFile(file, st);
    const numTokens = Math.floor(st.size / BYTES_PER_TOKEN);
    return {
      stream: new TokenStream([{ path: path.resolve(file), startToken: 0, numTokens }], opts),
      sizeBytes: st.size,
      trailingBytes: st.size % BYTES_PER_TOKEN,
    };
  }

  /**
   * Finds the segment holding global token `offset`.
   * @throws RangeRequestError when `offset` is outside `[0, totalTokens)`;
   *   DataError when no segment holds it (a gap in the manifest, or a stream that does not start
   *   at 0): there is no data at that offset, and reading "the next file" instead would silently
   *   shift every offset after it; DataError naming both manifest lines when two segments claim
   *   it (an overlap: which file holds the token is unknown).
   */
  locate(offset: number): SegmentLocation {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset >= this.totalTokens) {
      throw new RangeRequestError(`token offset ${fmt(offset)} is outside the stream [0, ${fmt(this.totalTokens)})`);
    }
    if (this.overlaps.length) this.checkOverlap(offset, offset + 1);
    let lo = 0,
      hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    // Normally the last segment starting at or before `offset` holds it. In a broken manifest
    // (empty or overlapping entries) an earlier one may; none at all means a hole.
    for (let i = lo; i >= 0; i--) {
      const seg = this.segments[i];
      if (seg.startToken <= offset && offset < seg.startToken + seg.numTokens) return { segment: i, localToken: offset - seg.startToken };
    }
    throw this.holeError(offset, lo);
  }

  /**
   * The global token range `[start, end)` of the segment (file) holding `offset`.
   * @throws as {@link locate}.
   */
  fileRangeAt(offset: number): [number, number] {
    const seg = this.segments[this.locate(offset).segment];
    return [seg.startToken, seg.startToken + seg.numTokens];
  }

  /** Throws the DataError when a token of `[start, end)` is claimed by two segments (see {@link locate}). */
  private checkOverlap(start: number, end: number): void {
    for (const o of this.overlaps) {
      if (end <= o.from || start >= o.to) continue;
      const offset = Math.max(start, o.from);
      const name = (s: StreamSegment) => `${path.basename(s.path)}${s.line ? ` (manifest line ${s.line})` : ''}`;
      throw new DataError(
        `token ${fmt(offset)} is claimed by two shards: ${name(o.second)} starts at token ${fmt(o.second.startToken)}, inside ` +
          `${name(o.first)} (tokens ${fmt(o.first.startToken)}–${fmt(o.first.startToken + o.first.numTokens - 1)}); ` +
          `the manifest's shards overlap on tokens [${fmt(o.from)}, ${fmt(o.to)}); expected each to start where the previous ends.`,
        o.second.path,
      );
    }
  }

  /** The DataError for a global offset no segment holds; `lo` = last segment starting at or before it. */
  private holeError(offset: number, lo: number): DataError {
    const before = this.segments.slice(0, lo + 1).filter((s) => s.startToken <= offset);
    const prev = before.length ? before.reduce((a, b) => (a.startToken + a.numTokens >= b.startToken + b.numTokens ? a : b)) : undefined;
    const next = this.segments.find((s) => s.startToken > offset);
    const from = prev ? prev.startToken + prev.numTokens : 0;
    const to = next ? next.startToken : this.totalTokens;
    const where = prev
      ? `after ${path.basename(prev.path)}${next ? `, before ${path.basename(next.path)}` : ''}`
      : `before the first shard${next ? `, ${path.basename(next.path)}` : ''}`;
    return new DataError(
      `token ${fmt(offset)} is in no shard: the manifest lists no file for tokens [${fmt(from)}, ${fmt(to)}) (${where}); ` +
        'expected shards that tile the stream from token 0 with no gap.',
      prev?.path ?? next?.path,
    );
  }

  /**
   * Reads global tokens `[start, start + count)`, crossing file edges. On a
   * {@link TokenStreamOptions.blocking} stream this is {@link readSync} (same ids, same errors,
   * as a promise).
   * @param start global token offset (≥ 0).
   * @param count number of tokens; the range must lie inside the stream, and fit one buffer
   *   ({@link MAX_READ_TOKENS}).
   * @param into optional buffer of at least `count` tokens to read into (long scans reuse their
   *   buffers instead of allocating one per read).
   * @returns a fresh `Uint32Array` of length `count` (host byte order), or `into.subarray(0, count)`.
   * @throws RangeRequestError for a range outside the stream or a count past {@link MAX_READ_TOKENS};
   *   DataError when a file is shorter than the manifest says (short read), unreadable or not a
   *   regular file, or when part of the range is in no shard (a gap in the manifest).
   */
  async read(start: number, count: number, into?: Uint32Array): Promise<Uint32Array> {
    if (this.blocking) return this.readSync(start, count, into);
    const pieces = this.plan(start, count);
    const out = outputFor(count, into);
    await Promise.all(pieces.map((p) => this.readPiece(p, out)));
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

  /**
   * Synchronous {@link read}: `pread`s on the calling thread, for worker threads, the CLI process
   * and small look-ups inside a synchronous scan (search reads a few tokens of context around a
   * match); never for long reads on the extension host thread. The same plan of byte runs, the
   * same widening and the same errors as {@link read}; its file descriptors are pooled as the
   * async handles are (closed after {@link HANDLE_IDLE_MS} without use, or by {@link close}).
   * @param into optional buffer of at least `count` tokens to read into.
   * @throws as {@link read}.
   */
  readSync(start: number, count: number, into?: Uint32Array): Uint32Array {
    const pieces = this.plan(start, count);
    const out = outputFor(count, into);
    for (const p of pieces) {
      const t = this.runTarget(p, out);
      try {
        const fd = this.fdOf(p.seg.path);
        const { bytes } = t;
        try {
          for (let done = 0; done < bytes.length;) {
            const got = fs.readSync(fd, bytes, done, bytes.length - done, p.run.position + done);
            if (got === 0) throw shortRead(p.seg, p.run.position + done);
            done += got;
          }
        } finally {
          this.idleFd(p.seg.path);
        }
        t.finish();
      } finally {
        t.release();
      }
    }
    return out;
  }

  /**
   * The byte runs of global tokens `[start, start + count)`, every piece planned before any read
   * starts (a hole found halfway must not leave reads running).
   * @throws as {@link read} for the range checks, holes and overlaps.
   */
  private plan(start: number, count: number): Piece[] {
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeRequestError(`token count ${count} is not a non-negative integer`);
    if (!Number.isSafeInteger(start) || start < 0 || start + count > this.totalTokens) {
      throw new RangeRequestError(`tokens [${fmt(start)}, ${fmt(start + count)}) are outside the stream [0, ${fmt(this.totalTokens)})`);
    }
    if (count > MAX_READ_TOKENS) {
      throw new RangeRequestError(
        `${fmt(count)} tokens is more than one read can hold (${fmt(MAX_READ_TOKENS)} tokens = ${fmt(MAX_READ_TOKENS * BYTES_PER_TOKEN)} bytes); read in pieces`,
      );
    }
    const pieces: Piece[] = [];
    if (count === 0) return pieces;
    if (this.overlaps.length) this.checkOverlap(start, start + count);
    for (let pos = start; pos < start + count;) {
      // Located per piece (not "the next segment"), so a hole in the manifest is an error, never a read at a wrong position.
      const { segment, localToken } = this.locate(pos);
      const seg = this.segments[segment];
      const n = Math.min(seg.numTokens - localToken, start + count - pos);
      for (const run of this.runsOf(segment, localToken, n, pos - start)) pieces.push({ seg, run });
      pos += n;
    }
    return pieces;
  }

  /**
   * The byte runs of local tokens `[local, local + n)` of segment `segment`, to land at output
   * token `at` onward: one run unless the layout has extents.
   */
  private runsOf(segment: number, local: number, n: number, at: number): ByteRun[] {
    const layout = this.segments[segment].layout;
    if (!layout) return [{ position: local * BYTES_PER_TOKEN, n, at }];
    const width = layout.dtype === 'uint16' ? 2 : 4;
    const extents = layout.extents;
    if (!extents) return [{ position: layout.headerBytes + local * width, n, at }];
    const { byteOffsets, numTokens: counts } = extents;
    let starts = this.extentStarts.get(segment);
    if (!starts) {
      starts = new Float64Array(counts.length);
      for (let i = 1; i < counts.length; i++) starts[i] = starts[i - 1] + counts[i - 1];
      this.extentStarts.set(segment, starts);
    }
    let lo = 0,
      hi = counts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= local) lo = mid;
      else hi = mid - 1;
    }
    const runs: ByteRun[] = [];
    for (let e = lo, t = local; t < local + n; e++) {
      if (e >= counts.length)
        throw new DataError(
          `${this.segments[segment].path}: its extents hold fewer than the ${fmt(local + n)} tokens listed for it`,
          this.segments[segment].path,
        );
      const inExtent = t - starts[e];
      const take = Math.min(counts[e] - inExtent, local + n - t);
      if (take <= 0) continue;
      runs.push({ position: byteOffsets[e] + inExtent * width, n: take, at: at + (t - local) });
      t += take;
    }
    return runs;
  }

  private async readPiece(p: Piece, out: Uint32Array): Promise<void> {
    const t = this.runTarget(p, out);
    try {
      await this.readFully(p.seg, p.run, t.bytes);
      t.finish();
    } finally {
      t.release();
    }
  }

  /** Reads the bytes of `run` of `seg` into `bytes` whole. @throws DataError on a short read. */
  private async readFully(seg: StreamSegment, run: ByteRun, bytes: Buffer): Promise<void> {
    await this.withHandle(seg.path, async (fh) => {
      let done = 0;
      while (done < bytes.length) {
        const { bytesRead } = await fh.read(bytes, done, bytes.length - done, run.position + done);
        if (bytesRead === 0) throw shortRead(seg, run.position + done);
        done += bytesRead;
      }
    });
  }

  /**
   * Where a piece's bytes are read to and how they become ids, for both paths. 4-byte tokens:
   * the run's own slots of `out`, byte-swapped after on a big-endian host. uint16 on a
   * little-endian host: a scratch buffer of this stream, widened into `out` in one native pass
   * (`TypedArray.set` between two buffers): reading into `out` itself and widening in place makes
   * `set` clone the source first (ECMA-262 SetTypedArrayFromTypedArray, same buffer). Scratch
   * buffers are kept for reuse, one per read in flight; `release` gives one back.
   */
  private runTarget(p: Piece, out: Uint32Array): { bytes: Buffer; finish: () => void; release: () => void } {
    const { seg, run } = p;
    if (seg.layout?.dtype !== 'uint16' || !LITTLE_ENDIAN_HOST) {
      return { bytes: runBytes(seg, run, out), finish: () => finishRun(seg, run, out), release: () => undefined };
    }
    let scratch = this.scratch.pop();
    if (!scratch || scratch.length < run.n) scratch = new Uint16Array(Math.max(run.n, scratch?.length ?? 0));
    const s = scratch;
    return {
      bytes: Buffer.from(s.buffer, 0, run.n * 2),
      finish: () => out.subarray(run.at, run.at + run.n).set(s.subarray(0, run.n)),
      // Kept up to a scan chunk's size: a huge one-off read does not pin its buffer.
      release: () => {
        if (s.length <= MAX_KEPT_SCRATCH_TOKENS && this.scratch.length < 4) this.scratch.push(s);
      },
    };
  }

  /**
   * The pooled descriptor of `file` for the synchronous path, opened (regular files only) on
   * first use; its idle timer is stopped until {@link idleFd}.
   * @throws DataError when it cannot be opened or is not a regular file.
   */
  private fdOf(file: string): number {
    const e = this.fds.get(file);
    if (e) {
      if (e.timer) clearTimeout(e.timer);
      e.timer = undefined;
      return e.fd;
    }
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
    } catch (err) {
      throw new DataError(`${file}: cannot open: ${(err as Error).message}`, file);
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw notRegularFile(file, st);
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
    this.fds.set(file, { fd });
    if (this.fds.size > MAX_POOLED_HANDLES) {
      for (const [f, x] of this.fds) {
        if (this.fds.size <= MAX_POOLED_HANDLES) break;
        if (f !== file) this.closeFd(f, x);
      }
    }
    return fd;
  }

  /** Starts the idle timer of a pooled descriptor after a synchronous read. */
  private idleFd(file: string): void {
    const e = this.fds.get(file);
    if (!e) return;
    if (e.timer) clearTimeout(e.timer);
    e.timer = setTimeout(() => this.closeFd(file, e), HANDLE_IDLE_MS);
    e.timer.unref?.();
  }

  private closeFd(file: string, e: PooledFd): void {
    if (this.fds.get(file) !== e) return;
    this.fds.delete(file);
    if (e.timer) clearTimeout(e.timer);
    try {
      fs.closeSync(e.fd);
    } catch {
      /* already closed */
    }
  }

  private async withHandle<T>(file: string, fn: (fh: fs.promises.FileHandle) => Promise<T>): Promise<T> {
    let entry = this.pool.get(file);
    if (!entry) {
      const handle = openRegularFile(file).catch((err: Error) => {
        this.pool.delete(file);
        throw err instanceof DataError ? err : new DataError(`${file}: cannot open: ${err.message}`, file);
      });
      entry = { handle, busy: 0 };
      this.pool.set(file, entry);
      if (this.pool.size > MAX_POOLED_HANDLES) this.closeIdleHandles();
    }
    const e = entry;
    if (e.timer) {
      clearTimeout(e.timer);
      e.timer = undefined;
    }
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

  /**
   * Closes idle handles, oldest first, until at most {@link MAX_POOLED_HANDLES} stay open: a scan
   * over 100,000 tiny shards would otherwise hold every file it read in the last
   * HANDLE_IDLE_MS open and run out of file descriptors (EMFILE).
   */
  private closeIdleHandles(): void {
    for (const [file, e] of this.pool) {
      if (this.pool.size <= MAX_POOLED_HANDLES) return;
      if (e.busy > 0) continue;
      if (e.timer) clearTimeout(e.timer);
      this.closeHandle(file, e);
    }
  }

  private closeHandle(file: string, e: PooledHandle): void {
    if (e.busy > 0 || this.pool.get(file) !== e) return;
    this.pool.delete(file);
    e.handle.then((fh) => fh.close()).catch(() => undefined);
  }

  /** Number of file handles currently open, of both paths (for tests and diagnostics). */
  get openHandles(): number {
    return this.pool.size + this.fds.size;
  }

  /** Closes every pooled handle and descriptor. The stream stays usable: later reads reopen files. */
  async close(): Promise<void> {
    for (const [file, e] of [...this.fds]) this.closeFd(file, e);
    const entries = [...this.pool.entries()];
    this.pool.clear();
    await Promise.all(
      entries.map(async ([, e]) => {
        if (e.timer) clearTimeout(e.timer);
        try {
          await (await e.handle).close();
        } catch {
          /* already reported on open */
        }
      }),
    );
  }
}

/**
 * The bytes a run reads into: the run's own slots of `out` for 4-byte tokens; for uint16, the
 * first half of those slots ({@link finishRun} widens them in place, from the end backwards).
 */
function runBytes(seg: StreamSegment, run: ByteRun, out: Uint32Array): Buffer {
  const width = seg.layout?.dtype === 'uint16' ? 2 : 4;
  return Buffer.from(out.buffer, out.byteOffset + run.at * BYTES_PER_TOKEN, run.n * width);
}

/**
 * The output of a read of `count` tokens: `into.subarray(0, count)` when it is large enough, else
 * a fresh buffer (not zero-filled: every element is overwritten by the reads).
 */
function outputFor(count: number, into: Uint32Array | undefined): Uint32Array {
  if (into && into.length >= count) return into.subarray(0, count);
  // A large allocUnsafe Buffer owns its ArrayBuffer at offset 0 (4-byte aligned).
  const raw = count * BYTES_PER_TOKEN > 4096 ? Buffer.allocUnsafe(count * BYTES_PER_TOKEN) : Buffer.alloc(count * BYTES_PER_TOKEN);
  return raw.byteOffset % BYTES_PER_TOKEN === 0 ? new Uint32Array(raw.buffer, raw.byteOffset, count) : new Uint32Array(count);
}

/**
 * Turns the bytes of a finished run into host-order uint32 ids: uint16 widened in place (token i
 * of the run sits at byte 2i and goes to byte 4i; on a big-endian host going from the last token
 * back, so no write lands on a token not yet read), 4-byte tokens byte-swapped on a big-endian
 * host, else untouched.
 */
function finishRun(seg: StreamSegment, run: ByteRun, out: Uint32Array): void {
  const at = run.at;
  const n = run.n;
  if (seg.layout?.dtype === 'uint16') {
    if (LITTLE_ENDIAN_HOST) {
      // TypedArray.prototype.set copies a source that shares the target's buffer before
      // converting (ECMA-262 SetTypedArrayFromTypedArray): one native widening pass, ~7× a JS loop.
      out.subarray(at, at + n).set(new Uint16Array(out.buffer, out.byteOffset + at * BYTES_PER_TOKEN, n));
    } else {
      const bytes = new Uint8Array(out.buffer, out.byteOffset + at * BYTES_PER_TOKEN, n * 2);
      for (let i = n - 1; i >= 0; i--) out[at + i] = bytes[2 * i] | (bytes[2 * i + 1] << 8);
    }
    return;
  }
  if (!LITTLE_ENDIAN_HOST) {
    for (let i = at; i < at + n; i++) {
      const v = out[i];
      out[i] = (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;
    }
  }
}

/** The DataError for a file that ends before a run's bytes (the same on both read paths). */
function shortRead(seg: StreamSegment, position: number): DataError {
  const listed = seg.layout ? 'its format lists' : 'the manifest lists';
  return new DataError(
    `${seg.path}: short read at byte ${fmt(position)}${!seg.layout ? ` (token ${fmt(Math.floor(position / BYTES_PER_TOKEN))})` : ''}: ` +
      `the file ends before the ${fmt(seg.numTokens)} tokens ${listed}.`,
    seg.path,
  );
}

/**
 * Opens a file for reading only if it is a regular file. The open is non-blocking
 * (`O_NONBLOCK`, where the platform has it) so a FIFO listed as a shard fails at once instead of
 * waiting forever for a writer; regular files read the same either way.
 * @throws DataError for a folder, FIFO, socket or device; the fs error (ENOENT, EACCES…) otherwise.
 */
async function openRegularFile(file: string): Promise<fs.promises.FileHandle> {
  const fh = await fs.promises.open(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notRegularFile(file, st);
    return fh;
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw err;
  }
}

/** The DataError for a path that exists but is not a regular file, naming what it is. */
function notRegularFile(file: string, st: fs.Stats): DataError {
  return new DataError(`${file}: is ${fileKind(st)}; expected a regular file of raw uint32 tokens`, file);
}
