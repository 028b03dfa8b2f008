/**
 * MosaicML Streaming MDS shards holding a token column (mosaicml/streaming
 * `streaming/base/format/mds/`, commit 89e7bb90; llm-foundry writes `tokens` as `ndarray:int32`,
 * `llmfoundry/command_utils/data_prep/convert_dataset_hf.py` L347; `docs/formats.md` "MDS").
 *
 * - `index.json` (`base/writer.py` `_write_index` L271–282, `JointWriter.flush_shard` L424–441):
 *   `{"shards": [{column_names, column_encodings, column_sizes, compression, format: "mds",
 *   hashes, raw_data: {basename, bytes, hashes}, samples, zip_data, …}], "version": 2}`; the
 *   stream is the shards in this order.
 * - a shard (`mds/writer.py` `encode_joint_shard` L139–144): `uint32 num_samples`,
 *   `uint32 offsets[num_samples + 1]` (byte offsets from the start of the file), the config JSON,
 *   the samples. A sample (`encode_sample` L101–117, `mds/reader.py` `decode_sample` L112–126):
 *   `uint32` sizes of its variable-size columns, then every column's bytes, columns in name order.
 * - the `tokens` column, `ndarray[:dtype[:shape]]` (`mds/encodings.py` `NDArray` L97–305):
 *   `[dtype code: 1 byte, when not fixed] [ndim << 2 | shape width code: 1 byte] [shape] [values]`
 *   when the shape is not fixed — token values at an arbitrary byte offset, so every sample is
 *   one run of the file's {@link TokenExtents}. Samples are training sequences (`ConcatTokensDataset`, llm-foundry
 *   `llmfoundry/data/data.py` L160–177), not documents: documents are EOS-separated.
 * - compression (`compression.py`: br, bz2, gz, snappy, zstd) applies to whole shard files
 *   (`shard.NNNNN.mds.zstd`); streaming decompresses a downloaded shard to its raw name, and so the
 *   raw `shard.NNNNN.mds` is read when it is there; else a br, gz or zstd shard is decompressed
 *   into the user's cache (`compression.ts`) and read there, and other codecs are refused naming
 *   the codec.
 * - hashes: `raw_data.hashes` (hex digests of the raw shard, `base/writer.py` L187–227) become the
 *   files' {@link FormatHash}es, checked by `verify`.
 */
import * as path from 'path';
import { DataError } from '../errors';
import { fmt } from '../units';
import { fileSize, indexJsonHead, readBytes, readWhole } from './files';
import { compressionFamily, decompressedShard, defaultDecompressDir } from './compression';
import {
  FormatAdapter,
  FormatFile,
  FormatHash,
  OpenedFormat,
  SniffInput,
  SniffResult,
  TokenDtype,
  TokenExtents,
  TokenExtentsBuilder,
  dtypeBytes,
} from './types';

/** `NDArray._int2value_dtype` codes of the token dtypes (encodings.py L131–143). */
const VALUE_DTYPES: Record<number, TokenDtype> = { 16: 'uint16', 32: 'uint32', 33: 'int32' };
const DTYPE_NAMES: Record<string, TokenDtype> = { uint16: 'uint16', uint32: 'uint32', int32: 'int32' };

/** The name of the token column llm-foundry writes. */
export const MDS_TOKEN_COLUMN = 'tokens';

