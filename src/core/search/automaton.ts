/**
 * The search automaton: all terms compiled into one unanchored automaton over bytes (over ids
 * for `--ids`), determinized lazily (subset construction, states made on first use), then
 * expanded into a table indexed by (state, token id) that moves through all of a token's bytes
 * at once. The scan is one typed-array lookup per token; a negative entry sends the token to
 * the slow path, which reports the matches the token completes and builds rows for states
 * that turn out to be visited often.
 *
 * A match is reported where it completes (the token holding its last byte) with `back` = the
 * number of its bytes (ids) that lie before that token; the caller walks back token byte
 * lengths to its first byte (see `./scan.ts`). Plain data only: the compiled terms are posted
 * to worker threads and each builds its own tables.
 */
import { SearchInputError } from './types';
import { caseFoldClasses, codePoints, parseIdTerm, utf8Of } from './terms';
import { ScanKernel } from './scanKernel';

/**
 * Terms compiled to symbol sequences with alternatives: `terms[t][k]` is the list of
 * alternatives of item k of term t, each a sequence of symbols (bytes, or one token id).
 */
export interface CompiledTerms {
  mode: 'text' | 'ids';
  terms: number[][][][];
  /** Longest match in symbols (bytes; ids for `ids`). */
  maxLen: number;
}

/** Compiles parsed terms (see `parseTerms`) into symbol sequences. */
export function compileTerms(terms: string[], options: { ignoreCase: boolean; ids: boolean }): CompiledTerms {
  if (options.ids) {
    const t = terms.map((term) => parseIdTerm(term).map((id) => [[id]]));
    return { mode: 'ids', terms: t, maxLen: Math.max(...t.map((x) => x.length)) };
  }
  const cps = terms.map(codePoints);
  const classes = options.ignoreCase ? caseFoldClasses(cps.flat()) : undefined;
  const compiled = cps.map((term) => term.map((cp) => (classes?.get(cp) ?? [cp]).map(utf8Of)));
  const maxLen = Math.max(...compiled.map((t) => t.reduce((s, alts) => s + Math.max(...alts.map((a) => a.length)), 0)));
  return { mode: 'text', terms: compiled, maxLen };
}

/** Most DFA states before a search is refused as too complex. */
const MAX_DFA_STATES = 400_000;

/** Lazily determinized automaton over symbols. State 0 = nothing in progress. */
export class Dfa {
  /** Per NFA node: symbol → target nodes. */
  private readonly edges: Map<number, number[]>[] = [];
  /** Per NFA node: [term, length] when it completes a term. */
  private readonly finals: ([number, number] | undefined)[] = [];
  /** The union of the start nodes' edges (every term may start at every symbol). */
  private readonly startEdges = new Map<number, number[]>();
  private readonly sets: Int32Array[] = [];
  private readonly keys = new Map<string, number>();
  /** Per state: flat [term, length, …] of the terms completed on entering it, or null. */
  readonly accepts: (Int32Array | null)[] = [];
  /** Byte transitions (text mode), 256 per state, −1 = not built yet. */
  private byteTrans = new Int32Array(256 * 64).fill(-1);
  /** Id transitions (ids mode), per state. */
  private readonly idTrans: Map<number, number>[] = [];
  /** Symbols that occur in some term (ids mode: every other id leads to state 0). */
  readonly alphabet = new Set<number>();

  constructor(readonly compiled: CompiledTerms) {
    compiled.terms.forEach((items, t) => this.addTerm(t, items));
    this.state(new Int32Array(0));
  }

  private node(keys: Map<string, number>, key: string): number {
    let n = keys.get(key);
    if (n === undefined) {
      n = this.edges.length;
      this.edges.push(new Map());
      this.finals.push(undefined);
      keys.set(key, n);
    }
    return n;
  }

