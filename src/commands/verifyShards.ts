/**
 * "Verify Shard Hashes" in the extension host:
 * - `tokenShards.verifyShards` (palette, manifest table title bar; optional argument: a
 *   `shard_manifest.jsonl`, a dataset folder or any file in a dataset),
 * - `tokenShards.verifyShardsIgnoreCache` (same, re-hashing shards the cache knows),
 * - `tokenShards.verifyThisShard` (shard editor title bar; the `.u32` given as argument, else the
 *   focused shard editor's file (`services.activeShard`), else the active tab's `.u32`).
 *
 * Each run shows a cancellable `window.withProgress` notification
 * ("shard i of N · GB done · GB/s · time left"), then a summary notification ("2,098 ok", or
 * "3 mismatched" with a "Show" button that opens the log where every fault is listed). Results
 * go to the {@link VerificationStore} (`src/verificationStore.ts`), which the manifest table and
 * the Problems diagnostics follow. Hashing itself is `src/core/verify/verify.ts` (worker threads; the host thread only routes
 * messages). Digests are cached in `<globalStorage>/verify-cache.json`.
 *
 * Test seam: {@link runVerification} is the whole run minus the notifications; it takes the
 * `Progress`/`CancellationToken` pair that `withProgress` would give, so a test can drive it with
 * its own token and record what it reports. The commands return their {@link VerifyRunSummary}.
 *
 * The commands are registered by the composition root (`src/extension.ts`) from {@link verifyCommands}.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import * as fs from 'fs';
import { Dataset, findDatasetRoot, formatFilesOf, formatNameOf, shardOfFile } from '../core/dataset';
import {
  HashCheck,
  HashCheckResult,
  checkHashes,
  fileVerdicts,
  formatVerifyChecks,
  streamManifestNextTo,
} from '../core/formats/fileHashes';
import { count, fmt } from '../core/units';
import { BYTES_PER_TOKEN, SHARD_MANIFEST, ShardEntry } from '../core/manifest';
import { ShardStatus, ShardVerifyResult, VerifyProgress, defaultJobs, reportAllOk, verifyShards } from '../core/verify/verify';
import {
  formatBytes,
  formatDone,
  formatDuration,
  formatFailedUpdates,
  formatRate,
  formatVerifySummary,
  formatVerifyTiming,
} from '../core/verify/format';
import { VerifyCache } from '../core/verify/cache';
import { verdictInputs } from '../core/verify/formatVerdicts';
import { Services, StreamIndexHooks, activeTabUri } from '../services';
import { VerificationStore, verificationKey } from '../verificationStore';
import { plainText, shortText } from '../core/untrusted';

/** The subset of a log channel a run writes to (a `LogOutputChannel` satisfies it). */
export interface VerifyLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  trace?(message: string): void;
  /** The channel's level (a `LogOutputChannel` has it): ok shards are traced only at `Trace`, so their sentences are not even built otherwise. */
  readonly logLevel?: vscode.LogLevel;
}

/** Everything a run needs besides the dataset (so tests can build one without the extension's services). */
export interface VerifyDeps {
  log: VerifyLog;
  /** Absolute path of the cache JSON file. */
  cacheFile: string;
  /** Worker threads (≥ 1). */
  jobs: number;
  /** Where results are published for the table and Problems; optional for tests. */
  store?: VerificationStore;
  /** Explicit worker script (tests); default rule in `src/core/verify/verify.ts`. */
  workerPath?: string;
  /** The stream index: built in the same read when given (`streamIndexService.ts`). */
  streamIndex?: StreamIndexHooks;
}

/** What to verify. */
export interface VerifyRunRequest {
  /** Re-hash shards the cache knows to be good. */
  ignoreCache?: boolean;
  /** Shard indices to verify (default: all). */
  indices?: number[];
}

/**
 * The outcome of verifying a format stream's files (any format but the dataset card's): the
 * CLI's `verify PATH [--manifest FILE]` path (`formatVerifyChecks`, `checkHashes`).
 */
