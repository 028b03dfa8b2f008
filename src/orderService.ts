/**
 * The training order of each dataset in the extension: the one {@link OrderView} every surface
 * that says "update k" asks (Go to Update, the update view, hovers, the status bar, search counts,
 * statistics, export, the training log).
 *
 * Which run description: the setting `tokenShards.run` (a `run.json`; relative paths against the
 * first workspace folder; read only in a trusted workspace), else `<dataset root>/run.json` when
 * present, else none: the dataset card's sequential order. The command "Choose Run Description…"
 * ({@link chooseRunDescription}) sets the setting.
 *
 * A run's order is opened in a worker thread (`OrderClient`: building a Megatron inverse of 25M
 * samples takes seconds) under a cancellable progress notification, once per dataset and run
 * file, and reused; the built indices and inverses are cached under
 * `globalStorageUri/training-order/` (`OrderCache`), so the next session loads them. A run
 * description that cannot be used (bad JSON, a wrong field, index files that do not fit) rejects
 * with its one-line message naming the file and field; the sequential order is NOT used in its
 * place (views say that nothing is shown until it is fixed).
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { Dataset } from './core/dataset';
import { CancelledError, DataError } from './core/errors';
import { orderInputsOf } from './core/order/datasetOrder';
import { openTrainingOrder, orderSpec } from './core/order/openOrder';
import { OrderCache } from './core/order/order';
import { LocalOrderView, OrderClient, OrderView } from './core/order/orderClient';
import { RUN_FILE_NAME, findRunFile, readRunDescription } from './core/order/runFile';
import { plainText } from './core/untrusted';
import { NamedOrder, namedOrder } from './core/orderedUpdate';

/** What the orders need of the shared services (`src/services.ts`; a shape, so services.ts can hold a {@link TrainingOrders} without an import cycle). */
export interface OrderServiceDeps {
  readonly context: vscode.ExtensionContext;
  readonly log: vscode.LogOutputChannel;
  setting<T>(key: string): T;
  readonly onDidChangeDataset: vscode.Event<string>;
}

/** The cached order of one dataset root. */
interface Entry {
  ds: Dataset;
  file: string | undefined;
  view: Promise<OrderView>;
  /** The order once opened. */
  value?: OrderView;
}

/** The datasets' training orders (see the module comment). */
export class TrainingOrders implements vscode.Disposable {
  private readonly entries = new Map<string, Entry>();
  private readonly changed = new vscode.EventEmitter<string>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly cache: OrderCache;

  /** Fires with a dataset root (or `*`) whose order may have changed (the setting, a run.json edited). */
  readonly onDidChange = this.changed.event;

