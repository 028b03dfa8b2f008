/**
 * Whole-file compressed token files, decompressed once into the user's cache.
 *
 * - MDS shards (mosaicml/streaming `streaming/base/compression.py`, commit 89e7bb90): a shard
 *   entry's `compression` is `family` or `family:level` with the families `br` (brotli), `bz2`,
 *   `gz` (gzip), `snappy` and `zstd`; the compressed file is `zip_data.basename`
 *   (`shard.NNNNN.mds.<compression>`), whole-file compressed (`base/writer.py` `_write_zip`), and
 *   `raw_data` describes the shard after decompression.
 * - litdata chunks (Lightning-AI/litdata `src/litdata/streaming/`, commit bef28be9): `compression`
 *   `zstd` or `zstd:level` (`compression.py` L43–79, the only codec) compresses the whole chunk file
 *   (`writer.py` `write_chunk_to_file` L401–413, python-zstd's one-frame `compress`), named
 *   `chunk-{rank}-{n}.{compression}.bin`; `chunk_bytes` is the chunk's size before compression.
 *
 * Both writers' readers decompress a downloaded file to its raw name in their local cache
 * (streaming `base/stream.py` `_decompress_shard_part`, litdata `config.py` `try_decompress`); so
 * does this reader, into the user's cache folder ({@link defaultDecompressDir}) — never next to
 * the data — under a key of the compressed file's path and identity (size, mtime, inode), written
 * to a temporary name and renamed when whole. gzip and brotli go through Node's `zlib` streams,
 * zstd through the `fzstd` package's streaming decompressor; other codecs are refused with a
 * message naming the codec.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Transform } from 'stream';
import { pipeline } from 'stream/promises';
import * as zlib from 'zlib';
import { Decompress } from 'fzstd';
import { DataError } from '../errors';
import { fmt } from '../units';

/** The codec families (`compression.py` `_families`) this reader decompresses. */
export const DECOMPRESSED_FAMILIES = ['br', 'gz', 'zstd'] as const;

/** The family of a streaming compression name: `zstd:7` → `zstd`. */
export function compressionFamily(compression: string): string {
  return compression.split(':')[0];
}

/**
 * Where decompressed shards are kept: `$XDG_CACHE_HOME/token-shard-inspector/decompressed` when
 * `XDG_CACHE_HOME` is absolute, else `~/.cache/token-shard-inspector/decompressed`.
 */
export function defaultDecompressDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'token-shard-inspector', 'decompressed');
}

/** A Transform stream decompressing zstd frames through `fzstd`'s streaming decompressor. */
function zstdDecompressStream(): Transform {
  const out = new Transform({
    transform(chunk: Buffer, _enc, done) {
      try {
        d.push(chunk);
        done();
      } catch (err) {
        done(err as Error);
      }
    },
    flush(done) {
      try {
        d.push(new Uint8Array(0), true);
        done();
      } catch (err) {
        done(err as Error);
      }
    },
  });
  const d = new Decompress((data) => out.push(Buffer.from(data)));
  return out;
}

function decompressStream(family: string): Transform {
  if (family === 'gz') return zlib.createGunzip();
  if (family === 'br') return zlib.createBrotliDecompress();
  return zstdDecompressStream();
}

/** Who wrote a compressed file: the words {@link decompressedFile}'s messages use. */
export interface CompressedOrigin {
  /** The index field giving the decompressed size (`raw_data.bytes`, `chunk_bytes`). */
  sizeField: string;
  /** What the file should be, for "expected …": "a whole shard as streaming's compression.py writes it". */
  expected: string;
  /** What to do instead when the codec is not one this reader decompresses. */
  otherwise: string;
}

