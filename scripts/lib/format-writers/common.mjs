/**
 * What every format writer needs: typed arrays → little-endian bytes (numpy's
 * `numpy.array(x, dtype).tobytes(order="C")` on a little-endian machine) and complete writes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';

const LITTLE_ENDIAN = os.endianness() === 'LE';

/** @typedef {'uint16' | 'uint32' | 'int32' | 'int64'} StoredDtype element types the writers store */

/** Bytes per element of each {@link StoredDtype}. */
export const ITEMSIZE = Object.freeze({ uint16: 2, uint32: 4, int32: 4, int64: 8 });

/**
 * Little-endian bytes of `ids` in `dtype`; values are cast as numpy's `astype` does (modulo
 * 2^bits; int32 two's complement).
 * @param {ArrayLike<number>} ids
 * @param {StoredDtype} dtype
 * @returns {Buffer} a view on a fresh typed array
 * @throws {Error} on a big-endian machine (the files are little-endian by every format's rule)
 */
export function toBytes(ids, dtype) {
  if (!LITTLE_ENDIAN)
    throw new Error('the format writers write little-endian files from typed arrays: run them on a little-endian machine');
  const a =
    dtype === 'uint16'
      ? Uint16Array.from(ids)
      : dtype === 'uint32'
        ? Uint32Array.from(ids)
        : dtype === 'int32'
          ? Int32Array.from(ids)
          : BigInt64Array.from(Array.from(ids, (x) => BigInt(x)));
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/**
 * Writes all of `bytes` at the file position of `fd` (`fs.writeSync` may write less than asked).
 * @param {number} fd
 * @param {Uint8Array} bytes
 */
export function writeAll(fd, bytes) {
  let done = 0;
  while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done);
}

/**
 * Python's `json.dumps(obj, sort_keys=True)` with its default separators (`, ` and `: `): how
 * litdata and MDS write their `index.json` and MDS its shard config.
 * @param {unknown} value plain JSON data
 * @returns {string}
 */
export function pythonJson(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  const o = /** @type {Record<string, unknown>} */ (value);
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}: ${pythonJson(o[k])}`)
    .join(', ')}}`;
}

/**
 * Copies the folder of the good fixture `from` to `bad/<name>` for a damaged copy.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @param {import('../../make-format-fixtures.mjs').FixtureEntry} from
 * @param {string} name
 * @returns {string} the copy's absolute path
 */
export function copyFixture(ctx, from, name) {
  const src = ctx.abs(from.path);
  const dir = ctx.dir(name, 'bad');
  for (const f of fs.readdirSync(src)) fs.copyFileSync(`${src}/${f}`, `${dir}/${f}`);
  return dir;
}

/**
 * A damaged copy of a fixture folder of compressed files: `srcDir` copied to `bad/<name>` with
 * its file `file` cut in half (the bad-input corpus's "truncated compressed file" cases).
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @param {string} srcDir absolute folder to copy
 * @param {string} name the bad fixture's name
 * @param {string} file base name of the file to cut
 * @returns {{ dir: string, half: number }} the copy's folder and the size the file was cut to
 */
export function halvedCopy(ctx, srcDir, name, file) {
  const dir = ctx.dir(name, 'bad');
  for (const f of fs.readdirSync(srcDir)) fs.copyFileSync(`${srcDir}/${f}`, `${dir}/${f}`);
  const half = Math.floor(fs.statSync(`${dir}/${file}`).size / 2);
  fs.truncateSync(`${dir}/${file}`, half);
  return { dir, half };
}
