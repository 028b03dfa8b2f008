/**
 * The manifest table: a read-only custom editor (`tokenShards.manifestEditor`, priority `option`
 * because `shard_manifest.jsonl` is also text) showing
 * - a header: every key of `manifest.json` and `verification.json` (nested values as JSON);
 * - totals: shards, stored tokens, training tokens, updates (0-based), tokens per update;
 * - a virtualised table of the shards (index, file, start_token, num_tokens, updates covered,
 *   size on disk, verification status, the manifest's sha256 (first 12 hex digits; full one in the
 *   tooltip, copied by the cell's button or Ctrl+C), last checked); clicking a row opens the shard in the
 *   shard editor (`vscode.openWith …, 'tokenShards.shardEditor'`).
 *
 * Also here: the `tokenShards.openManifest` command ({@link openManifest}; title-bar action on the
 * manifest's text editor; argument: a `shard_manifest.jsonl`, a dataset folder or any file inside
 * a dataset) and the one-time offer ({@link offerManifestTable}) (per workspace, remembered in `workspaceState` as soon as it is shown; never
 * while a table or shard editor is open or an editor was opened since activation) to open the
 * table when the workspace holds a dataset.
 *
 * Statuses come from the {@link VerificationStore} (this session's runs, the cache for earlier
 * ones) and follow runs live; a format stream's rows get theirs from Verify Shard Hashes' file
 * checks (each file with its sidecars, against the list `token-shards manifest` wrote or the
 * hashes the format carries), kept across sessions in `<globalStorage>/format-verify-cache.json`
 * (`core/verify/formatVerdicts.ts`: shown while the files they stand on keep their size and mtime). Rows of shards with stream-index anomalies get a mark (worst
 * severity; tooltip: each anomaly with its global offsets and updates), refreshed whenever the
 * dataset's index is (re)loaded. The webview gets shard names as written in the manifest, never
 * absolute paths; it asks the host to open shard `index`.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Dataset, formatColumns } from '../core/dataset';
import { count, fmt } from '../core/units';
import { BYTES_PER_TOKEN, SHARD_MANIFEST, SideFile, validateShardFiles } from '../core/manifest';
import { anomalyMarksBySegment } from '../core/streamIndex/anomalies';
import { ShardDisplayState, VerificationStore, verificationKey } from '../verificationStore';
import type { ManifestDiagnostics } from '../diagnostics';
import type {
  ManifestField,
  ManifestFromWebview,
  ManifestInit,
  ManifestProtocol,
  ManifestRow,
  ManifestRowsChanged,
  ManifestTotals,
} from '../protocol/manifest';
import type { Services } from '../services';
import { ChannelTaps, HostChannel } from './hostChannel';
import { SHARD_EDITOR_VIEW_TYPE } from './shardEditor';
import { webviewHtml, webviewOptions } from './webviewHtml';
import { iconSafe, plainText, shortText } from '../core/untrusted';

/** View type contributed in package.json. */
export const MANIFEST_VIEW_TYPE = 'tokenShards.manifestEditor';
/** `workspaceState` key: the offer to open the table was made in this workspace. */
export const OFFER_STATE_KEY = 'tokenShards.manifestTableOffered';

/**
 * Wait after activation before offering the table (ms): the workbench settles, and a person (or a
 * scripted flow) who goes straight to a file has opened it by then, which cancels the offer.
 */
const OFFER_DELAY_MS = 3000;

/** Keys whose integer values are identifiers, not quantities (shown without thousands separators). */
const ID_LIKE_KEY = /(seed|year|version|_id$|^id$|revision|commit|port)/i;

/**
 * Turns a side file's object into display fields: every top-level key in file order; strings as
 * they are, integers with thousands separators (except id-like keys), objects/arrays as JSON.
 */