  constructor(private readonly services: OrderServiceDeps) {
    this.cache = new OrderCache(path.join(services.context.globalStorageUri.fsPath, 'training-order'));
    const watcher = vscode.workspace.createFileSystemWatcher(`**/${RUN_FILE_NAME}`);
    const forget = () => this.forget('*');
    this.disposables.push(
      watcher,
      watcher.onDidChange(forget),
      watcher.onDidCreate(forget),
      watcher.onDidDelete(forget),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('tokenShards.run')) forget();
      }),
      services.onDidChangeDataset((root) => this.forget(root)),
      this.changed,
    );
  }

  /** `tokenShards.run` resolved against the first workspace folder; undefined when empty or in restricted mode. */
  configuredRunFile(): string | undefined {
    const p = vscode.workspace.isTrusted ? this.services.setting<string>('run') : undefined;
    if (!p) return undefined;
    const base = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return path.isAbsolute(p) || !base ? path.resolve(p) : path.join(base, p);
  }

  /** The run description in force for `ds`: the setting, else `<root>/run.json`, else undefined (the card's sequential order). */
  runFileFor(ds: Dataset): string | undefined {
    return this.configuredRunFile() ?? findRunFile(ds.root);
  }

  /** The order already opened for `ds`, without waiting (status bar, hovers): undefined while it is being built or when it failed. */
  peek(ds: Dataset): OrderView | undefined {
    const e = this.entries.get(ds.root);
    return e && e.ds === ds && e.file === this.runFileFor(ds) ? e.value : undefined;
  }

  /**
   * The training order of `ds` (opened once per dataset and run file, under a cancellable
   * progress notification).
   * @throws DataError with the run file's one-line message and what is shown instead (nothing);
   *   CancelledError when the person cancelled the build (not kept: the next call builds again).
   */
  orderOf(ds: Dataset): Promise<OrderView> {
    const file = this.runFileFor(ds);
    const e = this.entries.get(ds.root);
    if (e && e.ds === ds && e.file === file) return e.view;
    if (e) this.close(e);
    const view = this.open(ds, file);
    const entry: Entry = { ds, file, view };
    this.entries.set(ds.root, entry);
    view.then(
      (v) => {
        entry.value = v;
        this.services.log.info(`training order of ${ds.root}: ${v.description}`);
      },
      (err) => {
        if (err instanceof CancelledError && this.entries.get(ds.root) === entry) this.entries.delete(ds.root);
        this.services.log.warn(`training order of ${ds.root}: ${(err as Error).message}`);
      },
    );
    return view;
  }

  /**
   * The run's order of `ds` when it is not the card's sequential one, with its short name;
   * undefined for the card's order.
   * @throws as {@link orderOf}.
   */
  async runOf(ds: Dataset): Promise<{ order: OrderView; named: NamedOrder } | undefined> {
    const order = await this.orderOf(ds);
    return order.kind === 'sequential' ? undefined : { order, named: namedOrder(order) };
  }

  private async open(ds: Dataset, file: string | undefined): Promise<OrderView> {
    try {
      const run = file === undefined ? undefined : await readRunDescription(file);
      const inputs = await orderInputsOf(ds, run, this.cache);
      if (!run || run.order === 'sequential') return new LocalOrderView(await openTrainingOrder(run, inputs));
      const spec = orderSpec(run, inputs);
      return await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          cancellable: true,
          title: vscode.l10n.t('Opening the {0} training order of {1} ({2})', run.order, path.basename(ds.root), path.basename(file!)),
        },
        (_progress, token) => {
          const abort = new AbortController();
          token.onCancellationRequested(() => abort.abort());
          return OrderClient.open(spec, { signal: abort.signal });
        },
      );
    } catch (err) {
      if (err instanceof CancelledError) throw err;
      throw new DataError(
        vscode.l10n.t(
          '{0} — updates of {1} are not shown: the sequential order is not used in its place. Fix the file or choose another with "Token Shards: Choose Run Description…".',
          (err as Error).message,
          path.basename(ds.root),
        ),
        file,
      );
    }
  }

  private close(e: Entry): void {
    e.view.then(
      (v) => v.close(),
      () => undefined,
    );
  }

  /** Forgets the orders of `root` (`*`: all) and says so. */
  forget(root: string): void {
    for (const [r, e] of [...this.entries]) {
      if (root === '*' || r === root) {
        this.entries.delete(r);
        this.close(e);
      }
    }
    this.changed.fire(root);
  }

  dispose(): void {
    for (const e of this.entries.values()) this.close(e);
    this.entries.clear();
    for (const d of this.disposables) d.dispose();
  }
}

/** Arguments of `tokenShards.chooseRunDescription`. */
export interface ChooseRunArgs {
  /** A run.json to use without asking. */
  file?: string;
}

/**
 * Token Shards: Choose Run Description… (`tokenShards.chooseRunDescription`): pick a `run.json`,
 * check it ({@link readRunDescription}: one message naming the file and field when it is not
 * valid), and save it to `tokenShards.run` (workspace settings when a folder is open, as a path
 * relative to the first folder when inside it; else user settings).
 * Resolves with the absolute path saved, or undefined (cancelled or invalid).
 */
export async function chooseRunDescription(...args: unknown[]): Promise<string | undefined> {
  const opts = (args[0] && typeof args[0] === 'object' && !(args[0] instanceof vscode.Uri) ? args[0] : {}) as ChooseRunArgs;
  const folder = vscode.workspace.workspaceFolders?.[0];
  let file = typeof opts.file === 'string' && opts.file ? path.resolve(folder?.uri.fsPath ?? '', opts.file) : undefined;
  if (!file) {
    const picked = await vscode.window.showOpenDialog({
      title: vscode.l10n.t('Choose the run description (run.json) whose training order "update k" follows'),
      openLabel: vscode.l10n.t('Use This Run'),
      canSelectFiles: true,
      canSelectFolders: false,
      canSelectMany: false,
      filters: { [vscode.l10n.t('Run description')]: ['json'] },
      defaultUri: folder?.uri,
    });
    const uri = picked?.[0];
    if (!uri) return undefined;
    if (uri.scheme !== 'file') {
      void vscode.window.showErrorMessage(vscode.l10n.t('{0} is not a local file.', plainText(uri.toString())));
      return undefined;
    }
    file = uri.fsPath;
  }
  let order: string;
  try {
    order = (await readRunDescription(file)).order;
  } catch (err) {
    void vscode.window.showErrorMessage(
      vscode.l10n.t('Cannot use {0} as the run description: {1}', file, plainText((err as Error).message)),
    );
    return undefined;
  }
  const target = folder ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  const base = folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
  const rel = base ? path.relative(base, file) : undefined;
  const value = rel !== undefined && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
  try {
    await vscode.workspace.getConfiguration('tokenShards').update('run', value, target);
  } catch (err) {
    void vscode.window.showErrorMessage(vscode.l10n.t('Cannot save the setting tokenShards.run: {0}', plainText((err as Error).message)));
    return undefined;
  }
  void vscode.window.showInformationMessage(vscode.l10n.t('Updates now follow the {0} order of {1}.', order, file));
  return file;
}
