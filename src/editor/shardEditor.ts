/**
 * The shard custom editor (`tokenShards.shardEditor`, read-only, priority default for `.u32`,
 * Megatron `.idx` and datatrove `.ds`; `tokenShards.tokenFileEditor`, the same editor as an option
 * for `.bin`, `.npy` and `.mds`). It shows one token file of any storage format.
 * The host side of the webview: serves pages on request (ranged reads, decoded with the core
 * tokenizer), forwards document numbering, tracks the focused editor's cursor for the status
 * bar and for other features ({@link Services.setActiveShard}), and reveals offsets for the
 * navigation commands ({@link ShardEditorProvider.reveal}). Built once by the composition root
 * (`src/extension.ts`), which registers it and the commands acting on it.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { Dataset } from '../core/dataset';
import { PAGE_TOKENS } from '../core/pages';
import { count, fmt } from '../core/units';
import type {
  ShardEditorProtocol,
  ShardFromWebview,
  ShardHighlight,
  ShardPageReply,
  ShardRunOrder,
  ShardTimingFromWebview,
  ShardToWebview,
  ShardView,
} from '../protocol/shard';
import type { Services } from '../services';
import { ChannelError } from '../shared/channel';
import { updateHighlights } from './updateHighlight';
import { ChannelTaps, HostChannel } from './hostChannel';
import { ShardDocument } from './shardDocument';
import { ShardStatusBar, ShardStatusInfo } from './statusBar';
import { OrderCursor } from './orderCursor';
import type { OrderView } from '../core/order/orderClient';
import { webviewHtml, webviewOptions } from './webviewHtml';
import { plainText } from '../core/untrusted';

/** Delay after activation before the workspace's datasets and tokenizers are loaded ahead of the first open (ms). */
const WARM_UP_DELAY_MS = 2_000;
/** How long `init` waits for the starting page read ahead for it (ms); a slower read is asked for by the webview as usual. */
const FIRST_PAGE_WAIT_MS = 1_000;
/** After how long a webview that has not said `ready` is logged as not loading (ms). */
const WEBVIEW_LOAD_WARN_MS = 10_000;
/** Datasets warmed up at most (a workspace of many datasets loads the rest on use). */
const WARM_UP_MAX_DATASETS = 3;

/** The custom editor's view type (package.json `customEditors`). */
export const SHARD_EDITOR_VIEW_TYPE = 'tokenShards.shardEditor';

/**
 * The same editor for generic extensions (`.bin`, `.npy`, `.mds`), priority `option` with an
 * offer (`editor/tokenFileOffer.ts`): package.json registers a view type per priority.
 */
export const TOKEN_FILE_EDITOR_VIEW_TYPE = 'tokenShards.tokenFileEditor';

/** Where {@link ShardEditorProvider.reveal} goes (see there). */
export interface ShardRevealTarget {
  dataset?: Dataset;
  file?: vscode.Uri;
  offset: number;
  highlight?: { start: number; end: number; label?: string }[];
  viewColumn?: vscode.ViewColumn;
  preserveFocus?: boolean;
  align?: 'top' | 'third';
}

/**
 * A reveal asked for before its editor existed (local offset, highlight ranges in local terms, not
 * clipped yet): the session created for that file starts there, so its first state (status bar,
 * cursor line, first page) is already the target, never the shard's first token.
 */
export interface InitialReveal {
  offset: number;
  highlights?: ShardHighlight[];
  align?: 'top' | 'third';
  /** Set by the provider when a new session took it. */
  session?: ShardSession;
}

