/**
 * The panel pattern shared by the search panel and the loss-spike workbench: a small host class
 * around one `vscode.WebviewPanel`.
 *
 * What it does for a panel:
 * - builds the page through {@link webviewHtml} (strict CSP with a nonce; the script and styles from
 *   `dist/` and `media/` put inside the page; uPlot's stylesheet is `dist/media/uPlot.min.css`);
 * - the typed message channel — the one channel of every webview (`src/shared/channel.ts`, host
 *   end `src/editor/hostChannel.ts`): `post()` (host → webview) waits for the webview's `ready`,
 *   then sends in order; `request`s from the webview are answered with a response carrying the
 *   same id (or the error's message), and a cancel aborts the handler's `AbortSignal`; other
 *   messages go to `onMessage`;
 * - saving exports (PNG from a canvas data URL, CSV/JSON text) through a save dialog
 *   ({@link PanelHost.saveExport}) — the webview never sees paths or writes files;
 * - disposal: everything registered with {@link PanelHost.track} is disposed with the panel.
 *
 * State restore: the webview keeps what it needs to redraw with `vscode.setState` (see
 * webview/shared/panel.ts); {@link registerPanelSerializer} revives panels after a window reload
 * from that state, so panels do not need `retainContextWhenHidden`.
 *
 * The panel-level types (request map, exports) are in src/panels/panelProtocol.ts; the envelope
 * is the channel's.
 */
import * as vscode from 'vscode';
import { ChannelTaps, HostChannel } from '../editor/hostChannel';
import { webviewHtml, webviewOptions } from '../editor/webviewHtml';
import { PanelExport, PanelRequestMap, PanelViewProtocol } from './panelProtocol';
import { askSaveLocation } from './saveLocation';

/** What a panel looks like: its view type, title and the bundle/styles of its page. */
export interface PanelSpec {
  /** `WebviewPanel` view type (also an `onWebviewPanel:` activation event when it has a serializer). */
  viewType: string;
  /** Tab title. */
  title: string;
  /** Bundle name in `dist/webview/` without `.js`. */
  script: string;
  /** Stylesheets: `media/<name>` unless the name starts with `dist/` (e.g. `dist/media/uPlot.min.css`). */
  styles?: string[];
  /** Tab icon (a codicon is not possible for panels; a file under `media/`). */
  iconPath?: vscode.Uri;
}

/** A request handler: gets the request's payload and an `AbortSignal` that fires on `cancel` or disposal. */
export type RequestHandler<Req, Res> = (payload: Req, signal: AbortSignal) => Promise<Res> | Res;

/**
 * The host side of one webview panel.
 * @typeParam ToWebview  union of the messages the host sends (each with a `type`).
 * @typeParam FromWebview union of the plain messages the webview sends (each with a `type`).
 * @typeParam Requests   map of request type → `{ req, res }` the webview may ask for.
 */
export class PanelHost<
  ToWebview extends { type: string },
  FromWebview extends { type: string },
  Requests extends PanelRequestMap = PanelRequestMap,
