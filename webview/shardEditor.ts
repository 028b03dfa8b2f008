/**
 * The shard editor webview: three views (Documents, Tokens, IDs) of one `.u32` shard, drawn by a
 * virtual scroller over pages the host sends on request. This entry module wires the pieces and
 * owns the host messages; each piece has one owner:
 * - shardEditor/state.ts: all state (init, view, cursor, selection, highlights, toggles);
 * - shardEditor/pageCache.ts: the pages, requests in flight, failures;
 * - shardEditor/views.ts + text.ts: the DOM of blocks and the sentences people read;
 * - shardEditor/domSelection.ts: text selection → token range, decoded text for copying;
 * - shardEditor/scroller.ts, tooltip.ts, model.ts: scrolling, the hover card, the data model.
 * Position and view are kept with `setState`; the cursor and selection are reported to the host
 * (status bar, commands). Decoded text is only ever inserted as text nodes.
 */
import { firstTextDrawn, mark } from './shardEditor/timing';
import '@vscode-elements/elements/dist/vscode-tabs/index.js';
import '@vscode-elements/elements/dist/vscode-tab-header/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-toolbar-button/index.js';
import { codiconLinkFromInline, fmt, h, vscodeApi } from './common';
import { connect } from './channel';
import type {
  ShardBanner,
  ShardEditorProtocol,
  ShardFromWebview,
  ShardHighlight,
  ShardInitToWebview,
  ShardNumberingToWebview,
  ShardPageReply,
  ShardRevealToWebview,
  ShardToWebview,
  ShardView,
  ShardWebviewState,
} from '../src/protocol/shard';
import type { PageData } from './shardEditor/model';
import { blockIndexOf } from './shardEditor/model';
import { PageCache } from './shardEditor/pageCache';
import { OVERSCAN_PX, ScrollBlock, VirtualScroller } from './shardEditor/scroller';
import { ShardState } from './shardEditor/state';
import { docHeaderText, infoText, positionText, positionTitle, tipRows } from './shardEditor/text';
import { domSelectionRange, textOf } from './shardEditor/domSelection';
import { renderBlock, renderPlaceholder, showOffset } from './shardEditor/views';
import { TokenTooltip } from './shardEditor/tooltip';

codiconLinkFromInline(); // before the first web component connects
const vscode = vscodeApi<ShardFromWebview, ShardWebviewState>();
const VIEWS: ShardView[] = ['documents', 'tokens', 'ids'];
const VIEW_LABELS: Record<ShardView, string> = { documents: 'Documents', tokens: 'Tokens', ids: 'IDs' };

function post(msg: ShardFromWebview): void {
  channel.notify(msg);
}

const cache = new PageCache({
  fetch: (generation, index, signal) => {
    mark('pageRequested');
    return channel.request('page', { generation, index }, { signal });
  },
  loaded: onPage,
  failed: () => scroller.invalidate(),
});
const st = new ShardState(cache, vscode.getState());
st.openNeighbour = (next) => post({ type: 'run', command: next ? 'openNextShard' : 'openPrevShard' });

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
function toolbarButton(icon: string, label: string, title: string, onClick: () => void, toggle = false): HTMLElement {
  const b = document.createElement('vscode-toolbar-button');
  b.setAttribute('icon', icon);
  if (toggle) b.setAttribute('toggleable', '');
  b.setAttribute('label', label);
  b.setAttribute('title', title);
  b.setAttribute('slot', 'addons');
  b.addEventListener('click', onClick);
  return b;
}
const invButton = toolbarButton(
  'whitespace',
  'Show invisible characters (toggle)',
  'Show invisible characters (zero-width, bidi controls, control characters, special spaces, variation selectors) as boxed marks; copying always gives the original characters',
  () => setInvisibles(!st.invisibles),
  true,
);
invButton.classList.add('inv-toggle');
const hlButton = toolbarButton(
  'symbol-color',
  'Highlight the update at the cursor (toggle)',
  'Highlight the update at the cursor and its sequence boundaries',
  () => post({ type: 'run', command: 'highlightUpdate' }),
  true,
);
const copyButton = toolbarButton('copy', 'Copy the ids of the selection', 'Copy the ids of the selection', () =>
  post({ type: 'run', command: 'copyIds' }),
);
tabs.append(info, invButton, hlButton, copyButton);
const toolbar = h('div', { class: 'toolbar' }, tabs);
const banners = h('div', { class: 'banners', role: 'status' });
const viewport = h('div', {
  class: 'viewport mono',
  tabindex: 0,
  role: 'document',
  'aria-label': 'Shard tokens. Arrow keys move the cursor, Page Up/Down scroll, Home/End jump.',
});
const docHeader = h('div', { class: 'doc-header', 'aria-live': 'polite' });
const bar = h('div', {
  class: 'scrollbar',
  role: 'scrollbar',
  'aria-orientation': 'vertical',
  'aria-label': 'Position in the shard',
  'aria-valuemin': 0,
  'aria-valuemax': 100,
});
const main = h('div', { class: 'main' }, viewport, bar);
const footPos = h('span', { class: 'foot-pos' });
const footNum = h('span', { class: 'foot-num muted' });
const footHl = h('span', { class: 'foot-hl' });
const footer = h('div', { class: 'footer' }, footPos, footHl, footNum);
app.append(toolbar, banners, docHeader, main, footer);
const tooltip = new TokenTooltip(document.body);

