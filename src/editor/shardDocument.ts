/**
 * The custom document behind a shard editor: one `.u32` file, read through the core
 * {@link TokenStream} in pages (never whole), with its dataset when a `shard_manifest.jsonl` up
 * the tree lists it (global offsets), its tokenizer, the banners bad input deserves, and the
 * document numbering computed in the background (cancellable). A file watcher reloads it when
 * the file changes on disk; dataset or tokenizer-setting changes reload it too.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Dataset, formatFileIndex, formatNameOf, shardOfFile } from '../core/dataset';
import { findDocumentBounds, formatDocumentAt } from '../core/documents';
import { documentRuleOf } from '../core/documentRule';
import { CancelledError } from '../core/errors';
import { count, fmt, formatRateAndTimeLeft, progressRate, ShardScanRate } from '../core/units';
import { BYTES_PER_TOKEN, ShardEntry } from '../core/manifest';
import { PAGE_TOKENS, PageDocStats, ShardPages, shardFormatInfo } from '../core/pages';
import { DEFAULT_EOS_FREE_RUN_THRESHOLD } from '../core/streamIndex/anomalies';
import { LONG_RUN_FLOOR } from '../core/streamIndex/scan';
import { DEFAULT_SCHEDULE } from '../core/schedule';
import { TokenStream } from '../core/stream';
import { CORRUPT_ID_FLOOR, LoadedTokenizer, diagnoseIds, toHex } from '../core/tokenizer';
import type { ShardBanner, ShardInitToWebview, ShardNumberingToWebview } from '../protocol/shard';
import type { Services } from '../services';

/** Earlier-shard document counting starts by itself only below this many tokens (4 GB of ids); above, the user asks. */
export const AUTO_COUNT_TOKENS = 1_000_000_000;
/** The dataset card's shard extension: such a file is read as raw uint32 unless a manifest says otherwise. */
const U32_EXTENSION = '.u32';
/** Tokens sampled at the start of the file to diagnose dtype mix-ups. */
const DIAGNOSE_SAMPLE = 16_384;

/** Everything one load of the file established (replaced on reload). */
export interface ShardState {
  /** Absolute path of the file. */
  file: string;
  sizeBytes: number;
  /** Bytes after the last whole token (size mod 4). */
  trailingBytes: number;
  /** Whole tokens in the file. */
  numTokens: number;
  /** The file as a stream of local offsets. */
  stream: TokenStream;
  pages: ShardPages;
  dataset?: Dataset;
  /** The manifest line of this file, when its dataset lists it. */
  entry?: ShardEntry;
  /** Global offset of local 0 (dataset shards only). */
  globalStart?: number;
  tokenizer?: LoadedTokenizer;
  eos: number;
  banners: ShardBanner[];
}

/** A `.u32` shard opened in the shard editor. */
export class ShardDocument implements vscode.CustomDocument {
  private _state!: ShardState;
  private _generation = 0;
  private numberingAbort?: AbortController;
  private _numbering: ShardNumberingToWebview;
  private stats?: PageDocStats;
  private readonly disposables: vscode.Disposable[] = [];
  private reloadTimer?: NodeJS.Timeout;
  private readonly reloaded = new vscode.EventEmitter<void>();
  private readonly numberingChanged = new vscode.EventEmitter<ShardNumberingToWebview>();
  private disposed = false;
  private numberingStarted = false;
  /** Unsubscribes from the dataset's DocumentIndex attach events (a stream index built or reloaded renumbers at once). */
  private attachUnsub?: () => void;

  /** Fires after the file was read again (the webviews must re-init). */
  readonly onDidReload = this.reloaded.event;
  /** Fires when document numbering facts change. */
  readonly onDidChangeNumbering = this.numberingChanged.event;

  private constructor(
    readonly uri: vscode.Uri,
    private readonly services: Services,
  ) {
    this._numbering = { type: 'numbering', generation: 0, state: 'scanning' };
  }

