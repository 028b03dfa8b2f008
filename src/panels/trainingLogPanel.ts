/**
 * Token Shards: Open Training Log… (`tokenShards.openTrainingLog`, issue 15): a metrics file (W&B
 * CSV export, OLMo-core / Hugging Face Trainer JSONL) drawn as loss against the **update** axis of
 * a dataset, on the shared panel pattern and the shared uPlot chart (webview/trainingLog.ts).
 *
 * - Columns by name (src/core/trainingLog/trainingLog.ts); when several could be the step or the loss, a quick
 *   pick asks (best guess first). No step or loss column → the user picks one from all columns.
 * - Parsed with a cancellable progress notification, streamed (a 1 GB log in bounded memory;
 *   beyond 2,000,000 points it is decimated keeping the higher loss of each pair).
 * - The step convention comes from `tokenShards.trainingLog.stepConvention` ("after": a logged step
 *   s is the loss of update s − 1, the default; "update": step s is update s); the axis says which,
 *   and the chart follows the setting when it changes.
 * - Spikes: rolling median + MAD ({@link spikeScores}), threshold and window adjustable in the
 *   panel; click a spike (or the chart) → Inspect Updates Around it.
 * - Optionally one statistic on a second axis, computed for at most {@link OVERLAY_MAX_UPDATES}
 *   updates spread over the log's range (chunked on the host, cancellable by choosing another).
 *
 * Arguments (optional): `{ file, root, stepColumn, lossColumn }`; with `file` no dialog is shown.
 * Resolves with the panel's summary (tests).
 */
import * as path from 'path';
import * as vscode from 'vscode';
import type { Dataset } from '../core/dataset';
import { CancelledError, fmt } from '../core/errors';
import { STAT_DEFINITIONS, StatColumn, StatsCalculator, statValue } from '../core/stats';
import {
  STEP_CONVENTION_TEXT,
  SPIKE_DEFAULTS,
  Spike,
  StepConvention,
  parseStepConvention,
  TrainingLog,
  chartSeries,
  describeLog,
  findSpikes,
  lossCandidates,
  parseTrainingLog,
  readLogColumns,
  spikeScores,
  stepCandidates,
  stepToUpdate,
} from '../core/trainingLog/trainingLog';
import type { Services } from '../services';
import { commandArgs, reportError, resolveDataset } from '../commands/inputs';
import { PanelHost } from './panelHost';
import type { PanelExport } from './panelProtocol';
import { statColumnInfo } from './inspectUpdates';
import type { LogFromWebview, LogToWebview } from './workbenchProtocol';

/** The panel's view type. */
export const TRAINING_LOG_VIEW_TYPE = 'tokenShards.trainingLog';
/** Most updates a second-axis statistic is computed for. */
export const OVERLAY_MAX_UPDATES = 400;

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

type Host = PanelHost<LogToWebview, LogFromWebview | { type: 'export'; export: PanelExport }>;

/** The reading of `tokenShards.trainingLog.stepConvention`. */
export function stepConvention(services: Services): StepConvention {
  return parseStepConvention(services.setting<string>('trainingLog.stepConvention'));
}

/** One training-log panel: a parsed log drawn against a dataset's updates. */
export class TrainingLogPanel {
  private scores: Float64Array;
  private window: number = SPIKE_DEFAULTS.window;
  private threshold: number = SPIKE_DEFAULTS.threshold;
  private overlayRun?: AbortController;
  /** Spikes for the current threshold (tests). */
  spikes: Spike[] = [];
  /** Resolves when the latest overlay request is drawn (tests). */
  overlayDone: Promise<void> = Promise.resolve();

