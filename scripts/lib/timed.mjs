/**
 * Wall and CPU time of an async call, for the benchmarks (scripts/bench/).
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<{ s: number, cpu: number, user: number, sys: number, r: T }>} wall time `s`
 *   and CPU time `cpu` (user + system of every thread of this process, worker threads included;
 *   `user` and `sys` its two parts), in seconds, and the result.
 */
export async function timed(fn) {
  const t = process.hrtime.bigint();
  const c = process.cpuUsage();
  const r = await fn();
  const d = process.cpuUsage(c);
  return { s: Number(process.hrtime.bigint() - t) / 1e9, cpu: (d.user + d.system) / 1e6, user: d.user / 1e6, sys: d.system / 1e6, r };
}