export function fieldsOf(side: SideFile | undefined): ManifestField[] | null {
  if (!side) return null;
  return Object.entries(side.data).map(([key, v]): ManifestField => {
    if (v !== null && typeof v === 'object') return { key, value: JSON.stringify(v, null, 2), nested: true };
    if (typeof v === 'number' && Number.isSafeInteger(v) && !ID_LIKE_KEY.test(key)) return { key, value: fmt(v), nested: false };
    if (typeof v === 'string') return { key, value: v, nested: false };
    return { key, value: JSON.stringify(v), nested: false };
  });
}

/** Totals of a dataset for the header. */
export function totalsOf(ds: Dataset): ManifestTotals {
  return {
    shards: ds.shards.length,
    storedTokens: ds.storedTokens,
    trainingTokens: ds.schedule.numUpdates * ds.schedule.G,
    updates: ds.schedule.numUpdates,
    tokensPerUpdate: ds.schedule.G,
    sequencesPerUpdate: ds.schedule.sequencesPerUpdate,
    sequenceLength: ds.schedule.L,
    tokensPerUpdateSource: ds.settingSources.globalTokensPerUpdate,
    sequenceLengthSource: ds.settingSources.sequenceLength,
  };
}

/**
 * First and last 0-based update whose input tokens `[G·k, G·(k+1))` intersect the shard's
 * `[start, start + n)`, or nulls when none does (an empty shard, or only look-ahead tokens).
 */
export function updatesCovered(start: number, n: number, G: number, numUpdates: number): [number | null, number | null] {
  if (n <= 0 || numUpdates <= 0) return [null, null];
  const first = Math.floor(start / G);
  const last = Math.min(Math.floor((start + n - 1) / G), numUpdates - 1);
  return first > last ? [null, null] : [first, last];
}

function rowState(st: ShardDisplayState): Pick<ManifestRow, 'status' | 'checkedAt' | 'detail'> {
  return { status: st.status, checkedAt: st.checkedAt ?? null, detail: st.detail ?? null };
}

/** One document per manifest file; nothing to load (the dataset is opened through the shared services). */
class ManifestDocument implements vscode.CustomDocument {
  constructor(readonly uri: vscode.Uri) {}
  dispose(): void {
    /* nothing held */
  }
}

/** Provider of the manifest table (built and registered by the composition root, `src/extension.ts`). */
export class ManifestEditorProvider implements vscode.CustomReadonlyEditorProvider<ManifestDocument> {
  /**
   * @param diagnostics Problems of the datasets shown (the table tracks its dataset there).
   * @param taps sees every message of every table's channel (tests).
   */
  constructor(
    private readonly services: Services,
    private readonly store: VerificationStore,
    private readonly diagnostics?: ManifestDiagnostics,
    private readonly taps?: ChannelTaps,
  ) {}

  openCustomDocument(uri: vscode.Uri): ManifestDocument {
    return new ManifestDocument(uri);
  }

