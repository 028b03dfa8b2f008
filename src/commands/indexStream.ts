/**
 * Token Shards: Index Stream (`tokenShards.indexStream`; palette, manifest table title button):
 * builds (or completes) the stream index of a dataset through {@link StreamIndexService.build}.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import type { Dataset } from '../core/dataset';
import { plainText } from '../core/untrusted';
import type { Services } from '../services';
import type { StreamIndexService } from '../streamIndexService';

/** `tokenShards.indexStream`: picks the dataset (argument: a root path or URI, else the active one / a pick) and builds its index. */
export async function indexStream(services: Services, index: StreamIndexService, arg?: unknown): Promise<void> {
  let ds: Dataset | undefined;
  if (typeof arg === 'string') ds = await services.openRoot(arg);
  else if (arg instanceof vscode.Uri) ds = await services.datasetForFile(arg);
  else ds = await services.pickDataset(vscode.l10n.t('Choose a dataset to index'));
  if (!ds) return;
  if (ds.lone) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t(
        '{0} has no manifest: the stream index needs a dataset folder with shard_manifest.jsonl.',
        plainText(path.basename(ds.root)),
      ),
    );
    return;
  }
  await index.build(ds);
}
