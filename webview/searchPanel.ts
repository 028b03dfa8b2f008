/**
 * The search panel (browser side): the form (terms, whole word, ignore case, token ids, bucket
 * size), the chart of occurrences per bucket (webview/shared/chart.ts; per million training
 * tokens by default, raw counts on a switch) filled in while the scan runs, progress with rate
 * and time left, Cancel, exports, and the occurrences of the selected term and bucket in a
 * virtualized list loaded on demand (`occurrences` requests). Every piece of decoded text is
 * inserted as text.
 *
 * Many terms: "Terms from file…" fills the form from a terms file (the host reads it with the
 * CLI's parser); the Heatmap view (webview/shared/heatmap.ts) shows terms × buckets coloured by
 * each term's share of the bucket's occurrences, rows by total or by peak bucket; a cell opens
 * the same occurrence list as the chart.
 *
 * Keyboard: the chart is one tab stop (←/→ buckets, ↑/↓ term, Enter selects); the heatmap is one
 * tab stop (arrows move the cell, Enter lists it); the occurrence list is one tab stop (↑/↓, Page
 * Up/Down, Home/End; Enter opens the occurrence in the shard editor).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import { count, formatDuration, formatRate } from '../src/core/units';
import { codiconLinkFromInline, fmt, h, visibleNodes } from './common';
import { Chart } from './shared/chart';
import { Heatmap, heatmapCsv } from './shared/heatmap';
import { heatmapModel } from '../src/core/search/heatmap';
import { topTerms } from '../src/core/search/share';
import { RequestCancelled, panelChannel } from './shared/panel';
import type {
  CountResult,
  OccurrenceRow,
  SearchDatasetInfo,
  SearchForm,
  SearchPanelState,
  SearchPanelProtocol,
} from '../src/protocol/search';

codiconLinkFromInline(); // before the first web component connects

const ch = panelChannel<SearchPanelProtocol, SearchPanelState>();

type Field = HTMLElement & { value: string };
type Box = HTMLElement & { checked: boolean };
type Btn = HTMLElement & { disabled: boolean };

let dataset: SearchDatasetInfo | undefined;
let searchId: number | null = null;
let terms: string[] = [];
let result: CountResult | undefined;
let final = false;
let perMillion = ch.state?.perMillion ?? true;
let selBucket: number | null = null;
let selTerm = 0;
let view: 'curves' | 'heatmap' = ch.state?.view ?? 'curves';
let order: 'total' | 'peak' = ch.state?.order ?? 'total';

// ───────────── static page ─────────────
const app = document.getElementById('app')!;
const termsField = h('vscode-textfield', {
  class: 'terms',
  placeholder: 'Terms, separated by commas (e.g. whale, Ahab)',
  'aria-label': 'Search terms, separated by commas',
}) as Field;
const wordBox = h('vscode-checkbox', { title: 'Whole word: no letter, digit or _ just before or after' }, 'Whole word') as Box;
const caseBox = h('vscode-checkbox', { title: 'Ignore case (Unicode simple case folding)' }, 'Ignore case') as Box;
const idsBox = h('vscode-checkbox', { title: 'Terms are token ids: terms separated by ";", ids by commas' }, 'Token ids') as Box;
const searchBtn = h('vscode-button', { icon: 'search', title: 'Search the whole stream' }, 'Search') as Btn;
const FILE_TIP = 'Fill the terms from a file: one term per line, UTF-8, # comments (up to 10,000)';
const fileBtn = h('vscode-button', { secondary: true, icon: 'file', title: FILE_TIP }, 'Terms from file…') as Btn;
const cancelBtn = h(
  'vscode-button',
  { secondary: true, icon: 'debug-stop', title: 'Stop the scan (nothing is cached)', hidden: true },
  'Cancel',
) as Btn;
const progressBar = h('vscode-progress-bar', { class: 'progress', 'aria-label': 'Scanning', hidden: true });
const statusEl = h('div', { class: 'status muted', role: 'status', 'aria-live': 'polite' });
const errorBox = h('p', { class: 'banner error', role: 'alert', hidden: true });
const rawBox = h('vscode-checkbox', { title: 'Show raw counts instead of occurrences per million training tokens' }, 'Raw counts') as Box;
const perField = h('vscode-textfield', { class: 'per', size: 7, 'aria-label': 'Updates per bucket (empty: automatic)' }) as Field;
const perBtn = h(
  'vscode-button',
  { secondary: true, title: 'Apply the bucket size (a multiple of the current one needs no new scan)' },
  'Apply',
) as Btn;
const csvBtn = h('vscode-button', { secondary: true, icon: 'export', title: 'Save the series as CSV' }, 'CSV') as Btn;
const jsonBtn = h(
  'vscode-button',
  { secondary: true, icon: 'json', title: "Save the counts as JSON (the CLI's count --json shape)" },
  'JSON',
) as Btn;
const pngBtn = h('vscode-button', { secondary: true, icon: 'device-camera', title: 'Save the chart or heatmap as PNG' }, 'PNG') as Btn;
const heatBox = h(
  'vscode-checkbox',
  { class: 'heat-toggle', title: "Terms × buckets, coloured by each term's share of the bucket's occurrences" },
  'Heatmap',
) as Box;
const peakBox = h(
  'vscode-checkbox',
  { class: 'peak-toggle', title: 'Heatmap rows by the bucket where each term peaks (else by total occurrences)' },
  'Sort by peak',
) as Box;
const totalsEl = h('div', { class: 'totals' });
const chartHost = h('div', { class: 'chart-host' });
const heatHost = h('div', { class: 'heatmap-host', hidden: true });
const emptyEl = h(
  'p',
  { class: 'muted empty' },
  'Type terms above and press Enter: the chart shows how often each occurs per bucket of updates, filling in while the stream is scanned.',
);
const listHead = h('h2', { id: 'occ-head', class: 'occ-head' });
const listNote = h('div', { class: 'muted occ-note' });
const updateBtns = h('div', { class: 'occ-updates' });
const listEl = h('div', { class: 'occ-list', role: 'listbox', tabindex: 0, 'aria-labelledby': 'occ-head' });
const listInner = h('div', { class: 'occ-inner' });
listEl.append(listInner);
const listSection = h('section', { class: 'occ', hidden: true }, listHead, updateBtns, listNote, listEl);

app.append(
  h('div', { class: 'search-form', role: 'search' }, termsField, wordBox, caseBox, idsBox, searchBtn, fileBtn, cancelBtn),
  progressBar,
  statusEl,
  errorBox,
  h(
    'div',
    { class: 'chart-toolbar', role: 'toolbar', 'aria-label': 'Chart options and exports' },
    rawBox,
    heatBox,
    peakBox,
    h('label', { class: 'per-label' }, 'Updates per bucket ', perField),
    perBtn,
    h('span', { class: 'spacer' }),
    h('span', { class: 'exports', role: 'group', 'aria-label': 'Export' }, csvBtn, jsonBtn, pngBtn),
  ),
  emptyEl,
  chartHost,
  heatHost,
  totalsEl,
  listSection,
);

/** The y axis label: what the curve's values are (rates per million tokens, or raw counts). */
const yLabel = () => (perMillion ? 'occurrences per million tokens' : 'occurrences (raw counts)');

