/**
 * DOM of the shard editor's blocks for the three views. Every piece of decoded text goes in as
 * a text node (`textContent` / `h()` children); decorations that must not become text (unknown
 * ids, labels) use CSS pseudo-elements fed by data attributes we set ourselves.
 *
 * Every token's element carries `data-o` (local offset) and `data-n` (tokens it covers).
 */
import { count, h, fmt, visibleNodes } from '../common';
import { endsWithBase } from '../../src/core/invisibles';
import { visibleText } from '../../src/core/invisibles';
import type { ShardHighlight, ShardView } from '../../src/protocol/shard';
import { Block, DocInfo, Numbering, PageData } from './model';

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
  /** Token selection made with shift+click or shift+arrows, `[start, end)` (a text selection is not painted). */
  readonly paintedSelection?: [number, number];
  /** Draw invisible characters as boxed marks (Documents and Tokens views). */
  invisibles: boolean;
  /** File names of the dataset's previous and next shards (absent at the stream's edges and for a lone shard). */
  prevShard?: string;
  nextShard?: string;
  /** Opens the next (true) or previous shard (the edge markers' buttons). */
  openNeighbour?(next: boolean): void;
}

/** Offset as shown to people: global with a dataset, else local. */
export function showOffset(ctx: ViewContext, local: number): string {
  return fmt(ctx.globalStart === undefined ? local : ctx.globalStart + local);
}

/** Classes for decorations of token `o` (cursor, selection, highlights, sequence starts). */
function decorate(el: HTMLElement, ctx: ViewContext, o: number, n: number): void {
  if (ctx.page(Math.floor(o / ctx.pageTokens))?.notTrained(o)) el.classList.add('noloss');
  if (o === ctx.cursor || (ctx.cursor > o && ctx.cursor < o + n)) el.classList.add('cur');
  const s = ctx.paintedSelection;
  if (s && o < s[1] && o + n > s[0]) el.classList.add('sel');
  for (const hl of ctx.highlights) {
    if (o < hl.end && o + n > hl.start) {
      el.classList.add('hl');
      if (o <= hl.start) el.classList.add('hl-first');
      if (o + n >= hl.end) el.classList.add('hl-last');
    }
    const b = hl.boundaries;
    if (b && o >= hl.start && o < hl.end) {
      const rel = o - b.first;
      if (rel >= 0 && rel % b.every === 0) {
        el.classList.add('seq');
        // `data-seq` names the boundary for the tooltip ("sequence 61", "sample 792"); `data-mark` is its badge ("seq 61").
        const index = b.firstIndex + rel / b.every;
        el.dataset.seq = `${b.labelPrefix}${index}`;
        el.dataset.mark = `${b.labelPrefix === 'sequence ' ? 'seq ' : b.labelPrefix}${index}`;
      } else if (rel < 0 && o === hl.start) {
        /* range starts before the first boundary */
      }
    }
  }
}

const KIND_CLASS: Record<string, string> = { s: 'sp', a: 'ad', p: 'pt', u: 'unk', t: '' };

/** Placeholder for a page not loaded yet (or that failed). */
export function renderPlaceholder(start: number, end: number, ctx: ViewContext, error?: string): HTMLElement {
  const el = h(
    'div',
    { class: `blk ph${error ? ' error' : ''}`, 'data-s': start },
    error ?? `Loading tokens ${showOffset(ctx, start)} – ${showOffset(ctx, end - 1)}…`,
  );
  return el;
}

/**
 * A block of the current view. The shard's first and last blocks come wrapped with a marker
 * saying where the text continues (previous/next shard, end of the stream or of the file).
 */
export function renderBlock(block: Block, ctx: ViewContext): HTMLElement {
  const page = ctx.page(Math.floor(block.start / ctx.pageTokens))!;
  const el =
    ctx.view === 'ids'
      ? renderRow(block, page, ctx)
      : block.kind === 'sep'
        ? renderSeparator(block, page, ctx)
        : ctx.view === 'documents'
          ? renderText(block, page, ctx)
          : renderChips(block, page, ctx);
  const head = block.start === 0 && ctx.prevShard ? startMarker(page, ctx) : undefined;
  const tail = block.end === ctx.total && ctx.total > 0 ? endMarker(page, ctx) : undefined;
  // A document of the format's index that starts without a stored delimiter before it: the
  // boundary marker goes above its first block (the ids view marks the cell instead).
  const bound =
    ctx.view !== 'ids' && block.kind === 'text' && page.isBoundary(block.start) ? renderBoundary(block.start, page, ctx) : undefined;
  if (!head && !tail && !bound) return el;
  const wrap = h('div', { class: 'edge-wrap' });
  if (head) wrap.append(head);
  if (bound) wrap.append(bound);
  wrap.append(el);
  if (tail) wrap.append(tail);
  return wrap;
}

