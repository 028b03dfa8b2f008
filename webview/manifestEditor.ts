/**
 * The manifest table webview (host side: src/editor/manifestEditor.ts; messages:
 * src/protocol/manifest.ts).
 *
 * Header: dataset totals, Verify buttons, status counts, the problems banner, and every key of
 * `manifest.json` / `verification.json`. Below it a virtualised grid: only the rows in view
 * (plus a margin) exist in the DOM, recycled on scroll, so 2,098 rows (or 100,000) scroll like
 * 20. Keyboard: the grid is one tab stop; ↑/↓/PageUp/PageDown/Home/End move the selection,
 * Enter or Space opens the selected shard; a click selects a row, a double-click opens it (as in
 * VS Code's lists). A shard with stream-index anomalies has a mark after its file name (tooltip:
 * each anomaly, its global offsets and updates); "Only problems" keeps those rows too.
 * All text goes in as text nodes (`h()`, `textContent`); layout via CSSOM properties only (CSP).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import { codiconLinkFromInline, fmt, h, vscodeApi } from './common';
import { count } from '../src/core/units';
import { connect } from './channel';
import type {
  ManifestField,
  ManifestFromWebview,
  ManifestInit,
  ManifestProtocol,
  ManifestRow,
  ManifestRowStatus,
  ManifestToWebview,
  ManifestViewState,
} from '../src/protocol/manifest';
import type { AnomalyMark } from '../src/protocol/update';

codiconLinkFromInline(); // before the first web component connects

const vscode = vscodeApi<ManifestFromWebview, ManifestViewState>();
const app = document.getElementById('app')!;

/** Row height in px (must match `.mf-row` in media/manifestEditor.css). */
const ROW_H = 24;
/** Rows rendered above and below the visible ones. */
const OVERSCAN = 12;

const STATUS_LABEL: Record<ManifestRowStatus, string> = {
  'not-checked': 'not checked',
  queued: 'queued',
  checking: 'checking…',
  ok: 'ok',
  mismatch: 'hash mismatch',
  missing: 'missing',
  'size-mismatch': 'size mismatch',
  changed: 'changed while read',
  unreadable: 'unreadable',
  'no-hash': 'no hash in manifest',
};
const STATUS_ICON: Record<ManifestRowStatus, string> = {
  'not-checked': 'circle-large-outline',
  queued: 'clock',
  checking: 'loading',
  ok: 'pass-filled',
  mismatch: 'error',
  missing: 'question',
  'size-mismatch': 'warning',
  changed: 'warning',
  unreadable: 'error',
  'no-hash': 'circle-slash',
};
/** Statuses the "Only problems" filter keeps. */
const PROBLEM: ReadonlySet<ManifestRowStatus> = new Set(['mismatch', 'missing', 'size-mismatch', 'changed', 'unreadable', 'no-hash']);
const SUMMARY_ORDER: ManifestRowStatus[] = [
  'mismatch',
  'missing',
  'size-mismatch',
  'changed',
  'unreadable',
  'no-hash',
  'ok',
  'checking',
  'queued',
  'not-checked',
];

const COLUMNS = [
  { key: 'index', label: '#', cls: 'num' },
  { key: 'file', label: 'file', cls: 'mf-file' },
  { key: 'start', label: 'start_token', cls: 'num' },
  { key: 'count', label: 'num_tokens', cls: 'num' },
  { key: 'updates', label: 'updates (0-based)', cls: 'num' },
  { key: 'size', label: 'size on disk (bytes)', cls: 'num mf-size' },
  { key: 'status', label: 'status', cls: 'mf-status' },
  { key: 'sha256', label: 'sha256', cls: 'mf-hash' },
  { key: 'checked', label: 'last checked', cls: 'mf-checked' },
  { key: 'dtype', label: 'dtype', cls: 'mf-dtype' },
  { key: 'documents', label: 'documents', cls: 'num mf-documents' },
] as const;