  resolveCustomEditor(document: ManifestDocument, panel: vscode.WebviewPanel): void {
    const webview = panel.webview;
    const extensionUri = this.services.context.extensionUri;
    // The table of a `shard_manifest.jsonl`, or of the stream a token file of another format
    // belongs to (its unit or folder as the format layer opens it; no manifest to hash against).
    const isManifest = path.basename(document.uri.fsPath) === SHARD_MANIFEST;
    const root = isManifest ? path.dirname(document.uri.fsPath) : path.resolve(document.uri.fsPath);
    if (isManifest) this.diagnostics?.track(root);
    const openData = async (): Promise<Dataset> => {
      if (isManifest) return this.services.openRoot(root);
      const opened = await this.services.formatDatasetForFile(root);
      if (!opened)
        throw new Error(
          vscode.l10n.t('{0}: not token data of a known format; expected a file of one (tokenShards.format forces one).', root),
        );
      return opened;
    };
    let ds: Dataset | undefined;
    // The key of the table's rows in the verification store (`verificationKey`: the dataset's root,
    // or for a format stream its root and files), as verify runs of the same stream use it.
    let storeRoot = root;
    const channel = new HostChannel<ManifestProtocol>(
      webview,
      {
        onReady: () => void sendInit(),
        onEvent: (m) => void this.onMessage(document, () => ds, m),
        requests: {},
      },
      { view: MANIFEST_VIEW_TYPE, resource: document.uri.toString(), taps: this.taps },
    );
    const post = channel.notify.bind(channel);
    webview.options = webviewOptions();
    webview.html = webviewHtml(extensionUri, {
      script: 'manifestEditor',
      title: vscode.l10n.t('Shard manifest table'),
      style: 'manifestEditor.css',
    });
    let generation = 0;
    const pending = new Set<number>();
    let flushTimer: NodeJS.Timeout | undefined;
    let lastProgressPost = 0;
    let progressTimer: NodeJS.Timeout | undefined;

    const sendInit = async () => {
      const gen = ++generation;
      try {
        const opened = await openData();
        // Fresh sizes and mtimes: the shared dataset's were taken when it was opened.
        const files = opened.format
          ? { states: opened.fileStates, problems: [] as Awaited<ReturnType<typeof validateShardFiles>>['problems'] }
          : await validateShardFiles(opened.shards, opened.manifestFile);
        if (gen !== generation) return;
        ds = { ...opened, fileStates: files.states };
        storeRoot = verificationKey(opened);
        const cache = await this.store.cache();
        // A format stream's rows not checked this session: the verdicts of earlier sessions while their files are unchanged.
        const past = opened.format ? await this.store.pastFormatStates(opened) : [];
        if (gen !== generation) return;
        const rows: ManifestRow[] = ds.shards.map((e, i) => {
          const [firstUpdate, lastUpdate] = updatesCovered(e.startToken, e.numTokens, ds!.schedule.G, ds!.schedule.numUpdates);
          const now = this.store.displayState(storeRoot, e, cache, files.states[i]);
          const st = now.status === 'not-checked' ? (past[i] ?? now) : now;
          return {
            index: e.index,
            shard: e.shard,
            line: e.line,
            startToken: e.startToken,
            numTokens: e.numTokens,
            firstUpdate,
            lastUpdate,
            sizeOnDisk: st.actualSize ?? files.states[i].size ?? null,
            expectedSize: opened.format ? opened.format.files[i].sizeBytes : e.numTokens * BYTES_PER_TOKEN,
            sha256: e.sha256 ?? null,
            ...rowState(st),
            ...formatColumns(opened, i),
          };
        });
        const problems = [
          ...opened.problems.filter(
            (p) => !(['missing-file', 'size-mismatch', 'size-not-multiple-of-4', 'unreadable'] as string[]).includes(p.code),
          ),
          ...files.problems,
        ];
        const init: ManifestInit = {
          type: 'init',
          name: path.basename(root),
          provenance: fieldsOf(opened.provenance),
          verification: fieldsOf(opened.verification),
          totals: totalsOf(opened),
          rows,
          problems: problems.map((p) => ({ severity: p.severity, message: p.message, line: p.line ?? null, file: path.basename(p.file) })),
          verifying: this.store.progressText(storeRoot) ?? (this.store.isRunning(storeRoot) ? vscode.l10n.t('starting…') : null),
          format: opened.format ? { name: opened.format.name, dtype: opened.format.dtype, reason: opened.format.reason } : null,
        };
        void post(init);
        void sendMarks(opened, gen);
      } catch (err) {
        if (gen === generation) void post({ type: 'loadError', message: (err as Error).message });
      }
    };

    // Stream-index anomaly marks (the index is loaded once per dataset; marks follow rebuilds).
    const sendMarks = async (opened: Dataset, gen: number) => {
      const anomalies = (await this.services.streamIndex?.anomaliesOf(opened)) ?? [];
      if (gen !== generation) return;
      const marks = anomalyMarksBySegment(anomalies);
      void post({ type: 'anomalies', rows: [...marks].map(([index, m]) => ({ index, ...m })) });
    };

    const flushRows = async () => {
      flushTimer = undefined;
      if (!ds || pending.size === 0) return;
      const indices = [...pending];
      pending.clear(); // indices arriving while the cache loads go into the next flush
      const cache = await this.store.cache();
      if (!ds) return;
      const shown = ds;
      const past = shown.format ? await this.store.pastFormatStates({ shards: indices.map((i) => shown.shards[i]) }) : [];
      const rows: ManifestRowsChanged['rows'] = [];
      for (const [k, i] of indices.entries()) {
        const e = shown.shards[i];
        if (!e) continue;
        const now = this.store.displayState(storeRoot, e, cache, shown.fileStates[i]);
        const st = now.status === 'not-checked' ? (past[k] ?? now) : now;
        rows.push({
          index: i,
          ...rowState(st),
          sizeOnDisk: st.actualSize ?? (st.status === 'missing' ? null : (shown.fileStates[i]?.size ?? null)),
        });
      }
      if (rows.length) void post({ type: 'rowsChanged', rows });
    };

    const postProgress = () => {
      progressTimer = undefined;
      lastProgressPost = Date.now();
      void post({
        type: 'verifying',
        text: this.store.progressText(storeRoot) ?? (this.store.isRunning(storeRoot) ? vscode.l10n.t('starting…') : null),
      });
    };

    const subs: vscode.Disposable[] = [
      channel,
      this.store.onDidChange((c) => {
        if (c.root !== storeRoot || !channel.ready) return;
        if (c.indices === undefined && !c.progressOnly) {
          void sendInit();
          return;
        }
        for (const i of c.indices ?? []) pending.add(i);
        if (pending.size && !flushTimer) flushTimer = setTimeout(() => void flushRows(), 100);
        // Progress text at most 10 times a second (the run reports 4 times a second); the run's start and end right away.
        if (!progressTimer) {
          const wait = Math.max(0, 100 - (Date.now() - lastProgressPost));
          if (wait === 0 || !this.store.isRunning(storeRoot)) postProgress();
          else progressTimer = setTimeout(postProgress, wait);
        }
      }),
      this.services.onDidChangeDataset((r) => {
        if ((r === '*' || r === root || r === ds?.root) && channel.ready) void sendInit();
      }),
      ...(this.services.streamIndex
        ? [
            this.services.streamIndex.onDidChange((r) => {
              if ((r !== root && r !== ds?.root) || !channel.ready) return;
              void openData().then(
                (opened) => sendMarks(opened, generation),
                () => undefined,
              );
            }),
          ]
        : []),
    ];
    panel.onDidDispose(() => {
      if (flushTimer) clearTimeout(flushTimer);
      if (progressTimer) clearTimeout(progressTimer);
      for (const s of subs) s.dispose();
    });
  }