>
  implements vscode.Disposable
{
  private queue: ToWebview[] = [];
  private readonly channel: HostChannel<PanelViewProtocol<ToWebview, FromWebview, Requests>>;
  private readonly handlers: Record<string, RequestHandler<unknown, unknown>> = {};
  private readonly disposables: vscode.Disposable[] = [];
  private readonly messageEmitter = new vscode.EventEmitter<FromWebview>();
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  private readonly disposeEmitter = new vscode.EventEmitter<void>();
  private disposed = false;

  /** Plain (non-request) messages from the webview. */
  readonly onMessage = this.messageEmitter.event;
  /** Fires on every `ready` from the webview (first load and every reload of the page). */
  readonly onReady = this.readyEmitter.event;
  /** Fires once when the panel closes. */
  readonly onDidDispose = this.disposeEmitter.event;

  /**
   * Opens a new panel.
   * @param column where to open it (default: the active group).
   */
  static create<T extends { type: string }, F extends { type: string }, R extends PanelRequestMap = PanelRequestMap>(
    extensionUri: vscode.Uri,
    spec: PanelSpec,
    column: vscode.ViewColumn = vscode.ViewColumn.Active,
    preserveFocus = false,
    taps?: ChannelTaps,
  ): PanelHost<T, F, R> {
    const panel = vscode.window.createWebviewPanel(spec.viewType, spec.title, { viewColumn: column, preserveFocus }, webviewOptions());
    return new PanelHost<T, F, R>(panel, extensionUri, spec, taps);
  }

  /**
   * Adopts a panel VS Code hands back to a serializer (or one created elsewhere) and loads the page into it.
   * @param taps sees every message of the panel's channel (tests; the composition root's `ChannelTaps`).
   */
  constructor(
    readonly panel: vscode.WebviewPanel,
    readonly extensionUri: vscode.Uri,
    spec: PanelSpec,
    taps?: ChannelTaps,
  ) {
    panel.webview.options = webviewOptions();
    if (spec.iconPath) panel.iconPath = spec.iconPath;
    this.channel = new HostChannel<PanelViewProtocol<ToWebview, FromWebview, Requests>>(
      panel.webview,
      {
        onReady: () => this.onPageReady(),
        onEvent: (m) => this.messageEmitter.fire(m),
        // Looked up per request, so handlers registered later with `handle` are found.
        requests: this.handlers as never,
      },
      { view: spec.viewType, taps },
    );
    panel.webview.html = webviewHtml(extensionUri, { script: spec.script, title: spec.title, styles: spec.styles });
    this.disposables.push(
      this.channel,
      panel.onDidDispose(() => this.dispose()),
      this.messageEmitter,
      this.readyEmitter,
    );
  }

  /** True once the webview said `ready` (and until its page reloads). */
  get isReady(): boolean {
    return this.channel.ready;
  }

  /** Resolves when the webview is ready (at once when it is). */
  whenReady(): Promise<void> {
    return this.channel.whenReady();
  }

  /** Sends a message; queued (in order) until the webview is ready. Dropped after disposal. */
  post(msg: ToWebview): void {
    if (this.disposed) return;
    if (!this.channel.ready) {
      this.queue.push(msg);
      return;
    }
    void this.channel.notify(msg);
  }

  /**
   * Answers requests of `type` from the webview. The handler's result is sent back as the
   * response; a thrown error's message is sent as the response's error (and not logged here).
   */
  handle<K extends keyof Requests & string>(type: K, handler: RequestHandler<Requests[K]['req'], Requests[K]['res']>): void {
    this.handlers[type] = handler as RequestHandler<unknown, unknown>;
  }

  /** Disposes `d` with the panel. */
  track<T extends vscode.Disposable>(d: T): T {
    this.disposables.push(d);
    return d;
  }

  /**
   * Asks where to save an export from the webview and writes it. PNG data comes as a
   * `data:image/png;base64,…` URL; text as UTF-8. The dialog opens beside the dataset, not in it,
   * or in the last folder saved into ({@link askSaveLocation}; `memory` is the extension's global
   * state). Resolves with the file written, or undefined when the user cancelled the dialog.
   * @throws Error when the data URL is not a PNG, or the write fails.
   */
  async saveExport(e: PanelExport, memory: vscode.Memento): Promise<vscode.Uri | undefined> {
    const filters: Record<string, string[]> =
      e.format === 'png' ? { 'PNG image': ['png'] } : e.format === 'csv' ? { CSV: ['csv'] } : { JSON: ['json'] };
    const safeName = e.fileName.replace(/[^\w.,+-]+/g, '_').slice(0, 120) || 'export';
    const target = await askSaveLocation(memory, safeName, { filters, title: vscode.l10n.t('Save {0}', e.format.toUpperCase()) });
    if (!target) return undefined;
    await vscode.workspace.fs.writeFile(target, exportBytes(e));
    return target;
  }

  /** The page (re)loaded: send what was queued, then tell the panel (it re-sends its state). */
  private onPageReady(): void {
    const q = this.queue;
    this.queue = [];
    for (const msg of q) void this.channel.notify(msg);
    this.readyEmitter.fire();
  }

  /** Closes the panel (if open) and releases everything tracked. Safe to call twice. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.disposeEmitter.fire();
    this.disposeEmitter.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
  }
}

/** The bytes of an export (see {@link PanelHost.saveExport}). @throws Error for a PNG that is not a PNG data URL. */
export function exportBytes(e: PanelExport): Uint8Array {
  if (e.format === 'png') {
    const m = /^data:image\/png;base64,([A-Za-z0-9+/=]+)$/.exec(e.data);
    if (!m) throw new Error('the chart image is not a PNG data URL');
    return Buffer.from(m[1], 'base64');
  }
  return Buffer.from(e.data, 'utf8');
}

/**
 * Registers a serializer that revives panels of `viewType` after a window reload. `revive` gets
 * the panel and the state the webview last saved with `setState` (undefined when none); it
 * should adopt the panel with `new PanelHost(panel, …)` or dispose it.
 */
export function registerPanelSerializer<S>(
  viewType: string,
  revive: (panel: vscode.WebviewPanel, state: S | undefined) => Promise<void> | void,
): vscode.Disposable {
  return vscode.window.registerWebviewPanelSerializer(viewType, {
    deserializeWebviewPanel: async (panel, state) => {
      await revive(panel, (state ?? undefined) as S | undefined);
    },
  });
}
