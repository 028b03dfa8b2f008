/**
 * The update view: one panel per dataset ({@link PanelHost}) showing update `k` as the training
 * loop saw it (S sequences × L tokens, G and L from the dataset's schedule), built by
 * core/updateModel.ts and rendered by webview/updateView.ts. Reused and updated when another
 * update of the same dataset is asked for; restored after a window reload by a
 * `WebviewPanelSerializer` from the webview's state (an opaque dataset key + the update; the
 * key → root map lives in workspace state, so the webview never sees a path).
 *
 * Clicking a token in the view reveals it in its shard editor ({@link ShardEditorProvider.reveal}),
 * with the sequence's range highlighted. Built and registered (panel serializer included) by the
 * composition root (`src/extension.ts`).
 *
 * Document numbers follow the first paint: they are counted only when cheap
 * ({@link documentNumberIfCheap}; `tokenShards.documentScanLimit`), otherwise the view offers
 * to count them with a cancellable progress notification.
 */
import * as crypto from 'crypto';
import * as path from 'path';
import * as vscode from 'vscode';
import { Dataset } from '../core/dataset';
import { CancelledError, RangeRequestError } from '../core/errors';
import { count, fmt } from '../core/units';
import { UpdateModel, columnAtChar, documentNumberIfCheap, readUpdateModel, toUpdateViewData } from '../core/updateModel';
import { anomalyMarksForRows } from '../core/streamIndex/anomalies';
import { UpdateIndex, checkUpdate } from '../core/navigation';
import type { UpdateViewFromWebview, UpdateViewProtocol, UpdateViewState, UpdateViewToWebview } from '../protocol/update';
import type { Services } from '../services';
import type { ChannelTaps } from '../editor/hostChannel';
import type { ShardEditorProvider } from '../editor/shardEditor';
import { shardScanProgress, withTail } from '../editor/shardDocument';
import { webviewOptions } from '../editor/webviewHtml';
import { PanelHost, PanelSpec } from './panelHost';
import { plainText } from '../core/untrusted';
import type { LoadedTokenizer } from '../core/tokenizer';
import { NamedOrder, checkRunUpdate, pieceOffset, readOrderedUpdateModel } from '../core/orderedUpdate';
import type { OrderView } from '../core/order/orderClient';

/** The webview panel type (also the `onWebviewPanel:` activation event in package.json). */
export const UPDATE_VIEW_TYPE = 'tokenShards.updateView';

/** Workspace-state key of the dataset key → root map used to restore panels. */
const ROOTS_KEY = 'tokenShards.updateView.roots';

/** What {@link UpdateViews.show} resolves to (also the result of the goToUpdate command, for tests). */
export interface UpdateViewResult {
  /** Dataset root shown. */
  root: string;
  /** Update shown (0-based). */
  update: number;
  /** Rows in the model (S = G / L). */
  rows: number;
  /** Manifest `shard` paths the update's G + 1 tokens touch. */
  shards: string[];
  /** Resolves with the number of row elements the webview rendered for this update. */
  rendered: Promise<number>;
}

/** Opaque, stable key of a dataset root (first 16 hex digits of its sha256). */
export function datasetKey(root: string): string {
  return crypto.createHash('sha256').update(path.resolve(root)).digest('hex').slice(0, 16);
}

/**
 * Owns every update view panel (one per dataset root); also the panel serializer that restores
 * them after a window reload (registered by the composition root).
 */
export class UpdateViews implements vscode.Disposable, vscode.WebviewPanelSerializer<UpdateViewState> {
  private readonly panels = new Map<string, UpdatePanel>();
  private readonly disposables: vscode.Disposable[] = [];
  /** The panel that was focused last (for "copy link" and Go to Sequence defaults). */
  private lastActive?: UpdatePanel;

  /**
   * @param shardEditors where clicked tokens are revealed.
   * @param taps sees every message of every update view's channel (tests).
   */
  constructor(
    readonly services: Services,
    readonly shardEditors: ShardEditorProvider,
    readonly taps?: ChannelTaps,
  ) {
    this.disposables.push(
      services.onDidChangeDataset((root) => {
        for (const p of this.panels.values()) if (root === '*' || p.root === root) void p.reloadDataset();
      }),
    );
    // A stream index (re)loaded: the views of that dataset refresh their anomaly marks and banner.
    if (services.streamIndex)
      this.disposables.push(
        services.streamIndex.onDidChange((root) => {
          for (const p of this.panels.values()) if (p.root === root) void p.annotate();
        }),
      );
  }

