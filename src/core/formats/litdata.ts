/**
 * litdata / LitGPT optimized token chunks (Lightning-AI/litdata `src/litdata/streaming/`, commit
 * bef28be9; `docs/formats.md` "litdata"): a folder with `index.json` and `chunk-{rank}-{n}.bin`
 * files written by `optimize(..., item_loader=TokensLoader())`.
 *
 * - `index.json` (`writer.py` L415–423, L474–517): `{"chunks": [{chunk_bytes, chunk_size, dim,
 *   filename}, …], "config": {compression, data_format, item_loader, …}}`; the stream is the chunks
 *   in this order (the ranks' indexes merged in `sorted()` order of their names, not the chunk
 *   files' name order).
 * - a chunk (`writer.py` `_create_chunk` L208–297): `uint32 num_items`, `uint32 offsets[num_items + 1]`
 *   (byte offsets from the start of the file), then the items' bytes: with TokensLoader each item
 *   is one token array with no header (`item_loader.py` L560–583), `dim` its token count; the
 *   reader skips `(1 + chunk_size + 1) * 4` header bytes and reads the rest as one token array
 *   (`TokensLoader._load_chunk` L435–448).
 * - the dtype: `config.data_format[0]` = `no_header_numpy:{i}` / `no_header_tensor:{i}`
 *   (`serializers.py` L278–357) with `i` an index into `constants.py` `_NUMPY_DTYPES_MAPPING`
 *   L79–99 / `_TORCH_DTYPES_MAPPING` L56–77.
 * - documents: the chunks' items (one per value the `optimize` function yields; LitGPT's
 *   `prepare_*` scripts yield one tokenized document, EOS included).
 * - `config.compression` `zstd` / `zstd:{1..22}` (`compression.py` L43–79, the only codec) compresses
 *   each whole chunk file (`write_chunk_to_file` L401–413) named `chunk-{rank}-{n}.{compression}.bin`
 *   (`get_chunk_filename` L299–302); `chunk_bytes` is the size before compression. litdata's reader
 *   decompresses a chunk to its name without `.{compression}` (`config.py` `try_decompress`
 *   L149–168); so a raw chunk of that name next to the compressed one is read, else the chunk is
 *   decompressed into the user's cache (`compression.ts`) and read there. Other codecs are refused,
 *   naming the codec.
 */
import * as path from 'path';
import { DataError } from '../errors';
import { fmt } from '../units';
import { decompressedFile, defaultDecompressDir } from './compression';
import { fileSize, indexJsonHead, readBytes, readWhole } from './files';
import { GrowableFloat64 } from './growable';
import { FormatAdapter, FormatFile, OpenedFormat, SniffInput, SniffResult, TokenDtype, dtypeBytes } from './types';

/** `no_header_numpy:{i}` indices of the token dtypes (`_NUMPY_DTYPES_MAPPING`, constants.py L79–99). */
const NUMPY_DTYPES: Record<number, TokenDtype> = { 2: 'int32', 5: 'uint16', 6: 'uint32' };
/** `no_header_tensor:{i}` indices of the token dtypes (`_TORCH_DTYPES_MAPPING`, constants.py L56–77: 15/16 torch.int32 / torch.int). */
const TENSOR_DTYPES: Record<number, TokenDtype> = { 15: 'int32', 16: 'int32' };

