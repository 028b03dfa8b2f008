/**
 * Reading a metadata file (a manifest, `manifest.json`, `verification.json`, a `tokenizer.json`,
 * a `count` part, a text to encode) without trusting what is at the path: it must be a regular
 * file, and no larger than a stated limit.
 *
 * Why: opening a FIFO blocks until a writer comes (and a thread blocked in `open` keeps the
 * process from exiting, so Ctrl-C did nothing); `/dev/zero` never ends; a multi-GB file read
 * whole fails with "Cannot create a string longer than 0x1fffffe8 characters" naming nothing.
 * So: `stat` first (it never blocks), refuse anything that is not a regular file, open with
 * `O_NONBLOCK` (a FIFO swapped in after the stat still cannot block) and check the opened file
 * again with `fstat`, then read at most `maxBytes` (+1, to see that there is more).
 */
import * as fs from 'fs';
import { DataError } from './errors';
import { fmt } from './units';

/** What a non-regular file is, for messages: "a folder", "a FIFO (named pipe)", "a device", "a socket". */
export function fileKind(st: fs.Stats): string {
  return st.isDirectory()
    ? 'a folder'
    : st.isFIFO()
      ? 'a FIFO (named pipe)'
      : st.isSocket()
        ? 'a socket'
        : st.isCharacterDevice() || st.isBlockDevice()
          ? 'a device'
          : 'not a regular file';
}

/** A path that is not a regular file, or is larger than its limit. A DataError naming the file. */
export class UnreadableInputError extends DataError {
  constructor(
    message: string,
    file: string,
    /** Why: `not-regular` (a folder, FIFO, device, socket) or `too-large`. */
    readonly reason: 'not-regular' | 'too-large',
  ) {
    super(message, file);
    this.name = 'UnreadableInputError';
  }
}

/** Limits (bytes) of the metadata files, with the reason for each. */
export const READ_LIMITS = {
  /** shard_manifest.jsonl: its text must fit one JavaScript string (0x1fffffe8 UTF-16 units); 512 MiB is about 3.5 million lines. */
  manifest: 512 * 1024 * 1024,
  /** manifest.json, verification.json, tokenizer_config.json: a few keys; 16 MiB is far more than any real one. */
  sideFile: 16 * 1024 * 1024,
  /** tokenizer.json: dolma2's is 7 MB; the biggest public ones (250k-id vocabularies) are under 40 MB. */
  tokenizer: 128 * 1024 * 1024,
  /** A `count --json` part: 400 buckets × 10,000 terms of counts and shares (about 25 bytes each) is about 100 MB. */
  countPart: 256 * 1024 * 1024,
} as const;

/**
 * Checks that `file` is a regular file no larger than `maxBytes`, without opening it.
 * @param what what the file should be, for the message ("a tokenizer.json").
 * @returns its stats.
 * @throws the `stat` error as is (ENOENT: callers say "no such file" their way);
 *   UnreadableInputError for a folder, FIFO, device or socket, or a file over `maxBytes`.
 */
export async function statRegularFile(file: string, what: string, maxBytes: number): Promise<fs.Stats> {
  const st = await fs.promises.stat(file);
  checkStats(file, st, what, maxBytes);
  return st;
}

function checkStats(file: string, st: fs.Stats, what: string, maxBytes: number): void {
  if (!st.isFile()) throw new UnreadableInputError(`${file}: is ${fileKind(st)}; expected ${what} (a regular file)`, file, 'not-regular');
  if (st.size > maxBytes)
    throw new UnreadableInputError(
      `${file}: ${fmt(st.size)} bytes is more than the ${fmt(maxBytes)} bytes read for ${what}`,
      file,
      'too-large',
    );
}

/**
 * Reads a regular file of at most `maxBytes` bytes (see the module comment).
 * @param what what the file should be, for messages ("the shard manifest").
 * @returns the bytes.
 * @throws the system error of `stat`/`open`/`read` (ENOENT, EACCES…, unchanged);
 *   UnreadableInputError when it is not a regular file or is (or grows) larger than `maxBytes`.
 */
export async function readRegularFile(file: string, what: string, maxBytes: number): Promise<Buffer> {
  await statRegularFile(file, what, maxBytes);
  const fh = await fs.promises.open(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  try {
    const st = await fh.stat();
    checkStats(file, st, what, maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(1 << 20, maxBytes + 1 - total) || 1);
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      chunks.push(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes)
        throw new UnreadableInputError(
          `${file}: grew past the ${fmt(maxBytes)} bytes read for ${what} while it was read`,
          file,
          'too-large',
        );
    }
    return Buffer.concat(chunks, total);
  } finally {
    await fh.close();
  }
}

/** {@link readRegularFile} decoded as UTF-8 (invalid bytes become U+FFFD, as `readFile(…, 'utf8')` does). */
export async function readRegularTextFile(file: string, what: string, maxBytes: number): Promise<string> {
  return (await readRegularFile(file, what, maxBytes)).toString('utf8');
}