let data: ManifestInit | undefined;
let rows: ManifestRow[] = [];
/** Stream-index anomaly marks by row index (`ManifestAnomalies`). */
let marks = new Map<number, AnomalyMark>();
/** Indices (into `rows`) of the rows shown, after the filter. */
let view: number[] = [];
const state: ManifestViewState = vscode.getState() ?? { scrollTop: 0, selected: 0, problemsOnly: false };
let restoredScroll = false;

// ── static skeleton ──
const headEl = h('div', { class: 'mf-head' });
const gridEl = h('div', { class: 'mf-grid', role: 'grid', tabindex: 0, 'aria-label': 'Shards', 'aria-readonly': 'true' });
const headerRow = h(
  'div',
  { class: 'mf-row mf-colheads', role: 'row', 'aria-rowindex': 1 },
  ...COLUMNS.map((c) => h('div', { class: `mf-cell ${c.cls}`, role: 'columnheader' }, c.label)),
);
/** The hash column's header cell (its label is set per table: {@link hashKindLabel}). */
const hashHeader = headerRow.children[COLUMNS.findIndex((c) => c.key === 'sha256')] as HTMLElement;

/**
 * Header of the hash column of a format stream's table: the kinds of hash its files carry
 * (`sha1`, `xxh64`… from MDS `raw_data.hashes`), or that none is carried.
 */
function hashKindLabel(r: readonly ManifestRow[]): string {
  const kinds = [...new Set(r.flatMap((x) => (x.formatHash ? [x.formatHash.algorithm] : [])))];
  return kinds.length ? kinds.join(', ') : 'hash (none carried)';
}
const scroller = h('div', { class: 'mf-scroll' });
const spacer = h('div', { class: 'mf-spacer' });
const emptyEl = h('div', { class: 'mf-empty muted', hidden: true });
scroller.append(spacer, emptyEl);
gridEl.append(headerRow, scroller);
app.append(h('div', { class: 'mf' }, headEl, gridEl));

/** Hex digits of the short hash shown in the sha256 column (the full one is in its tooltip and copied). */
const SHORT_HASH = 12;

interface PooledRow {
  el: HTMLDivElement;
  cells: HTMLDivElement[];
  pathEl: HTMLSpanElement;
  /** The stream-index anomaly mark after the file name (hidden when the shard has none). */
  mark: HTMLSpanElement;
  icon: HTMLSpanElement;
  statusText: Text;
  hashText: HTMLSpanElement;
  copyBtn: HTMLButtonElement;
  /** `ManifestRow.index` shown, -1 when unused. */
  rowIndex: number;
  /** Position in `view` shown, and the data version it was filled with (skip refills when both match). */
  viewPos: number;
  version: number;
}
const pool: PooledRow[] = [];
/** Bumped whenever row data, the filter or the selection changes (forces refills). */
let version = 0;

function makeRow(): PooledRow {
  const cells = COLUMNS.map((c) => h('div', { class: `mf-cell ${c.cls}`, role: 'gridcell' }));
  // The path's end (the digits that tell shards apart) stays visible: the cell ellipsizes on the
  // left (direction: rtl), so the mark, first in the DOM, shows right after the file name.
  const mark = h('span', { class: 'mf-anomaly codicon', role: 'img', hidden: true });
  const pathEl = h('span', { class: 'mf-path', dir: 'ltr' });
  cells[1].append(mark, pathEl);
  const icon = h('span', { class: 'codicon', 'aria-hidden': 'true' });
  const statusText = document.createTextNode('');
  cells[6].append(icon, statusText);
  const hashText = h('span', { class: 'mf-hash-text mono' });
  const copyBtn = h(
    'button',
    { class: 'mf-copy', type: 'button', tabindex: -1 },
    h('span', { class: 'codicon codicon-copy', 'aria-hidden': 'true' }),
  );
  cells[7].append(hashText, copyBtn);
  const el = h('div', { class: 'mf-row', role: 'row' }, ...cells);
  const pr: PooledRow = { el, cells, pathEl, mark, icon, statusText, hashText, copyBtn, rowIndex: -1, viewPos: -1, version: -1 };
  copyBtn.addEventListener('click', (ev) => {
    ev.stopPropagation(); // copying is not opening the shard
    if (pr.rowIndex >= 0) copyHash(pr.rowIndex);
  });
  el.addEventListener('click', () => {
    if (pr.rowIndex < 0) return;
    select(view.indexOf(pr.rowIndex), false);
  });
  el.addEventListener('dblclick', () => {
    if (pr.rowIndex >= 0) open(pr.rowIndex);
  });
  spacer.append(el);
  return pr;
}

