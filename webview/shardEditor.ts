/**
 * The shard editor webview: three views (Documents, Tokens, IDs) of one `.u32` shard, drawn by a
 * virtual scroller over pages the host sends on request (a bounded number are cached here).
 * Position and view are kept with `setState`; the cursor and selection are reported to the host
 * (status bar, commands). Decoded text is only ever inserted as text nodes.
 */
import '@vscode-elements/elements/dist/vscode-tabs/index.js';
import '@vscode-elements/elements/dist/vscode-tab-header/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-toolbar-button/index.js';
import { fmt, h, vscodeApi } from './common';
import { connect } from './channel';
import type {
  ShardBanner, ShardEditorProtocol, ShardFromWebview, ShardHighlight, ShardInitToWebview, ShardNumberingToWebview, ShardPageReply,
  ShardToWebview, ShardView, ShardWebviewState,
} from '../src/protocol';
import type { ChannelError } from '../src/shared/channel';
import { Schedule } from '../src/core/schedule';
import { PageData, blockIndexOf, Numbering } from './shardEditor/model';
import { ScrollBlock, VirtualScroller } from './shardEditor/scroller';
import { renderBlock, renderPlaceholder, showOffset, ViewContext } from './shardEditor/views';
import { TipRow, TokenTooltip } from './shardEditor/tooltip';

const vscode = vscodeApi<ShardFromWebview, ShardWebviewState>();
const VIEWS: ShardView[] = ['documents', 'tokens', 'ids'];
const VIEW_LABELS: Record<ShardView, string> = { documents: 'Documents', tokens: 'Tokens', ids: 'IDs' };
/** Pages kept in memory here (each up to 32,768 tokens). */
const MAX_PAGES = 12;

// ───────────── state ─────────────
let init: ShardInitToWebview | undefined;
let schedule: Schedule | undefined;
const saved = vscode.getState();
let preferredView: ShardView = saved?.view ?? 'documents';
let restored = false;
const pages = new Map<number, PageData>();
/** Page requests in flight, by page index (abort = withdraw the request). */
const pending = new Map<number, AbortController>();
const pageErrors = new Map<number, string>();
let numbering = new Numbering(32768, 0);
let highlights: ShardHighlight[] = [];
let cursor = 0;
let cursorExplicit = false;
let selection: [number, number] | undefined;
let cols = 16;

const ctx: ViewContext = {
  view: preferredView, cols, total: 0, pageTokens: 32768, eos: 100257,
  page: (i) => pageAt(i), numbering, highlights, cursor, selection: undefined,
  openNeighbour: (next) => post({ type: 'run', command: next ? 'openNextShard' : 'openPrevShard' }),
};

// ───────────── DOM ─────────────
const app = document.getElementById('app')!;
const tabs = document.createElement('vscode-tabs');
tabs.setAttribute('aria-label', 'Shard views');
for (const v of VIEWS) {
  const th = document.createElement('vscode-tab-header');
  th.setAttribute('slot', 'header');
  th.dataset.view = v;
  th.textContent = VIEW_LABELS[v];
  tabs.append(th);
}
const info = h('span', { class: 'info muted', slot: 'addons' });
const hlButton = document.createElement('vscode-toolbar-button');
hlButton.setAttribute('icon', 'symbol-color');
hlButton.setAttribute('toggleable', '');
hlButton.setAttribute('label', 'Highlight the update at the cursor (toggle)');
hlButton.setAttribute('title', 'Highlight the update at the cursor and its sequence boundaries');
hlButton.setAttribute('slot', 'addons');
hlButton.addEventListener('click', () => post({ type: 'run', command: 'highlightUpdate' }));
const copyButton = document.createElement('vscode-toolbar-button');
copyButton.setAttribute('icon', 'copy');
copyButton.setAttribute('label', 'Copy the ids of the selection');
copyButton.setAttribute('title', 'Copy the ids of the selection');
copyButton.setAttribute('slot', 'addons');
copyButton.addEventListener('click', () => post({ type: 'run', command: 'copyIds' }));
tabs.append(info, hlButton, copyButton);
const toolbar = h('div', { class: 'toolbar' }, tabs);
const banners = h('div', { class: 'banners', role: 'status' });
const viewport = h('div', { class: 'viewport mono', tabindex: 0, role: 'document', 'aria-label': 'Shard tokens. Arrow keys move the cursor, Page Up/Down scroll, Home/End jump.' });
const docHeader = h('div', { class: 'doc-header', 'aria-live': 'polite' });
const bar = h('div', { class: 'scrollbar', role: 'scrollbar', 'aria-orientation': 'vertical', 'aria-label': 'Position in the shard', 'aria-valuemin': 0, 'aria-valuemax': 100 });
const main = h('div', { class: 'main' }, viewport, bar);
const footPos = h('span', { class: 'foot-pos' });
const footNum = h('span', { class: 'foot-num muted' });
const footHl = h('span', { class: 'foot-hl' });
const footer = h('div', { class: 'footer' }, footPos, footHl, footNum);
app.append(toolbar, banners, docHeader, main, footer);
const tooltip = new TokenTooltip(document.body);

