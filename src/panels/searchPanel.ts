/**
 * The search panel (host side): one `WebviewPanel` per dataset on the shared panel pattern
 * ({@link PanelHost}), showing occurrences of terms per bucket of updates as a chart
 * (webview/searchPanel.ts), filled in while the scan runs, with the occurrences of a selected
 * term and bucket below it.
 *
 * - Counting: `countTerms` of src/core/search (worker threads; the extension host only receives
 *   progress, throttled to one message per {@link PROGRESS_MS}); Cancel aborts it.
 * - Cache: finished results in {@link SearchCache} (global storage), keyed by terms, options,
 *   bucket size and the dataset fingerprint; reopened at once. A cancelled or failed scan
 *   caches nothing. A bucket size that is a multiple of the current result's is computed from it
 *   ({@link rebucket}) without a scan.
 * - Occurrences: `findTerms` over the bucket's token range, pulled on demand as the list scrolls,
 *   at most {@link LIST_CAP} per list (memory stays bounded whatever the count).
 * - Click an occurrence → `revealInShardEditor` at its first token with the match's tokens
 *   highlighted; a bucket's "update k" buttons → `tokenShards.goToUpdate`.
 * - Restored after a window reload by a serializer from the webview's state (dataset key → root
 *   in global state; the webview never sees a path); a restored panel shows the cached result or
 *   the form, it never starts a scan by itself.
 */
import * as crypto from 'crypto';
import * as path from 'path';
import * as vscode from 'vscode';
import type { Dataset } from '../core/dataset';
import { CancelledError } from '../core/errors';
import { count, fmt } from '../core/units';
import type { LoadedTokenizer } from '../core/tokenizer';
import {
  CountResult,
  Occurrence,
  SearchInputError,
  SearchOptions,
  countTerms,
  defaultPer,
  findTerms,
  parseTerms,
  readTermsFile,
} from '../core/search';
import type { ChannelTaps } from '../editor/hostChannel';
import type { ShardEditorProvider } from '../editor/shardEditor';
import type { Services } from '../services';
import type { OrderView } from '../core/order/orderClient';
import { runOrderOf } from './updateView';
import { PanelHost } from './panelHost';
import { SearchCache, datasetFingerprint, searchKey } from './searchCache';
import { ShownSearch, joinTerms, matchTokenRange, rebucket, replaySearch, splitTerms } from './searchModel';
import type {
  OccurrenceRow,
  OccurrencesReply,
  OccurrencesRequest,
  SearchDatasetInfo,
  SearchForm,
  SearchFromWebview,
  SearchPanelProtocol,
  SearchPanelState,
} from '../protocol/search';

/** The panel's view type (and `onWebviewPanel:` activation event). */
export const SEARCH_VIEW_TYPE = 'tokenShards.searchPanel';
/** Global-state key of the dataset key → root map used to restore panels. */
const ROOTS_KEY = 'tokenShards.searchPanel.roots';
/** Most occurrences one list loads (the rest are counted, not listed). */
export const LIST_CAP = 10_000;
/** Characters of context each side of an occurrence in the list. */
const CONTEXT_CHARS = 60;
/** Minimum time between progress messages to the webview (ms). */
const PROGRESS_MS = 150;

/** What a search ended with (the result of `tokenShards.searchStream`, for tests and callers). */
export interface SearchOutcome {
  /** Dataset root searched. */
  root: string;
  /** Parsed terms. */
  terms: string[];
  /** The counts, when the scan finished (or came from the cache). */
  result?: CountResult;
  /** True when the result came from the cache (or was re-bucketed from a finer result). */
  cached: boolean;
  /** 'done', 'cancelled' (nothing cached), 'error' (message in `error`), 'superseded' (another search replaced it). */
  status: 'done' | 'cancelled' | 'error' | 'superseded';
  error?: string;
  /** Milliseconds from the request to the final result. */
  ms: number;
  /** Milliseconds from the request to the first partial counts (of the first scanned chunk) posted to the chart (scans only). */
  firstPartialMs?: number;
  /** Resolves when the webview has drawn the final result (series × buckets). */
  drawn: Promise<{ buckets: number; series: number }>;
}