function formatTime(ms: number | null): string {
  if (ms === null) return '—';
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function fillRow(pr: PooledRow, r: ManifestRow, viewPos: number): void {
  if (pr.viewPos === viewPos && pr.version === version && pr.rowIndex === r.index) return;
  pr.viewPos = viewPos;
  pr.version = version;
  pr.rowIndex = r.index;
  pr.el.style.transform = `translateY(${viewPos * ROW_H}px)`;
  pr.el.setAttribute('aria-rowindex', String(viewPos + 2));
  pr.el.id = `row-${viewPos}`;
  pr.el.classList.toggle('selected', viewPos === state.selected);
  pr.el.setAttribute('aria-selected', String(viewPos === state.selected));
  pr.el.dataset.status = r.status;
  const c = pr.cells;
  c[0].textContent = String(r.index);
  pr.pathEl.textContent = r.shard;
  c[1].title = data?.format ? r.shard : `${r.shard} (shard_manifest.jsonl line ${r.line})`;
  // Stream-index anomalies: a mark with every anomaly (global offsets, updates) in its tooltip, as text.
  const mk = marks.get(r.index);
  pr.mark.hidden = !mk;
  if (mk) {
    pr.mark.className = `mf-anomaly codicon codicon-${mk.severity === 'error' ? 'error' : 'warning'}`;
    pr.mark.title = mk.text;
    pr.mark.setAttribute('aria-label', mk.text);
    pr.el.dataset.anomaly = mk.severity;
  } else {
    pr.mark.removeAttribute('title');
    pr.mark.removeAttribute('aria-label');
    delete pr.el.dataset.anomaly;
  }
  c[2].textContent = fmt(r.startToken);
  c[3].textContent = fmt(r.numTokens);
  c[4].textContent =
    r.firstUpdate === null ? '—' : r.firstUpdate === r.lastUpdate ? fmt(r.firstUpdate) : `${fmt(r.firstUpdate)}–${fmt(r.lastUpdate!)}`;
  c[4].title =
    r.firstUpdate === null
      ? 'no complete update starts its inputs here (look-ahead tokens only)'
      : `updates ${r.firstUpdate}–${r.lastUpdate} (0-based) read input tokens from this shard`;
  c[5].textContent = r.sizeOnDisk === null ? 'missing' : fmt(r.sizeOnDisk);
  c[5].classList.toggle('bad', r.sizeOnDisk !== r.expectedSize);
  const rule = data?.format ? `the size ${data.format.name}'s layout implies` : '4 × num_tokens';
  c[5].title =
    r.sizeOnDisk === r.expectedSize ? `${fmt(r.expectedSize)} bytes = ${rule}` : `expected ${fmt(r.expectedSize)} bytes (${rule})`;
  pr.icon.className = `codicon codicon-${STATUS_ICON[r.status]}${r.status === 'checking' ? ' codicon-modifier-spin' : ''}`;
  pr.statusText.data = ` ${STATUS_LABEL[r.status]}`;
  c[6].title = r.detail ?? STATUS_LABEL[r.status];
  const fh = r.sha256 ? null : r.formatHash;
  pr.hashText.textContent = r.sha256 ? r.sha256.slice(0, SHORT_HASH) : fh ? `${fh.algorithm} ${fh.hex.slice(0, SHORT_HASH)}` : '—';
  c[7].title = r.sha256
    ? `sha256 (shard_manifest.jsonl): ${r.sha256}\nCtrl+C or the copy button copies it`
    : fh
      ? `${fh.algorithm} (the format's index): ${fh.hex}`
      : data?.format
        ? `the format carries no hash for this file (token-shards manifest PATH hashes it for verify --manifest)`
        : 'no sha256 in the manifest line';
  pr.copyBtn.hidden = !r.sha256;
  pr.copyBtn.setAttribute('aria-label', `Copy the sha256 of ${r.shard}`);
  pr.copyBtn.title = r.sha256 ? `Copy ${r.sha256}` : '';
  c[9].textContent = r.dtype;
  c[10].textContent = r.documents === null ? '—' : fmt(r.documents);
  c[10].title =
    r.documents === null
      ? 'documents are separated by EOS here (not counted in this table)'
      : "documents starting in this file (the format's index)";
  c[8].textContent = formatTime(r.checkedAt);
  c[8].title =
    r.checkedAt === null
      ? data?.format
        ? 'not checked in this session (Verify checks each file and its sidecars)'
        : 'not checked in this workspace'
      : `checked ${formatTime(r.checkedAt)}`;
}

let renderQueued = false;
function scheduleRender(): void {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    render();
  });
}