const chart = new Chart({
  title: 'Occurrences per bucket',
  xLabel: 'update (0-based)',
  yLabel: yLabel(),
  yFromZero: true,
  height: 300,
  formatY: (v) => (perMillion ? fmtRate(v) : fmt(v)),
  bucketLabel: (i) => bucketName(i),
  onSelect: (i, s) => selectBucket(i, s),
});
chartHost.append(chart.element);
const heatmap = new Heatmap((bucket, term) => selectBucket(bucket, term));
heatHost.append(heatmap.element);

function fmtRate(v: number): string {
  if (v === 0) return '0';
  return v >= 100 ? fmt(Math.round(v)) : v.toLocaleString('en-US', { maximumSignificantDigits: 3 });
}

function bucketName(i: number): string {
  const b = result?.buckets[i];
  if (!b) return `bucket ${i}`;
  const range = b.first_update === b.last_update ? `update ${fmt(b.first_update)}` : `updates ${fmt(b.first_update)}–${fmt(b.last_update)}`;
  return `${range} · ${count(b.tokens, 'token')}`;
}

// ───────────── form ─────────────
function readForm(): SearchForm {
  const raw = perField.value.trim().replace(/[_,\s]/g, '');
  const per = raw === '' || raw.toLowerCase() === 'auto' ? null : Number(raw);
  return { text: termsField.value, word: wordBox.checked, ignoreCase: caseBox.checked, ids: idsBox.checked, per };
}

