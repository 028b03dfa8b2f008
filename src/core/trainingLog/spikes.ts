/**
 * Loss spikes in a parsed training log (./parse.ts) and the loss series reduced for drawing:
 * - **Spikes**: each point's robust score against its trailing window, `(loss − median) /
 *   (1.4826 · MAD)` ({@link spikeScores}); a run of consecutive points scoring ≥ the threshold
 *   is one spike, listed at its peak ({@link findSpikes}).
 * - **Bucketing** for the chart: min/max decimation into at most ~2·buckets points, every
 *   non-finite loss kept as a gap ({@link chartSeries}).
 *
 * Units: steps and updates are integers (updates 0-based, by the step convention).
 */
import { StepConvention, stepToUpdate } from './parse';

/** Spike detection parameters. */
export interface SpikeOptions {
  /** Trailing window: how many previous finite points the median and MAD use (default 50). */
  window?: number;
  /** A point is a spike when its robust score ≥ this (default 6). */
  threshold?: number;
}

/** Default {@link SpikeOptions}. */
export const SPIKE_DEFAULTS = { window: 50, threshold: 6 } as const;

/** Points scored before the window has this many points are not scored (score NaN). */
export const MIN_SPIKE_HISTORY = 10;

/**
 * Robust scores of each point against its trailing window: `(loss − median) / (1.4826 · MAD)` over
 * the previous `window` finite losses (median and MAD of those, the point itself excluded).
 * NaN for the first {@link MIN_SPIKE_HISTORY} finite points and for non-finite losses; when the
 * MAD is 0, a loss above the median scores +Infinity and one at or below it 0.
 * Threshold-independent: compute once, filter with {@link findSpikes} for any threshold.
 */
export function spikeScores(losses: Float64Array, window: number = SPIKE_DEFAULTS.window): Float64Array {
  const w = Math.max(3, Math.floor(window));
  const scores = new Float64Array(losses.length).fill(NaN);
  const ring = new Float64Array(w);
  const sorted = new Float64Array(w);
  const dev = new Float64Array(w);
  let count = 0,
    head = 0;
  for (let i = 0; i < losses.length; i++) {
    const x = losses[i];
    if (!Number.isFinite(x)) continue;
    if (count >= Math.min(w, MIN_SPIKE_HISTORY)) {
      const m = count;
      const med = medianSorted(sorted, m);
      for (let j = 0; j < m; j++) dev[j] = Math.abs(sorted[j] - med);
      const mad = quickMedian(dev, m) * 1.4826;
      scores[i] = mad > 0 ? (x - med) / mad : x > med ? Infinity : 0;
    }
    // Slide the window: remove the oldest (when full), insert x, keeping `sorted` ordered.
    if (count === w) {
      const old = ring[head];
      let p = lowerBound(sorted, count, old);
      sorted.copyWithin(p, p + 1, count);
      count--;
      ring[head] = x;
      head = (head + 1) % w;
      p = lowerBound(sorted, count, x);
      sorted.copyWithin(p + 1, p, count);
      sorted[p] = x;
      count++;
    } else {
      ring[(head + count) % w] = x;
      const p = lowerBound(sorted, count, x);
      sorted.copyWithin(p + 1, p, count);
      sorted[p] = x;
      count++;
    }
  }
  return scores;
}

function lowerBound(a: Float64Array, n: number, x: number): number {
  let lo = 0,
    hi = n;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (a[m] < x) lo = m + 1;
    else hi = m;
  }
  return lo;
}

function medianSorted(a: Float64Array, n: number): number {
  const m = n >> 1;
  return n % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}

/** Median of the first n values (reorders them). */
function quickMedian(a: Float64Array, n: number): number {
  const sel = (k: number): number => {
    let lo = 0,
      hi = n - 1;
    while (lo < hi) {
      const pivot = a[(lo + hi) >> 1];
      let i = lo,
        j = hi;
      while (i <= j) {
        while (a[i] < pivot) i++;
        while (a[j] > pivot) j--;
        if (i <= j) {
          const t = a[i];
          a[i] = a[j];
          a[j] = t;
          i++;
          j--;
        }
      }
      if (k <= j) hi = j;
      else if (k >= i) lo = i;
      else return a[k];
    }
    return a[k];
  };
  const m = n >> 1;
  if (n % 2) return sel(m);
  const hiV = sel(m);
  let loV = -Infinity;
  for (let i = 0; i < m; i++) if (a[i] > loV) loV = a[i];
  return (loV + hiV) / 2;
}