  private async onMessage(document: ManifestDocument, ds: () => Dataset | undefined, m: ManifestFromWebview): Promise<void> {
    switch (m.type) {
      case 'openShard': {
        const e = ds()?.shards[m.index];
        if (!e) return;
        try {
          await vscode.commands.executeCommand('vscode.openWith', vscode.Uri.file(e.path), SHARD_EDITOR_VIEW_TYPE);
        } catch (err) {
          void vscode.window.showWarningMessage(
            vscode.l10n.t('Cannot open {0}: {1}', plainText(shortText(e.shard)), plainText((err as Error).message)),
          );
        }
        return;
      }
      case 'verify':
        await vscode.commands.executeCommand(
          m.ignoreCache ? 'tokenShards.verifyShardsIgnoreCache' : 'tokenShards.verifyShards',
          document.uri,
        );
        return;
      case 'showProblems':
        await vscode.commands.executeCommand('workbench.actions.view.problems');
        return;
      case 'revealLine': {
        const line = Math.max(0, m.line - 1);
        await vscode.window.showTextDocument(document.uri, { selection: new vscode.Range(line, 0, line, 0), preview: true });
        return;
      }
      case 'copyHash': {
        const e = ds()?.shards[m.index];
        if (!e?.sha256) return;
        await vscode.env.clipboard.writeText(e.sha256);
        vscode.window.setStatusBarMessage(vscode.l10n.t('Copied the sha256 of {0}', iconSafe(shortText(e.shard))), 3000);
        return;
      }
    }
  }
}

