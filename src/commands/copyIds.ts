/**
 * `tokenShards.copyIds`: copies the token ids of the shard editor's selection (or the token at
 * the cursor when nothing is selected) as a list `[791, 1212, 100257]`, which pastes as-is into
 * Python and JSON. Also the internal `tokenShards._copyShardText`, used by the webview when a
 * selection is larger than the pages it holds: copies the decoded text of the selection.
 */
import * as vscode from 'vscode';
import { count, fmt } from '../core/units';
import type { ShardEditorProvider, ShardSession } from '../editor/shardEditor';
import { plainText, shortText } from '../core/untrusted';

/** Most tokens one copy takes (4 MB of ids); larger selections are refused with a message. */
export const MAX_COPY_TOKENS = 1_000_000;

/** The local range a copy command acts on: the selection, else the cursor token. */
export function copyRange(s: ShardSession): [number, number] | undefined {
  const n = s.document.state.numTokens;
  if (n === 0) return undefined;
  if (s.selection && s.selection[1] > s.selection[0]) return [Math.max(0, s.selection[0]), Math.min(n, s.selection[1])];
  const c = Math.min(Math.max(0, s.cursor), n - 1);
  return [c, c + 1];
}

/** Formats ids as a list literal: `[791, 1212]`. */
export function formatIds(ids: ArrayLike<number>): string {
  return `[${Array.from(ids).join(', ')}]`;
}

/** The commands `tokenShards.copyIds` and `tokenShards._copyShardText` on the shard editors of `provider`. */
export function copyCommands(provider: ShardEditorProvider): {
  copyIds(): Promise<string | undefined>;
  copyShardText(): Promise<string | undefined>;
} {
  const target = (): { s: ShardSession; range: [number, number] } | undefined => {
    const s = provider.commandTarget();
    if (!s) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Open a .u32 shard in the shard editor and select tokens first.'));
      return undefined;
    }
    const range = copyRange(s);
    if (!range) {
      void vscode.window.showInformationMessage(vscode.l10n.t('{0} holds no tokens.', plainText(shortText(s.document.uri.fsPath))));
      return undefined;
    }
    if (range[1] - range[0] > MAX_COPY_TOKENS) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t('The selection holds {0} tokens; copying is limited to {1}.', fmt(range[1] - range[0]), fmt(MAX_COPY_TOKENS)),
      );
      return undefined;
    }
    return { s, range };
  };
  const where = (s: ShardSession, [a, b]: [number, number]) => {
    const g = s.document.state.globalStart;
    return g === undefined
      ? vscode.l10n.t('offsets {0}–{1}', fmt(a), fmt(b - 1))
      : vscode.l10n.t('global offsets {0}–{1}', fmt(g + a), fmt(g + b - 1));
  };
  return {
    copyIds: async (): Promise<string | undefined> => {
      const t = target();
      if (!t) return undefined;
      const ids = await t.s.document.state.pages.read(t.range[0], t.range[1] - t.range[0]);
      const text = formatIds(ids);
      await vscode.env.clipboard.writeText(text);
      vscode.window.setStatusBarMessage(vscode.l10n.t('Copied {0} token ids ({1})', fmt(ids.length), where(t.s, t.range)), 4000);
      return text;
    },
    copyShardText: async (): Promise<string | undefined> => {
      const t = target();
      if (!t) return undefined;
      const tok = t.s.document.state.tokenizer;
      const ids = await t.s.document.state.pages.read(t.range[0], t.range[1] - t.range[0]);
      const text = tok ? tok.decode(ids) : Array.from(ids).join(' ');
      await vscode.env.clipboard.writeText(text);
      vscode.window.setStatusBarMessage(
        vscode.l10n.t('Copied the text of {0} ({1})', count(ids.length, 'token'), where(t.s, t.range)),
        4000,
      );
      return text;
    },
  };
}
