/**
 * Growing typed arrays for indexes read row by row (a Dolma `.csv.gz` of millions of rows): a few
 * bytes per entry instead of a JS number array or an object per row. Capacity doubles.
 */

/** A growing Float64Array: token offsets past 2^32, byte offsets, whole numbers up to 2^53. */
export class GrowableFloat64 {
  private buf = new Float64Array(1024);
  private n = 0;

  /** Entries pushed. */
  get length(): number {
    return this.n;
  }

  /** Appends one value. */
  push(v: number): void {
    if (this.n === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = v;
  }

  /** Entry `i` (0 ≤ i < length; not checked). */
  at(i: number): number {
    return this.buf[i];
  }

  /** A copy holding exactly the entries pushed. */
  toArray(): Float64Array {
    return this.buf.slice(0, this.n);
  }
}

/** A growing Uint32Array: small indexes (an interned string's number). */
export class GrowableUint32 {
  private buf = new Uint32Array(1024);
  private n = 0;

  /** Entries pushed. */
  get length(): number {
    return this.n;
  }

  /** Appends one value (0 ≤ v < 2^32). */
  push(v: number): void {
    if (this.n === this.buf.length) {
      const next = new Uint32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = v;
  }

  /** Entry `i` (0 ≤ i < length; not checked). */
  at(i: number): number {
    return this.buf[i];
  }
}
