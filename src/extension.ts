/**
 * Extension entry point and the one composition root: builds the shared services, the shard
 * editor registry, the update views, the verification store and the diagnostics once, and
 * registers every command, custom editor, panel serializer, hover provider, content provider
 * and the URI handler here, handing each its dependencies explicitly. Feature modules export
 * classes and command functions; none registers anything itself and none keeps module-level
 * state. Nothing here does work at activation beyond building these objects (datasets and the
 * tokenizer load lazily).
 *
 * How to add a command: CONTRIBUTING.md ("How to add a command").
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { closeIdleReadWorkers } from './core/shardPool';
import { VERIFY_CACHE_FILE } from './core/verify/cache';
import { FORMAT_VERDICTS_FILE } from './core/verify/formatVerdicts';
import { chooseTokenizer } from './commands/chooseTokenizer';
import { copyCommands } from './commands/copyIds';
import { copyLink } from './commands/copyLink';
import { DecodedDocuments, decodeSelection } from './commands/decodeSelection';
import { encodeSelection } from './commands/encodeSelection';
import { goToDocument } from './commands/goToDocument';
import { goToOffset } from './commands/goToOffset';
import { goToSequence } from './commands/goToSequence';
import { goToUpdate } from './commands/goToUpdate';
import { highlightUpdate } from './commands/highlightUpdate';
import { searchSelection, searchStream } from './commands/searchStream';
import type { NavigationDeps } from './commands/focus';
import { verifyCommands } from './commands/verifyShards';
import { ManifestDiagnostics } from './diagnostics';
import { ChannelTaps, TappedMessage } from './editor/hostChannel';
import { MANIFEST_VIEW_TYPE, ManifestEditorProvider, offerManifestTable } from './editor/manifestEditor';
import { openManifest } from './commands/openManifest';
import { SHARD_EDITOR_VIEW_TYPE, ShardEditorProvider, TOKEN_FILE_EDITOR_VIEW_TYPE } from './editor/shardEditor';
import { registerTokenFileOffer } from './editor/tokenFileOffer';
import { UPDATE_VIEW_TYPE, UpdateViews } from './panels/updateView';
import { TokenHoverProvider, registerTokenHover } from './hover/tokenHover';
import { Services } from './services';
import { StreamIndexService } from './streamIndexService';
import { indexStream } from './commands/indexStream';
import { handleNavigationUri } from './commands/uriHandler';
import { SEARCH_VIEW_TYPE, SearchPanels } from './panels/searchPanel';
import { exportUpdatesCommand } from './commands/exportUpdates';
import { INSPECT_VIEW_TYPE, InspectPanels } from './panels/inspectUpdates';
import { inspectUpdates } from './commands/inspectUpdates';
import { registerPanelSerializer } from './panels/panelHost';
import { openTrainingLog } from './commands/openTrainingLog';
import type { InspectState } from './protocol/workbench';
import { workbenchFocus } from './commands/focus';
import { VerificationStore } from './verificationStore';
import { TrainingOrders, chooseRunDescription } from './orderService';

/**
 * What `activate` returns (`vscode.extensions.getExtension(id).exports`): the objects the
 * composition root built, for the extension-host tests (they observe the editors through it and
 * record webview messages with {@link tapMessages}); not a stable public API.
 */
export interface TokenShardsApi {
  readonly services: Services;
  readonly shardEditors: ShardEditorProvider;
  readonly updateViews: UpdateViews;
  readonly verification: VerificationStore;
  readonly searchPanels: SearchPanels;
  /** Calls `listener` with every envelope of every webview channel until the result is disposed. */
  tapMessages(listener: (m: TappedMessage) => void): vscode.Disposable;
}

