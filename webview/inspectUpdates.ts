/**
 * Inspect Updates (browser side; host: src/panels/inspectUpdates.ts): one row per update, the
 * statistics as columns, each cell with an inline bar (value / the column's largest value in the
 * window) and a colour from the value's robust z-score against the window's median
 * (`(x − median) / (1.4826 · MAD)`: |z| ≥ 2 amber, ≥ 3.5 red; the number is in the cell's tooltip).
 * Click a column header to sort (again to reverse); click a row (or Enter on it) → the update
 * view. "Export CSV" saves the table through the host's save dialog; "Export updates…" runs
 * Export Updates… with this window's range. Every value is inserted as text.
 */
import { count, fmt, h } from './common';
import { panelChannel } from './shared/panel';
import type { AnyUpdateStats, StatColumn } from '../src/core/stats';
import type { InspectInit, InspectProtocol, InspectState, StatColumnInfo } from '../src/protocol/workbench';

const ch = panelChannel<InspectProtocol, InspectState>();

let init: InspectInit | undefined;
let rows: AnyUpdateStats[] = [];
let sort: { key: string; descending: boolean } = ch.state?.sort ?? { key: 'update', descending: false };

const app = document.getElementById('app')!;
const title = h('h2', { class: 'wb-title' });
const status = h('div', { class: 'muted', role: 'status', 'aria-live': 'polite' });
const errorBox = h('p', { class: 'banner error', role: 'alert', hidden: true });
const centerField = h('input', { type: 'number', min: 0, class: 'wb-num', 'aria-label': 'Centre update (0-based)' });
const radiusField = h('input', { type: 'number', min: 0, max: 1000, class: 'wb-num', 'aria-label': 'Radius (updates each side)' });
const goBtn = h('button', { class: 'wb-btn', type: 'button' }, 'Inspect');
const csvBtn = h('button', { class: 'wb-btn secondary', type: 'button', title: 'Save this table as CSV' }, 'Export CSV');
const exportBtn = h(
  'button',
  { class: 'wb-btn secondary', type: 'button', title: 'Export these updates as jsonl, txt or npz' },
  'Export updates…',
);
const legend = h(
  'div',
  { class: 'muted wb-legend' },
  "Colour: robust z-score of the value against this window's median (",
  h('span', { class: 'z-mid' }, '|z| ≥ 2'),
  ', ',
  h('span', { class: 'z-high' }, '|z| ≥ 3.5'),
  "). Bars: value ÷ the column's largest value here. Click a row to open the update.",
);
const table = h('table', { class: 'wb-table', 'aria-label': 'Statistics per update' });
const thead = h('thead');
const tbody = h('tbody');
table.append(thead, tbody);
app.append(
  h(
    'div',
    { class: 'wb-head' },
    title,
    h('label', {}, 'update ', centerField),
    h('label', {}, ' ± ', radiusField),
    goBtn,
    csvBtn,
    exportBtn,
  ),
  status,
  errorBox,
  legend,
  h('div', { class: 'wb-scroll' }, table),
);

goBtn.addEventListener('click', () => {
  const center = Number(centerField.value),
    radius = Number(radiusField.value);
  if (!Number.isInteger(center) || center < 0 || !Number.isInteger(radius) || radius < 0) {
    showError('Type a whole update number and radius (≥ 0).');
    return;
  }
  ch.post({ type: 'recenter', center, radius });
});
for (const f of [centerField, radiusField])
  f.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') goBtn.click();
  });
csvBtn.addEventListener('click', () => {
  if (!init || !rows.length) return;
  ch.exportFile({ format: 'csv', fileName: `updates-${init.first}-${init.last}.csv`, data: toCsv() });
});
exportBtn.addEventListener('click', () => {
  if (init) ch.post({ type: 'exportUpdates', first: init.first, last: init.last });
});

function showError(msg: string | undefined): void {
  errorBox.hidden = !msg;
  errorBox.textContent = msg ?? '';
}

/** The value of a column (`update` included) of a record. */
function value(s: AnyUpdateStats, key: string): number | null {
  if (key === 'update') return s.update;
  if (key === 'top_token_id') return s.top_token.id;
  if (key === 'top_token_count') return s.top_token.count;
  return (s as unknown as Record<string, number | null>)[key] ?? null;
}

function formatValue(key: string, v: number | null): string {
  if (v === null) return '—';
  if (key === 'repeat_13gram_share') return (100 * v).toFixed(3) + ' %';
  if (!Number.isInteger(v)) return v.toLocaleString('en-US', { maximumFractionDigits: 1 });
  return key === 'max_id' || key === 'top_token_id' ? String(v) : fmt(v);
}