/** Opaque, stable key of a dataset root (first 16 hex digits of its sha256). */
function datasetKey(root: string): string {
  return crypto.createHash('sha256').update(path.resolve(root)).digest('hex').slice(0, 16);
}

/**
 * Owns every search panel (one per dataset root) and the result cache; it is also the panel
 * serializer (registered by the composition root for {@link SEARCH_VIEW_TYPE}).
 */
export class SearchPanels implements vscode.WebviewPanelSerializer<SearchPanelState>, vscode.Disposable {
  private readonly panels = new Map<string, SearchPanel>();
  private readonly disposables: vscode.Disposable[] = [];
  readonly cache: SearchCache;

  /**
   * @param shardEditors reveals occurrences in the shard editor.
   * @param taps the channel taps (the extension-host tests record the panel's messages).
   */
  constructor(
    readonly services: Services,
    readonly shardEditors: ShardEditorProvider,
    private readonly taps?: ChannelTaps,
  ) {
    this.cache = new SearchCache(vscode.Uri.joinPath(services.context.globalStorageUri, 'search-cache').fsPath);
    this.disposables.push(
      services.onDidChangeDataset((root) => {
        for (const p of this.panels.values()) if (root === '*' || p.root === root) p.datasetChanged();
      }),
    );
  }

  /**
   * Shows the dataset's search panel (created on first use) and, when `form` is given, runs that
   * search in it. Resolves with the outcome of the search (undefined when none was run).
   */
  async show(ds: Dataset, form?: SearchForm): Promise<SearchOutcome | undefined> {
    let p = this.panels.get(ds.root);
    if (!p) {
      const host = PanelHost.create<SearchPanelProtocol>(this.services.context.extensionUri, panelSpec(ds.root), {
        resource: ds.root,
        taps: this.taps,
        log: this.services.log,
        memory: this.services.context.globalState,
      });
      p = this.adopt(host, ds.root, ds);
    } else {
      p.host.panel.reveal(undefined, false);
    }
    await this.rememberRoot(ds.root);
    if (!form) {
      p.showForm();
      return undefined;
    }
    return p.run(form);
  }

  /** The panel of a dataset root, if open (tests). */
  panelFor(root: string): SearchPanel | undefined {
    return this.panels.get(path.resolve(root));
  }

  private adopt(host: PanelHost<SearchPanelProtocol>, root: string, ds?: Dataset): SearchPanel {
    const p = new SearchPanel(this, host, root, ds);
    this.panels.set(root, p);
    host.onDidDispose(() => {
      if (this.panels.get(root) === p) this.panels.delete(root);
      p.dispose();
    });
    return p;
  }

  /** Restores a panel after a window reload (VS Code calls this): its cached result, or the form; never a scan. */
  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: SearchPanelState | undefined): Promise<void> {
    const roots = this.services.context.globalState.get<Record<string, string>>(ROOTS_KEY, {});
    const root = state?.key ? roots[state.key] : undefined;
    if (!root || this.panels.has(root)) {
      panel.dispose();
      return;
    }
    const host = new PanelHost<SearchPanelProtocol>(panel, this.services.context.extensionUri, panelSpec(root), {
      resource: root,
      taps: this.taps,
      log: this.services.log,
      memory: this.services.context.globalState,
    });
    const p = this.adopt(host, root);
    try {
      const ds = await this.services.openRoot(root);
      p.dataset = ds;
      if (state?.form) await p.restore(state.form);
      else p.showForm();
    } catch (err) {
      host.post({ type: 'error', searchId: null, message: (err as Error).message });
    }
  }

  private async rememberRoot(root: string): Promise<void> {
    const roots = { ...this.services.context.globalState.get<Record<string, string>>(ROOTS_KEY, {}) };
    const key = datasetKey(root);
    if (roots[key] !== root) {
      roots[key] = root;
      await this.services.context.globalState.update(ROOTS_KEY, roots);
    }
  }

  dispose(): void {
    for (const p of [...this.panels.values()]) p.host.dispose();
    this.panels.clear();
    for (const d of this.disposables) d.dispose();
  }
}