/** One detected spike: a run of consecutive points scoring ≥ the threshold, described by its peak. */
export interface Spike {
  /** `spike` (score ≥ threshold) or `non-finite` (NaN / ±Infinity loss: always listed). */
  kind: 'spike' | 'non-finite';
  /** Index of the peak point in the series. */
  index: number;
  /** Logged step of the peak. */
  step: number;
  /** 0-based update of the peak under the convention. */
  update: number;
  loss: number;
  /** The peak's robust score (NaN for non-finite). */
  score: number;
  /** `loss` as text ("NaN", "Infinity", "3.2"): survives JSON, where NaN/±Infinity become null. */
  lossText: string;
  /** `score` as text ("7.31", "+∞" when the MAD is 0, "" for non-finite). */
  scoreText: string;
  /** First and last logged step of the run. */
  firstStep: number;
  lastStep: number;
}

/**
 * Spikes for a threshold: runs of consecutive points with score ≥ `threshold` (one spike per run,
 * at its highest score; the lowest step on a tie), plus every non-finite loss as its own entry.
 * Sorted by step.
 */
export function findSpikes(
  steps: Float64Array,
  losses: Float64Array,
  scores: Float64Array,
  threshold: number,
  conv: StepConvention,
): Spike[] {
  const out: Spike[] = [];
  let runStart = -1,
    peak = -1;
  const close = (end: number) => {
    if (runStart < 0) return;
    const sc = scores[peak];
    out.push({
      kind: 'spike',
      index: peak,
      step: steps[peak],
      update: stepToUpdate(steps[peak], conv),
      loss: losses[peak],
      score: sc,
      lossText: String(losses[peak]),
      scoreText: sc === Infinity ? '+∞' : sc.toFixed(2),
      firstStep: steps[runStart],
      lastStep: steps[end],
    });
    runStart = -1;
    peak = -1;
  };
  for (let i = 0; i < steps.length; i++) {
    if (!Number.isFinite(losses[i])) {
      close(i - 1);
      out.push({
        kind: 'non-finite',
        index: i,
        step: steps[i],
        update: stepToUpdate(steps[i], conv),
        loss: losses[i],
        score: NaN,
        lossText: String(losses[i]),
        scoreText: '',
        firstStep: steps[i],
        lastStep: steps[i],
      });
      continue;
    }
    if (scores[i] >= threshold) {
      if (runStart < 0) {
        runStart = i;
        peak = i;
      } else if (scores[i] > scores[peak]) peak = i;
    } else close(i - 1);
  }
  close(steps.length - 1);
  return out;
}

/** A loss series reduced for drawing: x = update, y = loss (null for non-finite), at most ~2·buckets points. */
export interface ChartSeries {
  x: number[];
  y: (number | null)[];
}

/**
 * Min/max decimation for the chart: the points are cut into `buckets` runs of equal count; each
 * run contributes its minimum and its maximum (in step order), and every non-finite point is
 * kept (as null, a gap). Short series are returned whole.
 */
export function chartSeries(steps: Float64Array, losses: Float64Array, conv: StepConvention, buckets = 2000): ChartSeries {
  const x: number[] = [],
    y: (number | null)[] = [];
  const push = (i: number) => {
    x.push(stepToUpdate(steps[i], conv));
    y.push(Number.isFinite(losses[i]) ? losses[i] : null);
  };
  const n = steps.length;
  if (n <= 2 * buckets) {
    for (let i = 0; i < n; i++) push(i);
    return { x, y };
  }
  for (let b = 0; b < buckets; b++) {
    const lo = Math.floor((b * n) / buckets),
      hi = Math.floor(((b + 1) * n) / buckets);
    let mn = -1,
      mx = -1;
    const keep: number[] = [];
    for (let i = lo; i < hi; i++) {
      const v = losses[i];
      if (!Number.isFinite(v)) {
        keep.push(i);
        continue;
      }
      if (mn < 0 || v < losses[mn]) mn = i;
      if (mx < 0 || v > losses[mx]) mx = i;
    }
    if (mn >= 0) keep.push(mn);
    if (mx >= 0 && mx !== mn) keep.push(mx);
    keep.sort((a, b2) => a - b2).forEach(push);
  }
  return { x, y };
}