export interface FormatVerifySummary {
  /** Dataset root. */
  root: string;
  /** The storage format (`formatNameOf`). */
  format: string;
  /** Hash kinds compared (`sha256`, MDS's `sha1`, `xxh64`…). */
  kinds: string[];
  /** The `token-shards manifest` list checked against, or undefined: the hashes the format carries. */
  manifest?: string;
  /** One result per file checked (token files and sidecars). */
  results: HashCheckResult[];
  allOk: boolean;
  cancelled: boolean;
  /** "3 files ok (sha256 against files.jsonl)"-style one-liner. */
  text: string;
}

/** The outcome of one run, as returned by the commands and {@link runVerification}. */
export interface VerifyRunSummary {
  /** Dataset root. */
  root: string;
  /** Shards in the run. */
  total: number;
  counts: Record<ShardStatus, number>;
  cancelled: boolean;
  /** Shards left unchecked by a cancel. */
  unfinished: number;
  /** Shards answered from the cache. */
  fromCache: number;
  bytesHashed: number;
  elapsedMs: number;
  jobs: number;
  /** "2,098 ok" / "3 mismatched · 2,095 ok"-style one-liner. */
  text: string;
  allOk: boolean;
  /** Every finished shard's result, by index. */
  results: ShardVerifyResult[];
}

/** The notification's progress line, localised: "shard i of N · GB done · GB/s · time left" (MB below 1 GB done). */
export function progressMessage(p: VerifyProgress): string {
  const i = Math.max(1, Math.min(p.shardsTotal, p.shardsDone + p.running.length));
  const parts = [vscode.l10n.t('shard {0} of {1}', fmt(i), fmt(p.shardsTotal)), vscode.l10n.t('{0} done', formatDone(p.bytesDone))];
  if (p.bytesPerSecond > 0) parts.push(formatRate(p.bytesPerSecond));
  if (p.etaMs !== undefined && p.bytesDone < p.bytesTotal) parts.push(vscode.l10n.t('{0} left', formatDuration(p.etaMs)));
  return parts.join(' · ');
}

/**
 * One verification run of a dataset (or some of its shards) with the given progress reporter and
 * cancellation token: the body of the commands without the notifications. Writes every fault
 * to `deps.log`, publishes results to `deps.store`, records digests in the cache.
 * Progress: `report({ message, increment })` with increments in percent of the bytes to hash.
 * Cancelling the token stops within a second; unfinished shards get no result and no cache entry.
 * @throws Error when the worker script cannot be found (see `src/core/verify/verify.ts`).
 */
