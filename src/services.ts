/**
 * Shared extension-host services: the datasets in the workspace (opened lazily, cached by root,
 * invalidated when their metadata changes), the tokenizer (loaded lazily once per file and
 * shared by the shard editor, the update view, hovers and commands), document indexes, the
 * log channel, and the position of the focused shard editor.
 *
 * This is the only place that reads `tokenShards.*` schedule settings and the format choice
 * (`tokenShards.format`, `tokenShards.dtype`): every dataset is opened through the format layer's
 * `openPath`, so a folder or file of any storage format becomes a dataset.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { Dataset, findDatasetRoot, openPath } from './core/dataset';
import { DataError } from './core/errors';
import { FormatChoice, SETTING_CHOICE_NAMES, formatChoice } from './core/formats/choice';
import { isTrainingOrderIndexFile } from './core/order/indexFiles';
import { sniffFormat, sniffInputOf } from './core/formats/registry';
import { DEFAULT_DOCUMENT_SCAN_LIMIT, DocumentIndex, documentIndexOf } from './core/documents';
import type { VerifyOptions } from './core/verify/verify';
import type { Anomaly } from './core/streamIndex/anomalies';
import type { StreamIndex } from './core/streamIndex/streamIndex';
import type { TrainingOrders } from './orderService';

/** What verify needs from the stream-index service (`streamIndexService.ts`). */
export interface StreamIndexHooks {
  /** The `index` option of `verifyShards` for a dataset (undefined: do not index). */
  verifyOption(ds: Dataset): Promise<VerifyOptions['index']>;
  /** Reloads a dataset's index after entries were written. */
  reload(ds: Dataset): Promise<StreamIndex>;
  /** The loaded index of a dataset root, if any (synchronous, for hovers). */
  peek(root: string): StreamIndex | undefined;
  /**
   * The anomalies of a dataset's index (loaded once; threshold from `tokenShards.index.eosFreeRunThreshold`):
   * empty for a lone file or shards not indexed. Never rejects.
   */
  anomaliesOf(ds: Dataset): Promise<Anomaly[]>;
  /** Fires with a dataset root when its index was (re)loaded (views refresh their marks). */
  readonly onDidChange: vscode.Event<string>;
}
import { SHARD_MANIFEST, hasShardsPresent } from './core/manifest';
import { ScheduleSettings } from './core/schedule';
import { LoadedTokenizer, loadTokenizer } from './core/tokenizer';
import { iconSafe } from './core/untrusted';

/** Where the user is in the focused shard editor (updated by the shard editor). */
export interface ActiveShardPosition {
  /** The `.u32` file. */
  uri: vscode.Uri;
  /** Its dataset, when a manifest lists it. */
  dataset?: Dataset;
  /** Global token offset of the cursor (local offset for a lone shard). */
  offset: number;
  /** Selected global range `[start, end)`, when tokens are selected. */
  selection?: [number, number];
}

/** Shared services handed to every feature's `register…` function. */
export class Services implements vscode.Disposable {
  private readonly datasets = new Map<string, Promise<Dataset>>();
  private readonly tokenizers = new Map<string, Promise<LoadedTokenizer>>();
  private readonly indexes = new WeakMap<Dataset, DocumentIndex>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly datasetChanged = new vscode.EventEmitter<string>();
  private readonly activeShardChanged = new vscode.EventEmitter<ActiveShardPosition | undefined>();
  private active?: ActiveShardPosition;

  /** Fires with a dataset root whose metadata (manifest, provenance) changed on disk. */
  readonly onDidChangeDataset = this.datasetChanged.event;
  /** Fires when the focused shard editor's position changes (or no shard editor is focused). */
  readonly onDidChangeActiveShard = this.activeShardChanged.event;

  constructor(
    readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
  ) {
    const watcher = vscode.workspace.createFileSystemWatcher(
      `**/{${SHARD_MANIFEST},manifest.json,verification.json,tokenizer.json,index.json}`,
    );
    const changed = (uri: vscode.Uri) => this.invalidate(uri.fsPath);
    this.disposables.push(
      watcher,
      watcher.onDidChange(changed),
      watcher.onDidCreate(changed),
      watcher.onDidDelete(changed),
      vscode.workspace.onDidChangeConfiguration((e) => {
        // Only the settings a Dataset is built from invalidate it (hover or verify settings do not).
        const scheduleChanged = ['globalTokensPerUpdate', 'sequenceLength', 'eosTokenId'].some((k) =>
          e.affectsConfiguration(`tokenShards.${k}`),
        );
        const tokenizerChanged = e.affectsConfiguration('tokenShards.tokenizerPath');
        const formatChanged = ['format', 'dtype'].some((k) => e.affectsConfiguration(`tokenShards.${k}`));
        if (formatChanged) this.datasets.clear();
        if (formatChanged && !scheduleChanged && !tokenizerChanged) this.datasetChanged.fire('*');
        if (scheduleChanged) this.datasets.clear();
        if (tokenizerChanged) this.tokenizers.clear();
        if (scheduleChanged || tokenizerChanged) this.datasetChanged.fire('*');
      }),
      this.datasetChanged,
      this.activeShardChanged,
    );
  }