function panelSpec(root: string) {
  return {
    viewType: SEARCH_VIEW_TYPE,
    title: vscode.l10n.t('Search · {0}', path.basename(root)),
    script: 'searchPanel',
    styles: ['chart.css', 'dist/media/uPlot.min.css', 'searchPanel.css'],
  };
}

/** The search that is shown (or running) in a panel. */
interface CurrentSearch extends ShownSearch {
  options: SearchOptions;
  controller: AbortController;
}

/** The occurrence list being loaded for one (search, term, bucket). */
interface OccurrenceList {
  key: string;
  rows: Occurrence[];
  iterator: AsyncIterator<Occurrence>;
  done: boolean;
  controller: AbortController;
  /** Serializes pulls (requests may overlap while scrolling). */
  chain: Promise<unknown>;
}

/** One dataset's search panel (host side). */
export class SearchPanel {
  private seq = 0;
  private current?: CurrentSearch;
  private list?: OccurrenceList;
  private form?: SearchForm;
  private readonly drawnWaiters = new Map<number, ((d: { buckets: number; series: number }) => void)[]>();

  constructor(
    private readonly owner: SearchPanels,
    readonly host: PanelHost<SearchPanelProtocol>,
    readonly root: string,
    public dataset?: Dataset,
  ) {
    host.track(host.onMessage((m) => void this.onMessage(m)));
    host.track(host.onReady(() => this.sendInit()));
    host.handle('occurrences', (req, signal) => this.occurrences(req, signal));
  }

  private get services(): Services {
    return this.owner.services;
  }

  private async ds(): Promise<Dataset> {
    return this.dataset ?? (this.dataset = await this.services.openRoot(this.root));
  }

  /** The dataset's facts for the form; with a run's order (`run.json`), its updates and tokens per update. */
  private info(ds: Dataset, run?: { order: OrderView }): SearchDatasetInfo {
    const updates = run ? run.order.numUpdates : ds.schedule.numUpdates;
    const G = run ? run.order.samplesPerUpdate * run.order.inputTokens : ds.schedule.G;
    return { key: datasetKey(ds.root), name: path.basename(ds.root), G, updates, autoPer: defaultPer(updates) };
  }

  /** Sends the dataset facts and the form (on every page load); re-sends the result shown. */
  private sendInit(): void {
    const ds = this.dataset;
    if (!ds) {
      void this.ds().then(
        () => this.sendInit(),
        (err: Error) => this.host.post({ type: 'error', searchId: null, message: err.message }),
      );
      return;
    }
    this.host.post({
      type: 'init',
      dataset: this.info(ds),
      form: this.form ?? { text: '', word: false, ignoreCase: false, ids: false, per: null },
    });
    // The page was rebuilt: draw the search again as it stands (a cancelled one keeps its partial chart).
    if (this.current) for (const m of replaySearch(this.current)) this.host.post(m);
  }

  /** Shows the form (focus stays in the panel). */
  showForm(): void {
    if (this.host.isReady) this.sendInit();
  }

  /** After a window reload: shows the cached result of `form` if there is one, else just the form. */
  async restore(form: SearchForm): Promise<void> {
    this.form = form;
    await this.run(form, { cacheOnly: true });
  }

  /** The dataset's metadata changed: a result on screen may be stale; the next run re-checks the cache fingerprint. */
  datasetChanged(): void {
    this.dataset = undefined;
    this.current?.controller.abort();
    this.closeList();
  }

