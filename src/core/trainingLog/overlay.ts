/**
 * The training-log overlay: one per-update statistic drawn on a second axis beside the loss, for
 * updates spread over the log's steps. Step s of the log is update `stepToUpdate(s, convention)`;
 * with a run's training order in force (Megatron, OLMo, llm.c: `run.json` or the setting
 * `tokenShards.run`) update k is the run's step k, so the statistic is that of the samples the
 * trainer fed at step k (`statsOfUpdates` through the order, definitions in `stats.ts`), and the
 * updates are clipped to the run's updates, not the stream's.
 *
 * Units: steps as logged; updates 0-based.
 */
import type { Dataset } from '../dataset';
import { RunStatsOptions, StatColumn, StatsDataset, StatsOrder, isRunOrder, statValue, statsOfUpdates } from '../stats';
import { StepConvention, stepToUpdate } from './parse';

/**
 * The updates the overlay computes: at most `max`, spread evenly (rounded, duplicates dropped) over
 * the updates of the log's first and last steps, clipped to `0..numUpdates−1`.
 * @param steps the log's steps, ascending. @param numUpdates the run's updates (its order's, else the stream's).
 * @returns the updates ascending; empty when the log's steps do not overlap the updates.
 */
export function overlayUpdates(steps: ArrayLike<number>, conv: StepConvention, numUpdates: number, max: number): number[] {
  if (steps.length === 0 || numUpdates <= 0 || max <= 0) return [];
  const lo = Math.max(0, stepToUpdate(steps[0], conv));
  const hi = Math.min(numUpdates - 1, stepToUpdate(steps[steps.length - 1], conv));
  if (hi < lo) return [];
  const count = Math.min(max, hi - lo + 1);
  return [...new Set(Array.from({ length: count }, (_, i) => lo + Math.round((i * (hi - lo)) / Math.max(1, count - 1))))];
}

/** How many updates a run has: its order's steps when `order` is a run's order, else the stream's updates. */
export function runUpdates(ds: Pick<Dataset, 'schedule'>, order: StatsOrder | undefined): number {
  return isRunOrder(order) ? order.numUpdates : ds.schedule.numUpdates;
}

/**
 * The value of statistic `column` for each of `updates` (same order), through `order` when it is a
 * run's order, else in the card's sequential order. Yields between updates.
 * @throws RangeRequestError for an update outside the run; DataError on a short read; CancelledError on `signal`.
 */
export async function overlayValues(
  ds: StatsDataset,
  updates: readonly number[],
  column: StatColumn,
  opts: Pick<RunStatsOptions, 'order' | 'tokenizer' | 'signal'> = {},
): Promise<(number | null)[]> {
  const records = await statsOfUpdates(ds, updates, opts);
  return records.map((s) => statValue(s, column));
}