/** True when a manifest table or a shard editor is open (in any tab group, shown or not). */
function inspectorEditorOpen(): boolean {
  return vscode.window.tabGroups.all.some((g) =>
    g.tabs.some(
      (t) =>
        t.input instanceof vscode.TabInputCustom &&
        (t.input.viewType === MANIFEST_VIEW_TYPE || t.input.viewType === SHARD_EDITOR_VIEW_TYPE),
    ),
  );
}

/**
 * Offers to open the table of the workspace's dataset, at most once per workspace: the offer is
 * recorded in `workspaceState` ({@link OFFER_STATE_KEY}) just before it is shown, whatever the
 * person then does (clicks, dismisses, ignores). Not shown — and not recorded, so a later quiet
 * start may still offer it — when the person is already busy: a manifest table or shard editor is
 * open, or any editor was opened since activation (`tabsTouched`; a scripted flow that opens files
 * never gets a toast over its editor).
 */
async function offerToOpen(context: vscode.ExtensionContext, services: Services, tabsTouched: () => boolean): Promise<void> {
  const busy = () => tabsTouched() || inspectorEditorOpen();
  if (context.workspaceState.get<boolean>(OFFER_STATE_KEY)) return;
  if (!vscode.workspace.workspaceFolders?.length || busy()) return;
  // The offer names a `shard_manifest.jsonl`: folders of other storage formats are not offered.
  const roots = (await services.workspaceDatasetRoots()).filter((r) => fs.existsSync(path.join(r, SHARD_MANIFEST)));
  if (roots.length === 0 || busy()) return;
  let shards = 0;
  try {
    shards = (await services.openRoot(roots[0])).shards.length;
  } catch {
    /* the table will show why */
  }
  // Checked again right before showing: opening the dataset may have taken a while.
  if (busy() || context.workspaceState.get<boolean>(OFFER_STATE_KEY)) return;
  await context.workspaceState.update(OFFER_STATE_KEY, true);
  const open = vscode.l10n.t('Open Manifest Table');
  const msg =
    roots.length > 1
      ? vscode.l10n.t(
          'This workspace holds {0} token datasets. Open the shard manifest table of {1}?',
          roots.length,
          plainText(path.basename(roots[0])),
        )
      : vscode.l10n.t(
          '{0} is a token dataset ({1}). Open its shard manifest table?',
          plainText(path.basename(roots[0])),
          shards ? count(shards, 'shard') : vscode.l10n.t('? shards'),
        );
  services.log.info(`offered to open the manifest table of ${roots[0]} (once per workspace)`);
  const choice = await vscode.window.showInformationMessage(msg, open);
  if (choice === open)
    await vscode.commands.executeCommand('vscode.openWith', vscode.Uri.file(path.join(roots[0], SHARD_MANIFEST)), MANIFEST_VIEW_TYPE);
}

/**
 * Schedules the one-time offer to open the table ({@link offerToOpen}) once the workbench has
 * settled; an editor opened meanwhile means the person (or a scripted flow) is busy, and the
 * offer is skipped. Dispose the result to cancel it.
 */
export function offerManifestTable(context: vscode.ExtensionContext, services: Services): vscode.Disposable {
  let tabsTouched = false;
  // (Tabs of unknown input, like the Welcome page the workbench opens by itself, do not count.)
  const tabSub = vscode.window.tabGroups.onDidChangeTabs((e) => {
    if (
      e.opened.some(
        (tab) =>
          tab.input instanceof vscode.TabInputText ||
          tab.input instanceof vscode.TabInputCustom ||
          tab.input instanceof vscode.TabInputTextDiff ||
          tab.input instanceof vscode.TabInputNotebook ||
          tab.input instanceof vscode.TabInputWebview,
      )
    )
      tabsTouched = true;
  });
  const t = setTimeout(
    () =>
      void offerToOpen(context, services, () => tabsTouched)
        .catch((err) => services.log.warn(`manifest offer: ${(err as Error).message}`))
        .finally(() => tabSub.dispose()),
    OFFER_DELAY_MS,
  );
  return vscode.Disposable.from(tabSub, { dispose: () => clearTimeout(t) });
}