function fillForm(f: SearchForm): void {
  termsField.value = f.text;
  wordBox.checked = f.word;
  caseBox.checked = f.ignoreCase;
  idsBox.checked = f.ids;
  perField.value = f.per === null ? '' : String(f.per);
}

function run(): void {
  const form = readForm();
  if (!form.text.trim()) {
    showError('Type at least one term.');
    termsField.focus();
    return;
  }
  if (form.per !== null && !(Number.isSafeInteger(form.per) && form.per >= 1)) {
    showError('Updates per bucket must be a whole number ≥ 1 (or empty for automatic).');
    return;
  }
  ch.post({ type: 'run', form });
}

searchBtn.addEventListener('click', run);
termsField.addEventListener('keydown', (e) => {
  if ((e as KeyboardEvent).key === 'Enter') {
    e.preventDefault();
    run();
  }
});
perField.addEventListener('keydown', (e) => {
  if ((e as KeyboardEvent).key === 'Enter') {
    e.preventDefault();
    run();
  }
});
perBtn.addEventListener('click', run);
cancelBtn.addEventListener('click', () => ch.post({ type: 'cancel' }));
idsBox.addEventListener('change', () => {
  termsField.setAttribute(
    'placeholder',
    idsBox.checked
      ? 'Token ids: terms separated by ";", ids by commas (e.g. 791,4062; 100257)'
      : 'Terms, separated by commas (e.g. whale, Ahab)',
  );
  if (idsBox.checked) {
    wordBox.checked = false;
    caseBox.checked = false;
  }
});
rawBox.checked = !perMillion;
rawBox.addEventListener('change', () => {
  perMillion = !rawBox.checked;
  ch.setState({ perMillion });
  chart.setYLabel(yLabel());
  draw();
});
csvBtn.addEventListener('click', () => {
  if (!result) return;
  if (view === 'heatmap')
    ch.exportFile({
      format: 'csv',
      fileName: `${exportName()}-heatmap.csv`,
      data: heatmapCsv(
        heatData(result),
        result.buckets.map((b) => b.first_update),
      ),
    });
  else ch.exportFile({ format: 'csv', fileName: `${exportName()}.csv`, data: toCsv(result) });
});
fileBtn.addEventListener('click', () => ch.post({ type: 'pickTermsFile', form: readForm() }));
heatBox.checked = view === 'heatmap';
peakBox.checked = order === 'peak';
peakBox.hidden = view !== 'heatmap';
heatBox.addEventListener('change', () => {
  view = heatBox.checked ? 'heatmap' : 'curves';
  ch.setState({ view });
  draw();
});
peakBox.addEventListener('change', () => {
  order = peakBox.checked ? 'peak' : 'total';
  ch.setState({ order });
  draw();
});
jsonBtn.addEventListener('click', () => {
  if (result) ch.exportFile({ format: 'json', fileName: `${exportName()}.json`, data: JSON.stringify(result, null, 2) + '\n' });
});
pngBtn.addEventListener('click', () => {
  if (result)
    ch.exportFile({
      format: 'png',
      fileName: `${exportName()}${view === 'heatmap' ? '-heatmap' : ''}.png`,
      data: view === 'heatmap' ? heatmap.toPng() : chart.toPng(),
    });
});

