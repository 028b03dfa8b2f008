/**
 * File helpers shared by the format adapters: stat and read a file's first bytes with one clear
 * message on failure, and pick a folder's files of one kind in byte-wise name order.
 */
import * as fs from 'fs';
import * as path from 'path';
import { DataError } from '../errors';
import { fmt } from '../units';
import { SNIFF_FOLDER_FILES, SNIFF_HEAD_BYTES, SniffInput } from './types';

/**
 * Size in bytes of a regular file.
 * @throws DataError naming the file when it is missing, unreadable or not a regular file.
 */
export async function fileSize(file: string): Promise<number> {
  let st: fs.Stats;
  try {
    st = await fs.promises.stat(file);
  } catch (err) {
    throw new DataError(`${file}: cannot open: ${(err as Error).message}`, file);
  }
  if (!st.isFile()) throw new DataError(`${file}: is not a regular file`, file);
  return st.size;
}

/**
 * Reads bytes `[position, position + length)` of a file (fewer when the file ends first).
 * @throws DataError naming the file when it cannot be opened or read.
 */
export async function readBytes(file: string, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw new DataError(`${file}: cannot open: ${(err as Error).message}`, file);
  }
  try {
    let done = 0;
    while (done < length) {
      const { bytesRead } = await fh.read(buf, done, length - done, position + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return done === length ? buf : buf.subarray(0, done);
  } catch (err) {
    throw new DataError(`${file}: cannot read at byte ${fmt(position)}: ${(err as Error).message}`, file);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/**
 * Reads a whole (small) file: an index or a sidecar.
 * @throws DataError naming the file when it cannot be read.
 */
export async function readWhole(file: string): Promise<Buffer> {
  try {
    return await fs.promises.readFile(file);
  } catch (err) {
    throw new DataError(`${file}: cannot read: ${(err as Error).message}`, file);
  }
}

/**
 * The heads sniffers see of a folder's first {@link SNIFF_FOLDER_FILES} regular files.
 * @param names the folder's names, sorted byte-wise.
 */
export async function folderHeads(dir: string, names: readonly string[]): Promise<Map<string, Buffer>> {
  const heads = new Map<string, Buffer>();
  for (const name of names) {
    if (heads.size >= SNIFF_FOLDER_FILES) break;
    const file = path.join(dir, name);
    try {
      if (!(await fs.promises.stat(file)).isFile()) continue;
      heads.set(name, await readBytes(file, 0, SNIFF_HEAD_BYTES));
    } catch {
      /* an unreadable entry is reported by the adapter that opens it */
    }
  }
  return heads;
}

/** The folder a sniff input lives in: the input itself for a folder, its parent for a file. */
export function folderOf(input: SniffInput): string {
  return input.isDirectory ? input.path : path.dirname(input.path);
}

/** Lower-case extension with its dot (`.bin`), or `''`. */
export function extOf(name: string): string {
  return path.extname(name).toLowerCase();
}

/**
 * The first 64 characters of the `index.json` a sniffer sees: the folder's own (from its heads),
 * or the file's when the input is an `index.json`; undefined otherwise. litdata and MDS tell their
 * indexes apart by the first key (`json.dump(…, sort_keys=True)`: `"chunks"` / `"shards"`).
 */
export function indexJsonHead(input: SniffInput): string | undefined {
  const head = input.isDirectory ? input.heads.get('index.json') : path.basename(input.path) === 'index.json' ? input.head : undefined;
  return head?.toString('latin1', 0, 64);
}
