/**
 * Scanning a range of the token stream for matches: the exact attribution rules of the match
 * definition (`./index.ts`) on top of the automaton table (`./automaton.ts`).
 *
 * {@link RangeScanner.scanRange} reports every match whose first byte lies in a token of
 * `[a, b)`, in completion order. To be exact at the range's edges it starts the automaton a
 * little before `a` (after the last EOS, or far enough back that every match in progress at
 * `a` is seen; matches starting before `a` are dropped) and runs it a little past `b` (until
 * no match starting before `b` can still complete). Chunks of `chunkTokens` are read ahead
 * while the previous chunk is scanned; the few tokens of context a match needs outside the
 * chunk in hand (walking back to its first byte, the characters around it for `word`) are read
 * synchronously in small blocks.
 */
import { CancelledError } from '../errors';
import { HitFn, KNOWN_AFTER, KNOWN_BEFORE, TokenBytes, TokenTable } from './automaton';
import { decodeOneChar, isWordCodePoint, utf8LeadLength } from './terms';

/** What the scanner needs from a token stream (a `TokenStream` satisfies it). */
export interface TokenSource {
  readonly totalTokens: number;
  read(start: number, count: number, into?: Uint32Array): Promise<Uint32Array>;
  readSync(start: number, count: number): Uint32Array;
  /**
   * The global token range `[start, end)` of the file holding token `g` (a `TokenStream`'s
   * segment). Context reads stay inside it: a block of 4,096 tokens around `g` over
   * 16-token shards would open 256 files for every context look-up.
   */
  fileRangeAt?(g: number): [number, number];
}

/** A match located in the stream. Offsets are global token offsets. */
export interface MatchPlace {
  term: number;
  /** Token holding the first byte (first id for `ids`): the occurrence's place. */
  start: number;
  /** Byte of that token where the match starts (0 for `ids`). */
  startByte: number;
  /** Token holding the last byte (last id for `ids`). */
  end: number;
  /** Bytes of token `end` up to the match's end (text mode; 0 for `ids`). */
  endByte: number;
}

/** Receives a match: the fields of {@link MatchPlace} as arguments (no object per match on the count path). */
export type MatchFn = (term: number, start: number, startByte: number, end: number, endByte: number) => void;

/** Options of {@link RangeScanner.scanRange}. */
export interface ScanOptions {
  /** Tokens per sequential read (default 4 Mi tokens = 16 MiB). */
  chunkTokens?: number;
  signal?: AbortSignal;
  /** Called after each chunk with the tokens of `[a, b)` it covered. */
  onChunk?: (tokens: number) => void;
  /**
   * Counts by piece: matches the WebAssembly step can count itself (starting and completing in
   * one token of `[a, b)` below `limit`) go to `add` per piece of tokens instead of `onMatch`, the
   * others to `onMatch` as always.
   */
  counts?: CountSink;
}

/**
 * Where {@link ScanOptions.counts} puts its counts: the scan cuts `[a, min(b, limit))` into
 * pieces of tokens whose matches are counted together (a bucket of updates in the card's order;
 * a run of tokens read by the same updates through a training order).
 */
export interface CountSink {
  /**
   * Opens the piece starting at global token offset `g` (called in increasing `g`, also where a
   * read chunk begins inside a piece) and returns its end (exclusive, a global token offset > g);
   * the following `add` calls are that piece's counts.
   */
  piece(g: number): number;
  /** Matches starting at or after this global token offset are not counted (nor given to `add`). */
  limit: number;
  /** `n` more matches of `term` in the piece last opened. */
  add(term: number, n: number): void;
}

const BLOCK = 4096;
export const DEFAULT_CHUNK_TOKENS = 4 << 20;

/** Scans ranges of one stream with one table (not re-entrant: one scan at a time). */
export class RangeScanner {
  private cur: Uint32Array = new Uint32Array(0);
  private curBase = 0;
  private prev: Uint32Array = new Uint32Array(0);
  private prevBase = 0;
  private aux: Uint32Array = new Uint32Array(0);
  private bufs: Uint32Array[] = [];
  private auxBase = 0;
  private readonly ids: boolean;
  private readonly tb: TokenBytes;
  private readonly eos: number;
  // the scan in progress
  private a = 0;
  private b = 0;
  private onMatch: MatchFn = () => undefined;
  private readonly hitFn: HitFn;

  constructor(
    readonly src: TokenSource,
    readonly table: TokenTable,
    readonly word: boolean,
  ) {
    this.ids = table.dfa.compiled.mode === 'ids';
    this.tb = table.tb;
    this.eos = table.eos;
    this.hitFn = (term, jLocal, back, endIn, known) => this.hit(term, this.curBase + jLocal, back, endIn, known);
  }