  /** Schedule settings the user set (undefined = not set, so the dataset card's default applies). */
  scheduleSettings(): Partial<ScheduleSettings> {
    const c = vscode.workspace.getConfiguration('tokenShards');
    const get = (k: string) => {
      const i = c.inspect<number>(k);
      return i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
    };
    return {
      globalTokensPerUpdate: get('globalTokensPerUpdate'),
      sequenceLength: get('sequenceLength'),
      eosTokenId: get('eosTokenId'),
    };
  }

  /**
   * `tokenShards.allowShardsOutsideRoot`, honoured only in a trusted workspace (restricted mode
   * ignores it, as declared in package.json's `restrictedConfigurations`).
   */
  allowShardsOutsideRoot(): boolean {
    return vscode.workspace.isTrusted && this.setting<boolean>('allowShardsOutsideRoot') === true;
  }

  /**
   * `tokenShards.format` and `tokenShards.dtype` as format-layer options, checked as the CLI checks
   * `--format`/`--dtype` (`core/formats/choice.ts`).
   * @throws SettingError naming the setting, the value and what was expected.
   */
  formatChoice(): FormatChoice {
    return formatChoice(this.setting<string>('format'), this.setting<string>('dtype'), SETTING_CHOICE_NAMES);
  }

  /** `tokenShards.documentScanLimit`: tokens that may be scanned to number documents without asking. */
  documentScanLimit(): number {
    return this.setting<number>('documentScanLimit') || DEFAULT_DOCUMENT_SCAN_LIMIT;
  }

  /** The configured value of a `tokenShards.*` setting (default from package.json). */
  setting<T>(key: string): T {
    return vscode.workspace.getConfiguration('tokenShards').get<T>(key) as T;
  }

  /**
   * Opens (or returns the cached) dataset at `root`: a folder holding `shard_manifest.jsonl`, or
   * a folder or file of any storage format (`openPath`, with the format choice of the settings).
   * @throws DataError when the data cannot be read or no format recognises a folder; SettingError
   *   for a bad `tokenShards.format`/`tokenShards.dtype` or schedule setting.
   */
  openRoot(root: string): Promise<Dataset> {
    root = path.resolve(root);
    let p = this.datasets.get(root);
    if (!p) {
      p = this.openAnyPath(root);
      p.then(
        (ds) =>
          this.log.info(`opened dataset ${root}: ${ds.shards.length} shards, ${ds.storedTokens} tokens, ${ds.problems.length} problems`),
        (err) => {
          this.datasets.delete(root);
          this.log.warn(`cannot open dataset ${root}: ${(err as Error).message}`);
        },
      );
      this.datasets.set(root, p);
    }
    return p;
  }

  private async openAnyPath(target: string): Promise<Dataset> {
    const ds = await openPath(target, this.scheduleSettings(), { allowOutsideRoot: this.allowShardsOutsideRoot(), ...this.formatChoice() });
    if (!ds) throw new DataError(noFormatMessage(target), target);
    return ds;
  }

  /**
   * The dataset a file belongs to: a `shard_manifest.jsonl` up to 4 folders up, else the file's
   * own storage format (Megatron `.bin`/`.idx`, llm.c, Dolma, datatrove, litdata, MDS…) as the
   * format layer opens it; undefined for a lone `.u32` file, a file no format recognises, or
   * data that cannot be opened (see {@link formatDatasetForFile} for the reason).
   */
  async datasetForFile(uri: vscode.Uri): Promise<Dataset | undefined> {
    if (uri.scheme !== 'file') return undefined;
    const root = await findDatasetRoot(uri.fsPath);
    try {
      if (root) return await this.openRoot(root);
      return await this.formatDatasetForFile(uri.fsPath);
    } catch {
      return undefined;
    }
  }

