/**
 * The `.u32` shard custom editor (`tokenShards.shardEditor`, read-only, priority default).
 * The host side of the webview: serves pages on request (ranged reads, decoded with the core
 * tokenizer), forwards document numbering, tracks the focused editor's cursor for the status
 * bar and for other features ({@link Services.setActiveShard}), and exposes
 * {@link revealInShardEditor} for navigation commands.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { Dataset } from '../core/dataset';
import { fmt } from '../core/errors';
import type {
  ShardFromWebview, ShardHighlight, ShardToWebview, ShardView,
} from '../protocol';
import type { Services } from '../services';
import { ShardDocument } from './shardDocument';
import { ShardStatusBar } from './statusBar';
import { webviewHtml, webviewOptions } from './webviewHtml';
import { registerCopyIds } from '../commands/copyIds';
import { registerHighlightUpdate, updateHighlights } from '../commands/highlightUpdate';
import { plainText } from '../text/untrusted';

/** The custom editor's view type (package.json `customEditors`). */
export const SHARD_EDITOR_VIEW_TYPE = 'tokenShards.shardEditor';

/** Test-only command: snapshot of the open shard editors and (when recording) the messages posted to them. */
export const TEST_COMMAND = 'tokenShards._test.shardEditor';

/** One shard editor tab: a webview panel on a {@link ShardDocument}. */
export class ShardSession implements vscode.Disposable {
  private ready = false;
  private readyWaiters: (() => void)[] = [];
  private pendingReveal?: { offset: number; highlights?: ShardHighlight[]; align?: 'top' | 'third' };
  private readonly disposables: vscode.Disposable[] = [];
  /** Local offset of the cursor. */
  cursor = 0;
  /** Local selected range `[start, end)`. */
  selection?: [number, number];
  /** Document number at the cursor, as the webview computed it. */
  documentNumber?: number;
  documentScope?: 'global' | 'shard';
  view: ShardView = 'documents';
  /** Current highlights (local ranges). */
  highlights: ShardHighlight[] = [];
  /** Update highlighted by `tokenShards.highlightUpdate` (follows the cursor), or undefined when off. */
  highlightedUpdate?: number;
  /** Messages posted, newest last (only while the provider records, for tests). */
  readonly recorded: ShardToWebview[] = [];
  /** Pages posted since the last init. */
  pagesSent = 0;
  /** Page requests not started yet, oldest first (served newest first: the view moved on). */
  private readonly queue = new Map<number, number>();
  private serving = 0;

