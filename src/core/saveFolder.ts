/**
 * Where a save dialog opens (search CSV/JSON/PNG, training-log and inspect exports, Export
 * Updates): never inside the dataset by default — the workspace folder usually IS the dataset,
 * and nothing should be written next to the shards unless the user chooses so. No `vscode` here.
 */
import * as path from 'path';

/** What {@link defaultSaveFolder} decides from. */
export interface SaveFolderFacts {
  /** The folder the user last saved an export into (remembered across sessions), if any. */
  remembered?: string;
  /** The open workspace folders' paths (local files only), first one first. */
  workspaceFolders: readonly string[];
  /** The user's home folder. */
  home: string;
  /** Whether a folder exists (the remembered one may have been removed since). */
  isFolder: (p: string) => boolean;
}

/**
 * The folder a save dialog opens in: the remembered last folder when it still exists; else the
 * parent of the first workspace folder (beside the dataset, not in it); else the home folder.
 */
export function defaultSaveFolder(f: SaveFolderFacts): string {
  if (f.remembered && f.isFolder(f.remembered)) return f.remembered;
  const ws = f.workspaceFolders[0];
  if (ws) {
    const parent = path.dirname(path.resolve(ws));
    if (parent !== path.resolve(ws) && f.isFolder(parent)) return parent;
  }
  return f.home;
}
