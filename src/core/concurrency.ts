/**
 * Bounded concurrency for work over many files (100,000 manifest lines): at most `limit`
 * operations in flight, so memory stays flat (an unbounded `Promise.all` over 100,000 `stat`s
 * queues 100,000 requests at once: ~600 MB and slower, measured).
 */

/** Default number of file operations in flight. */
export const FILE_OPS_IN_FLIGHT = 64;

/**
 * `Promise.all(items.map(fn))` with at most `limit` calls of `fn` running at a time; results in
 * item order. Rejects with the first rejection (the others still settle).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  fn: (item: T, index: number) => Promise<R>,
  limit: number = FILE_OPS_IN_FLIGHT,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}