  constructor(
    private readonly services: Services,
    readonly log: TrainingLog,
    readonly ds: Dataset | undefined,
    readonly host: Host,
  ) {
    this.scores = spikeScores(log.losses, this.window);
    this.spikes = findSpikes(log.steps, log.losses, this.scores, this.threshold, this.convention);
    host.onMessage((m) => {
      switch (m.type) {
        case 'threshold':
          this.setThreshold(m.threshold, m.window);
          break;
        case 'inspect':
          void this.inspect(m.update);
          break;
        case 'overlay':
          this.overlayDone = this.overlay(m.column);
          break;
        case 'export':
          void host.saveExport(m.export, services.context.globalState).then(
            (uri) => {
              if (uri) void vscode.window.showInformationMessage(vscode.l10n.t('Saved {0}', uri.fsPath));
            },
            (err: Error) => reportError(services, vscode.l10n.t('Export'), err),
          );
          break;
      }
    });
    host.onReady(() => this.postAll());
    host.track(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('tokenShards.trainingLog.stepConvention')) this.postAll();
      }),
    );
    host.onDidDispose(() => this.overlayRun?.abort());
  }

  get convention(): StepConvention {
    return stepConvention(this.services);
  }

  /** Summary sentences for the current convention. */
  summary(): string[] {
    const s = describeLog(this.log, this.convention, this.ds?.schedule.numUpdates);
    if (!this.ds) s.push(vscode.l10n.t('No dataset is open: spikes cannot be inspected.'));
    return s;
  }

  /** Sends the log, then the spikes (on first load, on every page reload, on a convention change). */
  postAll(): void {
    const conv = this.convention;
    const chart = chartSeries(this.log.steps, this.log.losses, conv);
    this.host.post({
      type: 'log',
      fileName: path.basename(this.log.file),
      stepColumn: this.log.step.column!,
      lossColumn: this.log.loss.column!,
      convention: conv,
      conventionText: STEP_CONVENTION_TEXT[conv],
      summary: this.summary(),
      x: chart.x,
      y: chart.y,
      numUpdates: this.ds?.schedule.numUpdates ?? 0,
      threshold: this.threshold,
      window: this.window,
      columns: statColumnInfo(),
    });
    this.postSpikes();
  }

  /** Recomputes spikes for a threshold (and window: scores are recomputed only when it changes). */
  setThreshold(threshold: number, window: number): void {
    if (Number.isFinite(threshold) && threshold > 0) this.threshold = threshold;
    if (Number.isInteger(window) && window >= 3 && window !== this.window) {
      this.window = window;
      this.scores = spikeScores(this.log.losses, window);
    }
    this.postSpikes();
  }

  private postSpikes(): void {
    this.spikes = findSpikes(this.log.steps, this.log.losses, this.scores, this.threshold, this.convention);
    this.host.post({ type: 'spikes', spikes: this.spikes, threshold: this.threshold, window: this.window });
  }

  /** Inspect Updates Around an update (clamped into the dataset; says so when the update has no data). */
  async inspect(update: number): Promise<unknown> {
    if (!this.ds) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t('No dataset is open beside this log: open a folder holding shard_manifest.jsonl.'),
      );
      return undefined;
    }
    const n = this.ds.schedule.numUpdates;
    if (update < 0 || update >= n) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t(
          'Update {0} is outside this dataset (updates 0..{1}): the log runs past the data, or the step convention is wrong.',
          fmt(update),
          fmt(n - 1),
        ),
      );
      return undefined;
    }
    return vscode.commands.executeCommand('tokenShards.inspectUpdates', { update, root: this.ds.root });
  }

  /** Computes one statistic for up to {@link OVERLAY_MAX_UPDATES} updates of the log's range and posts it. */
  async overlay(column: StatColumn | null): Promise<void> {
    this.overlayRun?.abort();
    const ds = this.ds;
    if (!column || !ds) {
      this.host.post({ type: 'overlay', column: null, label: '', updates: [], values: [], sampled: false });
      return;
    }
    const ac = new AbortController();
    this.overlayRun = ac;
    const conv = this.convention;
    const n = ds.schedule.numUpdates;
    const lo = Math.max(0, stepToUpdate(this.log.steps[0], conv));
    const hi = Math.min(n - 1, stepToUpdate(this.log.steps[this.log.steps.length - 1], conv));
    if (hi < lo) {
      this.host.post({
        type: 'notice',
        level: 'error',
        message: vscode.l10n.t("The log's steps do not overlap the dataset's updates: no statistic to draw."),
      });
      return;
    }
    const count = Math.min(OVERLAY_MAX_UPDATES, hi - lo + 1);
    const updates = [...new Set(Array.from({ length: count }, (_, i) => lo + Math.round((i * (hi - lo)) / Math.max(1, count - 1))))];
    const tok = await this.services.tokenizerFor(ds).catch(() => undefined);
    const calc = new StatsCalculator({ G: ds.schedule.G, L: ds.schedule.L, eos: ds.settings.eosTokenId, tokenizer: tok });
    const values: (number | null)[] = [];
    try {
      for (const k of updates) {
        if (ac.signal.aborted) throw new CancelledError();
        const start = ds.schedule.G * k;
        const ids = await ds.stream.read(start > 0 ? start - 1 : 0, ds.schedule.G + (start > 0 ? 1 : 0));
        const s = start > 0 ? calc.compute(k, ids.subarray(1), ids[0]) : calc.compute(k, ids, undefined);
        values.push(statValue(s, column));
        await new Promise<void>((r) => setImmediate(r));
      }
    } catch (err) {
      if (err instanceof CancelledError) return;
      this.host.post({ type: 'notice', level: 'error', message: err instanceof Error ? err.message : String(err) });
      return;
    }
    this.host.post({
      type: 'overlay',
      column,
      label: STAT_DEFINITIONS[column].label,
      updates,
      values,
      sampled: updates.length < hi - lo + 1,
    });
  }
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
    const host: Host = PanelHost.create(services.context.extensionUri, {
      viewType: TRAINING_LOG_VIEW_TYPE,
      title: vscode.l10n.t('Training log: {0}', path.basename(file)),
      script: 'trainingLog',
      styles: ['workbench.css', 'chart.css', 'dist/media/uPlot.min.css'],
    });
    const panel = new TrainingLogPanel(services, log, ds, host);
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