  constructor(readonly provider: ShardEditorProvider, readonly document: ShardDocument, readonly panel: vscode.WebviewPanel) {
    const ext = provider.services.context.extensionUri;
    panel.webview.options = webviewOptions(ext);
    panel.webview.html = webviewHtml(panel.webview, ext, { script: 'shardEditor', title: vscode.l10n.t('Token shard {0}', path.basename(document.uri.fsPath)), style: 'shardEditor.css' });
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: ShardFromWebview) => this.onMessage(m)),
      // A hidden webview loses its page (no retainContextWhenHidden); posts to it fail and it
      // sends 'ready' again when shown, which re-sends everything.
      panel.onDidChangeViewState(() => provider.focusChanged(this)),
      document.onDidReload(() => { this.pagesSent = 0; void this.post(document.initMessage()); void this.post(document.numbering); void this.post({ type: 'highlights', highlights: this.highlights }); }),
      document.onDidChangeNumbering((m) => void this.post(m)),
    );
  }

  /** Resolves once the webview script has said it is ready. */
  whenReady(): Promise<void> {
    return this.ready ? Promise.resolve() : new Promise((r) => this.readyWaiters.push(r));
  }

  /**
   * Posts a message; resolves false when it was not delivered (webview not ready yet, or hidden
   * and unloaded: the next 'ready' re-sends the state).
   */
  post(msg: ShardToWebview): Promise<boolean> {
    if (this.provider.recording) {
      // Bounded (page messages are large); the non-page messages (reveal, highlights, init…)
      // are few and are kept, so a burst of pages or scan progress never pushes them out.
      this.recorded.push(msg);
      if (this.recorded.length > 200) {
        const drop = this.recorded.length - 200;
        let dropped = 0;
        for (let i = 0; i < this.recorded.length && dropped < drop;) {
          if (this.recorded[i].type === 'page' || this.recorded[i].type === 'numbering') { this.recorded.splice(i, 1); dropped++; } else i++;
        }
        if (this.recorded.length > 400) this.recorded.splice(0, this.recorded.length - 400);
      }
    }
    if (!this.ready) return Promise.resolve(false);
    return Promise.resolve(this.panel.webview.postMessage(msg)).then((ok) => ok, () => false);
  }

  /** Scrolls to local `offset` (placed per `align`), puts the cursor there and (when given) replaces the highlights. */
  reveal(offset: number, highlights?: ShardHighlight[], align?: 'top' | 'third'): void {
    if (highlights) { this.highlights = highlights; this.highlightedUpdate = undefined; }
    this.cursor = offset;
    this.provider.focusChanged(this);
    // `align` only when asked for, so a plain reveal message stays { type, offset, highlights }.
    const pending = { offset, highlights, ...(align ? { align } : {}) };
    this.pendingReveal = pending;
    if (!this.ready) return;
    void this.post({ type: 'reveal', ...pending }).then((ok) => {
      if (ok && this.pendingReveal === pending) this.pendingReveal = undefined;
    });
  }

  /** Replaces the highlights. */
  setHighlights(highlights: ShardHighlight[]): void {
    this.highlights = highlights;
    this.post({ type: 'highlights', highlights });
  }

  /** Global offset of the cursor (local for a lone shard). */
  get cursorGlobal(): number {
    return this.document.toGlobal(this.cursor);
  }

  private onMessage(m: ShardFromWebview): void {
    switch (m.type) {
      case 'ready': {
        this.ready = true;
        this.pagesSent = 0;
        this.queue.clear();
        this.post(this.document.initMessage());
        this.post(this.document.numbering);
        if (this.highlights.length) this.post({ type: 'highlights', highlights: this.highlights });
        if (this.pendingReveal) {
          const r = this.pendingReveal;
          void this.post({ type: 'reveal', ...r }).then((ok) => { if (ok && this.pendingReveal === r) this.pendingReveal = undefined; });
        }
        for (const w of this.readyWaiters.splice(0)) w();
        break;
      }
      case 'requestPage': {
        this.queue.delete(m.index);
        this.queue.set(m.index, m.generation);
        this.pump();
        break;
      }
      case 'cancelPage': this.queue.delete(m.index); break;
      case 'cursor': {
        this.cursor = m.offset;
        this.documentNumber = m.document;
        this.documentScope = m.documentScope;
        this.view = m.view;
        if (this.highlightedUpdate !== undefined) updateHighlights(this, false);
        this.provider.focusChanged(this);
        break;
      }
      case 'selection': {
        this.selection = m.range;
        this.provider.focusChanged(this);
        break;
      }
      case 'run': {
        const cmd = {
          chooseTokenizer: 'tokenShards.chooseTokenizer', copyIds: 'tokenShards.copyIds',
          highlightUpdate: 'tokenShards.highlightUpdate', copyText: 'tokenShards._copyShardText',
        }[m.command as string];
        if (m.command === 'countEarlierDocuments') this.document.countEarlierDocuments();
        else if (m.command === 'openNextShard' || m.command === 'openPrevShard') this.openNeighbour(m.command === 'openNextShard');
        else if (cmd) void vscode.commands.executeCommand(cmd).then(undefined, (err: Error) => {
          void vscode.window.showErrorMessage(vscode.l10n.t('{0} failed: {1}', plainText(cmd), plainText(err.message)));
        });
        break;
      }
    }
  }

  /**
   * Opens the dataset's next shard at its first token (or the previous one at its last token):
   * the end-of-shard and start-of-shard markers' buttons.
   */
  private openNeighbour(next: boolean): void {
    const st = this.document.state;
    const ds = st.entry ? st.dataset : undefined;
    if (!ds || st.globalStart === undefined) return;
    const offset = next ? st.globalStart + st.numTokens : st.globalStart - 1;
    if (offset < 0 || offset >= ds.storedTokens) return;
    void revealInShardEditor(this.provider.services, { dataset: ds, offset }).then(undefined, (err: Error) => {
      void vscode.window.showErrorMessage(vscode.l10n.t('Could not open the {0} shard: {1}', next ? vscode.l10n.t('next') : vscode.l10n.t('previous'), plainText(err.message)));
    });
  }

  /** Serves queued page requests, newest first, two at a time. */
  private pump(): void {
    while (this.serving < 2 && this.queue.size > 0) {
      const [index, generation] = [...this.queue.entries()].pop()!;
      this.queue.delete(index);
      this.serving++;
      void this.servePage(generation, index).finally(() => { this.serving--; this.pump(); });
    }
  }

  private async servePage(generation: number, index: number): Promise<void> {
    const doc = this.document;
    if (generation !== doc.generation) return;
    try {
      const payload = await doc.state.pages.page(index);
      if (generation !== doc.generation) return;
      this.post({ type: 'page', generation, ...payload });
      this.pagesSent++;
      doc.startNumbering();
    } catch (err) {
      if (generation !== doc.generation) return;
      this.provider.services.log.warn(`page ${index} of ${doc.uri.fsPath}: ${(err as Error).message}`);
      this.post({ type: 'pageError', generation, index, message: (err as Error).message });
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** The custom editor provider; one per extension activation. */
export class ShardEditorProvider implements vscode.CustomReadonlyEditorProvider<ShardDocument>, vscode.Disposable {
  readonly sessions = new Set<ShardSession>();
  /** The focused shard editor, if any. */
  active?: ShardSession;
  /** The shard editor focused last (commands run from the palette use it when focus moved). */
  lastActive?: ShardSession;
  /** When true, sessions keep the messages they post (tests only). */
  recording = false;
  readonly statusBar = new ShardStatusBar();
  private readonly sessionOpened = new vscode.EventEmitter<ShardSession>();

  constructor(readonly services: Services) {}

  async openCustomDocument(uri: vscode.Uri): Promise<ShardDocument> {
    return ShardDocument.open(uri, this.services);
  }

  async resolveCustomEditor(document: ShardDocument, panel: vscode.WebviewPanel): Promise<void> {
    const session = new ShardSession(this, document, panel);
    this.sessions.add(session);
    panel.onDidDispose(() => {
      this.sessions.delete(session);
      session.dispose();
      if (this.lastActive === session) this.lastActive = undefined;
      if (this.active === session) { this.active = undefined; this.publishActive(); }
    });
    this.sessionOpened.fire(session);
    this.focusChanged(session);
  }

  /** A session for the file (the focused one first), if open. */
  sessionFor(uri: vscode.Uri): ShardSession | undefined {
    const key = path.resolve(uri.fsPath);
    const all = [...this.sessions].filter((s) => path.resolve(s.document.uri.fsPath) === key);
    return all.find((s) => s === this.active) ?? all.find((s) => s === this.lastActive) ?? all[0];
  }

  /** Resolves with the next session opened on `uri` once its webview is ready. */
  waitForSession(uri: vscode.Uri, timeoutMs: number): Promise<ShardSession> {
    const key = path.resolve(uri.fsPath);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { sub.dispose(); reject(new Error(vscode.l10n.t('The shard editor did not open {0} within {1} s.', uri.fsPath, timeoutMs / 1000))); }, timeoutMs);
      const sub = this.sessionOpened.event((s) => {
        if (path.resolve(s.document.uri.fsPath) !== key) return;
        sub.dispose();
        clearTimeout(timer);
        void s.whenReady().then(() => resolve(s));
      });
    });
  }

  /** Called when a session's focus, cursor or selection changed. */
  focusChanged(session: ShardSession): void {
    if (session.panel.active) {
      this.active = session;
      this.lastActive = session;
    } else if (this.active === session) {
      this.active = undefined;
    }
    if (this.active === session || this.active === undefined) this.publishActive();
  }

  private publishActive(): void {
    const s = this.active;
    if (!s) {
      this.statusBar.hide();
      this.services.setActiveShard(undefined);
      return;
    }
    const st = s.document.state;
    const ds = st.entry ? st.dataset : undefined;
    const g = st.globalStart;
    const global = g !== undefined ? g + s.cursor : undefined;
    const sel = s.selection ? [s.document.toGlobal(s.selection[0]), s.document.toGlobal(s.selection[1])] as [number, number] : undefined;
    this.statusBar.show({
      fileName: path.basename(st.file), local: s.cursor, global,
      position: ds && global !== undefined ? ds.schedule.position(global) : undefined,
      document: s.documentNumber, documentScope: s.documentScope, selection: sel,
    });
    this.services.setActiveShard({ uri: s.document.uri, dataset: ds, offset: s.document.toGlobal(s.cursor), selection: sel });
  }

  /** The session commands act on: the focused shard editor, else the one focused last. */
  commandTarget(): ShardSession | undefined {
    return this.active ?? (this.lastActive && this.sessions.has(this.lastActive) ? this.lastActive : undefined);
  }

  dispose(): void {
    this.statusBar.dispose();
    this.sessionOpened.dispose();
  }
}

