/**
 * Token Shards: Choose Tokenizer… (`tokenShards.chooseTokenizer`): pick a Hugging Face
 * `tokenizer.json`, check it by loading it with the core loader (a byte-level BPE such as
 * dolma2; a clear message naming the file and the reason when it is not), and save it to the
 * setting `tokenShards.tokenizerPath` — in the workspace settings when a folder is open (as a
 * path relative to the first folder when it lies inside it), else in the user settings.
 *
 * Used by the token-id hover's "Choose tokenizer…" link, the token-id commands when no
 * tokenizer is found, and the shard editor's "no tokenizer" banner. A dataset's own
 * `tokenizer/tokenizer.json` still wins over the setting for that dataset.
 *
 * Arguments (optional): `{ file: string }` uses that file instead of the open dialog.
 * Resolves with the absolute path saved, or undefined (cancelled or invalid).
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { fmt } from '../core/units';
import { loadTokenizer } from '../core/tokenizer';
import { Services } from '../services';
import { plainText, shortText } from '../core/untrusted';

/** Arguments of `tokenShards.chooseTokenizer`. */
export interface ChooseTokenizerArgs {
  /** A tokenizer.json to use without asking. */
  file?: string;
}

/** Runs Choose Tokenizer… (see the file comment). */
export async function chooseTokenizer(services: Services, ...args: unknown[]): Promise<string | undefined> {
  const opts = (args[0] && typeof args[0] === 'object' && !(args[0] instanceof vscode.Uri) ? args[0] : {}) as ChooseTokenizerArgs;
  const folder = vscode.workspace.workspaceFolders?.[0];
  let file = typeof opts.file === 'string' && opts.file ? path.resolve(folder?.uri.fsPath ?? '', opts.file) : undefined;
  if (!file) {
    const current = services.configuredTokenizerPath();
    const picked = await vscode.window.showOpenDialog({
      title: vscode.l10n.t('Choose a tokenizer.json for token ids'),
      openLabel: vscode.l10n.t('Use This Tokenizer'),
      canSelectFiles: true,
      canSelectFolders: false,
      canSelectMany: false,
      filters: { [vscode.l10n.t('Hugging Face tokenizer')]: ['json'] },
      defaultUri: current ? vscode.Uri.file(current) : folder?.uri,
    });
    const uri = picked?.[0];
    if (!uri) return undefined;
    if (uri.scheme !== 'file') {
      void vscode.window.showErrorMessage(
        vscode.l10n.t(
          '{0} is not a local file: the tokenizer must be on the disk next to the extension host.',
          plainText(shortText(uri.toString())),
        ),
      );
      return undefined;
    }
    file = uri.fsPath;
  }
  let vocab: number;
  try {
    vocab = (await loadTokenizer(file)).vocabSize;
  } catch (err) {
    void vscode.window.showErrorMessage(
      vscode.l10n.t(
        "Cannot use {0} as the tokenizer: {1}. Expected a Hugging Face tokenizer.json of a byte-level BPE tokenizer (such as dolma2's).",
        file,
        (err as Error).message.replace(`${file}: `, ''),
      ),
    );
    return undefined;
  }
  const target = folder ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  const base = folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
  const rel = base ? path.relative(base, file) : undefined;
  const value = rel !== undefined && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
  try {
    await vscode.workspace.getConfiguration('tokenShards').update('tokenizerPath', value, target);
  } catch (err) {
    void vscode.window.showErrorMessage(
      vscode.l10n.t('Cannot save the setting tokenShards.tokenizerPath: {0}', plainText((err as Error).message)),
    );
    return undefined;
  }
  void services.tokenizerFor(undefined); // warm the shared cache for hovers and editors
  const own = (await services.workspaceDatasetRoots()).length > 0;
  void vscode.window.showInformationMessage(
    vscode.l10n.t('Tokenizer set to {0} ({1} ids).', file, fmt(vocab)) +
      (own ? ' ' + vscode.l10n.t('Datasets with their own tokenizer/tokenizer.json keep using it.') : ''),
  );
  services.log.info(`tokenizer path set to ${value} (${target === vscode.ConfigurationTarget.Workspace ? 'workspace' : 'user'} settings)`);
  return file;
}
