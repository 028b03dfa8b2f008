/**
 * Token Shards: Open Shard Manifest Table (`tokenShards.openManifest`): opens the manifest table
 * (src/editor/manifestEditor.ts) of the dataset an argument names (the manifest file, a dataset
 * folder or a file inside one, or a token file of another storage format: the table of its
 * stream's files), else of the active editor's dataset, else of a picked one.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { findDatasetRoot, tableFileOf } from '../core/dataset';
import { SHARD_MANIFEST } from '../core/manifest';
import { MANIFEST_VIEW_TYPE } from '../editor/manifestEditor';
import type { Services } from '../services';

/** The `shard_manifest.jsonl` a command argument points at (the file, a dataset folder, a file inside one). */
async function manifestFor(services: Services, arg: unknown): Promise<vscode.Uri | undefined> {
  let uri = arg instanceof vscode.Uri ? arg : undefined;
  if (!uri) {
    const active = vscode.window.activeTextEditor?.document.uri ?? services.activeShard?.uri;
    if (active?.scheme === 'file' && ((await findDatasetRoot(active.fsPath)) || services.activeShard?.dataset?.format)) uri = active;
  }
  if (uri?.scheme === 'file') {
    if (path.basename(uri.fsPath) === SHARD_MANIFEST) return uri;
    const root = await findDatasetRoot(uri.fsPath);
    if (root) return vscode.Uri.file(path.join(root, SHARD_MANIFEST));
  }
  // A token file of another format: the table of its stream (every file of a litdata or MDS
  // folder, through its index.json; the file's own unit otherwise).
  const format = uri?.scheme === 'file' ? await services.formatDatasetForFile(uri.fsPath).catch(() => undefined) : undefined;
  if (uri && format) return vscode.Uri.file(tableFileOf(format) ?? uri.fsPath);
  const ds = await services.pickDataset(vscode.l10n.t('Open the shard manifest of which dataset?'));
  // A picked format dataset: its folder (or single unit) opens the table of every file of its stream.
  if (ds?.format) return vscode.Uri.file(tableFileOf(ds) ?? ds.root);
  return ds && vscode.Uri.file(ds.manifestFile);
}

/** `tokenShards.openManifest`: opens the table of the given (or chosen) dataset; returns the manifest's URI. */
export async function openManifest(services: Services, arg: unknown): Promise<vscode.Uri | undefined> {
  const uri = await manifestFor(services, arg);
  if (uri) await vscode.commands.executeCommand('vscode.openWith', uri, MANIFEST_VIEW_TYPE);
  return uri;
}