let provider: ShardEditorProvider | undefined;

/** Argument of the test-only command {@link TEST_COMMAND}; every field optional. */
export interface TestCommandArg {
  /** Start/stop keeping posted messages. */
  record?: boolean;
  /** Forget kept messages. */
  clear?: boolean;
  /** Call {@link revealInShardEditor}: `global` = offset is global in the file's dataset. */
  reveal?: { file: string; offset: number; global?: boolean; highlight?: { start: number; end: number; label?: string }[] };
  /** Switch the focused shard editor's view. */
  setView?: ShardView;
}

/**
 * Registers the shard editor, its status bar item, `tokenShards.copyIds`,
 * `tokenShards.highlightUpdate`, and the test-only command {@link TEST_COMMAND}.
 */
export function registerShardEditor(context: vscode.ExtensionContext, services: Services): ShardEditorProvider {
  const p = new ShardEditorProvider(services);
  provider = p;
  context.subscriptions.push(
    p,
    vscode.window.registerCustomEditorProvider(SHARD_EDITOR_VIEW_TYPE, p, {
      supportsMultipleEditorsPerDocument: true,
      webviewOptions: { retainContextWhenHidden: false },
    }),
    vscode.commands.registerCommand(TEST_COMMAND, async (arg?: TestCommandArg) => {
      if (arg?.record !== undefined) p.recording = arg.record;
      if (arg?.clear) for (const s of p.sessions) s.recorded.length = 0;
      if (arg?.reveal) {
        const file = vscode.Uri.file(arg.reveal.file);
        const dataset = arg.reveal.global ? await services.datasetForFile(file) : undefined;
        await revealInShardEditor(services, { dataset, file: dataset ? undefined : file, offset: arg.reveal.offset, highlight: arg.reveal.highlight });
      }
      if (arg?.setView) p.commandTarget()?.post({ type: 'setView', view: arg.setView });
      return [...p.sessions].map((s) => ({
        uri: s.document.uri.toString(), fileName: path.basename(s.document.uri.fsPath), active: s === p.active,
        generation: s.document.generation, cursor: s.cursor, selection: s.selection, view: s.view,
        highlights: s.highlights, highlightedUpdate: s.highlightedUpdate, numbering: s.document.numbering,
        init: s.document.initMessage(),
        statusText: s === p.active ? p.statusBar.text : undefined, messages: [...s.recorded],
      }));
    }),
  );
  registerCopyIds(context, p);
  registerHighlightUpdate(context, p);
  return p;
}

