/**
 * Token Shards: Go to Sequence… (`tokenShards.goToSequence`): sequence `r` of update `k` (both
 * 0-based; typed as "k r", "k:r", "k/r" or "k, r", or "#N" for the global sequence index
 * N = k·S + r), i.e. inputs `[G·k + L·r, G·k + L·(r+1))`. Reveals
 * its first token in the shard editor with the L inputs highlighted and the (L+1)-th token (the
 * target of the last position) marked; when the update view of that dataset shows update k, its
 * row r is focused too.
 *
 * Arguments (optional; with `update` and `sequence` no prompt):
 * `{ update: number | string, sequence: number | string, root?: string }`.
 * Resolves with `{ update, sequence, offset }` (offset = the sequence's first global token) or undefined.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { fmt } from '../core/units';
import { checkSequence, numberArg, validateSequenceInput } from '../core/navigation';
import { commandArgs, promptValidated, reportError, resolveDataset } from '../inputs';
import { NavigationDeps, currentSequence } from './focus';
import { iconSafe } from '../core/untrusted';

/** Arguments of `tokenShards.goToSequence`. */
export interface GoToSequenceArgs {
  /** 0-based update. */
  update: number | string;
  /** 0-based sequence within the update (0 ≤ r < G / L). */
  sequence: number | string;
  /** Dataset root; default: the focused shard editor's dataset, the only one, or a pick. */
  root?: string;
}

/** Runs Go to Sequence… (see the file comment). */
export async function goToSequence(
  nav: NavigationDeps,
  ...args: unknown[]
): Promise<{ update: number; sequence: number; offset: number } | undefined> {
  const { services, views } = nav;
  const { opts, uri } = commandArgs<GoToSequenceArgs>(args);
  try {
    const ds = await resolveDataset(services, vscode.l10n.t('Go to Sequence: choose a dataset'), opts.root, uri, views.focusedDataset);
    if (!ds) return undefined;
    let ref: { update: number; sequence: number } | undefined;
    if (opts.update !== undefined && opts.sequence !== undefined) {
      const k = numberArg(opts.update, 'update'),
        r = numberArg(opts.sequence, 'sequence');
      const err = k.error ?? r.error;
      const v = err ? { ok: false as const, error: err } : checkSequence({ update: k.value!, sequence: r.value! }, ds);
      if (!v.ok) {
        void vscode.window.showErrorMessage(v.error);
        return undefined;
      }
      ref = v.value;
    } else {
      // Prefill with where the user is ("k r", valid and selected so typing replaces it), else empty.
      const here = currentSequence(services, views, ds.root);
      const k = opts.update !== undefined ? numberArg(opts.update, 'update').value : here?.update;
      const r = opts.update !== undefined && k !== here?.update ? 0 : (here?.sequence ?? 0);
      const prefill = k !== undefined && validateSequenceInput(`${k} ${r}`, ds).ok ? `${k} ${r}` : undefined;
      const S = ds.schedule.sequencesPerUpdate;
      ref = await promptValidated({
        title: vscode.l10n.t('Go to Sequence (update k, sequence r; both 0-based) · {0}', iconSafe(path.basename(ds.root))),
        prompt: vscode.l10n.t(
          '"k r", "k:r", "k/r" or "k, r": update 0..{0}, sequence 0..{1}; or "#N", the global sequence index N = k·{2} + r (0..{3})',
          fmt(Math.max(0, ds.schedule.numUpdates - 1)),
          S - 1,
          S,
          fmt(Math.max(0, ds.schedule.numUpdates * S - 1)),
        ),
        placeholder: vscode.l10n.t('e.g. 55000 17, 55000:17 or #{0}', fmt(55000 * S + 17).replace(/,/g, '')),
        value: prefill,
        validate: (t) => validateSequenceInput(t, ds),
      });
      if (!ref) return undefined;
    }
    const [s, e] = ds.schedule.sequenceRange(ref.update, ref.sequence);
    views.focusRow(ds.root, ref.update, ref.sequence);
    await nav.shardEditors.reveal({
      dataset: ds,
      offset: s,
      align: 'top',
      highlight: [
        { start: s, end: e, label: vscode.l10n.t('update {0} (0-based) · sequence {1} · inputs', fmt(ref.update), ref.sequence) },
        { start: e, end: e + 1, label: vscode.l10n.t('target of the last position') },
      ],
    });
    return { ...ref, offset: s };
  } catch (err) {
    return reportError(services, vscode.l10n.t('Go to Sequence'), err);
  }
}
