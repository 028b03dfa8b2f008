/**
 * The training-log panel (opened by Open Training Log…, src/commands/openTrainingLog.ts): a
 * parsed metrics file drawn as loss against the **update** axis of a dataset, on the shared panel
 * pattern and the shared uPlot chart (webview/trainingLog.ts).
 *
 * - The step convention comes from `tokenShards.trainingLog.stepConvention` ("after": a logged step
 *   s is the loss of update s − 1, the default; "update": step s is update s); the axis says which,
 *   and the chart follows the setting when it changes.
 * - Spikes: rolling median + MAD ({@link spikeScores}), threshold and window adjustable in the
 *   panel; click a spike (or the chart) → Inspect Updates Around it.
 * - Optionally one statistic on a second axis, computed for at most {@link OVERLAY_MAX_UPDATES}
 *   updates spread over the log's range (chunked on the host, cancellable by choosing another).
 * - With a run description in force (`src/orderService.ts`: `run.json`, `tokenShards.run`), update
 *   k is the run's step k: the axis, the summary and Inspect are clipped to the run's updates, and
 *   the statistic of update k is that of the samples its training order fed at step k
 *   (`core/trainingLog/overlay.ts`). A change of run description redraws the panel.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import type { Dataset } from '../core/dataset';
import { CancelledError } from '../core/errors';
import { fmt } from '../core/units';
import { STAT_DEFINITIONS, StatColumn } from '../core/stats';
import type { OrderView } from '../core/order/orderClient';
import { overlayUpdates, overlayValues, runUpdates } from '../core/trainingLog/overlay';
import { STEP_CONVENTION_TEXT, StepConvention, TrainingLog, describeLog, parseStepConvention } from '../core/trainingLog/parse';
import { SPIKE_DEFAULTS, Spike, chartSeries, findSpikes, spikeScores } from '../core/trainingLog/spikes';
import type { Services } from '../services';

import type { ChannelTaps } from '../editor/hostChannel';
import { PanelHost } from './panelHost';
import { statColumnInfo } from './inspectUpdates';
import type { LogOverlay, TrainingLogProtocol } from '../protocol/workbench';

/** The panel's view type. */
export const TRAINING_LOG_VIEW_TYPE = 'tokenShards.trainingLog';
/** Most updates a second-axis statistic is computed for. */
export const OVERLAY_MAX_UPDATES = 400;

type Host = PanelHost<TrainingLogProtocol>;

/** The reading of `tokenShards.trainingLog.stepConvention`. */
export function stepConvention(services: Services): StepConvention {
  return parseStepConvention(services.setting<string>('trainingLog.stepConvention'));
}

/** One training-log panel: a parsed log drawn against a dataset's updates. */
export class TrainingLogPanel {
  /**
   * Opens a panel drawing `log` (read from `file`) against the updates of `ds` (none: the log's
   * steps only).
   * @param taps sees every message of the panel's channel (tests; the composition root's).
   */
  static open(
    services: Services,
    taps: ChannelTaps | undefined,
    file: string,
    log: TrainingLog,
    ds: Dataset | undefined,
    order?: OrderView,
  ): TrainingLogPanel {
    const host: Host = PanelHost.create(
      services.context.extensionUri,
      {
        viewType: TRAINING_LOG_VIEW_TYPE,
        title: vscode.l10n.t('Training log: {0}', path.basename(file)),
        script: 'trainingLog',
        styles: ['workbench.css', 'chart.css', 'dist/media/uPlot.min.css'],
      },
      { resource: ds?.root, taps, log: services.log, memory: services.context.globalState },
    );
    return new TrainingLogPanel(services, log, ds, host, order);
  }

  private scores: Float64Array;
  private window: number = SPIKE_DEFAULTS.window;
  private threshold: number = SPIKE_DEFAULTS.threshold;
  private overlayRun?: AbortController;
  /** Spikes for the current threshold (tests). */
  spikes: Spike[] = [];
  /** Resolves when the latest overlay request is drawn (tests). */
  overlayDone: Promise<unknown> = Promise.resolve();

  /**
   * @param order the run's training order of `ds` when a run description is in force (undefined:
   *   the card's sequential order); replaced when the run description changes.
   */
  constructor(
    private readonly services: Services,
    readonly log: TrainingLog,
    readonly ds: Dataset | undefined,
    readonly host: Host,
    private order?: OrderView,
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
      }
    });
    host.onReady(() => this.postAll());
    host.track(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('tokenShards.trainingLog.stepConvention')) this.postAll();
      }),
    );
    host.onDidDispose(() => this.overlayRun?.abort());
    const orders = services.orders;
    if (orders && ds)
      host.track(
        orders.onDidChange((root) => {
          if (root === '*' || root === ds.root) void this.followRun();
        }),
      );
  }

  /** Updates of the dataset as the log is drawn against: the run's steps, else the stream's updates (0 without a dataset). */
  get numUpdates(): number {
    return this.ds ? runUpdates(this.ds, this.order) : 0;
  }

  /** Takes the run description now in force (its order, or none) and redraws; a run file that cannot be used is said in the panel. */
  private async followRun(): Promise<void> {
    if (!this.ds || !this.services.orders) return;
    try {
      this.order = (await this.services.orders.runOf(this.ds))?.order;
    } catch (err) {
      this.order = undefined;
      this.host.post({ type: 'notice', level: 'error', message: err instanceof Error ? err.message : String(err) });
    }
    this.postAll();
  }

  get convention(): StepConvention {
    return stepConvention(this.services);
  }

  /** Summary sentences for the current convention. */
  summary(): string[] {
    const s = describeLog(this.log, this.convention, this.ds ? this.numUpdates : undefined);
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
      numUpdates: this.numUpdates,
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
    const n = this.numUpdates;
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

  /**
   * Computes one statistic for up to {@link OVERLAY_MAX_UPDATES} updates of the log's range (the
   * run's steps through its order when one is in force) and posts it.
   * @returns the overlay posted, or undefined when none was (cancelled, failed: a notice says why).
   */
  async overlay(column: StatColumn | null): Promise<LogOverlay | undefined> {
    this.overlayRun?.abort();
    const ds = this.ds;
    if (!column || !ds) {
      const cleared: LogOverlay = { type: 'overlay', column: null, label: '', updates: [], values: [], sampled: false };
      this.host.post(cleared);
      return cleared;
    }
    const ac = new AbortController();
    this.overlayRun = ac;
    const order = this.order;
    const updates = overlayUpdates(this.log.steps, this.convention, runUpdates(ds, order), OVERLAY_MAX_UPDATES);
    if (updates.length === 0) {
      this.host.post({
        type: 'notice',
        level: 'error',
        message: vscode.l10n.t("The log's steps do not overlap the dataset's updates: no statistic to draw."),
      });
      return undefined;
    }
    const tok = await this.services.tokenizerFor(ds).catch(() => undefined);
    let values: (number | null)[];
    try {
      values = await overlayValues(ds, updates, column, { order, tokenizer: tok, signal: ac.signal });
    } catch (err) {
      if (err instanceof CancelledError) return undefined;
      this.host.post({ type: 'notice', level: 'error', message: err instanceof Error ? err.message : String(err) });
      return undefined;
    }
    const drawn: LogOverlay = {
      type: 'overlay',
      column,
      label: STAT_DEFINITIONS[column].label,
      updates,
      values,
      // The updates span the log's first to last update (clipped): fewer of them than that is a sample.
      sampled: updates.length < updates[updates.length - 1] - updates[0] + 1,
    };
    this.host.post(drawn);
    return drawn;
  }
}