/** One shard editor tab: a webview panel on a {@link ShardDocument}. */
export class ShardSession implements vscode.Disposable {
  /** The channel to the webview (events, page requests, the ready handshake). */
  readonly channel: HostChannel<ShardEditorProtocol>;
  private pendingReveal?: { offset: number; highlights?: ShardHighlight[]; align?: 'top' | 'third' };
  private readonly disposables: vscode.Disposable[] = [];
  /** Local offset of the cursor. */
  cursor = 0;
  /** Local selected range `[start, end)`. */
  selection?: [number, number];
  /** Document number at the cursor, as the webview computed it. */
  documentNumber?: number;
  documentScope?: 'global' | 'shard';
  /**
   * The last cursor position the webview confirmed, with its document: the status bar shows
   * only this, so it never shows a half-known state (a revealed offset with the previous
   * cursor's document number, or a position the view passed on its way).
   */
  reported?: { offset: number; document?: number; documentScope?: 'global' | 'shard'; documentPending?: boolean };
  /** Local offset of a reveal the webview has not confirmed yet: cursor reports from before it are stale. */
  awaitingReveal?: number;
  view: ShardView = 'documents';
  /** Current highlights (local ranges). */
  highlights: ShardHighlight[] = [];
  /** Update highlighted by `tokenShards.highlightUpdate` (follows the cursor), or undefined when off. */
  highlightedUpdate?: number;
  /** The run's training order at the cursor (cursor line, status bar, update highlight). */
  readonly order: OrderCursor;
  /** The run's order last sent to the webview (`order` event), re-sent on `ready`. */
  private orderSent?: ShardRunOrder;
  /** Pages sent since the last init. */
  pagesSent = 0;
  /**
   * When each host-side step of this editor's open happened (epoch ms), for the one timing line
   * logged when the webview reports its first text (see docs/benchmarks.md, "Opening a shard in code-server"); `logged` once it was.
   */
  openTiming?: {
    n: number;
    asked: number;
    resolved: number;
    ready?: number;
    initSent?: number;
    pageRead?: [number, number];
    logged?: boolean;
  };
  /** Page requests not started yet, oldest first (served newest first: the view moved on). */
  /** The page sent with the next `init`, read ahead while the webview loads (local page index, reply or undefined on failure). */
  private firstPage?: { index: number; reply: Promise<ShardPageReply | undefined> };
  /** True while `init` is being put together: a reveal asked for meanwhile travels with it. */
  private initPending = false;
  private readonly queue = new Map<number, { generation: number; signal: AbortSignal; done(r: Promise<ShardPageReply>): void }>();
  private serving = 0;

  constructor(
    readonly provider: ShardEditorProvider,
    readonly document: ShardDocument,
    readonly panel: vscode.WebviewPanel,
    initial?: InitialReveal,
  ) {
    if (initial) {
      const n = document.state.numTokens;
      this.setReveal(clampOffset(initial.offset, n), clipHighlights(initial.highlights, n), initial.align);
    }
    this.order = new OrderCursor(
      provider.services.orders,
      () => this.orderChanged(),
      (m) => provider.services.log.warn(m),
    );
    // Read the starting page now, while the webview loads (it goes with `init`).
    this.readFirstPage();
    const ext = provider.services.context.extensionUri;
    panel.webview.options = webviewOptions();
    panel.webview.html = webviewHtml(ext, {
      script: 'shardEditor',
      title: vscode.l10n.t('Token shard {0}', path.basename(document.uri.fsPath)),
      style: 'shardEditor.css',
    });
    this.channel = new HostChannel<ShardEditorProtocol>(
      panel.webview,
      {
        onReady: () => void this.onReady(),
        onEvent: (m) => this.onMessage(m),
        requests: { page: (p, signal) => this.requestPage(p.generation, p.index, signal) },
      },
      { view: SHARD_EDITOR_VIEW_TYPE, resource: document.uri.toString(), taps: provider.taps },
    );
    this.disposables.push(
      this.channel,
      // A hidden webview loses its page (no retainContextWhenHidden); posts to it fail and it
      // sends 'ready' again when shown, which re-sends everything.
      panel.onDidChangeViewState(() => provider.focusChanged(this)),
      document.onDidReload(() => {
        this.pagesSent = 0;
        void this.post(document.initMessage());
        void this.post(document.numbering);
        void this.post({ type: 'highlights', highlights: this.highlights });
        this.orderChanged();
      }),
      document.onDidChangeNumbering((m) => void this.post(m)),
    );
    // A webview whose script never says `ready` shows nothing, and nothing else tells: log it.
    const created = Date.now();
    const watchdog = setTimeout(() => {
      if (this.channel.ready) return;
      provider.services.log.warn(
        `shard editor ${path.basename(document.uri.fsPath)}: its webview has not loaded ${fmt(Date.now() - created)} ms after it was created (visible: ${panel.visible}, active: ${panel.active}); no message came from its page`,
      );
    }, WEBVIEW_LOAD_WARN_MS);
    this.disposables.push(new vscode.Disposable(() => clearTimeout(watchdog)));
    if (provider.services.orders) this.disposables.push(provider.services.orders.onDidChange(() => this.orderChanged()));
  }

