/**
 * The random number generators training frameworks shuffle their data with, ported bit for bit so
 * that a training order can be rebuilt from its seed:
 *
 * - **MT19937** as numpy's legacy `RandomState(seed)` seeds and draws it (Megatron-LM's
 *   `numpy.random.RandomState(config.random_seed)`), and as llm.c's `llmc/rand.h` does (`manual_seed`,
 *   `randint32`): both are Matsumoto–Nishimura's `init_genrand` + tempering, so one class serves both.
 * - numpy's **bounded integers by masked rejection** (`random_interval`) and the Fisher–Yates
 *   `shuffle` both `RandomState` and `Generator` run on a 1-D array.
 * - numpy's **`SeedSequence`** (how `PCG64(seed)` turns an int seed into its state) and
 *   **PCG64** (128-bit LCG, XSL-RR output), with `next_uint32` buffering the high half of each
 *   64-bit output (OLMo and OLMo-core: `np.random.Generator(np.random.PCG64(seed + epoch))`).
 * - llm.c's `random_permutation` (`randint32 % (i + 1)`).
 *
 * Sources (numpy commit 1f90bbb55e65e7de68921bc3f1a2d94492fdf689, llm.c commit
 * f1e2ace651495b74ae22d45d1723443fd00ecd3a): `numpy/random/src/mt19937/mt19937.c` lines 4–14
 * (`mt19937_seed`) and 82–98 (`mt19937_gen`), `mt19937.h` lines 27–50 (tempering, `next64` = high
 * word first); `numpy/random/_mt19937.pyx` lines 178–183 (an int seed must be 0..2^32−1);
 * `numpy/random/src/distributions/distributions.c` lines 1085–1110 (`random_interval`);
 * `numpy/random/mtrand.pyx` lines 4685–4692 (`RandomState._shuffle_raw`: i from n−1 down to 1,
 * j = `random_interval(i)`, swap) and `numpy/random/_generator.pyx` lines 75–105 and 4875–4881
 * (`Generator.shuffle` on a 1-D array calls `_shuffle_raw_wrap(..., first=1)`, the same
 * masked-rejection loop — not the Lemire method `Generator.integers` uses);
 * `numpy/random/bit_generator.pyx` lines 57–63 and 158–169 (hash constants, `hashmix`, `mix`),
 * 66–78 (int → uint32 words, lowest first), 351–384 (`mix_entropy`), 437–460 (`generate_state`);
 * `numpy/random/_pcg64.pyx` lines 132–136 (state = words 0–1, increment = words 2–3 of
 * `generate_state(4, uint64)`); `numpy/random/src/pcg64/pcg64.h` lines 280–287 (step, XSL-RR),
 * 320–335 (seeding and `random_r`: step, then output), 386–396 (`pcg64_next32`); llm.c
 * `llmc/rand.h` lines 106–146 (`manual_seed`, `randint32`) and 223–238 (`random_permutation`).
 */

/** Anything that gives uniformly random 32-bit words (as unsigned numbers 0..2^32−1). */
export interface Uint32Source {
  nextUint32(): number;
  /** A 64-bit word as [high 32 bits, low 32 bits], drawn as the generator's `next_uint64` does. */
  nextUint64(): [number, number];
}

const MT_N = 624;
const MT_M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER = 0x80000000;
const LOWER = 0x7fffffff;

/**
 * MT19937 seeded with a 32-bit integer: numpy's `RandomState(seed)` / `MT19937._legacy_seeding`
 * and llm.c's `manual_seed` (identical recurrences), drawing tempered 32-bit words.
 */
export class Mt19937 implements Uint32Source {
  private readonly key = new Uint32Array(MT_N);
  private pos = MT_N;