/** Called by VS Code on the first contribution used (activation events are implied by contributions). */
export function activate(context: vscode.ExtensionContext): TokenShardsApi {
  const log = vscode.window.createOutputChannel('Token Shard Inspector', { log: true });
  const services = new Services(context, log);
  // The stream index: one service; every DocumentIndex (document numbers) and verify run use it.
  const streamIndex = new StreamIndexService(services, context.globalStorageUri.fsPath);
  services.streamIndex = streamIndex;
  // The training order: one per dataset and run description; everything that says "update k" asks it.
  const orders = new TrainingOrders(services);
  services.orders = orders;
  const taps = new ChannelTaps();
  const shardEditors = new ShardEditorProvider(services, taps);
  const updateViews = new UpdateViews(services, shardEditors, taps);
  const verification = new VerificationStore(
    path.join(context.globalStorageUri.fsPath, VERIFY_CACHE_FILE),
    path.join(context.globalStorageUri.fsPath, FORMAT_VERDICTS_FILE),
  );
  const diagnostics = new ManifestDiagnostics(services, verification);
  const manifestEditor = new ManifestEditorProvider(services, verification, diagnostics, taps);
  const hover = new TokenHoverProvider(services);
  const searchPanels = new SearchPanels(services, shardEditors, taps);
  const decoded = new DecodedDocuments();
  const nav: NavigationDeps = { services, views: updateViews, shardEditors };
  const copy = copyCommands(shardEditors);
  const verify = verifyCommands(services, verification);
  const command = (id: string, run: (...args: unknown[]) => unknown) => vscode.commands.registerCommand(id, run);
  const inspectPanels = new InspectPanels(services, taps);
  const here = workbenchFocus(services, updateViews);

  context.subscriptions.push(
    log,
    services,
    orders,
    streamIndex,
    shardEditors,
    updateViews,
    verification,
    diagnostics,
    hover,
    searchPanels,
    inspectPanels,
    // Editors, panels, providers.
    vscode.window.registerCustomEditorProvider(SHARD_EDITOR_VIEW_TYPE, shardEditors, {
      supportsMultipleEditorsPerDocument: true,
      webviewOptions: { retainContextWhenHidden: false },
    }),
    vscode.window.registerCustomEditorProvider(TOKEN_FILE_EDITOR_VIEW_TYPE, shardEditors, {
      supportsMultipleEditorsPerDocument: true,
      webviewOptions: { retainContextWhenHidden: false },
    }),
    registerTokenFileOffer(services),
    vscode.window.registerCustomEditorProvider(MANIFEST_VIEW_TYPE, manifestEditor, { supportsMultipleEditorsPerDocument: true }),
    vscode.window.registerWebviewPanelSerializer(UPDATE_VIEW_TYPE, updateViews),
    vscode.window.registerWebviewPanelSerializer(SEARCH_VIEW_TYPE, searchPanels),
    registerPanelSerializer<InspectState>(INSPECT_VIEW_TYPE, (panel, state) => inspectPanels.revive(panel, state)),
    registerTokenHover(hover),
    vscode.workspace.registerTextDocumentContentProvider(DecodedDocuments.scheme, decoded),
    vscode.workspace.onDidCloseTextDocument((d) => {
      if (d.uri.scheme === DecodedDocuments.scheme) decoded.forget(d.uri);
    }),
    vscode.window.registerUriHandler({ handleUri: (uri) => handleNavigationUri(nav, uri) }),
    // Commands (package.json `contributes.commands`, plus the internal `_copyShardText`).
    command('tokenShards.goToUpdate', (...a: unknown[]) => goToUpdate(nav, ...a)),
    command('tokenShards.goToOffset', (...a: unknown[]) => goToOffset(nav, ...a)),
    command('tokenShards.goToDocument', (...a: unknown[]) => goToDocument(nav, ...a)),
    command('tokenShards.goToSequence', (...a: unknown[]) => goToSequence(nav, ...a)),
    command('tokenShards.copyLink', () => copyLink(services, updateViews)),
    command('tokenShards.copyIds', copy.copyIds),
    command('tokenShards._copyShardText', copy.copyShardText),
    command('tokenShards.highlightUpdate', () => highlightUpdate(shardEditors.commandTarget())),
    command('tokenShards.verifyShards', verify.verifyShards),
    command('tokenShards.verifyShardsIgnoreCache', verify.verifyShardsIgnoreCache),
    command('tokenShards.verifyThisShard', verify.verifyThisShard),
    command('tokenShards.indexStream', (arg?: unknown) => indexStream(services, streamIndex, arg)),
    command('tokenShards.openManifest', (arg?: unknown) => openManifest(services, arg)),
    command('tokenShards.decodeSelection', (...a: unknown[]) => decodeSelection(services, decoded, ...a)),
    command('tokenShards.encodeSelection', (...a: unknown[]) => encodeSelection(services, ...a)),
    command('tokenShards.chooseTokenizer', (...a: unknown[]) => chooseTokenizer(services, ...a)),
    command('tokenShards.chooseRunDescription', (...a: unknown[]) => chooseRunDescription(...a)),
    command('tokenShards.searchStream', (...a: unknown[]) => searchStream(services, searchPanels, ...a)),
    command('tokenShards.searchSelection', (...a: unknown[]) => searchSelection(services, searchPanels, ...a)),
    command('tokenShards.inspectUpdates', (...a: unknown[]) => inspectUpdates(services, inspectPanels, here, ...a)),
    command('tokenShards.openTrainingLog', (...a: unknown[]) => openTrainingLog(services, taps, () => here().ds, ...a)),
    command('tokenShards.exportUpdates', (...a: unknown[]) => exportUpdatesCommand(services, here, ...a)),
    offerManifestTable(context, services),
  );
  log.info(`activated (${context.extension.id} ${context.extension.packageJSON.version})`);
  return {
    services,
    shardEditors,
    updateViews,
    verification,
    searchPanels,
    tapMessages: (listener) => taps.add(listener),
  };
}

/**
 * Ends the read workers that Verify Shard Hashes and Index Stream keep warm between runs
 * (`src/core/shardPool.ts`); everything else is disposed through `context.subscriptions`.
 * VS Code waits for the returned promise.
 */
export async function deactivate(): Promise<void> {
  await closeIdleReadWorkers();
}