  /**
   * Opens a shard: stats the file, finds its dataset and tokenizer, checks for bad input.
   * Never throws for bad data (banners instead); throws only for a non-file URI.
   */
  static async open(uri: vscode.Uri, services: Services): Promise<ShardDocument> {
    if (uri.scheme !== 'file') {
      throw new Error(vscode.l10n.t('The shard editor reads files on disk; {0} is a {1}: URI.', uri.toString(), uri.scheme));
    }
    const doc = new ShardDocument(uri, services);
    await doc.load();
    doc.watch();
    return doc;
  }

  /** Current load of the file. */
  get state(): ShardState {
    return this._state;
  }

  /** Increments on every reload. */
  get generation(): number {
    return this._generation;
  }

  /** The latest numbering facts. */
  get numbering(): ShardNumberingToWebview {
    return this._numbering;
  }

  /** The `init` message for webviews. */
  initMessage(): ShardInitToWebview {
    const s = this._state;
    const ds = s.entry ? s.dataset : undefined;
    return {
      type: 'init',
      generation: this._generation,
      fileName: path.basename(s.file),
      numTokens: s.numTokens,
      sizeBytes: s.sizeBytes,
      pageTokens: PAGE_TOKENS,
      globalStart: s.globalStart,
      datasetName: ds ? path.basename(ds.root) : undefined,
      schedule: ds ? { ...ds.settings, storedTokens: ds.storedTokens } : undefined,
      eosId: s.eos,
      tokenizer: s.tokenizer
        ? { name: path.basename(path.dirname(s.tokenizer.file)) + '/' + path.basename(s.tokenizer.file), vocabSize: s.tokenizer.vocabSize }
        : undefined,
      banners: s.banners,
      prevShard: ds && s.entry && s.entry.index > 0 ? path.basename(ds.shards[s.entry.index - 1].path) : undefined,
      nextShard: ds && s.entry && s.entry.index + 1 < ds.shards.length ? path.basename(ds.shards[s.entry.index + 1].path) : undefined,
    };
  }

  /** Global offset of local offset `o`, or `o` itself for a lone shard. */
  toGlobal(o: number): number {
    return (this._state.globalStart ?? 0) + o;
  }