/** The first bytes of an MDS `index.json` (`json.dump(..., sort_keys=True)`: "shards" is the first key). */
const INDEX_START = /^\s*\{\s*"shards"\s*:/;

/**
 * An MDS shard's file name: `shard.NNNNN.mds` or, compressed, `shard.NNNNN.mds.<extension>`
 * (`base/writer.py` `_name_next_shard`), where the extension is the codec's, without a level
 * (`base/compression.py` `get_compression_extension`: br, bz2, gz, snappy, zstd).
 */
const SHARD_NAME = /^shard\.\d+\.mds(\.(br|bz2|gz|snappy|zstd))?$/;

function sniffMds(input: SniffInput): SniffResult | undefined {
  const index = indexJsonHead(input);
  if (index !== undefined)
    return INDEX_START.test(index) ? { format: 'mds', confidence: 2, reason: 'MDS index.json with "shards"' } : undefined;
  if (input.isDirectory) return undefined;
  const name = path.basename(input.path);
  if (SHARD_NAME.test(name)) {
    return input.names.includes('index.json')
      ? { format: 'mds', confidence: 2, reason: `MDS shard ${name} next to index.json` }
      : { format: 'mds', confidence: 1, reason: `MDS shard name ${name}` };
  }
  return undefined;
}

/** How the token column is stored in every sample of a shard. */
export interface MdsTokenColumn {
  /** Column index (columns are in name order). */
  index: number;
  /** Fixed dtype, or undefined: a dtype code byte leads each sample's array. */
  dtype?: TokenDtype;
  /** Fixed token count (a fixed 1-D shape), or undefined: the shape is stored per sample. */
  fixedTokens?: number;
  /** Fixed byte sizes of all columns (null: variable, a uint32 size leads the sample). */
  sizes: (number | null)[];
}

/**
 * Reads the token column's encoding from a shard entry.
 * @throws DataError naming `index.json`, the shard and the column when there is no `tokens`
 *   column, or it is not an `ndarray` of uint16, uint32 or int32 with one dimension.
 */
export function mdsTokenColumn(shard: Record<string, unknown>, where: string, file: string): MdsTokenColumn {
  const names = shard.column_names;
  const encs = shard.column_encodings;
  const sizes = shard.column_sizes;
  if (
    !Array.isArray(names) ||
    !Array.isArray(encs) ||
    !Array.isArray(sizes) ||
    names.length !== encs.length ||
    names.length !== sizes.length
  ) {
    throw new DataError(`${file}: ${where}: expected column_names, column_encodings and column_sizes of one length`, file);
  }
  const index = names.indexOf(MDS_TOKEN_COLUMN);
  if (index < 0)
    throw new DataError(
      `${file}: ${where}: no column "${MDS_TOKEN_COLUMN}" (columns: ${names.map(String).join(', ')}); expected token ids in a "tokens" column`,
      file,
    );
  const enc = String(encs[index]);
  const m = /^ndarray(?::([a-z0-9]*))?(?::([\d,]+))?$/.exec(enc);
  const dtype = m?.[1] ? DTYPE_NAMES[m[1]] : undefined;
  if (!m || (m[1] && !dtype)) {
    throw new DataError(
      `${file}: ${where}: column "tokens" is encoded as ${enc}; expected ndarray:int32, ndarray:uint16 or ndarray:uint32 (as llm-foundry writes)`,
      file,
    );
  }
  let fixedTokens: number | undefined;
  if (m[2]) {
    const dims = m[2].split(',').map(Number);
    if (dims.length !== 1) throw new DataError(`${file}: ${where}: column "tokens" has shape (${m[2]}); expected one dimension`, file);
    fixedTokens = dims[0];
  }
  const fixed = sizes.map((s) => (typeof s === 'number' && Number.isSafeInteger(s) && s >= 0 ? s : null));
  return { index, dtype, fixedTokens, sizes: fixed };
}

/** Where the token values of one sample are, relative to the sample's first byte. */
export interface MdsSampleTokens {
  valueOffset: number;
  numTokens: number;
  dtype: TokenDtype;
}

/**
 * Decodes where one sample's token values are (`decode_sample` + `NDArray.decode`), from the
 * sample's bytes (at least up to its token values).
 * @param sampleBytes the sample's length (from the shard's offsets).
 * @throws DataError naming the shard and the byte for column sizes that pass the sample, an
 *   unknown dtype code, more than one dimension, or values that do not fill the column.
 */
export function parseMdsSample(bytes: Buffer, sampleBytes: number, col: MdsTokenColumn, file: string, at: number): MdsSampleTokens {
  const fail = (pos: number, what: string) => new DataError(`${file}: byte ${fmt(at + pos)}: ${what}`, file);
  const need = (pos: number, n: number) => {
    if (pos + n > bytes.length || pos + n > sampleBytes)
      throw fail(pos, `the sample ends inside its header (${fmt(sampleBytes)} bytes); expected column sizes and an ndarray header`);
  };
  let idx = 0;
  const colSizes: number[] = [];
  for (const s of col.sizes) {
    if (s !== null) colSizes.push(s);
    else {
      need(idx, 4);
      colSizes.push(bytes.readUInt32LE(idx));
      idx += 4;
    }
  }
  let pos = idx;
  for (let i = 0; i < col.index; i++) pos += colSizes[i];
  const colEnd = pos + colSizes[col.index];
  if (colEnd > sampleBytes) throw fail(idx, `the columns' sizes pass the end of the sample (${fmt(sampleBytes)} bytes)`);
  let dtype = col.dtype;
  if (!dtype) {
    need(pos, 1);
    dtype = VALUE_DTYPES[bytes[pos]];
    if (!dtype) throw fail(pos, `ndarray dtype code ${bytes[pos]} is not a token dtype; expected 16 (uint16), 32 (uint32) or 33 (int32)`);
    pos++;
  }
  const width = dtypeBytes(dtype);
  let numTokens: number;
  if (col.fixedTokens !== undefined) numTokens = col.fixedTokens;
  else {
    need(pos, 1);
    const b = bytes[pos];
    const ndim = b >> 2;
    const shapeWidth = 1 << (b & 3);
    if (ndim !== 1) throw fail(pos, `the tokens array has ${ndim} dimensions; expected 1`);
    need(pos + 1, shapeWidth);
    numTokens =
      shapeWidth === 1
        ? bytes[pos + 1]
        : shapeWidth === 2
          ? bytes.readUInt16LE(pos + 1)
          : shapeWidth === 4
            ? bytes.readUInt32LE(pos + 1)
            : Number(bytes.readBigUInt64LE(pos + 1));
    pos += 1 + shapeWidth;
  }
  if (pos + numTokens * width !== colEnd) {
    throw fail(pos, `${fmt(numTokens)} ${dtype} tokens do not fill the column's ${fmt(colEnd - pos)} value bytes`);
  }
  return { valueOffset: pos, numTokens, dtype };
}

/**
 * The token count of a sample of `sampleBytes` bytes when the token column is its only
 * variable-size column, the dtype fixed and the shape dynamic: solves
 * `size = 4 + fixed + 1 + shapeWidth + n·width` for the shape width `NDArray` picks for `n`.
 * Undefined when no width (or more than one) fits.
 */
function solveTokens(sampleBytes: number, fixedBytes: number, width: number): number | undefined {
  const col = sampleBytes - 4 - fixedBytes;
  let found: number | undefined;
  for (let c = 0; c < 4; c++) {
    const rest = col - 1 - (1 << c);
    if (rest <= 0 || rest % width) continue;
    const n = rest / width;
    const code = n < 1 << 8 ? 0 : n < 1 << 16 ? 1 : n < 2 ** 32 ? 2 : 3;
    if (code !== c) continue;
    if (found !== undefined) return undefined;
    found = n;
  }
  return found;
}

/**
 * Checks a shard's header (`uint32 num_samples`, `uint32 offsets[num_samples + 1]`) against
 * `index.json`'s sample count and the file size; returns the offsets (bytes from the file start).
 * @param head the shard's first `4 · (samples + 2)` bytes (fewer when the file is shorter).
 * @throws DataError naming the shard and the byte: a truncated header, a sample count that
 *   differs from `index.json`, offsets inside the header, going back or past the end of the file.
 */
export function parseMdsOffsets(head: Buffer, file: string, sizeBytes: number, samples: number): Float64Array {
  const headerBytes = 4 * (samples + 2);
  if (head.length < headerBytes)
    throw new DataError(
      `${file}: byte ${fmt(head.length)}: truncated header; expected ${fmt(headerBytes)} bytes for ${fmt(samples)} samples`,
      file,
    );
  const n = head.readUInt32LE(0);
  if (n !== samples) throw new DataError(`${file}: byte 0: ${fmt(n)} samples; index.json says ${fmt(samples)}`, file);
  const offsets = new Float64Array(n + 1);
  for (let i = 0; i <= n; i++) {
    const off = head.readUInt32LE(4 + 4 * i);
    const lo = i === 0 ? headerBytes : offsets[i - 1];
    if (off < lo || off > sizeBytes) {
      const why =
        off > sizeBytes
          ? `passes the end of the file (${fmt(sizeBytes)} bytes)`
          : i === 0
            ? `is inside the header (${fmt(headerBytes)} bytes)`
            : `goes back from ${fmt(lo)}`;
      throw new DataError(
        `${file}: byte ${fmt(4 + 4 * i)}: sample offset ${fmt(off)} ${why}; expected ascending offsets within the file`,
        file,
      );
    }
    offsets[i] = off;
  }
  if (offsets[n] !== sizeBytes)
    throw new DataError(
      `${file}: byte ${fmt(4 + 4 * n)}: the samples end at byte ${fmt(offsets[n])}, but the file has ${fmt(sizeBytes)} bytes`,
      file,
    );
  return offsets;
}

/**
 * Finds the token extents of one shard file.
 * @throws DataError naming the shard and the byte: a truncated header, a sample count that
 *   differs from `index.json`, offsets that go back or pass the end of the file, a sample whose
 *   token column does not decode.
 */
export async function mdsShardExtents(
  file: string,
  sizeBytes: number,
  samples: number,
  col: MdsTokenColumn,
): Promise<{ extents: TokenExtents; numTokens: number; dtype: TokenDtype | undefined }> {
  const head = await readBytes(file, 0, Math.min(sizeBytes, 4 * (samples + 2)));
  const offsets = parseMdsOffsets(head, file, sizeBytes, samples);
  const n = samples;
  const extents = new TokenExtentsBuilder();
  let numTokens = 0;
  let dtype = col.dtype;
  const variable = col.sizes.filter((s) => s === null).length;
  const fixedBytes = col.sizes.reduce<number>((s, x) => s + (x ?? 0), 0);
  const before = col.sizes.slice(0, col.index);
  // Fast path (llm-foundry's layout): sizes from the offsets alone, checked on the first and last sample.
  if (col.dtype && col.fixedTokens === undefined && variable === 1 && before.every((s) => s !== null)) {
    const width = dtypeBytes(col.dtype);
    const lead = 4 + (before as number[]).reduce((s, x) => s + x, 0);
    let ok = true;
    for (let i = 0; i < n && ok; i++) {
      const t = solveTokens(offsets[i + 1] - offsets[i], fixedBytes, width);
      if (t === undefined) ok = false;
      else {
        const shapeWidth = t < 1 << 8 ? 1 : t < 1 << 16 ? 2 : t < 2 ** 32 ? 4 : 8;
        extents.push(offsets[i] + lead + 1 + shapeWidth, t);
        numTokens += t;
      }
    }
    if (ok) {
      for (const i of n ? [0, n - 1] : []) {
        const len = offsets[i + 1] - offsets[i];
        const got = parseMdsSample(await readBytes(file, offsets[i], Math.min(len, 64 + lead)), len, col, file, offsets[i]);
        if (offsets[i] + got.valueOffset !== extents.byteOffsetAt(i) || got.numTokens !== extents.numTokensAt(i)) ok = false;
      }
    }
    if (ok) return { extents: extents.finish(), numTokens, dtype };
    extents.clear();
    numTokens = 0;
  }
  // Exact path: decode every sample from the shard's bytes.
  const data = await readBytes(file, 0, sizeBytes);
  for (let i = 0; i < n; i++) {
    const got = parseMdsSample(data.subarray(offsets[i], offsets[i + 1]), offsets[i + 1] - offsets[i], col, file, offsets[i]);
    if (dtype && got.dtype !== dtype)
      throw new DataError(
        `${file}: byte ${fmt(offsets[i])}: sample ${fmt(i)} holds ${got.dtype} tokens, not ${dtype}; expected one dtype per stream`,
        file,
      );
    dtype = got.dtype;
    if (got.numTokens) extents.push(offsets[i] + got.valueOffset, got.numTokens);
    numTokens += got.numTokens;
  }
  return { extents: extents.finish(), numTokens, dtype };
}

/** A shard entry's `raw_data.hashes` as {@link FormatHash}es. */
function rawHashes(raw: Record<string, unknown>): FormatHash[] | undefined {
  const h = raw.hashes;
  if (!h || typeof h !== 'object') return undefined;
  const out = Object.entries(h as Record<string, unknown>)
    .filter(([, v]) => typeof v === 'string' && /^[0-9a-f]+$/i.test(v))
    .map(([algorithm, v]) => ({ algorithm, hex: (v as string).toLowerCase() }));
  return out.length ? out : undefined;
}

async function openMds(input: SniffInput): Promise<OpenedFormat> {
  const dir = input.isDirectory ? input.path : path.dirname(input.path);
  const indexFile = path.join(dir, 'index.json');
  let index: { shards?: unknown; version?: unknown };
  try {
    index = JSON.parse((await readWhole(indexFile)).toString('utf8')) as typeof index;
  } catch (err) {
    if (err instanceof DataError) throw err;
    throw new DataError(
      `${indexFile}: not JSON (${(err as Error).message}); expected MDS's index {"shards": [...], "version": 2}`,
      indexFile,
    );
  }
  if (!index || typeof index !== 'object' || !Array.isArray(index.shards))
    throw new DataError(`${indexFile}: expected MDS's index {"shards": [...], "version": 2}`, indexFile);
  if (index.version !== 2) throw new DataError(`${indexFile}: version ${JSON.stringify(index.version)}; expected 2`, indexFile);
  const only = !input.isDirectory && path.basename(input.path) !== 'index.json' ? path.basename(input.path) : undefined;
  const present = new Set(input.names);
  const files: FormatFile[] = [];
  const decompressed = new Set<string>();
  let dtype: TokenDtype | undefined;
  for (let i = 0; i < index.shards.length; i++) {
    const shard = index.shards[i] as Record<string, unknown>;
    const where = `shards[${i}]`;
    if (!shard || typeof shard !== 'object') throw new DataError(`${indexFile}: ${where}: expected a shard object`, indexFile);
    if (shard.format !== 'mds')
      throw new DataError(`${indexFile}: ${where}: format ${JSON.stringify(shard.format)}; expected "mds"`, indexFile);
    const raw = shard.raw_data as Record<string, unknown> | null;
    if (!raw || typeof raw.basename !== 'string' || raw.basename !== path.basename(raw.basename)) {
      throw new DataError(`${indexFile}: ${where}: raw_data.basename is missing or not a file name in this folder`, indexFile);
    }
    const zipName = (shard.zip_data as Record<string, unknown> | null)?.basename;
    // A shard opened alone by its raw name or by its compressed copy's name.
    if (only && raw.basename !== only && zipName !== only) continue;
    const samples = shard.samples;
    if (typeof samples !== 'number' || !Number.isSafeInteger(samples) || samples < 0)
      throw new DataError(`${indexFile}: ${where}: samples must be a whole number`, indexFile);
    const col = mdsTokenColumn(shard, where, indexFile);
    let file = path.join(dir, raw.basename);
    let storedAs: string | undefined;
    const sidecars: string[] = files.length ? [] : [indexFile];
    if (!present.has(raw.basename)) {
      const zip = shard.zip_data as Record<string, unknown> | null;
      if (!zip || typeof zip.basename !== 'string' || zip.basename !== path.basename(zip.basename) || typeof shard.compression !== 'string')
        throw new DataError(`${file}: missing; ${indexFile} lists it as ${where}`, file);
      const zipFile = path.join(dir, zip.basename);
      if (!present.has(zip.basename))
        throw new DataError(`${zipFile}: missing; ${indexFile} lists it as ${where} compressed with ${shard.compression}`, zipFile);
      file = await decompressedShard(zipFile, shard.compression, raw.basename, typeof raw.bytes === 'number' ? raw.bytes : undefined);
      sidecars.push(zipFile);
      storedAs = zipFile;
      decompressed.add(compressionFamily(shard.compression));
    }
    const sizeBytes = await fileSize(file);
    const got = await mdsShardExtents(file, sizeBytes, samples, col);
    if (typeof raw.bytes === 'number' && raw.bytes !== sizeBytes)
      throw new DataError(`${file}: ${fmt(sizeBytes)} bytes; index.json says raw_data.bytes ${fmt(raw.bytes)}`, file);
    if (got.dtype && dtype && got.dtype !== dtype)
      throw new DataError(
        `${file}: its tokens are ${got.dtype}, not ${dtype} as in the shards before; expected one dtype per stream`,
        file,
      );
    dtype = dtype ?? got.dtype;
    files.push({
      path: file,
      storedAs,
      name: raw.basename,
      numTokens: got.numTokens,
      sizeBytes,
      layout: { dtype: got.dtype ?? 'int32', headerBytes: 0, extents: got.extents },
      sidecars: sidecars.length ? sidecars : undefined,
      hashes: rawHashes(raw),
    });
  }
  if (!files.length)
    throw new DataError(`${indexFile}: lists no shard ${only ? `named ${only}` : ''}; expected shards of tokens`, indexFile);
  const final = dtype ?? 'int32';
  for (const f of files) f.layout.dtype = final;
  return {
    format: 'mds',
    dtype: final,
    dtypeSource: 'sidecar',
    files,
    notes: [
      'MDS samples are training sequences, not documents: documents are EOS-separated',
      ...(decompressed.size
        ? [`compressed shards (${[...decompressed].join(', ')}) are read decompressed from ${defaultDecompressDir()}`]
        : []),
    ],
  };
}

/** MosaicML Streaming MDS shards with a `tokens` ndarray column. */
export const mdsAdapter: FormatAdapter = {
  name: 'mds',
  description:
    'MosaicML Streaming MDS: index.json + shard.*.mds with a tokens column (ndarray:int32 as llm-foundry writes; streaming format/mds/)',
  sniff: sniffMds,
  open: openMds,
};