// ───────────── scroller ─────────────
function viewKey(): string {
  return (st.view === 'ids' ? `i${st.cols}` : st.view[0]) + (st.invisibles ? '' : '-');
}

const scroller = new VirtualScroller(viewport, bar, {
  total: () => st.total,
  blockAt(offset: number): ScrollBlock & { kind?: string; midLine?: boolean } {
    const p = st.pageOf(offset);
    const page = st.page(p);
    const start = p * st.pageTokens,
      end = Math.min(st.total, start + st.pageTokens);
    if (!page) {
      cache.request(p);
      return { key: `ph:${p}`, start, end };
    }
    const blocks = page.blocks(st.view, st.cols);
    const b = blocks[blockIndexOf(blocks, offset)];
    return { key: `${viewKey()}:${b.start}`, start: b.start, end: b.end, kind: b.kind, midLine: b.midLine };
  },
  render(block: ScrollBlock & { kind?: string; midLine?: boolean }): HTMLElement {
    if (block.key.startsWith('ph:')) {
      const el = renderPlaceholder(block.start, block.end, st, cache.error(st.pageOf(block.start)));
      el.style.height = `${Math.max(200, viewport.clientHeight)}px`;
      return el;
    }
    firstTextDrawn((m) => {
      post(m);
      // The first text is painted: draw the screen below it too from now on (scrolling ahead).
      scroller.overscanPx = OVERSCAN_PX;
      scroller.schedule();
    });
    return renderBlock({ start: block.start, end: block.end, kind: (block.kind ?? 'text') as 'text', midLine: block.midLine }, st);
  },
  tokenElement(blockEl: HTMLElement, offset: number): HTMLElement | undefined {
    for (const el of blockEl.querySelectorAll<HTMLElement>('.tok')) {
      const o = Number(el.dataset.o),
        n = Number(el.dataset.n || 1);
      if (offset >= o && offset < o + n) return el;
    }
    return undefined;
  },
  onLayout(first, last, topToken) {
    const P = st.pageTokens;
    const pf = Math.floor(first.start / P),
      pl = Math.floor(last.start / P);
    const needed = new Set<number>();
    for (let p = pf - 1; p <= pl + 1; p++) needed.add(p);
    cache.withdrawExcept(needed);
    // Prefetch the neighbouring pages when the view nears a page edge (not while still loading).
    if (!first.key.startsWith('ph:') && first.start - pf * P < P / 4) cache.request(pf - 1);
    if (!last.key.startsWith('ph:') && (pl + 1) * P - last.end < P / 4) cache.request(pl + 1);
    evict();
    if (!st.cursorExplicit) setCursor(Math.floor(topToken), false);
    docHeader.textContent = docHeaderText(st, Math.floor(topToken)) || '\u00a0';
    saveState();
  },
});

function evict(): void {
  cache.evict(new Set(scroller.rendered.map((r) => st.pageOf(r.block.start))));
}

