/**
 * Growing typed arrays for indexes read row by row (a Dolma `.csv.gz` of millions of rows): a few
 * bytes per entry instead of a JS number array or an object per row. Capacity doubles.
 */

/** A growing typed array of one kind. */
class Growable<T extends Float64Array | Uint32Array> {
  private buf: T;
  private n = 0;

  constructor(private readonly make: (length: number) => T) {
    this.buf = make(1024);
  }

  /** Entries pushed. */
  get length(): number {
    return this.n;
  }

  /** Appends one value. */
  push(v: number): void {
    if (this.n === this.buf.length) {
      const next = this.make(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = v;
  }

  /** Entry `i` (0 ≤ i < length; not checked). */
  at(i: number): number {
    return this.buf[i];
  }

  /** Sets entry `i` (0 ≤ i < length; not checked). */
  set(i: number, v: number): void {
    this.buf[i] = v;
  }

  /** Forgets every entry (the capacity stays). */
  clear(): void {
    this.n = 0;
  }

  /** A copy holding exactly the entries pushed. */
  toArray(): T {
    return this.buf.slice(0, this.n) as T;
  }
}

/** A growing Float64Array: token offsets past 2^32, whole numbers up to 2^53. */
export class GrowableFloat64 extends Growable<Float64Array> {
  constructor() {
    super((n) => new Float64Array(n));
  }
}

/** A growing Uint32Array: small indexes (an interned string's number). */
export class GrowableUint32 extends Growable<Uint32Array> {
  constructor() {
    super((n) => new Uint32Array(n));
  }
}
