/**
 * The numpy `.npy` header (format versions 1.0, 2.0, 3.0), as `numpy/lib/format.py` writes it:
 * the magic `\x93NUMPY`, major and minor version bytes, the header length (`<u2` for 1.0, `<u4`
 * for 2.0 and 3.0), then a Python dict literal `{'descr': '<u2', 'fortran_order': False,
 * 'shape': (N,), }` padded with spaces and a newline so the data starts at a multiple of 64 bytes.
 */
import { DataError } from '../errors';
import { fmt } from '../units';
import { TokenDtype } from './types';

/** The six magic bytes every `.npy` file starts with. */
export const NPY_MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]);

/** A parsed `.npy` header of a one-dimensional token array. */
export interface NpyHeader {
  dtype: TokenDtype;
  /** Bytes before the first element (magic + version + length field + dict). */
  headerBytes: number;
  /** Elements (tokens) in the array. */
  numTokens: number;
}

/** True when `head` starts with the `.npy` magic. */
export function hasNpyMagic(head: Uint8Array): boolean {
  return head.length >= NPY_MAGIC.length && NPY_MAGIC.every((b, i) => head[i] === b);
}

const DESCR_DTYPES: Record<string, TokenDtype> = { '<u2': 'uint16', '<u4': 'uint32', '<i4': 'int32', '|u2': 'uint16' };

/** The fields of a `.npy` header dict, as written (the callers decide which dtypes and shapes they take). */
export interface NpyDict {
  /** The `descr` string (`'<u4'`, `'|u1'`, …). */
  descr: string;
  fortranOrder: boolean;
  /** The shape's sizes (digits as written: possibly past 2^53); undefined when one is not digits. */
  shape: number[] | undefined;
  /** The shape as written between the parentheses, for messages. */
  shapeText: string;
  /** Byte offset of the dict (8 + the length field), where messages about its fields point. */
  dictAt: number;
  /** Bytes before the first element (magic + version + length field + dict). */
  headerBytes: number;
}

/**
 * Parses the frame of a `.npy` header (magic, version, length field) and its dict's `descr`,
 * `fortran_order` and `shape`: the one parser of the format, for token files
 * ({@link parseNpyHeader}) and a training order's index arrays (`core/order/vector.ts`).
 * @param head the file's first bytes (at least the whole header; 4,096 covers every header numpy writes for small shapes).
 * @throws DataError naming the file, the byte offset and what was expected.
 */
export function parseNpyDict(head: Uint8Array, file: string): NpyDict {
  if (!hasNpyMagic(head)) throw new DataError(`${file}: byte 0: expected the .npy magic \\x93NUMPY`, file);
  if (head.length < 10)
    throw new DataError(`${file}: byte ${head.length}: the .npy header is truncated (expected at least 10 bytes)`, file);
  const major = head[6];
  if (major < 1 || major > 3) throw new DataError(`${file}: byte 6: .npy format version ${major} is unknown (expected 1, 2 or 3)`, file);
  const lenBytes = major === 1 ? 2 : 4;
  if (head.length < 8 + lenBytes) throw new DataError(`${file}: byte 8: the .npy header is truncated`, file);
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const dictLen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const headerBytes = 8 + lenBytes + dictLen;
  if (headerBytes > head.length) {
    throw new DataError(
      `${file}: byte ${8 + lenBytes}: the .npy header says ${fmt(dictLen)} bytes of header, more than the ${fmt(head.length - 8 - lenBytes)} read (expected a header under 4 KiB)`,
      file,
    );
  }
  const dict = Buffer.from(head.buffer, head.byteOffset + 8 + lenBytes, dictLen).toString('latin1');
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(dict)?.[1];
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(dict)?.[1];
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(dict)?.[1];
  const dictAt = 8 + lenBytes;
  if (descr === undefined || fortran === undefined || shapeText === undefined) {
    throw new DataError(
      `${file}: byte ${dictAt}: the .npy header dict lacks 'descr', 'fortran_order' or 'shape' (got ${JSON.stringify(dict.trim().slice(0, 80))})`,
      file,
    );
  }
  const dims = shapeText
    .split(',')
    .map((d) => d.trim())
    .filter((d) => d !== '');
  const shape = dims.every((d) => /^\d+$/.test(d)) ? dims.map(Number) : undefined;
  return { descr, fortranOrder: fortran === 'True', shape, shapeText, dictAt, headerBytes };
}

/**
 * The `.npy` format 1.0 header of a C-order array, byte for byte as `np.save` writes it: magic,
 * version 1.0, the `<u2` header length, the dict padded with spaces and a newline so the data
 * starts at a multiple of 64 bytes.
 * @param descr the dtype as numpy writes it (`'<u4'`). @param shape the array's shape.
 */
export function npyHeaderBytes(descr: string, shape: readonly number[]): Buffer {
  const dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const unpadded = 10 + dict.length + 1;
  const text = dict + ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  NPY_MAGIC.copy(head, 0);
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(text.length, 8);
  return Buffer.concat([head, Buffer.from(text, 'latin1')]);
}

/**
 * Parses the header of a `.npy` file holding a one-dimensional array of `<u2`, `<u4` or `<i4`
 * token ids (C order; a 2-D array is refused, the stream is one row of ids).
 * @param head the file's first bytes (at least the whole header; 4,096 covers every header numpy writes for 1-D arrays).
 * @param file path, for messages.
 * @param sizeBytes the file size: the array must fit in it.
 * @throws DataError naming the file, the byte offset and what was expected.
 */
export function parseNpyHeader(head: Uint8Array, file: string, sizeBytes: number): NpyHeader {
  const { descr, shape, shapeText, dictAt: at, headerBytes } = parseNpyDict(head, file);
  const dtype = DESCR_DTYPES[descr];
  if (!dtype) throw new DataError(`${file}: byte ${at}: .npy dtype '${descr}' is not a token dtype (expected '<u2', '<u4' or '<i4')`, file);
  if (!shape || shape.length !== 1) {
    throw new DataError(
      `${file}: byte ${at}: .npy shape (${shapeText}) is not one-dimensional (expected (N,): one row of token ids)`,
      file,
    );
  }
  const numTokens = shape[0];
  const need = headerBytes + numTokens * (dtype === 'uint16' ? 2 : 4);
  if (!Number.isSafeInteger(numTokens) || need > sizeBytes) {
    throw new DataError(
      `${file}: byte ${fmt(sizeBytes)}: the file ends before the ${fmt(numTokens)} tokens its .npy header promises (expected ${fmt(need)} bytes)`,
      file,
    );
  }
  return { dtype, headerBytes, numTokens };
}