// ───────────── cursor, selection, state ─────────────
let cursorTimer = 0;
/** True while a cursor report waits for the page that tells its document number. */
let cursorReportWaits = false;

/**
 * Moves the cursor to local offset `o` (clamped). `explicit`: put there by the user or the host
 * (from then on it no longer follows the top of the view). The host hears of it once the
 * cursor's page is loaded, so the status bar never shows a position without its document.
 */
function setCursor(o: number, explicit: boolean, reportNow = false): void {
  if (!st.init || st.init.numTokens === 0) return;
  o = Math.max(0, Math.min(o, st.init.numTokens - 1));
  if (explicit) st.cursorExplicit = true;
  const old = st.cursor;
  st.cursor = o;
  if (old !== o) {
    for (const el of viewport.querySelectorAll('.tok.cur')) el.classList.remove('cur');
    tokenEl(o)?.classList.add('cur');
  }
  updateFooter();
  clearTimeout(cursorTimer);
  cursorSetAt = Date.now();
  if (reportNow) reportCursor();
  else cursorTimer = window.setTimeout(reportCursor, 80);
}

/** How long a cursor report waits for the shard's document numbering before going without it (ms). */
const NUMBERING_WAIT_MS = 1500;
let cursorSetAt = 0;

/**
 * Tells the host where the cursor is, with its document: waits for the cursor's page, and (up to
 * {@link NUMBERING_WAIT_MS}) for the shard's document numbering, so the status bar does not show
 * the position first and its document a moment later.
 */
function reportCursor(): void {
  if (!st.init) return;
  if (!st.page(st.pageOf(st.cursor))) {
    cursorReportWaits = true;
    return;
  }
  const waited = Date.now() - cursorSetAt;
  if (!st.numbering.scanned && waited < NUMBERING_WAIT_MS) {
    cursorReportWaits = true;
    clearTimeout(cursorTimer);
    cursorTimer = window.setTimeout(reportCursor, NUMBERING_WAIT_MS - waited);
    return;
  }
  cursorReportWaits = false;
  const doc = st.docAt(st.cursor);
  post({
    type: 'cursor',
    offset: st.cursor,
    document: doc.number,
    documentScope: doc.scope,
    documentPending: doc.number === undefined && !st.numbering.scanned ? true : undefined,
    view: st.view,
  });
}

function tokenEl(o: number): HTMLElement | undefined {
  for (const r of scroller.rendered) {
    if (o >= r.block.start && o < r.block.end) {
      for (const el of r.el.querySelectorAll<HTMLElement>('.tok')) {
        const s = Number(el.dataset.o),
          n = Number(el.dataset.n || 1);
        if (o >= s && o < s + n) return el;
      }
    }
  }
  return undefined;
}

/** Sets the selection reported to the host; `paint`: a token selection the views draw (else a text selection). */
function setSelection(range: [number, number] | undefined, paint: boolean): void {
  const repaint = paint || st.selectionPainted;
  st.selection = range;
  st.selectionPainted = paint && range !== undefined;
  post({ type: 'selection', range });
  if (repaint) scroller.refresh();
}

let saveTimer = 0;
function saveState(): void {
  if (!st.init) return;
  clearTimeout(saveTimer);
  saveTimer = window.setTimeout(() => {
    vscode.setState({
      view: st.preferredView,
      top: scroller.top,
      px: scroller.px,
      cursor: st.cursor,
      sizeBytes: st.init!.sizeBytes,
      invisibles: st.invisibles,
    });
  }, 150);
}

function updateFooter(): void {
  footPos.textContent = st.init && st.init.numTokens > 0 ? `Cursor: ${positionText(st, st.cursor)}` : '';
  footPos.title = positionTitle(st);
}

function updateNumberingFooter(m: ShardNumberingToWebview | undefined): void {
  footNum.replaceChildren();
  if (!m) return;
  if (m.progress) footNum.append(m.progress);
  else if (m.state === 'shard') footNum.append("Document numbers count from this shard's first document (+n).");
  if (m.canCountEarlier) {
    const b = document.createElement('vscode-button');
    b.setAttribute('secondary', '');
    b.textContent = 'Count documents in earlier shards';
    b.addEventListener('click', () => post({ type: 'run', command: 'countEarlierDocuments' }));
    footNum.append(' ', b);
  }
  footNum.title = footNum.textContent ?? '';
}

