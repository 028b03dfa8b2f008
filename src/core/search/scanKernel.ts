/**
 * The search automaton's per-token step as one WebAssembly function for every state
 * (`./scanKernel.wat`, compiled at build time by esbuild.js with the `wabt` package), driven by
 * {@link TokenTable.scan} in `./automaton.ts`: the kernel walks the token ids while each one takes
 * a fast table entry (state 0: four tokens per test, over a bit per id while few tokens leave
 * state 0, else over a byte per id — a token that only leaves state 0 is skipped when the next one
 * continues no state of the class of the one it leads to — then its dense row;
 * other states: an id in no built state's table takes state 0's entry at once, else a probe of
 * the state's small exception table, else state 0's entry) and stops at the
 * first token that needs the JavaScript slow path (a match it cannot count: one that starts
 * before its count's range or whose word edge the class bytes do not settle, an entry not
 * computed yet, a state without a row). Where WebAssembly is unavailable
 * (`node --jitless`) the table's JavaScript loop does the same work.
 *
 * Memory layout (bytes): from 0 the bit sets `rn` (two bits per id: leaves state 0, needs the
 * slow path there; `⌊V/16⌋ + 1` words), `cont` (a bit per id: some built state's table holds
 * it; `⌊V/32⌋ + 1` words), `any` (a bit per id: leaves state 0; `⌊V/32⌋ + 1` words) and `rc`
 * (a byte per id: needs a step, the class of the state it leads to, a plain counted entry, the
 * classes of the states that hold it; `⌊V/4⌋ + 1` words), see `./scanKernel.wat`, and, in the word at `tableAt − 4`, the row
 * base the kernel stopped in; `[tableAt, areaAt)` the
 * table, int32 entries: state 0's dense row, then the other states' exception tables and the
 * records of counted entries (see {@link TokenTable}); then a class byte per id (and one for
 * every id past the vocabulary), a count per term, the list of tallies touched and two tallies per
 * id (`./scanKernel.wat`); from `areaAt` the scanner's read buffers, so chunks are read straight into
 * the memory the kernel walks (no copy).
 */
import KERNEL_WASM from './scanKernel.wat';

/** The kernel's exports. */
interface KernelExports {
  scan(
    ptr: number,
    i: number,
    to: number,
    rb: number,
    V: number,
    table: number,
    rn: number,
    cont: number,
    idsMode: number,
    pair: number,
    cls: number,
    cnt: number,
    lim: number,
    any: number,
    rc: number,
    lo: number,
    tallies: number,
    word: number,
  ): number;
}

let compiled: WebAssembly.Module | null | undefined;

const PAGE = 65536;
const pages = (bytes: number) => Math.ceil(bytes / PAGE);

/** One kernel instance with its own memory: bit set, table, read buffers. */
export class ScanKernel {
  private readonly mem: WebAssembly.Memory;
  private readonly exports: KernelExports;
  /** Byte offset of the table. */
  readonly tableAt: number;
  /** Byte offset of the per-id class bytes, then the per-term counts (see {@link classes}). */
  private readonly auxAt: number;
  /** Byte offset of the per-term counts. */
  private readonly cntAt: number;
  /** Byte offset of the tallies of plain counted tokens (see {@link tallies}). */
  private readonly tallyAt: number;
  /** Byte offset of the read buffers. */
  private readonly areaAt: number;
  /** The word at `tableAt − 4`, where the kernel leaves its row base (a new view after the memory grows). */
  private rbWord: Int32Array;
  /** The word at `tableAt − 8`, where the kernel leaves its count of groups with a token leaving state 0. */
  private lvWord: Int32Array;

