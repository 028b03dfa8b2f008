/**
 * Token Shards: Open Training Log… (`tokenShards.openTrainingLog`): a metrics file (W&B CSV
 * export, OLMo-core / Hugging Face Trainer JSONL) opened in the training-log panel
 * (src/panels/trainingLogPanel.ts).
 *
 * - Columns by name (src/core/trainingLog/); when several could be the step or the loss, a quick
 *   pick asks (best guess first). No step or loss column → the user picks one from all columns.
 * - Parsed with a cancellable progress notification, streamed (a 1 GB log in bounded memory;
 *   beyond 2,000,000 points it is decimated keeping the higher loss of each pair).
 *
 * Arguments (optional): `{ file, root, stepColumn, lossColumn }`; with `file` no dialog is shown.
 * Resolves with the panel's summary (tests).
 */
import * as path from 'path';
import * as vscode from 'vscode';
import type { Dataset } from '../core/dataset';
import { CancelledError } from '../core/errors';
import { fmt } from '../core/units';
import { StepConvention, lossCandidates, parseTrainingLog, readLogColumns, stepCandidates } from '../core/trainingLog/parse';
import { Spike } from '../core/trainingLog/spikes';
import type { ChannelTaps } from '../editor/hostChannel';
import { commandArgs, reportError, resolveDataset } from '../inputs';
import { TrainingLogPanel } from '../panels/trainingLogPanel';
import type { Services } from '../services';

/** Arguments of `tokenShards.openTrainingLog`. */
export interface OpenLogArgs {
  file: string;
  root: string;
  stepColumn: string;
  lossColumn: string;
}

/** What the command resolves with (tests). */
export interface OpenLogResult {
  file: string;
  root?: string;
  convention: StepConvention;
  points: number;
  spikes: Spike[];
  summary: string[];
  panel: TrainingLogPanel;
}

/** Asks which column when several (or none) fit; undefined when dismissed. */
async function askColumn(what: 'step' | 'loss', columns: string[], candidates: string[]): Promise<string | undefined> {
  const items = (candidates.length ? [...candidates, ...columns.filter((c) => !candidates.includes(c))] : columns).map((c, i) => ({
    label: c,
    description:
      i === 0 && candidates.length
        ? vscode.l10n.t('best guess')
        : candidates.includes(c)
          ? vscode.l10n.t('looks like a {0} column', what)
          : undefined,
  }));
  const pick = await vscode.window.showQuickPick(items, {
    title: what === 'step' ? vscode.l10n.t('Which column is the step?') : vscode.l10n.t('Which column is the loss?'),
    placeHolder:
      candidates.length > 1
        ? vscode.l10n.t('Several columns could be the {0}: {1}', what, candidates.join(', '))
        : vscode.l10n.t('No column is named like a {0} column: pick one', what),
  });
  return pick?.label;
}

/** Runs Open Training Log… (see the file comment). */
export async function openTrainingLog(
  services: Services,
  taps: ChannelTaps | undefined,
  focused: () => Dataset | undefined,
  ...args: unknown[]
): Promise<OpenLogResult | undefined> {
  const { opts, uri } = commandArgs<OpenLogArgs>(args);
  try {
    let file = opts.file ?? (uri && /\.(csv|tsv|jsonl|ndjson|json|log|txt)$/i.test(uri.fsPath) ? uri.fsPath : undefined);
    if (!file) {
      const picked = await vscode.window.showOpenDialog({
        title: vscode.l10n.t('Open Training Log (CSV, e.g. a W&B export, or JSONL)'),
        canSelectMany: false,
        filters: {
          [vscode.l10n.t('Metrics')]: ['csv', 'tsv', 'jsonl', 'ndjson', 'json', 'log', 'txt'],
          [vscode.l10n.t('All files')]: ['*'],
        },
        defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
      });
      if (!picked?.[0]) return undefined;
      file = picked[0].fsPath;
    }
    const purpose = vscode.l10n.t('Training log: choose the dataset it trained on');
    let ds: Dataset | undefined;
    if (opts.root) ds = await resolveDataset(services, purpose, opts.root);
    else if (focused()) ds = focused();
    else if ((await services.workspaceDatasetRoots()).length) ds = await services.pickDataset(purpose);
    const { columns } = await readLogColumns(file);
    let stepColumn = opts.stepColumn,
      lossColumn = opts.lossColumn;
    const steps = stepCandidates(columns),
      losses = lossCandidates(columns);
    if (stepColumn === undefined && steps.length !== 1) {
      stepColumn = await askColumn('step', columns, steps);
      if (!stepColumn) return undefined;
    }
    if (lossColumn === undefined && losses.length !== 1) {
      lossColumn = await askColumn('loss', columns, losses);
      if (!lossColumn) return undefined;
    }
    const log = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        cancellable: true,
        title: vscode.l10n.t('Reading {0}', path.basename(file)),
      },
      async (progress, token) => {
        const ac = new AbortController();
        token.onCancellationRequested(() => ac.abort());
        let last = 0;
        return parseTrainingLog(file!, {
          stepColumn,
          lossColumn,
          signal: ac.signal,
          onProgress: (bytes, total) => {
            const pct = total ? (100 * bytes) / total : 100;
            if (pct - last >= 1) {
              progress.report({ increment: pct - last, message: `${fmt(bytes)} / ${fmt(total)} bytes` });
              last = pct;
            }
          },
        });
      },
    );
    // Step k of the log is the run's step k when a run description is in force (src/orderService.ts).
    const run = ds && services.orders ? await services.orders.runOf(ds) : undefined;
    const panel = TrainingLogPanel.open(services, taps, file, log, ds, run?.order);
    services.log.info(`training log ${file}: ${panel.summary().join(' ')}`);
    return {
      file,
      root: ds?.root,
      convention: panel.convention,
      points: log.steps.length,
      spikes: panel.spikes,
      summary: panel.summary(),
      panel,
    };
  } catch (err) {
    if (err instanceof CancelledError) return undefined;
    return reportError(services, vscode.l10n.t('Open Training Log'), err);
  }
}
