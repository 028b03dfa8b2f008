/**
 * The hot loop of the stream-index scan (`streamIndex/scan.ts`) as a WebAssembly SIMD function,
 * with a plain JavaScript twin used only where WebAssembly is unavailable (`node --jitless`).
 * Both implement one contract, {@link IndexKernel.scan}; the unit tests run both against the
 * Python reference.
 *
 * Per token the kernel keeps the max id and the running document hash (two polynomial lanes,
 * `h = h·P + id`, see `scan.ts`), and reports every "rare" id — any id `≥ floor`, where
 * `floor` is the smallest id that needs attention (EOS, special ids, vocabulary holes; ids ≥ the
 * vocabulary size are ≥ floor too) — as an event for the scanner's slow path.
 *
 * The SIMD loop takes 32 token ids (eight `v128`) per step: `max_u` of the eight vectors is both
 * the max-id update and the rare test (one `i32x4.ge_u` against `floor` and `v128.any_true`);
 * the hash advances as 16 interleaved Horner lanes per hash lane (`x_r = x_r·P¹⁶ + id_{16k+r}`,
 * twice per step), started with the hash so far in the lane of weight P⁰ and folded exactly back
 * into the scalar hash (`h = Σ_r x_r·P^{15−r}`) when the fast run ends: the same value 16·m
 * scalar steps give. Each lane's `P¹⁶` is `1 ∓ 2⁶`: a shift and an add or subtract (see {@link HASH_P1}). A step
 * whose 32 ids contain a rare one, and the last < 32 ids, run the scalar path: to the end of the
 * step, or through the first EOS in it, after which the fast run starts again at the next id.
 * Cost: see `npm run bench -- --only index` (the scan's share next to sha256 over the same
 * bytes; the JavaScript loop it replaces took 54 ms per 100 MB, sha256 with SHA-NI ~71 ms).
 *
 * Memory layout (bytes): `[0, 64)` the state words below; `[EVENTS_AT, EVENTS_AT + 16·EVENT_CAP)`
 * the events, 4 uint32 each (index in the chunk, id, hash lane 1 and lane 2 of the tokens since the
 * last EOS, before this id); `[SCRATCH_AT, +SCRATCH_BYTES)` scratch for ids that do not live in
 * the memory; then the caller's area (the worker's read buffers), `areaBytes` long.
 *
 * The module is assembled here on first use (1.3 KB, about a millisecond) by a small emitter
 * instead of a binary blob, so the code below is its source.
 */

/**
 * Multipliers of the two hash lanes: odd constants of maximal multiplicative order (2³⁰) whose
 * 16th powers are `1 − 2⁶` (lane 1) and `1 + 2⁶ = 65` (lane 2), mod 2³², so that the SIMD loop
 * advances each lane by 16 ids with a shift and two adds or subtracts (`x·(1 ± 2⁶) = x ± (x << 6)`)
 * instead of a multiply: latency 2 instead of ~10 on the loop-carried chain, and off the
 * multiplier's ports. Measured (kernel alone, ids in L2): lane 2 alone ~25% less time per id than
 * two multiplies, lane 1 too ~10–15% less again. Both steps generate the whole subgroup of 16th
 * powers (the odd residues ≡ 1 mod 64), so no shift-and-add step has a longer period. Every odd
 * multiplier has `P¹⁶ ≡ 1 (mod 2⁶)`, so every such hash mod 2³² has structured collisions (e.g.
 * sixth differences of ids 16 apart: `(P¹⁶ − 1)⁶ ≡ 0`); both multipliers have exactly the 2-adic
 * order `P¹⁶ − 1 = 2⁶·odd` of the FNV-1 prime used before, so that class is no larger and the
 * hash is no weaker.
 */
export const HASH_P1 = 0xa4f5fd05;
export const HASH_P2 = 0x5baefacd;
/** `P¹⁶ = 1 ∓ 2^HASH_STEP_SHIFT (mod 2³²)`: minus for {@link HASH_P1}, plus for {@link HASH_P2}. */
const HASH_STEP_SHIFT = 6;

/** `p^n mod 2^32` (unsigned), by squaring. */
export function powMod32(p: number, n: number): number {
  let result = 1,
    base = p | 0;
  let e = n;
  while (e > 0) {
    if (e % 2 === 1) result = Math.imul(result, base);
    base = Math.imul(base, base);
    e = Math.floor(e / 2);
  }
  return result >>> 0;
}