export async function runVerification(
  deps: VerifyDeps,
  ds: Dataset,
  req: VerifyRunRequest,
  progress: vscode.Progress<{ message?: string; increment?: number }>,
  token: vscode.CancellationToken,
): Promise<VerifyRunSummary> {
  const shards = req.indices ? req.indices.map((i) => ds.shards[i]).filter((e): e is ShardEntry => !!e) : ds.shards;
  const store = deps.store;
  if (
    store &&
    !store.begin(
      ds.root,
      shards.map((e) => e.index),
    )
  ) {
    throw new Error(vscode.l10n.t('A verification of {0} is already running.', ds.root));
  }
  const ac = new AbortController();
  const sub = token.onCancellationRequested(() => ac.abort());
  if (token.isCancellationRequested) ac.abort();
  let reportedPct = 0;
  const cache = store ? await store.cache() : await VerifyCache.load(deps.cacheFile);
  if (cache.warning) deps.log.warn(cache.warning);
  deps.log.info(
    `verify ${ds.root}: ${count(shards.length, 'shard')}, ${count(deps.jobs, 'worker')}${req.ignoreCache ? ', ignoring the cache' : ''}`,
  );
  try {
    const report = await verifyShards(shards, {
      jobs: deps.jobs,
      signal: ac.signal,
      cache,
      ignoreCache: req.ignoreCache,
      workerPath: deps.workerPath,
      schedule: ds.lone ? undefined : ds.schedule,
      index: await deps.streamIndex?.verifyOption(ds),
      // The extension host verifies many times: the next run starts with warm workers.
      keepWorkersWarm: true,
      progressIntervalMs: 250,
      onResult: (r) => {
        store?.record(ds.root, r);
        if (r.status === 'ok') {
          if (deps.log.trace && (deps.log.logLevel ?? vscode.LogLevel.Trace) <= vscode.LogLevel.Trace) deps.log.trace(r.message);
        } else deps.log.error(r.message);
      },
      onProgress: (p) => {
        const message = progressMessage(p);
        const pct = p.bytesTotal > 0 ? (100 * p.bytesDone) / p.bytesTotal : (100 * p.shardsDone) / Math.max(1, p.shardsTotal);
        const increment = Math.max(0, pct - reportedPct);
        reportedPct = Math.max(reportedPct, pct);
        progress.report({ message, increment });
        store?.progress(ds.root, message, p.running);
      },
    });
    if (report.indexError) deps.log.warn(report.indexError);
    if (report.indexed > 0) await deps.streamIndex?.reload(ds).catch((e: Error) => deps.log.warn(`stream index: ${e.message}`));
    const failedUpdates = formatFailedUpdates(report.results);
    const text = formatVerifySummary(report) + (failedUpdates ? ` — ${failedUpdates}` : '');
    const summary: VerifyRunSummary = {
      root: ds.root,
      total: shards.length,
      counts: report.counts,
      cancelled: report.cancelled,
      unfinished: report.unfinished.length,
      fromCache: report.fromCache,
      bytesHashed: report.bytesHashed,
      elapsedMs: report.elapsedMs,
      jobs: report.jobs,
      text,
      allOk: reportAllOk(report),
      results: report.results,
    };
    // A rate over a few MB mostly measures start-up (stat of every shard, starting workers): leave it out.
    const rate =
      report.elapsedMs > 0 && report.bytesHashed >= 1e8 ? ` (${formatRate((report.bytesHashed / report.elapsedMs) * 1000)})` : '';
    deps.log.info(
      `verify ${ds.root}: ${text}; ${formatBytes(report.bytesHashed)} hashed in ${formatDuration(report.elapsedMs)}${rate} with ${count(report.jobs, 'worker')}`,
    );
    deps.log.info(`verify ${ds.root}: ${formatVerifyTiming(report)}`);
    if (report.cacheError) deps.log.warn(report.cacheError);
    return summary;
  } finally {
    sub.dispose();
    store?.end(ds.root);
  }
}

/** Resolves the dataset a verify command acts on (argument, focused editor, workspace, pick). */
async function datasetFor(services: Services, arg: unknown): Promise<Dataset | undefined> {
  const uri = arg instanceof vscode.Uri ? arg : undefined;
  if (uri?.scheme === 'file') {
    const root = path.basename(uri.fsPath) === SHARD_MANIFEST ? path.dirname(uri.fsPath) : await findDatasetRoot(uri.fsPath);
    if (root) return services.openRoot(root);
    // A folder of another format is its stream; a file, the stream its format opens it in.
    if ((await fs.promises.stat(uri.fsPath).catch(() => undefined))?.isDirectory()) return services.openRoot(uri.fsPath);
    const formatDs = await services.datasetForFile(uri);
    if (formatDs) return formatDs;
  }
  return services.pickDataset(vscode.l10n.t('Verify which dataset?'));
}

/**
 * Verify for a format stream: against a `token-shards manifest` list next to its files
 * (`streamManifestNextTo`), else the hashes the format carries (MDS), else a list the user chooses.
 * File by file (each with its sidecars), publishing each file's verdict (`fileVerdicts`) to the
 * {@link VerificationStore} as the dataset card's runs do, so the manifest table shows a status
 * and a last-checked time per row, live.
 * @returns the summary, or undefined when there was nothing to check against (said in a message)
 *   or a run on the same stream is in progress.
 */
