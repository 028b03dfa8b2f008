/**
 * Shares of terms within a bucket: how much of all listed terms' occurrences each term has
 * (the measure of name collapse: which names dominate, and when). Computed from counts only,
 * never stored on their own, so merged parts get the shares of their summed counts.
 */

/**
 * Each term's share of the bucket's occurrences of all terms: `counts[t] / Σ counts`, so the
 * shares sum to 1 (up to float rounding) where any term occurred.
 * @param counts occurrences per term (whole numbers ≥ 0).
 * @returns one share per term in `[0, 1]`, or all `null` when no term occurred (no share is defined).
 */
export function bucketShares(counts: readonly number[]): (number | null)[] {
  let sum = 0;
  for (const c of counts) sum += c;
  return sum === 0 ? counts.map(() => null) : counts.map((c) => c / sum);
}

/**
 * The `n` terms with the most occurrences, most first; ties in term order; terms with no
 * occurrence are left out.
 * @returns term indices (at most `n`).
 */
export function topTerms(counts: readonly number[], n: number): number[] {
  return counts
    .map((c, t) => t)
    .filter((t) => counts[t] > 0)
    .sort((a, b) => counts[b] - counts[a] || a - b)
    .slice(0, n);
}