// ───────────── pages ─────────────
function post(msg: ShardFromWebview): void {
  channel.notify(msg);
}

function pageAt(i: number): PageData | undefined {
  const p = pages.get(i);
  if (p) { pages.delete(i); pages.set(i, p); }
  return p;
}

function pageCount(): number {
  return init ? Math.ceil(init.numTokens / init.pageTokens) : 0;
}

function request(i: number): void {
  if (!init || i < 0 || i >= pageCount() || pages.has(i) || pending.has(i) || pageErrors.has(i)) return;
  const ac = new AbortController();
  pending.set(i, ac);
  const generation = init.generation;
  channel.request('page', { generation, index: i }, { signal: ac.signal })
    .then(onPage, (err: ChannelError) => { if (!err.cancelled) onPageError(generation, i, err.message); });
}

function evict(): void {
  const keep = new Set(scroller.rendered.map((r) => Math.floor(r.block.start / ctx.pageTokens)));
  for (const k of pages.keys()) {
    if (pages.size <= MAX_PAGES) break;
    if (!keep.has(k)) pages.delete(k);
  }
}

function viewKey(): string {
  return ctx.view === 'ids' ? `i${cols}` : ctx.view[0];
}

const scroller = new VirtualScroller(viewport, bar, {
  total: () => ctx.total,
  blockAt(offset: number): ScrollBlock & { kind?: string; midLine?: boolean } {
    const p = Math.floor(offset / ctx.pageTokens);
    const page = pageAt(p);
    const start = p * ctx.pageTokens, end = Math.min(ctx.total, start + ctx.pageTokens);
    if (!page) { request(p); return { key: `ph:${p}`, start, end }; }
    const blocks = page.blocks(ctx.view, cols);
    const b = blocks[blockIndexOf(blocks, offset)];
    return { key: `${viewKey()}:${b.start}`, start: b.start, end: b.end, kind: b.kind, midLine: b.midLine };
  },
  render(block: ScrollBlock & { kind?: string; midLine?: boolean }): HTMLElement {
    if (block.key.startsWith('ph:')) {
      const el = renderPlaceholder(block.start, block.end, ctx, pageErrors.get(Math.floor(block.start / ctx.pageTokens)));
      el.style.height = `${Math.max(200, viewport.clientHeight)}px`;
      return el;
    }
    return renderBlock({ start: block.start, end: block.end, kind: (block.kind ?? 'text') as 'text', midLine: block.midLine }, ctx);
  },
  tokenElement(blockEl: HTMLElement, offset: number): HTMLElement | undefined {
    for (const el of blockEl.querySelectorAll<HTMLElement>('.tok')) {
      const o = Number(el.dataset.o), n = Number(el.dataset.n || 1);
      if (offset >= o && offset < o + n) return el;
    }
    return undefined;
  },
  onLayout(first, last, topToken) {
    const P = ctx.pageTokens;
    const pf = Math.floor(first.start / P), pl = Math.floor(last.start / P);
    // Requests for pages the view no longer shows are withdrawn (a drag of the scrollbar passes many).
    const needed = new Set<number>();
    for (let p = pf - 1; p <= pl + 1; p++) needed.add(p);
    for (const [p, ac] of [...pending]) {
      if (!needed.has(p)) { ac.abort(); pending.delete(p); }
    }
    // Prefetch the neighbouring pages when the view nears a page edge (not while still loading).
    if (!first.key.startsWith('ph:') && first.start - pf * P < P / 4) request(pf - 1);
    if (!last.key.startsWith('ph:') && (pl + 1) * P - last.end < P / 4) request(pl + 1);
    evict();
    if (!cursorExplicit) setCursor(Math.floor(topToken), false);
    updateDocHeader(Math.floor(topToken));
    saveState();
  },
});