  private async load(): Promise<void> {
    const opened = this.uri.fsPath;
    const banners: ShardBanner[] = [];
    // Dataset and manifest line (or the storage format's unit or folder the file belongs to).
    let dataset = await this.services.datasetForFile(this.uri);
    if (!dataset && !opened.endsWith(U32_EXTENSION)) {
      try {
        dataset = await this.services.formatDatasetForFile(opened);
      } catch (err) {
        banners.push({ id: 'format', severity: 'error', message: (err as Error).message });
      }
    }
    const formatFile = dataset?.format ? formatFileIndex(dataset, opened) : undefined;
    // The token file shown: the opened file, or the token file of its unit (`.idx` → `.bin`).
    const file = formatFile !== undefined ? dataset!.shards[formatFile].path : opened;
    let sizeBytes = 0,
      trailingBytes = 0,
      numTokens = 0,
      stream: TokenStream;
    try {
      if (formatFile !== undefined) {
        const f = dataset!.format!.files[formatFile];
        stream = new TokenStream([{ path: f.path, startToken: 0, numTokens: f.numTokens, layout: f.layout }]);
        sizeBytes = (await fs.promises.stat(f.path)).size;
        numTokens = f.numTokens;
      } else if (banners.length) {
        stream = new TokenStream([{ path: file, startToken: 0, numTokens: 0 }]);
      } else {
        const r = await TokenStream.fromFile(file);
        stream = r.stream;
        sizeBytes = r.sizeBytes;
        trailingBytes = r.trailingBytes;
        numTokens = Math.floor(sizeBytes / BYTES_PER_TOKEN);
      }
    } catch (err) {
      stream = new TokenStream([{ path: file, startToken: 0, numTokens: 0 }]);
      numTokens = 0;
      banners.push({ id: 'read', severity: 'error', message: (err as Error).message });
    }
    const name = path.basename(file);
    if (numTokens === 0 && banners.length === 0) {
      banners.push({
        id: 'empty',
        severity: 'warning',
        message:
          sizeBytes === 0
            ? vscode.l10n.t('{0} is empty (0 bytes): there are no tokens to show.', name)
            : vscode.l10n.t(
                '{0} holds no tokens ({1} of {2} data): there are no tokens to show.',
                name,
                fmt(sizeBytes),
                formatNameOf(dataset!),
              ),
      });
    }
    if (trailingBytes > 0) {
      const at = numTokens * BYTES_PER_TOKEN;
      const tail = await readBytes(file, at, trailingBytes);
      banners.push({
        id: 'size',
        severity: 'error',
        message: vscode.l10n.t(
          '{0} is {1} bytes, not a multiple of 4: the last {2} at byte offset {3} ({4}) do not make a whole uint32 token and are not shown. The file may be truncated or not a raw uint32 shard.',
          name,
          fmt(sizeBytes),
          count(trailingBytes, 'byte'),
          fmt(at),
          toHex(tail),
        ),
      });
    }
    const entry = dataset ? shardOfFile(dataset, file) : undefined;
    if (dataset && !entry) {
      banners.push({
        id: 'manifest',
        severity: 'info',
        message: vscode.l10n.t('{0} is not listed in {1}: offsets are local to this file.', name, dataset.manifestFile),
      });
    }
    if (dataset && entry) {
      for (const p of dataset.problems) {
        if (p.severity === 'error' && path.resolve(p.file) === path.resolve(file))
          banners.push({ id: 'manifest', severity: 'error', message: p.message });
      }
      if (entry.numTokens !== numTokens && !banners.some((b) => b.id === 'manifest')) {
        banners.push({
          id: 'manifest',
          severity: 'error',
          message: vscode.l10n.t(
            '{0} holds {1} but {2} line {3} says num_tokens = {4}: global offsets past the listed tokens are not part of the stream.',
            name,
            count(numTokens, 'token'),
            path.basename(dataset.manifestFile),
            entry.line,
            fmt(entry.numTokens),
          ),
        });
      }
    }
    const lossFile = formatFile !== undefined ? dataset!.format!.files[formatFile].lossMask : undefined;
    if (lossFile) {
      banners.push({
        id: 'loss',
        severity: 'info',
        message: vscode.l10n.t(
          'Loss mask: tokens drawn faded with a dotted underline are not trained on ({0} holds 0 for them); the hover says so too.',
          path.basename(lossFile.path),
        ),
      });
    }
    if (dataset?.format && formatFile !== undefined) {
      const f = dataset.format;
      banners.push({
        id: 'storage',
        severity: 'info',
        message: vscode.l10n.t(
          '{0}: {1} {2} ({3}); documents {4}.',
          name,
          f.name,
          f.dtype,
          f.reason,
          f.documents
            ? vscode.l10n.t("from the format's index")
            : f.delimiter === 'opens'
              ? vscode.l10n.t('each beginning with its delimiter id {0}', dataset.settings.eosTokenId)
              : vscode.l10n.t('separated by EOS id {0}', dataset.settings.eosTokenId),
        ),
      });
    }
    const eos = dataset?.settings.eosTokenId ?? this.services.scheduleSettings().eosTokenId ?? DEFAULT_SCHEDULE.eosTokenId;
    // Tokenizer.
    let tokenizer: LoadedTokenizer | undefined;
    try {
      tokenizer = await this.services.tokenizerFor(dataset);
      if (!tokenizer) {
        banners.push({
          id: 'tokenizer',
          severity: 'info',
          action: 'chooseTokenizer',
          message: vscode.l10n.t(
            'No tokenizer found for {0} (none in the dataset folder, tokenShards.tokenizerPath not set): showing ids only.',
            name,
          ),
        });
      }
    } catch (err) {
      banners.push({ id: 'tokenizer', severity: 'error', action: 'chooseTokenizer', message: (err as Error).message });
    }
    // dtype mix-ups, from a sample at the start.
    if (numTokens > 0) {
      try {
        const sample = await stream.read(0, Math.min(numTokens, DIAGNOSE_SAMPLE));
        const anomaly = diagnoseIds(sample, tokenizer?.vocabSize ?? CORRUPT_ID_FLOOR);
        if (anomaly) {
          banners.push({
            id: 'dtype',
            severity: 'error',
            message: vscode.l10n.t('{0}, first {1}: {2}', name, count(sample.length, 'token'), anomaly.message),
          });
        }
      } catch (err) {
        banners.push({ id: 'read', severity: 'error', message: (err as Error).message });
      }
    }
    // Stream-index anomalies of this shard (an index built before): one banner each, a button per place.
    if (dataset && entry && entry.numTokens === numTokens) {
      try {
        const di = this.services.documentIndex(dataset);
        await di.ready();
        const ix = di.streamIndex;
        const threshold = Math.max(
          LONG_RUN_FLOOR,
          this.services.setting<number>('index.eosFreeRunThreshold') || DEFAULT_EOS_FREE_RUN_THRESHOLD,
        );
        const end = entry.startToken + entry.numTokens;
        for (const a of ix ? ix.anomalies(dataset.schedule, threshold) : []) {
          const inside = a.offsets.filter((o) => o >= entry.startToken && o < end);
          const spans = a.kind === 'eos-free-run' && a.offsets[0] < end && a.offsets[0] + a.count > entry.startToken;
          if (a.segment !== entry.index && !spans) continue;
          const places = (inside.length ? inside : spans ? [Math.max(a.offsets[0], entry.startToken)] : [])
            .slice(0, 8)
            .map((o) => ({ offset: o - entry.startToken, label: vscode.l10n.t('Go to {0}', fmt(o)) }));
          banners.push({ id: `index-${a.kind}`, severity: a.severity, message: a.message, places });
        }
      } catch (err) {
        this.services.log.warn(`stream index anomalies for ${file}: ${(err as Error).message}`);
      }
    }
    const old = this._state;
    this._state = {
      file,
      sizeBytes,
      trailingBytes,
      numTokens,
      stream,
      dataset,
      entry,
      globalStart: entry?.startToken,
      tokenizer,
      eos,
      banners,
      pages: new ShardPages(stream, numTokens, tokenizer, eos, 0, dataset && entry ? shardFormatInfo(dataset, entry) : undefined),
    };
    if (old && old.stream !== stream) void old.stream.close();
    this.stats = undefined;
    // An empty (or unreadable) shard has no page, so the editor never sends one and never starts
    // the scan: its numbering is final at once instead of "Counting documents…" forever.
    this._numbering =
      numTokens === 0
        ? emptyNumbering(this._generation)
        : {
            type: 'numbering',
            generation: this._generation,
            state: 'scanning',
            progress: vscode.l10n.t('Counting documents in this shard…'),
          };
  }