function exportName(): string {
  return `search-${dataset?.name ?? 'dataset'}-${terms.join('_').slice(0, 60)}`;
}

/** CSV: one row per bucket: first_update, last_update, tokens, then each term's count, then each term's rate per million tokens. */
function toCsv(r: CountResult): string {
  const cell = (v: unknown) => {
    const s = String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const head = ['first_update', 'last_update', 'tokens', ...r.terms.map((t) => `count: ${t}`), ...r.terms.map((t) => `per million: ${t}`)];
  const lines = [head.map(cell).join(',')];
  for (const b of r.buckets) {
    lines.push(
      [b.first_update, b.last_update, b.tokens, ...b.counts, ...b.counts.map((c) => (b.tokens ? (c * 1e6) / b.tokens : ''))]
        .map(cell)
        .join(','),
    );
  }
  return lines.join('\r\n') + '\r\n';
}

function setBusy(busy: boolean): void {
  progressBar.hidden = !busy;
  cancelBtn.hidden = !busy;
  cancelBtn.disabled = false;
  for (const b of [csvBtn, jsonBtn, pngBtn]) b.disabled = busy || !result;
}

function showError(message: string): void {
  errorBox.textContent = message;
  errorBox.hidden = false;
}

// ───────────── chart ─────────────
/** The heatmap of a result: each term's share of the bucket's occurrences of all terms (`heatmapModel`). */
function heatData(r: CountResult) {
  return {
    model: heatmapModel(r, order),
    terms: r.terms,
    totals: r.totals,
    bucketLabel: (i: number) => bucketName(i),
    formatValue: (v: number) => `${(v * 100).toFixed(1)}% of all terms' occurrences`,
  };
}

function draw(): void {
  const r = result;
  if (!r) return;
  emptyEl.hidden = true;
  chartHost.hidden = view === 'heatmap';
  heatHost.hidden = view !== 'heatmap';
  peakBox.hidden = view !== 'heatmap';
  // Only the view shown is drawn (with 1,000 terms the curves are 1,000 series): switching views redraws.
  if (view === 'heatmap') heatmap.setData(heatData(r));
  else {
    const series = r.terms.map((t, k) => ({
      label: t,
      values: r.buckets.map((b) => (perMillion ? (b.tokens ? (b.counts[k] * 1e6) / b.tokens : null) : b.counts[k])),
    }));
    chart.setData({ x: r.buckets.map((b) => b.first_update), series });
    chart.setSelected(selBucket);
  }
  totalsEl.replaceChildren(
    ...r.terms.map((t, k) => h('span', { class: 'total' }, h('span', { class: 'total-term' }, t), `: ${fmt(r.totals[k])}`)),
    h('span', { class: 'muted' }, ` · ${count(r.buckets.length, 'bucket')} of ${count(r.per, 'update')} · ${count(r.updates, 'update')}`),
  );
}

function describeProgress(p: { shardsDone: number; shardsTotal: number; bytesPerSecond: number; etaMs: number | null }): string {
  const rate = formatRate(p.bytesPerSecond);
  const eta = p.etaMs === null ? 'estimating time left' : p.etaMs < 1000 ? 'under a second left' : `${formatDuration(p.etaMs)} left`;
  return `Scanning: ${fmt(p.shardsDone)} of ${count(p.shardsTotal, 'shard')} · ${rate} · ${eta}`;
}

ch.onMessage((m) => {
  switch (m.type) {
    case 'init':
      dataset = m.dataset;
      ch.setState({ key: m.dataset.key });
      fillForm(ch.state?.form && !m.form.text ? ch.state.form : m.form);
      perField.setAttribute('placeholder', `auto (${fmt(m.dataset.autoPer)})`);
      document.title = `Search · ${m.dataset.name}`;
      termsField.focus();
      break;
    case 'started':
      searchId = m.searchId;
      terms = m.terms;
      result = undefined;
      final = false;
      errorBox.hidden = true;
      fillForm(m.form);
      // A page reload gets the search it showed again: keep its selected bucket; a new search starts without one.
      if (ch.state?.searchId !== m.searchId) {
        selBucket = null;
        ch.setState({ bucket: null });
      }
      ch.setState({ form: m.form, searchId: m.searchId });
      closeList();
      setBusy(true);
      statusEl.textContent = `Searching ${count(m.terms.length, 'term')} in buckets of ${count(m.per, 'update')}…`;
      break;
    case 'progress':
      if (m.searchId !== searchId) return;
      result = m.partial;
      draw();
      statusEl.textContent = describeProgress(m.progress);
      ch.post({ type: 'drawn', searchId: m.searchId, buckets: m.partial.buckets.length, series: m.partial.terms.length, final: false });
      break;
    case 'done': {
      if (m.searchId !== searchId) return;
      result = m.result;
      final = true;
      setBusy(false);
      draw();
      const when = m.cached
        ? `from the cache (scanned ${new Date(m.cached.savedAt).toLocaleString()}${m.cached.scanMs ? ` in ${formatDuration(m.cached.scanMs)}` : ''})`
        : `scanned in ${formatDuration(m.ms)}`;
      statusEl.textContent = `Done: ${count(
        m.result.totals.reduce((a, b) => a + b, 0),
        'occurrence',
      )}, ${when}. Click a bucket (or focus the chart and press Enter) to list its occurrences.`;
      ch.post({ type: 'drawn', searchId: m.searchId, buckets: m.result.buckets.length, series: m.result.terms.length, final: true });
      if (selBucket !== null && selBucket < m.result.buckets.length) selectBucket(selBucket, Math.min(selTerm, m.result.terms.length - 1));
      break;
    }
    case 'cancelling':
      if (m.searchId !== searchId) return;
      cancelBtn.disabled = true;
      statusEl.textContent = 'Cancelling…';
      break;
    case 'cancelled':
      if (m.searchId !== searchId) return;
      setBusy(false);
      statusEl.textContent = result
        ? 'Cancelled: the partial counts shown are incomplete and were not cached.'
        : 'No cached result for this search: press Search to scan.';
      break;
    case 'error':
      if (m.searchId !== null && m.searchId !== searchId) return;
      setBusy(false);
      statusEl.textContent = '';
      showError(m.message);
      break;
    case 'select':
      selectBucket(m.bucket, m.termIndex);
      break;
    case 'terms':
      fillForm(m.form);
      errorBox.hidden = true;
      statusEl.textContent = `${count(m.count, 'term')} from ${m.fileName}: press Search to count them.`;
      termsField.focus();
      break;
  }
});

// ───────────── occurrences (virtualized) ─────────────
const ROW_H = 24;
const PAGE = 200;
let listKey = '';
let listTotal = 0;
let rows: (OccurrenceRow | undefined)[] = [];
let loading = new Set<number>();
let active = -1;
let listAbort: AbortController | undefined;

function closeList(): void {
  listAbort?.abort();
  listSection.hidden = true;
  listKey = '';
  rows = [];
}

function selectBucket(i: number, term: number): void {
  const r = result;
  if (!r || !r.buckets[i]) return;
  selBucket = i;
  selTerm = Math.max(0, Math.min(term, r.terms.length - 1));
  chart.setSelected(i);
  ch.setState({ bucket: i, termIndex: selTerm });
  const b = r.buckets[i];
  listSection.hidden = false;
  const n = b.counts[selTerm];
  listHead.textContent = '';
  listHead.append(`“`, h('span', { class: 'occ-term' }, r.terms[selTerm]), `” in ${bucketName(i)}: ${count(n, 'occurrence')}`);
  // Term switcher (other terms of this bucket) and the bucket's updates.
  // Term switcher: every term, or with many terms the selected one and the bucket's most frequent.
  const shown = r.terms.length <= SWITCHER_TERMS ? r.terms.map((_, k) => k) : switcherTerms(b.counts, selTerm);
  updateBtns.replaceChildren(
    ...shown.map((k) => {
      const t = r.terms[k];
      const b2 = h('vscode-button', { secondary: k !== selTerm, title: `List “${t}” in this bucket` }, `${t} (${fmt(b.counts[k])})`);
      b2.addEventListener('click', () => selectBucket(i, k));
      return b2;
    }),
    h('span', { class: 'spacer' }),
    ...updateButtons(b.first_update, b.last_update),
  );
  if (!final) {
    listNote.textContent = 'The occurrences can be listed when the scan has finished.';
    listInner.replaceChildren();
    listInner.style.height = '0px';
    return;
  }
  const key = `${searchId}:${selTerm}:${i}`;
  if (key === listKey) return;
  listAbort?.abort();
  listAbort = new AbortController();
  listKey = key;
  listTotal = Math.min(n, 10_000);
  rows = new Array(listTotal);
  loading = new Set();
  active = -1;
  listNote.textContent =
    n > listTotal
      ? `Showing the first ${fmt(listTotal)}; choose a smaller bucket size to see the rest.`
      : n === 0
        ? 'No occurrences in this bucket.'
        : 'Click an occurrence (or press Enter) to open it in the shard editor.';
  listInner.style.height = `${listTotal * ROW_H}px`;
  listEl.scrollTop = 0;
  renderRows();
  if (listTotal === 0) ch.post({ type: 'listed', searchId: searchId!, termIndex: selTerm, bucket: i, rows: 0 });
}

/** Most term buttons above the occurrence list. */
const SWITCHER_TERMS = 24;

/** The selected term first, then the bucket's most frequent terms (`topTerms`), {@link SWITCHER_TERMS} in all. */
function switcherTerms(counts: number[], selected: number): number[] {
  return [selected, ...topTerms(counts, SWITCHER_TERMS).filter((k) => k !== selected)].slice(0, SWITCHER_TERMS);
}

function updateButtons(first: number, last: number): HTMLElement[] {
  const mk = (k: number) => {
    const b = h(
      'vscode-button',
      { secondary: true, icon: 'debug-step-over', title: `Open update ${fmt(k)} in the update view` },
      `Update ${fmt(k)}`,
    );
    b.addEventListener('click', () => ch.post({ type: 'openUpdate', update: k }));
    return b;
  };
  return first === last ? [mk(first)] : [mk(first), mk(last)];
}

function renderRows(): void {
  const top = listEl.scrollTop;
  const first = Math.max(0, Math.floor(top / ROW_H) - 5);
  const last = Math.min(listTotal, Math.ceil((top + listEl.clientHeight) / ROW_H) + 5);
  const els: HTMLElement[] = [];
  for (let i = first; i < last; i++) {
    const r = rows[i];
    const el = h('div', {
      class: i === active ? 'occ-row active' : 'occ-row',
      role: 'option',
      id: `occ-${i}`,
      'aria-selected': String(i === active),
      'data-index': i,
    });
    el.style.top = `${i * ROW_H}px`;
    if (r) {
      const where = r.update === null ? 'look-ahead' : `update ${fmt(r.update)} · seq ${r.sequence} · pos ${r.position}`;
      el.append(
        h('span', { class: 'occ-where' }, where),
        h('span', { class: 'occ-offset' }, fmt(r.offset)),
        h(
          'span',
          { class: 'occ-ctx' },
          h('span', { class: 'occ-before' }, h('span', {}, ...show(r.before))),
          h('mark', {}, ...show(r.match)),
          h('span', { class: 'occ-after' }, ...show(r.after)),
        ),
      );
      el.title = `Global token offset ${fmt(r.offset)}: open in the shard editor`;
    } else {
      el.append(h('span', { class: 'muted' }, 'loading…'));
    }
    els.push(el);
  }
  listInner.replaceChildren(...els);
  if (active >= 0) listEl.setAttribute('aria-activedescendant', `occ-${active}`);
  else listEl.removeAttribute('aria-activedescendant');
  const missing = [];
  for (let i = first; i < last; i++) if (!rows[i]) missing.push(i);
  if (missing.length) load(Math.floor(missing[0] / PAGE) * PAGE);
}

/**
 * Context text for one line per occurrence: newlines and tabs as ↵ ⇥, and every other invisible
 * or bidi character as a boxed mark (the one helper, src/core/invisibles.ts), so a U+202E in the
 * data cannot reorder the line.
 */
function show(s: string): (Node | string)[] {
  return visibleNodes(s.replace(/\r\n|\n|\r/g, '↵').replace(/\t/g, '⇥'));
}

function load(start: number): void {
  if (loading.has(start) || searchId === null || selBucket === null) return;
  loading.add(start);
  const key = listKey;
  const [sid, term, bucket] = [searchId, selTerm, selBucket];
  // Rows are pulled in stream order: ask for everything up to this page.
  const from = rows.findIndex((r) => !r);
  const begin = from < 0 ? start : Math.min(from, start);
  ch.request('occurrences', { searchId: sid, termIndex: term, bucket, start: begin, count: start + PAGE - begin }, listAbort?.signal).then(
    (rep) => {
      if (key !== listKey) return;
      rep.rows.forEach((r, k) => {
        rows[begin + k] = r;
      });
      if (rep.done) {
        const n = begin + rep.rows.length;
        if (n < listTotal) {
          listTotal = n;
          rows.length = n;
          listInner.style.height = `${n * ROW_H}px`;
        }
      }
      loading.delete(start);
      renderRows();
      ch.post({ type: 'listed', searchId: sid, termIndex: term, bucket, rows: rows.filter(Boolean).length });
    },
    (err: Error) => {
      loading.delete(start);
      if (err instanceof RequestCancelled || key !== listKey) return;
      listNote.textContent = err.message;
    },
  );
}

listEl.addEventListener('scroll', () => requestAnimationFrame(renderRows));
listEl.addEventListener('click', (e) => {
  const row = (e.target as HTMLElement).closest<HTMLElement>('.occ-row');
  if (!row) return;
  const i = Number(row.dataset.index);
  setActive(i);
  reveal(i);
});
listEl.addEventListener('keydown', (e) => {
  if (!listTotal) return;
  const page = Math.max(1, Math.floor(listEl.clientHeight / ROW_H) - 1);
  let next: number | null = null;
  switch (e.key) {
    case 'ArrowDown':
      next = active + 1;
      break;
    case 'ArrowUp':
      next = active - 1;
      break;
    case 'PageDown':
      next = active + page;
      break;
    case 'PageUp':
      next = active - page;
      break;
    case 'Home':
      next = 0;
      break;
    case 'End':
      next = listTotal - 1;
      break;
    case 'Enter':
      if (active >= 0) {
        e.preventDefault();
        reveal(active);
      }
      return;
    default:
      return;
  }
  e.preventDefault();
  setActive(Math.max(0, Math.min(listTotal - 1, next)));
});

function setActive(i: number): void {
  active = i;
  const top = i * ROW_H;
  if (top < listEl.scrollTop) listEl.scrollTop = top;
  else if (top + ROW_H > listEl.scrollTop + listEl.clientHeight) listEl.scrollTop = top + ROW_H - listEl.clientHeight;
  renderRows();
}

function reveal(i: number): void {
  if (!rows[i] || searchId === null || selBucket === null) return;
  ch.post({ type: 'reveal', searchId, termIndex: selTerm, bucket: selBucket, index: i });
}

// Restore what the user had chosen, then tell the host we listen.
if (ch.state?.form) fillForm(ch.state.form);
selBucket = ch.state?.bucket ?? null;
selTerm = ch.state?.termIndex ?? 0;
setBusy(false);
ch.ready();