  /**
   * @param seed an integer 0..2^32−1 (numpy refuses others: "Seed must be between 0 and 2**32 - 1").
   * @throws RangeError for any other seed.
   */
  constructor(seed: number) {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`seed ${seed} is not an integer 0..2^32-1`);
    let s = seed >>> 0;
    for (let pos = 0; pos < MT_N; pos++) {
      this.key[pos] = s;
      s = (Math.imul(1812433253, (s ^ (s >>> 30)) >>> 0) + pos + 1) >>> 0;
    }
  }

  private generate(): void {
    const k = this.key;
    let i = 0;
    let y: number;
    for (; i < MT_N - MT_M; i++) {
      y = (k[i] & UPPER) | (k[i + 1] & LOWER);
      k[i] = k[i + MT_M] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    for (; i < MT_N - 1; i++) {
      y = (k[i] & UPPER) | (k[i + 1] & LOWER);
      k[i] = k[i + (MT_M - MT_N)] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    y = (k[MT_N - 1] & UPPER) | (k[0] & LOWER);
    k[MT_N - 1] = k[MT_M - 1] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    this.pos = 0;
  }

  /** The next tempered 32-bit word (numpy `mt19937_next32`, llm.c `randint32`). */
  nextUint32(): number {
    if (this.pos === MT_N) this.generate();
    let y = this.key[this.pos++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** numpy `mt19937_next64`: the first word drawn is the high half. */
  nextUint64(): [number, number] {
    const hi = this.nextUint32();
    return [hi, this.nextUint32()];
  }
}

/**
 * numpy's `random_interval(bitgen, max)`: a uniform integer in `[0, max]` by masked rejection —
 * the smallest all-ones mask ≥ max, drawing 32-bit words while `max ≤ 2^32−1`, else 64-bit words.
 * @param max an integer 0..2^53−1.
 */
export function randomInterval(rng: Uint32Source, max: number): number {
  if (max === 0) return 0;
  if (max <= 0xffffffff) {
    let mask = max >>> 0;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    let v: number;
    do v = (rng.nextUint32() & mask) >>> 0;
    while (v > max);
    return v;
  }
  const hiMax = Math.floor(max / 0x1_0000_0000);
  let hiMask = hiMax;
  hiMask |= hiMask >>> 1;
  hiMask |= hiMask >>> 2;
  hiMask |= hiMask >>> 4;
  hiMask |= hiMask >>> 8;
  hiMask |= hiMask >>> 16;
  for (;;) {
    const [hi, lo] = rng.nextUint64();
    const v = ((hi & hiMask) >>> 0) * 0x1_0000_0000 + lo;
    if (v <= max) return v;
  }
}

/** A typed array of integers a shuffle permutes in place. */
export type IntArray = Uint32Array | Int32Array | Float64Array;

/**
 * numpy's Fisher–Yates shuffle of a 1-D array in place, as `RandomState.shuffle` and
 * `Generator.shuffle` run it: for i from n−1 down to 1, j = {@link randomInterval}(i), swap a[i]
 * and a[j]. The element type does not change the draws.
 */
export function numpyShuffle(rng: Uint32Source, a: IntArray): void {
  for (let i = a.length - 1; i >= 1; i--) {
    const j = randomInterval(rng, i);
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

/** numpy `RandomState(seed)`: legacy MT19937 seeding. @throws RangeError for a seed outside 0..2^32−1. */
export function randomState(seed: number): Mt19937 {
  return new Mt19937(seed);
}

const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const POOL_SIZE = 4;

/** numpy `_int_to_uint32_array`: a non-negative integer as 32-bit words, lowest first ([0] for 0). */
function intWords(n: bigint): number[] {
  if (n < 0n) throw new RangeError('expected a non-negative integer seed');
  if (n === 0n) return [0];
  const out: number[] = [];
  while (n > 0n) {
    out.push(Number(n & 0xffffffffn));
    n >>= 32n;
  }
  return out;
}

/**
 * numpy's `SeedSequence(entropy)` for an int entropy without spawn key (pool size 4):
 * `generateState(n)` gives what `generate_state(n, np.uint32)` does.
 */
export class SeedSequence {
  readonly pool = new Uint32Array(POOL_SIZE);

  /** @param entropy a non-negative integer (number or bigint). @throws RangeError for a negative one. */
  constructor(entropy: number | bigint) {
    const words = intWords(BigInt(entropy));
    let hashConst = INIT_A;
    const hashmix = (value: number): number => {
      value = (value ^ hashConst) >>> 0;
      hashConst = Math.imul(hashConst, MULT_A) >>> 0;
      value = Math.imul(value, hashConst) >>> 0;
      return (value ^ (value >>> 16)) >>> 0;
    };
    const mix = (x: number, y: number): number => {
      const r = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
      return (r ^ (r >>> 16)) >>> 0;
    };
    const m = this.pool;
    for (let i = 0; i < POOL_SIZE; i++) m[i] = hashmix(i < words.length ? words[i] : 0);
    for (let src = 0; src < POOL_SIZE; src++) {
      for (let dst = 0; dst < POOL_SIZE; dst++) if (src !== dst) m[dst] = mix(m[dst], hashmix(m[src]));
    }
    for (let src = POOL_SIZE; src < words.length; src++) {
      for (let dst = 0; dst < POOL_SIZE; dst++) m[dst] = mix(m[dst], hashmix(words[src]));
    }
  }

  /** `generate_state(n, np.uint32)`: n 32-bit words. (`uint64` words are pairs, low word first.) */
  generateState(n: number): Uint32Array {
    const out = new Uint32Array(n);
    let hashConst = INIT_B;
    for (let i = 0; i < n; i++) {
      let v = (this.pool[i % POOL_SIZE] ^ hashConst) >>> 0;
      hashConst = Math.imul(hashConst, MULT_B) >>> 0;
      v = Math.imul(v, hashConst) >>> 0;
      out[i] = (v ^ (v >>> 16)) >>> 0;
    }
    return out;
  }
}

/** PCG64's default 128-bit multiplier 2549297995355413924 · 2^64 + 4865540595714422341, as 16-bit limbs, lowest first. */
const PCG_MULT = limbs16(2549297995355413924n, 4865540595714422341n);

function limbs16(hi: bigint, lo: bigint): Uint32Array {
  const v = (hi << 64n) | lo;
  const out = new Uint32Array(8);
  for (let i = 0; i < 8; i++) out[i] = Number((v >> BigInt(16 * i)) & 0xffffn);
  return out;
}

/**
 * numpy's PCG64 bit generator (`PCG64(seed)`: seeded through {@link SeedSequence}), 128-bit state
 * held as eight 16-bit limbs so every partial product stays exact in a double.
 */
export class Pcg64 implements Uint32Source {
  private readonly state = new Uint32Array(8);
  private readonly inc = new Uint32Array(8);
  private readonly tmp = new Float64Array(8);
  private hasUint32 = false;
  private uinteger = 0;

  /** @param seed a non-negative integer (number or bigint), as `np.random.PCG64(seed)` takes. */
  constructor(seed: number | bigint) {
    const w = new SeedSequence(seed).generateState(8);
    // generate_state(4, uint64): words (w0 | w1<<32), (w2 | w3<<32), …; seed = [0]<<64 | [1], inc = [2]<<64 | [3].
    const u64 = (i: number): bigint => (BigInt(w[2 * i + 1]) << 32n) | BigInt(w[2 * i]);
    const initState = (u64(0) << 64n) | u64(1);
    const initSeq = (u64(2) << 64n) | u64(3);
    const incV = ((initSeq << 1n) | 1n) & ((1n << 128n) - 1n);
    for (let i = 0; i < 8; i++) this.inc[i] = Number((incV >> BigInt(16 * i)) & 0xffffn);
    // pcg_setseq_128_srandom_r: state = 0; step; state += initstate; step.
    this.step();
    const add = new Uint32Array(8);
    for (let i = 0; i < 8; i++) add[i] = Number((initState >> BigInt(16 * i)) & 0xffffn);
    let carry = 0;
    for (let i = 0; i < 8; i++) {
      const s = this.state[i] + add[i] + carry;
      this.state[i] = s & 0xffff;
      carry = s >>> 16;
    }
    this.step();
  }

  /** state = state · multiplier + inc (mod 2^128). */
  private step(): void {
    const s = this.state,
      m = PCG_MULT,
      acc = this.tmp;
    for (let i = 0; i < 8; i++) acc[i] = this.inc[i];
    for (let i = 0; i < 8; i++) {
      const si = s[i];
      if (si === 0) continue;
      for (let j = 0; i + j < 8; j++) acc[i + j] += si * m[j];
    }
    let carry = 0;
    for (let i = 0; i < 8; i++) {
      const v = acc[i] + carry;
      const low = v % 0x10000;
      s[i] = low;
      carry = (v - low) / 0x10000;
    }
  }

  /** `pcg64_next64`: step, then XSL-RR of the new state. */
  nextUint64(): [number, number] {
    this.step();
    const s = this.state;
    const hiHi = (s[7] << 16) | s[6],
      hiLo = (s[5] << 16) | s[4],
      loHi = (s[3] << 16) | s[2],
      loLo = (s[1] << 16) | s[0];
    let xh = (hiHi ^ loHi) >>> 0,
      xl = (hiLo ^ loLo) >>> 0;
    const rot = s[7] >>> 10; // state >> 122
    if (rot >= 32) {
      const t = xh;
      xh = xl;
      xl = t;
    }
    const r = rot & 31;
    if (r !== 0) {
      const nh = ((xh >>> r) | (xl << (32 - r))) >>> 0;
      const nl = ((xl >>> r) | (xh << (32 - r))) >>> 0;
      xh = nh;
      xl = nl;
    }
    return [xh, xl];
  }

  /** `pcg64_next32`: the low half of a fresh 64-bit output, then its buffered high half. */
  nextUint32(): number {
    if (this.hasUint32) {
      this.hasUint32 = false;
      return this.uinteger;
    }
    const [hi, lo] = this.nextUint64();
    this.hasUint32 = true;
    this.uinteger = hi;
    return lo;
  }
}

/**
 * llm.c's `random_permutation(data, numel, state)`: for i from n−1 down to 1,
 * j = `randint32(state) % (i + 1)`, swap.
 */
export function llmcRandomPermutation(rng: Mt19937, a: IntArray): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.nextUint32() % (i + 1);
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}