  /** One term as a DAG: boundary nodes (item k, bytes so far) joined by each alternative's bytes. */
  private addTerm(t: number, items: number[][][]): void {
    const keys = new Map<string, number>();
    const start = this.node(keys, 'B:0:0');
    let frontier = new Map<number, number>([[0, start]]);
    items.forEach((alts, k) => {
      const next = new Map<number, number>();
      for (const [len, from] of frontier) {
        for (const alt of alts) {
          let cur = from;
          alt.forEach((sym, i) => {
            const last = i === alt.length - 1;
            const target = this.node(keys, last ? `B:${k + 1}:${len + alt.length}` : `I:${k}:${len}:${alt.slice(0, i + 1).join('.')}`);
            const m = cur === start ? this.startEdges : undefined;
            addEdge(this.edges[cur], sym, target);
            if (m) addEdge(m, sym, target);
            this.alphabet.add(sym);
            cur = target;
          });
          next.set(len + alt.length, cur);
        }
      }
      frontier = next;
    });
    for (const [len, n] of frontier) this.finals[n] = [t, len];
  }

  private state(set: Int32Array): number {
    const key = set.join(',');
    let s = this.keys.get(key);
    if (s !== undefined) return s;
    s = this.sets.length;
    if (s >= MAX_DFA_STATES)
      throw new SearchInputError(
        `the terms are too complex to search together (more than ${MAX_DFA_STATES.toLocaleString('en-US')} automaton states); search fewer or shorter terms`,
      );
    this.sets.push(set);
    this.keys.set(key, s);
    const acc: number[] = [];
    for (const n of set) {
      const f = this.finals[n];
      if (f) acc.push(f[0], f[1]);
    }
    this.accepts.push(acc.length ? Int32Array.from(acc) : null);
    this.idTrans.push(new Map());
    if (this.byteTrans.length < (s + 1) * 256) {
      const bigger = new Int32Array(this.byteTrans.length * 2).fill(-1);
      bigger.set(this.byteTrans);
      this.byteTrans = bigger;
    }
    return s;
  }

  private compute(s: number, sym: number): number {
    const targets = new Set<number>(this.startEdges.get(sym) ?? []);
    for (const n of this.sets[s]) for (const t of this.edges[n].get(sym) ?? []) targets.add(t);
    if (targets.size === 0) return 0;
    return this.state(Int32Array.from([...targets].sort((a, b) => a - b)));
  }

  /** Next state on one byte (text mode). */
  stepByte(s: number, b: number): number {
    const i = s * 256 + b;
    let n = this.byteTrans[i];
    if (n < 0) {
      n = this.compute(s, b);
      this.byteTrans[i] = n;
    }
    return n;
  }

  /** Next state on one id (ids mode). */
  stepId(s: number, id: number): number {
    if (!this.alphabet.has(id)) return 0;
    const m = this.idTrans[s];
    let n = m.get(id);
    if (n === undefined) {
      n = this.compute(s, id);
      m.set(id, n);
    }
    return n;
  }

  /** Number of states built so far. */
  get size(): number {
    return this.sets.length;
  }
}

function addEdge(m: Map<number, number[]>, sym: number, target: number): void {
  const list = m.get(sym);
  if (!list) m.set(sym, [target]);
  else if (!list.includes(target)) list.push(target);
}

/** Every token id's bytes as one flat table (as the decode does: added tokens = their content). */
export interface TokenBytes {
  /** Ids `< vocabSize` have entries; larger ids have no token (no bytes). */
  vocabSize: number;
  /** `offsets[id]..offsets[id+1]` index `bytes`; length vocabSize + 1. */
  offsets: Uint32Array;
  bytes: Uint8Array;
}

const tokenBytesCache = new WeakMap<object, TokenBytes>();

/** Builds {@link TokenBytes} from a tokenizer's `bytesOf` (once per tokenizer object). */
export function tokenBytesOf(tok: { vocabSize: number; bytesOf(id: number): Uint8Array }): TokenBytes {
  let tb = tokenBytesCache.get(tok);
  if (!tb) {
    tb = buildTokenBytes(tok);
    tokenBytesCache.set(tok, tb);
  }
  return tb;
}

/**
 * The token-bytes table for a search of token-id runs (`--ids`) with no tokenizer: ids carry no
 * bytes, and the table spans the ids the terms name (`0..max id`), which is all an ids-mode
 * automaton looks up. Text terms need the real table ({@link tokenBytesOf}).
 * @throws Error when `compiled` is not in ids mode.
 */