  /**
   * The dataset of a token file in a storage format other than the dataset card's (its unit or
   * folder as the format's adapter opens it; cached by the file's path), or undefined for a file
   * that sniffs as a lone `.u32` shard or as nothing (with `tokenShards.format` auto).
   * @throws DataError / SettingError with one line naming the file and what was expected.
   */
  async formatDatasetForFile(file: string): Promise<Dataset | undefined> {
    file = path.resolve(file);
    if (!this.datasets.has(file)) {
      const forced = this.formatChoice().format;
      const format = forced ?? sniffFormat(await sniffInputOf(file))?.format;
      if (format === undefined || format === 'token-stream') return undefined;
    }
    return this.openRoot(file);
  }

  /**
   * Dataset roots in the workspace: folders holding a `shard_manifest.jsonl`, and folders of
   * another storage format that the sniffer recognises (`.idx`, `.ds`, `index.json`, `.csv.gz`,
   * `.bin`, `.npy` files are looked for; each folder is sniffed as `openPath` would). Megatron's and
   * OLMo's training-order index files (`.npy` of sample indices) do not make a folder a dataset.
   */
  async workspaceDatasetRoots(): Promise<string[]> {
    const exclude = '**/node_modules/**';
    const files = await vscode.workspace.findFiles(`**/${SHARD_MANIFEST}`, exclude, 50);
    const roots = new Set(files.filter((f) => f.scheme === 'file').map((f) => path.dirname(f.fsPath)));
    const others = await vscode.workspace.findFiles(`**/{${WORKSPACE_FORMAT_GLOBS.join(',')}}`, exclude, 200);
    const folders = [
      ...new Set(others.filter((f) => f.scheme === 'file' && !isTrainingOrderIndexFile(f.fsPath)).map((f) => path.dirname(f.fsPath))),
    ]
      .filter((d) => ![...roots].some((r) => d === r || d.startsWith(r + path.sep)))
      .slice(0, MAX_SNIFFED_FOLDERS);
    for (const dir of folders) {
      try {
        const format = sniffFormat(await sniffInputOf(dir))?.format;
        if (format !== undefined) roots.add(dir);
      } catch {
        /* unreadable folder: not a dataset */
      }
    }
    return [...roots].sort();
  }