/**
 * Opens (or focuses) the shard editor on the shard holding `target.offset`, scrolls so the
 * offset is visible, puts the cursor there and applies `target.highlight`.
 *
 * @param target.dataset when given, `offset` and highlight ranges are **global** token offsets
 *   and the shard is found with `dataset.stream.locate`.
 * @param target.file without a dataset: the `.u32` file; `offset` and ranges are **local**.
 * @param target.highlight ranges `[start, end)` in the same terms as `offset`; they replace the
 *   editor's highlights (clipped to the shard; ranges outside it are dropped).
 * @param target.viewColumn where to open the shard when it is not open yet (default: the active
 *   group; e.g. `ViewColumn.Beside` keeps the caller's view visible). An open editor is revealed where it is.
 * @param target.preserveFocus keep the focus where it is.
 * @param target.align 'top' puts the offset on the first visible line (for a document's or a
 *   sequence's start); 'third' (default) a third of the way down, with context above.
 * @throws RangeRequestError when a global offset is outside the dataset's stream; Error when
 *   neither dataset nor file is given, the editor is not registered, or it did not open in 15 s.
 */
export async function revealInShardEditor(services: Services, target: {
  dataset?: Dataset; file?: vscode.Uri; offset: number; highlight?: { start: number; end: number; label?: string }[];
  viewColumn?: vscode.ViewColumn; preserveFocus?: boolean; align?: 'top' | 'third';
}): Promise<void> {
  const p = provider;
  if (!p) throw new Error('The shard editor is not registered (registerShardEditor was not called).');
  let uri: vscode.Uri, local: number, base = 0;
  if (target.dataset) {
    const loc = target.dataset.stream.locate(target.offset);
    const seg = target.dataset.stream.segments[loc.segment];
    uri = vscode.Uri.file(seg.path);
    local = loc.localToken;
    base = seg.startToken;
  } else if (target.file) {
    uri = target.file;
    local = target.offset;
  } else {
    throw new Error('revealInShardEditor needs a dataset (global offset) or a file (local offset).');
  }
  let session = p.sessionFor(uri);
  if (session) {
    session.panel.reveal(session.panel.viewColumn, target.preserveFocus ?? false);
  } else {
    const waiter = p.waitForSession(uri, 15_000);
    const options: vscode.TextDocumentShowOptions = { preserveFocus: target.preserveFocus ?? false, viewColumn: target.viewColumn };
    await vscode.commands.executeCommand('vscode.openWith', uri, SHARD_EDITOR_VIEW_TYPE, options);
    session = p.sessionFor(uri) ?? await waiter;
    waiter.catch(() => undefined);
  }
  const n = session.document.state.numTokens;
  const highlights = target.highlight
    ?.map((hl) => ({ start: Math.max(0, hl.start - base), end: Math.min(n, hl.end - base), label: hl.label }))
    .filter((hl) => hl.end > hl.start);
  session.reveal(Math.max(0, Math.min(local, Math.max(0, n - 1))), highlights, target.align);
  if (highlights && target.dataset) {
    // New highlights replace the old ones everywhere in the dataset: another shard's editor must
    // not keep saying "Highlighted: update 3 …" once the user went to another update.
    const root = target.dataset.root;
    for (const other of p.sessions) {
      const ods = other.document.state.dataset;
      if (other !== session && ods && ods.root === root && other.highlightedUpdate === undefined && other.highlights.length) other.setHighlights([]);
    }
  }
  services.log.info(`revealed ${target.dataset ? 'global' : 'local'} offset ${fmt(target.offset)} in ${uri.fsPath}`);
}

/** The registered provider (for the commands in src/commands/ and tests). */
export function shardEditorProvider(): ShardEditorProvider | undefined {
  return provider;
}