// ───────────── cursor, selection, state ─────────────
let cursorTimer = 0;
function setCursor(o: number, explicit: boolean): void {
  if (!init || init.numTokens === 0) return;
  o = Math.max(0, Math.min(o, init.numTokens - 1));
  if (explicit) cursorExplicit = true;
  const old = cursor;
  cursor = ctx.cursor = o;
  if (old !== o) {
    for (const el of viewport.querySelectorAll('.tok.cur')) el.classList.remove('cur');
    const el = tokenEl(o);
    el?.classList.add('cur');
  }
  updateFooter();
  clearTimeout(cursorTimer);
  cursorTimer = window.setTimeout(() => postCursor(), 80);
}

function tokenEl(o: number): HTMLElement | undefined {
  for (const r of scroller.rendered) {
    if (o >= r.block.start && o < r.block.end) {
      for (const el of r.el.querySelectorAll<HTMLElement>('.tok')) {
        const s = Number(el.dataset.o), n = Number(el.dataset.n || 1);
        if (o >= s && o < s + n) return el;
      }
    }
  }
  return undefined;
}

function setSelection(range: [number, number] | undefined, paint: boolean): void {
  selection = range;
  ctx.selection = paint ? range : undefined;
  post({ type: 'selection', range });
  if (paint) scroller.refresh();
}

let saveTimer = 0;
function saveState(): void {
  if (!init) return;
  clearTimeout(saveTimer);
  saveTimer = window.setTimeout(() => {
    vscode.setState({ view: preferredView, top: scroller.top, px: scroller.px, cursor, sizeBytes: init!.sizeBytes });
  }, 150);
}

function docInfoAt(o: number) {
  return numbering.docAt(o, pageAt(Math.floor(o / ctx.pageTokens)), pageAt);
}

// ───────────── text for people ─────────────
function positionText(o: number): string {
  if (!init) return '';
  const parts: string[] = [];
  if (init.globalStart !== undefined) {
    const g = init.globalStart + o;
    parts.push(`Token ${fmt(g)} (shard offset ${fmt(o)})`);
    const pos = schedule?.position(g);
    if (pos?.lookAhead) parts.push('look-ahead token (after the last update)');
    else if (pos) parts.push(`update ${fmt(pos.update!)} · seq ${fmt(pos.sequence!)} · pos ${fmt(pos.position!)}`);
  } else {
    parts.push(`Token ${fmt(o)}`);
  }
  const doc = docInfoAt(o);
  if (doc.number !== undefined) parts.push(doc.scope === 'shard' ? `doc +${fmt(doc.number)} in this shard` : `doc ${fmt(doc.number)}`);
  return parts.join(' · ');
}

/** The cursor's offset and document as last told to the host (its status bar). */
let postedCursor = '';

/** Tells the host the cursor's offset and document (the status bar shows what the footer shows). */
function postCursor(): void {
  const doc = docInfoAt(cursor);
  postedCursor = `${cursor}:${doc.number}:${doc.scope}`;
  post({ type: 'cursor', offset: cursor, document: doc.number, documentScope: doc.scope, view: ctx.view });
}

function updateFooter(): void {
  footPos.textContent = init && init.numTokens > 0 ? `Cursor: ${positionText(cursor)}` : '';
  // One source of truth: when the cursor's document number becomes known or changes after the
  // cursor message went out (its page or the numbering arrived later), tell the host again, so
  // the status bar and this cursor line never disagree.
  if (init && init.numTokens > 0 && postedCursor.startsWith(`${cursor}:`)) {
    const doc = docInfoAt(cursor);
    if (postedCursor !== `${cursor}:${doc.number}:${doc.scope}`) postCursor();
  }
  footPos.title = init?.globalStart !== undefined
    ? 'Token: global token offset in the dataset stream. update: optimizer step, 0-based. seq: sequence within the update, 0-based. pos: position within the sequence, 0-based. doc: document number (EOS count before the token).'
    : 'Token: offset in this file (no shard manifest lists it).';
}