  /** Starts the background document scan once (the editor calls this after the first page is sent). */
  startNumbering(): void {
    if (this.numberingStarted || this.disposed) return;
    this.numberingStarted = true;
    const ds = this._state.entry ? this._state.dataset : undefined;
    this.attachUnsub?.();
    this.attachUnsub = ds
      ? this.services.documentIndex(ds).onAttach(() => {
          // A stream index was built or reloaded: load again (banners of its anomalies, numbers from it).
          if (this.numberingStarted && !this.disposed) void this.reload();
        })
      : undefined;
    void this.runNumbering(false);
  }

  /** Counts EOS tokens in earlier shards even when that is a long scan (the user asked). */
  countEarlierDocuments(): void {
    void this.runNumbering(true);
  }

  private async runNumbering(forceEarlier: boolean): Promise<void> {
    this.numberingAbort?.abort();
    const abort = new AbortController();
    this.numberingAbort = abort;
    const signal = abort.signal;
    const gen = this._generation;
    const s = this._state;
    const publish = (m: Omit<ShardNumberingToWebview, 'type' | 'generation'>) => {
      if (signal.aborted || gen !== this._generation) return;
      this._numbering = { type: 'numbering', generation: gen, ...m };
      this.numberingChanged.fire(this._numbering);
    };
    try {
      if (s.numTokens === 0) {
        publish(emptyNumbering(gen));
        return;
      }
      // 0. With the stream index: global numbers at once, from the index (the same DocumentIndex
      //    the status bar, update view and Go to Document use), no scan of this shard.
      if (s.entry && s.dataset && s.entry.numTokens === s.numTokens && !s.dataset.format?.documents) {
        const di = this.services.documentIndex(s.dataset);
        await di.ready();
        const ix = di.streamIndex;
        const pages = ix?.pageStats(s.entry.index, PAGE_TOKENS);
        const n = pages ? await ix!.segmentNumbering(s.entry.index) : undefined;
        if (pages && n) {
          this.stats = pages;
          publish({
            state: 'global',
            docBase: n.docBase,
            pageEos: pages.eosCount,
            pageFirstEos: pages.firstEos,
            pageLastEos: pages.lastEos,
            headStart: n.headStart,
            headKnown: true,
            tailEnd: n.tailEnd,
            tailKnown: n.tailKnown,
          });
          return;
        }
      }
      // 1. This shard, page by page.
      if (!this.stats) {
        let last = 0;
        const started = Date.now();
        this.stats = await s.pages.scanDocuments(signal, (done) => {
          const now = Date.now();
          if (now - last < 250) return;
          last = now;
          const r = progressRate(done * BYTES_PER_TOKEN, s.numTokens * BYTES_PER_TOKEN, now - started);
          publish({
            state: 'scanning',
            progress: withTail(
              vscode.l10n.t('Counting documents in this shard: {0}%', Math.floor((100 * done) / s.numTokens)),
              formatRateAndTimeLeft(r.bytesPerSecond, r.etaMs),
            ),
          });
        });
      }
      const stats = this.stats;
      const facts = { pageEos: stats.eosCount, pageFirstEos: stats.firstEos, pageLastEos: stats.lastEos };
      const ds = s.entry ? s.dataset : undefined;
      if (!ds || !s.entry) {
        // Lone shard: documents count from the file start; the last document is closed only by an EOS.
        const lastEosPage = lastIndexWhere(stats.lastEos, (x) => x >= 0);
        const tailEnd = s.numTokens;
        const tailKnown = lastEosPage >= 0 && lastEosPage * PAGE_TOKENS + stats.lastEos[lastEosPage] === s.numTokens - 1;
        publish({ state: 'global', docBase: 0, ...facts, headStart: 0, headKnown: true, tailEnd, tailKnown });
        return;
      }
      const entry = s.entry;
      const base = entry.startToken;
      const limit = this.services.documentScanLimit();
      const index = this.services.documentIndex(ds);
      const role = documentRuleOf(ds).role;
      // Seed the shared index with this shard's count when the file matches the manifest (where the
      // delimiter opens documents the scan counts document ends, not delimiters: no seed).
      if (entry.numTokens === s.numTokens && role === 'closes') {
        const counts = new Array<number | undefined>(ds.shards.length).fill(undefined);
        counts[entry.index] = stats.eosCount.reduce((a, b) => a + b, 0);
        index.importCounts(counts);
      }
      // 2. Head: where the document holding the shard's first token starts.
      let headStart = base,
        headKnown = base === 0;
      const formatDocs = ds.format?.documents;
      if (formatDocs && base > 0) {
        headStart = formatDocumentAt(formatDocs, base, ds.stream.totalTokens).start;
        headKnown = true;
      } else if (base > 0) {
        const b = await findDocumentBounds(ds.stream, base, s.eos, limit, role);
        headStart = b.start;
        headKnown = b.startKnown;
      }
      if (signal.aborted) throw new CancelledError();
      // 3. Tail: where the document after this shard's last EOS ends.
      const lastEosPage = lastIndexWhere(stats.lastEos, (x) => x >= 0);
      const tailFrom = lastEosPage >= 0 ? base + lastEosPage * PAGE_TOKENS + stats.lastEos[lastEosPage] + 1 : base;
      let tailEnd = ds.stream.totalTokens,
        tailKnown = false;
      if (formatDocs && tailFrom < ds.stream.totalTokens) {
        tailEnd = formatDocumentAt(formatDocs, tailFrom, ds.stream.totalTokens).end;
        tailKnown = true;
      } else if (tailFrom < ds.stream.totalTokens) {
        const b = await findDocumentBounds(ds.stream, tailFrom, s.eos, limit, role);
        tailEnd = b.end;
        tailKnown = b.endKnown;
      }
      if (signal.aborted) throw new CancelledError();
      const shardFacts = { ...facts, headStart, headKnown, tailEnd, tailKnown };
      // 4. Global numbering: EOS tokens before the shard.
      const seg = entry.index;
      let before = 0;
      for (let i = 0; i < seg; i++) before += ds.shards[i].numTokens;
      if (!index.isReadyUpTo(seg) && before > AUTO_COUNT_TOKENS && !forceEarlier) {
        publish({
          state: 'shard',
          ...shardFacts,
          canCountEarlier: true,
          progress: vscode.l10n.t(
            'Global document numbers need the EOS count of the {0} earlier shards ({1} GB to read), or the stream index (Token Shards: Index Stream, once).',
            fmt(seg),
            fmt(Math.round((before * BYTES_PER_TOKEN) / 1e9)),
          ),
        });
        return;
      }
      publish({
        state: 'shard',
        ...shardFacts,
        progress: index.isReadyUpTo(seg) ? undefined : vscode.l10n.t('Counting documents in earlier shards…'),
      });
      let lastPublish = 0;
      const tail = shardScanProgress(ds.shards, index.exportCounts());
      const docBase = await index.documentNumberAt(base, signal, (done, total) => {
        const now = Date.now();
        if (now - lastPublish < 250) return;
        lastPublish = now;
        publish({
          state: 'shard',
          ...shardFacts,
          progress: withTail(vscode.l10n.t('Counting documents in earlier shards: {0} of {1}', fmt(done), fmt(total)), tail(done, total)),
        });
      });
      publish({ state: 'global', ...shardFacts, docBase });
    } catch (err) {
      if (err instanceof CancelledError || signal.aborted) return;
      this.services.log.warn(`document numbering for ${s.file}: ${(err as Error).message}`);
      publish({
        state: this.stats ? 'shard' : 'scanning',
        ...(this.stats ? { pageEos: this.stats.eosCount, pageFirstEos: this.stats.firstEos, pageLastEos: this.stats.lastEos } : {}),
        progress: vscode.l10n.t('Document numbering failed: {0}', (err as Error).message),
      });
    }
  }