function render(): void {
  spacer.style.height = `${view.length * ROW_H}px`;
  emptyEl.hidden = view.length > 0 || !data;
  emptyEl.textContent = rows.length === 0 ? 'The manifest lists no readable shard.' : 'No shard has a problem.';
  const top = scroller.scrollTop;
  const height = scroller.clientHeight || 600;
  const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
  const last = Math.min(view.length, Math.ceil((top + height) / ROW_H) + OVERSCAN);
  const need = last - first;
  while (pool.length < need) {
    pool.push(makeRow());
    version++;
  }
  // Row at view position p lives in slot p mod pool size: scrolling refills only the rows that
  // came into view, the others keep their DOM untouched.
  const used = new Set<number>();
  for (let p = first; p < last; p++) {
    const pr = pool[p % pool.length];
    used.add(p % pool.length);
    pr.el.hidden = false;
    fillRow(pr, rows[view[p]], p);
  }
  for (let j = 0; j < pool.length; j++) {
    const pr = pool[j];
    if (used.has(j) || pr.el.hidden) continue;
    pr.el.hidden = true;
    pr.rowIndex = -1;
    pr.viewPos = -1;
    pr.el.removeAttribute('id');
  }
  gridEl.setAttribute('aria-rowcount', String(view.length + 1));
  if (view.length) gridEl.setAttribute('aria-activedescendant', `row-${Math.min(state.selected, view.length - 1)}`);
  else gridEl.removeAttribute('aria-activedescendant');
}

let saveTimer: ReturnType<typeof setTimeout> | undefined;
/** Saves the view state, at most every 200 ms (scrolling calls it every frame). */
function saveState(): void {
  if (saveTimer) return;
  saveTimer = setTimeout(() => {
    saveTimer = undefined;
    vscode.setState(state);
  }, 200);
}

scroller.addEventListener(
  'scroll',
  () => {
    state.scrollTop = scroller.scrollTop;
    saveState();
    scheduleRender();
  },
  { passive: true },
);
new ResizeObserver(() => scheduleRender()).observe(scroller);

function select(pos: number, reveal = true): void {
  if (view.length === 0) return;
  state.selected = Math.max(0, Math.min(view.length - 1, pos));
  version++;
  saveState();
  if (reveal) {
    const y = state.selected * ROW_H;
    if (y < scroller.scrollTop) scroller.scrollTop = y;
    else if (y + ROW_H > scroller.scrollTop + scroller.clientHeight) scroller.scrollTop = y + ROW_H - scroller.clientHeight;
  }
  scheduleRender();
}

function open(index: number): void {
  post({ type: 'openShard', index });
}

/** Copies the full manifest sha256 of shard `index` (the host writes the clipboard and confirms). */
function copyHash(index: number): void {
  if (rows[index]?.sha256) post({ type: 'copyHash', index });
}