function updateDocHeader(top: number): void {
  if (!init || init.numTokens === 0 || !pageAt(Math.floor(top / ctx.pageTokens))) { docHeader.textContent = '\u00a0'; return; }
  const doc = docInfoAt(top);
  const where = init.globalStart === undefined ? 'offset' : 'global offset';
  const parts: string[] = [];
  parts.push(doc.number !== undefined ? (doc.scope === 'shard' ? `Top: document +${fmt(doc.number)} in this shard` : `Top: document ${fmt(doc.number)}`) : 'Top: document');
  if (doc.start === undefined) parts.push(`starts before ${where} ${showOffset(ctx, top)} (finding its start…)`);
  else if (doc.startIsBound) parts.push(`starts before global offset ${showOffset(ctx, doc.start)} (beyond the scan limit)`);
  else if (doc.start === top) parts.push(`starts at ${where} ${showOffset(ctx, doc.start)}`);
  else if (doc.start < 0) parts.push(`began in the previous shard at global offset ${showOffset(ctx, doc.start)} (${fmt(top - doc.start)} tokens above)`);
  else parts.push(`began at ${where} ${showOffset(ctx, doc.start)} (${fmt(top - doc.start)} tokens above)`);
  if (doc.end !== undefined && doc.start !== undefined && !doc.startIsBound) parts.push(`${fmt(doc.end - doc.start)} tokens`);
  docHeader.textContent = parts.join(' · ');
}

function updateNumberingFooter(m: ShardNumberingToWebview | undefined): void {
  footNum.replaceChildren();
  if (!m) return;
  if (m.progress) footNum.append(m.progress);
  else if (m.state === 'shard') footNum.append('Document numbers count from this shard\'s first document (+n).');
  if (m.canCountEarlier) {
    const b = document.createElement('vscode-button');
    b.setAttribute('secondary', '');
    b.textContent = 'Count documents in earlier shards';
    b.addEventListener('click', () => post({ type: 'run', command: 'countEarlierDocuments' }));
    footNum.append(' ', b);
  }
}

function setHighlights(list: ShardHighlight[]): void {
  highlights = ctx.highlights = list;
  hlButton.toggleAttribute('checked', list.some((x) => x.boundaries));
  footHl.textContent = list.length ? `Highlighted: ${list.map((x) => x.label ?? `tokens ${showOffset(ctx, x.start)}–${showOffset(ctx, x.end - 1)}`).join('; ')}` : '';
  footHl.title = list.some((x) => x.boundaries) ? 'A bar marks the first token of each sequence.' : '';
  scroller.refresh();
}

/** Hex pairs in lines of 8 bytes (long tokens such as `<|endoftext|>` wrap instead of overflowing). */
function wrapHex(hex: string): string {
  const pairs = hex.split(' ').filter(Boolean);
  const lines: string[] = [];
  for (let i = 0; i < pairs.length; i += 8) lines.push(pairs.slice(i, i + 8).join(' '));
  return lines.join('\n');
}

function tipRows(el: HTMLElement): TipRow[] {
  const o = Number(el.dataset.o), n = Number(el.dataset.n || 1);
  const page = pageAt(Math.floor(o / ctx.pageTokens));
  if (!page || !init) return [];
  const rows: TipRow[] = [];
  for (let t = o; t < o + Math.min(n, 4); t++) {
    const id = page.id(t);
    const k = page.kind(t);
    const kind = k === 's' ? ' (special)' : k === 'a' ? ' (added token)' : k === 'p' ? ' (part of a UTF-8 character)' : k === 'u' ? ` (unknown: ≥ vocabulary size ${fmt(init.tokenizer?.vocabSize ?? 0)})` : '';
    rows.push(['id', `${id}${kind}`]);
    if (k !== undefined && k !== 'u') {
      rows.push(['piece', JSON.stringify(page.piece(t))]);
      rows.push(['bytes', wrapHex(page.hexOf(t)) || '—']);
    }
  }
  if (n > 4) rows.push(['', `… ${n - 4} more tokens in this character`]);
  if (n > 1) rows.push(['decodes to', JSON.stringify(page.docText(o))]);
  if (init.globalStart !== undefined) rows.push(['global offset', fmt(init.globalStart + o)]);
  rows.push([init.globalStart !== undefined ? 'shard offset' : 'offset', fmt(o)]);
  if (schedule && init.globalStart !== undefined) {
    const pos = schedule.position(init.globalStart + o);
    if (pos.lookAhead) rows.push(['update', 'none: look-ahead token after the last update']);
    else {
      rows.push(['update', `${fmt(pos.update!)} (0-based)`]);
      rows.push(['sequence', fmt(pos.sequence!)]);
      rows.push(['position', fmt(pos.position!)]);
    }
  }
  const doc = docInfoAt(o);
  if (doc.number !== undefined) rows.push(['document', doc.scope === 'shard' ? `+${fmt(doc.number)} in this shard` : fmt(doc.number)]);
  if (el.dataset.seq) rows.push(['', `sequence ${el.dataset.seq} starts here`]);
  for (const hl of highlights) if (o >= hl.start && o < hl.end && hl.label) rows.push(['highlight', hl.label]);
  return rows;
}