/** Highlights named in the footer; the rest are counted (all are in its tooltip). */
const HL_NAMED = 3;

function setHighlights(list: ShardHighlight[]): void {
  st.highlights = list;
  hlButton.toggleAttribute(
    'checked',
    list.some((x) => x.boundaries),
  );
  // An update of a run's order is many ranges (one per sample's piece): name the first few.
  const names = list.map((x) => x.label ?? `tokens ${showOffset(st, x.start)}–${showOffset(st, x.end - 1)}`);
  const distinct = [...new Set(names)];
  const atCursor = distinct.find((x) => x.endsWith('at the cursor'));
  const shown = [...new Set([atCursor ?? distinct[0], ...distinct])].slice(0, HL_NAMED);
  footHl.textContent = list.length
    ? `Highlighted: ${shown.join('; ')}${distinct.length > shown.length ? `; +${fmt(distinct.length - shown.length)} more` : ''}`
    : '';
  footHl.title = [
    list.length ? `Highlighted: ${distinct.join('; ')}` : '',
    list.some((x) => x.boundaries) ? 'A bar marks the first token of each sequence.' : '',
  ]
    .filter(Boolean)
    .join('\n');
  scroller.refresh();
}

/** Turns the invisible-character marks on or off (kept with the view state). */
function setInvisibles(on: boolean): void {
  st.invisibles = on;
  invButton.toggleAttribute('checked', on);
  document.body.classList.toggle('show-invisibles', on);
  keepCursorInPlace(() => scroller.invalidate());
  saveState();
}

/**
 * Runs `change` (a view switch, a toggle that re-renders) and keeps the cursor token at the same
 * height: when it was on screen it stays at the same pixel row; a reveal still waiting for its page
 * stays pending; else the top token stays on top.
 */
function keepCursorInPlace(change: () => void): void {
  const y = scroller.tokenY(st.cursor);
  const top = scroller.topToken;
  const pending = scroller.pendingReveal; // a reveal whose page is still on its way stays wanted
  change();
  if (y !== undefined) scroller.reveal(st.cursor, y);
  else if (pending) scroller.reveal(pending.offset, pending.where);
  else scroller.jumpTo(top);
}

// ───────────── views ─────────────
function setView(v: ShardView, remember = true): void {
  if (remember) st.preferredView = v;
  const eff = st.effectiveView();
  tabs.selectedIndex = VIEWS.indexOf(eff);
  for (const th of tabs.querySelectorAll<HTMLElement>('vscode-tab-header')) {
    const disabled = !!st.init && !st.init.tokenizer && th.dataset.view !== 'ids';
    th.toggleAttribute('aria-disabled', disabled);
    th.title = disabled ? 'Needs a tokenizer' : '';
  }
  if (st.view !== eff) {
    keepCursorInPlace(() => {
      // The body's view attribute changes the old view's layout too (padding): set it after measuring.
      document.body.dataset.view = eff;
      st.view = eff;
      computeCols();
      scroller.invalidate();
    });
    tooltip.hide();
  }
  document.body.dataset.view = eff;
  saveState();
}

tabs.addEventListener('vsc-tabs-select', (e) => {
  const v = VIEWS[(e as CustomEvent<{ selectedIndex: number }>).detail.selectedIndex];
  if (st.init && !st.init.tokenizer && v !== 'ids') {
    setView('ids', false);
    return;
  }
  setView(v);
  viewport.focus();
});

/** IDs per row: the largest of 32/16/8/4 that fits the width. */
function computeCols(): void {
  const probe = h('span', { class: 'mono probe' }, '0000000000');
  document.body.append(probe);
  const ch = probe.getBoundingClientRect().width / 10 || 8;
  probe.remove();
  const digits = Math.max(6, String(st.maxIdSeen).length) + 1;
  document.body.style.setProperty('--id-cell', `${digits}ch`);
  const gut = (st.globalStart !== undefined ? 16 : 12) * ch;
  const width = viewport.clientWidth - 24;
  let c = 4;
  for (const n of [8, 16, 32]) if (gut + n * digits * ch + Math.min(16, n) * ch <= width) c = n;
  if (c !== st.cols) {
    st.cols = c;
    if (st.view === 'ids') scroller.invalidate();
  }
}
new ResizeObserver(() => computeCols()).observe(viewport);