/** The first bytes of a litdata `index.json` (`json.dump(..., sort_keys=True)`: "chunks" is the first key). */
const INDEX_START = /^\s*\{\s*"chunks"\s*:/;

function sniffLitdata(input: SniffInput): SniffResult | undefined {
  const index = indexJsonHead(input);
  if (index !== undefined)
    return INDEX_START.test(index) ? { format: 'litdata', confidence: 2, reason: 'litdata index.json with "chunks"' } : undefined;
  const chunk = CHUNK_NAME;
  if (input.isDirectory) {
    // A folder of many chunks lists index.json after the chunks, past the heads a sniffer gets.
    const first = input.names.find((n) => chunk.test(n));
    return first && input.names.includes('index.json')
      ? { format: 'litdata', confidence: 2, reason: `litdata chunks (${first}) with index.json` }
      : undefined;
  }
  const name = path.basename(input.path);
  if (chunk.test(name) && input.names.includes('index.json')) {
    return { format: 'litdata', confidence: 2, reason: `litdata chunk ${name} next to index.json` };
  }
  return undefined;
}

/** A chunk's file name (`get_chunk_filename`: `chunk-{rank}-{n}.bin`, compressed `chunk-{rank}-{n}.zstd[:level].bin`). */
const CHUNK_NAME = /^chunk-\d+-\d+(\.zstd(:\d+)?)?\.bin$/;

/** litdata's compression names (`ZSTDCompressor.register`, compression.py L71–79): `zstd` (level 4) or `zstd:1` … `zstd:22`. */
const COMPRESSION = /^zstd(:([1-9]|1\d|2[0-2]))?$/;

/** One chunk's entry in `index.json`. */
interface ChunkEntry {
  chunk_bytes: number;
  chunk_size: number;
  dim: number | null;
  filename: string;
}

/** The dtype a litdata `data_format` entry names. @throws DataError naming `index.json`. */
export function litdataDtype(format: unknown, indexFile: string): TokenDtype {
  const m = typeof format === 'string' ? /^(no_header_numpy|no_header_tensor):(\d+)$/.exec(format) : null;
  const dtype = m ? (m[1] === 'no_header_numpy' ? NUMPY_DTYPES : TENSOR_DTYPES)[Number(m[2])] : undefined;
  if (!dtype) {
    throw new DataError(
      `${indexFile}: config.data_format[0] is ${JSON.stringify(format)}; expected a TokensLoader token array: no_header_numpy:2|5|6 or no_header_tensor:15|16 (int32, uint16, uint32)`,
      indexFile,
    );
  }
  return dtype;
}

/**
 * Parses a litdata `index.json` into its chunk entries and dtype.
 * `compression` is null, or a name litdata's zstd compressor registers (`zstd`, `zstd:N`).
 * @throws DataError naming the file and the field: not JSON, no `chunks` list, an item loader
 *   other than TokensLoader, a compression other than litdata's zstd, encryption, a data format
 *   that is not a token array, a chunk entry without whole-number `chunk_bytes` / `chunk_size` or
 *   with a file name outside the folder.
 */
export function parseLitdataIndex(
  text: string,
  indexFile: string,
): { chunks: ChunkEntry[]; dtype: TokenDtype; compression: string | null } {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    throw new DataError(
      `${indexFile}: not JSON (${(err as Error).message}); expected litdata's index {"chunks": [...], "config": {...}}`,
      indexFile,
    );
  }
  const o = obj as {
    chunks?: unknown;
    config?: { item_loader?: unknown; compression?: unknown; data_format?: unknown; encryption?: unknown };
  };
  if (!o || typeof o !== 'object' || !Array.isArray(o.chunks) || !o.config || typeof o.config !== 'object') {
    throw new DataError(`${indexFile}: expected litdata's index {"chunks": [...], "config": {...}}`, indexFile);
  }
  if (o.config.item_loader !== 'TokensLoader') {
    throw new DataError(
      `${indexFile}: config.item_loader is ${JSON.stringify(o.config.item_loader)}; expected "TokensLoader" (token arrays)`,
      indexFile,
    );
  }
  const compression = o.config.compression ?? null;
  if (compression !== null && (typeof compression !== 'string' || !COMPRESSION.test(compression))) {
    throw new DataError(
      `${indexFile}: config.compression is ${JSON.stringify(compression)}: the chunks are compressed with ${String(compression).split(':')[0]}, which this reader does not decompress; expected null or litdata's zstd (zstd, zstd:1 … zstd:22)`,
      indexFile,
    );
  }
  if (o.config.encryption)
    throw new DataError(`${indexFile}: config.encryption is set: the chunks are encrypted; expected plain chunks`, indexFile);
  const formats = o.config.data_format;
  const dtype = litdataDtype(Array.isArray(formats) ? formats[0] : formats, indexFile);
  const chunks = o.chunks.map((c: unknown, i: number): ChunkEntry => {
    const e = c as Partial<ChunkEntry>;
    const whole = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
    if (!e || typeof e !== 'object' || !whole(e.chunk_bytes) || !whole(e.chunk_size) || typeof e.filename !== 'string') {
      throw new DataError(`${indexFile}: chunks[${i}]: expected {chunk_bytes, chunk_size, dim, filename} with whole numbers`, indexFile);
    }
    if (e.filename !== path.basename(e.filename) || e.filename === '..' || e.filename === '.') {
      throw new DataError(
        `${indexFile}: chunks[${i}]: filename ${JSON.stringify(e.filename)} is not a file name in this folder`,
        indexFile,
      );
    }
    return { chunk_bytes: e.chunk_bytes!, chunk_size: e.chunk_size!, dim: whole(e.dim) ? e.dim! : null, filename: e.filename };
  });
  return { chunks, dtype, compression: compression || null };
}

