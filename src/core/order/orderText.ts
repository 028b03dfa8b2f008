/**
 * Words for a training order and its reads, shared by the host (status bar, update view, CLI) and
 * the shard editor's webview (its cursor line): pure functions, no `vscode`, no Node modules.
 * Units: global token offsets; updates, samples, slots and positions 0-based.
 */
import { fmt } from '../units';
import type { OrderRead } from './order';
import type { OrderFacts } from '../workers/orderWorker';

/** The fields of a read these texts use (a read as the shard editor's protocol carries it). */
export type ReadWords = Pick<OrderRead, 'update' | 'slot' | 'sample' | 'position' | 'target'>;

/** Display names of the orders. */
const ORDER_NAMES: Record<OrderFacts['kind'], string> = {
  sequential: "the dataset card's sequential order",
  megatron: 'Megatron order',
  olmo: 'OLMo order',
  'llm.c': 'llm.c order',
};

/**
 * A short name of the order in force, for the status bar and the update view's header:
 * `Megatron order, B=512 samples of 2,049 tokens`, or the card's sequential order.
 */
export function orderName(o: OrderFacts): string {
  if (o.kind === 'sequential') return ORDER_NAMES.sequential;
  return `${ORDER_NAMES[o.kind]}, B=${fmt(o.samplesPerUpdate)} samples of ${fmt(o.sampleTokens)} tokens`;
}

/**
 * Where a run read a stream token, in words: `update 3, sample 17 (slot 5), position 100`
 * (0-based; a read that is only a target says so), or that the run never read it.
 * @param max how many reads to spell out; the rest are counted as "+N more".
 */
export function describeReads(reads: readonly ReadWords[], max = 1): string {
  if (reads.length === 0) return 'not read by the run (a dropped tail or an epoch not trained)';
  const one = (r: ReadWords) =>
    `update ${fmt(r.update)}, sample ${fmt(r.sample)} (slot ${fmt(r.slot)}), ${r.target ? 'target only of the last position' : `position ${fmt(r.position)}`}`;
  const shown = reads.slice(0, max).map(one).join('; ');
  return reads.length > max ? `${shown}; +${fmt(reads.length - max)} more` : shown;
}

/**
 * The shard editor's cursor-line words for the run's reads of the cursor's token (the status
 * bar's words, src/editor/statusBar.ts, plus the position): `update 3 · sample 17 · pos 100`
 * for the first read (`target` when the token is only that sample's last target), then
 * `+2 reads` when the run read it more often; `not read by the run` when never.
 */
export function readsLine(reads: readonly ReadWords[]): string {
  if (reads.length === 0) return 'not read by the run';
  const r = reads[0];
  const parts = [`update ${fmt(r.update)}`, `sample ${fmt(r.sample)}`, r.target ? 'target' : `pos ${fmt(r.position)}`];
  if (reads.length > 1) parts.push(`+${fmt(reads.length - 1)} reads`);
  return parts.join(' · ');
}