/**
 * Ids per step of the fast run: a multiple of 16 (each 16 is one Horner step of the accumulators).
 * 32 halves the per-step work (the rare test, the loop and its stack check) per id.
 */
const STEP_IDS = 32;

/** State words (uint32 index into the memory): inputs, then the running state the kernel updates. */
export const ST_FLOOR = 0,
  ST_EOS = 1,
  ST_MAX = 2,
  ST_H1 = 3,
  ST_H2 = 4,
  /** Events written so far (the caller resets it to 0 after reading them). */
  ST_EVENTS = 5;
/** Byte offset of the event area. */
export const EVENTS_AT = 64;
/** Events the area holds; the kernel returns early when it is full. */
export const EVENT_CAP = 16384;
/** Byte offset of the scratch area. */
export const SCRATCH_AT = EVENTS_AT + 16 * EVENT_CAP;
/** Scratch bytes (a multiple of 16). */
export const SCRATCH_BYTES = 1 << 18;
/** Byte offset of the caller's area. */
export const AREA_AT = SCRATCH_AT + SCRATCH_BYTES;

/**
 * `scan(ptr, i, n)`: walks the uint32 ids at byte `ptr` from index `i` to `n` (exclusive),
 * updating the state words and appending events; returns `n`, or the index of the first id not
 * yet handled when the event area filled up (read the events, reset {@link ST_EVENTS}, call again).
 */
export type ScanFn = (ptr: number, i: number, n: number) => number;

/** One kernel instance: its memory, the views the scanner uses, and the scan function. */
export interface IndexKernel {
  /** The memory's buffer (`ids.buffer === kernel.buffer`: the ids can be scanned in place). */
  readonly buffer: ArrayBuffer;
  /** The whole memory as uint32 (state words, events, scratch, area). */
  readonly words: Uint32Array;
  /** See {@link ScanFn}. */
  readonly scan: ScanFn;
  /** The caller's area (`areaBytes` bytes at {@link AREA_AT}). */
  readonly area: Buffer;
  /** True for the WebAssembly SIMD kernel, false for the JavaScript twin. */
  readonly simd: boolean;
}

// ---- a minimal WebAssembly emitter (only what the kernel uses) ----

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  n |= 0;
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

type Code = (number | Code)[];
const I32 = 0x7f,
  V128 = 0x7b;
const block = (...body: Code) => [0x02, 0x40, ...body, 0x0b];
const loop = (...body: Code) => [0x03, 0x40, ...body, 0x0b];
const ifThen = (...body: Code) => [0x04, 0x40, ...body, 0x0b];
const br = (depth: number) => [0x0c, ...uleb(depth)];
const brIf = (depth: number) => [0x0d, ...uleb(depth)];
const get = (l: number) => [0x20, ...uleb(l)];
const set = (l: number) => [0x21, ...uleb(l)];
const i32 = (n: number) => [0x41, ...sleb(n)];
const load32 = (offset = 0) => [0x28, 2, ...uleb(offset)];
const store32 = (offset = 0) => [0x36, 2, ...uleb(offset)];
const simd = (op: number, ...imm: number[]) => [0xfd, ...uleb(op), ...imm];
const v128load = (offset = 0) => simd(0x00, 4, ...uleb(offset));
const v128const = (lanes: number[]) => simd(0x0c, ...lanes.flatMap((x) => [x & 255, (x >>> 8) & 255, (x >>> 16) & 255, x >>> 24]));
const op = {
  select: 0x1b,
  eq: 0x46,
  ltU: 0x49,
  gtU: 0x4b,
  geU: 0x4f,
  add: 0x6a,
  mul: 0x6c,
  shl: 0x74,
};
const vop = {
  splat: 0x11,
  extract: 0x1b,
  replace: 0x1c,
  anyTrue: 0x53,
  geU: 0x40,
  add: 0xae,
  sub: 0xb1,
  mul: 0xb5,
  maxU: 0xb9,
  shl: 0xab,
};
function flat(c: Code, out: number[] = []): number[] {
  for (const x of c) {
    if (typeof x === 'number') out.push(x);
    else flat(x, out);
  }
  return out;
}
const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const name = (s: string) => [...uleb(s.length), ...Buffer.from(s, 'latin1')];
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];

