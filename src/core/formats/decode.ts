/**
 * Turning a file's bytes, read front to back in chunks of any size, into its token ids under a
 * {@link TokenLayout}: skip the header (or the bytes between extents), widen uint16, keep int32
 * bits, carry a token split across two chunks. The verify worker feeds it the same chunks it
 * hashes, so the stream index of any format is built in the one read of the file.
 */
import { TokenLayout, TokenExtents, dtypeBytes } from './types';

/** Tokens decoded per call of the sink at most (a scratch buffer of this many ids is reused). */
const SCRATCH_TOKENS = 1 << 16;

/**
 * Sequential decoder of one file. `sink` receives host-order uint32 ids in stream order; a view it
 * is given is valid only during the call.
 */
export class LayoutDecoder {
  private readonly runs: TokenExtents;
  private readonly width: 2 | 4;
  private run = 0;
  /** File byte offset of the next byte pushed. */
  private pos = 0;
  private readonly carry: Uint8Array;
  private carried = 0;
  private readonly scratch = new Uint32Array(SCRATCH_TOKENS);
  private readonly littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

  /**
   * @param numTokens the file's tokens (the single run from `headerBytes` when there are no extents).
   * @throws RangeError when the extents are not in ascending byte order without overlap (a
   *   sequential read cannot decode them).
   */
  constructor(
    layout: TokenLayout,
    numTokens: number,
    private readonly sink: (ids: Uint32Array) => void,
  ) {
    this.width = dtypeBytes(layout.dtype);
    this.runs = layout.extents ?? { byteOffsets: Float64Array.of(layout.headerBytes), numTokens: Float64Array.of(numTokens) };
    const { byteOffsets, numTokens: counts } = this.runs;
    for (let i = 1; i < byteOffsets.length; i++) {
      if (byteOffsets[i] < byteOffsets[i - 1] + counts[i - 1] * this.width) {
        throw new RangeError(
          `token extent ${i} at byte ${byteOffsets[i]} starts before extent ${i - 1} ends; expected extents in file order`,
        );
      }
    }
    this.carry = new Uint8Array(this.width);
  }

  /** Decodes the next `bytes` of the file (they follow the bytes pushed before). */
  push(bytes: Uint8Array): void {
    const chunkStart = this.pos;
    const chunkEnd = chunkStart + bytes.length;
    const { byteOffsets, numTokens: counts } = this.runs;
    while (this.run < byteOffsets.length) {
      const rs = byteOffsets[this.run];
      const re = rs + counts[this.run] * this.width;
      if (re <= chunkStart) {
        this.run++;
        continue;
      }
      if (rs >= chunkEnd) break;
      const a = Math.max(rs, chunkStart);
      const b = Math.min(re, chunkEnd);
      this.feed(bytes.subarray(a - chunkStart, b - chunkStart));
      if (b < re) break;
      this.run++;
    }
    this.pos = chunkEnd;
  }

  private feed(bytes: Uint8Array): void {
    const w = this.width;
    let off = 0;
    if (this.carried > 0) {
      const take = Math.min(w - this.carried, bytes.length);
      this.carry.set(bytes.subarray(0, take), this.carried);
      this.carried += take;
      off = take;
      if (this.carried < w) return;
      this.carried = 0;
      this.decode(this.carry, 0, 1);
    }
    const whole = Math.floor((bytes.length - off) / w);
    for (let done = 0; done < whole;) {
      const k = Math.min(SCRATCH_TOKENS, whole - done);
      this.decode(bytes, off + done * w, k);
      done += k;
    }
    const rest = bytes.length - off - whole * w;
    if (rest > 0) {
      this.carry.set(bytes.subarray(bytes.length - rest));
      this.carried = rest;
    }
  }

  /** Decodes `k` tokens at `bytes[at…]` into the scratch buffer (or a view when aligned) and hands them on. */
  private decode(bytes: Uint8Array, at: number, k: number): void {
    const byteOffset = bytes.byteOffset + at;
    if (this.width === 4 && this.littleEndian && byteOffset % 4 === 0) {
      this.sink(new Uint32Array(bytes.buffer, byteOffset, k));
      return;
    }
    const out = this.scratch.subarray(0, k);
    if (this.width === 2 && this.littleEndian && byteOffset % 2 === 0) {
      out.set(new Uint16Array(bytes.buffer, byteOffset, k)); // native widening
    } else if (this.width === 2) {
      for (let i = 0, j = at; i < k; i++, j += 2) out[i] = bytes[j] | (bytes[j + 1] << 8);
    } else {
      for (let i = 0, j = at; i < k; i++, j += 4)
        out[i] = (bytes[j] | (bytes[j + 1] << 8) | (bytes[j + 2] << 16) | (bytes[j + 3] << 24)) >>> 0;
    }
    this.sink(out);
  }
}