  /**
   * The dataset a command should act on: the focused shard editor's, else the active text
   * editor's, else the only one in the workspace, else the user picks one. With none, shows a
   * message saying how to open one and returns undefined.
   */
  async pickDataset(purpose = 'Choose a dataset'): Promise<Dataset | undefined> {
    if (this.active?.dataset) return this.active.dataset;
    const activeUri = vscode.window.activeTextEditor?.document.uri ?? activeTabUri();
    if (activeUri) {
      const ds = await this.datasetForFile(activeUri);
      if (ds) return ds;
    }
    const roots = await this.workspaceDatasetRoots();
    if (roots.length === 0) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t(
          'No token dataset is open. Open a folder that holds shard_manifest.jsonl (with shards/tokens_*.u32) or token files of another format (Megatron .bin + .idx, llm.c or nanoGPT .bin, Dolma .npy, datatrove .ds, litdata or MDS index.json), or open a token file.',
        ),
      );
      return undefined;
    }
    // Only datasets whose shards are here are worth a choice (a manifest-only folder is not):
    // with one such dataset there is no picker to type into by mistake.
    const present = await Promise.all(
      roots.map(async (r) =>
        (await findDatasetRoot(r, 0)) ? hasShardsPresent(r, { allowOutsideRoot: this.allowShardsOutsideRoot() }) : true,
      ),
    );
    const withShards = roots.filter((_, i) => present[i]);
    const choices = withShards.length ? withShards : roots;
    let root = choices[0];
    if (choices.length > 1) {
      const pick = await vscode.window.showQuickPick(
        choices.map((r) => ({ label: iconSafe(path.basename(r)), description: iconSafe(r), root: r })),
        { title: purpose, placeHolder: vscode.l10n.t('Several datasets are open: which one?') },
      );
      if (!pick) return undefined;
      root = pick.root;
    }
    return this.openRoot(root);
  }

  /**
   * The tokenizer for a dataset (its `tokenizer/tokenizer.json`), else the `tokenShards.tokenizerPath`
   * setting, else undefined. Loaded once per file and shared.
   */
  async tokenizerFor(ds?: Dataset): Promise<LoadedTokenizer | undefined> {
    const file = ds?.tokenizerFile ?? this.configuredTokenizerPath();
    if (!file) return undefined;
    let p = this.tokenizers.get(file);
    if (!p) {
      const t0 = Date.now();
      p = loadTokenizer(file);
      p.then(
        (t) => this.log.info(`loaded tokenizer ${file} (${t.vocabSize} ids) in ${Date.now() - t0} ms`),
        (err) => {
          this.tokenizers.delete(file);
          this.log.error(`cannot load tokenizer ${file}: ${(err as Error).message}`);
        },
      );
      this.tokenizers.set(file, p);
    }
    return p;
  }

  /** The tokenizer already loaded for a dataset (or the setting), without waiting: for hovers. */
  tokenizerIfLoaded(ds?: Dataset): Promise<LoadedTokenizer> | undefined {
    const file = ds?.tokenizerFile ?? this.configuredTokenizerPath();
    return file ? this.tokenizers.get(file) : undefined;
  }

  /** `tokenShards.tokenizerPath`, resolved against the first workspace folder; undefined when empty. */
  configuredTokenizerPath(): string | undefined {
    const p = this.setting<string>('tokenizerPath');
    if (!p) return undefined;
    const base = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return path.isAbsolute(p) || !base ? p : path.join(base, p);
  }

  /**
   * Loads a dataset's stream index for its new `DocumentIndex` (set by the stream-index service,
   * `streamIndexService.ts`); numbering waits for it, so every view gets the index's numbers.
   */
  streamIndexLoader?: (ds: Dataset, index: DocumentIndex) => void;

  /**
   * Shards of a dataset root that failed verification (this session's results or the cache's
   * verdict; set by the verify registration), for the update view and the `update k` hover.
   */
  failedShards?: (root: string) => { index: number; shard: string; status: string }[];

  /** The stream-index service (set by the composition root): verify runs build the index in the same read. */
  streamIndex?: StreamIndexHooks;

  /** The datasets' training orders (`src/orderService.ts`, set by the composition root): what "update k" means. */
  orders?: TrainingOrders;

  /** The document index of a dataset (one per dataset, counts memoised; the stream index attached when there is one). */
  documentIndex(ds: Dataset): DocumentIndex {
    let idx = this.indexes.get(ds);
    if (!idx) {
      idx = documentIndexOf(ds);
      this.indexes.set(ds, idx);
      this.streamIndexLoader?.(ds, idx);
    }
    return idx;
  }

  /** Forgets cached datasets under or at the folder of a changed metadata file. */
  invalidate(changedFile: string): void {
    const dir = path.dirname(changedFile);
    for (const root of [...this.datasets.keys()]) {
      // A key is a folder, or a token file opened on its own (its folder holds its sidecars).
      if (dir === root || dir.startsWith(root + path.sep) || dir === path.dirname(root)) {
        const p = this.datasets.get(root);
        this.datasets.delete(root);
        p?.then(
          (ds) => ds.stream.close(),
          () => undefined,
        );
        this.datasetChanged.fire(root);
      }
    }
    if (path.basename(changedFile) === 'tokenizer.json') this.tokenizers.delete(changedFile);
  }

  /** The focused shard editor's position, if any. */
  get activeShard(): ActiveShardPosition | undefined {
    return this.active;
  }

  /** Called by the shard editor when its position changes or it loses focus (undefined). */
  setActiveShard(pos: ActiveShardPosition | undefined): void {
    this.active = pos;
    this.activeShardChanged.fire(pos);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    for (const p of this.datasets.values())
      p.then(
        (ds) => ds.stream.close(),
        () => undefined,
      );
    this.datasets.clear();
  }
}

/** Names of files that tell a folder may hold a storage format other than the dataset card's (workspace discovery). */
const WORKSPACE_FORMAT_GLOBS = ['*.idx', '*.ds', 'index.json', '*.csv.gz', '*.bin', '*.npy', '*.mds'];

/** Folders sniffed at most when the workspace's datasets are listed. */
const MAX_SNIFFED_FOLDERS = 32;

/** The message for a folder in which no storage format was recognised. */
function noFormatMessage(target: string): string {
  return `${target}: no token data here; expected shard_manifest.jsonl, a .u32 shard, Megatron .bin + .idx, an llm.c or nanoGPT .bin, .npy, .ds, or index.json with chunks or shards (or set tokenShards.format)`;
}

/** URI of the active tab when it is a custom editor or text editor (no text editor for webviews). */
export function activeTabUri(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input instanceof vscode.TabInputCustom || input instanceof vscode.TabInputText) return input.uri;
  return undefined;
}
