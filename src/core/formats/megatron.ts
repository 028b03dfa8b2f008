/**
 * Megatron-LM / NeMo / GPT-NeoX / Pythia indexed datasets: `PREFIX.bin` (raw tokens) +
 * `PREFIX.idx`, as `IndexedDatasetBuilder` and `_IndexWriter` write them
 * (NVIDIA/Megatron-LM `megatron/core/datasets/indexed_dataset.py`, commit d98e8a64, lines
 * 54-215; read back by `_IndexReader`, lines 240-330). The `.idx`, little-endian:
 *
 * | bytes | field |
 * |---|---|
 * | 9 | `MMIDIDX\x00\x00` |
 * | 8 | `<Q` version, 1 |
 * | 1 | `<B` dtype code: 1 u8, 2 i8, 3 i16, 4 i32, 5 i64, 6 f64, 7 f32, 8 u16 (`DType`) |
 * | 8 | `<Q` sequence count S |
 * | 8 | `<Q` document count D (entries of `document_indices`: documents + 1) |
 * | 4·S | `int32` sequence lengths (tokens) |
 * | 8·S | `int64` sequence pointers (byte offsets into `.bin`) |
 * | 8·D | `int64` document indices: the sequence index where each document starts, from 0 to S |
 * | S | `int8` modes, only in multimodal datasets (ignored) |
 *
 * Token ids are stored as uint16 (code 8) for vocabularies under 65,500 and int32 (code 4) above
 * (`DType.optimal_dtype`). Documents are the index's entries, not EOS-separated; with
 * `--append-eod` the tokenizer's EOD ends each one and is counted in its length.
 */
import * as path from 'path';
import { DataError } from '../errors';
import { fmt } from '../units';
import { extOf, fileSize, readWhole } from './files';
import {
  FormatAdapter,
  FormatFile,
  OpenedFormat,
  SniffInput,
  SniffResult,
  TokenDtype,
  TokenExtents,
  TokenExtentsBuilder,
  dtypeBytes,
} from './types';

/** The `.idx` magic (`_INDEX_HEADER`). */
export const MEGATRON_IDX_MAGIC = Buffer.from('MMIDIDX\x00\x00', 'latin1');

/** Bytes of the `.idx` header before the arrays: magic 9, version 8, dtype code 1, S 8, D 8. */
export const MEGATRON_IDX_HEADER_BYTES = 34;

/** Megatron's dtype codes (`DType` in indexed_dataset.py). */
const DTYPE_CODES: Record<number, string> = {
  1: 'uint8',
  2: 'int8',
  3: 'int16',
  4: 'int32',
  5: 'int64',
  6: 'float64',
  7: 'float32',
  8: 'uint16',
};

/** The codes this reader turns into token ids. */
const TOKEN_CODES: Record<number, TokenDtype> = { 4: 'int32', 8: 'uint16' };

function hasMagic(head: Uint8Array | undefined): boolean {
  return !!head && head.length >= MEGATRON_IDX_MAGIC.length && MEGATRON_IDX_MAGIC.every((b, i) => head[i] === b);
}

/** Prefixes having both `PREFIX.bin` and `PREFIX.idx` among `names`, in byte-wise order. */
function pairedPrefixes(names: readonly string[]): string[] {
  const set = new Set(names);
  return names.filter((n) => extOf(n) === '.idx' && set.has(n.slice(0, -4) + '.bin')).map((n) => n.slice(0, -4));
}

function sniffMegatron(input: SniffInput): SniffResult | undefined {
  if (input.isDirectory) {
    const prefixes = pairedPrefixes(input.names);
    if (!prefixes.length) return undefined;
    const idx = prefixes[0] + '.idx';
    return hasMagic(input.heads.get(idx))
      ? { format: 'megatron', confidence: 3, reason: `MMIDIDX magic in ${idx}` }
      : { format: 'megatron', confidence: 2, reason: `.bin + .idx pairs (${idx})` };
  }
  const name = path.basename(input.path);
  const ext = extOf(name);
  if (ext === '.idx' && hasMagic(input.head)) return { format: 'megatron', confidence: 3, reason: `MMIDIDX magic in ${name}` };
  if (ext === '.bin' && input.names.includes(name.slice(0, -4) + '.idx')) {
    return { format: 'megatron', confidence: 2, reason: `${name} has a sibling ${name.slice(0, -4)}.idx` };
  }
  return undefined;
}