// ───────────── views ─────────────
function effectiveView(): ShardView {
  return init && !init.tokenizer ? 'ids' : preferredView;
}

function setView(v: ShardView, remember = true): void {
  if (remember) preferredView = v;
  const eff = effectiveView();
  tabs.selectedIndex = VIEWS.indexOf(eff);
  for (const th of tabs.querySelectorAll<HTMLElement>('vscode-tab-header')) {
    const disabled = !!init && !init.tokenizer && th.dataset.view !== 'ids';
    th.toggleAttribute('aria-disabled', disabled);
    th.title = disabled ? 'Needs a tokenizer' : '';
  }
  document.body.dataset.view = eff;
  if (ctx.view !== eff) {
    const top = scroller.topToken;
    ctx.view = eff;
    computeCols();
    scroller.invalidate();
    scroller.jumpTo(top);
    tooltip.hide();
  }
  saveState();
}

tabs.addEventListener('vsc-tabs-select', (e) => {
  const v = VIEWS[(e as CustomEvent<{ selectedIndex: number }>).detail.selectedIndex];
  if (init && !init.tokenizer && v !== 'ids') { setView('ids', false); return; }
  setView(v);
  viewport.focus();
});

/** IDs per row: the largest of 32/16/8/4 that fits the width. */
function computeCols(): void {
  const probe = h('span', { class: 'mono probe' }, '0000000000');
  document.body.append(probe);
  const ch = probe.getBoundingClientRect().width / 10 || 8;
  probe.remove();
  const digits = Math.max(6, String(maxIdSeen).length) + 1;
  document.body.style.setProperty('--id-cell', `${digits}ch`);
  const gut = (init?.globalStart !== undefined ? 16 : 12) * ch;
  const width = viewport.clientWidth - 24;
  let c = 4;
  for (const n of [8, 16, 32]) if (gut + n * digits * ch + Math.min(16, n) * ch <= width) c = n;
  if (c !== cols) { cols = ctx.cols = c; if (ctx.view === 'ids') scroller.invalidate(); }
}
let maxIdSeen = 0;
new ResizeObserver(() => computeCols()).observe(viewport);

// ───────────── banners ─────────────
function showBanners(list: ShardBanner[]): void {
  banners.replaceChildren(...list.map((b) => {
    const el = h('div', { class: `banner ${b.severity}`, 'data-banner': b.id }, h('span', { class: `codicon codicon-${b.severity === 'error' ? 'error' : b.severity === 'warning' ? 'warning' : 'info'}`, 'aria-hidden': 'true' }), ' ', b.message);
    if (b.action === 'chooseTokenizer') {
      const btn = document.createElement('vscode-button');
      btn.textContent = 'Choose tokenizer…';
      btn.setAttribute('icon', 'folder-opened');
      btn.addEventListener('click', () => post({ type: 'run', command: 'chooseTokenizer' }));
      el.append(' ', btn);
    }
    for (const place of b.places ?? []) {
      const btn = document.createElement('vscode-button');
      btn.textContent = place.label;
      btn.setAttribute('secondary', '');
      btn.addEventListener('click', () => {
        setSelection(undefined, true);
        setCursor(place.offset, true);
        scroller.reveal(place.offset, 'top');
        scroller.refresh();
        viewport.focus();
      });
      el.append(' ', btn);
    }
    return el;
  }));
}

// ───────────── messages ─────────────
function onPage(m: ShardPageReply): void {
  if (!init || m.generation !== init.generation) return;
  pending.delete(m.index);
  const page = new PageData(m, init.eosId);
  for (const id of m.ids) if (id > maxIdSeen) maxIdSeen = id;
  pages.set(m.index, page);
  if (ctx.view === 'ids' && String(maxIdSeen).length + 1 > Number(getComputedStyle(document.body).getPropertyValue('--id-cell').replace('ch', '') || 7)) computeCols();
  const affected = scroller.rendered.some((r) => r.block.key === `ph:${m.index}`);
  if (affected) scroller.invalidate();
  else scroller.refresh((m.index - 1) * ctx.pageTokens, m.index * ctx.pageTokens); // separators of the previous page learn lengths
  evict();
  updateFooter();
}

