/**
 * The offer to open a token file in the shard editor (the rule: `core/formats/offer.ts`). Watches
 * the tabs: when a `.bin`, `.npy` or `.mds` file opens in another editor (the text editor's
 * binary notice, the hex editor) and the format layer opens it as a token format, one
 * notification asks "Open as token shard (Megatron int32)?" with Open / Don't ask again (kept in
 * the extension's global state). Sniffing runs off the UI path; a file that does not open as a
 * token format is not offered.
 */
import * as vscode from 'vscode';
import { mayOffer, offerQuestion } from '../core/formats/offer';
import type { Services } from '../services';
import { SHARD_EDITOR_VIEW_TYPE } from './shardEditor';

/** Global-state key of "Don't ask again". */
export const OFFER_NEVER_KEY = 'tokenShards.offerTokenFiles.never';

/** Registers the offer; dispose the result to stop it. */
export function registerTokenFileOffer(services: Services): vscode.Disposable {
  const offered = new Set<string>();
  const consider = async (tab: vscode.Tab) => {
    const input = tab.input;
    const uri = input instanceof vscode.TabInputText || input instanceof vscode.TabInputCustom ? input.uri : undefined;
    if (!uri || uri.scheme !== 'file') return;
    if (input instanceof vscode.TabInputCustom && input.viewType.startsWith('tokenShards.')) return;
    const file = uri.fsPath;
    const neverAsk = services.context.globalState.get<boolean>(OFFER_NEVER_KEY) === true;
    if (!mayOffer({ file, neverAsk, offered })) return;
    offered.add(file);
    let question: string;
    try {
      const ds = await services.formatDatasetForFile(file);
      if (!ds?.format) return;
      question = offerQuestion(ds.format.name, ds.format.dtype);
    } catch (err) {
      services.log.info(`not offering the shard editor for ${file}: ${(err as Error).message}`);
      return;
    }
    const open = vscode.l10n.t('Open');
    const never = vscode.l10n.t("Don't ask again");
    const choice = await vscode.window.showInformationMessage(question, open, never);
    if (choice === open) {
      await vscode.commands.executeCommand('vscode.openWith', uri, SHARD_EDITOR_VIEW_TYPE, { viewColumn: tab.group.viewColumn });
    } else if (choice === never) {
      await services.context.globalState.update(OFFER_NEVER_KEY, true);
    }
  };
  const all = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs);
  for (const tab of all()) void consider(tab);
  return vscode.window.tabGroups.onDidChangeTabs((e) => {
    for (const tab of [...e.opened, ...e.changed]) void consider(tab);
  });
}