async function verifyFormatStream(services: Services, store: VerificationStore, ds: Dataset): Promise<FormatVerifySummary | undefined> {
  const files = formatFilesOf(ds);
  const format = formatNameOf(ds);
  const key = verificationKey(ds);
  if (store.isRunning(key)) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('File hashes of {0} are already being verified.', plainText(path.basename(ds.root))),
    );
    return undefined;
  }
  let manifest = await streamManifestNextTo(files);
  if (!manifest && !formatVerifyChecks(files).checks.length) {
    const chosen = await vscode.window.showOpenDialog({
      title: vscode.l10n.t('{0} carries no hashes: choose the list written by token-shards manifest', format),
      filters: { 'JSON lines': ['jsonl'] },
      canSelectMany: false,
    });
    if (!chosen?.[0]) {
      void vscode.window.showInformationMessage(
        vscode.l10n.t(
          '{0} ({1}) carries no hashes: write them once with `token-shards manifest {0} > files.jsonl` next to the data, then verify again.',
          plainText(shortText(ds.root)),
          format,
        ),
      );
      return undefined;
    }
    manifest = chosen[0].fsPath;
  }
  const started = Date.now();
  try {
    const { checks, kinds } = formatVerifyChecks(
      files,
      manifest ? { text: await fs.promises.readFile(manifest, 'utf8'), file: manifest } : undefined,
    );
    // The checks of one file (itself and its sidecars) run together; their verdict is the file's row.
    const rowOf = new Map(files.map((f, i) => [f.name, i]));
    const groups: { row?: number; checks: HashCheck[] }[] = [];
    for (const c of checks) {
      const row = c.file !== undefined ? rowOf.get(c.file) : undefined;
      const last = groups[groups.length - 1];
      if (last && last.row === row) last.checks.push(c);
      else groups.push({ row, checks: [c] });
    }
    const rows = groups.flatMap((g) => (g.row === undefined ? [] : [ds.shards[g.row].index]));
    const verdicts = await store.formatVerdicts();
    if (!store.begin(key, rows)) throw new Error(vscode.l10n.t('A verification of {0} is already running.', ds.root));
    const summary = await vscode.window
      .withProgress(
        { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Verifying file hashes'), cancellable: true },
        async (progress, token) => {
          const abort = new AbortController();
          token.onCancellationRequested(() => abort.abort());
          const results: HashCheckResult[] = [];
          let cancelled = false;
          for (const [k, g] of groups.entries()) {
            if (abort.signal.aborted) {
              cancelled = true;
              break;
            }
            const message = vscode.l10n.t('file {0} of {1} · {2}', fmt(k + 1), fmt(groups.length), kinds.join(', '));
            progress.report({ message, increment: k ? 100 / groups.length : 0 });
            store.progress(key, message, g.row === undefined ? [] : [ds.shards[g.row].index]);
            let got: HashCheckResult[];
            // The files a verdict stands on, as they are before they are read (kept for later sessions).
            const row = g.row === undefined ? undefined : ds.shards[g.row];
            const inputs =
              row && verdicts
                ? await verdictInputs([...new Set([row.path, ...g.checks.map((c) => c.path), ...(manifest ? [manifest] : [])])])
                : [];
            try {
              got = await checkHashes(g.checks, abort.signal);
            } catch (err) {
              if (!abort.signal.aborted) throw err;
              cancelled = true;
              break;
            }
            results.push(...got);
            if (g.row === undefined) continue;
            const verdict = fileVerdicts(files, got)[0];
            const e = ds.shards[g.row];
            if (verdict) {
              verdicts?.set(e.path, {
                status: verdict.status,
                detail: verdict.detail,
                checkedAt: Date.now(),
                against: manifest ?? null,
                files: inputs,
              });
              store.record(key, {
                index: e.index,
                shard: e.shard,
                path: e.path,
                line: e.line,
                status: verdict.status,
                expectedSize: files[g.row].sizeBytes,
                checkedAt: Date.now(),
                fromCache: false,
                message: verdict.detail,
              });
            }
          }
          return formatStreamSummary(ds.root, format, kinds, manifest, results, cancelled);
        },
      )
      .then(
        async (v) => {
          // Kept for later sessions (never in the dataset): the rows show them while their files are unchanged.
          await verdicts?.save().catch((err: Error) => services.log.warn(`cannot save format verify results: ${err.message}`));
          store.end(key);
          return v;
        },
        (err: unknown) => {
          store.end(key);
          throw err;
        },
      );
    for (const r of summary.results) if (r.status !== 'ok') services.log.warn(`verify ${ds.root}: ${r.status}: ${r.message ?? r.name}`);
    services.log.info(`verify ${ds.root}: ${summary.text} in ${formatDuration(Date.now() - started)}`);
    const show = vscode.l10n.t('Show');
    if (summary.allOk || summary.cancelled) void vscode.window.showInformationMessage(vscode.l10n.t('File hashes: {0}', summary.text));
    else
      void vscode.window.showWarningMessage(vscode.l10n.t('File hashes: {0}', summary.text), show).then((c) => {
        if (c === show) services.log.show(true);
      });
    return summary;
  } catch (err) {
    services.log.error(`verify ${ds.root}: ${(err as Error).message}`);
    void vscode.window.showErrorMessage(vscode.l10n.t('Cannot verify file hashes: {0}', plainText((err as Error).message)));
    return undefined;
  }
}