  /**
   * Runs a search (cancelling one still running): validates the form, answers from the cache
   * when it can, else scans with streamed partial counts.
   * @param opts.cacheOnly do not scan on a cache miss (panel restore).
   */
  async run(form: SearchForm, opts: { cacheOnly?: boolean } = {}): Promise<SearchOutcome> {
    const t0 = performance.now();
    const id = ++this.seq;
    this.form = form;
    this.current?.controller.abort();
    this.closeList();
    const drawn = new Promise<{ buckets: number; series: number }>((resolve) => {
      const list = this.drawnWaiters.get(id) ?? [];
      list.push(resolve);
      this.drawnWaiters.set(id, list);
    });
    const outcome = (o: Omit<SearchOutcome, 'root' | 'ms' | 'drawn'>): SearchOutcome => ({
      root: this.root,
      ms: performance.now() - t0,
      drawn,
      ...o,
    });
    const fail = (message: string): SearchOutcome => {
      this.host.post({ type: 'error', searchId: id, message });
      this.resolveDrawn(id, { buckets: 0, series: 0 });
      return outcome({ terms: [], cached: false, status: 'error', error: message });
    };
    let ds: Dataset, tok: LoadedTokenizer | undefined;
    try {
      ds = await this.ds();
      tok = await this.services.tokenizerFor(ds);
    } catch (err) {
      return fail((err as Error).message);
    }
    if (!tok)
      return fail(
        vscode.l10n.t(
          'Search needs the tokenizer: {0} has no tokenizer/tokenizer.json and the tokenShards.tokenizerPath setting is empty.',
          path.basename(ds.root),
        ),
      );
    const options: SearchOptions = { word: !!form.word, ignoreCase: !!form.ignoreCase, ids: !!form.ids };
    let terms: string[];
    try {
      terms = parseTerms(splitTerms(form.text, options.ids), options);
    } catch (err) {
      return fail(err instanceof SearchInputError ? err.message : vscode.l10n.t('Bad search: {0}', (err as Error).message));
    }
    // Counts per update through the run's order when one is in force (each occurrence in every update that read it).
    let run: Awaited<ReturnType<typeof runOrderOf>>;
    try {
      run = await runOrderOf(this.services, ds);
    } catch (err) {
      return fail((err as Error).message);
    }
    const info = this.info(ds, run);
    const per = form.per ?? info.autoPer;
    if (!Number.isSafeInteger(per) || per < 1)
      return fail(vscode.l10n.t('Updates per bucket must be a whole number ≥ 1 (got {0}).', String(form.per)));
    if (info.updates === 0)
      return fail(
        vscode.l10n.t(
          '{0} holds no whole update ({1} stored, G = {2}): nothing to count.',
          info.name,
          count(ds.storedTokens, 'token'),
          fmt(info.G),
        ),
      );
    const controller = new AbortController();
    const prev = this.current;
    const cur: CurrentSearch = { id, form, terms, options, per, controller, state: 'running' };
    this.current = cur;
    this.host.post({ type: 'started', searchId: id, form, terms, per });
    this.services.log.info(`search ${id} in ${ds.root}: ${JSON.stringify(terms)} ${JSON.stringify(options)} per ${per}`);

    // 1. The cache (keyed by the dataset's fingerprint as of now).
    let key: string | undefined;
    try {
      const fingerprint = await datasetFingerprint(ds, tok.file);
      key = searchKey({ terms, options, per }, run ? `${fingerprint}\norder ${JSON.stringify(run.order.spec?.run)}` : fingerprint);
      const hit = await this.owner.cache.get(key);
      if (this.current !== cur) return outcome({ terms, cached: false, status: 'superseded' });
      if (hit) return this.finish(cur, hit.result, t0, drawn, { savedAt: hit.savedAt, scanMs: hit.scanMs });
    } catch (err) {
      this.services.log.warn(`search cache: ${(err as Error).message}`);
    }
    // 2. A coarser bucket size of the same search just shown: merge its buckets.
    const prevResult = prev?.result;
    if (prevResult && prev && sameSearch(prev, cur) && per % prevResult.per === 0) {
      const r = rebucket(prevResult, per);
      const o = this.finish(cur, r, t0, drawn, { savedAt: Date.now(), scanMs: 0 });
      // The result is on screen already; the command resolves once it is cached (so a caller never races the write).
      if (key) await this.owner.cache.put(key, ds.root, r, 0).catch((err: Error) => this.services.log.warn(`search cache: ${err.message}`));
      return o;
    }
    if (opts.cacheOnly) {
      cur.state = 'cancelled';
      this.host.post({ type: 'cancelled', searchId: id });
      this.resolveDrawn(id, { buckets: 0, series: 0 });
      return outcome({ terms, cached: false, status: 'cancelled' });
    }
    // 3. Scan.
    let lastPost = 0,
      lastShards = 0;
    let firstPartialMs: number | undefined;
    try {
      const result = await countTerms(ds, tok, terms, options, {
        per,
        order: run?.order.spec,
        signal: controller.signal,
        onProgress: (p) => {
          const now = performance.now();
          // Post at most every PROGRESS_MS, but at once for the first counts and when a shard finished.
          const first = firstPartialMs === undefined && p.tokensDone > 0;
          if (this.current !== cur || cur.state !== 'running' || (now - lastPost < PROGRESS_MS && p.shardsDone === lastShards && !first))
            return;
          lastPost = now;
          lastShards = p.shardsDone;
          if (p.tokensDone > 0) firstPartialMs ??= now - t0;
          const { partial, ...progress } = p;
          cur.partial = { counts: partial, progress };
          this.host.post({ type: 'progress', searchId: id, partial, progress });
        },
      });
      if (this.current !== cur) return outcome({ terms, cached: false, status: 'superseded' });
      if (controller.signal.aborted) {
        // Cancel came as the last shard finished: the counts are whole, but Cancel was said.
        cur.state = 'cancelled';
        this.host.post({ type: 'cancelled', searchId: id });
        this.resolveDrawn(id, { buckets: 0, series: 0 });
        return outcome({ terms, cached: false, status: 'cancelled' });
      }
      const scanMs = performance.now() - t0;
      const o = this.finish(cur, result, t0, drawn);
      // The result is on screen already; the command resolves once it is cached (so a caller never races the write).
      if (key)
        await this.owner.cache
          .put(key, ds.root, result, scanMs)
          .catch((err: Error) => this.services.log.warn(`search cache: ${err.message}`));
      return { ...o, cached: false, firstPartialMs };
    } catch (err) {
      if (err instanceof CancelledError || controller.signal.aborted) {
        if (this.current === cur) {
          cur.state = 'cancelled';
          this.host.post({ type: 'cancelled', searchId: id });
          this.resolveDrawn(id, { buckets: 0, series: 0 });
        }
        return outcome({ terms, cached: false, status: this.current === cur ? 'cancelled' : 'superseded' });
      }
      this.services.log.error(`search ${id}: ${(err as Error).message}`);
      if (this.current === cur) {
        cur.state = 'failed';
        cur.error = (err as Error).message;
        return fail(cur.error);
      }
      return outcome({ terms, cached: false, status: 'superseded' });
    }
  }