// ───────────── banners ─────────────
function showBanners(list: ShardBanner[]): void {
  banners.replaceChildren(
    ...list.map((b) => {
      const el = h(
        'div',
        { class: `banner ${b.severity}`, 'data-banner': b.id },
        h('span', {
          class: `codicon codicon-${b.severity === 'error' ? 'error' : b.severity === 'warning' ? 'warning' : 'info'}`,
          'aria-hidden': 'true',
        }),
        ' ',
        b.message,
      );
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
    }),
  );
}

// ───────────── messages ─────────────
/** A page arrived (the cache stored it). */
function onPage(_page: PageData, m: ShardPageReply): void {
  if (!st.init) return;
  mark('pageArrived');
  for (const id of m.ids) if (id > st.maxIdSeen) st.maxIdSeen = id;
  if (
    st.view === 'ids' &&
    String(st.maxIdSeen).length + 1 > Number(getComputedStyle(document.body).getPropertyValue('--id-cell').replace('ch', '') || 7)
  )
    computeCols();
  const affected = scroller.rendered.some((r) => r.block.key === `ph:${m.index}`);
  if (affected) scroller.invalidate();
  else scroller.refresh((m.index - 1) * st.pageTokens, m.index * st.pageTokens); // separators of the previous page learn lengths
  evict();
  updateFooter();
  if (cursorReportWaits && st.pageOf(st.cursor) === m.index) reportCursor();
}

/** Events from the host (the channel routes them here). */
function onEvent(m: ShardToWebview): void {
  switch (m.type) {
    case 'init':
      onInit(m);
      break;
    case 'numbering': {
      if (!st.init || m.generation !== st.init.generation) return;
      const before = st.docAt(st.cursor).number;
      st.numbering.update(m);
      updateNumberingFooter(m);
      if (m.state !== 'scanning') scroller.refresh();
      updateFooter();
      if (cursorReportWaits || st.docAt(st.cursor).number !== before) reportCursor();
      break;
    }
    case 'reveal':
      applyReveal(m);
      break;
    case 'highlights':
      setHighlights(m.highlights);
      break;
    case 'setView':
      setView(m.view);
      break;
    case 'order':
      st.runOrder = m.run;
      updateFooter();
      break;
  }
}

/** Puts the cursor on a revealed offset and scrolls there (a `reveal` event, or the one `init` carries). */
function applyReveal(m: Omit<ShardRevealToWebview, 'type'>): void {
  if (m.highlights) setHighlights(m.highlights);
  setSelection(undefined, true);
  setCursor(m.offset, true, true);
  scroller.reveal(m.offset, m.align ?? 'third');
  scroller.refresh();
  focusViewport();
}

/**
 * Gives the viewport the keyboard focus: now when this page has the focus, else once it gets it.
 * Never takes the focus from the workbench (a reveal landing while the user already typed into a
 * quick input must not close it).
 */
function focusViewport(): void {
  if (document.hasFocus()) viewport.focus();
  else window.addEventListener('focus', () => viewport.focus(), { once: true });
}

