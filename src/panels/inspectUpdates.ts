/**
 * The Inspect Updates panel (opened by Inspect Updates Around…, src/commands/inspectUpdates.ts),
 * on the shared panel pattern ({@link PanelHost}): one row per update of `[k − r, k + r]`
 * (clipped to the stream) and the per-update statistics of src/core/stats.ts as columns
 * (webview/inspectUpdates.ts draws bars, robust z-score colours, sorting, CSV export). Click a
 * row → the update view.
 *
 * The statistics are computed on the extension host in chunks (a few updates per read, a yield
 * after every update, ~5 ms each), so the host never blocks; a new window or closing the panel
 * cancels the running one. With a run description in force (`src/orderService.ts`) the rows are
 * the run's steps: statistics through its training order (`computeRunUpdateStats`), the window
 * clipped to the run's updates.
 */
import * as crypto from 'crypto';
import * as path from 'path';
import * as vscode from 'vscode';
import type { Dataset } from '../core/dataset';
import { CancelledError } from '../core/errors';
import { fmt } from '../core/units';

import { AnyUpdateStats, STAT_COLUMNS, STAT_DEFINITIONS, computeRunUpdateStats } from '../core/stats';
import type { Services } from '../services';

import { PanelHost } from './panelHost';
import type { ChannelTaps } from '../editor/hostChannel';
import type { InspectInit, InspectProtocol, InspectState, StatColumnInfo } from '../protocol/workbench';

/** The panel's view type (and `onWebviewPanel:` activation event). */
export const INSPECT_VIEW_TYPE = 'tokenShards.inspectUpdates';
/** Default radius (updates each side). */
export const DEFAULT_RADIUS = 20;
/** Largest radius accepted (a window of 2,001 updates ≈ 10 s of work). */
export const MAX_RADIUS = 1000;
const ROOTS_KEY = 'tokenShards.inspectUpdates.roots';

/** What the command resolves with. */
export interface InspectResult {
  root: string;
  first: number;
  last: number;
  /** The card's {@link UpdateStats} records, or {@link OrderedUpdateStats} through a run's order. */
  records: AnyUpdateStats[];
}

/** The column list the webviews show. */
export function statColumnInfo(): StatColumnInfo[] {
  return STAT_COLUMNS.map((key) => ({ key, ...STAT_DEFINITIONS[key] }));
}

function datasetKey(root: string): string {
  return crypto.createHash('sha256').update(path.resolve(root)).digest('hex').slice(0, 16);
}

type Host = PanelHost<InspectProtocol>;

/** One inspect panel per dataset root. */
export class InspectPanels implements vscode.Disposable {
  private readonly panels = new Map<string, InspectPanel>();

  /** @param taps sees every message of every inspect panel's channel (tests). */
  constructor(
    private readonly services: Services,
    private readonly taps?: ChannelTaps,
  ) {}

  /** Revives a panel after a window reload from the webview's saved state (the serializer, registered by the composition root). */
  async revive(panel: vscode.WebviewPanel, state: InspectState | undefined): Promise<void> {
    const roots = this.services.context.globalState.get<Record<string, string>>(ROOTS_KEY, {});
    const root = state?.datasetKey ? roots[state.datasetKey] : undefined;
    if (!root || state?.center === undefined) {
      panel.dispose();
      return;
    }
    try {
      const ds = await this.services.openRoot(root);
      const host: Host = new PanelHost(panel, this.services.context.extensionUri, spec(), this.hostOptions(root));
      void this.adopt(ds, host)
        .show(state.center, state.radius ?? DEFAULT_RADIUS)
        .catch(() => undefined);
    } catch {
      panel.dispose();
    }
  }

  /** Opens (or reuses) the panel of `ds` and computes the window around `center`. */
  async open(ds: Dataset, center: number, radius: number): Promise<InspectResult> {
    let p = this.panels.get(ds.root);
    if (!p) {
      const host: Host = PanelHost.create(this.services.context.extensionUri, spec(), this.hostOptions(ds.root));
      p = this.adopt(ds, host);
      const roots = this.services.context.globalState.get<Record<string, string>>(ROOTS_KEY, {});
      void this.services.context.globalState.update(ROOTS_KEY, { ...roots, [datasetKey(ds.root)]: ds.root });
    } else {
      p.host.panel.reveal(undefined, false);
    }
    return p.show(center, radius);
  }

  private hostOptions(root: string) {
    return { resource: root, taps: this.taps, log: this.services.log, memory: this.services.context.globalState };
  }

