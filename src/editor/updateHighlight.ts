/**
 * The update highlight of a shard editor: the token range `[G·k, G·(k+1))` of the update the
 * cursor is in (update k 0-based) and the starts of its sequences (every L tokens). Switched on
 * and off by `tokenShards.highlightUpdate` (src/commands/highlightUpdate.ts); while on, the shard
 * editor recomputes it as the cursor moves to other updates. Needs a dataset (global offsets); a
 * lone shard says so.
 *
 * With a run's training order in force (`run.json`: Megatron, OLMo, llm.c), "the update the
 * cursor is in" is the first update that read the cursor's token (`TrainingOrder.reads`, the
 * status bar's and the cursor line's update), and its highlight is every stream range its samples
 * were assembled from (`TrainingOrder.update`), each range labelled with its sample.
 */
import * as vscode from 'vscode';
import { PAST_LAST_UPDATE_TEXT, describeUpdate } from '../core/schedule';
import type { OrderSample } from '../core/order/order';
import type { OrderView } from '../core/order/orderClient';
import { count, fmt } from '../core/units';
import type { ShardHighlight } from '../protocol/shard';
import type { ShardDocument } from './shardDocument';

/** What the update highlight needs of a shard editor session (a `ShardSession` is one). */
export interface HighlightableSession {
  readonly document: ShardDocument;
  /** Local offset of the cursor. */
  readonly cursor: number;
  /** Update highlighted now (follows the cursor), or undefined when off. */
  highlightedUpdate?: number;
  setHighlights(highlights: ShardHighlight[]): void;
  /**
   * The run's training order when a run description names one other than the card's sequential
   * order, else undefined.
   * @throws DataError with the run description's one-line message when it cannot be used.
   */
  runOrderView(): Promise<OrderView | undefined>;
}

/**
 * The highlight of update `k` in a shard: its range clipped to the shard (local offsets) and
 * the sequence starts inside it. Undefined when the update does not touch the shard.
 * @param base global offset of the shard's first token; `numTokens` its length.
 */
export function updateHighlight(k: number, G: number, L: number, base: number, numTokens: number): ShardHighlight | undefined {
  const a = G * k,
    b = G * (k + 1);
  const start = Math.max(0, a - base),
    end = Math.min(numTokens, b - base);
  if (end <= start) return undefined;
  const firstIndex = Math.max(0, Math.ceil((base - a) / L));
  return {
    start,
    end,
    label: `${describeUpdate(k)} · ${count(G / L, 'sequence')} × ${count(L, 'token')}`,
    boundaries: { first: a + firstIndex * L - base, every: L, firstIndex, labelPrefix: 'sequence ' },
  };
}

/**
 * The highlight of update `k` of a run's order in a shard: one highlight per stream range of each
 * of its samples that lies in the shard (clipped; local offsets), labelled with the sample; a bar
 * marks the first token of a sample. `cursorSlot` (the batch slot of the sample that read the
 * cursor's token) is named in its label.
 * @param base global offset of the shard's first token; `numTokens` its length.
 */
export function orderUpdateHighlights(
  k: number,
  samples: readonly OrderSample[],
  base: number,
  numTokens: number,
  cursorSlot?: number,
): ShardHighlight[] {
  const out: ShardHighlight[] = [];
  for (const smp of samples) {
    const label = `update ${fmt(k)} · sample ${fmt(smp.sample)} (slot ${fmt(smp.slot)} of ${fmt(samples.length)})${smp.slot === cursorSlot ? ' · at the cursor' : ''}`;
    smp.pieces.forEach((p, i) => {
      const start = Math.max(0, p.start - base),
        end = Math.min(numTokens, p.end - base);
      if (end <= start) return;
      // Only the sample's first range starts it: a later range continues it across a document.
      const first = i === 0 && p.start - base >= 0 ? start : end;
      out.push({ start, end, label, boundaries: { first, every: numTokens + 1, firstIndex: smp.sample, labelPrefix: 'sample ' } });
    });
  }
  return out.sort((a, b) => a.start - b.start);
}

/**
 * Recomputes the update highlight of a session for its cursor. With `toggle`, switches it on or
 * off first. Resolves with the update highlighted, or undefined (off, lone shard, a token past the
 * last update or never read by the run).
 */
export async function updateHighlights(s: HighlightableSession, toggle: boolean): Promise<number | undefined> {
  const st = s.document.state;
  const ds = st.entry ? st.dataset : undefined;
  if (toggle && s.highlightedUpdate !== undefined) {
    s.highlightedUpdate = undefined;
    s.setHighlights([]);
    return undefined;
  }
  if (!toggle && s.highlightedUpdate === undefined) return undefined;
  if (!ds || st.globalStart === undefined) {
    if (toggle)
      void vscode.window.showInformationMessage(
        vscode.l10n.t('Updates need global offsets: this shard is not listed in a shard_manifest.jsonl.'),
      );
    return undefined;
  }
  const at = s.cursor;
  let order: OrderView | undefined;
  try {
    order = await s.runOrderView();
  } catch (err) {
    if (toggle) void vscode.window.showErrorMessage((err as Error).message);
    return undefined;
  }
  if (order) return orderHighlights(s, order, st.globalStart, st.numTokens, at, toggle);
  if (s.cursor !== at) return s.highlightedUpdate; // moved on meanwhile: its own call answers
  const pos = ds.schedule.position(st.globalStart + s.cursor);
  if (pos.update === undefined) {
    if (toggle)
      void vscode.window.showInformationMessage(
        vscode.l10n.t(
          'The cursor is past the last whole update, on a token no update holds: {0} (updates are 0-based, 0..{1}).',
          PAST_LAST_UPDATE_TEXT[ds.schedule.pastLastUpdate(st.globalStart + s.cursor)!],
          ds.schedule.numUpdates - 1,
        ),
      );
    return undefined;
  }
  if (!toggle && pos.update === s.highlightedUpdate) return pos.update;
  const hl = updateHighlight(pos.update, ds.schedule.G, ds.schedule.L, st.globalStart, st.numTokens);
  s.highlightedUpdate = pos.update;
  s.setHighlights(hl ? [hl] : []);
  return pos.update;
}

/** {@link updateHighlights} through a run's order, for the cursor at local offset `at`. */
async function orderHighlights(
  s: HighlightableSession,
  order: OrderView,
  base: number,
  numTokens: number,
  at: number,
  toggle: boolean,
): Promise<number | undefined> {
  const [reads] = await order.reads([base + at]);
  if (s.cursor !== at) return s.highlightedUpdate; // moved on meanwhile: its own call answers
  if (reads.length === 0) {
    if (toggle)
      void vscode.window.showInformationMessage(
        vscode.l10n.t('The run never reads the token at the cursor (global offset {0}): no update to highlight.', fmt(base + at)),
      );
    return undefined;
  }
  const k = reads[0].update;
  if (!toggle && k === s.highlightedUpdate) return k;
  const samples = await order.update(k);
  if (s.cursor !== at || (!toggle && s.highlightedUpdate === undefined)) return s.highlightedUpdate;
  s.highlightedUpdate = k;
  s.setHighlights(orderUpdateHighlights(k, samples, base, numTokens, reads[0].slot));
  return k;
}
