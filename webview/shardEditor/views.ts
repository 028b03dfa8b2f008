/**
 * DOM of the shard editor's blocks for the three views. Every piece of decoded text goes in as
 * a text node (`textContent` / `h()` children); decorations that must not become text (unknown
 * ids, labels) use CSS pseudo-elements fed by data attributes we set ourselves.
 *
 * Every token's element carries `data-o` (local offset) and `data-n` (tokens it covers).
 */
import { h, fmt } from '../common';
import type { ShardHighlight, ShardView } from '../../src/protocol';
import { Block, DocInfo, Numbering, PageData, visibleWhitespace } from './model';

/** What block rendering needs to know. */
export interface ViewContext {
  view: ShardView;
  cols: number;
  total: number;
  pageTokens: number;
  eos: number;
  /** Global offset of local 0, or undefined for a lone shard. */
  globalStart?: number;
  /** Tokens in the whole stream (dataset shards), to tell "next shard" from "end of the stream". */
  streamTokens?: number;
  page(index: number): PageData | undefined;
  numbering: Numbering;
  highlights: ShardHighlight[];
  cursor: number;
  /** Token selection made with shift+click or shift+arrows, `[start, end)`. */
  selection?: [number, number];
}

/** Offset as shown to people: global with a dataset, else local. */
export function showOffset(ctx: ViewContext, local: number): string {
  return fmt(ctx.globalStart === undefined ? local : ctx.globalStart + local);
}

/** Classes for decorations of token `o` (cursor, selection, highlights, sequence starts). */
function decorate(el: HTMLElement, ctx: ViewContext, o: number, n: number): void {
  if (o === ctx.cursor || (ctx.cursor > o && ctx.cursor < o + n)) el.classList.add('cur');
  const s = ctx.selection;
  if (s && o < s[1] && o + n > s[0]) el.classList.add('sel');
  for (const hl of ctx.highlights) {
    if (o < hl.end && o + n > hl.start) el.classList.add('hl');
    const b = hl.boundaries;
    if (b && o >= hl.start && o < hl.end) {
      const rel = o - b.first;
      if (rel >= 0 && rel % b.every === 0) { el.classList.add('seq'); el.dataset.seq = String(b.firstIndex + rel / b.every); }
      else if (rel < 0 && o === hl.start) { /* range starts before the first boundary */ }
    }
  }
}

const KIND_CLASS: Record<string, string> = { s: 'sp', a: 'ad', p: 'pt', u: 'unk', t: '' };

/** Placeholder for a page not loaded yet (or that failed). */
export function renderPlaceholder(start: number, end: number, ctx: ViewContext, error?: string): HTMLElement {
  const el = h('div', { class: `blk ph${error ? ' error' : ''}`, 'data-s': start },
    error ?? `Loading tokens ${showOffset(ctx, start)} – ${showOffset(ctx, end - 1)}…`);
  return el;
}

/** A block of the current view. */
export function renderBlock(block: Block, ctx: ViewContext): HTMLElement {
  const page = ctx.page(Math.floor(block.start / ctx.pageTokens))!;
  if (ctx.view === 'ids') return renderRow(block, page, ctx);
  if (block.kind === 'sep') return renderSeparator(block, page, ctx);
  return ctx.view === 'documents' ? renderText(block, page, ctx) : renderChips(block, page, ctx);
}

function renderText(block: Block, page: PageData, ctx: ViewContext): HTMLElement {
  const first = page.hasText ? page.docText(block.start) : '';
  const el = h('div', { class: `blk doc${block.midLine && first.startsWith(' ') ? ' hang' : ''}`, 'data-s': block.start });
  let o = block.start;
  while (o < block.end) {
    let n = page.groupSize(o);
    if (n === 0) { o++; continue; } // finishes the previous page's character: its text is there
    n = Math.min(n, ctx.total - o);
    const k = page.kind(o) ?? 't';
    const span = h('span', { class: `tok tx ${KIND_CLASS[k]}`, 'data-o': o, 'data-n': n }, page.docText(o));
    if (k === 'u') span.dataset.id = String(page.id(o));
    decorate(span, ctx, o, n);
    el.append(span);
    o += n;
  }
  return el;
}