  /** The id at global offset `g` (0 ≤ g < totalTokens), from the chunks in hand or a small synchronous read. */
  tokenAt(g: number): number {
    let k = g - this.curBase;
    if (k >= 0 && k < this.cur.length) return this.cur[k];
    k = g - this.prevBase;
    if (k >= 0 && k < this.prev.length) return this.prev[k];
    k = g - this.auxBase;
    if (k >= 0 && k < this.aux.length) return this.aux[k];
    // One file at most per look-up: the block around `g`, clipped to the file holding it (the
    // scan's cost per shard is then flat in the number of shards, however small they are).
    const [lo, hi] = this.src.fileRangeAt?.(g) ?? [0, this.src.totalTokens];
    const start = Math.max(lo, Math.min(g - (BLOCK >> 1), hi - BLOCK));
    this.aux = this.src.readSync(start, Math.min(BLOCK, hi - start));
    this.auxBase = start;
    return this.aux[g - start];
  }

  private isEos(id: number): boolean {
    return !this.ids && id === this.eos;
  }

  /** First token to feed so that the automaton is in the right state at `a`. */
  private warmStart(a: number): number {
    let w = a,
      got = 0;
    const need = this.table.maxLen - 1;
    while (w > 0 && got < need) {
      const id = this.tokenAt(w - 1);
      if (this.isEos(id)) break;
      got += this.table.symbolsOf(id);
      w--;
    }
    return w;
  }

  /** End of the tokens to feed so that every match starting before `b` has completed. */
  private contEnd(b: number): number {
    let c = b,
      got = 0;
    const need = this.table.maxLen - 1;
    const total = this.src.totalTokens;
    while (c < total && got < need) {
      const id = this.tokenAt(c);
      if (this.isEos(id)) break;
      got += this.table.symbolsOf(id);
      c++;
    }
    return c;
  }

  /**
   * Reports (through `onMatch`, in completion order) every match whose first byte is in a token
   * of `[a, b)`.
   * @throws DataError/RangeRequestError from the reads; CancelledError when `signal` fires (checked per chunk).
   */
  async scanRange(a: number, b: number, onMatch: MatchFn, opts: ScanOptions = {}): Promise<void> {
    if (b <= a) return;
    const C = Math.max(1, opts.chunkTokens ?? DEFAULT_CHUNK_TOKENS);
    this.cur = new Uint32Array(0);
    this.prev = this.cur;
    this.aux = this.cur;
    this.a = a;
    this.b = b;
    this.onMatch = onMatch;
    const w = this.warmStart(a);
    const c = this.contEnd(b);
    let pos = w;
    // The DFA's start state (a whole-word search: a possible word edge): `w` is a document's
    // start, or `a` itself, or before `a` (its matches are dropped); every edge is checked here.
    let state = this.table.dfa.start;
    // Three buffers in rotation: the chunk being scanned, the one before it (walks back into it),
    // and the one being read ahead.
    const size = Math.min(C, c - w);
    if (this.bufs.length !== 3 || this.bufs[0].length < size) {
      // Chunks are read straight into the WebAssembly step's memory when it is available.
      this.bufs = this.table.readBuffers(3, Math.max(size, Math.min(C, 65536)));
    }
    let nextBuf = 0;
    const readAt = (p: number) => {
      const into = this.bufs.length ? this.bufs[nextBuf] : undefined;
      nextBuf = (nextBuf + 1) % 3;
      const r = this.src.read(p, Math.min(C, c - p), into);
      r.catch(() => undefined); // awaited below; this only keeps an abandoned read from being "unhandled"
      return r;
    };
    let pending = readAt(pos);
    while (pos < c) {
      const chunk = await pending;
      if (opts.signal?.aborted) throw new CancelledError();
      this.prev = this.cur;
      this.prevBase = this.curBase;
      this.cur = chunk;
      this.curBase = pos;
      const from = pos;
      pos += chunk.length;
      if (pos < c) pending = readAt(pos);
      state = opts.counts ? this.scanCounting(chunk, from, state, opts.counts) : this.table.scan(chunk, 0, chunk.length, state, this.hitFn);
      opts.onChunk?.(Math.max(0, Math.min(pos, b) - Math.max(from, a)));
    }
  }

  /**
   * Scans the chunk at global offset `base` in pieces: counting in the kernel over the tokens of
   * `[a, min(b, limit))`, one {@link CountSink.piece} at a time, reporting matches elsewhere.
   * @returns the state after the chunk.
   */
  private scanCounting(chunk: Uint32Array, base: number, state: number, sink: CountSink): number {
    const end = Math.min(this.b, sink.limit);
    for (let p = 0; p < chunk.length;) {
      const g = base + p;
      if (g < this.a || g >= end) {
        const q = g < this.a ? Math.min(chunk.length, this.a - base) : chunk.length;
        state = this.table.scan(chunk, p, q, state, this.hitFn);
        p = q;
        continue;
      }
      const q = Math.min(chunk.length, Math.min(end, sink.piece(g)) - base);
      state = this.table.scan(chunk, p, q, state, this.hitFn, true);
      this.table.takeCounts(sink.add);
      p = q;
    }
    return state;
  }