/**
 * The summary of a format stream's check (see {@link FormatVerifySummary}); its `text` names the
 * hash kinds and what they were checked against.
 */
export function formatStreamSummary(
  root: string,
  format: string,
  kinds: string[],
  manifest: string | undefined,
  results: HashCheckResult[],
  cancelled: boolean,
): FormatVerifySummary {
  const bad = results.filter((r) => r.status !== 'ok').length;
  const against = manifest ? path.basename(manifest) : vscode.l10n.t('the hashes {0} carries', format);
  const text = cancelled
    ? vscode.l10n.t('cancelled after {0}', count(results.length, 'file'))
    : bad
      ? vscode.l10n.t('{0} of {1} files not ok ({2} against {3})', fmt(bad), fmt(results.length), kinds.join(', '), against)
      : vscode.l10n.t('all {0} ok ({1} against {2})', count(results.length, 'file'), kinds.join(', '), against);
  return { root, format, kinds, manifest, results, allOk: !cancelled && bad === 0, cancelled, text };
}

/** True when a dataset is a format stream (not the dataset card's `shard_manifest.jsonl` layout). */
function isFormatStream(ds: Dataset): boolean {
  return ds.format !== undefined && formatNameOf(ds) !== 'token-stream';
}

/** The `.u32` that `verifyThisShard` acts on. */
function shardUriFor(services: Services, arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) return arg;
  if (services.activeShard) return services.activeShard.uri;
  const tab = activeTabUri();
  return tab && tab.path.endsWith('.u32') ? tab : undefined;
}

/**
 * How long the workbench shows a notification progress at least (VS Code's ProgressService:
 * `Promise.all([timeout(800), task])` before closing it, code-server 4.100 / VS Code 1.100).
 */
const PROGRESS_MIN_MS = 800;
/** Extra wait for the closing notification to leave the screen. */
const PROGRESS_CLOSE_MARGIN_MS = 200;

/**
 * Runs a verification under a cancellable notification, then shows the summary notification once
 * the progress notification has closed (`withProgress` has resolved and its minimum display time passed).
 * @returns the summary, or undefined when there was nothing to run (or it could not start).
 */
async function verifyWithNotification(
  services: Services,
  store: VerificationStore,
  ds: Dataset,
  req: VerifyRunRequest,
  title: string,
): Promise<VerifyRunSummary | undefined> {
  if (store.isRunning(ds.root)) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('Shard hashes of {0} are already being verified.', plainText(path.basename(ds.root))),
    );
    return undefined;
  }
  const deps: VerifyDeps = {
    log: services.log,
    cacheFile: store.cacheFile,
    jobs: verifyJobs(services),
    store,
    streamIndex: services.streamIndex,
  };
  let summary: VerifyRunSummary;
  const started = Date.now();
  try {
    summary = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable: true },
      (progress, token) => runVerification(deps, ds, req, progress, token),
    );
  } catch (err) {
    services.log.error(`verify ${ds.root}: ${(err as Error).message}`);
    void vscode.window.showErrorMessage(vscode.l10n.t('Cannot verify shard hashes: {0}', plainText((err as Error).message)));
    return undefined;
  }
  // The workbench keeps a progress notification up for at least PROGRESS_MIN_MS after it starts,
  // even when the task resolved sooner (a run answered from the cache): the summary waits until
  // it is gone, so it never shows next to a stale "… done" line.
  const linger = PROGRESS_MIN_MS + PROGRESS_CLOSE_MARGIN_MS - (Date.now() - started);
  if (linger > 0) await new Promise((r) => setTimeout(r, linger));
  const show = vscode.l10n.t('Show');
  const single = summary.total === 1 && summary.results.length === 1 ? summary.results[0] : undefined;
  const showLog = (choice: string | undefined) => {
    if (choice === show) services.log.show(true);
  };
  if (summary.cancelled) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Verification cancelled: {0}.', summary.text));
  } else if (single) {
    const name = path.basename(single.shard);
    if (single.status === 'ok')
      void vscode.window.showInformationMessage(vscode.l10n.t('{0}: sha256 matches the manifest.', plainText(shortText(name))));
    else
      void vscode.window
        .showWarningMessage(vscode.l10n.t('{0}: {1}', plainText(shortText(name)), singleStatusText(single.status)), show)
        .then(showLog);
  } else if (summary.allOk) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Shard hashes: {0}', summary.text));
  } else {
    void vscode.window.showWarningMessage(vscode.l10n.t('Shard hashes: {0}', summary.text), show).then(showLog);
  }
  return summary;
}

