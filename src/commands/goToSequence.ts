/**
 * Token Shards: Go to Sequence… (`tokenShards.goToSequence`): sequence `r` of update `k` (both
 * 0-based; typed as "k r", "k/r" or "k, r"), i.e. inputs `[G·k + L·r, G·k + L·(r+1))`. Reveals
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
import { fmt } from '../core/errors';
import { checkSequence, numberArg, validateSequenceInput } from '../core/navigation';
import { Services } from '../services';
import { UpdateViews } from '../editor/updateView';
import { revealInShardEditor } from '../editor/shardEditor';
import { commandArgs, currentUpdate, promptValidated, reportError, resolveDataset } from './inputs';

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
export async function goToSequence(services: Services, views: UpdateViews, ...args: unknown[]): Promise<{ update: number; sequence: number; offset: number } | undefined> {
  const { opts, uri } = commandArgs<GoToSequenceArgs>(args);
  try {
    const ds = await resolveDataset(services, vscode.l10n.t('Go to Sequence: choose a dataset'), opts.root, uri, views.focusedDataset);
    if (!ds) return undefined;
    let ref: { update: number; sequence: number } | undefined;
    if (opts.update !== undefined && opts.sequence !== undefined) {
      const k = numberArg(opts.update, 'update'), r = numberArg(opts.sequence, 'sequence');
      const err = k.error ?? r.error;
      const v = err ? { ok: false as const, error: err } : checkSequence({ update: k.value!, sequence: r.value! }, ds);
      if (!v.ok) { void vscode.window.showErrorMessage(v.error); return undefined; }
      ref = v.value;
    } else {
      const k = opts.update !== undefined ? numberArg(opts.update, 'update').value : currentUpdate(services, views, ds.root);
      ref = await promptValidated({
        title: vscode.l10n.t('Go to Sequence (update k, sequence r; both 0-based) · {0}', path.basename(ds.root)),
        prompt: vscode.l10n.t('"k r", "k/r" or "k, r": update 0..{0}, sequence 0..{1}', fmt(Math.max(0, ds.schedule.numUpdates - 1)), ds.schedule.sequencesPerUpdate - 1),
        placeholder: vscode.l10n.t('e.g. 55000 17'),
        value: k !== undefined ? `${k} ` : undefined,
        cursorAtEnd: true,
        validate: (t) => validateSequenceInput(t, ds),
      });
      if (!ref) return undefined;
    }
    const [s, e] = ds.schedule.sequenceRange(ref.update, ref.sequence);
    views.focusRow(ds.root, ref.update, ref.sequence);
    await revealInShardEditor(services, {
      dataset: ds, offset: s,
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