function neighbourButton(ctx: ViewContext, next: boolean, name: string): HTMLElement {
  const b = document.createElement('vscode-button');
  b.setAttribute('secondary', '');
  b.setAttribute('icon', next ? 'arrow-right' : 'arrow-left');
  b.className = next ? 'open-next' : 'open-prev';
  b.textContent = next ? `Open ${name} →` : `← Open ${name}`;
  b.title = next ? `Open ${name} at its first token` : `Open ${name} at its last token`;
  b.addEventListener('click', (e) => {
    e.stopPropagation();
    ctx.openNeighbour?.(next);
  });
  b.addEventListener('mousedown', (e) => e.stopPropagation());
  return b;
}

/** Marker above the shard's first token of a dataset shard that has a previous shard. */
function startMarker(page: PageData, ctx: ViewContext): HTMLElement {
  const doc = ctx.numbering.docAt(0, page, ctx.page);
  const prev = ctx.prevShard!;
  let text: string;
  if (doc.start !== undefined && doc.start < 0) {
    text = `↑ Start of shard · this document began in ${prev} at global offset ${showOffset(ctx, doc.start)}${doc.startIsBound ? ' or earlier' : ''}`;
  } else if (doc.start === 0) {
    text = `↑ Start of shard · a document starts here; the previous shard is ${prev}`;
  } else {
    text = `↑ Start of shard · previous shard: ${prev}`;
  }
  const el = h(
    'div',
    { class: 'edge start', role: 'note', 'data-prev': prev },
    h('span', { class: 'edge-text' }, text),
    neighbourButton(ctx, false, prev),
  );
  return el;
}

/** Marker below the shard's last token: where the text continues (next shard), or that the stream or file ends. */
function endMarker(page: PageData, ctx: ViewContext): HTMLElement {
  const last = ctx.total - 1;
  const endsWithEos = page.isEnd(last);
  let text: string;
  if (ctx.globalStart === undefined) text = '■ End of file' + (endsWithEos ? '' : ' (the last document has no closing EOS here)');
  else if (!ctx.nextShard)
    text =
      `■ End of the stream: global offset ${showOffset(ctx, last)} is the dataset's last token` +
      (endsWithEos ? '' : ' (the last document has no closing EOS)');
  else if (endsWithEos) text = `End of shard · the next document starts in ${ctx.nextShard} at global offset ${showOffset(ctx, ctx.total)}`;
  else text = `End of shard · this document continues in ${ctx.nextShard} at global offset ${showOffset(ctx, ctx.total)} →`;
  const el = h('div', { class: `edge end${ctx.nextShard ? ' continues' : ''}`, role: 'note' }, h('span', { class: 'edge-text' }, text));
  if (ctx.nextShard) {
    el.dataset.next = ctx.nextShard;
    el.append(neighbourButton(ctx, true, ctx.nextShard));
  }
  return el;
}

/** Tooltip of the soft-break glyph in the Documents view. */
export const SOFT_BREAK_TITLE =
  'Soft break: not a newline in the data. The text continues from the line above without a break (blocks are cut for display only); copying gives the exact decoded text.';

function renderText(block: Block, page: PageData, ctx: ViewContext): HTMLElement {
  const el = h('div', { class: `blk doc${block.midLine ? ' soft' : ''}`, 'data-s': block.start });
  if (block.midLine) {
    // A soft break: the text goes on without a newline. The glyph is a CSS pseudo-element of an
    // empty element, so it is neither text nor copied, and is hidden from screen readers.
    el.append(h('span', { class: 'wrap', 'aria-hidden': 'true', title: SOFT_BREAK_TITLE }));
  }
  let o = block.start;
  // Can the text so far carry a combining mark at the start of the next token? Not at a document
  // start; a soft break continues the line before it.
  let base = !!block.midLine;
  while (o < block.end) {
    let n = page.groupSize(o);
    if (n === 0) {
      o++;
      continue;
    } // finishes the previous page's character: its text is there
    n = Math.min(n, ctx.total - o);
    const k = page.kind(o) ?? 't';
    const text = page.docText(o);
    const span = h(
      'span',
      { class: `tok tx ${KIND_CLASS[k]}`, 'data-o': o, 'data-n': n },
      ...(k === 't' || k === 'p' ? visibleNodes(text, { marks: ctx.invisibles, baseBefore: base }) : [text]),
    );
    base = k === 't' || k === 'p' ? endsWithBase(text, base) : false;
    if (k === 'u') span.dataset.id = String(page.id(o));
    decorate(span, ctx, o, n);
    el.append(span);
    o += n;
  }
  return el;
}