/**
 * Checks one chunk's header against its index entry and its size; pushes its items' global starts.
 * @returns the chunk's header size in bytes and its token count.
 * @throws DataError naming the chunk file and the byte: a truncated header, an item count that
 *   differs from the index, an offset that goes backwards, passes the end of the file or splits a token.
 */
export function parseLitdataChunk(
  head: Buffer,
  file: string,
  entry: ChunkEntry,
  sizeBytes: number,
  dtype: TokenDtype,
  base: number,
  starts: GrowableFloat64,
): { headerBytes: number; numTokens: number } {
  const n = entry.chunk_size;
  const headerBytes = 4 * (n + 2);
  if (head.length < headerBytes) {
    throw new DataError(
      `${file}: byte ${fmt(head.length)}: truncated header (${fmt(head.length)} bytes; expected ${fmt(headerBytes)} for ${fmt(n)} items)`,
      file,
    );
  }
  const items = head.readUInt32LE(0);
  if (items !== n) throw new DataError(`${file}: byte 0: ${fmt(items)} items; index.json says chunk_size ${fmt(n)}`, file);
  const width = dtypeBytes(dtype);
  let prev = head.readUInt32LE(4);
  if (prev !== headerBytes)
    throw new DataError(
      `${file}: byte 4: the first item starts at byte ${fmt(prev)}; expected ${fmt(headerBytes)}, right after the header`,
      file,
    );
  for (let i = 1; i <= n; i++) {
    const off = head.readUInt32LE(4 + 4 * i);
    if (off < prev || off > sizeBytes || (off - prev) % width) {
      const why =
        off < prev
          ? `goes back from ${fmt(prev)}`
          : off > sizeBytes
            ? `passes the end of the file (${fmt(sizeBytes)} bytes)`
            : `splits a ${dtype} token`;
      throw new DataError(
        `${file}: byte ${fmt(4 + 4 * i)}: item offset ${fmt(off)} ${why}; expected ascending offsets of whole tokens within the file`,
        file,
      );
    }
    starts.push(base + (prev - headerBytes) / width);
    prev = off;
  }
  if (prev !== sizeBytes)
    throw new DataError(
      `${file}: byte ${fmt(4 + 4 * n)}: the items end at byte ${fmt(prev)}, but the file has ${fmt(sizeBytes)} bytes`,
      file,
    );
  const numTokens = (prev - headerBytes) / width;
  if (entry.dim !== null && entry.dim !== numTokens)
    throw new DataError(`${file}: the chunk holds ${fmt(numTokens)} tokens; index.json says dim ${fmt(entry.dim)}`, file);
  return { headerBytes, numTokens };
}

/**
 * The file holding a chunk's raw bytes: the chunk itself, or for a compressed chunk litdata's own
 * decompressed copy next to it (its name without `.{compression}`, `config.py` L153) when present,
 * else a copy decompressed into the user's cache, checked against `chunk_bytes`.
 * @throws DataError naming the compressed chunk (missing, does not decompress, wrong size).
 */
async function chunkData(
  dir: string,
  c: ChunkEntry,
  compression: string | null,
  present: ReadonlySet<string>,
  indexFile: string,
): Promise<string> {
  const file = path.join(dir, c.filename);
  if (!compression) return file;
  const rawName = rawChunkName(c.filename, compression);
  if (rawName !== c.filename && present.has(rawName)) return path.join(dir, rawName);
  if (!present.has(c.filename))
    throw new DataError(`${file}: missing; ${indexFile} lists it as a chunk compressed with ${compression}`, file);
  return decompressedFile(file, compression, rawName, c.chunk_bytes, defaultDecompressDir(), {
    sizeField: `chunk_bytes`,
    expected: `one chunk compressed whole with ${compression} as litdata's writer.py writes it`,
    otherwise: `expected litdata's zstd`,
  });
}

