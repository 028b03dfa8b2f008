/**
 * Token Shards: Inspect Updates Around… (`tokenShards.inspectUpdates`): an update and a radius
 * (default ±20, `tokenShards.inspect.radius`) → the Inspect Updates panel
 * (src/panels/inspectUpdates.ts) of that window.
 *
 * Arguments (all optional; with `update` the command does not prompt): `{ update, radius, root }`.
 * With a run description in force, updates are the run's steps (`src/orderService.ts`).
 * Resolves with the records once computed (tests use this).
 */
import * as path from 'path';
import * as vscode from 'vscode';
import type { Dataset } from '../core/dataset';
import { CancelledError } from '../core/errors';
import { count, fmt } from '../core/units';
import { checkUpdate, numberArg } from '../core/navigation';
import { argOrPrompt, commandArgs, promptValidated, reportError, resolveDataset } from '../inputs';
import { DEFAULT_RADIUS, InspectPanels, InspectResult, MAX_RADIUS } from '../panels/inspectUpdates';
import { runOrderOf } from '../panels/updateView';
import { checkRunUpdate } from '../core/orderedUpdate';
import type { Services } from '../services';

/** Arguments of `tokenShards.inspectUpdates`. */
export interface InspectArgs {
  /** Centre update (0-based), number or text ("55_000"). */
  update: number | string;
  /** Updates each side (default the setting, 20). */
  radius: number | string;
  /** Dataset root. */
  root: string;
}

/** A radius (updates each side) is at most {@link MAX_RADIUS}. */
function checkRadius(r: number): { ok: true; value: number } | { ok: false; error: string } {
  return r > MAX_RADIUS
    ? { ok: false, error: vscode.l10n.t('radius {0} is more than {1}', fmt(r), fmt(MAX_RADIUS)) }
    : { ok: true, value: r };
}

/** Runs Inspect Updates Around… (see the file comment). */
export async function inspectUpdates(
  services: Services,
  panels: InspectPanels,
  focused: () => { ds?: Dataset; update?: number },
  ...args: unknown[]
): Promise<InspectResult | undefined> {
  const { opts, uri } = commandArgs<InspectArgs>(args);
  try {
    const here = focused();
    const ds = await resolveDataset(services, vscode.l10n.t('Inspect Updates: choose a dataset'), opts.root, uri, here.ds);
    if (!ds) return undefined;
    // "Update k" is the run's step k when a run description names an order (run.json, tokenShards.run).
    const run = await runOrderOf(services, ds);
    const check = (v: number) => (run ? checkRunUpdate(v, run.named) : checkUpdate(v, ds));
    const n = run ? run.order.numUpdates : ds.schedule.numUpdates;
    if (n === 0) {
      void vscode.window.showErrorMessage(vscode.l10n.t('{0} holds no complete update.', path.basename(ds.root)));
      return undefined;
    }
    const setting = services.setting<number>('inspect.radius') ?? DEFAULT_RADIUS;
    const given = await argOrPrompt(opts.radius, 'radius', checkRadius, () => Promise.resolve(setting));
    if (given === undefined) return undefined;
    let radius = given;
    const k = await argOrPrompt(opts.update, 'update', check, async () => {
      const typed = await promptValidated<{ k: number; r: number }>({
        title: vscode.l10n.t('Inspect Updates Around… · {0}', path.basename(ds.root)),
        prompt: vscode.l10n.t(
          'Update k (0-based, 0..{0}), optionally ± radius (default {1}): "55000" or "55000 ± 50" or "55000 50".',
          fmt(n - 1),
          String(radius),
        ),
        placeholder: vscode.l10n.t('e.g. {0} ± {1}', fmt(Math.min(55_000, n - 1)), String(radius)),
        value: here.update !== undefined ? String(here.update) : undefined,
        validate: (t) => {
          const m = /^\s*([^\s±+]+)\s*(?:(?:±|\+-|\+\/-|\s)\s*([^\s]+))?\s*$/.exec(t);
          if (!m) return { ok: false, error: vscode.l10n.t('Type an update, optionally followed by ± radius.') };
          const kv = numberArg(m[1], 'update');
          const c = kv.error ? { ok: false as const, error: kv.error } : check(kv.value!);
          if (!c.ok) return c;
          let r = radius;
          if (m[2] !== undefined) {
            const rv = numberArg(m[2], 'radius');
            if (rv.error) return { ok: false, error: rv.error };
            if (rv.value! > MAX_RADIUS) return { ok: false, error: vscode.l10n.t('radius at most {0}', fmt(MAX_RADIUS)) };
            r = rv.value!;
          }
          return {
            ok: true,
            value: { k: c.value, r },
            detail: vscode.l10n.t(
              'updates {0}–{1} ({2})',
              fmt(Math.max(0, c.value - r)),
              fmt(Math.min(n - 1, c.value + r)),
              count(Math.min(n - 1, c.value + r) - Math.max(0, c.value - r) + 1, 'row'),
            ),
          };
        },
      });
      if (!typed) return undefined;
      radius = typed.r;
      return typed.k;
    });
    if (k === undefined) return undefined;
    return await panels.open(ds, k, radius);
  } catch (err) {
    if (err instanceof CancelledError) return undefined;
    return reportError(services, vscode.l10n.t('Inspect Updates'), err);
  }
}
