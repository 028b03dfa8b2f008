/**
 * The host side of the stream index (`core/streamIndex/streamIndex.ts`): one service, built once by the
 * composition root, that every view asks.
 *
 * - Storage: `<globalStorageUri>/stream-index/` (never the dataset folder), per shard keyed by its
 *   file identity, so entries of a rewritten shard are never used (rebuilt instead).
 * - {@link StreamIndexService.indexFor}: loads a dataset's index (stat + small JSON reads) and
 *   attaches it to the dataset's `DocumentIndex` (`Services.documentIndex`) — the ONE source of
 *   document numbers for the shard editor, its cursor line, the status bar, the update view, Go to
 *   Document and hovers — so they all say the same number, at once.
 * - {@link StreamIndexService.build}: what "Index Stream" runs (src/commands/indexStream.ts): reads
 *   every shard not indexed yet once (worker pool, no hashing), with a cancellable notification
 *   (shards, bytes, rate, time left); finished shards are kept (resumable).
 * - {@link StreamIndexService.verifyOption}: what Verify Shard Hashes passes to `verifyShards` to
 *   build the index in the same read.
 * - Anomalies (EOS-free runs over `tokenShards.index.eosFreeRunThreshold`, special ids inside
 *   documents, unknown ids, a dtype mix-up look) become Problems on the shard's manifest line
 *   (source "stream index"), each naming global offsets and updates.
 * - {@link StreamIndexService.anomaliesOf} feeds the marks on manifest-table rows and update-view
 *   sequences; {@link StreamIndexService.onDidChange} fires with the dataset root whenever an
 *   index was (re)loaded, so views re-render their numbers and marks.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { Dataset } from './core/dataset';
import { count, fmt } from './core/units';
import { indexParamsFor, indexSegmentsOf, indexShards, openDatasetIndex } from './core/streamIndex/indexShards';
import { Anomaly, DEFAULT_EOS_FREE_RUN_THRESHOLD } from './core/streamIndex/anomalies';
import { IndexStore } from './core/streamIndex/entryStore';
import { StreamIndex } from './core/streamIndex/streamIndex';
import { LONG_RUN_FLOOR, ScanParams } from './core/streamIndex/scan';
import { VerifyOptions } from './core/verify/verify';
import { formatBytes, formatDone, formatDuration, formatRate } from './core/verify/format';
import { Services } from './services';
import { plainText } from './core/untrusted';

/** Folder of the index inside the extension's global storage. */
export const STREAM_INDEX_FOLDER = 'stream-index';

interface Loaded {
  ds: Dataset;
  index: StreamIndex;
  params: ScanParams;
}

