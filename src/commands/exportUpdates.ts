/**
 * Token Shards: Export Updates… (`tokenShards.exportUpdates`): a range of updates →
 * jsonl (one line per sequence), txt (as `token-shards update` prints) or npz (`input_ids`,
 * `target_ids`: uint32 [n, S, L], what numpy.load reads), through a save dialog, with a
 * cancellable progress notification. The file is written as `<file>.partial` and renamed when
 * complete, so a cancelled export leaves nothing behind. Work is streamed one update at a time
 * on the extension host with a yield between updates (it never blocks it, memory stays bounded).
 *
 * Arguments (optional): `{ first, last, root, format, file }`; with all of them nothing is asked
 * (tests). Resolves with the file written and its size, or undefined.
 *
 * With a run description in force (`run.json`, `tokenShards.run`) the updates are the run's
 * batches in its training order and the export is npz `[n, B, L]` (src/core/export.ts), as
 * `token-shards export ROOT K --run FILE --format npz` writes it.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import type { Dataset } from '../core/dataset';
import { CancelledError } from '../core/errors';
import { fmt } from '../core/units';
import { EXPORT_FORMATS, ExportFormat, checkExportUpdates, describeExport, exportUpdatesToFile, npzSizeEstimate } from '../core/export';
import { parseUpdateRange } from '../core/stats';
import type { Services } from '../services';
import { commandArgs, promptValidated, reportError, resolveDataset } from '../inputs';
import { askSaveLocation } from '../panels/saveLocation';
import { runOrderOf } from '../panels/updateView';

/** Arguments of `tokenShards.exportUpdates`. */
export interface ExportArgs {
  first: number;
  last: number;
  root: string;
  format: ExportFormat;
  file: string;
}

/** Bytes above which an export asks for confirmation first. */
const CONFIRM_BYTES = 2e9;