  /** The run's training order at the cursor (undefined: the card's sequential order); asks the order when needed. */
  runOrder(): ShardRunOrder | undefined {
    const st = this.document.state;
    return this.order.at(st.entry ? st.dataset : undefined, st.globalStart, this.cursor);
  }

  /**
   * The run's training order of this shard's dataset when a run description names one other than
   * the card's sequential order (opened when needed), else undefined (no run description, a lone shard).
   * @throws DataError with the run description's one-line message when it cannot be used.
   */
  async runOrderView(): Promise<OrderView | undefined> {
    const st = this.document.state;
    const ds = st.entry ? st.dataset : undefined;
    const orders = this.provider.services.orders;
    if (!ds || st.globalStart === undefined || !orders || orders.runFileFor(ds) === undefined) return undefined;
    return (await orders.runOf(ds))?.order;
  }

  /**
   * The order's answer may have changed (the cursor moved, reads arrived, the order opened or the
   * run description changed): sends the webview the run's order at the cursor when it differs
   * from what it has, and shows the status bar again.
   */
  orderChanged(): void {
    const run = this.runOrder();
    if (JSON.stringify(run) !== JSON.stringify(this.orderSent)) {
      this.orderSent = run;
      void this.post({ type: 'order', run });
    }
    this.provider.focusChanged(this);
  }

  /** Resolves once the webview script has said it is ready. */
  whenReady(): Promise<void> {
    return this.channel.whenReady();
  }

  /**
   * Sends an event; resolves false when it was not delivered (webview not ready yet, or hidden
   * and unloaded: the next `ready` re-sends the state).
   */
  post(msg: ShardToWebview): Promise<boolean> {
    return this.channel.notify(msg);
  }

  /** Scrolls to local `offset` (placed per `align`), puts the cursor there and (when given) replaces the highlights. */
  reveal(offset: number, highlights?: ShardHighlight[], align?: 'top' | 'third'): void {
    const pending = this.setReveal(offset, highlights, align);
    this.provider.focusChanged(this);
    if (!this.channel.ready || this.initPending) return; // `init` takes it
    void this.post({ type: 'reveal', ...pending }).then((ok) => {
      if (ok && this.pendingReveal === pending) this.pendingReveal = undefined;
    });
  }

  /** The state half of {@link reveal}: cursor, highlights, the reveal to send (with `init` when not ready yet). */
  private setReveal(offset: number, highlights?: ShardHighlight[], align?: 'top' | 'third'): NonNullable<ShardSession['pendingReveal']> {
    if (highlights) {
      this.highlights = highlights;
      this.highlightedUpdate = undefined;
    }
    this.cursor = offset;
    this.awaitingReveal = offset;
    // `align` only when asked for, so a plain reveal message stays { type, offset, highlights }.
    const pending = { offset, highlights, ...(align ? { align } : {}) };
    this.pendingReveal = pending;
    return pending;
  }

  /** Replaces the highlights. */
  setHighlights(highlights: ShardHighlight[]): void {
    this.highlights = highlights;
    void this.post({ type: 'highlights', highlights });
  }

  /** Global offset of the cursor (local for a lone shard). */
  get cursorGlobal(): number {
    return this.document.toGlobal(this.cursor);
  }

  /** Starts reading the page of the starting position (the pending reveal's offset, else the cursor) for the next `init`. */
  private readFirstPage(): void {
    const doc = this.document;
    if (doc.state.numTokens === 0) return;
    const index = Math.floor((this.pendingReveal?.offset ?? this.cursor) / PAGE_TOKENS);
    const generation = doc.generation;
    const t0 = Date.now();
    const reply = doc.state.pages.page(index).then(
      (payload): ShardPageReply | undefined => {
        if (this.openTiming && !this.openTiming.pageRead) this.openTiming.pageRead = [t0, Date.now()];
        return generation === doc.generation ? { generation, ...payload } : undefined;
      },
      () => undefined, // the webview asks for it and gets the error then
    );
    this.firstPage = { index, reply };
  }

