/**
 * Opens `vscode://token-shards.token-shard-inspector/update?k=55000` (the update view; optional
 * `&sequence=r` focuses a row) and `…/offset?o=55000000` (also `offset=`; the token in its shard
 * editor) links from logs and notebooks. `&root=<dataset folder>` picks the dataset; without it
 * (or when that folder holds no dataset), the focused shard editor's dataset, the only one in the
 * workspace, or a quick pick when there are several. Bad links get a message naming what was
 * expected; range errors name the valid range (core/navigation.ts). Registered by the composition
 * root (`src/extension.ts`).
 */
import * as vscode from 'vscode';
import { parseNavigationLink } from '../core/navigation';
import type { NavigationDeps } from './focus';
import { goToUpdate } from './goToUpdate';
import { goToOffset } from './goToOffset';
import { plainText, shortText } from '../core/untrusted';
import { count } from '../core/units';

/** Handles one link; resolves when the target is shown (or the link was rejected). */
export async function handleNavigationUri(nav: NavigationDeps, uri: vscode.Uri): Promise<void> {
  const { services, views } = nav;
  services.log.info(`opening link ${JSON.stringify(uri.toString(true))}`);
  const link = parseNavigationLink(uri.path, uri.query);
  if ('error' in link) {
    // Never echo the link itself (it is untrusted): what was wrong with it, as plain text.
    void vscode.window.showErrorMessage(vscode.l10n.t('Cannot open this Token Shards link: {0}', plainText(shortText(link.error, 200))));
    return;
  }
  if (link.kind === 'update') {
    const shown = await goToUpdate(nav, { update: link.update, root: link.root });
    if (shown && link.sequence !== undefined) {
      if (link.sequence >= shown.rows) {
        void vscode.window.showWarningMessage(
          vscode.l10n.t(
            'Sequence {0} is out of range: each update has {1}, 0..{2}.',
            link.sequence,
            count(shown.rows, 'sequence'),
            shown.rows - 1,
          ),
        );
      } else {
        await shown.rendered;
        views.focusRow(shown.root, link.update, link.sequence);
      }
    }
  } else {
    await goToOffset(nav, { offset: link.offset, root: link.root });
  }
}