/** Runs Export Updates… (see the file comment). */
export async function exportUpdatesCommand(
  services: Services,
  focused: () => { ds?: Dataset; update?: number },
  ...args: unknown[]
): Promise<{ file: string; bytes: number } | undefined> {
  const { opts, uri } = commandArgs<ExportArgs>(args);
  try {
    const here = focused();
    const ds = await resolveDataset(services, vscode.l10n.t('Export Updates: choose a dataset'), opts.root, uri, here.ds);
    if (!ds) return undefined;
    // "Update k" is the run's when a run description is in force (run.json or tokenShards.run):
    // its batches of B samples of L input tokens, exported as npz only.
    const run = await runOrderOf(services, ds);
    const order = run?.order.kind === 'sequential' ? undefined : run?.order;
    const n = order ? order.numUpdates : ds.schedule.numUpdates;
    const S = order ? order.samplesPerUpdate : ds.schedule.sequencesPerUpdate;
    const L = order ? order.inputTokens : ds.schedule.L;
    const G = S * L;
    if (n === 0) {
      void vscode.window.showErrorMessage(vscode.l10n.t('{0} holds no complete update.', path.basename(ds.root)));
      return undefined;
    }
    let first = opts.first,
      last = opts.last ?? opts.first;
    if (first === undefined || last === undefined) {
      const guess = here.update !== undefined ? String(here.update) : '0';
      const r = await promptValidated<{ first: number; last: number }>({
        title: vscode.l10n.t('Export Updates · {0}', path.basename(ds.root)),
        prompt: vscode.l10n.t('Updates K or K1..K2 (0-based, inclusive; 0..{0})', fmt(n - 1)),
        value: guess,
        validate: (t) => {
          try {
            const v = parseUpdateRange(t);
            checkExportUpdates(ds, v.first, v.last, 'npz', order);
            const size = describeExport(v.last - v.first + 1, npzSizeEstimate(v.last - v.first + 1, G, L));
            return {
              ok: true,
              value: v,
              detail: order
                ? vscode.l10n.t("{0}: the run's batches, {1} samples each", size, fmt(S))
                : vscode.l10n.t('{0}: tokens [{1}, {2})', size, fmt(G * v.first), fmt(G * (v.last + 1))),
            };
          } catch (err) {
            return { ok: false, error: (err as Error).message };
          }
        },
      });
      if (!r) return undefined;
      ({ first, last } = r);
    }
    checkExportUpdates(ds, first, last, 'npz', order);
    if (last < first) [first, last] = [last, first];
    const count = last - first + 1;
    let format = opts.format;
    if (format === undefined && order) format = 'npz';
    if (format === undefined) {
      const pick = await vscode.window.showQuickPick(
        [
          {
            label: 'npz',
            format: 'npz' as const,
            detail: vscode.l10n.t(
              "numpy: input_ids and target_ids, uint32 [{0}, {1}, {2}] (the card's x and y) — {3}",
              fmt(count),
              fmt(S),
              fmt(L),
              describeExport(count, npzSizeEstimate(count, G, L)),
            ),
          },
          {
            label: 'jsonl',
            format: 'jsonl' as const,
            detail: vscode.l10n.t('one line per sequence: update, sequence, token_range, input_ids, target_ids, text'),
          },
          {
            label: 'txt',
            format: 'txt' as const,
            detail: vscode.l10n.t('decoded text as `token-shards update` prints it, sequence by sequence'),
          },
        ],
        { title: vscode.l10n.t('Export updates {0}–{1} as…', fmt(first), fmt(last)) },
      );
      if (!pick) return undefined;
      format = pick.format;
    }
    if (!EXPORT_FORMATS.includes(format)) {
      void vscode.window.showErrorMessage(vscode.l10n.t('Unknown export format {0}; expected jsonl, txt or npz.', String(format)));
      return undefined;
    }
    const tok = await services.tokenizerFor(ds).catch(() => undefined);
    if (format === 'txt' && !tok) {
      void vscode.window.showErrorMessage(vscode.l10n.t('The txt export decodes text and needs a tokenizer: run Choose Tokenizer… first.'));
      return undefined;
    }
    let file = opts.file;
    if (!file) {
      const name = first === last ? `update-${first}.${format}` : `updates-${first}-${last}.${format}`;
      const target = await askSaveLocation(services.context.globalState, name, {
        filters: { [format]: [format] },
        title: vscode.l10n.t('Export updates {0}–{1}', fmt(first), fmt(last)),
      });
      if (!target) return undefined;
      if (target.scheme !== 'file') {
        void vscode.window.showErrorMessage(vscode.l10n.t('Exports are written to a local file; {0} is not one.', target.toString()));
        return undefined;
      }
      file = target.fsPath;
    }
    checkExportUpdates(ds, first, last, format, order);
    if (format === 'npz' && npzSizeEstimate(count, G, L) > CONFIRM_BYTES && opts.file === undefined) {
      const go = vscode.l10n.t('Export');
      const ok = await vscode.window.showWarningMessage(
        vscode.l10n.t('This writes {0}. Continue?', describeExport(count, npzSizeEstimate(count, G, L))),
        { modal: true },
        go,
      );
      if (ok !== go) return undefined;
    }
    const out = file;
    const started = Date.now();
    const bytes = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        cancellable: true,
        title: vscode.l10n.t('Exporting updates {0}–{1} as {2}', fmt(first), fmt(last), format),
      },
      (progress, token) => {
        const ac = new AbortController();
        token.onCancellationRequested(() => ac.abort());
        let shown = 0;
        return exportUpdatesToFile(ds, first!, last!, format!, out, {
          tokenizer: tok,
          documentIndex: services.documentIndex(ds),
          documentScanLimit: services.setting<number>('documentScanLimit'),
          // The save dialog asked before replacing a file; the dataset's own files are still refused.
          force: true,
          signal: ac.signal,
          order,
          onProgress: (p) => {
            const pct = (100 * p.done) / p.total;
            progress.report({ increment: pct - shown, message: `${fmt(p.bytes)} bytes` });
            shown = pct;
          },
        });
      },
    );
    services.log.info(`exported updates ${first}..${last} as ${format} to ${out}: ${bytes} bytes in ${Date.now() - started} ms`);
    const reveal = vscode.l10n.t('Reveal');
    void vscode.window
      .showInformationMessage(vscode.l10n.t('Exported {0} to {1}', describeExport(count, bytes), path.basename(out)), reveal)
      .then((a) => {
        if (a === reveal) void vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(out));
      });
    return { file: out, bytes };
  } catch (err) {
    if (err instanceof CancelledError) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Export cancelled; no file was written.'));
      return undefined;
    }
    return reportError(services, vscode.l10n.t('Export Updates'), err);
  }
}