  /**
   * Shows update `k` of `ds` in the dataset's panel (created on first use, else reused), focusing
   * row `focusRow` when given. `k` was checked against `ds` by the caller (`checkUpdate`).
   * @throws DataError on a short read.
   */
  async show(ds: Dataset, k: UpdateIndex, focusRow?: number): Promise<UpdateViewResult> {
    let p = this.panels.get(ds.root);
    if (!p) {
      const panel = vscode.window.createWebviewPanel(
        UPDATE_VIEW_TYPE,
        vscode.l10n.t('Update {0}', fmt(k)),
        { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
        webviewOptions(),
      );
      p = this.adopt(panel, ds.root, ds);
    } else {
      p.panel.reveal(undefined, false);
    }
    await this.rememberRoot(ds.root);
    return p.load(k, focusRow, ds);
  }

  /** The update and dataset of the focused (or last focused) update view, if any. */
  get active(): { dataset: Dataset; update: number; row?: number } | undefined {
    const p = [...this.panels.values()].find((x) => x.panel.active) ?? this.lastActive;
    return p?.dataset && p.model ? { dataset: p.dataset, update: p.model.update, row: p.focusedRow } : undefined;
  }

  /** Focuses row `row` in the dataset's update view when it shows update `k` (no-op otherwise). */
  focusRow(root: string, k: number, row: number): void {
    const p = this.panels.get(path.resolve(root));
    if (p?.model?.update === k) p.focusRowInView(row);
  }

  /** The dataset of the update view that has focus right now, if one has. */
  get focusedDataset(): Dataset | undefined {
    return [...this.panels.values()].find((x) => x.panel.active)?.dataset;
  }

  /** The panel of a dataset root, if open. */
  panelFor(root: string): vscode.WebviewPanel | undefined {
    return this.panels.get(path.resolve(root))?.panel;
  }

  private adopt(panel: vscode.WebviewPanel, root: string, ds?: Dataset): UpdatePanel {
    const p = new UpdatePanel(this, panel, root, ds);
    this.panels.set(root, p);
    panel.onDidDispose(() => {
      if (this.panels.get(root) === p) this.panels.delete(root);
      if (this.lastActive === p) this.lastActive = undefined;
      p.dispose();
    });
    panel.onDidChangeViewState((e) => {
      if (e.webviewPanel.active) this.lastActive = p;
    });
    if (panel.active) this.lastActive = p;
    return p;
  }

  /** Restores a panel after a window reload from its webview state (`vscode.WebviewPanelSerializer`). */
  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: UpdateViewState | undefined): Promise<void> {
    const roots = this.services.context.workspaceState.get<Record<string, string>>(ROOTS_KEY, {});
    const root = state && roots[state.key];
    if (!root || this.panels.has(root)) {
      panel.dispose();
      return;
    }
    const p = this.adopt(panel, root);
    try {
      const ds = await this.services.openRoot(root);
      const k = await checkUpdateIn(this.services, ds, state!.update);
      if (!k.ok) throw new RangeRequestError(k.error);
      await p.load(k.value, state!.row, ds);
    } catch (err) {
      p.showError((err as Error).message);
    }
  }

  private async rememberRoot(root: string): Promise<void> {
    const roots = { ...this.services.context.workspaceState.get<Record<string, string>>(ROOTS_KEY, {}) };
    const key = datasetKey(root);
    if (roots[key] !== root) {
      roots[key] = root;
      await this.services.context.workspaceState.update(ROOTS_KEY, roots);
    }
  }

  /** Closes every update view. */
  dispose(): void {
    for (const p of this.panels.values()) p.panel.dispose();
    this.panels.clear();
    for (const d of this.disposables) d.dispose();
  }
}

/** One panel: the host side of one dataset's update view. */
class UpdatePanel {
  dataset?: Dataset;
  model?: UpdateModel;
  focusedRow?: number;
  private readonly key: string;
  private readonly host: PanelHost<UpdateViewProtocol>;
  private loadSeq = 0;
  private docAbort?: AbortController;

