/**
 * Axis arithmetic of the shared chart (webview/shared/chart.ts), without the DOM: how far apart
 * x-axis ticks must be for their labels not to run together, and the y range of counts and rates.
 */

/** Empty space between two neighbouring x tick labels, in CSS pixels. */
export const X_LABEL_GAP_PX = 16;

/**
 * The minimum distance between x ticks (CSS pixels, uPlot's axis `space`) for labels of values in
 * `[min, max]`: the widest label among the range's ends (the longest numbers: six-digit updates
 * give `100,000`) plus {@link X_LABEL_GAP_PX}, and never under 50 (uPlot's default).
 * @param width measures a label in CSS pixels (canvas `measureText` in the page).
 */
export function xTickSpace(min: number, max: number, format: (v: number) => string, width: (label: string) => number): number {
  const widest = Math.max(0, ...[min, max].filter(Number.isFinite).map((v) => width(format(v))));
  return Math.max(50, Math.ceil(widest + X_LABEL_GAP_PX));
}

/**
 * The y range of counts and rates: from 0 (a bar's height is its value; never a zoomed-in axis
 * that makes a flat curve look steep) to a little above the largest value; [0, 1] when every
 * value is 0 or there is none.
 */
export function zeroBasedRange(dataMax: number | null | undefined): [number, number] {
  const top = typeof dataMax === 'number' && Number.isFinite(dataMax) && dataMax > 0 ? dataMax * 1.05 : 1;
  return [0, top];
}