function renderChips(block: Block, page: PageData, ctx: ViewContext): HTMLElement {
  const el = h(
    'div',
    { class: 'blk chips', 'data-s': block.start },
    h('span', { class: 'gut', 'aria-hidden': 'true' }, showOffset(ctx, block.start)),
  );
  const body = h('span', { class: 'body' });
  for (let o = block.start; o < block.end; o++) {
    const k = page.kind(o) ?? 't';
    const piece = page.piece(o) ?? '';
    const content =
      k === 'u'
        ? [`#${page.id(o)}`]
        : k === 'p' || k === 's' || k === 'a'
          ? [piece]
          : piece === ''
            ? ['∅']
            : visibleNodes(piece, { whitespace: true, marks: ctx.invisibles });
    const chip = h('span', { class: `tok chip ${o % 2 ? 'alt' : ''} ${KIND_CLASS[k]}`, 'data-o': o, 'data-n': 1, dir: 'auto' }, ...content);
    decorate(chip, ctx, o, 1);
    body.append(chip);
  }
  el.append(body);
  return el;
}

/**
 * A document's length in words, saying that the closing EOS is counted separately:
 * `12 tokens + EOS`, or `empty (just its EOS)`. `withEos` is the length counting the closing EOS.
 */
export function lengthText(withEos: number): string {
  if (withEos <= 1) return 'empty (just its EOS)';
  return `${count(withEos - 1, 'token')} + EOS`;
}

/** `document 12` or `document +3 in this shard` (numbered from the shard's first document). */
export function documentLabel(doc: DocInfo): string {
  return doc.scope === 'shard' ? `document +${fmt(doc.number!)} in this shard` : `document ${fmt(doc.number!)}`;
}

/**
 * A document's length where the format's index gives documents: `12 tokens + EOS` when its last
 * stored token is the EOS, `12 tokens, no closing EOS` when it is another id, `12 tokens` while
 * the page holding that token is not loaded. `doc` needs `start` and `end`.
 */
export function indexLengthText(doc: DocInfo, ctx: Pick<ViewContext, 'total' | 'page' | 'pageTokens' | 'eos'>): string {
  const len = doc.end! - doc.start!;
  const last = doc.end! - 1;
  const page = last >= 0 && last < ctx.total ? ctx.page(Math.floor(last / ctx.pageTokens)) : undefined;
  if (!page) return count(len, 'token');
  return page.id(last) === ctx.eos ? lengthText(len) : `${count(len, 'token')}, no closing EOS`;
}

/**
 * Sentence for a separator or a boundary marker: the next document's number, start and length
 * as far as known. `indexed`: documents come from the format's index (their length is
 * {@link indexLengthText}), not from EOS ids (every document ends with its EOS).
 */
export function separatorLabel(doc: DocInfo, ctx: ViewContext, indexed = false): string {
  const parts: string[] = [];
  if (doc.number !== undefined) parts.push(documentLabel(doc));
  else parts.push('next document');
  if (doc.start !== undefined && doc.start >= ctx.total) {
    const streamEnds = ctx.globalStart === undefined || ctx.streamTokens === undefined || ctx.globalStart + doc.start >= ctx.streamTokens;
    if (streamEnds)
      return ctx.globalStart === undefined
        ? 'end of the file: no tokens follow'
        : `end of the stream at global offset ${showOffset(ctx, doc.start)}: no document follows`;
    parts.push(`starts in the next shard at global offset ${showOffset(ctx, doc.start)}`);
  } else if (doc.start !== undefined) {
    parts.push(`starts at ${ctx.globalStart === undefined ? 'offset' : 'global offset'} ${showOffset(ctx, doc.start)}`);
  }
  if (doc.end !== undefined && doc.start !== undefined) parts.push(indexed ? indexLengthText(doc, ctx) : lengthText(doc.end - doc.start));
  else parts.push('length: counting…');
  return parts.join(' · ');
}