gridEl.addEventListener('keydown', (ev) => {
  const page = Math.max(1, Math.floor(scroller.clientHeight / ROW_H) - 1);
  const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
  if (ev.key in moves) select(state.selected + moves[ev.key]);
  else if (ev.key === 'Home') select(0);
  else if (ev.key === 'End') select(view.length - 1);
  else if ((ev.key === 'Enter' || ev.key === ' ') && view.length) open(view[state.selected]);
  else if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === 'c' && view.length && !window.getSelection()?.toString())
    copyHash(view[state.selected]);
  else return;
  ev.preventDefault();
});

// ── header ──
const countsEl = h('span', { class: 'mf-counts', role: 'status', 'aria-live': 'polite' });
const progressEl = h('span', { class: 'mf-progress', role: 'status', 'aria-live': 'polite', hidden: true });
const verifyBtn = h('vscode-button', { 'aria-label': 'Verify shard hashes' }, 'Verify');
const verifyAgainBtn = h(
  'vscode-button',
  { secondary: true, 'aria-label': 'Verify shard hashes again, ignoring the cache' },
  'Verify again (ignore cache)',
);
const filterBox = h('vscode-checkbox', { label: 'Only problems', 'aria-label': 'Show only shards with problems' });
verifyBtn.setAttribute('icon', 'verified');
verifyAgainBtn.setAttribute('icon', 'refresh');
verifyBtn.addEventListener('click', () => post({ type: 'verify', ignoreCache: false }));
verifyAgainBtn.addEventListener('click', () => post({ type: 'verify', ignoreCache: true }));
filterBox.addEventListener('change', () => {
  state.problemsOnly = (filterBox as unknown as { checked: boolean }).checked;
  state.selected = 0;
  saveState();
  applyFilter();
});

function applyFilter(): void {
  version++;
  view = [];
  for (let i = 0; i < rows.length; i++) if (!state.problemsOnly || PROBLEM.has(rows[i].status) || marks.has(rows[i].index)) view.push(i);
  if (state.selected >= view.length) state.selected = Math.max(0, view.length - 1);
  scheduleRender();
}

function updateCounts(): void {
  const counts = new Map<ManifestRowStatus, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  countsEl.replaceChildren(
    ...SUMMARY_ORDER.filter((s) => counts.get(s)).map((s) =>
      h(
        'span',
        { class: `mf-count`, 'data-status': s },
        h('span', { class: `codicon codicon-${STATUS_ICON[s]}`, 'aria-hidden': 'true' }),
        ` ${fmt(counts.get(s)!)} ${STATUS_LABEL[s]}`,
      ),
    ),
  );
}

function setProgress(text: string | null): void {
  progressEl.hidden = text === null;
  progressEl.replaceChildren(
    h('span', { class: 'codicon codicon-loading codicon-modifier-spin', 'aria-hidden': 'true' }),
    ` Verifying: ${text ?? ''}`,
  );
  verifyBtn.toggleAttribute('disabled', text !== null);
  verifyAgainBtn.toggleAttribute('disabled', text !== null);
}

function fieldList(fields: ManifestField[]): HTMLElement {
  return h(
    'dl',
    { class: 'mf-fields' },
    ...fields.flatMap((f) => [
      h('dt', {}, f.key),
      // Nested values arrive as JSON.stringify(v, null, 2): shown as text, line breaks and indentation kept (white-space: pre).
      h('dd', {}, f.nested ? h('pre', { class: 'mono mf-json' }, f.value) : h('span', { class: 'mf-value' }, f.value)),
    ]),
  );
}

function sideSection(title: string, fields: ManifestField[] | null, absent: string, openByDefault: boolean): HTMLElement {
  if (!fields)
    return h(
      'p',
      { class: 'mf-absent muted' },
      h('span', { class: 'codicon codicon-info', 'aria-hidden': 'true' }),
      ` ${title}: ${absent}`,
    );
  const d = h(
    'details',
    { class: 'mf-side', open: openByDefault },
    h('summary', {}, h('span', { class: 'mf-side-title' }, title), h('span', { class: 'muted' }, ` · ${count(fields.length, 'key')}`)),
    fieldList(fields),
  );
  return d;
}

