/**
 * Integer arrays a training order reads: index files written by the trainer (Megatron's
 * `.npy` indices, OLMo's `global_indices.npy`) and the order's own cached inverses. They can be
 * hundreds of MB, so they are read from disk through a small page cache rather than loaded.
 *
 * The `.npy` format (`numpy/lib/format.py`): the magic `\x93NUMPY`, version bytes, a `<u2`
 * (version 1) or `<u4` (2, 3) header length, a Python dict literal with `descr`, `fortran_order`
 * and `shape`, padded so the data starts at a multiple of 64 bytes (older numpy padded to 16; the
 * length field says where the data starts either way).
 */
import * as fs from 'fs';
import * as os from 'os';
import { DataError } from '../errors';
import { fmt } from '../units';
import { hasNpyMagic, npyHeaderBytes, parseNpyDict } from '../formats/npy';
import { fileKind, UnreadableInputError } from '../safeRead';

/** A read-only vector of integers (each exact in a double: |v| < 2^53). */
export interface IntVector {
  readonly length: number;
  /** Element `i` (0-based). @throws RangeError outside 0..length−1. */
  get(i: number): number;
}

/** Element types of index files: numpy `descr` without the byte-order mark. */
export type IntDtype = 'i4' | 'u4' | 'i8' | 'u8' | 'f8';

const DTYPE_BYTES: Record<IntDtype, number> = { i4: 4, u4: 4, i8: 8, u8: 8, f8: 8 };

/**
 * Opens an index file for reading without trusting what is at the path (as `safeRead.ts` reads
 * metadata): a folder, FIFO, device or socket is refused before the open (a FIFO would block it),
 * and the open is non-blocking and checked again with `fstat`.
 * @param what what the file should be, for the message.
 * @returns the file descriptor. @throws UnreadableInputError (a DataError naming the file); a missing file as fs does.
 */
export function openRegularFileSync(file: string, what: string): number {
  const refuse = (st: fs.Stats) =>
    new UnreadableInputError(`${file}: is ${fileKind(st)}; expected ${what} (a regular file)`, file, 'not-regular');
  const st = fs.statSync(file);
  if (!st.isFile()) throw refuse(st);
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  const again = fs.fstatSync(fd);
  if (!again.isFile()) {
    fs.closeSync(fd);
    throw refuse(again);
  }
  return fd;
}

/** A vector over an in-memory typed array. */
export class ArrayVector implements IntVector {
  constructor(readonly array: Int32Array | Uint32Array | Float64Array) {}
  get length(): number {
    return this.array.length;
  }
  get(i: number): number {
    if (!(i >= 0 && i < this.array.length)) throw new RangeError(`index ${i} is outside 0..${this.array.length - 1}`);
    return this.array[i];
  }
}

const PAGE_BYTES = 65_536;
const LITTLE_ENDIAN = os.endianness() === 'LE';
const PAGES = 32;

/**
 * A vector stored little-endian in a file from byte `dataOffset`, read with blocking reads of
 * 64 KiB pages (32 kept, least recently used dropped). Blocking: callers run it in the CLI or a
 * worker, never on the extension host's thread for big work.
 */
export class FileVector implements IntVector {
  private readonly pages = new Map<number, Buffer>();
  private readonly width: number;
  /** The page read last (most reads fall on the page before them). */
  private lastPage = -1;
  private lastBuf: Buffer | undefined;

  /**
   * @param file path (for messages). @param fd an open descriptor (owned: {@link close} closes it).
   * @param dtype element type. @param dataOffset bytes before element 0. @param length elements.
   */
  constructor(
    readonly file: string,
    private readonly fd: number,
    readonly dtype: IntDtype,
    readonly dataOffset: number,
    readonly length: number,
  ) {
    this.width = DTYPE_BYTES[dtype];
  }

  /** Opens `file` holding raw little-endian elements after `dataOffset` bytes; the length is what fits. */
  static open(file: string, dtype: IntDtype, dataOffset = 0, length?: number): FileVector {
    const fd = openRegularFileSync(file, 'an index array');
    const size = fs.fstatSync(fd).size;
    const fits = Math.floor((size - dataOffset) / DTYPE_BYTES[dtype]);
    if (length !== undefined && length > fits) {
      fs.closeSync(fd);
      throw new DataError(
        `${file}: byte ${fmt(size)}: the file ends before its ${fmt(length)} elements (expected ${fmt(dataOffset + length * DTYPE_BYTES[dtype])} bytes)`,
        file,
      );
    }
    return new FileVector(file, fd, dtype, dataOffset, length ?? fits);
  }

  get(i: number): number {
    if (!(i >= 0 && i < this.length && Number.isInteger(i)))
      throw new RangeError(`${this.file}: element ${i} is outside 0..${this.length - 1}`);
    const byte = this.dataOffset + i * this.width;
    const page = Math.floor(byte / PAGE_BYTES);
    const at = byte - page * PAGE_BYTES;
    let buf = this.page(page);
    if (at + this.width > buf.length) {
      // An element across two pages: read it directly.
      buf = Buffer.alloc(this.width);
      fs.readSync(this.fd, buf, 0, this.width, byte);
      return decode(buf, 0, this.dtype, this.file, i);
    }
    return decode(buf, at, this.dtype, this.file, i);
  }

  private page(n: number): Buffer {
    if (n === this.lastPage && this.lastBuf) return this.lastBuf;
    const buf = this.loadPage(n);
    this.lastPage = n;
    this.lastBuf = buf;
    return buf;
  }

