/**
 * The one panel pattern: a small host class around one `vscode.WebviewPanel`, used by every panel
 * that is not a custom editor (the update view, the search panel, the loss-spike workbench).
 *
 * What it does for a panel:
 * - builds the page through {@link webviewHtml} (strict CSP with a nonce; the script and styles from
 *   `dist/` and `media/` put inside the page; uPlot's stylesheet is `dist/media/uPlot.min.css`);
 * - the typed message channel — the one channel of every webview (`src/shared/channel.ts`, host
 *   end `src/editor/hostChannel.ts`), typed by the panel's `ViewProtocol` in `src/protocol/`:
 *   `post()` (host → webview events) waits for the webview's `ready`, then sends in order;
 *   requests from the webview are answered by the handlers given to {@link PanelHost.handle}
 *   (a thrown error's message becomes the response's error; a cancel aborts the handler's
 *   `AbortSignal`); {@link PanelHost.request} asks the webview; other events go to `onMessage`;
 *   every envelope is shown to the composition root's `ChannelTaps` (the extension-host tests);
 * - saving exports itself: the webview's `export` message (PNG from a canvas data URL, CSV/JSON
 *   text) goes through a save dialog ({@link PanelHost.saveExport}) and never reaches the panel —
 *   the webview never sees paths or writes files;
 * - disposal: everything registered with {@link PanelHost.track} is disposed with the panel.
 *
 * State restore: the webview keeps what it needs to redraw with `vscode.setState` (see
 * webview/shared/panel.ts); {@link registerPanelSerializer} revives panels after a window reload
 * from that state, so panels do not need `retainContextWhenHidden`.
 */
import * as vscode from 'vscode';
import { ChannelTaps, HostChannel } from '../editor/hostChannel';
import { webviewHtml, webviewOptions } from '../editor/webviewHtml';
import type { ExportMessage, PanelExport } from '../protocol/panel';
import type { RequestOptions, ViewProtocol } from '../shared/channel';
import { plainText } from '../core/untrusted';
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

/** How a {@link PanelHost} is wired to the rest of the host. */
export interface PanelHostOptions {
  /** Sees every message of the panel's channel (the composition root's; the extension-host tests record through it). */
  taps?: ChannelTaps;
  /** What the panel shows (a dataset root), named in tapped messages. */
  resource?: string;
  /** Where saved exports are logged. */
  log?: vscode.LogOutputChannel;
  /**
   * Where the folder of the last saved export is remembered (the extension's global state), so the
   * next save dialog opens there; without it the dialog still opens beside the dataset.
   */
  memory?: vscode.Memento;
}

/** A request handler: gets the request's params and an `AbortSignal` that fires on `cancel` or disposal. */
export type RequestHandler<Params, Result> = (params: Params, signal: AbortSignal) => Promise<Result> | Result;

/** The channel protocol a panel's page speaks: the panel's own plus the export every page may send. */
interface PageProtocol<P extends ViewProtocol> extends ViewProtocol {
  hostEvents: P['hostEvents'];
  webviewEvents: P['webviewEvents'] | ExportMessage;
  hostRequests: P['hostRequests'];
  webviewRequests: P['webviewRequests'];
}

/**
 * The host side of one webview panel, typed by the panel's channel protocol `P`
 * (`hostEvents` it posts, `webviewEvents` it receives, `hostRequests` it answers,
 * `webviewRequests` it asks).
 */
export class PanelHost<P extends ViewProtocol> implements vscode.Disposable {
  private queue: P['hostEvents'][] = [];
  private readonly channel: HostChannel<PageProtocol<P>>;
  private readonly handlers: Record<string, RequestHandler<unknown, unknown>> = {};
  private readonly disposables: vscode.Disposable[] = [];
  private readonly messageEmitter = new vscode.EventEmitter<P['webviewEvents']>();
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  private readonly disposeEmitter = new vscode.EventEmitter<void>();
  private disposed = false;

  /** Events from the webview (its exports are saved here and not passed on). */
  readonly onMessage = this.messageEmitter.event;
  /** Fires on every `ready` from the webview (first load and every reload of the page). */
  readonly onReady = this.readyEmitter.event;
  /** Fires once when the panel closes. */
  readonly onDidDispose = this.disposeEmitter.event;