/** See the file header. */
export class StreamIndexService implements vscode.Disposable {
  readonly store: IndexStore;
  private readonly loaded = new WeakMap<Dataset, Promise<Loaded>>();
  private readonly byRoot = new Map<string, Loaded>();
  private readonly building = new Map<string, Promise<void>>();
  private readonly changed = new vscode.EventEmitter<string>();
  /** Fires with a dataset root when its index was (re)loaded. */
  readonly onDidChange = this.changed.event;
  private readonly problems = vscode.languages.createDiagnosticCollection('tokenShards.streamIndex');
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly services: Services,
    globalStoragePath: string,
  ) {
    this.store = new IndexStore(path.join(globalStoragePath, STREAM_INDEX_FOLDER), { onWarning: (m) => services.log.warn(m) });
    // Every new DocumentIndex (one per dataset) gets this dataset's stream index attached.
    services.streamIndexLoader = (ds, di) => {
      if (!ds.lone) di.attachWhenLoaded(this.indexFor(ds).then((ix) => (ix.indexedCount > 0 ? ix : undefined)));
    };
    this.disposables.push(
      this.changed,
      this.problems,
      services.onDidChangeDataset((root) => {
        for (const r of root === '*' ? [...this.byRoot.keys()] : [root]) this.byRoot.delete(r);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('tokenShards.index')) return;
        for (const l of this.byRoot.values()) this.publishProblems(l);
      }),
    );
  }

  /** `tokenShards.index.eosFreeRunThreshold` (tokens; at least the per-shard floor the index keeps). */
  threshold(): number {
    const t = this.services.setting<number>('index.eosFreeRunThreshold') ?? DEFAULT_EOS_FREE_RUN_THRESHOLD;
    return Math.max(LONG_RUN_FLOOR, Number.isFinite(t) ? t : DEFAULT_EOS_FREE_RUN_THRESHOLD);
  }

  /** The scan parameters of a dataset (EOS from its settings; vocabulary, special ids, holes from its tokenizer). */
  async params(ds: Dataset): Promise<ScanParams> {
    let tok;
    try {
      tok = await this.services.tokenizerFor(ds);
    } catch {
      tok = undefined;
    }
    return indexParamsFor(ds, tok);
  }

  /**
   * The dataset's index as stored (loads once per dataset object; {@link reload} after builds),
   * attached to its `DocumentIndex`. Never throws: a store that cannot be read is an empty index.
   */
  indexFor(ds: Dataset): Promise<StreamIndex> {
    let p = this.loaded.get(ds);
    if (!p) {
      p = this.load(ds);
      this.loaded.set(ds, p);
    }
    return p.then((l) => l.index);
  }

  /** The index of a dataset when it was loaded already (synchronous; for hovers and status text). */
  peek(root: string): StreamIndex | undefined {
    return this.byRoot.get(root)?.index;
  }

  /** Loads the dataset's index again (after a build or a verify run). */
  async reload(ds: Dataset): Promise<StreamIndex> {
    const p = this.load(ds);
    this.loaded.set(ds, p);
    const di = this.services.documentIndex(ds);
    di.attachWhenLoaded(p.then((l) => (l.index.indexedCount > 0 ? l.index : undefined)));
    await di.ready();
    this.changed.fire(ds.root);
    return (await p).index;
  }

  private async load(ds: Dataset): Promise<Loaded> {
    const params = await this.params(ds);
    let index: StreamIndex;
    try {
      index = await openDatasetIndex(ds, this.store, params);
    } catch (err) {
      this.services.log.warn(`stream index of ${ds.root}: ${(err as Error).message}`);
      index = await openDatasetIndex(ds, new IndexStore(''), params).catch(() => undefined as never);
    }
    const l: Loaded = { ds, index, params };
    this.byRoot.set(ds.root, l);
    this.publishProblems(l);
    return l;
  }

  /** The anomalies of a loaded dataset index (threshold from the setting). */
  anomalies(ds: Dataset, index: StreamIndex): Anomaly[] {
    return ds.lone ? [] : index.anomalies(ds.schedule, this.threshold());
  }

  /** The anomalies of a dataset's index, loading it once (for the manifest table's and the update view's marks). */
  async anomaliesOf(ds: Dataset): Promise<Anomaly[]> {
    if (ds.lone) return [];
    try {
      return this.anomalies(ds, await this.indexFor(ds));
    } catch (err) {
      this.services.log.warn(`stream index anomalies of ${ds.root}: ${(err as Error).message}`);
      return [];
    }
  }

  private publishProblems(l: Loaded): void {
    const { ds, index } = l;
    if (ds.lone || !ds.manifestFile) return;
    const uri = vscode.Uri.file(ds.manifestFile);
    const diags = this.anomalies(ds, index).map((a) => {
      const line = Math.max(0, ds.shards[a.segment].line - 1);
      const d = new vscode.Diagnostic(
        new vscode.Range(line, 0, line, Number.MAX_SAFE_INTEGER),
        a.message,
        a.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
      );
      d.source = 'stream index';
      d.code = a.kind;
      return d;
    });
    this.problems.set(uri, diags);
  }

  /** What Verify Shard Hashes passes to `verifyShards` to build the index in the same read. */
  async verifyOption(ds: Dataset): Promise<VerifyOptions['index']> {
    if (ds.lone) return undefined;
    return { store: this.store, params: await this.params(ds) };
  }

  /**
   * Index Stream: builds the missing entries of a dataset with a cancellable progress notification,
   * then reloads the index and says what it found. One build per dataset at a time; the promise
   * resolves when the index is reloaded, not when the closing notification is dismissed.
   */
  build(ds: Dataset, opts: { force?: boolean; silent?: boolean } = {}): Promise<void> {
    const running = this.building.get(ds.root);
    if (running) return running;
    const p = this.buildNow(ds, opts).finally(() => this.building.delete(ds.root));
    this.building.set(ds.root, p);
    return p;
  }

  private async buildNow(ds: Dataset, opts: { force?: boolean; silent?: boolean }): Promise<void> {
    const params = await this.params(ds);
    const name = path.basename(ds.root);
    const log = this.services.log;
    const report = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        cancellable: true,
        title: vscode.l10n.t('Indexing the token stream of {0}', plainText(name)),
      },
      async (progress, token) => {
        const ac = new AbortController();
        const sub = token.onCancellationRequested(() => ac.abort());
        let reported = 0;
        try {
          return await indexShards(indexSegmentsOf(ds), this.store, params, {
            signal: ac.signal,
            keepWorkersWarm: true,
            force: opts.force,
            progressIntervalMs: 250,
            onProgress: (p) => {
              const i = Math.max(1, Math.min(p.shardsTotal, p.shardsDone + p.running.length));
              const parts = [
                vscode.l10n.t('shard {0} of {1}', fmt(i), fmt(p.shardsTotal)),
                vscode.l10n.t('{0} read', formatDone(p.bytesDone)),
              ];
              if (p.bytesPerSecond > 0) parts.push(formatRate(p.bytesPerSecond));
              if (p.etaMs !== undefined && p.bytesDone < p.bytesTotal) parts.push(vscode.l10n.t('{0} left', formatDuration(p.etaMs)));
              const pct = p.bytesTotal > 0 ? (100 * p.bytesDone) / p.bytesTotal : 100;
              progress.report({ message: parts.join(' · '), increment: Math.max(0, pct - reported) });
              reported = Math.max(reported, pct);
            },
          });
        } finally {
          sub.dispose();
        }
      },
    );
    for (const f of report.failed) log.error(`stream index: ${f.message}`);
    log.info(
      `stream index ${ds.root}: ${report.built} built, ${report.reused} still valid, ${report.shared} hard links read once, ${report.failed.length} failed${report.cancelled ? `, cancelled (${report.unfinished.length} left)` : ''}; ${formatBytes(report.bytesRead)} in ${formatDuration(report.elapsedMs)}`,
    );
    const index = await this.reload(ds);
    if (opts.silent) return;
    const anomalies = this.anomalies(ds, index);
    const docs = index.documentCount;
    const what = report.cancelled
      ? vscode.l10n.t(
          'Indexing cancelled: {0} of {1} indexed (kept; Index Stream continues from there).',
          fmt(index.indexedCount),
          count(ds.shards.length, 'shard'),
        )
      : vscode.l10n.t(
          'Stream indexed: {0}; longest run without EOS {1}; {2}.',
          docs !== undefined ? count(docs, 'document') : vscode.l10n.t('? documents'),
          count(index.summary().longestRun.length, 'token'),
          anomalies.length
            ? vscode.l10n.t('{0} in Problems', count(anomalies.length, 'anomaly', 'anomalies'))
            : vscode.l10n.t('no anomaly'),
        );
    const show = anomalies.length ? vscode.l10n.t('Show Problems') : undefined;
    // Not awaited: the build is over, and a notification left open must not keep it "running"
    // (a second Index Stream would silently join a build that ended).
    void (
      report.failed.length || anomalies.some((a) => a.severity === 'error')
        ? vscode.window.showWarningMessage(what, ...(show ? [show] : []))
        : vscode.window.showInformationMessage(what, ...(show ? [show] : []))
    ).then((pick) => {
      if (pick && pick === show) void vscode.commands.executeCommand('workbench.actions.view.problems');
    });
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