  private loadPage(n: number): Buffer {
    let buf = this.pages.get(n);
    if (buf) {
      this.pages.delete(n);
      this.pages.set(n, buf);
      return buf;
    }
    buf = Buffer.alloc(PAGE_BYTES);
    const got = fs.readSync(this.fd, buf, 0, PAGE_BYTES, n * PAGE_BYTES);
    buf = buf.subarray(0, got);
    if (this.pages.size >= PAGES) this.pages.delete(this.pages.keys().next().value as number);
    this.pages.set(n, buf);
    return buf;
  }

  /** Elements `[start, start + count)` into a new array, in one read. */
  readRange(start: number, count: number): Float64Array {
    const out = new Float64Array(count);
    const buf = Buffer.alloc(count * this.width);
    fs.readSync(this.fd, buf, 0, buf.length, this.dataOffset + start * this.width);
    if (LITTLE_ENDIAN && (this.dtype === 'u4' || this.dtype === 'i4')) {
      // Buffer.alloc of a whole number of elements is 4-byte aligned: a typed view, copied in one call.
      out.set(this.dtype === 'u4' ? new Uint32Array(buf.buffer, buf.byteOffset, count) : new Int32Array(buf.buffer, buf.byteOffset, count));
      return out;
    }
    for (let k = 0; k < count; k++) out[k] = decode(buf, k * this.width, this.dtype, this.file, start + k);
    return out;
  }

  close(): void {
    fs.closeSync(this.fd);
    this.pages.clear();
    this.lastBuf = undefined;
    this.lastPage = -1;
  }
}

function decode(buf: Buffer, at: number, dtype: IntDtype, file: string, i: number): number {
  switch (dtype) {
    case 'i4':
      return buf.readInt32LE(at);
    case 'u4':
      return buf.readUInt32LE(at);
    case 'f8':
      return buf.readDoubleLE(at);
    default: {
      const v = dtype === 'i8' ? buf.readBigInt64LE(at) : buf.readBigUInt64LE(at);
      if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) {
        throw new DataError(`${file}: element ${fmt(i)} is ${v}, beyond the integers this tool reads exactly (2^53)`, file);
      }
      return Number(v);
    }
  }
}

/** A parsed `.npy` header of an integer array. */
export interface NpyInfo {
  dtype: IntDtype;
  shape: number[];
  /** Bytes before the first element. */
  dataOffset: number;
}

const DESCRS: Record<string, IntDtype> = { '<i4': 'i4', '<u4': 'u4', '<i8': 'i8', '<u8': 'u8', '<f8': 'f8' };

/** True when the bytes start with the `.npy` magic. */
export const isNpy = hasNpyMagic;

/**
 * Parses the header of a `.npy` file of little-endian integers (`<i4 <u4 <i8 <u8`, or `<f8`),
 * C order, any number of dimensions (the frame and dict through the format layer's
 * {@link parseNpyDict}).
 * @param head the first bytes (4 KiB covers any header numpy writes for these arrays).
 * @param size the file size: the data must fit.
 * @throws DataError naming the file and byte: no magic, unknown version, a truncated header,
 *   a dtype that is not one of these, Fortran order, a file shorter than the shape needs.
 */
export function parseNpyInfo(head: Buffer, file: string, size: number): NpyInfo {
  const { descr, fortranOrder, shape, shapeText, dictAt: at, headerBytes: dataOffset } = parseNpyDict(head, file);
  const dtype = DESCRS[descr];
  if (!dtype)
    throw new DataError(
      `${file}: byte ${at}: .npy dtype '${descr}' is not an index dtype (expected '<i4', '<u4', '<i8', '<u8' or '<f8')`,
      file,
    );
  if (fortranOrder)
    throw new DataError(`${file}: byte ${at}: the array is in Fortran order (expected C order, as numpy.save writes index arrays)`, file);
  if (!shape || shape.some((d) => !Number.isSafeInteger(d)))
    throw new DataError(`${file}: byte ${at}: .npy shape (${shapeText}) is not a list of sizes`, file);
  const need = dataOffset + shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype];
  if (need > size)
    throw new DataError(
      `${file}: byte ${fmt(size)}: the file ends before the data its .npy header promises (expected ${fmt(need)} bytes)`,
      file,
    );
  return { dtype, shape, dataOffset };
}

/** Opens a `.npy` integer array for reading. @returns the vector (all elements, row-major) and the shape. @throws DataError as {@link parseNpyInfo}; a missing file as fs does. */
export function openNpy(file: string): { vector: FileVector; shape: number[] } {
  const fd = openRegularFileSync(file, 'a .npy index array');
  try {
    const size = fs.fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(4096, size));
    fs.readSync(fd, head, 0, head.length, 0);
    const info = parseNpyInfo(head, file, size);
    const n = info.shape.reduce((a, b) => a * b, 1);
    return { vector: new FileVector(file, fd, info.dtype, info.dataOffset, n), shape: info.shape };
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/**
 * Writes a `.npy` (format 1.0, C order, header padded with spaces and a newline to a multiple of 64
 * bytes, as `numpy.lib.format.write_array` does).
 * @param dtype the element type written. @param shape the array's shape (its product = `data.length`).
 */
export function npyBytes(data: Int32Array | Uint32Array | Float64Array, dtype: IntDtype, shape: number[]): Buffer {
  const width = DTYPE_BYTES[dtype];
  const body = Buffer.alloc(data.length * width);
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (dtype === 'i4') body.writeInt32LE(v, i * 4);
    else if (dtype === 'u4') body.writeUInt32LE(v, i * 4);
    else if (dtype === 'f8') body.writeDoubleLE(v, i * 8);
    else if (dtype === 'i8') body.writeBigInt64LE(BigInt(v), i * 8);
    else body.writeBigUInt64LE(BigInt(v), i * 8);
  }
  return Buffer.concat([npyHeaderBytes(`<${dtype}`, shape), body]);
}