/**
 * The label of the boundary marker before local `o` ({@link PageData.isBoundary}: a document of
 * the format's index starting after a token that is not the delimiter): the same sentence as a
 * separator's, for the document starting at `o`. `page` must contain `o`.
 */
export function boundaryLabel(o: number, page: PageData, ctx: ViewContext): string {
  return separatorLabel(ctx.numbering.docAt(o, page, ctx.page), ctx, true);
}

/** Tooltip of a boundary marker. */
export const BOUNDARY_TITLE =
  'Document boundary from the format’s index: no delimiter (EOS) is stored here, the previous document’s last token is the line above. Drawn between tokens; it is not text and is not copied.';

/**
 * The boundary marker before local `o`: a separator line with the next document's label and
 * provenance, between two tokens (it holds no token: no `data-o`). Text nodes only.
 */
function renderBoundary(o: number, page: PageData, ctx: ViewContext): HTMLElement {
  const label = boundaryLabel(o, page, ctx);
  const provenance = provenanceText(page.metadataAt(o));
  const el = h(
    'div',
    { class: `bound ${ctx.view}`, 'data-b': o, title: BOUNDARY_TITLE },
    h('span', { class: 'bmark', 'aria-hidden': 'true' }, 'no EOS'),
    h('span', { class: 'next' }, label),
    ...(provenance ? [h('span', { class: 'prov', title: provenance }, provenance)] : []),
  );
  el.setAttribute('role', 'separator');
  el.setAttribute('aria-label', `document boundary (no EOS stored); ${label}${provenance ? `; ${provenance}` : ''}`);
  return el;
}

/**
 * The provenance of a document as one phrase (`id 12 · src s3://… · loc 7`), from the format's
 * index (Dolma `.csv.gz`); undefined when it records none.
 */
export function provenanceText(meta: { id?: string; src?: string; loc?: string } | undefined): string | undefined {
  if (!meta) return undefined;
  const parts = (['id', 'src', 'loc'] as const).filter((k) => meta[k] !== undefined && meta[k] !== '').map((k) => `${k} ${meta[k]}`);
  return parts.length ? parts.join(' · ') : undefined;
}

function renderSeparator(block: Block, page: PageData, ctx: ViewContext): HTMLElement {
  const o = block.start;
  const doc = ctx.numbering.docAfterEos(o, page, ctx.page);
  const label = separatorLabel(doc, ctx, page.payload.documents !== undefined);
  const provenance = provenanceText(page.metadataAt(o + 1));
  const eosText = page.piece(o) ?? 'EOS';
  const el = h(
    'div',
    { class: `blk sep ${ctx.view}`, 'data-s': o },
    h('span', { class: 'tok eos sp', 'data-o': o, 'data-n': 1, title: '' }, eosText),
    h('span', { class: 'next' }, label),
    ...(provenance ? [h('span', { class: 'prov', title: provenance }, provenance)] : []),
  );
  decorate(el.firstElementChild as HTMLElement, ctx, o, 1);
  el.setAttribute('role', 'separator');
  el.setAttribute('aria-label', `${page.opensDocuments ? 'start' : 'end'} of document; ${label}${provenance ? `; ${provenance}` : ''}`);
  return el;
}

function renderRow(block: Block, page: PageData, ctx: ViewContext): HTMLElement {
  const el = h(
    'div',
    { class: 'blk row', 'data-s': block.start },
    h('span', { class: 'gut', 'aria-hidden': 'true' }, showOffset(ctx, block.start)),
  );
  const cells = h('span', { class: 'cells' });
  let preview = '';
  for (let o = block.start; o < block.end; o++) {
    const id = page.id(o);
    const k = page.kind(o);
    const cls = page.isSeparator(o) ? 'sp eos' : k ? KIND_CLASS[k] : '';
    const cell = h('span', { class: `tok idc ${cls}`, 'data-o': o, 'data-n': 1 }, String(id));
    if (page.isBoundary(o)) {
      // A document boundary without a stored delimiter: a bar before the cell, labelled.
      cell.classList.add('bnd');
      cell.dataset.bound = boundaryLabel(o, page, ctx);
    }
    decorate(cell, ctx, o, 1);
    cells.append(cell);
    if (page.hasText)
      preview += k === 'u' ? '�' : k === 's' || k === 'a' || k === 'p' ? (page.piece(o) ?? '') : visibleText(page.piece(o) ?? '');
  }
  el.append(cells);
  if (page.hasText) el.append(h('span', { class: 'pv', 'aria-hidden': 'true' }, preview));
  return el;
}
