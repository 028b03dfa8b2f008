/**
 * The one save dialog of every export (panels and Export Updates): opens in
 * {@link defaultSaveFolder}'s folder and remembers the folder chosen (global state) for next time.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { defaultSaveFolder } from '../core/saveFolder';

/** Global-state key of the last folder an export was saved into (an absolute path). */
export const LAST_SAVE_FOLDER_KEY = 'tokenShards.lastSaveFolder';

/**
 * Shows the save dialog for a file named `fileName` (the dialog's other options as given) and
 * resolves with the chosen file, or undefined when cancelled. A chosen local file's folder is
 * remembered in `memory` (the extension's global state; none: nothing is remembered).
 */
export async function askSaveLocation(
  memory: vscode.Memento | undefined,
  fileName: string,
  options: Omit<vscode.SaveDialogOptions, 'defaultUri'>,
): Promise<vscode.Uri | undefined> {
  const folder = defaultSaveFolder({
    remembered: memory?.get<string>(LAST_SAVE_FOLDER_KEY),
    workspaceFolders: (vscode.workspace.workspaceFolders ?? []).filter((w) => w.uri.scheme === 'file').map((w) => w.uri.fsPath),
    home: os.homedir(),
    isFolder: (p) => {
      try {
        return fs.statSync(p).isDirectory();
      } catch {
        return false;
      }
    },
  });
  const target = await vscode.window.showSaveDialog({ ...options, defaultUri: vscode.Uri.file(path.join(folder, fileName)) });
  if (target?.scheme === 'file' && memory) await memory.update(LAST_SAVE_FOLDER_KEY, path.dirname(target.fsPath));
  return target;
}
