/**
 * Token Shards: Decode Selection (Token IDs → Text) (`tokenShards.decodeSelection`): the ids in
 * the selection(s) of the active editor — found with the id-list parser's per-number rules
 * (src/core/idList.ts: negatives, decimals, dates, `uint32`… are not ids) — decoded with the
 * dataset's tokenizer into a new read-only document beside the editor (closing it asks
 * nothing: see {@link DecodedDocuments}). Its first line says how
 * many tokens were decoded, how many ids are not in the vocabulary (shown inline as
 * `⟨unknown N⟩`) and which numbers were skipped. Each bracketed row of a 2-D print is decoded
 * on its own under a `── row r ──` line. With an empty selection, the cursor's line is used.
 *
 * Arguments (optional, for links and tests): `{ text: string }` decodes that text instead of
 * the selection. Resolves with the new document, or undefined.
 *
 * Also the tokenizer resolution every token-id command shares ({@link tokenizerForCommand})
 * and {@link decodeForDisplay}, used by the hover too.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { count, fmt } from '../core/units';
import { ExtractedIds, extractIds } from '../core/idList';
import { LoadedTokenizer, decodeForDisplay } from '../core/tokenizer';
import { Services } from '../services';
import { plainText } from '../core/untrusted';

/**
 * Read-only documents holding decoded text, served under the `token-shards-decoded:` scheme:
 * unlike untitled documents they never ask to be saved. A text is dropped when its document closes.
 * One per activation, built and registered by the composition root (`src/extension.ts`).
 */
export class DecodedDocuments implements vscode.TextDocumentContentProvider {
  /** URI scheme of decoded documents. */
  static readonly scheme = 'token-shards-decoded';
  private readonly texts = new Map<string, string>();
  private count = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  /** Stores a text and returns the URI of its document (`Decoded N · <label>.txt`). */
  add(text: string, label: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: DecodedDocuments.scheme, path: `/Decoded ${++this.count} · ${label}.txt` });
    this.texts.set(uri.toString(), text);
    return uri;
  }

  /** Forgets the text of a closed document. */
  forget(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
  }
}

/** Arguments of `tokenShards.decodeSelection`. */
export interface DecodeSelectionArgs {
  /** Text to take the ids from instead of the editor's selection. */
  text?: string;
}

/** Decoded text of ids for display (unknown ids as `⟨unknown N⟩`): one rule, in the core. */
export { decodeForDisplay };

/**
 * The tokenizer a token-id command uses: the dataset holding the active document, else the
 * workspace's dataset (a quick pick when there are several), else `tokenShards.tokenizerPath`.
 * With none, offers Choose Tokenizer… and uses its result. Undefined when the user gives up;
 * a tokenizer that fails to load is reported with its file and reason.
 */
export async function tokenizerForCommand(services: Services, purpose: string, uri?: vscode.Uri): Promise<LoadedTokenizer | undefined> {
  try {
    let ds = uri ? await services.datasetForFile(uri) : undefined;
    if (!ds && (await services.workspaceDatasetRoots()).length > 0) ds = await services.pickDataset(purpose);
    const tok = await services.tokenizerFor(ds);
    if (tok) return tok;
    const choose = vscode.l10n.t('Choose Tokenizer…');
    const pick = await vscode.window.showWarningMessage(
      vscode.l10n.t('No tokenizer: open a dataset folder (with tokenizer/tokenizer.json) or choose a tokenizer.json.'),
      choose,
    );
    if (pick !== choose) return undefined;
    const file = await vscode.commands.executeCommand<string | undefined>('tokenShards.chooseTokenizer');
    return file ? await services.tokenizerFor(undefined) : undefined;
  } catch (err) {
    void vscode.window.showErrorMessage(vscode.l10n.t('{0}: {1}', purpose, plainText((err as Error).message)));
    return undefined;
  }
}

/** Short summary of numbers that were not ids: "2 negative (-100), 1 decimal (0.5)". */
export function describeSkipped(skipped: ExtractedIds['skipped']): string {
  const by = new Map<string, string[]>();
  for (const s of skipped) {
    const list = by.get(s.reason) ?? [];
    list.push(s.text);
    by.set(s.reason, list);
  }
  return [...by]
    .map(([reason, texts]) => {
      const examples = [...new Set(texts)].slice(0, 3).join(', ');
      return `${texts.length} ${reason} (${examples}${new Set(texts).size > 3 ? ', …' : ''})`;
    })
    .join(', ');
}

/**
 * The text of the untitled document: a header line, a blank line, then the decoded text (rows
 * under `── row r · n tokens ──` lines when there are several).
 */
export function decodedDocumentText(tok: LoadedTokenizer, found: ExtractedIds): string {
  const parts = found.rows.map((row) => decodeForDisplay(tok, row));
  const unknown = parts.reduce((n, p) => n + p.unknown, 0);
  let header = vscode.l10n.t('Decoded {0}', count(found.ids.length, 'token'));
  header += ' · ' + count(unknown, 'unknown id');
  if (found.rows.length > 1) header += ' · ' + vscode.l10n.t('{0} rows', fmt(found.rows.length));
  header += ' · ' + vscode.l10n.t('tokenizer {0}', tok.file);
  if (found.skipped.length) header += ' · ' + vscode.l10n.t('not ids: {0}', describeSkipped(found.skipped));
  if (found.rows.length === 1) return `${header}\n\n${parts[0].text}`;
  return (
    `${header}\n` +
    found.rows
      .map((row, r) => `\n── ${vscode.l10n.t('row {0} · {1}', String(r), count(row.length, 'token'))} ──\n${parts[r].text}`)
      .join('\n')
  );
}

/** Runs Decode Selection (see the file comment). */
export async function decodeSelection(
  services: Services,
  decodedDocuments: DecodedDocuments,
  ...args: unknown[]
): Promise<vscode.TextDocument | undefined> {
  const opts = (args[0] && typeof args[0] === 'object' && !(args[0] instanceof vscode.Uri) ? args[0] : {}) as DecodeSelectionArgs;
  const editor = vscode.window.activeTextEditor;
  let text: string;
  if (typeof opts.text === 'string') {
    text = opts.text;
  } else {
    if (!editor) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Decode Selection: select token ids in a text editor first.'));
      return undefined;
    }
    const sels = editor.selections.filter((s) => !s.isEmpty);
    text = sels.length ? sels.map((s) => editor.document.getText(s)).join('\n') : editor.document.lineAt(editor.selection.active.line).text;
  }
  const found = extractIds(text);
  if (found.ids.length === 0) {
    const why = found.skipped.length ? ' ' + vscode.l10n.t('Numbers that are not ids: {0}.', describeSkipped(found.skipped)) : '';
    void vscode.window.showInformationMessage(vscode.l10n.t('Decode Selection: no token ids in the selection.') + why);
    return undefined;
  }
  const tok = await tokenizerForCommand(services, vscode.l10n.t('Decode Selection'), editor?.document.uri);
  if (!tok) return undefined;
  const uri = decodedDocuments.add(decodedDocumentText(tok, found), count(found.ids.length, 'token'));
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: false });
  services.log.info(`decode selection: ${count(found.ids.length, 'id')} with ${path.basename(tok.file)}`);
  return doc;
}
