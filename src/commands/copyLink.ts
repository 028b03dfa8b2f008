/**
 * Token Shards: Copy Link to Cursor Position (`tokenShards.copyLink`): copies a link that the
 * URI handler (src/commands/uriHandler.ts) opens, so logs and notebooks can point at a place in the stream:
 * - in a shard editor: `<scheme>://token-shards.token-shard-inspector/offset?o=<global offset>`;
 * - in the update view: `…/update?k=<k>` (plus `&sequence=<r>` when a row is focused).
 * `&root=<dataset folder>` is added when the workspace holds several datasets (the handler asks
 * which dataset otherwise). `<scheme>` is the running product's (`vscode`, `vscode-insiders`…).
 * Resolves with the link copied, or undefined when there is no cursor to link to.
 */
import * as vscode from 'vscode';
import { NavigationLink, formatNavigationLink } from '../core/navigation';
import { Services } from '../services';
import { UpdateViews } from '../panels/updateView';
import { reportError } from '../inputs';
import { plainText, shortText } from '../core/untrusted';

/** Full link URI text for a navigation target of this extension. */
export function linkFor(services: Services, link: NavigationLink): string {
  return `${vscode.env.uriScheme}://${services.context.extension.id}${formatNavigationLink(link)}`;
}

/** Runs Copy Link (see the file comment). */
export async function copyLink(services: Services, views: UpdateViews): Promise<string | undefined> {
  try {
    const shard = services.activeShard;
    const view = views.active;
    const viewFocused = view && views.panelFor(view.dataset.root)?.active;
    let link: NavigationLink | undefined;
    let root: string | undefined;
    if (viewFocused || (!shard && view)) {
      link = { kind: 'update', update: view!.update, ...(view!.row !== undefined ? { sequence: view!.row } : {}) };
      root = view!.dataset.root;
    } else if (shard?.dataset) {
      link = { kind: 'offset', offset: shard.offset };
      root = shard.dataset.root;
    } else if (shard) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t(
          'This shard has no shard_manifest.jsonl, so its offsets are local to the file and a link could not find it. Open it from its dataset folder.',
        ),
      );
      return undefined;
    }
    if (!link || !root) {
      void vscode.window.showInformationMessage(
        vscode.l10n.t('Put the cursor in a shard editor or open the update view (Go to Update…) to copy a link.'),
      );
      return undefined;
    }
    if ((await services.workspaceDatasetRoots()).length > 1) link.root = root;
    const text = linkFor(services, link);
    await vscode.env.clipboard.writeText(text);
    void vscode.window.showInformationMessage(vscode.l10n.t('Copied {0}', plainText(shortText(text, 300))));
    return text;
  } catch (err) {
    return reportError(services, vscode.l10n.t('Copy Link'), err);
  }
}
