/**
 * Token Shards: Go to Update… (`tokenShards.goToUpdate`, ctrl+alt+u), registered by the
 * composition root (`src/extension.ts`).
 *
 * Arguments (all optional; with `update` the command does not prompt):
 * `{ update: number | string, root?: string }`. Hover links use
 * `command:tokenShards.goToUpdate?[{"update":k}]`. An editor-title button passes the shard's URI,
 * whose dataset is then used. Without `update`, an input box validated live against the
 * dataset (0 ≤ k < number of updates; shows the token range and shards while typing).
 * Resolves with what the update view shows ({@link UpdateViewResult}), or undefined.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { fmt } from '../core/errors';
import { UpdateIndex, checkUpdate, numberArg, validateUpdateInput } from '../core/navigation';
import type { UpdateViewResult } from '../editor/updateView';
import { NavigationDeps, commandArgs, currentUpdate, promptValidated, reportError, resolveDataset } from './inputs';
import { iconSafe } from '../text/untrusted';

/** Arguments of `tokenShards.goToUpdate`. */
export interface GoToUpdateArgs {
  /** 0-based update index (number, or text such as "55_000"). */
  update: number | string;
  /** Dataset root; default: the focused shard editor's dataset, the only one, or a pick. */
  root?: string;
}

/** Runs Go to Update… (see the file comment). */
export async function goToUpdate(nav: NavigationDeps, ...args: unknown[]): Promise<UpdateViewResult | undefined> {
  const { services, views } = nav;
  const { opts, uri } = commandArgs<GoToUpdateArgs>(args);
  try {
    const ds = await resolveDataset(services, vscode.l10n.t('Go to Update: choose a dataset'), opts.root, uri, views.focusedDataset);
    if (!ds) return undefined;
    let k: UpdateIndex | undefined;
    if (opts.update !== undefined) {
      const n = numberArg(opts.update, 'update');
      const v = n.error ? { ok: false as const, error: n.error } : checkUpdate(n.value!, ds);
      if (!v.ok) { void vscode.window.showErrorMessage(v.error); return undefined; }
      k = v.value;
    } else {
      const none = validateUpdateInput('0', ds);
      if (!none.ok) { void vscode.window.showErrorMessage(none.error); return undefined; } // the stream holds no update
      k = await promptValidated({
        title: vscode.l10n.t('Go to Update (0-based) · {0}', iconSafe(path.basename(ds.root))),
        prompt: vscode.l10n.t('Update k, 0..{0}. Update k (0-based) trained on tokens [G·k, G·(k+1)), G = {1}.', fmt(ds.schedule.numUpdates - 1), fmt(ds.schedule.G)),
        placeholder: vscode.l10n.t('e.g. {0}, 55_000, 5.5e4', fmt(Math.min(55_000, ds.schedule.numUpdates - 1))),
        value: currentUpdate(services, views, ds.root)?.toString(),
        validate: (t) => validateUpdateInput(t, ds),
      });
      if (k === undefined) return undefined;
    }
    return await views.show(ds, k);
  } catch (err) {
    return reportError(services, vscode.l10n.t('Go to Update'), err);
  }
}