function onInit(m: ShardInitToWebview): void {
  mark('init');
  const first = !st.init;
  const sameFile = st.init && st.init.sizeBytes === m.sizeBytes;
  st.setInit(m);
  st.runOrder = m.run; // under a run's order, never the card's update, not even before the first `order` event
  cache.reset(m.generation, st.pageCount, m.eosId);
  if (m.page) cache.put(m.page);
  info.textContent = infoText(m);
  info.title = infoText(m);
  hlButton.toggleAttribute('disabled', m.globalStart === undefined);
  invButton.toggleAttribute('checked', st.invisibles);
  invButton.toggleAttribute('disabled', !m.tokenizer);
  document.body.classList.toggle('show-invisibles', st.invisibles);
  showBanners(m.banners);
  updateNumberingFooter(undefined);
  document.body.classList.toggle('dataset', m.globalStart !== undefined);
  st.view = st.effectiveView();
  setView(st.preferredView, false);
  computeCols();
  scroller.invalidate();
  const saved = st.saved;
  if (m.reveal) {
    // Opened to go somewhere: start there (the saved position is moot).
    st.restored = true;
    applyReveal(m.reveal);
  } else if (first && !st.restored && saved && saved.sizeBytes === m.sizeBytes) {
    st.restored = true;
    st.cursor = Math.min(saved.cursor, Math.max(0, m.numTokens - 1));
    scroller.top = Math.min(saved.top, Math.max(0, m.numTokens - 1));
    scroller.px = saved.px;
    st.cursorExplicit = true;
  } else if (!first && !sameFile) {
    scroller.jumpTo(Math.min(scroller.top, Math.max(0, m.numTokens - 1)));
  }
  viewport.classList.toggle('empty', m.numTokens === 0);
  scroller.schedule();
  updateFooter();
}

// ───────────── input ─────────────
viewport.addEventListener('mouseover', (e) => {
  const el = (e.target as HTMLElement).closest?.('.tok') as HTMLElement | null;
  if (!el || !viewport.contains(el)) return;
  tooltip.showSoon(el, () => tipRows(st, Number(el.dataset.o), Number(el.dataset.n || 1), el.dataset.seq));
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
    const a = Math.min(st.cursor, o),
      b = Math.max(st.cursor, o) + Number(el.dataset.n || 1);
    setSelection([a, b], true);
    return;
  }
  if (st.selection) setSelection(undefined, false);
  setCursor(o, true);
});

document.addEventListener('selectionchange', () => {
  const range = domSelectionRange(viewport);
  if (!range) {
    const s = document.getSelection();
    if ((!s || s.isCollapsed) && st.selection && !st.selectionPainted) setSelection(undefined, false); // a text selection went away
    return;
  }
  if (!st.selection || st.selection[0] !== range[0] || st.selection[1] !== range[1]) setSelection(range, false);
});

document.addEventListener('copy', (e) => {
  const range = domSelectionRange(viewport) ?? st.selection;
  if (!range) return;
  const text = textOf(st, range[0], range[1]);
  e.preventDefault();
  if (text !== undefined && range[1] - range[0] <= 1_000_000) e.clipboardData?.setData('text/plain', text);
  else post({ type: 'run', command: 'copyText' });
});

viewport.addEventListener('keydown', (e) => {
  const H = viewport.clientHeight;
  let handled = true;
  switch (e.key) {
    case 'ArrowDown':
      scroller.scrollBy(20);
      break;
    case 'ArrowUp':
      scroller.scrollBy(-20);
      break;
    case 'PageDown':
      scroller.scrollBy(Math.max(40, H - 40));
      break;
    case 'PageUp':
      scroller.scrollBy(-Math.max(40, H - 40));
      break;
    case 'Home':
      scroller.jumpTo(0);
      setCursor(0, true);
      break;
    case 'End':
      scroller.scrollToEnd();
      setCursor(st.total - 1, true);
      break;
    case 'ArrowRight':
    case 'ArrowLeft': {
      const d = e.key === 'ArrowRight' ? 1 : -1;
      const from = st.cursor;
      setCursor(st.cursor + d, true);
      if (e.shiftKey) {
        const sel = st.selection;
        const anchor = sel ? (sel[0] === from ? sel[1] - 1 : sel[0]) : from;
        setSelection([Math.min(anchor, st.cursor), Math.max(anchor, st.cursor) + 1], true);
      }
      scroller.reveal(st.cursor, 'ifHidden');
      break;
    }
    case 'Escape':
      tooltip.hide();
      if (st.selectionPainted) setSelection(undefined, true);
      break;
    case '1':
    case '2':
    case '3':
      if (!e.ctrlKey && !e.metaKey && !e.altKey) setView(VIEWS[Number(e.key) - 1]);
      else handled = false;
      break;
    default:
      handled = false;
  }
  if (handled) {
    e.preventDefault();
    tooltip.hide();
  }
});

mark('ready');
const channel = connect<ShardEditorProtocol>(vscode, { onEvent, requests: {} });
