/**
 * The status bar item of the focused shard editor: where the cursor is, as
 * `Token 257,530 · update 1 · seq 123 · pos 506 · doc 38` (global terms for dataset shards,
 * local offsets for a lone shard; update/seq/pos 0-based, explained in the tooltip), the same
 * words as the editor's own cursor line. Clicking it runs "Go to Token Offset…".
 */
import * as vscode from 'vscode';
import { count, fmt } from '../core/units';
import { PAST_LAST_UPDATE_SHORT, PAST_LAST_UPDATE_TEXT, PastLastUpdate, SchedulePosition } from '../core/schedule';
import { markdownText } from '../core/untrusted';
import { describeReads, ReadWords } from '../core/order/orderText';

/** What the item shows. Offsets in tokens. */
export interface ShardStatusInfo {
  /** File name of the shard. */
  fileName: string;
  /** Local offset of the cursor in the file. */
  local: number;
  /** Global offset, for dataset shards. */
  global?: number;
  /** Training position of `global` (dataset shards). */
  position?: SchedulePosition;
  /** For a `global` after the last whole update: the look-ahead token or an untrained one. */
  pastLastUpdate?: PastLastUpdate;
  /** Document number at the cursor, when known; `documentScope` 'shard' = counted from this shard's first document. */
  document?: number;
  documentScope?: 'global' | 'shard';
  /** True while the document number is still being counted: shown as `doc …`. */
  documentPending?: boolean;
  /** Selected range `[start, end)` in the same terms as `global ?? local`. */
  selection?: [number, number];
  /**
   * A run's training order other than the card's (`run.json`): its name and the run's reads of
   * `global` (undefined while asked), or why the run description cannot be used; `position` then
   * is not shown, the reads are.
   */
  order?: { name: string; reads?: ReadWords[]; error?: string };
}

/** Status bar item owned by the shard editor. */
export class ShardStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem('tokenShards.shardPosition', vscode.StatusBarAlignment.Right, 200);
    this.item.name = vscode.l10n.t('Token shard position');
    this.item.command = 'tokenShards.goToOffset';
  }

  /** Shows `info` (the focused shard editor's cursor). */
  show(info: ShardStatusInfo): void {
    this.item.text = statusText(info);
    const md = new vscode.MarkdownString(undefined, true);
    md.appendMarkdown(`**${escapeMd(info.fileName)}** — ${vscode.l10n.t('shard editor cursor')}\n\n`);
    if (info.global !== undefined) {
      md.appendMarkdown(
        `- ${vscode.l10n.t('global token offset')}: ${fmt(info.global)}\n- ${vscode.l10n.t('shard offset')}: ${fmt(info.local)}\n`,
      );
      const p = info.position;
      if (info.order) {
        md.appendMarkdown(`- ${escapeMd(info.order.name)}\n`);
        if (info.order.error) md.appendMarkdown(`- ${escapeMd(info.order.error)}\n`);
        else if (info.order.reads) md.appendMarkdown(`- ${escapeMd(describeReads(info.order.reads, 5))}\n`);
      } else if (p?.lookAhead) md.appendMarkdown(`- ${PAST_LAST_UPDATE_TEXT[info.pastLastUpdate ?? 'untrained']}\n`);
      else if (p)
        md.appendMarkdown(
          `- ${vscode.l10n.t('update {0} (0-based: the first optimizer step is update 0)', fmt(p.update!))}\n- ${vscode.l10n.t('sequence {0} within that update (0-based)', fmt(p.sequence!))}\n- ${vscode.l10n.t('position {0} within that sequence (0-based)', fmt(p.position!))}\n`,
        );
    } else {
      md.appendMarkdown(`- ${vscode.l10n.t('offset {0} (local: no shard manifest lists this file)', fmt(info.local))}\n`);
    }
    if (info.document !== undefined) {
      md.appendMarkdown(
        `- ${info.documentScope === 'shard' ? vscode.l10n.t("document +{0} counted from this shard's first document", fmt(info.document)) : vscode.l10n.t('document {0} (0-based)', fmt(info.document))}\n`,
      );
    }
    if (info.selection) md.appendMarkdown(`- ${vscode.l10n.t('selection: {0}', count(info.selection[1] - info.selection[0], 'token'))}\n`);
    md.appendMarkdown(`\n${vscode.l10n.t('Click to go to a token offset.')}`);
    this.item.tooltip = md;
    this.item.show();
  }

  /** Hides the item (no shard editor focused). */
  hide(): void {
    this.item.hide();
  }

  /** The text currently shown (tests). */
  get text(): string {
    return this.item.text;
  }

  dispose(): void {
    this.item.dispose();
  }
}

/**
 * Short, readable status text, the same words as the editor's cursor line:
 * `Token 55,000,123 · update 419 · seq 61 · pos 123 · doc 12,345` (update 0-based; the token
 * offset is global for dataset shards, local otherwise; `doc +n` counts from this shard's first document).
 */
export function statusText(info: ShardStatusInfo): string {
  const parts = [`$(location) ${vscode.l10n.t('Token {0}', fmt(info.global ?? info.local))}`];
  const p = info.position;
  if (info.global !== undefined && info.order) {
    const rs = info.order.reads;
    if (info.order.error) parts.push(vscode.l10n.t('no update: the run description cannot be used'));
    else if (!rs) parts.push(vscode.l10n.t('update …'));
    else if (rs.length === 0) parts.push(vscode.l10n.t('not read by the run'));
    else {
      parts.push(vscode.l10n.t('update {0}', fmt(rs[0].update)), vscode.l10n.t('sample {0}', fmt(rs[0].sample)));
      if (rs.length > 1) parts.push(vscode.l10n.t('+{0} reads', fmt(rs.length - 1)));
    }
  } else if (info.global !== undefined && p) {
    if (p.lookAhead) parts.push(PAST_LAST_UPDATE_SHORT[info.pastLastUpdate ?? 'untrained']);
    else
      parts.push(
        vscode.l10n.t('update {0}', fmt(p.update!)),
        vscode.l10n.t('seq {0}', fmt(p.sequence!)),
        vscode.l10n.t('pos {0}', fmt(p.position!)),
      );
  }
  if (info.document !== undefined)
    parts.push(
      info.documentScope === 'shard' ? vscode.l10n.t('doc +{0}', fmt(info.document)) : vscode.l10n.t('doc {0}', fmt(info.document)),
    );
  else if (info.documentPending) parts.push(vscode.l10n.t('doc …'));
  if (info.selection) parts.push(vscode.l10n.t('{0} selected', fmt(info.selection[1] - info.selection[0])));
  return parts.join(' · ');
}

function escapeMd(s: string): string {
  return markdownText(s);
}