  private finish(
    cur: CurrentSearch,
    result: CountResult,
    t0: number,
    drawn: SearchOutcome['drawn'],
    cached?: { savedAt: number; scanMs: number },
  ): SearchOutcome {
    cur.result = result;
    cur.state = 'done';
    const ms = performance.now() - t0;
    this.host.post({ type: 'done', searchId: cur.id, result, ms, cached });
    this.services.log.info(
      `search ${cur.id}: ${cached ? 'from the cache' : 'scanned'} in ${ms.toFixed(1)} ms; totals ${JSON.stringify(result.totals)}`,
    );
    return { root: this.root, terms: cur.terms, result, cached: !!cached, status: 'done', ms, drawn };
  }

  private resolveDrawn(id: number, d: { buckets: number; series: number }): void {
    const list = this.drawnWaiters.get(id);
    this.drawnWaiters.delete(id);
    for (const f of list ?? []) f(d);
  }

  /** The id of the search shown. */
  get currentSearchId(): number | undefined {
    return this.current?.id;
  }

  /** Selects a bucket and term in the webview, which then lists its occurrences (as a click on the chart does). */
  select(bucket: number, termIndex: number): void {
    this.host.post({ type: 'select', bucket, termIndex });
  }

  /** Cancels the running scan (the Cancel button): its partial counts stay on screen, nothing is cached. */
  cancel(): void {
    const c = this.current;
    if (!c || c.state !== 'running') return;
    // Said at once: the scan stops at its next check of the signal, which can take a moment.
    c.state = 'cancelling';
    this.host.post({ type: 'cancelling', searchId: c.id });
    c.controller.abort();
  }