function onPageError(generation: number, index: number, message: string): void {
  if (!init || generation !== init.generation) return;
  pending.delete(index);
  pageErrors.set(index, message);
  scroller.invalidate();
}

function onEvent(m: ShardToWebview): void {
  switch (m.type) {
    case 'init': onInit(m); break;
    case 'numbering': {
      if (!init || m.generation !== init.generation) return;
      numbering.update(m);
      updateNumberingFooter(m);
      if (m.state !== 'scanning') scroller.refresh();
      updateFooter();
      break;
    }
    case 'reveal': {
      if (m.highlights) setHighlights(m.highlights);
      setSelection(undefined, true);
      setCursor(m.offset, true);
      scroller.reveal(m.offset, m.align ?? 'third');
      scroller.refresh();
      viewport.focus();
      break;
    }
    case 'highlights': setHighlights(m.highlights); break;
    case 'setView': setView(m.view); break;
  }
}

function onInit(m: ShardInitToWebview): void {
  const first = !init;
  const sameFile = init && init.sizeBytes === m.sizeBytes;
  init = m;
  pages.clear(); pending.clear(); pageErrors.clear();
  ctx.total = m.numTokens;
  ctx.pageTokens = m.pageTokens;
  ctx.eos = m.eosId;
  ctx.globalStart = m.globalStart;
  ctx.streamTokens = m.schedule?.storedTokens;
  ctx.prevShard = m.prevShard;
  ctx.nextShard = m.nextShard;
  numbering = ctx.numbering = new Numbering(m.pageTokens, m.globalStart ?? 0);
  schedule = m.schedule ? new Schedule({ globalTokensPerUpdate: m.schedule.globalTokensPerUpdate, sequenceLength: m.schedule.sequenceLength, eosTokenId: m.schedule.eosTokenId }, m.schedule.storedTokens) : undefined;
  info.textContent = infoText(m);
  info.title = infoText(m);
  hlButton.toggleAttribute('disabled', m.globalStart === undefined);
  showBanners(m.banners);
  updateNumberingFooter(undefined);
  document.body.classList.toggle('dataset', m.globalStart !== undefined);
  ctx.view = effectiveView();
  setView(preferredView, false);
  computeCols();
  scroller.invalidate();
  if (first && !restored && saved && saved.sizeBytes === m.sizeBytes) {
    restored = true;
    cursor = ctx.cursor = Math.min(saved.cursor, Math.max(0, m.numTokens - 1));
    scroller.top = Math.min(saved.top, Math.max(0, m.numTokens - 1));
    scroller.px = saved.px;
    cursorExplicit = true;
  } else if (!first && !sameFile) {
    scroller.jumpTo(Math.min(scroller.top, Math.max(0, m.numTokens - 1)));
  }
  viewport.classList.toggle('empty', m.numTokens === 0);
  scroller.schedule();
  updateFooter();
}

function infoText(m: ShardInitToWebview): string {
  const parts = [m.fileName, `${fmt(m.numTokens)} tokens`];
  if (m.globalStart !== undefined && m.numTokens > 0) parts.push(`global ${fmt(m.globalStart)} – ${fmt(m.globalStart + m.numTokens - 1)}`);
  if (m.datasetName) parts.push(`dataset ${m.datasetName}`);
  else parts.push('no manifest: local offsets');
  if (m.tokenizer) parts.push(m.tokenizer.name);
  return parts.join(' · ');
}

// ───────────── input ─────────────
viewport.addEventListener('mouseover', (e) => {
  const el = (e.target as HTMLElement).closest?.('.tok') as HTMLElement | null;
  if (!el || !viewport.contains(el)) return;
  tooltip.showSoon(el, () => tipRows(el));
});
viewport.addEventListener('mouseout', (e) => {
  const to = e.relatedTarget as HTMLElement | null;
  if (to && tooltip.anchor && (to === tooltip.anchor || tooltip.anchor.contains(to))) return;
  tooltip.hide();
});
viewport.addEventListener('wheel', () => tooltip.hide(), { passive: true });