function renderChips(block: Block, page: PageData, ctx: ViewContext): HTMLElement {
  const el = h('div', { class: 'blk chips', 'data-s': block.start }, h('span', { class: 'gut', 'aria-hidden': 'true' }, showOffset(ctx, block.start)));
  const body = h('span', { class: 'body' });
  for (let o = block.start; o < block.end; o++) {
    const k = page.kind(o) ?? 't';
    const text = k === 'u' ? `#${page.id(o)}` : k === 'p' ? page.piece(o)! : visibleWhitespace(page.piece(o) ?? '');
    const chip = h('span', { class: `tok chip ${o % 2 ? 'alt' : ''} ${KIND_CLASS[k]}`, 'data-o': o, 'data-n': 1 }, text || '∅');
    decorate(chip, ctx, o, 1);
    body.append(chip);
  }
  el.append(body);
  return el;
}

/** Sentence for a separator: the next document's number, start and length as far as known. */
export function separatorLabel(doc: DocInfo, ctx: ViewContext): string {
  const parts: string[] = [];
  if (doc.number !== undefined) parts.push(doc.scope === 'shard' ? `document +${fmt(doc.number)} in this shard` : `document ${fmt(doc.number)}`);
  else parts.push('next document');
  if (doc.start !== undefined && doc.start >= ctx.total) {
    const streamEnds = ctx.globalStart === undefined || ctx.streamTokens === undefined || ctx.globalStart + doc.start >= ctx.streamTokens;
    if (streamEnds) return ctx.globalStart === undefined ? 'end of the file: no tokens follow' : `end of the stream at global offset ${showOffset(ctx, doc.start)}: no document follows`;
    parts.push(`starts in the next shard at global offset ${showOffset(ctx, doc.start)}`);
  } else if (doc.start !== undefined) {
    parts.push(`starts at ${ctx.globalStart === undefined ? 'offset' : 'global offset'} ${showOffset(ctx, doc.start)}`);
  }
  if (doc.end !== undefined && doc.start !== undefined) parts.push(`${fmt(doc.end - doc.start)} tokens`);
  else parts.push('length: counting…');
  return parts.join(' · ');
}

function renderSeparator(block: Block, page: PageData, ctx: ViewContext): HTMLElement {
  const o = block.start;
  const doc = ctx.numbering.docAfterEos(o, page, ctx.page);
  const label = separatorLabel(doc, ctx);
  const eosText = page.piece(o) ?? 'EOS';
  const el = h('div', { class: `blk sep ${ctx.view}`, 'data-s': o },
    h('span', { class: 'tok eos sp', 'data-o': o, 'data-n': 1, title: '' }, eosText),
    h('span', { class: 'next' }, label));
  decorate(el.firstElementChild as HTMLElement, ctx, o, 1);
  el.setAttribute('role', 'separator');
  el.setAttribute('aria-label', `end of document; ${label}`);
  return el;
}

function renderRow(block: Block, page: PageData, ctx: ViewContext): HTMLElement {
  const el = h('div', { class: 'blk row', 'data-s': block.start }, h('span', { class: 'gut', 'aria-hidden': 'true' }, showOffset(ctx, block.start)));
  const cells = h('span', { class: 'cells' });
  let preview = '';
  for (let o = block.start; o < block.end; o++) {
    const id = page.id(o);
    const k = page.kind(o);
    const cls = id === ctx.eos ? 'sp eos' : k ? KIND_CLASS[k] : '';
    const cell = h('span', { class: `tok idc ${cls}`, 'data-o': o, 'data-n': 1 }, String(id));
    decorate(cell, ctx, o, 1);
    cells.append(cell);
    if (page.hasText) preview += k === 'u' ? '�' : visibleWhitespace(page.piece(o) ?? '');
  }
  el.append(cells);
  if (page.hasText) el.append(h('span', { class: 'pv', 'aria-hidden': 'true' }, preview));
  return el;
}