export function idsOnlyTokenBytes(compiled: CompiledTerms): TokenBytes {
  if (compiled.mode !== 'ids') throw new Error('idsOnlyTokenBytes: text terms need a tokenizer');
  let max = 0;
  for (const term of compiled.terms) for (const item of term) for (const alt of item) for (const id of alt) if (id > max) max = id;
  return { vocabSize: max + 1, offsets: new Uint32Array(max + 2), bytes: new Uint8Array(0) };
}

function buildTokenBytes(tok: { vocabSize: number; bytesOf(id: number): Uint8Array }): TokenBytes {
  const V = tok.vocabSize;
  const offsets = new Uint32Array(V + 1);
  let total = 0;
  for (let id = 0; id < V; id++) {
    offsets[id] = total;
    total += tok.bytesOf(id).length;
  }
  offsets[V] = total;
  const bytes = new Uint8Array(total);
  for (let id = 0; id < V; id++) bytes.set(tok.bytesOf(id), offsets[id]);
  return { vocabSize: V, offsets, bytes };
}

/**
 * Called for each match a token completes: `term`; `j` the index (in the scanned array) of the
 * token holding the match's last byte; `back` the match's bytes before token j (≤ 0: it starts
 * inside token j at byte `−back`; ids mode: ids before j); `endIn` the bytes of token j up to
 * the match's end (text mode).
 */
export type HitFn = (term: number, j: number, back: number, endIn: number) => void;

/** Visits of a state before the slow path builds its table row. */
const ROW_AFTER_VISITS = 2;
/** A table entry not computed yet. */
const UNKNOWN = -0x80000000;
const NO_HITS: number[] = [];

/**
 * The (state × token id) table over a {@link Dfa}. Row r covers ids `0..V−1` at `r·V`; an
 * entry ≥ 0 is the next state's row base (no match completed); an entry < 0 is `−(next + 1)`:
 * the slow path (matches completed, or the next state has no row yet); `UNKNOWN` (−2³¹) = not
 * computed yet. The row of state 0 is built whole (with a bit set of its interesting ids, for
 * the hottest loop); other rows are filled entry by entry as (state, id) pairs occur.
 */
export class TokenTable {
  readonly V: number;
  private T: Int32Array;
  private rows = 0;
  private readonly maxRows: number;
  /** DFA state → row, −1 = none. */
  private rowOf = new Int32Array(64).fill(-1);
  private rowState: number[] = [];
  private visits = new Int32Array(64);
  /** Table position → flat [term, back, endIn, …] of the matches completed there. */
  private readonly hits = new Map<number, Int32Array>();
  private readonly ids: boolean;
  /** Bytes (text) / ids (ids mode) of the longest match. */
  readonly maxLen: number;
  /** Bit per id < V: set when, in state 0, the id leads anywhere but back to state 0 without a match. */
  readonly rootBits: Int32Array;
  /** The WebAssembly step (`./scanKernel.ts`), holding the table in its memory; used for arrays that live there. */
  private readonly kernel?: ScanKernel;

  /**
   * @param eos the EOS id: in text mode it ends the document (back to state 0, no bytes).
   * @param memoryBytes budget for the table rows (4·V bytes each).
   * @param kernel false: the JavaScript loop only (tests compare it with the WebAssembly step).
   */
  constructor(
    readonly dfa: Dfa,
    readonly tb: TokenBytes,
    readonly eos: number,
    memoryBytes = 192 << 20,
    kernel = true,
  ) {
    this.ids = dfa.compiled.mode === 'ids';
    // Ids mode: the rows also span the ids the terms name past the vocabulary, so an id ≥ V always leads to state 0.
    let top = 0;
    if (this.ids) for (const id of dfa.alphabet) top = Math.max(top, id + 1);
    this.V = Math.max(1, tb.vocabSize, top);
    this.maxLen = dfa.compiled.maxLen;
    this.maxRows = Math.max(1, Math.floor(memoryBytes / (4 * this.V)));
    this.T = new Int32Array(this.V * 4);
    this.buildRow(0);
    this.rootBits = new Int32Array((this.V >>> 5) + 1);
    for (let id = 0; id < this.V; id++) if (this.T[id] !== 0) this.rootBits[id >>> 5] |= 1 << (id & 31);
    // The table moves into the kernel's memory, sized for every row it may get (no regrowth).
    this.kernel = kernel ? ScanKernel.make(this.rootBits, this.maxRows * this.V) : undefined;
    if (this.kernel) {
      const T = this.kernel.table();
      T.set(this.T.subarray(0, this.rows * this.V));
      this.T = T;
    }
  }

