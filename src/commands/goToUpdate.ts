/**
 * Token Shards: Go to Update… (`tokenShards.goToUpdate`, ctrl+alt+u), registered by the
 * composition root (`src/extension.ts`).
 *
 * Arguments (all optional; with `update` the command does not prompt):
 * `{ update: number | string, root?: string }`. Hover links use
 * `command:tokenShards.goToUpdate?[{"update":k}]`. An editor-title button passes the shard's URI,
 * whose dataset is then used. Without `update`, an input box validated live against the
 * dataset (0 ≤ k < number of updates; shows the token range and shards while typing). A pasted
 * `step 55000` (or `update 55000`) is accepted: "step" is ambiguous (the step index k, or "after k
 * updates", whose last update is k − 1), so the command offers both readings, as the hover does.
 * With a run description in force (`run.json` in the dataset folder or the setting
 * `tokenShards.run`), update k is the run's: checked against its updates and shown as its
 * samples in batch order; a run description that cannot be used is reported (nothing is shown
 * in the card's order instead).
 * Resolves with what the update view shows ({@link UpdateViewResult}), or undefined.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { count, fmt } from '../core/units';
import { UpdateIndex, checkUpdate, validateUpdateInput } from '../core/navigation';
import { type UpdateViewResult, runOrderOf } from '../panels/updateView';
import { checkRunUpdate, validateRunUpdateInput } from '../core/orderedUpdate';
import { argOrPrompt, commandArgs, promptValidated, reportError, resolveDataset } from '../inputs';
import { NavigationDeps, currentUpdate } from './focus';
import { iconSafe } from '../core/untrusted';
import { StepConvention, stepReadings } from '../core/trainingLog/parse';
import { stepConvention } from '../panels/trainingLogPanel';

/** Arguments of `tokenShards.goToUpdate`. */
export interface GoToUpdateArgs {
  /** 0-based update index (number, or text such as "55_000"). */
  update: number | string;
  /** Dataset root; default: the focused shard editor's dataset, the only one, or a pick. */
  root?: string;
}

/** Splits a leading `step` / `update` / `k =` from the typed text (case-insensitive). */
export function splitUpdateKeyword(text: string): { keyword?: 'step' | 'update'; rest: string } {
  const m = /^\s*(step|update|k)\b\s*[:=#]?\s*(.*)$/is.exec(text);
  if (!m) return { rest: text };
  const kw = m[1].toLowerCase();
  return { keyword: kw === 'step' ? 'step' : 'update', rest: m[2] };
}

/**
 * Asks which reading of "step k" is meant: update k (the step's own index) or update k − 1 (the
 * last update of a checkpoint saved after k updates). Only readings inside the stream are offered,
 * the one of the `tokenShards.trainingLog.stepConvention` setting first ({@link stepReadings}).
 */
async function chooseStepReading(numUpdates: number, k: number, conv: StepConvention): Promise<number | undefined> {
  const items: (vscode.QuickPickItem & { k: number })[] = stepReadings(k, conv, numUpdates).map((u, i) => ({
    k: u,
    label: vscode.l10n.t('Update {0}', fmt(u)),
    description:
      u === k
        ? vscode.l10n.t('"step {0}" is the 0-based index of the update', fmt(k))
        : vscode.l10n.t(
            '"step {0}" counts completed updates (a checkpoint after {1} last trained on update {2})',
            fmt(k),
            count(k, 'update'),
            fmt(k - 1),
          ),
    detail: i === 0 ? vscode.l10n.t('the reading of the setting tokenShards.trainingLog.stepConvention') : undefined,
  }));
  if (items.length <= 1) return items[0]?.k;
  const pick = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Which update does "step {0}" mean?', fmt(k)),
    placeHolder: vscode.l10n.t('Training libraries disagree on what "step k" means'),
  });
  return pick?.k;
}

/** Runs Go to Update… (see the file comment). */
export async function goToUpdate(nav: NavigationDeps, ...args: unknown[]): Promise<UpdateViewResult | undefined> {
  const { services, views } = nav;
  const { opts, uri } = commandArgs<GoToUpdateArgs>(args);
  try {
    const ds = await resolveDataset(services, vscode.l10n.t('Go to Update: choose a dataset'), opts.root, uri, views.focusedDataset);
    if (!ds) return undefined;
    // "Update k" is the run's when a run description is in force (run.json or tokenShards.run).
    const run = await runOrderOf(services, ds);
    const check = (v: number) => (run ? checkRunUpdate(v, run.named) : checkUpdate(v, ds));
    const validate = (t: string) => (run ? validateRunUpdateInput(t, run.named) : validateUpdateInput(t, ds));
    const numUpdates = run ? run.order.numUpdates : ds.schedule.numUpdates;
    const k = await argOrPrompt<UpdateIndex>(opts.update, 'update', check, async () => {
      const none = validate('0');
      if (!none.ok) {
        void vscode.window.showErrorMessage(none.error);
        return undefined;
      } // the stream holds no update
      let stepTyped = false;
      const typed = await promptValidated({
        onAccept: (t: string) => {
          stepTyped = splitUpdateKeyword(t).keyword === 'step';
        },
        title: vscode.l10n.t('Go to Update (0-based) · {0}', iconSafe(path.basename(ds.root))),
        prompt: run
          ? vscode.l10n.t('Update k, 0..{0}, of the {1}: its samples in batch order.', fmt(numUpdates - 1), run.named.name)
          : vscode.l10n.t(
              'Update k, 0..{0}. Update k (0-based) trained on tokens [G·k, G·(k+1)), G = {1}.',
              fmt(ds.schedule.numUpdates - 1),
              fmt(ds.schedule.G),
            ),
        placeholder: vscode.l10n.t('e.g. {0}, 55_000, 5.5e4', fmt(Math.min(55_000, numUpdates - 1))),
        value: currentUpdate(services, views, ds.root)?.toString(),
        validate: (t) => {
          const { keyword, rest } = splitUpdateKeyword(t);
          const v = validate(rest);
          const readings = v.ok && keyword === 'step' ? stepReadings(v.value, stepConvention(services), numUpdates) : [];
          if (v.ok && readings.length === 2)
            return {
              ...v,
              detail: vscode.l10n.t(
                '"step {0}": you will choose update {1} or update {2} next. {3}',
                fmt(v.value),
                fmt(readings[0]),
                fmt(readings[1]),
                v.detail ?? '',
              ),
            };
          return v;
        },
      });
      if (typed === undefined || !stepTyped) return typed;
      const c = await chooseStepReading(numUpdates, typed, stepConvention(services));
      const v = c === undefined ? undefined : check(c);
      return v?.ok ? v.value : undefined;
    });
    if (k === undefined) return undefined;
    return await views.show(ds, k);
  } catch (err) {
    return reportError(services, vscode.l10n.t('Go to Update'), err);
  }
}