  private hit(term: number, j: number, back: number, endIn: number, known: number): void {
    let start: number, sb: number;
    if (this.ids) {
      start = j - back;
      sb = 0;
    } else if (back <= 0) {
      start = j;
      sb = -back;
    } else {
      let k = j - 1,
        need = back;
      for (;;) {
        const len = this.table.symbolsOf(this.tokenAt(k));
        if (need <= len) {
          start = k;
          sb = len - need;
          break;
        }
        need -= len;
        k--;
      }
    }
    if (start < this.a || start >= this.b) return;
    if (this.word && !((known & KNOWN_BEFORE || this.edgeBefore(start, sb)) && (known & KNOWN_AFTER || this.edgeAfter(j, endIn)))) return;
    this.onMatch(term, start, sb, j, endIn);
  }

  private byteOf(id: number, i: number): number {
    return this.tb.bytes[this.tb.offsets[id] + i];
  }

  /** The first byte of token `id`, or −1 for EOS and tokens without bytes. */
  private firstByteOf(id: number): number {
    return this.isEos(id) || this.table.symbolsOf(id) === 0 ? -1 : this.byteOf(id, 0);
  }

  /** The last byte of token `id`, or −1 for EOS and tokens without bytes. */
  private lastByteOf(id: number): number {
    const n = this.isEos(id) ? 0 : this.table.symbolsOf(id);
    return n === 0 ? -1 : this.byteOf(id, n - 1);
  }

  /** True when the character before byte `sb` of token `t` is not a word character (or is a document edge). */
  private edgeBefore(t: number, sb: number): boolean {
    // The common case first: an ASCII byte just before (in this token, or the last of the one before).
    const near = sb > 0 ? this.byteOf(this.tokenAt(t), sb - 1) : t > 0 ? this.lastByteOf(this.tokenAt(t - 1)) : -1;
    if (near >= 0 && near < 0x80) return !isWordCodePoint(near);
    const rev: number[] = []; // bytes before the match, nearest first
    let k = t,
      lim = sb;
    for (;;) {
      if (lim > 0) {
        const id = this.tokenAt(k);
        for (let x = lim - 1; x >= 0 && rev.length < 4; x--) rev.push(this.byteOf(id, x));
      }
      if (rev.length >= 4 || (rev.length > 0 && (rev[rev.length - 1] & 0xc0) !== 0x80)) break;
      if (--k < 0) break;
      const id = this.tokenAt(k);
      if (this.isEos(id)) break;
      lim = this.table.symbolsOf(id);
    }
    if (rev.length === 0) return true;
    if (rev[0] < 0x80) return !isWordCodePoint(rev[0]);
    for (let n = 1; n <= rev.length; n++) {
      if ((rev[n - 1] & 0xc0) !== 0x80) {
        const cp = decodeOneChar(rev.slice(0, n).reverse());
        return cp < 0 || !isWordCodePoint(cp);
      }
    }
    return true; // only continuation bytes: U+FFFD
  }

  /** True when the character after the first `endIn` bytes of token `t` is not a word character (or is a document edge). */
  private edgeAfter(t: number, endIn: number): boolean {
    // The common case first: an ASCII byte just after (in this token, or the first of the next one).
    const id = this.tokenAt(t);
    const near =
      endIn < this.table.symbolsOf(id) ? this.byteOf(id, endIn) : t + 1 < this.src.totalTokens ? this.firstByteOf(this.tokenAt(t + 1)) : -1;
    if (near >= 0 && near < 0x80) return !isWordCodePoint(near);
    const fwd: number[] = [];
    let k = t,
      from = endIn,
      want = 1;
    const total = this.src.totalTokens;
    for (;;) {
      const id = this.tokenAt(k);
      const len = this.table.symbolsOf(id);
      for (let x = from; x < len && fwd.length < want; x++) {
        fwd.push(this.byteOf(id, x));
        if (fwd.length === 1) want = Math.max(1, utf8LeadLength(fwd[0]));
      }
      if (fwd.length >= want) break;
      if (++k >= total) break;
      if (this.isEos(this.tokenAt(k))) break;
      from = 0;
    }
    if (fwd.length === 0) return true;
    const cp = decodeOneChar(fwd);
    return cp < 0 || !isWordCodePoint(cp);
  }
}