/** The kernel module's bytes (see the file header for what it computes). */
export function kernelModuleBytes(): Uint8Array<ArrayBuffer> {
  // Locals: params 0–2, then i32s, then v128s.
  const PTR = 0,
    I = 1,
    N = 2;
  const FLOOR = 3,
    EOS = 4,
    MAX = 5,
    H1 = 6,
    H2 = 7,
    EVC = 8,
    V = 9,
    END = 10,
    ADDR = 11,
    T = 12;
  const I32_LOCALS = 10;
  const FV = 13,
    MAXV = 14,
    A = 15,
    MX = 16,
    X1 = 17, // X1..X1+3: lane-1 accumulators for ids 0–3, 4–7, 8–11, 12–15 of each 16 ids
    X2 = 21; // X2..X2+3: lane 2
  const V128_LOCALS = 12;
  const pw = (p: number, k: number) => powMod32(p, k);
  // Fold weights: accumulator q (ids 4q..4q+3 of a step) lane r gets P^(15 − 4q − r).
  const weights = (p: number, q: number) => v128const([0, 1, 2, 3].map((r) => pw(p, 15 - 4 * q - r)));
  const hsum = (v: Code): Code => [
    v,
    set(A),
    get(A),
    simd(vop.extract, 0),
    get(A),
    simd(vop.extract, 1),
    op.add,
    get(A),
    simd(vop.extract, 2),
    op.add,
    get(A),
    simd(vop.extract, 3),
    op.add,
  ];
  const maxInto = (l: number, v: Code): Code => [v, set(T), get(T), get(l), get(T), get(l), op.gtU, op.select, set(l)];
  const fold = (h: number, p: number, x: number): Code => [
    hsum([
      get(x),
      weights(p, 0),
      simd(vop.mul),
      get(x + 1),
      weights(p, 1),
      simd(vop.mul),
      simd(vop.add),
      get(x + 2),
      weights(p, 2),
      simd(vop.mul),
      get(x + 3),
      weights(p, 3),
      simd(vop.mul),
      simd(vop.add),
      simd(vop.add),
    ]),
    set(h),
  ];
  const zero = v128const([0, 0, 0, 0]);
  const zeroAcc: Code = [];
  for (let k = 0; k < 3; k++) zeroAcc.push(zero, set(X1 + k), zero, set(X2 + k));
  if (pw(HASH_P1, 16) !== 2 ** 32 + 1 - 2 ** HASH_STEP_SHIFT) throw new Error('HASH_P1 does not match its step shift');
  if (pw(HASH_P2, 16) !== 1 + 2 ** HASH_STEP_SHIFT) throw new Error('HASH_P2 does not match its step shift');
  const advance: Code = [];
  for (let g = 0; g < STEP_IDS / 16; g++) {
    for (let k = 0; k < 4; k++) {
      // The ids are loaded again here (an L1 hit) rather than kept in locals from the test
      // above: eight more live vectors do not fit the 15 vector registers V8 allocates. (V8 may
      // still reuse the loaded values; it decides the spills.)
      advance.push(get(ADDR), v128load(64 * g + 16 * k), set(A));
      // x·P¹⁶ + id: lane 1 x − (x << 6) + id, lane 2 x + (x << 6) + id.
      advance.push(get(X1 + k), get(X1 + k), i32(HASH_STEP_SHIFT), simd(vop.shl), simd(vop.sub), get(A), simd(vop.add), set(X1 + k));
      advance.push(get(X2 + k), i32(HASH_STEP_SHIFT), simd(vop.shl), get(X2 + k), simd(vop.add), get(A), simd(vop.add), set(X2 + k));
    }
  }
  const rareTest: Code = [get(ADDR), v128load(0)];
  for (let v = 1; v < STEP_IDS / 4; v++) rareTest.push(get(ADDR), v128load(16 * v), simd(vop.maxU));
  const storeState: Code = [
    // max = max(max, lanes of maxv)
    maxInto(MAX, [get(MAXV), simd(vop.extract, 0)]),
    maxInto(MAX, [get(MAXV), simd(vop.extract, 1)]),
    maxInto(MAX, [get(MAXV), simd(vop.extract, 2)]),
    maxInto(MAX, [get(MAXV), simd(vop.extract, 3)]),
    i32(0),
    get(MAX),
    store32(4 * ST_MAX),
    i32(0),
    get(H1),
    store32(4 * ST_H1),
    i32(0),
    get(H2),
    store32(4 * ST_H2),
    i32(0),
    get(EVC),
    store32(4 * ST_EVENTS),
  ];
  const body: Code = [
    i32(0),
    load32(4 * ST_FLOOR),
    set(FLOOR),
    i32(0),
    load32(4 * ST_EOS),
    set(EOS),
    i32(0),
    load32(4 * ST_MAX),
    set(MAX),
    i32(0),
    load32(4 * ST_H1),
    set(H1),
    i32(0),
    load32(4 * ST_H2),
    set(H2),
    i32(0),
    load32(4 * ST_EVENTS),
    set(EVC),
    get(FLOOR),
    simd(vop.splat),
    set(FV),
    get(MAX),
    simd(vop.splat),
    set(MAXV),
    block(
      loop(
        // ---- fast run: STEP_IDS ids per step while none is rare ----
        zeroAcc,
        // The hash so far enters as the id of weight P^0 (last lane of the last accumulator): after
        // m steps it has been multiplied by P^(16m), exactly as m·16 scalar steps would.
        zero,
        get(H1),
        simd(vop.replace, 3),
        set(X1 + 3),
        zero,
        get(H2),
        simd(vop.replace, 3),
        set(X2 + 3),
        get(PTR),
        get(I),
        i32(2),
        op.shl,
        op.add,
        set(ADDR),
        block(
          loop(
            get(I),
            i32(STEP_IDS),
            op.add,
            get(N),
            op.gtU,
            brIf(1),
            rareTest,
            set(MX),
            get(MX),
            get(FV),
            simd(vop.geU),
            simd(vop.anyTrue),
            brIf(1),
            get(MAXV),
            get(MX),
            simd(vop.maxU),
            set(MAXV),
            advance,
            get(I),
            i32(STEP_IDS),
            op.add,
            set(I),
            get(ADDR),
            i32(4 * STEP_IDS),
            op.add,
            set(ADDR),
            br(0),
          ),
        ),
        fold(H1, HASH_P1, X1),
        fold(H2, HASH_P2, X2),
        // ---- scalar path: the step holding a rare id (through its first EOS), or the last < 32 ids ----
        get(I),
        i32(STEP_IDS),
        op.add,
        set(END),
        get(END),
        get(N),
        get(END),
        get(N),
        op.ltU,
        op.select,
        set(END),
        block(
          loop(
            get(I),
            get(END),
            op.geU,
            brIf(1),
            get(PTR),
            get(I),
            i32(2),
            op.shl,
            op.add,
            load32(0),
            set(V),
            maxInto(MAX, [get(V)]),
            get(V),
            get(FLOOR),
            op.geU,
            ifThen(
              get(EVC),
              i32(EVENT_CAP),
              op.geU,
              ifThen(storeState, get(I), 0x0f /* return */),
              // event: index, id, h1, h2
              get(EVC),
              i32(4),
              op.shl,
              set(T),
              get(T),
              get(I),
              store32(EVENTS_AT),
              get(T),
              get(V),
              store32(EVENTS_AT + 4),
              get(T),
              get(H1),
              store32(EVENTS_AT + 8),
              get(T),
              get(H2),
              store32(EVENTS_AT + 12),
              get(EVC),
              i32(1),
              op.add,
              set(EVC),
              get(V),
              get(EOS),
              op.eq,
              // An EOS: a new document starts with hash 0, and the fast run restarts right after the EOS
              // (unaligned loads are fine) instead of walking the rest of the step here: on a stream
              // of ~100-token documents this took the kernel from 32 to 25 ms per 25M tokens.
              ifThen(i32(0), set(H1), i32(0), set(H2), get(I), i32(1), op.add, set(I), br(3 /* leave the scalar loop */)),
            ),
            get(H1),
            i32(HASH_P1),
            op.mul,
            get(V),
            op.add,
            set(H1),
            get(H2),
            i32(HASH_P2),
            op.mul,
            get(V),
            op.add,
            set(H2),
            get(I),
            i32(1),
            op.add,
            set(I),
            br(0),
          ),
        ),
        get(I),
        get(N),
        op.ltU,
        brIf(0),
      ),
    ),
    storeState,
    get(I),
  ];
  const locals = [...uleb(2), ...uleb(I32_LOCALS), I32, ...uleb(V128_LOCALS), V128];
  const fn = [...locals, ...flat(body), 0x0b];
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32]]), ...vec([[I32]])]])),
    ...section(2, vec([[...name('env'), ...name('mem'), 0x02, 0x00, ...uleb(1)]])),
    ...section(3, vec([uleb(0)])),
    ...section(7, vec([[...name('scan'), 0x00, ...uleb(0)]])),
    ...section(10, vec([[...uleb(fn.length), ...fn]])),
  ];
  return new Uint8Array(bytes);
}