/** A parsed `.idx` and its `.bin`. */
export interface MegatronIndex {
  dtype: TokenDtype;
  /** Tokens of every sequence. */
  lengths: Int32Array;
  /** Token offset inside the `.bin` of each document start (D − 1 of them), ascending. */
  documentStarts: Float64Array;
  /** Tokens in the `.bin` (sum of lengths). */
  numTokens: number;
  /** The token runs, when the pointers are not back to back from byte 0. */
  extents?: TokenExtents;
}

/**
 * Parses and checks a Megatron `.idx` against the size of its `.bin`.
 * @param idx the `.idx` bytes. @param idxFile, binFile paths for messages. @param binSize `.bin` size in bytes.
 * @throws DataError naming the file, the byte offset and what was expected: wrong magic, version
 *   or dtype code, a truncated header or array, a sequence pointer or length past the `.bin` end,
 *   document indices that do not run from 0 to S.
 */
export function parseMegatronIndex(idx: Buffer, idxFile: string, binFile: string, binSize: number): MegatronIndex {
  if (idx.length < MEGATRON_IDX_HEADER_BYTES) {
    throw new DataError(
      `${idxFile}: byte ${idx.length}: truncated header (${fmt(idx.length)} bytes; expected at least ${MEGATRON_IDX_HEADER_BYTES})`,
      idxFile,
    );
  }
  if (!hasMagic(idx))
    throw new DataError(`${idxFile}: byte 0: wrong magic; expected MMIDIDX\\x00\\x00 (a Megatron indexed dataset index)`, idxFile);
  const version = idx.readBigUInt64LE(9);
  if (version !== 1n) throw new DataError(`${idxFile}: byte 9: version ${version}; expected 1`, idxFile);
  const code = idx[17];
  const dtype = TOKEN_CODES[code];
  if (!dtype) {
    const known = DTYPE_CODES[code];
    throw new DataError(
      `${idxFile}: byte 17: dtype code ${code}${known ? ` (${known})` : ''} ${known ? 'is not a token dtype this reader supports' : 'is unknown'}; expected 4 (int32) or 8 (uint16)`,
      idxFile,
    );
  }
  const S = idx.readBigUInt64LE(18);
  const D = idx.readBigUInt64LE(26);
  const need = BigInt(MEGATRON_IDX_HEADER_BYTES) + 12n * S + 8n * D;
  if (need > BigInt(idx.length)) {
    throw new DataError(
      `${idxFile}: byte ${fmt(idx.length)}: the file ends before its arrays (${S} sequences, ${D} document indices need ${need} bytes)`,
      idxFile,
    );
  }
  const s = Number(S);
  const d = Number(D);
  const width = dtypeBytes(dtype);
  const lenAt = MEGATRON_IDX_HEADER_BYTES;
  const ptrAt = lenAt + 4 * s;
  const docAt = ptrAt + 8 * s;
  const lengths = new Int32Array(s);
  let numTokens = 0;
  let contiguous = true;
  const extents = new TokenExtentsBuilder();
  for (let i = 0; i < s; i++) {
    const len = idx.readInt32LE(lenAt + 4 * i);
    if (len < 0) throw new DataError(`${idxFile}: byte ${fmt(lenAt + 4 * i)}: sequence ${fmt(i)} has length ${len}; expected ≥ 0`, idxFile);
    const ptr = Number(idx.readBigInt64LE(ptrAt + 8 * i));
    if (ptr < 0 || ptr > binSize || (ptr === binSize && len > 0)) {
      throw new DataError(
        `${idxFile}: byte ${fmt(ptrAt + 8 * i)}: sequence ${fmt(i)}'s pointer ${fmt(ptr)} is outside ${path.basename(binFile)} (${fmt(binSize)} bytes)`,
        idxFile,
      );
    }
    if (ptr + len * width > binSize) {
      throw new DataError(
        `${idxFile}: byte ${fmt(lenAt + 4 * i)}: sequence ${fmt(i)}'s length ${fmt(len)} tokens from byte ${fmt(ptr)} passes the end of ${path.basename(binFile)} (${fmt(binSize)} bytes)`,
        idxFile,
      );
    }
    lengths[i] = len;
    if (ptr !== numTokens * width) contiguous = false;
    const last = extents.length - 1;
    if (last >= 0 && extents.byteOffsetAt(last) + extents.numTokensAt(last) * width === ptr) extents.extendLast(len);
    else if (len > 0) extents.push(ptr, len);
    numTokens += len;
  }
  const starts: number[] = [];
  let prev = -1;
  let tokenAt = 0;
  let seq = 0;
  for (let j = 0; j < d; j++) {
    const v = Number(idx.readBigInt64LE(docAt + 8 * j));
    const at = docAt + 8 * j;
    if ((j === 0 && v !== 0) || v < prev || v > s || (j === d - 1 && v !== s)) {
      throw new DataError(
        `${idxFile}: byte ${fmt(at)}: document index ${fmt(j)} is ${fmt(v)}; expected non-decreasing sequence indices from 0 to ${fmt(s)}`,
        idxFile,
      );
    }
    for (; seq < v; seq++) tokenAt += lengths[seq];
    if (j < d - 1) starts.push(tokenAt);
    prev = v;
  }
  if (d === 0 && s > 0)
    throw new DataError(
      `${idxFile}: byte 26: document count 0 with ${fmt(s)} sequences; expected document indices from 0 to ${fmt(s)}`,
      idxFile,
    );
  return { dtype, lengths, documentStarts: Float64Array.from(starts), numTokens, extents: contiguous ? undefined : extents.finish() };
}