  private async onMessage(m: SearchFromWebview): Promise<void> {
    try {
      switch (m.type) {
        case 'run':
          await this.run(m.form);
          break;
        case 'pickTermsFile':
          await this.pickTermsFile(m.form);
          break;
        case 'cancel':
          this.cancel();
          break;
        case 'openUpdate': {
          const ds = await this.ds();
          await vscode.commands.executeCommand('tokenShards.goToUpdate', { update: m.update, root: ds.root });
          break;
        }
        case 'reveal':
          await this.reveal(m.searchId, m.termIndex, m.bucket, m.index);
          break;
        case 'drawn':
          if (m.final) this.resolveDrawn(m.searchId, { buckets: m.buckets, series: m.series });
          break;
        case 'listed':
          this.services.log.debug(`search ${m.searchId}: ${m.rows} occurrences of term ${m.termIndex} in bucket ${m.bucket} listed`);
          break;
      }
    } catch (err) {
      this.services.log.error(`search panel: ${(err as Error).message}`);
      void vscode.window.showErrorMessage((err as Error).message);
    }
  }

  /**
   * "Terms from file…": asks for a terms file, reads it with the CLI's parser (`readTermsFile`)
   * and fills the form with its terms (the user then runs the search). A bad file is shown in the
   * panel as one sentence naming the file and line.
   * @returns the terms read (undefined when the picker was dismissed or the file was refused).
   */
  async pickTermsFile(form: SearchForm, file?: string): Promise<string[] | undefined> {
    if (file === undefined) {
      const picked = await vscode.window.showOpenDialog({
        canSelectMany: false,
        openLabel: vscode.l10n.t('Use Terms'),
        title: vscode.l10n.t('Terms file: one term per line, # comments'),
        defaultUri: vscode.Uri.file(this.root),
        filters: { [vscode.l10n.t('Terms files')]: ['txt', 'lst', 'tsv', 'csv'], [vscode.l10n.t('All files')]: ['*'] },
      });
      if (!picked?.[0]) return undefined;
      file = picked[0].fsPath;
    }
    const options: SearchOptions = { word: !!form.word, ignoreCase: !!form.ignoreCase, ids: !!form.ids };
    let terms: string[];
    try {
      // The message names the file by its base name: the webview never sees a path.
      terms = await readTermsFile(file, options);
    } catch (err) {
      const msg = (err as Error).message.split(file).join(path.basename(file));
      this.host.post({ type: 'error', searchId: null, message: msg });
      return undefined;
    }
    const filled: SearchForm = { ...form, text: joinTerms(terms, options.ids) };
    this.form = filled;
    this.host.post({ type: 'terms', form: filled, fileName: path.basename(file), count: terms.length });
    return terms;
  }

  private closeList(): void {
    this.list?.controller.abort();
    void this.list?.iterator.return?.().catch(() => undefined);
    this.list = undefined;
  }