let compiled: WebAssembly.Module | null | undefined;

/**
 * The compiled kernel module of this thread (assembled and compiled once, a few ms cold), or
 * undefined where WebAssembly SIMD is unavailable. A `WebAssembly.Module` can be handed to worker
 * threads (`workerData`), which then skip assembling it.
 */
export function indexKernelModule(): WebAssembly.Module | undefined {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(kernelModuleBytes());
    } catch {
      compiled = null;
    }
  }
  return compiled ?? undefined;
}

/** The JavaScript twin of the WebAssembly function (same contract, scalar). */
function scanJs(words: Uint32Array): ScanFn {
  return (ptr, i, n) => {
    const ids = new Uint32Array(words.buffer, ptr, n);
    const floor = words[ST_FLOOR],
      eos = words[ST_EOS];
    let max = words[ST_MAX],
      h1 = words[ST_H1] | 0,
      h2 = words[ST_H2] | 0,
      evc = words[ST_EVENTS];
    let j = i;
    while (j < n) {
      // Common case: one comparison per id.
      for (; j < n; j++) {
        const v = ids[j];
        if (v >= floor) break;
        if (v > max) max = v;
        h1 = (Math.imul(h1, HASH_P1) + v) | 0;
        h2 = (Math.imul(h2, HASH_P2) + v) | 0;
      }
      if (j >= n || evc >= EVENT_CAP) break;
      const v = ids[j];
      if (v > max) max = v;
      const e = EVENTS_AT / 4 + 4 * evc++;
      words[e] = j;
      words[e + 1] = v;
      words[e + 2] = h1;
      words[e + 3] = h2;
      if (v === eos) {
        h1 = 0;
        h2 = 0;
      } else {
        h1 = (Math.imul(h1, HASH_P1) + v) | 0;
        h2 = (Math.imul(h2, HASH_P2) + v) | 0;
      }
      j++;
    }
    words[ST_MAX] = max;
    words[ST_H1] = h1;
    words[ST_H2] = h2;
    words[ST_EVENTS] = evc;
    return j;
  };
}