  private watch(): void {
    const dir = vscode.Uri.file(path.dirname(this.uri.fsPath));
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(dir, path.basename(this.uri.fsPath)));
    const changed = () => this.scheduleReload();
    this.disposables.push(
      watcher,
      watcher.onDidChange(changed),
      watcher.onDidCreate(changed),
      watcher.onDidDelete(changed),
      this.services.onDidChangeDataset((root) => {
        const ds = this._state.dataset;
        if (root !== '*' && ((ds && root === ds.root) || (!ds && this.uri.fsPath.startsWith(root + path.sep)))) this.scheduleReload();
      }),
      // Settings that change what is shown (not, e.g., hover settings).
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (
          ['tokenizerPath', 'eosTokenId', 'globalTokensPerUpdate', 'sequenceLength', 'documentScanLimit'].some((k) =>
            e.affectsConfiguration(`tokenShards.${k}`),
          )
        )
          this.scheduleReload();
      }),
    );
    // Node's watcher as well: VS Code's watcher does not report files outside the workspace everywhere.
    try {
      const w = fs.watch(this.uri.fsPath, { persistent: false }, () => this.scheduleReload());
      w.on('error', () => undefined);
      this.disposables.push({ dispose: () => w.close() });
    } catch {
      /* the file may be gone; VS Code's watcher still reports a re-creation */
    }
  }

  /** Reloads shortly (changes come in bursts while a file is written). */
  scheduleReload(): void {
    if (this.disposed) return;
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => {
      void this.reload();
    }, 300);
  }

  /** Reads the file again and tells the webviews. */
  async reload(): Promise<void> {
    if (this.disposed) return;
    this.numberingAbort?.abort();
    this._generation++;
    await this.load();
    if (this.disposed) return;
    this.services.log.info(`reloaded ${this.uri.fsPath} (${count(this._state.numTokens, 'token')})`);
    this.numberingStarted = false;
    this.reloaded.fire();
  }

  dispose(): void {
    this.disposed = true;
    this.attachUnsub?.();
    this.numberingAbort?.abort();
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    for (const d of this.disposables) d.dispose();
    this.reloaded.dispose();
    this.numberingChanged.dispose();
    void this._state?.stream.close();
  }
}