viewport.addEventListener('mousedown', (e) => {
  const el = (e.target as HTMLElement).closest?.('.tok') as HTMLElement | null;
  if (!el) return;
  const o = Number(el.dataset.o);
  if (e.shiftKey) {
    e.preventDefault();
    const a = Math.min(cursor, o), b = Math.max(cursor, o) + Number(el.dataset.n || 1);
    setSelection([a, b], true);
    return;
  }
  if (ctx.selection) { ctx.selection = undefined; scroller.refresh(); }
  if (selection) setSelection(undefined, false);
  setCursor(o, true);
});

document.addEventListener('selectionchange', () => {
  const s = document.getSelection();
  if (!s || s.isCollapsed || !s.anchorNode || !s.focusNode) {
    if (selection && !ctx.selection) setSelection(undefined, false); // a text selection went away
    return;
  }
  const a = tokOf(s.anchorNode), f = tokOf(s.focusNode);
  if (!a || !f) return;
  const ao = Number(a.dataset.o), fo = Number(f.dataset.o);
  const range: [number, number] = [Math.min(ao, fo), Math.max(ao + Number(a.dataset.n || 1), fo + Number(f.dataset.n || 1))];
  if (!selection || selection[0] !== range[0] || selection[1] !== range[1]) setSelection(range, false);
});

function tokOf(n: Node): HTMLElement | undefined {
  const el = (n.nodeType === Node.ELEMENT_NODE ? n as HTMLElement : n.parentElement)?.closest?.('.tok') as HTMLElement | null;
  return el && viewport.contains(el) ? el : undefined;
}

/** Decoded text of local tokens `[s, e)` from cached pages, or undefined if a page is missing. */
function textOf(s: number, e: number): string | undefined {
  let out = '';
  for (let o = s; o < e; o++) {
    const p = pageAt(Math.floor(o / ctx.pageTokens));
    if (!p) return undefined;
    out += p.hasText ? p.docText(o) : (o > s ? ' ' : '') + p.id(o);
  }
  return out;
}

document.addEventListener('copy', (e) => {
  const s = document.getSelection();
  let range = selection;
  if (s && !s.isCollapsed) {
    const a = s.anchorNode && tokOf(s.anchorNode), f = s.focusNode && tokOf(s.focusNode);
    if (a && f) {
      const ao = Number(a.dataset.o), fo = Number(f.dataset.o);
      range = [Math.min(ao, fo), Math.max(ao + Number(a.dataset.n || 1), fo + Number(f.dataset.n || 1))];
    }
  }
  if (!range) return;
  const text = textOf(range[0], range[1]);
  e.preventDefault();
  if (text !== undefined && range[1] - range[0] <= 1_000_000) e.clipboardData?.setData('text/plain', text);
  else post({ type: 'run', command: 'copyText' });
});

viewport.addEventListener('keydown', (e) => {
  const H = viewport.clientHeight;
  let handled = true;
  switch (e.key) {
    case 'ArrowDown': scroller.scrollBy(20); break;
    case 'ArrowUp': scroller.scrollBy(-20); break;
    case 'PageDown': scroller.scrollBy(Math.max(40, H - 40)); break;
    case 'PageUp': scroller.scrollBy(-Math.max(40, H - 40)); break;
    case 'Home': scroller.jumpTo(0); setCursor(0, true); break;
    case 'End': scroller.scrollToEnd(); setCursor(ctx.total - 1, true); break;
    case 'ArrowRight': case 'ArrowLeft': {
      const d = e.key === 'ArrowRight' ? 1 : -1;
      const from = cursor;
      setCursor(cursor + d, true);
      if (e.shiftKey) {
        const anchor = selection ? (selection[0] === from ? selection[1] - 1 : selection[0]) : from;
        setSelection([Math.min(anchor, cursor), Math.max(anchor, cursor) + 1], true);
      }
      scroller.reveal(cursor, 'ifHidden');
      break;
    }
    case 'Escape': tooltip.hide(); if (ctx.selection) setSelection(undefined, true); break;
    case '1': case '2': case '3': if (!e.ctrlKey && !e.metaKey && !e.altKey) setView(VIEWS[Number(e.key) - 1]); else handled = false; break;
    default: handled = false;
  }
  if (handled) { e.preventDefault(); tooltip.hide(); }
});

const channel = connect<ShardEditorProtocol>(vscode, { onEvent, requests: {} });