  /**
   * `count` read buffers of `tokens` ids for the scanner: in the kernel's memory when there is a
   * kernel (so {@link scan} runs it on them), else plain arrays.
   */
  readBuffers(count: number, tokens: number): Uint32Array[] {
    if (!this.kernel) return Array.from({ length: count }, () => new Uint32Array(tokens));
    const bufs = this.kernel.buffers(count, tokens);
    this.T = this.kernel.table();
    return bufs;
  }

  /** Length of a token in symbols: bytes (text mode; 0 for ids without a token, and EOS is never inside a match) or 1 (ids). */
  symbolsOf(id: number): number {
    if (this.ids) return 1;
    return id < this.tb.vocabSize ? this.tb.offsets[id + 1] - this.tb.offsets[id] : 0;
  }

  private ensureState(s: number): void {
    if (s < this.rowOf.length) return;
    let n = this.rowOf.length;
    while (n <= s) n *= 2;
    const r = new Int32Array(n).fill(-1);
    r.set(this.rowOf);
    this.rowOf = r;
    const v = new Int32Array(n);
    v.set(this.visits);
    this.visits = v;
  }

  private buildRow(state: number): number {
    this.ensureState(state);
    const r = this.rows++;
    const V = this.V;
    if (this.T.length < (r + 1) * V) {
      const bigger = new Int32Array(Math.min(this.maxRows, Math.max(r + 1, 2 * (this.T.length / V))) * V);
      bigger.set(this.T);
      this.T = bigger;
    }
    this.rowOf[state] = r;
    this.rowState[r] = state;
    const base = r * V;
    const T = this.T;
    const dfa = this.dfa;
    if (this.ids) {
      const fill = this.rowOf[0] >= 0 ? this.rowOf[0] * V : -1;
      T.fill(fill, base, base + V);
      for (const id of dfa.alphabet) if (id < V || state === 0) this.setEntry(base, id, state);
      return base;
    }
    if (state !== 0) {
      // Other states' entries are computed on first use: most (state, id) pairs never occur.
      T.fill(UNKNOWN, base, base + V);
      if (this.eos < V) T[base + this.eos] = 0;
      return base;
    }
    for (let id = 0; id < V; id++) {
      if (id === this.eos) T[base + id] = 0;
      else this.computeEntry(base + id, state, id);
    }
    return base;
  }

  /** Text mode: the entry of (state, id) at table position `pos`: all of the token's bytes from `state`. */
  private computeEntry(pos: number, state: number, id: number): void {
    const { offsets, bytes } = this.tb;
    const dfa = this.dfa;
    let s = state;
    let hitList: number[] | undefined;
    const o0 = offsets[id],
      o1 = offsets[id + 1];
    for (let o = o0; o < o1; o++) {
      s = dfa.stepByte(s, bytes[o]);
      const acc = dfa.accepts[s];
      if (acc) {
        hitList ??= [];
        for (let a = 0; a < acc.length; a += 2) hitList.push(acc[a], acc[a + 1] - (o - o0 + 1), o - o0 + 1);
      }
    }
    this.store(pos, s, hitList ?? NO_HITS);
  }

  private setEntry(base: number, id: number, state: number): void {
    if (id >= this.V) return;
    const s = this.dfa.stepId(state, id);
    const acc = this.dfa.accepts[s];
    const hitList: number[] = [];
    if (acc) for (let a = 0; a < acc.length; a += 2) hitList.push(acc[a], acc[a + 1] - 1, 0);
    this.store(base + id, s, hitList);
  }

  private store(pos: number, next: number, hitList: number[]): void {
    this.ensureState(next);
    if (hitList.length) this.hits.set(pos, Int32Array.from(hitList));
    const row = this.rowOf[next];
    this.T[pos] = !hitList.length && row >= 0 ? row * this.V : -(next + 1);
  }