function median(xs: number[]): number {
  const v = xs.slice().sort((a, b) => a - b);
  if (!v.length) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/** Robust z of every row's value in column `key` (the same rule as robustZ in src/core/stats.ts). */
function zScores(key: StatColumn): (number | null)[] {
  const vals = rows.map((r) => value(r, key));
  const xs = vals.filter((x): x is number => x !== null);
  const med = median(xs);
  const mad = median(xs.map((x) => Math.abs(x - med))) * 1.4826;
  return vals.map((x) => (x === null ? null : x === med ? 0 : mad > 0 ? (x - med) / mad : x > med ? Infinity : -Infinity));
}

function renderHead(cols: StatColumnInfo[]): void {
  const th = (key: string, label: string, definition: string) => {
    const active = sort.key === key;
    const btn = h(
      'button',
      { class: 'wb-sort', type: 'button', title: `${definition}. Click to sort.` },
      label,
      active ? (sort.descending ? ' ▼' : ' ▲') : '',
    );
    btn.addEventListener('click', () => {
      sort = { key, descending: active ? !sort.descending : key !== 'update' };
      ch.setState({ sort });
      render();
    });
    return h('th', { scope: 'col', 'aria-sort': active ? (sort.descending ? 'descending' : 'ascending') : 'none', 'data-key': key }, btn);
  };
  thead.replaceChildren(
    h(
      'tr',
      {},
      th('update', 'update', 'The 0-based update k: tokens [G·k, G·(k+1))'),
      ...cols.map((c) => th(c.key, c.label, c.definition)),
    ),
  );
}

function render(): void {
  if (!init) return;
  renderHead(init.columns);
  const cols = init.columns;
  const z = new Map(cols.map((c) => [c.key, zScores(c.key)]));
  const max = new Map(cols.map((c) => [c.key, Math.max(0, ...rows.map((r) => value(r, c.key) ?? 0))]));
  const order = rows
    .map((_, i) => i)
    .sort((a, b) => {
      const va = value(rows[a], sort.key),
        vb = value(rows[b], sort.key);
      const d = (va ?? -Infinity) - (vb ?? -Infinity) || rows[a].update - rows[b].update;
      return sort.descending ? -d : d;
    });
  const frag = document.createDocumentFragment();
  for (const i of order) {
    const r = rows[i];
    const tr = h('tr', {
      tabindex: 0,
      class: r.update === init.center ? 'center' : undefined,
      'data-update': r.update,
      title: `Open update ${fmt(r.update)} in the update view`,
    });
    tr.append(h('th', { scope: 'row', class: 'wb-update' }, fmt(r.update)));
    for (const c of cols) {
      const v = value(r, c.key);
      const zz = z.get(c.key)![i];
      const cls = zz === null ? '' : Math.abs(zz) >= 3.5 ? 'z-high' : Math.abs(zz) >= 2 ? 'z-mid' : '';
      const m = max.get(c.key)!;
      const bar = h('span', { class: 'wb-bar', 'aria-hidden': 'true' });
      bar.style.width = `${v === null || m <= 0 ? 0 : Math.max(0, Math.min(100, (100 * v) / m))}%`;
      const zText = zz === null ? '' : ` · robust z ${Number.isFinite(zz) ? zz.toFixed(2) : zz > 0 ? '+∞' : '−∞'}`;
      tr.append(
        h(
          'td',
          { class: `wb-cell ${cls}`, title: `${c.label}: ${v === null ? 'no value' : String(v)}${zText}` },
          bar,
          h('span', { class: 'wb-val' }, formatValue(c.key, v)),
        ),
      );
    }
    frag.append(tr);
  }
  tbody.replaceChildren(frag);
}

const open = (tr: Element | null) => {
  const u = tr?.getAttribute('data-update');
  if (u !== null && u !== undefined) ch.post({ type: 'openUpdate', update: Number(u) });
};
tbody.addEventListener('click', (e) => open((e.target as Element).closest('tr')));
tbody.addEventListener('keydown', (e) => {
  const tr = (e.target as Element).closest('tr');
  if (e.key === 'Enter') open(tr);
  else if (e.key === 'ArrowDown') {
    (tr?.nextElementSibling as HTMLElement | null)?.focus();
    e.preventDefault();
  } else if (e.key === 'ArrowUp') {
    (tr?.previousElementSibling as HTMLElement | null)?.focus();
    e.preventDefault();
  }
});

function toCsv(): string {
  if (!init) return '';
  // Through a run's order a step reads many stream ranges: its input tokens and range count instead of one range.
  const keys = ['update', ...(init.order ? ['tokens', 'ranges'] : ['token_start', 'token_end']), ...init.columns.map((c) => c.key)];
  const lines = [keys.join(',')];
  for (const r of [...rows].sort((a, b) => a.update - b.update)) {
    const lead = 'token_range' in r ? r.token_range : [r.tokens, r.ranges];
    lines.push([r.update, ...lead, ...init.columns.map((c) => value(r, c.key) ?? '')].join(','));
  }
  return lines.join('\r\n') + '\r\n';
}

ch.onMessage((m) => {
  switch (m.type) {
    case 'init':
      init = m;
      rows = [];
      showError(undefined);
      centerField.value = String(m.center);
      radiusField.value = String(m.radius);
      title.textContent = `Updates ${fmt(m.first)}–${fmt(m.last)} around update ${fmt(m.center)} (0-based) · ${m.dataset}${m.order ? ` · ${m.order}` : ''}`;
      status.textContent = `computing 0 / ${count(m.last - m.first + 1, 'update')}…`;
      ch.setState({ datasetKey: m.datasetKey, center: m.center, radius: m.radius });
      render();
      break;
    case 'rows':
      // Keyed by update: after a page reload the host re-sends what it had, so a row may come twice.
      for (const r of m.rows) {
        const at = rows.findIndex((x) => x.update === r.update);
        if (at >= 0) rows[at] = r;
        else rows.push(r);
      }
      status.textContent =
        m.done < m.total
          ? `computing ${fmt(m.done)} / ${count(m.total, 'update')}…`
          : `${count(m.total, 'update')}${init && !init.tokenizer ? ' · no tokenizer: unknown and special ids are empty' : ''}`;
      document.body.dataset.done = m.done === m.total ? 'true' : 'false';
      render();
      break;
    case 'error':
      showError(m.message);
      status.textContent = '';
      break;
  }
});
ch.ready();