async function openMegatron(input: SniffInput, opts: { dtype?: TokenDtype }): Promise<OpenedFormat> {
  const dir = input.isDirectory ? input.path : path.dirname(input.path);
  let prefixes: string[];
  if (input.isDirectory) prefixes = pairedPrefixes(input.names);
  else {
    const name = path.basename(input.path);
    prefixes = [extOf(name) === '.idx' || extOf(name) === '.bin' ? name.slice(0, -4) : name];
  }
  if (!prefixes.length) throw new DataError(`${input.path}: no PREFIX.bin + PREFIX.idx pairs in this folder`, input.path);
  const files: FormatFile[] = [];
  const starts: number[] = [];
  const notes: string[] = [];
  let dtype: TokenDtype | undefined;
  let first = '';
  let base = 0;
  for (const prefix of prefixes) {
    const binFile = path.join(dir, prefix + '.bin');
    const idxFile = path.join(dir, prefix + '.idx');
    const binSize = await fileSize(binFile);
    const ix = parseMegatronIndex(await readWhole(idxFile), idxFile, binFile, binSize);
    if (dtype && ix.dtype !== dtype) {
      throw new DataError(
        `${idxFile}: byte 17: dtype ${ix.dtype} differs from ${dtype} in ${first}; expected one dtype per stream`,
        idxFile,
      );
    }
    if (!dtype) {
      dtype = ix.dtype;
      first = prefix + '.idx';
    }
    const width = dtypeBytes(ix.dtype);
    if (!ix.extents && binSize > ix.numTokens * width)
      notes.push(`${prefix}.bin: ${fmt(binSize - ix.numTokens * width)} bytes after the indexed tokens are not shown`);
    for (const st of ix.documentStarts) starts.push(base + st);
    files.push({
      path: binFile,
      name: path
        .relative(input.isDirectory ? input.path : dir, binFile)
        .split(path.sep)
        .join('/'),
      numTokens: ix.numTokens,
      sizeBytes: binSize,
      layout: { dtype: ix.dtype, headerBytes: 0, extents: ix.extents },
      sidecars: [idxFile],
    });
    base += ix.numTokens;
  }
  if (opts.dtype && opts.dtype !== dtype) {
    throw new DataError(
      `${path.join(dir, first)}: byte 17: the index says ${dtype}, not the ${opts.dtype} the dtype option asks for`,
      path.join(dir, first),
    );
  }
  return { format: 'megatron', dtype: dtype!, dtypeSource: 'header', files, documents: { starts: Float64Array.from(starts) }, notes };
}

/** Megatron-LM `PREFIX.bin` + `PREFIX.idx`. */
export const megatronAdapter: FormatAdapter = {
  name: 'megatron',
  description: 'Megatron-LM / NeMo / GPT-NeoX PREFIX.bin + PREFIX.idx (indexed_dataset.py)',
  sniff: sniffMegatron,
  open: openMegatron,
};