/** A compressed chunk's name once decompressed (`config.py` `try_decompress` L153: `.{compression}` removed). */
function rawChunkName(filename: string, compression: string): string {
  return filename.replace(`.${compression}`, '');
}

async function openLitdata(input: SniffInput): Promise<OpenedFormat> {
  const dir = input.isDirectory ? input.path : path.dirname(input.path);
  const indexFile = path.join(dir, 'index.json');
  const { chunks, dtype, compression } = parseLitdataIndex((await readWhole(indexFile)).toString('utf8'), indexFile);
  const only = !input.isDirectory && path.basename(input.path) !== 'index.json' ? path.basename(input.path) : undefined;
  // A chunk opened alone: its name in index.json, or (compressed) the name litdata decompresses it to.
  const chosen = only
    ? chunks.filter((c) => c.filename === only || (compression && rawChunkName(c.filename, compression) === only))
    : chunks;
  if (!chosen.length)
    throw new DataError(`${indexFile}: lists no chunk ${only ? `named ${only}` : ''}; expected chunks of tokens`, indexFile);
  const present = new Set(input.names);
  const starts = new GrowableFloat64();
  const files: FormatFile[] = [];
  let decompressed = false;
  let base = 0;
  for (const c of chosen) {
    const file = await chunkData(dir, c, compression, present, indexFile);
    // index.json belongs to the whole stream: listed once, with the first chunk; a chunk read from
    // a decompressed copy lists its compressed file (what the folder holds).
    const zip = file !== path.join(dir, c.filename) && present.has(c.filename) ? path.join(dir, c.filename) : undefined;
    const decompressedHere = zip !== undefined && !file.startsWith(dir + path.sep);
    if (decompressedHere) decompressed = true;
    let headerBytes: number, numTokens: number, sizeBytes: number;
    try {
      sizeBytes = await fileSize(file);
      const head = await readBytes(file, 0, Math.min(sizeBytes, 4 * (c.chunk_size + 2)));
      ({ headerBytes, numTokens } = parseLitdataChunk(head, file, c, sizeBytes, dtype, base, starts));
      if (sizeBytes !== c.chunk_bytes)
        throw new DataError(`${file}: ${fmt(sizeBytes)} bytes; index.json says chunk_bytes ${fmt(c.chunk_bytes)}`, file);
    } catch (err) {
      // A fault inside a copy in the cache is the compressed chunk's: name the file people have.
      if (!decompressedHere || !(err instanceof DataError)) throw err;
      const rest = err.message.startsWith(file) ? err.message.slice(file.length) : `: ${err.message}`;
      throw new DataError(`${zip}, decompressed (${file})${rest}`, zip!);
    }
    const sidecars = [...(files.length ? [] : [indexFile]), ...(zip ? [zip] : [])];
    files.push({
      path: file,
      storedAs: decompressedHere ? zip : undefined,
      name: path.basename(file),
      numTokens,
      sizeBytes,
      layout: { dtype, headerBytes },
      sidecars: sidecars.length ? sidecars : undefined,
    });
    base += numTokens;
  }
  return {
    format: 'litdata',
    dtype,
    dtypeSource: 'sidecar',
    files,
    documents: { starts: starts.toArray() },
    notes: [
      'documents: the chunks’ items (one per value the optimize function yielded; LitGPT yields one tokenized document each)',
      ...(decompressed ? [`chunks compressed with ${compression} are read decompressed from ${defaultDecompressDir()}`] : []),
    ],
  };
}

/** litdata / LitGPT TokensLoader chunks with their `index.json`. */
export const litdataAdapter: FormatAdapter = {
  name: 'litdata',
  description: 'litdata / LitGPT optimized chunks: index.json + chunk-*.bin written with TokensLoader (litdata streaming/writer.py)',
  sniff: sniffLitdata,
  open: openLitdata,
};
