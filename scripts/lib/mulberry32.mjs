/**
 * mulberry32: a tiny deterministic 32-bit PRNG, shared by the scripts that make test data and
 * benchmarks so that every run draws the same values from the same seed.
 * @param {number} seed any 32-bit integer
 * @returns {() => number} uniform floats in [0, 1)
 */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