  /**
   * Opens a new panel.
   * @param column where to open it (default: the active group).
   */
  static create<P extends ViewProtocol>(
    extensionUri: vscode.Uri,
    spec: PanelSpec,
    opts: PanelHostOptions & { column?: vscode.ViewColumn; preserveFocus?: boolean } = {},
  ): PanelHost<P> {
    const panel = vscode.window.createWebviewPanel(
      spec.viewType,
      spec.title,
      { viewColumn: opts.column ?? vscode.ViewColumn.Active, preserveFocus: opts.preserveFocus ?? false },
      webviewOptions(),
    );
    return new PanelHost<P>(panel, extensionUri, spec, opts);
  }

  /** Adopts a panel VS Code hands back to a serializer (or one created elsewhere) and loads the page into it. */
  constructor(
    readonly panel: vscode.WebviewPanel,
    readonly extensionUri: vscode.Uri,
    spec: PanelSpec,
    private readonly opts: PanelHostOptions = {},
  ) {
    panel.webview.options = webviewOptions();
    if (spec.iconPath) panel.iconPath = spec.iconPath;
    this.channel = new HostChannel<PageProtocol<P>>(
      panel.webview,
      {
        onReady: () => this.onPageReady(),
        onEvent: (m) => {
          if (isExport(m)) void this.saveAndSay(m.export);
          else this.messageEmitter.fire(m);
        },
        // Looked up per request, so handlers registered later with `handle` are found.
        requests: this.handlers as never,
      },
      { view: spec.viewType, resource: opts.resource, taps: opts.taps },
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

  /** Sends an event; queued (in order) until the webview is ready. Dropped after disposal. */
  post(msg: P['hostEvents']): void {
    if (this.disposed) return;
    if (!this.channel.ready) {
      this.queue.push(msg);
      return;
    }
    void this.channel.notify(msg);
  }

  /**
   * Answers requests `method` from the webview. The handler's result is sent back as the
   * response; a thrown error's message is sent as the response's error (and not logged here).
   */
  handle<M extends keyof P['hostRequests'] & string>(
    method: M,
    handler: RequestHandler<P['hostRequests'][M]['params'], P['hostRequests'][M]['result']>,
  ): void {
    this.handlers[method] = handler as RequestHandler<unknown, unknown>;
  }

  /**
   * Asks the webview (once it is ready) and resolves with its answer.
   * @throws ChannelError when the webview's handler failed, or the request was cancelled (signal,
   *   page reloaded, panel closed).
   */
  request<M extends keyof P['webviewRequests'] & string>(
    method: M,
    params: P['webviewRequests'][M]['params'],
    opts?: RequestOptions,
  ): Promise<P['webviewRequests'][M]['result']> {
    return this.channel.request(method, params, opts);
  }

  /** Disposes `d` with the panel. */
  track<T extends vscode.Disposable>(d: T): T {
    this.disposables.push(d);
    return d;
  }

  /**
   * Asks where to save an export from the webview and writes it. PNG data comes as a
   * `data:image/png;base64,…` URL; text as UTF-8. The dialog opens beside the dataset, not in it,
   * or in the last folder saved into ({@link askSaveLocation}, remembered in the options' `memory`).
   * Resolves with the file written, or undefined when the user cancelled the dialog.
   * @throws Error when the data URL is not a PNG, or the write fails.
   */
  async saveExport(e: PanelExport): Promise<vscode.Uri | undefined> {
    const filters: Record<string, string[]> =
      e.format === 'png' ? { 'PNG image': ['png'] } : e.format === 'csv' ? { CSV: ['csv'] } : { JSON: ['json'] };
    const safeName = e.fileName.replace(/[^\w.,+-]+/g, '_').slice(0, 120) || 'export';
    const target = await askSaveLocation(this.opts.memory, safeName, { filters, title: vscode.l10n.t('Save {0}', e.format.toUpperCase()) });
    if (!target) return undefined;
    await vscode.workspace.fs.writeFile(target, exportBytes(e));
    return target;
  }

  /** The webview's `export`: saved through the dialog, then said (or the error shown). */
  private async saveAndSay(e: PanelExport): Promise<void> {
    const what = vscode.l10n.t('Export {0}', e.format.toUpperCase());
    try {
      const uri = await this.saveExport(e);
      if (!uri) return;
      this.opts.log?.info(`${this.panel.viewType}: exported ${e.format} to ${uri.fsPath}`);
      void vscode.window.showInformationMessage(vscode.l10n.t('Saved {0}', plainText(uri.fsPath)));
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      this.opts.log?.error(`${what}: ${msg}`);
      void vscode.window.showErrorMessage(`${what}: ${plainText(msg)}`);
    }
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

function isExport(m: { type: string }): m is ExportMessage {
  return m.type === 'export';
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