/** The one-shard summary of a failed status ("hash mismatch", …). */
function singleStatusText(status: ShardStatus): string {
  switch (status) {
    case 'mismatch':
      return vscode.l10n.t('hash mismatch');
    case 'missing':
      return vscode.l10n.t('the file is missing');
    case 'size-mismatch':
      return vscode.l10n.t('size mismatch (not 4 × num_tokens)');
    case 'changed':
      return vscode.l10n.t('the file changed while it was read');
    case 'unreadable':
      return vscode.l10n.t('the file cannot be read');
    case 'no-hash':
      return vscode.l10n.t('the manifest has no sha256 for it');
    default:
      return status;
  }
}

/** Worker threads for a run: the `tokenShards.verify.workers` setting, 0 = the number of cores. */
export function verifyJobs(services: Services): number {
  const n = services.setting<number>('verify.workers');
  return n && n > 0 ? Math.floor(n) : defaultJobs();
}

/** The three verify commands (see the file comment), sharing one {@link VerificationStore}. */
export function verifyCommands(
  services: Services,
  store: VerificationStore,
): {
  verifyShards(arg?: unknown): Promise<VerifyRunSummary | FormatVerifySummary | undefined>;
  verifyShardsIgnoreCache(arg?: unknown): Promise<VerifyRunSummary | FormatVerifySummary | undefined>;
  verifyThisShard(arg?: unknown): Promise<VerifyRunSummary | undefined>;
} {
  // Shards that failed verification, for the update view and the `update k` hover.
  services.failedShards = (root) =>
    store
      .results(root)
      .filter((r) => r.status !== 'ok')
      .map((r) => ({ index: r.index, shard: r.shard, status: r.status }));
  return {
    verifyShards: async (arg) => {
      const ds = await datasetFor(services, arg);
      if (ds && isFormatStream(ds)) return verifyFormatStream(services, store, ds);
      return ds && verifyWithNotification(services, store, ds, {}, vscode.l10n.t('Verifying shard hashes'));
    },
    verifyShardsIgnoreCache: async (arg) => {
      const ds = await datasetFor(services, arg);
      if (ds && isFormatStream(ds)) return verifyFormatStream(services, store, ds);
      return (
        ds &&
        verifyWithNotification(services, store, ds, { ignoreCache: true }, vscode.l10n.t('Verifying shard hashes (ignoring the cache)'))
      );
    },
    verifyThisShard: async (arg) => {
      const uri = shardUriFor(services, arg);
      if (!uri) {
        void vscode.window.showWarningMessage(vscode.l10n.t('Open a shard (.u32) first, or pass its URI to this command.'));
        return undefined;
      }
      const ds = await services.datasetForFile(uri);
      const entry = ds && shardOfFile(ds, uri.fsPath);
      if (!ds || !entry) {
        void vscode.window.showWarningMessage(
          vscode.l10n.t(
            '{0} is not listed in a shard_manifest.jsonl, so there is no sha256 to compare it with.',
            plainText(shortText(path.basename(uri.fsPath))),
          ),
        );
        return undefined;
      }
      return verifyWithNotification(
        services,
        store,
        ds,
        { indices: [entry.index], ignoreCache: true },
        vscode.l10n.t('Verifying {0} ({1} bytes)', plainText(shortText(entry.shard)), fmt(entry.numTokens * BYTES_PER_TOKEN)),
      );
    },
  };
}