/**
 * The raw shard of a compressed MDS shard, decompressed once into `dir` and reused while the
 * compressed file is unchanged ({@link decompressedFile} with MDS's words).
 * @param zipFile the compressed shard (`zip_data.basename` in the index's folder).
 * @param compression the shard entry's `compression` (`zstd`, `gz:9`…).
 * @param rawName `raw_data.basename`: the decompressed file's name.
 * @param rawBytes `raw_data.bytes`, when the index gives it: the decompressed size it must have.
 * @returns the decompressed file's absolute path.
 * @throws DataError naming the compressed file: a codec this reader does not decompress (named),
 *   data that does not decompress, or a decompressed size other than `rawBytes`. Nothing is left
 *   in the cache then.
 */
export function decompressedShard(
  zipFile: string,
  compression: string,
  rawName: string,
  rawBytes: number | undefined,
  dir: string = defaultDecompressDir(),
): Promise<string> {
  return decompressedFile(zipFile, compression, rawName, rawBytes, dir, {
    sizeField: 'raw_data.bytes',
    expected: "a whole shard as streaming's compression.py writes it",
    otherwise: `expected the raw shard ${rawName} next to it (streaming decompresses downloaded shards to that name)`,
  });
}

/**
 * A whole-file compressed file, decompressed once into `dir` (a folder per compressed file's
 * identity) and reused while the compressed file is unchanged.
 * @param zipFile the compressed file.
 * @param compression `family` or `family:level` ({@link DECOMPRESSED_FAMILIES} are read).
 * @param rawName the decompressed file's name.
 * @param rawBytes the size in bytes it must have once decompressed, when the index gives it.
 * @param origin the words of the messages (which index field, what was expected).
 * @returns the decompressed file's absolute path.
 * @throws DataError naming the compressed file: a codec this reader does not decompress (named),
 *   data that does not decompress (truncated, corrupt: its size named), or a decompressed size
 *   other than `rawBytes`. Nothing is left in the cache then.
 */
export async function decompressedFile(
  zipFile: string,
  compression: string,
  rawName: string,
  rawBytes: number | undefined,
  dir: string,
  origin: CompressedOrigin,
): Promise<string> {
  const family = compressionFamily(compression);
  if (!(DECOMPRESSED_FAMILIES as readonly string[]).includes(family)) {
    throw new DataError(
      `${zipFile}: compressed with ${compression}, which this reader does not decompress (it reads ${DECOMPRESSED_FAMILIES.join(', ')}); ${origin.otherwise}`,
      zipFile,
    );
  }
  let st: fs.Stats;
  try {
    st = await fs.promises.stat(zipFile);
  } catch (err) {
    throw new DataError(`${zipFile}: cannot read the compressed file: ${(err as Error).message}`, zipFile);
  }
  const key = crypto
    .createHash('sha256')
    .update(JSON.stringify([path.resolve(zipFile), st.size, st.mtimeMs, st.ino, compression]))
    .digest('hex')
    .slice(0, 24);
  const target = path.join(dir, key, rawName);
  const have = await fs.promises.stat(target).catch(() => undefined);
  if (have && (rawBytes === undefined || have.size === rawBytes)) return target;
  await fs.promises.mkdir(path.dirname(target), { recursive: true });
  const tmp = `${target}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  // The temporary file is created before the pipeline starts: a stream that opened it lazily could
  // create it after a failed pipeline's clean-up below, leaving a partial file in the cache.
  const out = await fs.promises.open(tmp, 'w');
  try {
    await pipeline(fs.createReadStream(zipFile, { highWaterMark: 1 << 20 }), decompressStream(family), out.createWriteStream());
    const size = (await fs.promises.stat(tmp)).size;
    if (rawBytes !== undefined && size !== rawBytes) {
      throw new DataError(
        `${zipFile}: decompresses (${compression}) to ${fmt(size)} bytes; index.json says ${origin.sizeField} ${fmt(rawBytes)}`,
        zipFile,
      );
    }
    await fs.promises.rename(tmp, target);
  } catch (err) {
    await out.close().catch(() => undefined);
    await fs.promises.rm(tmp, { force: true });
    if (err instanceof DataError) throw err;
    throw new DataError(
      `${zipFile}: its ${fmt(st.size)} bytes do not decompress as ${compression} (${(err as Error).message}); expected ${origin.expected}`,
      zipFile,
    );
  }
  return target;
}