function stat(label: string, value: string, note?: string): HTMLElement {
  return h(
    'div',
    { class: 'mf-stat' },
    h('div', { class: 'mf-stat-label muted' }, label),
    h('div', { class: 'mf-stat-value' }, value),
    note ? h('div', { class: 'mf-stat-note muted' }, note) : null,
  );
}

function renderHead(d: ManifestInit): void {
  const t = d.totals;
  const src = (s: string) => (s === 'default' ? 'dataset card default' : `from ${s}`);
  const totals = h(
    'div',
    { class: 'mf-stats', role: 'group', 'aria-label': 'Totals' },
    stat(d.format ? 'files' : 'shards', fmt(t.shards), d.format ? `${d.format.name} · ${d.format.dtype} · ${d.format.reason}` : undefined),
    stat('stored tokens', fmt(t.storedTokens), 'training tokens + look-ahead'),
    stat('training tokens', fmt(t.trainingTokens), 'updates × tokens per update'),
    stat('updates', fmt(t.updates), t.updates ? `0-based: 0 … ${fmt(t.updates - 1)}` : 'none complete'),
    stat(
      'tokens per update',
      fmt(t.tokensPerUpdate),
      `${count(t.sequencesPerUpdate, 'sequence')} × ${fmt(t.sequenceLength)} · ${src(t.tokensPerUpdateSource)}`,
    ),
  );
  // A stream of another format is verified file by file against the hashes it carries (MDS) or a
  // `token-shards manifest PATH` list (Verify Shard Hashes): each row's status and last-checked
  // time follow the run live, as the card's shards do; one Verify button (no cache to ignore).
  // The hash column's header names the hash kind the format carries.
  const toolbar = d.format
    ? h('div', { class: 'mf-toolbar' }, verifyBtn, filterBox, countsEl, progressEl)
    : h('div', { class: 'mf-toolbar' }, verifyBtn, verifyAgainBtn, filterBox, countsEl, progressEl);
  hashHeader.textContent = d.format ? hashKindLabel(rows) : 'sha256';
  gridEl.classList.toggle('mf-format', !!d.format);
  const problems = d.problems.length
    ? h(
        'div',
        { class: `banner ${d.problems.some((p) => p.severity === 'error') ? 'error' : ''} mf-problems`, role: 'alert' },
        h(
          'div',
          {},
          h('strong', {}, `${count(d.problems.length, 'problem')} in the dataset's metadata`),
          ' · ',
          linkButton('Show in Problems', () => post({ type: 'showProblems' })),
        ),
        h(
          'ul',
          {},
          ...d.problems
            .slice(0, 5)
            .map((p) =>
              h(
                'li',
                {},
                p.line !== null && p.file === 'shard_manifest.jsonl'
                  ? linkButton(`line ${p.line}`, () => post({ type: 'revealLine', line: p.line! }))
                  : null,
                p.line !== null && p.file === 'shard_manifest.jsonl' ? ': ' : '',
                p.message,
              ),
            ),
          d.problems.length > 5 ? h('li', { class: 'muted' }, `… and ${fmt(d.problems.length - 5)} more`) : null,
        ),
      )
    : null;
  // Collapsible part: the totals and the two metadata files (scrolls inside its own max height).
  const body = h(
    'div',
    { class: 'mf-head-body', id: 'mf-head-body' },
    totals,
    h(
      'div',
      { class: 'mf-sides' },
      ...(d.format ? [] : [sideSection('manifest.json', d.provenance, 'absent (no provenance recorded)', true)]),
      ...(d.format ? [] : [sideSection('verification.json', d.verification, 'absent (no end-to-end check recorded)', true)]),
    ),
  );
  const toggle = h(
    'button',
    { class: 'mf-head-toggle', type: 'button', 'aria-controls': 'mf-head-body' },
    h('span', { class: 'codicon', 'aria-hidden': 'true' }),
    h('span', { class: 'mf-head-toggle-label' }),
  );
  const applyCollapsed = () => {
    const collapsed = !!state.headCollapsed;
    body.hidden = collapsed;
    headEl.classList.toggle('collapsed', collapsed);
    toggle.setAttribute('aria-expanded', String(!collapsed));
    toggle.title = collapsed ? 'Show totals, manifest.json and verification.json' : 'Hide totals, manifest.json and verification.json';
    toggle.firstElementChild!.className = `codicon codicon-${collapsed ? 'chevron-right' : 'chevron-down'}`;
    toggle.lastElementChild!.textContent = collapsed ? 'details' : 'hide details';
  };
  toggle.addEventListener('click', () => {
    state.headCollapsed = !state.headCollapsed;
    applyCollapsed();
    vscode.setState(state);
    scheduleRender();
  });
  applyCollapsed();
  headEl.replaceChildren(
    h(
      'div',
      { class: 'mf-title' },
      h('span', { class: 'codicon codicon-table', 'aria-hidden': 'true' }),
      h('h1', {}, d.name),
      h('span', { class: 'muted' }, d.format ? ` · ${d.format.name} files` : ' · shard_manifest.jsonl'),
      toggle,
    ),
    toolbar,
    problems ?? '',
    body,
  );
  (filterBox as unknown as { checked: boolean }).checked = state.problemsOnly;
}