/**
 * Makes a kernel whose caller's area holds `areaBytes` bytes (rounded up to 16).
 * @param mode `'auto'` (WebAssembly SIMD when it compiles, else JavaScript), or force one (tests).
 * @param module a compiled kernel module (from {@link indexKernelModule} of another thread).
 * @throws Error with `mode: 'wasm'` when WebAssembly SIMD is unavailable.
 */
export function makeIndexKernel(areaBytes = 0, mode: 'auto' | 'wasm' | 'js' = 'auto', module?: WebAssembly.Module): IndexKernel {
  const area = Math.ceil(Math.max(0, areaBytes) / 16) * 16;
  const bytes = AREA_AT + area;
  const mod = mode === 'js' ? undefined : (module ?? indexKernelModule());
  if (mod) {
    const mem = new WebAssembly.Memory({ initial: Math.ceil(bytes / 65536) });
    const inst = new WebAssembly.Instance(mod, { env: { mem } });
    return {
      buffer: mem.buffer,
      words: new Uint32Array(mem.buffer),
      scan: inst.exports.scan as ScanFn,
      area: Buffer.from(mem.buffer, AREA_AT, area),
      simd: true,
    };
  }
  if (mode === 'wasm') throw new Error('WebAssembly SIMD is not available');
  const buffer = new ArrayBuffer(bytes);
  const words = new Uint32Array(buffer);
  return { buffer, words, scan: scanJs(words), area: Buffer.from(buffer, AREA_AT, area), simd: false };
}

let shared: IndexKernel | undefined;

/** This thread's kernel without a caller's area (ids are scanned through the scratch area). */
export function sharedIndexKernel(): IndexKernel {
  return (shared ??= makeIndexKernel(0));
}
