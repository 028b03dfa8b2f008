/**
 * Token Shards: Go to Document… (`tokenShards.goToDocument`): reveals document `n` (0-based;
 * documents are separated by EOS, document n follows the n-th EOS, see core/documents.ts) in
 * its shard editor with the whole document highlighted. Finding document n counts EOS tokens
 * shard by shard (memoised per dataset) under a cancellable progress notification.
 *
 * Arguments (optional; with `document` no prompt): `{ document: number | string, root?: string }`.
 * Resolves with `{ document, start, end, endKnown }` (global token offsets, end exclusive) or undefined.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { CancelledError } from '../core/errors';
import { count, fmt } from '../core/units';
import { findDocumentBounds } from '../core/documents';
import { documentRuleOf } from '../core/documentRule';
import { validateDocumentInput } from '../core/navigation';
import { documentCountIfCheap } from '../core/updateModel';
import { argOrPrompt, commandArgs, promptValidated, reportError, resolveDataset } from '../inputs';
import { NavigationDeps } from './focus';
import { iconSafe } from '../core/untrusted';
import { shardScanProgress, withTail } from '../editor/shardDocument';

/** Arguments of `tokenShards.goToDocument`. */
export interface GoToDocumentArgs {
  /** 0-based document number. */
  document: number | string;
  /** Dataset root; default: the focused shard editor's dataset, the only one, or a pick. */
  root?: string;
}

/** Result of Go to Document (offsets in tokens). */
export interface GoToDocumentResult {
  document: number;
  start: number;
  end: number;
  endKnown: boolean;
}

/** Runs Go to Document… (see the file comment). */
export async function goToDocument(nav: NavigationDeps, ...args: unknown[]): Promise<GoToDocumentResult | undefined> {
  const { services, views } = nav;
  const { opts, uri } = commandArgs<GoToDocumentArgs>(args);
  try {
    const ds = await resolveDataset(services, vscode.l10n.t('Go to Document: choose a dataset'), opts.root, uri, views?.focusedDataset);
    if (!ds) return undefined;
    // Live range check when the document count is cheap (memoised EOS counts; the shards still to
    // scan hold ≤ documentScanLimit tokens): counted in the background while the box is open.
    const ask = async (): Promise<number | undefined> => {
      const limit = services.documentScanLimit();
      const countAbort = new AbortController();
      let count: number | undefined;
      let counting = true;
      const counted = documentCountIfCheap(services.documentIndex(ds), limit, countAbort.signal)
        .then(
          (c) => {
            count = c;
          },
          (err) => {
            if (!(err instanceof CancelledError)) services.log.warn(`Go to Document: cannot count documents: ${(err as Error).message}`);
          },
        )
        .finally(() => {
          counting = false;
        });
      let typed: number | undefined;
      try {
        typed = await promptValidated({
          title: vscode.l10n.t('Go to Document (0-based) · {0}', iconSafe(path.basename(ds.root))),
          prompt: vscode.l10n.t('Document number (0-based; document n follows the n-th EOS token)'),
          placeholder: vscode.l10n.t('e.g. 12345'),
          validate: (t) => validateDocumentInput(t, count, counting),
          revalidateWhen: counted,
        });
      } finally {
        // Dismissed: stop counting. Accepted: let it run, Find Document below shares its scans.
        if (typed === undefined) countAbort.abort();
      }
      return typed;
    };
    // A document number given as an argument is range-checked by the search for it (documentStart).
    const doc = await argOrPrompt(opts.document, 'document', (v) => ({ ok: true, value: v }), ask);
    if (doc === undefined) return undefined;
    const index = services.documentIndex(ds);
    const abort = new AbortController();
    const start = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        cancellable: true,
        title: vscode.l10n.t('Finding document {0}', fmt(doc)),
      },
      (progress, token) => {
        token.onCancellationRequested(() => abort.abort());
        let last = 0;
        const tail = shardScanProgress(ds.shards, index.exportCounts());
        return index.documentStart(doc, abort.signal, (done, total) => {
          const pct = (100 * done) / Math.max(1, total);
          if (pct - last >= 1) {
            progress.report({
              increment: pct - last,
              message: withTail(vscode.l10n.t('counted EOS in {0} of {1}', fmt(done), count(total, 'shard')), tail(done, total)),
            });
            last = pct;
          }
        });
      },
    );
    const limit = services.documentScanLimit();
    const bounds = await findDocumentBounds(ds.stream, start, ds.settings.eosTokenId, limit, documentRuleOf(ds).role);
    await nav.shardEditors.reveal({
      dataset: ds,
      offset: start,
      align: 'top',
      highlight: [
        {
          start,
          end: bounds.end,
          label: vscode.l10n.t(
            'document {0} (0-based){1}',
            fmt(doc),
            bounds.endKnown ? '' : vscode.l10n.t(', continues past {0}', fmt(bounds.end)),
          ),
        },
      ],
    });
    return { document: doc, start, end: bounds.end, endKnown: bounds.endKnown };
  } catch (err) {
    if (err instanceof CancelledError) return undefined;
    return reportError(services, vscode.l10n.t('Go to Document'), err);
  }
}