  constructor(
    private readonly owner: UpdateViews,
    readonly panel: vscode.WebviewPanel,
    readonly root: string,
    ds?: Dataset,
  ) {
    this.dataset = ds;
    this.key = datasetKey(root);
    this.host = new PanelHost<UpdateViewProtocol>(panel, owner.services.context.extensionUri, updateViewSpec(), {
      resource: root,
      taps: owner.taps,
      log: owner.services.log,
      memory: owner.services.context.globalState,
    });
    this.host.onReady(() => this.onReady());
    this.host.onMessage((m) => void this.onMessage(m));
  }

  private get log() {
    return this.owner.services.log;
  }

  /** Sends an event (queued until the page is ready). */
  private post(msg: UpdateViewToWebview): void {
    this.host.post(msg);
  }

  /** Shows the model in the webview; resolves with the number of row elements it rendered (0 when superseded or closed). */
  private show(model: UpdateModel, focusRow: number | undefined): Promise<number> {
    return this.host
      .request('show', { key: this.key, datasetName: path.basename(this.root), data: toUpdateViewData(model), focusRow })
      .then(
        (r) => {
          this.log.info(`update view: update ${r.update} rendered (${r.rows} rows in the DOM) in ${r.ms.toFixed(1)} ms`);
          return r.rows;
        },
        () => 0,
      );
  }

  /** The webview (re)loaded: a reloaded page (the panel became visible again) gets the current update again. */
  private onReady(): void {
    if (!this.model) return;
    void this.show(this.model, this.focusedRow);
    void this.numberDocuments(false);
    void this.annotate();
  }