  /** The webview (re)loaded: send it the whole state, with the starting page when it can be read. */
  private async onReady(): Promise<void> {
    this.pagesSent = 0;
    this.queue.clear();
    const t = this.openTiming;
    if (t && !t.ready) t.ready = Date.now();
    this.initPending = true;
    let page: ShardPageReply | undefined;
    try {
      const want = Math.floor((this.pendingReveal?.offset ?? this.cursor) / PAGE_TOKENS);
      if (!this.firstPage || this.firstPage.index !== want) this.readFirstPage();
      // Not longer than FIRST_PAGE_WAIT_MS: a slow read must not hold up the view (it asks for the page then).
      let timer: NodeJS.Timeout | undefined;
      page = await Promise.race([
        this.firstPage?.reply,
        new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), FIRST_PAGE_WAIT_MS))),
      ]);
      clearTimeout(timer);
    } finally {
      this.firstPage = undefined;
      this.initPending = false;
    }
    if (!this.channel.ready) return;
    // A reveal asked for before the page was ready travels with `init`: the page starts at the
    // target (no first paint, cursor or page request at the shard's first token).
    const r = this.pendingReveal;
    const init = this.document.initMessage();
    this.orderSent = this.runOrder();
    const run = this.orderSent ? { run: this.orderSent } : {};
    void this.post({ ...init, ...run, ...(r ? { reveal: r } : {}), ...(page && page.generation === init.generation ? { page } : {}) }).then(
      (ok) => {
        if (ok && r && this.pendingReveal === r) this.pendingReveal = undefined;
      },
    );
    if (page) {
      this.pagesSent++;
      this.document.startNumbering();
    }
    if (t && !t.initSent) t.initSent = Date.now();
    void this.post(this.document.numbering);
    if (this.highlights.length && !r?.highlights) void this.post({ type: 'highlights', highlights: this.highlights });
  }

  /** Queues a page request; resolves with the page (newest requests are served first, two at a time). */
  private requestPage(generation: number, index: number, signal: AbortSignal): Promise<ShardPageReply> {
    return new Promise<ShardPageReply>((resolve, reject) => {
      const prev = this.queue.get(index);
      this.queue.delete(index);
      prev?.done(Promise.reject(new ChannelError('superseded', true)));
      this.queue.set(index, { generation, signal, done: (r) => r.then(resolve, reject) });
      // A cancelled request leaves the queue (scrolled past before it was served).
      signal.addEventListener(
        'abort',
        () => {
          if (this.queue.get(index)?.signal === signal) this.queue.delete(index);
          reject(new ChannelError('cancelled', true));
        },
        { once: true },
      );
      this.pump();
    });
  }

  private onMessage(m: ShardFromWebview): void {
    switch (m.type) {
      case 'cursor': {
        if (this.awaitingReveal !== undefined && m.offset !== this.awaitingReveal) break; // sent before the reveal arrived
        this.awaitingReveal = undefined;
        this.reported = { offset: m.offset, document: m.document, documentScope: m.documentScope, documentPending: m.documentPending };
        this.cursor = m.offset;
        this.documentNumber = m.document;
        this.documentScope = m.documentScope;
        this.view = m.view;
        if (this.highlightedUpdate !== undefined) void updateHighlights(this, false);
        this.orderChanged();
        break;
      }
      case 'selection': {
        this.selection = m.range;
        this.provider.focusChanged(this);
        break;
      }
      case 'timing':
        this.logOpenTiming(m);
        break;
      case 'run': {
        const cmd = {
          chooseTokenizer: 'tokenShards.chooseTokenizer',
          copyIds: 'tokenShards.copyIds',
          highlightUpdate: 'tokenShards.highlightUpdate',
          copyText: 'tokenShards._copyShardText',
        }[m.command as string];
        if (m.command === 'countEarlierDocuments') this.document.countEarlierDocuments();
        else if (m.command === 'openNextShard' || m.command === 'openPrevShard') this.openNeighbour(m.command === 'openNextShard');
        else if (cmd)
          void vscode.commands.executeCommand(cmd).then(undefined, (err: Error) => {
            void vscode.window.showErrorMessage(vscode.l10n.t('{0} failed: {1}', plainText(cmd), plainText(err.message)));
          });
        break;
      }
    }
  }

  /**
   * Logs, once per open, how long it took from the moment the open was asked for (Enter in the
   * palette, a click in the Explorer) to the first decoded text, and when each step happened
   * (ms after the ask): the document, the webview page and script, the ready handshake, the first
   * page's request, read and arrival, the first text; then the webview's resources (ms, bytes).
   */
  private logOpenTiming(m: ShardTimingFromWebview): void {
    const t = this.openTiming;
    if (!t || t.logged) return;
    t.logged = true;
    const rel = (x: number | undefined) => (x === undefined ? undefined : Math.round(x - t.asked));
    const steps: Record<string, number | undefined> = {
      document: rel(t.resolved),
      pageStart: rel(m.marks.navigationStart),
      scriptStart: rel(m.marks.scriptStart),
      ready: rel(t.ready),
      initSent: rel(t.initSent),
      initReceived: rel(m.marks.init),
      pageRequested: rel(m.marks.pageRequested),
      pageReadStart: rel(t.pageRead?.[0]),
      pageReadEnd: rel(t.pageRead?.[1]),
      pageArrived: rel(m.marks.pageArrived),
      firstText: rel(m.marks.firstText),
    };
    const resources = m.resources.map((r) => ({ name: r.name, at: rel(r.start), ms: r.durationMs, bytes: r.bytes }));
    this.provider.services.log.info(
      `shard editor open #${t.n} (${t.n === 1 ? 'first in this session' : 'later'}) ${path.basename(this.document.uri.fsPath)}: first text ${fmt(steps.firstText ?? 0)} ms after the open; timing ${JSON.stringify({ n: t.n, askedAt: t.asked, ...steps, resources })}`,
    );
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
    void this.provider.reveal({ dataset: ds, offset }).then(undefined, (err: Error) => {
      void vscode.window.showErrorMessage(
        vscode.l10n.t(
          'Could not open the {0} shard: {1}',
          next ? vscode.l10n.t('next') : vscode.l10n.t('previous'),
          plainText(err.message),
        ),
      );
    });
  }

  /** Serves queued page requests, newest first, two at a time. */
  private pump(): void {
    while (this.serving < 2 && this.queue.size > 0) {
      const [index, req] = [...this.queue.entries()].pop()!;
      this.queue.delete(index);
      this.serving++;
      const served = this.servePage(req.generation, index);
      req.done(served);
      void served
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => {
          this.serving--;
          this.pump();
        });
    }
  }

  /**
   * Reads page `index` of `generation`.
   * @throws ChannelError (cancelled) for a stale generation; the read's error (naming the file and offset) otherwise.
   */
  private async servePage(generation: number, index: number): Promise<ShardPageReply> {
    const doc = this.document;
    if (generation !== doc.generation) throw new ChannelError('stale generation', true);
    try {
      const t0 = Date.now();
      const payload = await doc.state.pages.page(index);
      if (this.openTiming && !this.openTiming.pageRead) this.openTiming.pageRead = [t0, Date.now()];
      if (generation !== doc.generation) throw new ChannelError('stale generation', true);
      this.pagesSent++;
      doc.startNumbering();
      return { generation, ...payload };
    } catch (err) {
      if (err instanceof ChannelError || generation !== doc.generation) throw new ChannelError('stale generation', true);
      this.provider.services.log.warn(`page ${index} of ${doc.uri.fsPath}: ${(err as Error).message}`);
      throw err;
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/**
 * The custom editor provider and the registry of open shard editors; one per extension
 * activation, built and registered by the composition root (`src/extension.ts`).
 */
export class ShardEditorProvider implements vscode.CustomReadonlyEditorProvider<ShardDocument>, vscode.Disposable {
  readonly sessions = new Set<ShardSession>();
  /** The focused shard editor, if any. */
  active?: ShardSession;
  /** The shard editor focused last (commands run from the palette use it when focus moved). */
  lastActive?: ShardSession;
  readonly statusBar = new ShardStatusBar();
  private readonly sessionOpened = new vscode.EventEmitter<ShardSession>();
  /** Reveals waiting for the editor being opened on their file (key: resolved path). */
  readonly initialReveals = new Map<string, InitialReveal>();
  /** When an open was asked for, per file (epoch ms; key: resolved path): where the open timing starts. */
  private readonly openAsked = new Map<string, number>();
  /** Shard editors opened in this session (the timing line says which open it was). */
  private opens = 0;

  private readonly warmUpTimer: NodeJS.Timeout;

  /** @param taps sees every message of every shard editor's channel (tests). */
  constructor(
    readonly services: Services,
    readonly taps?: ChannelTaps,
  ) {
    this.warmUpTimer = setTimeout(() => void this.warmUp(), WARM_UP_DELAY_MS);
  }

  /**
   * Opens the workspace's datasets and loads their tokenizers once per session, soon after
   * activation, so that the first shard editor does not wait for them (measured: ~1 s of
   * the first open was the tokenizer). Both are cached by {@link Services}; failures are left to
   * the open that needs them (it shows them as banners).
   */
  private async warmUp(): Promise<void> {
    const t0 = Date.now();
    try {
      const roots = (await this.services.workspaceDatasetRoots()).slice(0, WARM_UP_MAX_DATASETS);
      for (const root of roots) {
        const ds = await this.services.openRoot(root);
        await this.services.tokenizerFor(ds);
      }
      if (roots.length)
        this.services.log.info(
          `shard editor warm-up: ${count(roots.length, 'dataset')} and their tokenizers ready in ${fmt(Date.now() - t0)} ms`,
        );
    } catch (err) {
      this.services.log.info(`shard editor warm-up stopped: ${(err as Error).message}`);
    }
  }

  async openCustomDocument(uri: vscode.Uri): Promise<ShardDocument> {
    this.markOpenAsked(uri, false);
    return ShardDocument.open(uri, this.services);
  }

  /** Notes that an open of `uri` was asked for now (`replace`: a command that knows better than the document open). */
  markOpenAsked(uri: vscode.Uri, replace = true): void {
    const key = path.resolve(uri.fsPath);
    if (replace || !this.openAsked.has(key)) this.openAsked.set(key, Date.now());
  }

  async resolveCustomEditor(document: ShardDocument, panel: vscode.WebviewPanel): Promise<void> {
    const key = path.resolve(document.uri.fsPath);
    const initial = this.initialReveals.get(key);
    this.initialReveals.delete(key);
    const session = new ShardSession(this, document, panel, initial);
    if (initial) initial.session = session;
    session.openTiming = { n: ++this.opens, asked: this.openAsked.get(key) ?? Date.now(), resolved: Date.now() };
    this.openAsked.delete(key);
    this.sessions.add(session);
    panel.onDidDispose(() => {
      this.sessions.delete(session);
      session.dispose();
      if (this.lastActive === session) this.lastActive = undefined;
      if (this.active === session) {
        this.active = undefined;
        this.publishActive();
      }
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
      const timer = setTimeout(() => {
        sub.dispose();
        reject(new Error(vscode.l10n.t('The shard editor did not open {0} within {1} s.', uri.fsPath, timeoutMs / 1000)));
      }, timeoutMs);
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
    const sel = s.selection ? ([s.document.toGlobal(s.selection[0]), s.document.toGlobal(s.selection[1])] as [number, number]) : undefined;
    // Nothing settled yet (a fresh editor with no reveal: the webview may restore a saved position):
    // show nothing rather than a guess that the first report would replace.
    if (s.awaitingReveal === undefined && !s.reported) {
      this.statusBar.hide();
      this.services.setActiveShard({ uri: s.document.uri, dataset: ds, offset: s.document.toGlobal(s.cursor), selection: sel });
      return;
    }
    // The webview's confirmed position, or (while a reveal is on its way) the revealed offset with its
    // document still being worked out (`doc …`): never a stale document number beside a new offset.
    const r =
      s.awaitingReveal !== undefined || !s.reported
        ? { offset: s.cursor, document: undefined, documentScope: undefined, documentPending: true }
        : s.reported;
    {
      const global = g !== undefined ? g + r.offset : undefined;
      const order = global !== undefined ? this.orderStatus(s) : undefined;
      this.statusBar.show({
        order,
        fileName: path.basename(st.file),
        local: r.offset,
        global,
        position: ds && global !== undefined ? ds.schedule.position(global) : undefined,
        pastLastUpdate: ds && global !== undefined ? ds.schedule.pastLastUpdate(global) : undefined,
        document: r.document,
        documentScope: r.documentScope,
        documentPending: r.documentPending,
        selection: sel,
      });
    }
    this.services.setActiveShard({ uri: s.document.uri, dataset: ds, offset: s.document.toGlobal(s.cursor), selection: sel });
  }

  /**
   * The status bar's training-order part (undefined for the card's sequential order): the order's
   * name and, once the order answers, the run's reads of the cursor's token — the same answer the
   * session sends its webview's cursor line ({@link ShardSession.runOrder}; the bar is shown again
   * when it arrives).
   */
  private orderStatus(s: ShardSession): ShardStatusInfo['order'] {
    const run = s.runOrder();
    return run ? { name: run.name, reads: run.reads, error: run.error } : undefined;
  }

  /** Reveals an offset in its shard editor: see {@link revealInShardEditor}. */
  reveal(target: ShardRevealTarget): Promise<void> {
    return revealInShardEditor(this, target);
  }

  /** The session commands act on: the focused shard editor, else the one focused last. */
  commandTarget(): ShardSession | undefined {
    return this.active ?? (this.lastActive && this.sessions.has(this.lastActive) ? this.lastActive : undefined);
  }

  dispose(): void {
    clearTimeout(this.warmUpTimer);
    this.statusBar.dispose();
    this.sessionOpened.dispose();
  }
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
 *   neither dataset nor file is given, or the editor did not open in 15 s.
 */
async function revealInShardEditor(p: ShardEditorProvider, target: ShardRevealTarget): Promise<void> {
  let uri: vscode.Uri,
    local: number,
    base = 0;
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
  const ranges = target.highlight?.map((hl) => ({ start: hl.start - base, end: hl.end - base, label: hl.label }));
  let session = p.sessionFor(uri);
  let initial: InitialReveal | undefined;
  if (session) {
    session.panel.reveal(session.panel.viewColumn, target.preserveFocus ?? false);
  } else {
    const waiter = p.waitForSession(uri, 15_000);
    // The editor about to open starts at the target (see InitialReveal).
    const key = path.resolve(uri.fsPath);
    initial = { offset: local, highlights: ranges, align: target.align };
    p.initialReveals.set(key, initial);
    p.markOpenAsked(uri);
    // Reuse the preview tab, as Go to Definition does (`tokenShards.navigation.openInPreview`).
    const preview = vscode.workspace.getConfiguration('tokenShards').get<boolean>('navigation.openInPreview', true);
    const options: vscode.TextDocumentShowOptions = {
      preserveFocus: target.preserveFocus ?? false,
      viewColumn: target.viewColumn,
      preview,
    };
    try {
      await vscode.commands.executeCommand('vscode.openWith', uri, SHARD_EDITOR_VIEW_TYPE, options);
      session = p.sessionFor(uri) ?? (await waiter);
    } finally {
      if (p.initialReveals.get(key) === initial) p.initialReveals.delete(key);
    }
    waiter.catch(() => undefined);
  }
  const n = session.document.state.numTokens;
  const highlights = clipHighlights(ranges, n);
  if (initial?.session !== session) session.reveal(clampOffset(local, n), highlights, target.align);
  if (highlights && target.dataset) {
    // New highlights replace the old ones everywhere in the dataset: another shard's editor must
    // not keep saying "Highlighted: update 3 …" once the user went to another update.
    const root = target.dataset.root;
    for (const other of p.sessions) {
      const ods = other.document.state.dataset;
      if (other !== session && ods && ods.root === root && other.highlightedUpdate === undefined && other.highlights.length)
        other.setHighlights([]);
    }
  }
  p.services.log.info(`revealed ${target.dataset ? 'global' : 'local'} offset ${fmt(target.offset)} in ${uri.fsPath}`);
}

/** `offset` clamped to a shard of `n` tokens (0 for an empty one). */
function clampOffset(offset: number, n: number): number {
  return Math.max(0, Math.min(offset, Math.max(0, n - 1)));
}

/** Local highlight ranges clipped to a shard of `n` tokens; ranges outside it are dropped. */
function clipHighlights(ranges: ShardHighlight[] | undefined, n: number): ShardHighlight[] | undefined {
  return ranges?.map((hl) => ({ ...hl, start: Math.max(0, hl.start), end: Math.min(n, hl.end) })).filter((hl) => hl.end > hl.start);
}