  private constructor(
    mod: WebAssembly.Module,
    /** Words of the `rn` bit set. */
    private readonly rnWords: number,
    /** Words of the `cont` bit set. */
    private readonly contWords: number,
    /** Table capacity in entries. */
    readonly tableEntries: number,
    /** Words of the `rc` byte set (four ids a word). */
    private readonly rcWords: number,
    /** Class bytes (one per id). */
    private readonly classBytes: number,
    /** Count words (one per term). */
    private readonly countWords: number,
  ) {
    this.tableAt = pages((rnWords + 2 * contWords + rcWords) * 4 + 8) * PAGE;
    this.auxAt = this.tableAt + pages(tableEntries * 4) * PAGE;
    this.cntAt = this.auxAt + Math.ceil(classBytes / 4) * 4;
    // the list of touched tally slots (length word, then up to one entry per slot) lies before the tallies, downwards
    this.tallyAt = this.cntAt + countWords * 4 + (classBytes * 2 + 1) * 4;
    this.areaAt = this.auxAt + pages(this.tallyAt - this.auxAt + classBytes * 2 * 4) * PAGE;
    // Pages are mapped on first touch: the table's reserve costs address space, not memory.
    this.mem = new WebAssembly.Memory({ initial: this.areaAt / PAGE });
    this.exports = new WebAssembly.Instance(mod, { env: { mem: this.mem } }).exports as unknown as KernelExports;
    this.rbWord = new Int32Array(this.mem.buffer, this.tableAt - 4, 1);
    this.lvWord = new Int32Array(this.mem.buffer, this.tableAt - 8, 1);
  }

  /**
   * A kernel with room for the bit sets `rn` and `cont` (`rnWords`, `contWords` words; see the
   * file header), a table of `tableEntries` int32 entries, `classBytes` class bytes and two tallies each (one per id ≤ V)
   * and `countWords` counts (one per term), or undefined when WebAssembly is unavailable or the memory would pass 1.5 GiB (the
   * caller then uses its JavaScript loop).
   */
  static make(
    rnWords: number,
    contWords: number,
    rcWords: number,
    tableEntries: number,
    classBytes: number,
    countWords: number,
  ): ScanKernel | undefined {
    try {
      if (compiled === undefined) compiled = new WebAssembly.Module(KERNEL_WASM);
      if (!compiled) return undefined;
      if ((rnWords + 2 * contWords + rcWords + tableEntries + countWords) * 4 + classBytes * 17 > 0x60000000) return undefined;
      return new ScanKernel(compiled, rnWords, contWords, tableEntries, rcWords, classBytes, countWords);
    } catch {
      compiled ??= null;
      return undefined;
    }
  }

  /** The bit set `rn`, a view into the memory (a new view after {@link buffers} grew the memory). */
  rn(): Int32Array {
    return new Int32Array(this.mem.buffer, 0, this.rnWords);
  }

  /** The bit set `cont`, a view into the memory (a new view after {@link buffers} grew the memory). */
  cont(): Int32Array {
    return new Int32Array(this.mem.buffer, this.rnWords * 4, this.contWords);
  }

  /**
   * The bit set `any` (a bit per id, `contWords` words: the id's state-0 entry is not 0, i.e. its
   * `rn` bits are not both 0), a view into the memory (a new view after {@link buffers} grew the
   * memory). State 0's first test, when few tokens leave it: 12.5 KB of bits for a 100k
   * vocabulary instead of `rn`'s 25 KB, so the hottest loop's look-ups stay in the L1 cache.
   */
  any(): Int32Array {
    return new Int32Array(this.mem.buffer, (this.rnWords + this.contWords) * 4, this.contWords);
  }

  /**
   * The byte set `rc` (a byte per id, `4 · rcWords` bytes): bit 0 the id's state-0 entry needs a
   * step, bits 1-3 the class of the state it leads to, bit 4 a plain counted entry (counted by the
   * pair test without a step), bits 5-7 the classes of the states that hold it (see `TokenTable`'s
   * `rc` in `./automaton.ts`); a view into the memory (a new view
   * after {@link buffers} grew the memory). The pair test of state 0 reads one byte per token.
   */
  rc(): Uint8Array {
    return new Uint8Array(this.mem.buffer, (this.rnWords + 2 * this.contWords) * 4, this.rcWords * 4);
  }

  /** The class bytes, a view into the memory (a new view after {@link buffers} grew the memory). */
  classes(): Uint8Array {
    return new Uint8Array(this.mem.buffer, this.auxAt, this.classBytes);
  }

  /** The per-term counts, a view into the memory (a new view after {@link buffers} grew the memory). */
  counts(): Int32Array {
    return new Int32Array(this.mem.buffer, this.cntAt, this.countWords);
  }

