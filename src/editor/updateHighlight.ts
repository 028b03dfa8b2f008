/**
 * The update highlight of a shard editor: the token range `[G·k, G·(k+1))` of the update the
 * cursor is in (update k 0-based) and the starts of its sequences (every L tokens). Switched on
 * and off by `tokenShards.highlightUpdate` (src/commands/highlightUpdate.ts); while on, the shard
 * editor recomputes it as the cursor moves to other updates. Needs a dataset (global offsets); a
 * lone shard says so.
 */
import * as vscode from 'vscode';
import { PAST_LAST_UPDATE_TEXT, describeUpdate } from '../core/schedule';
import { count } from '../core/units';
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
 * Recomputes the update highlight of a session for its cursor. With `toggle`, switches it on or
 * off first. Returns the update highlighted, or undefined (off, lone shard, a token past the last update).
 */
export function updateHighlights(s: HighlightableSession, toggle: boolean): number | undefined {
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