  /** Rows `[start, start+count)` of the occurrences of one term in one bucket, loaded on demand. */
  private async occurrences(req: OccurrencesRequest, signal: AbortSignal): Promise<OccurrencesReply> {
    const cur = this.current;
    if (!cur || cur.id !== req.searchId || !cur.result) throw new Error(vscode.l10n.t('That search is no longer shown.'));
    const bucket = cur.result.buckets[req.bucket];
    const term = cur.terms[req.termIndex];
    if (!bucket || term === undefined)
      throw new Error(vscode.l10n.t('No bucket {0} / term {1} in this search.', req.bucket, req.termIndex));
    const key = `${req.searchId}:${req.termIndex}:${req.bucket}`;
    if (this.list?.key !== key) {
      this.closeList();
      const ds = await this.ds();
      const tok = await this.services.tokenizerFor(ds);
      if (!tok) throw new Error(vscode.l10n.t('No tokenizer.'));
      if (await runOrderOf(this.services, ds))
        throw new Error(
          vscode.l10n.t(
            "The occurrence list reads a bucket's stream range, which a run's training order does not have: open the bucket's updates (Go to Update) to see their samples.",
          ),
        );
      const G = ds.schedule.G;
      const controller = new AbortController();
      const iterable = findTerms(ds, tok, [term], cur.options, {
        limit: LIST_CAP,
        context: CONTEXT_CHARS,
        fromOffset: bucket.first_update * G,
        toOffset: (bucket.last_update + 1) * G,
        signal: controller.signal,
      });
      this.list = { key, rows: [], iterator: iterable[Symbol.asyncIterator](), done: false, controller, chain: Promise.resolve() };
    }
    const list = this.list;
    const want = Math.min(LIST_CAP, req.start + Math.max(0, Math.min(req.count, 1000)));
    const pull = async () => {
      while (!list.done && list.rows.length < want && !signal.aborted) {
        const r = await list.iterator.next();
        if (r.done) list.done = true;
        else list.rows.push(r.value);
      }
    };
    const p = list.chain.then(pull);
    list.chain = p.catch(() => undefined);
    await p;
    return {
      rows: list.rows.slice(req.start, want).map(toRow),
      done: list.done || list.rows.length >= LIST_CAP,
      loaded: list.rows.length,
      cap: LIST_CAP,
    };
  }

  /** Reveals occurrence `index` of the loaded list in the shard editor, the match's tokens highlighted. */
  private async reveal(searchId: number, termIndex: number, bucket: number, index: number): Promise<void> {
    const list = this.list;
    const cur = this.current;
    if (!list || !cur || list.key !== `${searchId}:${termIndex}:${bucket}`) return;
    const occ = list.rows[index];
    if (!occ) return;
    const ds = await this.ds();
    const tok = await this.services.tokenizerFor(ds);
    const [start, end] = await matchTokenRange(ds, tok, occ, cur.options.ids);
    const where =
      occ.update === null
        ? vscode.l10n.t('look-ahead token')
        : vscode.l10n.t('update {0} · seq {1} · pos {2}', fmt(occ.update), occ.sequence ?? 0, occ.position ?? 0);
    await this.owner.shardEditors.reveal({
      dataset: ds,
      offset: start,
      viewColumn: vscode.ViewColumn.Beside,
      highlight: [{ start, end, label: vscode.l10n.t('match of “{0}” · {1}', occ.term, where) }],
    });
  }

  dispose(): void {
    this.current?.controller.abort();
    this.closeList();
    for (const list of this.drawnWaiters.values()) for (const f of list) f({ buckets: 0, series: 0 });
    this.drawnWaiters.clear();
  }
}

function sameSearch(a: CurrentSearch, b: CurrentSearch): boolean {
  return JSON.stringify(a.terms) === JSON.stringify(b.terms) && JSON.stringify(a.options) === JSON.stringify(b.options);
}

function toRow(o: Occurrence): OccurrenceRow {
  return {
    offset: o.offset,
    update: o.update,
    sequence: o.sequence,
    position: o.position,
    before: o.context.slice(0, o.matchStart),
    match: o.context.slice(o.matchStart, o.matchEnd),
    after: o.context.slice(o.matchEnd),
  };
}