/**
 * Rate and time left of a scan through a dataset's first shards (counting their EOS tokens for
 * document numbers), for progress lines: call the result with (shards done, shards to do) as the
 * scan reports them; it measures from its own creation. Bytes are the shards' manifest sizes, and
 * only those of shards whose count is not in `counts` (the DocumentIndex's known counts, taken when
 * the scan starts) count: the rate and the time left are those of the bytes read in this run
 * ({@link ShardScanRate}).
 */
export function shardScanProgress(
  shards: readonly { numTokens: number }[],
  counts: readonly (number | undefined)[],
): (done: number, total: number) => string {
  const started = Date.now();
  const rate = new ShardScanRate(
    shards.map((sh) => sh.numTokens * BYTES_PER_TOKEN),
    (i) => counts[i] !== undefined,
  );
  return (done, total) => {
    const r = rate.at(done, total, Date.now() - started);
    return formatRateAndTimeLeft(r.bytesPerSecond, r.etaMs);
  };
}

/** `text · tail` (a progress sentence and its rate/time left), or `text` while the tail is empty. */
export function withTail(text: string, tail: string): string {
  return tail ? `${text} · ${tail}` : text;
}

function lastIndexWhere<T>(a: T[], f: (x: T) => boolean): number {
  for (let i = a.length - 1; i >= 0; i--) if (f(a[i])) return i;
  return -1;
}

/** Numbering of a shard with no tokens: final ('global', nothing to count, no document). */
function emptyNumbering(generation: number): ShardNumberingToWebview {
  return {
    type: 'numbering',
    generation,
    state: 'global',
    docBase: 0,
    pageEos: [],
    pageFirstEos: [],
    pageLastEos: [],
    headStart: 0,
    headKnown: true,
    tailEnd: 0,
    tailKnown: true,
  };
}

/** Reads `n` bytes at byte `pos` (for the trailing-bytes banner). */
async function readBytes(file: string, pos: number, n: number): Promise<Uint8Array> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const b = Buffer.alloc(n);
    const { bytesRead } = await fh.read(b, 0, n, pos);
    return b.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