function linkButton(text: string, onClick: () => void): HTMLElement {
  const b = h('button', { class: 'mf-link', type: 'button' }, text);
  b.addEventListener('click', onClick);
  return b;
}

/** Width of an anomaly mark beside a file name: the 16 px codicon and its 3 px margins (manifestEditor.css). */
const MARK_PX = 22;
/** Names measured at most (the longest by characters): 100,000 rows need not all be measured. */
const FIT_NAMES = 256;
let measure: CanvasRenderingContext2D | null | undefined;

/**
 * Makes the file column at least as wide as the widest file name (plus its mark, when it has one),
 * so a name is cut (from the left) only when the window has no room for it, not while other
 * columns have room to give: sets `--mf-file-min` on the grid (used by the row template).
 */
function fitFileColumn(): void {
  measure ??= document.createElement('canvas').getContext('2d');
  if (!measure) return;
  measure.font = getComputedStyle(gridEl).font;
  const longest = rows
    .map((r) => ({ name: r.shard, extra: marks.has(r.index) ? MARK_PX : 0 }))
    .sort((a, b) => b.name.length + b.extra - (a.name.length + a.extra))
    .slice(0, FIT_NAMES);
  let px = 0;
  for (const n of longest) px = Math.max(px, measure.measureText(n.name).width + n.extra);
  gridEl.style.setProperty('--mf-file-min', `${Math.ceil(px) + 2}px`);
}

/** Sends an event to the host. */
function post(msg: ManifestFromWebview): void {
  channel.notify(msg);
}

function onEvent(m: ManifestToWebview): void {
  switch (m.type) {
    case 'init':
      data = m;
      rows = m.rows;
      renderHead(m);
      setProgress(m.verifying);
      updateCounts();
      fitFileColumn();
      applyFilter();
      if (!restoredScroll) {
        restoredScroll = true;
        requestAnimationFrame(() => {
          scroller.scrollTop = state.scrollTop;
          scheduleRender();
        });
      }
      break;
    case 'rowsChanged': {
      let filterChanged = false;
      for (const u of m.rows) {
        const r = rows[u.index];
        if (!r) continue;
        if (PROBLEM.has(r.status) !== PROBLEM.has(u.status)) filterChanged = true;
        Object.assign(r, u);
      }
      updateCounts();
      version++;
      if (filterChanged && state.problemsOnly) applyFilter();
      else scheduleRender();
      break;
    }
    case 'anomalies':
      marks = new Map(m.rows.map((r) => [r.index, { severity: r.severity, text: r.text }]));
      fitFileColumn();
      version++;
      if (state.problemsOnly) applyFilter();
      else scheduleRender();
      break;
    case 'verifying':
      setProgress(m.text);
      break;
    case 'loadError':
      headEl.replaceChildren(h('p', { class: 'banner error', role: 'alert' }, m.message));
      rows = [];
      applyFilter();
      break;
  }
}

const channel = connect<ManifestProtocol>(vscode, { onEvent, requests: {} });