  /** Row base of a state, building the row once it is visited often (−1 = none: slow path). */
  private enter(state: number): number {
    this.ensureState(state);
    const row = this.rowOf[state];
    if (row >= 0) return row * this.V;
    if (++this.visits[state] >= ROW_AFTER_VISITS && this.rows < this.maxRows) return this.buildRow(state);
    return -1;
  }

  /** Moves through one token the slow way (byte by byte), reporting completed matches. */
  private stepToken(state: number, id: number, j: number, hit: HitFn): number {
    const dfa = this.dfa;
    if (this.ids) {
      const s = dfa.stepId(state, id);
      const acc = dfa.accepts[s];
      if (acc) for (let a = 0; a < acc.length; a += 2) hit(acc[a], j, acc[a + 1] - 1, 0);
      return s;
    }
    if (id === this.eos) return 0;
    if (id >= this.tb.vocabSize) return state;
    const { offsets, bytes } = this.tb;
    let s = state;
    const o0 = offsets[id],
      o1 = offsets[id + 1];
    for (let o = o0; o < o1; o++) {
      s = dfa.stepByte(s, bytes[o]);
      const acc = dfa.accepts[s];
      if (acc) for (let a = 0; a < acc.length; a += 2) hit(acc[a], j, acc[a + 1] - (o - o0 + 1), o - o0 + 1);
    }
    return s;
  }

  /**
   * Runs the automaton over `ids[from..to)` starting in `state`.
   * @returns the state after the last token.
   */
  scan(ids: Uint32Array, from: number, to: number, state: number, hit: HitFn): number {
    const V = this.V;
    const bits = this.rootBits;
    const text = !this.ids;
    const kern = this.kernel && ids.buffer === this.kernel.buffer ? this.kernel : undefined;
    let T = this.T;
    let rb = this.enter(state);
    let i = from;
    while (i < to) {
      if (kern && rb >= 0) {
        // Every state's step in WebAssembly, up to the next token for the slow path below.
        i = kern.run(ids, i, to, rb, V, !text);
        rb = kern.rb;
        if (i >= to) break;
      } else if (rb === 0) {
        // In state 0 (nothing in progress) a 12.5 KB bit set says which ids can start or
        // complete something; all others are skipped.
        if (text) {
          for (; i < to; i++) {
            const id = ids[i];
            if (id < V && (bits[id >>> 5] & (1 << (id & 31))) !== 0) break;
          }
        } else {
          for (; i < to; i++) {
            const id = ids[i];
            if (id >= V || (bits[id >>> 5] & (1 << (id & 31))) !== 0) break;
          }
        }
        if (i >= to) break;
      }
      if (rb >= 0) {
        // One lookup per token while something is in progress and nothing completes.
        for (; i < to; i++) {
          const id = ids[i];
          if (id >= V) break;
          const x = T[rb + id];
          if (x <= 0) break;
          rb = x;
        }
        if (i >= to) break;
        const id = ids[i];
        if (id < V) {
          const pos = rb + id;
          state = this.rowState[(rb / V) | 0];
          let x = T[pos];
          if (x === UNKNOWN) {
            this.computeEntry(pos, state, id);
            x = T[pos];
          }
          if (x >= 0) {
            rb = x;
            i++;
            continue;
          } // (0: back to state 0)
          const next = -x - 1;
          const h = this.hits.get(pos);
          if (h) for (let k = 0; k < h.length; k += 3) hit(h[k], i, h[k + 1], h[k + 2]);
          rb = this.enter(next);
          T = this.T;
          if (rb >= 0 && !h) T[pos] = rb; // the next state got its row: the entry becomes a fast one
          state = next;
          i++;
          continue;
        }
        state = this.rowState[(rb / V) | 0];
      }
      state = this.stepToken(state, ids[i], i, hit);
      rb = this.enter(state);
      T = this.T;
      i++;
    }
    return rb >= 0 ? this.rowState[(rb / V) | 0] : state;
  }

  /** Rows built (for tests and diagnostics). */
  get rowCount(): number {
    return this.rows;
  }
}
