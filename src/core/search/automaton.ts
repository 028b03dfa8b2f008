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
import { caseFoldClasses, codePoints, edgeClasses, isWordCodePoint, parseIdTerm, utf8Of } from './terms';
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

/** `true` for a byte after which a whole word may start: not an ASCII word character (every byte ≥ 0x80 may end a non-word character). */
const mayStartAfter = (b: number) => b >= 0x80 || !isWordCodePoint(b);

/**
 * Lazily determinized automaton over symbols. State 0 = nothing in progress (in a whole-word
 * text search: also not just after a word's edge, see {@link Dfa.start}).
 */
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
  /** Per NFA node: the symbols of its term read on the way to it. */
  private readonly nodeDepth: number[] = [];
  /** Per state: the most symbols of a term in progress (the deepest of its NFA nodes; 0 for state 0). */
  private readonly depths: number[] = [];
  /** Byte transitions (text mode), 256 per state, −1 = not built yet. */
  private byteTrans = new Int32Array(256 * 64).fill(-1);
  /** Id transitions (ids mode), per state. */
  private readonly idTrans: Map<number, number>[] = [];
  /** Symbols that occur in some term (ids mode: every other id leads to state 0). */
  readonly alphabet = new Set<number>();
  /**
   * Whole-word text search: the pseudo NFA node "the last byte may end a word's edge" (a byte
   * that is not an ASCII word character, or a document's start); terms start only from sets
   * that hold it. −1 otherwise (terms start after every symbol).
   */
  private readonly boundary: number = -1;
  /**
   * The state at a document's start (and after EOS): 0, or in a whole-word text search the state
   * {boundary} (a match may start at the first byte).
   */
  readonly start: number = 0;

  /**
   * @param word whole-word search (text mode; ignored for ids): a match may only start after a
   *   byte that is not an ASCII word character or at a document's start ({@link start}), so the
   *   automaton does not follow terms that start inside a word. Conservative: every byte ≥ 0x80
   *   counts as a possible edge; the scanner's exact edge check (`./scan.ts`) still decides.
   */
  constructor(
    readonly compiled: CompiledTerms,
    word = false,
  ) {
    compiled.terms.forEach((items, t) => this.addTerm(t, items));
    this.state(new Int32Array(0));
    if (word && compiled.mode === 'text') {
      this.boundary = this.node(new Map(), 'boundary');
      this.start = this.state(Int32Array.of(this.boundary));
    }
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
            this.nodeDepth[target] = len + i + 1;
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
    let depth = 0;
    for (const n of set) depth = Math.max(depth, this.nodeDepth[n] ?? 0);
    this.depths.push(depth);
    this.idTrans.push(new Map());
    if (this.byteTrans.length < (s + 1) * 256) {
      const bigger = new Int32Array(this.byteTrans.length * 2).fill(-1);
      bigger.set(this.byteTrans);
      this.byteTrans = bigger;
    }
    return s;
  }

  private compute(s: number, sym: number): number {
    const set = this.sets[s];
    const B = this.boundary;
    // A whole-word search starts terms only after an edge (the boundary node is the set's last: the highest node).
    const targets = new Set<number>(B < 0 || (set.length > 0 && set[set.length - 1] === B) ? (this.startEdges.get(sym) ?? []) : []);
    for (const n of set) for (const t of this.edges[n].get(sym) ?? []) targets.add(t);
    if (B >= 0 && mayStartAfter(sym)) targets.add(B);
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

  /** The most symbols (bytes; ids) of a term in progress in state s: the length of its longest term prefix (0 for state 0). */
  depthOf(s: number): number {
    return this.depths[s];
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
 * the match's end (text mode); `known` (whole-word searches) the word edges the token settles
 * already, as {@link KNOWN_BEFORE} | {@link KNOWN_AFTER} bits (0: check both).
 */
export type HitFn = (term: number, j: number, back: number, endIn: number, known: number) => void;

/** `known` bit of {@link HitFn}: the character before the match is inside its token and not a word character. */
export const KNOWN_BEFORE = 1;
/** `known` bit of {@link HitFn}: the character after the match is inside its token and not a word character. */
export const KNOWN_AFTER = 2;

/**
 * Share of four-token groups with a token leaving state 0 above which the kernel tests every group
 * with the pair test instead of branching on the cheap one. Measured on the full-scale stand-in's
 * text: `Lily` 0.001 (the branch wins: 1.35× less CPU than the pair test everywhere), 10 terms
 * 0.55, 200 names 0.23, 10 terms `--word -i` 0.87 (the branch mispredicts: the pair test
 * everywhere takes 0.81× the CPU of 10 terms).
 */
const PAIR_RATE = 0.1;

/** Tokens of a table's first long scan that measure {@link PAIR_RATE}'s share before the rest is scanned. */
const RATE_PROBE = 1 << 16;

/** Classes of DFA states in the kernel's pair test ({@link stateClass}; three fit a byte per id with its one-hot class). */
const STATE_CLASSES = 3;

/**
 * The class of a DFA state (≠ 0) in the pair test, by the length of its longest term prefix (1,
 * 2, 3 or more symbols): a token that leads to a state of one class followed by a token that
 * only continues states of other classes needs no step (see `TokenTable.rc`). Most tokens that
 * leave state 0 end in a term's first byte (10 terms: `about`, `at`, `cert` … into `t`), and the
 * tokens that continue the deeper states (` ` after `the`, `aining` after `Ishm`) then follow
 * them without a step. A whole-word search's states with no term in progress but not state 0
 * ({@link Dfa.start}: just after a word's edge) count as 1 symbol deep.
 */
const stateClass = (dfa: Dfa, state: number) => Math.min(Math.max(dfa.depthOf(state), 1), STATE_CLASSES) - 1;

/** Entries from 2^30 up are counted ones: the record at `T[x − COUNTED]` (see `TokenTable.countedEntry`). */
const COUNTED = 0x40000000;

/** An empty key of a state's exception table. */
const EMPTY = -1;
const NO_HITS: number[] = [];
/** Multiplier of the exception tables' hash (`scanKernel.wat` uses the same). */
const HASH_MUL = 0x9e3779b1 | 0;
/** Slot of `id` in a table of `mask + 1` slots (`scanKernel.wat`: the same expression). */
const slotHash = (id: number, mask: number) => (Math.imul(id, HASH_MUL) >>> 12) & mask;

/**
 * The (state × token id) table over a {@link Dfa}, all in one int32 array `T`:
 * - state 0's row, dense: the entry of id at `T[id]` (ids `0..V−1`), with a bit set of the ids
 *   whose entry is not "back to state 0" (the hottest loop tests 12.5 KB of bits, not the row);
 * - every other state s, sparse: at its base `rb`, `T[rb] = mask`, `T[rb+1] = s`, then `mask + 1`
 *   slots of [id, entry] (open addressing, key −1 = empty) holding only the ids whose entry from s
 *   differs from their entry from state 0: the tokens that continue a match in progress (found by
 *   walking the vocabulary's byte trie from s and from 0 together until both reach the same DFA
 *   state). Any other id takes state 0's entry `T[id]`.
 * An entry ≥ 0 is the next state's base (0 = state 0; no match completed); an entry < 0 is
 * `−(next + 1)`: the slow path (matches completed there, or the next state has no table yet).
 * A state's table is built when the scan first enters it (a trie walk: no entry is ever computed
 * lazily inside the loop); the memory budget bounds their total.
 */
export class TokenTable {
  readonly V: number;
  private T: Int32Array;
  /** Entries of `T` in use. */
  private used = 0;
  /** Entries `T` may hold. */
  private readonly capacity: number;
  /** DFA state → base of its table, −1 = none yet, −2 = none (out of memory). */
  private baseOf = new Int32Array(64).fill(-1);
  private tables = 0;
  /** Table position → flat [term, back, endIn, known, …] of the matches completed there (see {@link HitFn}). */
  private readonly hits = new Map<number, Int32Array>();
  /** The distinct hit lists of {@link hits} by content (entries share them; never written after). */
  private readonly hitLists = new Map<string | number, Int32Array>();
  /** Counted records by hit list and next state's base (see {@link countedEntry}): `COUNTED + r`, or −1 when the budget was spent. */
  private readonly records = new Map<Int32Array, Map<number, number>>();
  private readonly ids: boolean;
  /** Bytes (text) / ids (ids mode) of the longest match. */
  readonly maxLen: number;
  /**
   * Bit per id < V (⌊V/32⌋ + 1 words): set when, in state 0, the id leads anywhere but back to
   * state 0 without a match. In the kernel's memory when there is a kernel (its `any` bit set:
   * the first test of state 0, see `./scanKernel.wat`).
   */
  private rootBits: Int32Array;
  /**
   * Two bits per id (16 a word, ⌊V/16⌋ + 1 words), the kernel's view of state 0's row: bit 0 the
   * entry is not 0, bit 1 it is not a plain fast one (negative: matches or no table yet). In the
   * kernel's memory when there is a kernel (see `./scanKernel.wat`).
   */
  private rn: Int32Array;
  /**
   * Bit per id (⌊V/32⌋ + 1 words): set when some built state's exception table holds the id; bit V
   * set in text mode (an id past the vocabulary keeps the state). A token that only leaves state 0
   * followed by one whose bit is clear needs no step (`./scanKernel.wat`).
   */
  private cont: Int32Array;
  /**
   * A byte per id ≤ V, the kernel's pair test (`./scanKernel.wat`): bit 0 the id's state-0 entry
   * needs a step by itself ({@link rn} bit 1); bits 1–3 one-hot, the {@link stateClass} of the
   * state its state-0 entry leads to (a plain fast entry, or a plain counted one); bit 4 its
   * state-0 entry is a plain counted one ({@link plainCounted}: the kernel counts it without a
   * step when counting, else it is a step); bits 5–7 the classes of the built states whose
   * tables hold it ({@link cont} split by class). A token t followed by n needs no step when
   * `rc[t] & ((rc[n] >> 4) | m)` is 0 (m = 1 counting, 0x11 not): n continues no state of t's
   * class.
   */
  private rc: Uint8Array;
  /** The WebAssembly step (`./scanKernel.ts`), holding the table in its memory; used for arrays that live there. */
  private readonly kernel?: ScanKernel;
  /**
   * Share of the groups of four tokens the kernel tested in state 0 (in the last scan of 4,096
   * tokens or more) where a token leaves state 0: above {@link PAIR_RATE} the next scan uses the
   * kernel's branch-free pair test.
   */
  private leaveRate = 0;
  /** {@link leaveRate} was measured (a scan of 4,096 tokens or more ran in the kernel). */
  private rateKnown = false;
  /** The kernel's state-0 test when fixed by the constructor, else chosen per scan by {@link leaveRate}. */
  private readonly pairMode?: 'pair' | 'branch';
  /** Text mode: token ids in byte order, sorted per first byte on demand (the vocabulary's trie, walked by {@link buildState}). */
  private readonly sorted?: VocabularyOrder;

  /**
   * @param eos the EOS id: in text mode it ends the document (back to the DFA's start state, {@link Dfa.start}; no bytes).
   * @param memoryBytes budget for the table (4 bytes an entry; state 0's row is V entries).
   * @param word whole-word search: a match whose neighbouring ASCII character inside its token is a
   *   word character is dropped when the entry is built (the rule of `./index.ts`; other edges are
   *   the scanner's to check, told by the `known` bits of {@link HitFn}).
   * @param kernel false: the JavaScript loop only (tests compare it with the WebAssembly step);
   *   `'pair'` / `'branch'`: the WebAssembly step with its state-0 test fixed (tests cover both;
   *   see {@link PAIR_RATE}); true: the WebAssembly step, choosing the test per scan.
   */
  constructor(
    readonly dfa: Dfa,
    readonly tb: TokenBytes,
    readonly eos: number,
    memoryBytes = 192 << 20,
    readonly word = false,
    kernel: boolean | 'pair' | 'branch' = true,
  ) {
    this.ids = dfa.compiled.mode === 'ids';
    // Ids mode: state 0's row also spans the ids the terms name past the vocabulary, so an id ≥ V always leads to state 0.
    let top = 0;
    if (this.ids) for (const id of dfa.alphabet) top = Math.max(top, id + 1);
    this.V = Math.max(1, tb.vocabSize, top);
    this.maxLen = dfa.compiled.maxLen;
    this.capacity = Math.max(this.V + 64, Math.floor(memoryBytes / 4));
    this.pairMode = kernel === 'pair' || kernel === 'branch' ? kernel : undefined;
    this.kernel = kernel
      ? ScanKernel.make((this.V >>> 4) + 1, (this.V >>> 5) + 1, (this.V >>> 2) + 1, this.capacity, this.V + 1, dfa.compiled.terms.length)
      : undefined;
    this.rc = this.kernel ? this.kernel.rc() : new Uint8Array(this.V + 1);
    this.rn = this.kernel ? this.kernel.rn() : new Int32Array((this.V >>> 4) + 1);
    this.cont = this.kernel ? this.kernel.cont() : new Int32Array((this.V >>> 5) + 1);
    if (!this.ids) for (let c = 0; c < STATE_CLASSES; c++) this.setCont(this.V, c);
    this.T = this.kernel ? this.kernel.table() : new Int32Array(this.V + 1024);
    if (!this.ids) this.sorted = vocabularyOrder(tb);
    this.buildRow0();
    this.rootBits = this.kernel ? this.kernel.any() : new Int32Array((this.V >>> 5) + 1);
    for (let id = 0; id < this.V; id++) this.setRn(id, this.T[id]);
    if (this.kernel) {
      // The class of a token's first character (bits 0-1) and last (bits 2-3) for the kernel's
      // word edges, by the scanner's rule (`./scan.ts`, see `edgeClasses`): 2 = the scanner decides
      // (and id V stands for every id past the vocabulary: no bytes).
      const cls = this.kernel.classes();
      cls[this.V] = 10;
      for (let id = 0; id < this.V; id++) {
        const n = this.symbolsOf(id);
        const o = this.tb.offsets[id];
        cls[id] = (this.ids ? 10 : id === this.eos ? 0 : edgeClasses(this.tb.bytes, o, o + n)) | (Math.min(n, 15) << 4);
      }
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
    this.rn = this.kernel.rn();
    this.cont = this.kernel.cont();
    this.rootBits = this.kernel.any();
    this.rc = this.kernel.rc();
    return bufs;
  }

  /** Sets the {@link rn} and {@link rootBits} bits of id (< V) for its state-0 entry `x`. */
  private setRn(id: number, x: number): void {
    const sh = (id & 15) * 2;
    const w = id >>> 4;
    this.rn[w] = (this.rn[w] & ~(3 << sh)) | ((x === 0 ? 0 : x > 0 && x < COUNTED ? 1 : 3) << sh);
    if (x === 0) this.rootBits[id >>> 5] &= ~(1 << (id & 31));
    else this.rootBits[id >>> 5] |= 1 << (id & 31);
    const plain = this.plainCounted(x);
    this.rc[id] =
      (this.rc[id] & 0xe0) | (x === 0 ? 0 : x > 0 && x < COUNTED ? this.classBit(x) : plain ? 16 | this.classBit(this.T[x - COUNTED]) : 1);
  }

  /** The pair test's one-hot class bit (bits 1–3 of {@link rc}) of the state at base `rb` (0 for state 0). */
  private classBit(rb: number): number {
    return rb === 0 ? 0 : 2 << stateClass(this.dfa, this.T[rb + 1]);
  }

  /**
   * A state-0 entry the kernel's pair test counts without a step (`$skipPair` in
   * `./scanKernel.wat`): a counted entry ({@link countedEntry}) whose matches all start inside
   * the token (none `back` bytes before it) with no start edge to check (flags 0 or 2: in a
   * whole-word search, a match can only start at a token's first byte from state 0's row after a
   * word character, where the automaton starts none). An end edge left to check lies at the
   * token's end: the pair test files the token under the class of the next token's first
   * character, and {@link takeCounts} applies it. Its next state is then tested like a plain fast
   * entry's: the token after it needs no step unless it continues a state of that class. 200
   * names: nearly every match, plain and `--word --ignore-case` (` the` then ` cat`).
   */
  private plainCounted(x: number): boolean {
    if (x < COUNTED) return false;
    const r = x - COUNTED;
    const T = this.T;
    for (let k = 0; k < T[r + 1]; k++) if ((T[r + 3 + 2 * k] & ~2) !== 0) return false;
    return true;
  }

  /** Sets the {@link cont} bit of id (≤ V) and its bit of class `cls` ({@link stateClass}) in {@link rc}. */
  private setCont(id: number, cls: number): void {
    this.cont[id >>> 5] |= 1 << (id & 31);
    this.rc[id] |= 32 << cls;
  }

  /** Reserves `n` entries of `T` (growing it in JavaScript mode); −1 when the budget is spent. */
  private alloc(n: number): number {
    if (this.used + n > this.capacity) return -1;
    if (this.used + n > this.T.length) {
      const bigger = new Int32Array(Math.min(this.capacity, Math.max(this.used + n, 2 * this.T.length)));
      bigger.set(this.T);
      this.T = bigger;
    }
    const at = this.used;
    this.used += n;
    return at;
  }

  private ensureState(s: number): void {
    if (s < this.baseOf.length) return;
    let n = this.baseOf.length;
    while (n <= s) n *= 2;
    const r = new Int32Array(n).fill(-1);
    r.set(this.baseOf);
    this.baseOf = r;
  }

  /** State 0's dense row at `T[0..V)`. */
  private buildRow0(): void {
    this.alloc(this.V);
    this.baseOf[0] = 0;
    this.tables++;
    if (this.ids) {
      for (const id of this.dfa.alphabet) this.setEntry(id, 0, id);
      return;
    }
    for (let id = 0; id < this.V; id++) if (id !== this.eos) this.computeEntry(id, 0, id);
    // EOS ends the document: the next starts in the DFA's start state (state 0, or a whole-word
    // search's {edge}); from every other state too (exception tables never hold EOS).
    if (this.eos >= 0 && this.eos < this.V && this.dfa.start !== 0) this.store(this.eos, this.dfa.start, NO_HITS, this.eos);
  }

  /**
   * Builds the exception table of `state` (≠ 0): the ids whose entry from it differs from state
   * 0's. Text mode: the sorted vocabulary is walked as a trie from `state` and from state 0
   * together; a subtree is left as soon as both reach the same DFA state (its tokens end the same
   * way from either), and taken whole when a match completes on the way from `state` only (its
   * tokens all report that match). Ids mode: the terms' ids.
   * @returns the table's base, or −1 when the memory budget is spent (the slow path then steps it).
   */
  private buildState(state: number): number {
    const dfa = this.dfa;
    const ex: number[] = [];
    if (this.ids) {
      for (const id of dfa.alphabet) if (id < this.V) ex.push(id);
    } else {
      const order = this.sorted!;
      const sorted = order.ids;
      const { offsets, bytes } = this.tb;
      const len = (k: number) => offsets[sorted[k] + 1] - offsets[sorted[k]];
      const byteAt = (k: number, d: number) => bytes[offsets[sorted[k]] + d];
      const walk = (lo: number, hi: number, d: number, a: number, b: number): void => {
        order.bucket(lo, hi, d);
        while (lo < hi && len(lo) === d) ex.push(sorted[lo++]);
        while (lo < hi) {
          const c = byteAt(lo, d);
          // the group of tokens whose byte d is c: [lo, g)
          let l = lo + 1,
            h = hi;
          while (l < h) {
            const m = (l + h) >>> 1;
            if (byteAt(m, d) === c) l = m + 1;
            else h = m;
          }
          const g = l;
          const a2 = dfa.stepByte(a, c),
            b2 = dfa.stepByte(b, c);
          if (a2 !== b2) {
            if (sameAccepts(dfa.accepts[a2], dfa.accepts[b2])) walk(lo, g, d + 1, a2, b2);
            else for (let k = lo; k < g; k++) ex.push(sorted[k]);
          }
          lo = g;
        }
      };
      // Depth 0 by the first-byte groups: only the ranges where the two walks part are bucketed (once).
      for (let k = 0; k < order.emptyEnd; k++) ex.push(sorted[k]);
      for (let c = 0; c < 256; c++) {
        const a2 = dfa.stepByte(state, c),
          b2 = dfa.stepByte(0, c);
        if (a2 === b2 || order.starts[c] === order.starts[c + 1]) continue;
        const lo = order.starts[c],
          g = order.starts[c + 1];
        if (sameAccepts(dfa.accepts[a2], dfa.accepts[b2])) walk(lo, g, 1, a2, b2);
        else for (let k = lo; k < g; k++) ex.push(sorted[k]);
      }
    }
    let mask = 1;
    while (mask + 1 < 2 * ex.length) mask = mask * 2 + 1;
    const rb = this.alloc(2 + 2 * (mask + 1));
    if (rb < 0) return -1;
    const T = this.T;
    T[rb] = mask;
    T[rb + 1] = state;
    T.fill(EMPTY, rb + 2, rb + 2 + 2 * (mask + 1));
    this.baseOf[state] = rb;
    this.tables++;
    for (const id of ex) {
      if (id === this.eos && !this.ids) continue; // EOS: the DFA's start state from anywhere, as in state 0's row
      this.setCont(id, stateClass(this.dfa, state));
      let h = slotHash(id, mask);
      while (T[rb + 2 + 2 * h] !== EMPTY) h = (h + 1) & mask;
      T[rb + 2 + 2 * h] = id;
      if (this.ids) this.setEntry(rb + 3 + 2 * h, state, id);
      else this.computeEntry(rb + 3 + 2 * h, state, id);
    }
    return rb;
  }

  /** Position in `T` of the entry of (the state at base `rb`, id < V). */
  private slot(rb: number, id: number): number {
    if (rb === 0) return id;
    const T = this.T;
    const mask = T[rb];
    let h = slotHash(id, mask);
    for (;;) {
      const k = T[rb + 2 + 2 * h];
      if (k === id) return rb + 3 + 2 * h;
      if (k === EMPTY) return id;
      h = (h + 1) & mask;
    }
  }

  /** The DFA state whose table is at base `rb`. */
  private stateAt(rb: number): number {
    return rb === 0 ? 0 : this.T[rb + 1];
  }

  /** Length of a token in symbols: bytes (text mode; 0 for ids without a token, and EOS is never inside a match) or 1 (ids). */
  symbolsOf(id: number): number {
    if (this.ids) return 1;
    return id < this.tb.vocabSize ? this.tb.offsets[id + 1] - this.tb.offsets[id] : 0;
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
        for (let a = 0; a < acc.length; a += 2) {
          const back = acc[a + 1] - (o - o0 + 1),
            endIn = o - o0 + 1;
          const known = this.word ? this.wordEdges(o0, o1, back, endIn) : KNOWN_BEFORE | KNOWN_AFTER;
          if (known < 0) continue;
          hitList ??= [];
          hitList.push(acc[a], back, endIn, known);
        }
      }
    }
    this.store(pos, s, hitList ?? NO_HITS, id);
  }

  /**
   * Whole-word search: what the token `bytes[o0..o1)` settles about a match in it that starts
   * `back` bytes before it (≤ 0: at byte −back) and ends after `endIn` of its bytes. A neighbour
   * inside the token decides its edge when the token holds the whole character, by the scanner's
   * rule (`./scan.ts`; {@link edgeClasses} of the bytes before the match, and of those after it).
   * @returns −1 when a neighbour is a word character (not a whole word), else the `known` bits of {@link HitFn}.
   */
  private wordEdges(o0: number, o1: number, back: number, endIn: number): number {
    const bytes = this.tb.bytes;
    let known = 0;
    if (back < 0) {
      const b = bytes[o0 - back - 1];
      const c = b < 0x80 ? (isWordCodePoint(b) ? 1 : 0) : (edgeClasses(bytes, o0, o0 - back) >> 2) & 3;
      if (c === 1) return -1;
      if (c === 0) known |= KNOWN_BEFORE;
    }
    if (o0 + endIn < o1) {
      const b = bytes[o0 + endIn];
      const c = b < 0x80 ? (isWordCodePoint(b) ? 1 : 0) : edgeClasses(bytes, o0 + endIn, o1) & 3;
      if (c === 1) return -1;
      if (c === 0) known |= KNOWN_AFTER;
    }
    return known;
  }

  /** Ids mode: the entry of (state, id) at table position `pos`. */
  private setEntry(pos: number, state: number, id: number): void {
    const s = this.dfa.stepId(state, id);
    const acc = this.dfa.accepts[s];
    const hitList: number[] = [];
    if (acc) for (let a = 0; a < acc.length; a += 2) hitList.push(acc[a], acc[a + 1] - 1, 0, KNOWN_BEFORE | KNOWN_AFTER);
    this.store(pos, s, hitList, id);
  }

  /** Sets the entry at `pos` of token `id`: to state `next`, completing the matches of `hitList` (flat, see {@link hits}). */
  private store(pos: number, next: number, hitList: number[], id: number): void {
    this.ensureState(next);
    let h: Int32Array | undefined;
    if (hitList.length) {
      // Shared by all entries with the same matches (200 names: 82,000 entries, few distinct lists):
      // one array each would survive the young generation and be copied by every scavenge.
      // one match (the common case): a number, not a string to build and hash
      const key =
        hitList.length === 4 && hitList[1] > -2048 && hitList[1] < 2048 && hitList[2] < 4096
          ? ((hitList[0] * 4096 + hitList[1] + 2048) * 4096 + hitList[2]) * 4 + hitList[3]
          : hitList.join(',');
      h = this.hitLists.get(key);
      if (!h) {
        h = Int32Array.from(hitList);
        this.hitLists.set(key, h);
      }
      this.hits.set(pos, h);
    }
    const base = this.baseOf[next];
    const counted = h && base >= 0 ? this.countedEntry(id, base, h) : -1;
    this.T[pos] = counted >= 0 ? counted : !h && base >= 0 ? base : -(next + 1);
  }

  /**
   * A counted entry (≥ {@link COUNTED}) for token `id` leading to the state at base `next` and
   * completing the matches `h`, when the kernel can count them all: each starts inside the token
   * (`back` ≤ 0) or, in a text search, `back` bytes before it (the kernel walks back the tokens'
   * lengths to its first token, and leaves a match that starts before its count's range to the
   * slow path; a whole word's start edge then needs the match to start at that token's first or
   * second byte) and, in a whole-word search, each edge the token does not settle lies at its
   * own edge (the kernel then looks at the neighbouring token's class byte). −1 otherwise (the
   * slow path reports them), or when there is no kernel or the budget is spent. The record at
   * `T[r..]`: `[next, n, (term, flags) × n]`, flags bit 0: check the start's edge, bit 1: the end's, bits 2–: `back` when > 0.
   */
  private countedEntry(id: number, next: number, h: Int32Array): number {
    if (!this.kernel) return -1;
    // What the kernel cannot count (checked without an array: met at every such match): a match
    // that starts in an earlier token past 2^20 bytes or in ids mode; a whole word's start edge
    // inside the token, or its end edge inside the token, that the token does not settle.
    const word = this.word && !this.ids;
    for (let k = 0; k < h.length; k += 4) {
      const back = h[k + 1];
      if (back > 0 && (this.ids || back >= 1 << 20)) return -1;
      if (word && !(h[k + 3] & KNOWN_BEFORE) && back < 0) return -1;
      if (word && !(h[k + 3] & KNOWN_AFTER) && h[k + 2] < this.symbolsOf(id)) return -1;
    }
    // The record depends on the next state and the matches only: one per pair, shared by every
    // entry that has them (200 names: ~82,000 entries with matches, few distinct records).
    let byNext = this.records.get(h);
    if (!byNext) this.records.set(h, (byNext = new Map()));
    const known = byNext.get(next);
    if (known !== undefined) return known;
    const n = h.length / 4;
    const r = this.alloc(2 + 2 * n);
    const entry = r < 0 || r >= COUNTED ? -1 : COUNTED + r;
    byNext.set(next, entry);
    if (entry < 0) return -1;
    const T = this.T;
    T[r] = next;
    T[r + 1] = n;
    for (let k = 0; k < n; k++) {
      const back = h[4 * k + 1],
        known = h[4 * k + 3];
      let f = back > 0 ? back << 2 : 0;
      if (word) {
        if (!(known & KNOWN_BEFORE)) f |= 1;
        if (!(known & KNOWN_AFTER)) f |= 2;
      }
      T[r + 2 + 2 * k] = h[4 * k];
      T[r + 3 + 2 * k] = f;
    }
    return entry;
  }

  /** Table base of a state, building its table on first entry (−1 = none, the budget is spent: slow path). */
  private enter(state: number): number {
    this.ensureState(state);
    const base = this.baseOf[state];
    if (base >= 0) return base;
    if (base === -2) return -1;
    const b = this.buildState(state);
    if (b < 0) this.baseOf[state] = -2;
    return b;
  }

  /** Moves through one token the slow way (byte by byte), reporting completed matches. */
  private stepToken(state: number, id: number, j: number, hit: HitFn): number {
    const dfa = this.dfa;
    if (this.ids) {
      const s = dfa.stepId(state, id);
      const acc = dfa.accepts[s];
      if (acc) for (let a = 0; a < acc.length; a += 2) hit(acc[a], j, acc[a + 1] - 1, 0, KNOWN_BEFORE | KNOWN_AFTER);
      return s;
    }
    if (id === this.eos) return this.dfa.start;
    if (id >= this.tb.vocabSize) return state;
    const { offsets, bytes } = this.tb;
    let s = state;
    const o0 = offsets[id],
      o1 = offsets[id + 1];
    for (let o = o0; o < o1; o++) {
      s = dfa.stepByte(s, bytes[o]);
      const acc = dfa.accepts[s];
      if (acc) for (let a = 0; a < acc.length; a += 2) hit(acc[a], j, acc[a + 1] - (o - o0 + 1), o - o0 + 1, 0);
    }
    return s;
  }

  /**
   * Runs the automaton over `ids[from..to)` starting in `state`.
   * @param count the WebAssembly step counts the matches of counted entries itself (read them
   *   with {@link takeCounts}; they are not reported to `hit`): every match that starts in a token
   *   of `[from, to)` and completes in the same token, whole-word edges checked. Other matches are
   *   reported to `hit` as always (all of them when the scan runs in JavaScript).
   * @returns the state after the last token.
   */
  scan(ids: Uint32Array, from: number, to: number, state: number, hit: HitFn, count = false): number {
    if (!this.rateKnown && !this.pairMode && this.kernel && to - from > RATE_PROBE) {
      // The table's first long scan: its first tokens choose the state-0 test for the rest (a
      // whole 4 Mi-token chunk in branch mode mispredicts when most groups leave state 0).
      state = this.scan(ids, from, from + RATE_PROBE, state, hit, count);
      from += RATE_PROBE;
    }
    const V = this.V;
    const bits = this.rootBits;
    const text = !this.ids;
    const kern = this.kernel && ids.buffer === this.kernel.buffer ? this.kernel : undefined;
    let rb = this.enter(state); // (may build the state's table: JavaScript mode then grows `T`)
    let T = this.T;
    let i = from;
    const pair = this.pairMode ? this.pairMode === 'pair' : this.leaveRate > PAIR_RATE;
    let leaves = 0;
    while (i < to) {
      if (rb >= 0) {
        if (kern) {
          // Every state's step in WebAssembly, up to the next token for the slow path below.
          i = kern.run(ids, i, to, rb, V, !text, pair, count, from, this.word && text);
          rb = kern.rb;
          leaves += kern.leaves;
        } else {
          // The same in JavaScript: state 0 tests the bit set, other states look the id up.
          for (; i < to; i++) {
            const id = ids[i];
            if (rb === 0) {
              if (id >= V || (bits[id >>> 5] & (1 << (id & 31))) === 0) continue;
            } else if (id >= V) {
              if (text) break;
              rb = 0;
              continue;
            }
            const x = T[this.slot(rb, id)];
            if (x < 0 || x >= COUNTED) break;
            rb = x;
          }
        }
        if (i >= to) break;
        const id = ids[i];
        if (id < V) {
          const pos = this.slot(rb, id);
          const x = T[pos];
          if (x >= 0 && x < COUNTED) {
            rb = x;
            i++;
            continue;
          }
          if (x >= COUNTED) {
            // a counted entry the kernel left to this path (not counting here, or an edge to decide)
            const h = this.hits.get(pos)!;
            for (let k = 0; k < h.length; k += 4) hit(h[k], i, h[k + 1], h[k + 2], h[k + 3]);
            rb = T[x - COUNTED];
            i++;
            continue;
          }
          const next = -x - 1;
          const h = this.hits.get(pos);
          if (h) for (let k = 0; k < h.length; k += 4) hit(h[k], i, h[k + 1], h[k + 2], h[k + 3]);
          rb = this.enter(next);
          T = this.T;
          // the next state got its table: the entry becomes a fast one (or a counted one)
          const fast = rb < 0 ? -1 : h ? this.countedEntry(id, rb, h) : rb;
          if (fast >= 0) {
            T[pos] = fast;
            if (pos < V) this.setRn(pos, fast); // (state 0's row is T[0..V))
          }
          state = next;
          i++;
          continue;
        }
        state = this.stateAt(rb); // (text mode: an id past the vocabulary, which has no bytes)
      }
      state = this.stepToken(state, ids[i], i, hit);
      rb = this.enter(state);
      T = this.T;
      i++;
    }
    if (kern && to - from >= 4096) {
      this.leaveRate = (4 * leaves) / (to - from);
      this.rateKnown = true;
    }
    return rb >= 0 ? this.stateAt(rb) : state;
  }

  /**
   * Hands each term's matches counted by {@link scan} with `count` since the last call to `add`
   * (terms with none are skipped), and zeroes them.
   */
  takeCounts(add: (term: number, n: number) => void): void {
    if (!this.kernel) return;
    const c = this.kernel.counts();
    // The plain counted tokens the pair test tallied, by id and the class of the character after:
    // each of its entry's matches whose end edge that class allows.
    settleTallies(this.kernel.tallies(), this.kernel.tallied(), this.T, c);
    for (let t = 0; t < c.length; t++) {
      if (c[t] !== 0) {
        add(t, c[t]);
        c[t] = 0;
      }
    }
  }

  /** State tables built (state 0's row included; for tests and diagnostics). */
  get rowCount(): number {
    return this.tables;
  }
}

/**
 * Adds the kernel's tallies of plain counted tokens (`tallies[2 · id + w]`, see
 * `ScanKernel.tallies`) listed in `list` (`ScanKernel.tallied`: the slots that left 0, its length
 * in its last entry) to the per-term counts `c` through each id's state-0 entry's record in `T`
 * (with w = 1, the next character is a word character: a match that ends at the token's end with
 * its end's edge to check, flags bit 1, does not count), and zeroes them and the list: the work of
 * a piece of the stream is the distinct tokens it tallied, however short the piece.
 */
function settleTallies(tallies: Int32Array, list: Int32Array, T: Int32Array, c: Int32Array): void {
  const top = list.length - 1;
  const n = list[top];
  for (let e = top - 1; e >= top - n; e--) {
    const slot = list[e];
    const m = tallies[slot];
    tallies[slot] = 0;
    const veto = (slot & 1) << 1;
    const r = T[slot >>> 1] - COUNTED;
    for (let k = 0; k < T[r + 1]; k++) if ((T[r + 3 + 2 * k] & veto) === 0) c[T[r + 2 + 2 * k]] += m;
  }
  list[top] = 0;
}

/** `true` when two states complete the same matches. */
function sameAccepts(a: Int32Array | null, b: Int32Array | null): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/**
 * Token ids `0..vocabSize−1` in byte order (lexicographic, a prefix before its extensions), made
 * one byte position at a time where a walk asks for it: `ids` holds the tokens without bytes
 * first (`[0, emptyEnd)`), then the tokens grouped by their first byte `c` at `[starts[c],
 * starts[c + 1])`; {@link bucket} groups a range of tokens that share their first d bytes by
 * byte d (a counting pass, once per range). A walk buckets only the ranges where its two states
 * part, so a term's start costs the few ranges it enters, not whole groups (` the sea`: the
 * tokens that start with ` s`, not the half of the vocabulary that starts with a space).
 */
interface VocabularyOrder {
  readonly ids: Int32Array;
  readonly emptyEnd: number;
  /** 257 entries: group `c` is `[starts[c], starts[c + 1])` of {@link ids}. */
  readonly starts: Int32Array;
  /**
   * Orders `ids[lo..hi)`, tokens that share their first `d` bytes (a first-byte group for d = 1,
   * or a group of one byte at d − 1 in a range bucketed there), by byte `d`: the tokens that end
   * at d first, then by that byte (stable). Done once per range.
   */
  bucket(lo: number, hi: number, d: number): void;
}

const orderCache = new WeakMap<TokenBytes, VocabularyOrder>();

/** The {@link VocabularyOrder} of a byte table, once per table. */
function vocabularyOrder(tb: TokenBytes): VocabularyOrder {
  const cached = orderCache.get(tb);
  if (cached) return cached;
  const { offsets, bytes } = tb;
  const V = tb.vocabSize;
  const ids = new Int32Array(V);
  const tmp = new Int32Array(V);
  const counts = new Int32Array(257);
  const fill = new Int32Array(257);
  // Depth 0 only: a counting pass by first byte (no-byte tokens first, in id order).
  const firstKey = new Uint16Array(V);
  for (let id = 0; id < V; id++) {
    const o = offsets[id];
    counts[(firstKey[id] = o < offsets[id + 1] ? bytes[o] + 1 : 0)]++;
  }
  const first = new Int32Array(258);
  for (let b = 0; b < 257; b++) first[b + 1] = first[b] + counts[b];
  fill.set(first.subarray(0, 257));
  for (let id = 0; id < V; id++) ids[fill[firstKey[id]]++] = id;
  /** Ranges bucketed: `d · (V + 1) + lo` (a range at depth d is known by its start). */
  const done = new Set<number>();
  // bucket 0: tokens that end at byte d (they sort first); bucket b + 1: byte d is b
  const key = (id: number, d: number) => (offsets[id] + d < offsets[id + 1] ? bytes[offsets[id] + d] + 1 : 0);
  const order: VocabularyOrder = {
    ids,
    emptyEnd: first[1],
    starts: first.subarray(1),
    bucket(lo: number, hi: number, d: number): void {
      if (hi - lo < 2) return;
      const k = d * (V + 1) + lo;
      if (done.has(k)) return;
      done.add(k);
      counts.fill(0);
      for (let j = lo; j < hi; j++) counts[key(ids[j], d)]++;
      fill[0] = 0;
      for (let b = 1; b < 257; b++) fill[b] = fill[b - 1] + counts[b - 1];
      for (let j = lo; j < hi; j++) tmp[lo + fill[key(ids[j], d)]++] = ids[j];
      ids.set(tmp.subarray(lo, hi), lo);
    },
  };
  orderCache.set(tb, order);
  return order;
}
