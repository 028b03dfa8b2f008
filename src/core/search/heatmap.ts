/**
 * The numbers behind the search panel's heatmap (terms × buckets): which value each cell shows
 * and the order of the terms. Pure; the panel (webview/shared/heatmap.ts) only draws them.
 */
import { bucketShares } from './share';
import type { CountResult } from './types';

/** Row order: most occurrences over all buckets first, or earliest peak bucket first. */
export type HeatmapOrder = 'total' | 'peak';

/** The heatmap of one result. */
export interface HeatmapModel {
  /** Term indices (into `CountResult.terms`) from the top row down. */
  rows: number[];
  /** Buckets (columns), left to right. */
  buckets: number;
  /** `values[t * buckets + b]`: the share of term t (term index, not row) in bucket b; NaN = no value (no term occurred there). */
  values: Float64Array;
  /** Largest value (0 when every cell is 0 or NaN): the colour scale's top. */
  max: number;
  /** Per term index: the bucket where its value peaks (first of equal peaks), or -1 when it never occurs. */
  peak: number[];
}

/**
 * Builds the heatmap of `r`: each cell is the term's share of the bucket's occurrences of all
 * terms (`bucketShares`; NaN where no term occurred), so a bucket's column sums to 1.
 * - `total` order: by `totals` descending; `peak` order: by peak bucket ascending (terms that never
 *   occur last), then by total descending; ties in term order.
 */
export function heatmapModel(r: CountResult, order: HeatmapOrder): HeatmapModel {
  const nt = r.terms.length,
    nb = r.buckets.length;
  const values = new Float64Array(nt * nb).fill(NaN);
  let max = 0;
  r.buckets.forEach((b, bi) => {
    const shares = bucketShares(b.counts);
    for (let t = 0; t < nt; t++) {
      const v = shares[t] ?? NaN;
      values[t * nb + bi] = v;
      if (v > max) max = v;
    }
  });
  const peak = r.terms.map((_, t) => {
    let best = -1,
      bv = 0;
    for (let bi = 0; bi < nb; bi++) {
      const v = values[t * nb + bi];
      if (v > bv) {
        bv = v;
        best = bi;
      }
    }
    return best;
  });
  const rows = r.terms.map((_, t) => t);
  const byTotal = (a: number, b: number) => r.totals[b] - r.totals[a] || a - b;
  if (order === 'total') rows.sort(byTotal);
  else rows.sort((a, b) => (peak[a] < 0 ? nb : peak[a]) - (peak[b] < 0 ? nb : peak[b]) || byTotal(a, b));
  return { rows, buckets: nb, values, max, peak };
}