  /**
   * The tallies of the plain counted tokens the pair test passed while counting, two per id
   * (`2 · id + w`, w = 1 when the first character of the token after is a word character; always 0
   * outside a whole-word search): the owner turns the ones in {@link tallied} into per-term counts
   * through the token's entry and zeroes them (`TokenTable.takeCounts`). A view into the memory (a
   * new view after {@link buffers} grew the memory).
   */
  tallies(): Int32Array {
    return new Int32Array(this.mem.buffer, this.tallyAt, this.classBytes * 2);
  }

  /**
   * The slots of {@link tallies} that left 0 since the list was last emptied, in reverse: entry
   * `length − 1` is the list's length (set it to 0 to empty it), entries `length − 2`, `length −
   * 3`, … the slots, in the order they were first tallied. A view into the memory (a new view
   * after {@link buffers} grew the memory).
   */
  tallied(): Int32Array {
    return new Int32Array(this.mem.buffer, this.tallyAt - (this.classBytes * 2 + 1) * 4, this.classBytes * 2 + 1);
  }

  /** The memory's current buffer: `ids.buffer === kernel.buffer` says an array lives in it. */
  get buffer(): ArrayBuffer {
    return this.mem.buffer;
  }

  /** The table, a view into the memory (a new view after {@link buffers} grew the memory). */
  table(): Int32Array {
    return new Int32Array(this.mem.buffer, this.tableAt, this.tableEntries);
  }

  /**
   * `count` read buffers of `tokens` ids in the memory, growing it when needed (which makes
   * earlier views, the table's, the bit sets', the classes', the counts' and older buffers,
   * stale: take them again).
   * @throws RangeError when the memory cannot grow that far.
   */
  buffers(count: number, tokens: number): Uint32Array[] {
    const need = this.areaAt + count * tokens * 4;
    const have = this.mem.buffer.byteLength;
    if (need > have) {
      this.mem.grow(pages(need - have));
      this.rbWord = new Int32Array(this.mem.buffer, this.tableAt - 4, 1);
      this.lvWord = new Int32Array(this.mem.buffer, this.tableAt - 8, 1);
    }
    return Array.from({ length: count }, (_, k) => new Uint32Array(this.mem.buffer, this.areaAt + k * tokens * 4, tokens));
  }

  /**
   * Runs the kernel over `ids[i..to)` (an array in this memory) from row base `rb`.
   * @param V ids below V have table entries.
   * @param idsMode an id ≥ V leads to state 0 (runs of token ids); else it stops the kernel.
   * @param pair state 0 tests every group of four tokens with the pair test (`cont`), not only the
   *   groups where a token leaves state 0: no branch to mispredict when many tokens leave it.
   * @param count a counted entry adds its matches to {@link counts} (else it stops the kernel).
   * @param lo with `count`: a counted match that starts before token `lo` (one that spans tokens
   *   back past it) stops the kernel instead (the slow path reports it).
   * @param word a whole-word search: the pair test files a plain counted token under the class of
   *   the next token's first character in {@link tallies} (and stops at one whose class is 2).
   * @returns the index of the first token for the slow path (or `to`); the row base there is {@link rb}.
   */
  run(
    ids: Uint32Array,
    i: number,
    to: number,
    rb: number,
    V: number,
    idsMode: boolean,
    pair: boolean,
    count: boolean,
    lo = i,
    word = false,
  ): number {
    const cnt = count ? this.cntAt : 0;
    return this.exports.scan(
      ids.byteOffset,
      i,
      to,
      rb,
      V,
      this.tableAt,
      0,
      this.rnWords * 4,
      idsMode ? 1 : 0,
      pair ? 1 : 0,
      this.auxAt,
      cnt,
      ids.length,
      (this.rnWords + this.contWords) * 4,
      (this.rnWords + 2 * this.contWords) * 4,
      lo,
      this.tallyAt,
      word ? 1 : 0,
    );
  }

  /** Groups of four tokens the last {@link run} tested in state 0 where one of them leaves state 0. */
  get leaves(): number {
    return this.lvWord[0];
  }

  /** The row base the last {@link run} stopped in. */
  get rb(): number {
    return this.rbWord[0];
  }
}