  private adopt(ds: Dataset, host: Host): InspectPanel {
    const p = new InspectPanel(this.services, ds, host);
    this.panels.set(ds.root, p);
    host.onDidDispose(() => {
      if (this.panels.get(ds.root) === p) this.panels.delete(ds.root);
    });
    return p;
  }

  /** The open panel of a root (tests). */
  panelFor(root: string): InspectPanel | undefined {
    return this.panels.get(path.resolve(root));
  }

  dispose(): void {
    for (const p of this.panels.values()) p.host.dispose();
  }
}

function spec() {
  return { viewType: INSPECT_VIEW_TYPE, title: vscode.l10n.t('Inspect Updates'), script: 'inspectUpdates', styles: ['workbench.css'] };
}

/** One panel: the window on screen and the computation filling it. */
export class InspectPanel {
  private running?: AbortController;
  /** What the page shows (re-sent when the page reloads, e.g. a hidden panel revealed again). */
  private shown?: { init: InspectInit; rows: AnyUpdateStats[]; done: number; total: number };
  /** Resolves when the current window's records are all computed (tests). */
  current?: Promise<InspectResult>;

  constructor(
    private readonly services: Services,
    readonly ds: Dataset,
    readonly host: Host,
  ) {
    host.onMessage((m) => {
      switch (m.type) {
        case 'openUpdate':
          void vscode.commands.executeCommand('tokenShards.goToUpdate', { update: m.update, root: ds.root });
          break;
        case 'recenter':
          void this.show(m.center, m.radius).catch(() => undefined);
          break;
        case 'exportUpdates':
          void vscode.commands.executeCommand('tokenShards.exportUpdates', { first: m.first, last: m.last, root: ds.root });
          break;
      }
    });
    host.onDidDispose(() => this.running?.abort());
    // A hidden webview is discarded (no retainContextWhenHidden) and reloads when shown again:
    // messages posted meanwhile are lost, so every `ready` gets the whole picture again.
    host.onReady(() => {
      const v = this.shown;
      if (!v) return;
      host.post(v.init);
      if (v.rows.length) host.post({ type: 'rows', rows: v.rows, done: v.done, total: v.total });
    });
  }

  /**
   * Computes and shows updates `[center − radius, center + radius]` ∩ the run: its training
   * order's steps when a run description is in force (`src/orderService.ts`), else the stream's updates.
   */
  show(center: number, radius: number): Promise<InspectResult> {
    this.running?.abort();
    const ac = new AbortController();
    this.running = ac;
    const run = async (): Promise<InspectResult> => {
      const order = this.services.orders ? await this.services.orders.runOf(this.ds) : undefined;
      const n = order ? order.order.numUpdates : this.ds.schedule.numUpdates;
      center = Math.max(0, Math.min(n - 1, Math.floor(center)));
      radius = Math.max(0, Math.min(MAX_RADIUS, Math.floor(radius)));
      const first = Math.max(0, center - radius),
        last = Math.min(n - 1, center + radius);
      if (ac.signal.aborted) throw new CancelledError();
      this.host.panel.title = vscode.l10n.t('Updates {0}–{1}', fmt(first), fmt(last));
      const tok = await this.services.tokenizerFor(this.ds).catch(() => undefined);
      const init: InspectInit = {
        type: 'init',
        dataset: path.basename(this.ds.root),
        datasetKey: datasetKey(this.ds.root),
        numUpdates: n,
        center,
        radius,
        first,
        last,
        columns: statColumnInfo(),
        tokenizer: !!tok,
        order: order?.named.name,
      };
      const shown = { init, rows: [] as AnyUpdateStats[], done: 0, total: last - first + 1 };
      if (ac.signal.aborted) throw new CancelledError();
      this.shown = shown;
      this.host.post(init);
      let batch: AnyUpdateStats[] = [];
      let lastPost = 0;
      const total = last - first + 1;
      const records = await computeRunUpdateStats(this.ds, first, last, {
        order: order?.order,
        tokenizer: tok,
        signal: ac.signal,
        onRecord: (s) => {
          batch.push(s);
          shown.rows.push(s);
          const done = s.update - first + 1;
          shown.done = done;
          if (done === total || Date.now() - lastPost > 100) {
            this.host.post({ type: 'rows', rows: batch, done, total });
            batch = [];
            lastPost = Date.now();
          }
        },
      });
      return { root: this.ds.root, first, last, records };
    };
    this.current = run().catch((err) => {
      if (!(err instanceof CancelledError)) {
        this.host.post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
        this.services.log.error(`Inspect Updates: ${(err as Error).message}`);
      }
      throw err;
    });
    return this.current;
  }
}
