/**
 * `tokenShards.highlightUpdate`: toggles, in the focused shard editor, the highlight of the
 * update the cursor is in and the starts of its sequences (src/editor/updateHighlight.ts).
 */
import * as vscode from 'vscode';
import { HighlightableSession, updateHighlights } from '../editor/updateHighlight';

/**
 * `tokenShards.highlightUpdate` on the shard editor commands act on (`ShardEditorProvider.commandTarget`):
 * resolves with the update now highlighted (through the run's order when one is in force), or undefined.
 */
export async function highlightUpdate(s: HighlightableSession | undefined): Promise<number | undefined> {
  if (!s) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Open a .u32 shard of a dataset in the shard editor first.'));
    return undefined;
  }
  return updateHighlights(s, true);
}