  /**
   * Reads update `k` (of `ds`, or the panel's dataset) and sends it to the webview. Later calls
   * supersede earlier ones still reading.
   */
  async load(k: UpdateIndex, focusRow: number | undefined, ds?: Dataset): Promise<UpdateViewResult> {
    const seq = ++this.loadSeq;
    if (ds) this.dataset = ds;
    const d = this.dataset ?? (this.dataset = await this.owner.services.openRoot(this.root));
    this.docAbort?.abort();
    this.post({ type: 'loading', update: k });
    const t0 = performance.now();
    let tok: LoadedTokenizer | undefined;
    try {
      tok = await this.owner.services.tokenizerFor(d);
    } catch (err) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t('Cannot load the tokenizer ({0}); the update view shows token ids.', plainText((err as Error).message)),
      );
    }
    // Read while the webview page loads (first show of a new panel).
    const t1 = performance.now();
    let modelMs = 0;
    let model: UpdateModel;
    try {
      const run = await runOrderOf(this.owner.services, d);
      const index = run ? this.owner.services.documentIndex(d) : undefined;
      const budget = this.owner.services.documentScanLimit();
      const reading = run
        ? run.order
            .update(k)
            .then((samples) =>
              readOrderedUpdateModel(d, k, samples, run.named, tok, (offset) => documentNumberIfCheap(index!, offset, budget)),
            )
        : readUpdateModel(d, k, tok);
      [model] = await Promise.all([
        reading.then((m) => {
          modelMs = performance.now() - t1;
          return m;
        }),
        this.host.whenReady(),
      ]);
    } catch (err) {
      if (seq === this.loadSeq) this.showError((err as Error).message);
      throw err;
    }
    let rendered = Promise.resolve(0);
    if (seq === this.loadSeq) {
      this.model = model;
      this.focusedRow = focusRow;
      this.panel.title = vscode.l10n.t('Update {0} · {1}', fmt(k), path.basename(this.root));
      rendered = this.show(model, focusRow);
      this.log.info(
        `update view: update ${k} of ${this.root}: tokenizer ${(t1 - t0).toFixed(1)} ms, read + model ${modelMs.toFixed(1)} ms, posted after ${(performance.now() - t0).toFixed(1)} ms`,
      );
      void this.numberDocuments(false);
      void this.annotate();
    }
    return { root: this.root, update: k, rows: model.rows.length, shards: model.shards.map((s) => s.shard), rendered };
  }

  /**
   * What the view says about the data of the update shown: a banner when a shard it reads
   * (targets included) failed verification or a stream-index anomaly touches it, and a mark on
   * each sequence holding an anomaly's offset (`anomalyMarksForRows`). Waits for the dataset's
   * index to load (once); called again when it is rebuilt.
   */
  async annotate(): Promise<void> {
    const d = this.dataset,
      model = this.model;
    if (!d || !model) return;
    const k = model.update;
    const notes: string[] = [];
    const failed = (this.owner.services.failedShards?.(this.root) ?? []).filter((f) => model.shards.some((s) => s.index === f.index));
    if (failed.length) {
      notes.push(
        vscode.l10n.t(
          "Update {0} reads {1}, which failed verification ({2}): these tokens are not the dataset's.",
          fmt(k),
          failed.map((f) => f.shard).join(', '),
          failed.map((f) => f.status).join(', '),
        ),
      );
    }
    // A run's order: the index's anomalies are placed by the card's updates and sequences, which are not these rows.
    const anomalies = model.order ? [] : ((await this.owner.services.streamIndex?.anomaliesOf(d)) ?? []);
    if (this.model !== model) return;
    for (const a of anomalies) if (a.updates && a.updates[0] <= k && k <= a.updates[1]) notes.push(a.message);
    if (notes.length) this.showError(notes.slice(0, 4).join(' '));
    const marks = anomalyMarksForRows(anomalies, model.tokenRange[0], model.seqLen, model.rows.length);
    this.post({ type: 'marks', update: k, rows: [...marks].map(([row, m]) => ({ row, ...m })) });
  }

  /**
   * Sends the first document number of the update shown: at once when cheap, else (when
   * `force`) by counting EOS tokens in every shard before it under a cancellable progress.
   */
  private async numberDocuments(force: boolean): Promise<void> {
    const d = this.dataset,
      m = this.model;
    // A run's samples carry their own document numbers (the model counts them per piece).
    if (!d || !m || m.order) return;
    const index = this.owner.services.documentIndex(d);
    const start = m.tokenRange[0];
    this.docAbort?.abort();
    const abort = new AbortController();
    this.docAbort = abort;
    const budget = this.owner.services.documentScanLimit();
    try {
      let first = await documentNumberIfCheap(index, start, budget, abort.signal);
      if (first === undefined && force) {
        this.post({ type: 'documents', update: m.update, busy: true, note: vscode.l10n.t('Counting documents…') });
        first = await vscode.window.withProgress(
          {
            location: vscode.ProgressLocation.Notification,
            cancellable: true,
            title: vscode.l10n.t('Numbering documents before update {0}', fmt(m.update)),
          },
          async (progress, token) => {
            token.onCancellationRequested(() => abort.abort());
            let last = 0;
            const tail = shardScanProgress(d.shards, index.exportCounts());
            return index.documentNumberAt(start, abort.signal, (done, total) => {
              const pct = (100 * done) / Math.max(1, total);
              progress.report({
                increment: pct - last,
                message: withTail(vscode.l10n.t('{0} of {1}', fmt(done), count(total, 'shard')), tail(done, total)),
              });
              last = pct;
            });
          },
        );
      }
      if (abort.signal.aborted || this.model !== m) return;
      const shardsBefore = d.stream.locate(start).segment;
      this.post({
        type: 'documents',
        update: m.update,
        firstDocument: first,
        note:
          first === undefined
            ? vscode.l10n.t('Document numbers need the EOS count of the {0} before this update.', count(shardsBefore, 'shard'))
            : undefined,
      });
    } catch (err) {
      if (err instanceof CancelledError) {
        if (this.model === m) this.post({ type: 'documents', update: m.update, note: vscode.l10n.t('Counting cancelled.') });
        return;
      }
      this.log.warn(`cannot number documents for update ${m.update}: ${(err as Error).message}`);
      this.post({ type: 'documents', update: m.update, note: (err as Error).message });
    }
  }

  /** Re-opens the dataset after its metadata changed and shows the same update again (or an error). */
  async reloadDataset(): Promise<void> {
    if (!this.model) return;
    try {
      const ds = await this.owner.services.openRoot(this.root);
      // The dataset changed: the update shown is checked again against it (the last one when it shrank).
      const run = await runOrderOf(this.owner.services, ds);
      const last = Math.max(0, (run ? run.order.numUpdates : ds.schedule.numUpdates) - 1);
      const k = await checkUpdateIn(this.owner.services, ds, Math.min(this.model.update, last));
      if (!k.ok) throw new RangeRequestError(k.error);
      await this.load(k.value, this.focusedRow, ds);
    } catch (err) {
      this.showError((err as Error).message);
    }
  }

  /** Scrolls the webview to row `row` of the update shown. */
  focusRowInView(row: number): void {
    this.focusedRow = row;
    this.post({ type: 'focusRow', row });
  }

  /** Shows `message` in the view's error banner (once the page is ready). */
  showError(message: string): void {
    this.post({ type: 'error', message });
  }

  private async onMessage(m: UpdateViewFromWebview): Promise<void> {
    try {
      switch (m.type) {
        case 'go': {
          const d = this.dataset;
          if (!d) break;
          const v = await checkUpdateIn(this.owner.services, d, m.update);
          if (!v.ok) {
            void vscode.window.showWarningMessage(v.error);
            break;
          }
          await this.load(v.value, undefined);
          break;
        }
        case 'reveal':
          await this.reveal(m.update, m.row, m.segment, m.char, m.next);
          break;
        case 'countDocuments':
          await this.numberDocuments(true);
          break;
        case 'copyLink':
          await vscode.commands.executeCommand('tokenShards.copyLink');
          break;
      }
    } catch (err) {
      this.log.error(`update view: ${(err as Error).message}`);
      void vscode.window.showErrorMessage((err as Error).message);
    }
  }

  /** Reveals a clicked token (or a row start) in its shard editor, highlighting its sequence. */
  private async reveal(
    update: number,
    row: number,
    segment: number | undefined,
    char: number | undefined,
    next: boolean | undefined,
  ): Promise<void> {
    const m = this.model,
      d = this.dataset;
    if (!m || !d || m.update !== update || !m.rows[row]) return;
    this.focusedRow = row;
    const r = m.rows[row];
    let column = 0;
    if (next) column = m.seqLen;
    else if (segment !== undefined) {
      const tok = await this.owner.services.tokenizerIfLoaded(d);
      column = char === undefined ? (r.segments[segment]?.start ?? 0) : columnAtChar(m, row, segment, char, tok);
    }
    if (r.pieces) {
      // A run's sample: its tokens lie in the pieces; the piece holding the token is highlighted.
      const offset = next && r.next ? r.next.offset : pieceOffset(r.pieces, Math.min(column, r.x.length - 1));
      const piece = r.pieces.find((p) => p.start <= offset && offset < p.end) ?? r.pieces[0];
      await this.owner.shardEditors.reveal({
        dataset: d,
        offset,
        viewColumn: vscode.ViewColumn.Beside,
        highlight: [
          {
            start: piece.start,
            end: piece.end,
            label: vscode.l10n.t(
              'update {0} (0-based) · slot {1} · sample {2} ({3})',
              fmt(update),
              row,
              fmt(r.sample ?? row),
              m.order!.name,
            ),
          },
        ],
      });
      return;
    }
    const offset = r.offset + column;
    // Keep the update view visible: a shard not open yet opens beside it (an open one is revealed where it is).
    await this.owner.shardEditors.reveal({
      dataset: d,
      offset,
      viewColumn: vscode.ViewColumn.Beside,
      highlight: [
        { start: r.offset, end: r.offset + m.seqLen, label: vscode.l10n.t('update {0} (0-based) · sequence {1}', fmt(update), row) },
        ...(next
          ? [
              {
                start: offset,
                end: offset + 1,
                label: row === m.rows.length - 1 ? vscode.l10n.t('look-ahead token') : vscode.l10n.t('target of the last position'),
              },
            ]
          : []),
      ],
    });
  }

  dispose(): void {
    this.docAbort?.abort();
    this.host.dispose();
  }
}

/** The update view's page. */
function updateViewSpec(): PanelSpec {
  return { viewType: UPDATE_VIEW_TYPE, title: vscode.l10n.t('Update view'), script: 'updateView', styles: ['updateView.css'] };
}

/** A dataset's run order when it is not the card's sequential one (`TrainingOrders.runOf`); undefined for the card's order. */
export function runOrderOf(services: Services, ds: Dataset): Promise<{ order: OrderView; named: NamedOrder } | undefined> {
  return services.orders ? services.orders.runOf(ds) : Promise.resolve(undefined);
}

/**
 * Checks update k against what "update k" means for `ds`: its run's order (`run.json` or the
 * setting `tokenShards.run`), else the card's schedule.
 * @throws DataError when the run description cannot be used (its message says nothing is shown instead).
 */
export async function checkUpdateIn(services: Services, ds: Dataset, k: number): Promise<ReturnType<typeof checkUpdate>> {
  const run = await runOrderOf(services, ds);
  return run ? checkRunUpdate(k, run.named) : checkUpdate(k, ds);
}
