/**
 * The ported generators against the real thing: numpy (`RandomState(seed).shuffle`,
 * `Generator(PCG64(seed)).shuffle`, `SeedSequence.generate_state`, `PCG64.random_raw`) run in
 * python3, and llm.c's `rand.h` through `scripts/reference/llmc_rand.py` (a Python port written
 * from the C and checked against the compiled header). Value for value, over many seeds and sizes.
 */
import * as assert from 'assert';
import * as crypto from 'crypto';
import { execFileSync } from 'child_process';
import * as path from 'path';
import { Mt19937, Pcg64, SeedSequence, llmcRandomPermutation, numpyShuffle, randomState } from '../../src/core/order/rng';
import { repoRoot } from './fixtures';

function py(body: string): unknown {
  const script = `import json, sys, hashlib, numpy as np\nsys.path.insert(0, ${JSON.stringify(path.join(repoRoot(), 'scripts', 'reference'))})\n${body}`;
  return JSON.parse(execFileSync('python3', ['-c', script], { encoding: 'utf8', maxBuffer: 1 << 28 }));
}

function sha(a: Uint32Array): string {
  return crypto
    .createHash('sha256')
    .update(Buffer.from(a.buffer, a.byteOffset, a.byteLength))
    .digest('hex');
}

function arange(n: number): Uint32Array {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}

const SEEDS = [0, 1, 2, 3, 42, 1234, 65535, 2 ** 31 - 1, 2 ** 32 - 1];
const SIZES = [1, 2, 3, 10, 257, 65_537, 300_001];

describe('order RNGs', function () {
  this.timeout(600_000);

  it('RandomState(seed).shuffle equals numpy for every seed and size (uint32 and int32 arrays)', () => {
    const ref = py(`
out = {}
for seed in ${JSON.stringify(SEEDS)}:
    for n in ${JSON.stringify(SIZES)}:
        a = np.arange(n, dtype=np.uint32); rs = np.random.RandomState(seed); rs.shuffle(a)
        b = np.arange(n, dtype=np.int32); rs.shuffle(b)
        out[f"{seed}/{n}"] = [hashlib.sha256(a.astype('<u4').tobytes()).hexdigest(), hashlib.sha256(b.astype('<u4').tobytes()).hexdigest()]
print(json.dumps(out))`) as Record<string, [string, string]>;
    for (const seed of SEEDS) {
      for (const n of SIZES) {
        const rs = randomState(seed);
        const a = arange(n);
        numpyShuffle(rs, a);
        const b = new Int32Array(n).map((_, i) => i);
        numpyShuffle(rs, b);
        const [ha, hb] = ref[`${seed}/${n}`];
        assert.strictEqual(sha(a), ha, `seed ${seed}, n ${n}`);
        assert.strictEqual(sha(new Uint32Array(b.buffer)), hb, `second shuffle, seed ${seed}, n ${n}`);
      }
    }
  });

  it('the first 2,000 MT19937 words equal numpy RandomState.randint(0, 2**32) draws', () => {
    for (const seed of [0, 5489, 2 ** 32 - 1]) {
      const ref = py(
        `print(json.dumps(np.random.RandomState(${seed}).randint(0, 2**32, size=2000, dtype=np.uint64).tolist()))`,
      ) as number[];
      const mt = new Mt19937(seed);
      assert.deepStrictEqual(
        ref.map(() => mt.nextUint32()),
        ref,
      );
    }
  });

  it('SeedSequence(seed).generate_state equals numpy, small and multi-word seeds', () => {
    const seeds = ['0', '1', '42', '4294967295', '4294967296', '123456789012345678901234567890'];
    const ref = py(
      `print(json.dumps({s: np.random.SeedSequence(int(s)).generate_state(8).tolist() for s in ${JSON.stringify(seeds)}}))`,
    ) as Record<string, number[]>;
    for (const s of seeds) assert.deepStrictEqual(Array.from(new SeedSequence(BigInt(s)).generateState(8)), ref[s], `seed ${s}`);
  });

  it('PCG64(seed) raw 64-bit outputs equal numpy random_raw', () => {
    for (const seed of [0, 7, 2 ** 40 + 3]) {
      const ref = py(`print(json.dumps([str(v) for v in np.random.PCG64(${seed}).random_raw(1000).tolist()]))`) as string[];
      const g = new Pcg64(seed);
      const got = ref.map(() => {
        const [hi, lo] = g.nextUint64();
        return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
      });
      assert.deepStrictEqual(got, ref, `seed ${seed}`);
    }
  });

  it('Generator(PCG64(seed)).shuffle equals numpy for every seed and size (OLMo seed + epoch)', () => {
    const seeds = [0, 1, 6198, 6199, 2 ** 31 - 1];
    const ref = py(`
out = {}
for seed in ${JSON.stringify(seeds)}:
    for n in ${JSON.stringify(SIZES)}:
        a = np.arange(n, dtype=np.uint32); np.random.Generator(np.random.PCG64(seed)).shuffle(a)
        out[f"{seed}/{n}"] = hashlib.sha256(a.astype('<u4').tobytes()).hexdigest()
print(json.dumps(out))`) as Record<string, string>;
    for (const seed of seeds) {
      for (const n of SIZES) {
        const a = arange(n);
        numpyShuffle(new Pcg64(seed), a);
        assert.strictEqual(sha(a), ref[`${seed}/${n}`], `seed ${seed}, n ${n}`);
      }
    }
  });

  it("llm.c random_permutation equals the Python port of rand.h, repeated on one state (the loader's use)", () => {
    const ref = py(`
from llmc_rand import LlmcRng, random_permutation
out = {}
for seed in [42, 43, 50]:
    r = LlmcRng(seed); res = []
    for n in [1, 2, 5, 97, 5000]:
        a = list(range(n)); random_permutation(a, r); res.append(a)
    out[seed] = res
print(json.dumps(out))`) as Record<string, number[][]>;
    for (const seed of [42, 43, 50]) {
      const rng = new Mt19937(seed);
      const got = [1, 2, 5, 97, 5000].map((n) => {
        const a = arange(n);
        llmcRandomPermutation(rng, a);
        return Array.from(a);
      });
      assert.deepStrictEqual(got, ref[String(seed)], `seed ${seed}`);
    }
  });

  it('refuses seeds numpy refuses', () => {
    assert.throws(() => randomState(-1), /seed -1/);
    assert.throws(() => randomState(2 ** 32), /seed 4294967296/);
  });
});
