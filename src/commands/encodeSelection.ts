/**
 * Token Shards: Encode Selection (Text → Token IDs) (`tokenShards.encodeSelection`): the
 * selected text of each selection encoded with the dataset's tokenizer (the library's encode,
 * `LoadedTokenizer.encode`), then, from a quick pick: copy the ids to the clipboard, insert them
 * on a new line after each selection, or replace each selection with them. Ids are written as
 * a JSON array `[791, 4062, 14198]`, which the hover and Decode Selection read back.
 *
 * Big selections do not freeze the extension host: text over {@link ENCODE_CHUNK_CHARS}
 * characters is encoded in pieces cut where the cl100k pre-tokenizer always cuts (between a
 * newline and a letter: no pre-token spans that edge), so the ids are identical to encoding
 * the whole text, with a cancellable progress notification and a yield between pieces.
 *
 * Arguments (optional): `{ action: 'copy' | 'insert' | 'replace' }` skips the quick pick.
 * Resolves with `{ action, ids }` (one id array per selection), or undefined.
 */
import * as vscode from 'vscode';
import { count as countOf, fmt } from '../core/units';
import { LoadedTokenizer } from '../core/tokenizer';
import { Services } from '../services';
import { tokenizerForCommand } from './decodeSelection';
import { iconSafe, plainText, shortText } from '../core/untrusted';

/** What to do with the ids. */
export type EncodeAction = 'copy' | 'insert' | 'replace';

/** Arguments of `tokenShards.encodeSelection`. */
export interface EncodeSelectionArgs {
  action?: EncodeAction;
}

/** Result of `tokenShards.encodeSelection`. */
export interface EncodeSelectionResult {
  action: EncodeAction;
  /** Ids per non-empty selection, in selection order. */
  ids: number[][];
}

/** Text longer than this (characters) is encoded in pieces with progress. */
export const ENCODE_CHUNK_CHARS = 65_536;

/**
 * Splits text into pieces of about `target` characters at boundaries where the cl100k
 * pre-tokenizer regex always splits: right after a newline that is followed by a letter
 * (`\n|L`). Every alternative of the regex either cannot start with a newline before a
 * letter or ends at a newline, so encoding the pieces gives the same ids as the whole.
 * Text with no such boundary stays one piece.
 */
export function encodingPieces(text: string, target = ENCODE_CHUNK_CHARS): string[] {
  const out: string[] = [];
  const re = /\n(?=\p{L})/gu;
  let from = 0;
  while (text.length - from > target) {
    re.lastIndex = from + target;
    const m = re.exec(text);
    if (!m) break;
    out.push(text.slice(from, m.index + 1));
    from = m.index + 1;
  }
  out.push(text.slice(from));
  return out;
}

/** Ids written the way the hover and Decode Selection read them back. */
export function formatIds(ids: readonly number[]): string {
  return `[${ids.join(', ')}]`;
}

/** Encodes text, in pieces with progress and cancellation when it is long. Undefined when cancelled. */
async function encodeText(tok: LoadedTokenizer, texts: string[]): Promise<number[][] | undefined> {
  const total = texts.reduce((n, t) => n + t.length, 0);
  if (total <= ENCODE_CHUNK_CHARS) return Promise.all(texts.map((t) => tok.encode(t)));
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: vscode.l10n.t('Encoding {0} characters', fmt(total)),
      cancellable: true,
    },
    async (progress, cancel) => {
      const out: number[][] = [];
      for (const t of texts) {
        const ids: number[] = [];
        for (const piece of encodingPieces(t)) {
          if (cancel.isCancellationRequested) return undefined;
          const part = await tok.encode(piece);
          for (const id of part) ids.push(id);
          progress.report({ increment: (100 * piece.length) / total });
          await new Promise((r) => setImmediate(r)); // let the host breathe between pieces
        }
        out.push(ids);
      }
      return out;
    },
  );
}

/** Runs Encode Selection (see the file comment). */
export async function encodeSelection(services: Services, ...args: unknown[]): Promise<EncodeSelectionResult | undefined> {
  const opts = (args[0] && typeof args[0] === 'object' && !(args[0] instanceof vscode.Uri) ? args[0] : {}) as EncodeSelectionArgs;
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Encode Selection: select text in a text editor first.'));
    return undefined;
  }
  const sels = editor.selections.filter((s) => !s.isEmpty).sort((a, b) => a.start.compareTo(b.start));
  if (sels.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Encode Selection: select the text to encode first.'));
    return undefined;
  }
  const tok = await tokenizerForCommand(services, vscode.l10n.t('Encode Selection'), editor.document.uri);
  if (!tok) return undefined;
  const texts = sels.map((s) => editor.document.getText(s));
  const version = editor.document.version;
  let ids: number[][] | undefined;
  try {
    ids = await encodeText(tok, texts);
  } catch (err) {
    void vscode.window.showErrorMessage(
      vscode.l10n.t('Encode Selection: cannot encode with {0}: {1}', plainText(shortText(tok.file)), plainText((err as Error).message)),
    );
    return undefined;
  }
  if (!ids) return undefined;
  const count = ids.reduce((n, a) => n + a.length, 0);
  const formatted = ids.map(formatIds);
  let action = opts.action;
  if (!action) {
    const preview = formatted.join(' ');
    const items: (vscode.QuickPickItem & { action: EncodeAction })[] = [
      { action: 'copy', label: `$(copy) ${vscode.l10n.t('Copy to Clipboard')}`, description: countOf(count, 'token') },
      { action: 'insert', label: `$(insert) ${vscode.l10n.t('Insert After Selection')}`, description: vscode.l10n.t('on a new line') },
      { action: 'replace', label: `$(replace) ${vscode.l10n.t('Replace Selection')}` },
    ];
    const pick = await vscode.window.showQuickPick(items, {
      title: vscode.l10n.t('Encode Selection: {0} with {1}', countOf(count, 'token'), iconSafe(shortText(tok.file))),
      placeHolder: preview.length > 200 ? preview.slice(0, 200) + '…' : preview,
    });
    if (!pick) return undefined;
    action = pick.action;
  }
  if (action === 'copy') {
    await vscode.env.clipboard.writeText(formatted.join('\n'));
    void vscode.window.setStatusBarMessage(vscode.l10n.t('Copied {0} token ids', fmt(count)), 3000);
  } else {
    if (editor.document.version !== version) {
      void vscode.window.showWarningMessage(vscode.l10n.t('Encode Selection: the document changed while encoding; nothing was inserted.'));
      return undefined;
    }
    const ok = await editor.edit((eb) => {
      sels.forEach((s, i) => {
        if (action === 'replace') eb.replace(s, formatted[i]);
        else eb.insert(s.end, `\n${formatted[i]}`);
      });
    });
    if (!ok) {
      void vscode.window.showWarningMessage(vscode.l10n.t('Encode Selection: the editor refused the edit.'));
      return undefined;
    }
  }
  return { action, ids };
}
