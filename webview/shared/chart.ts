/**
 * The chart component shared by the webview panels (search panel, loss-spike workbench): a
 * bucketed series chart on uPlot (https://github.com/leeoniya/uPlot, canvas, ~50 KB).
 *
 * - **Strict CSP**: uPlot draws on a canvas and only sets element styles through the CSSOM; its
 *   stylesheet comes as a file (`dist/media/uPlot.min.css`, copied by esbuild.js) — pass
 *   `styles: ['chart.css', 'dist/media/uPlot.min.css']` in the panel's {@link PanelSpec}.
 * - **Theme**: every colour comes from `--vscode-*` variables (series from `--vscode-charts-*`);
 *   the chart re-colours itself when the theme changes.
 * - **Keyboard**: the plot is one tab stop; ←/→ move a cursor between buckets (Home/End, Page
 *   Up/Down by 10), ↑/↓ pick the series, Enter selects the bucket ({@link ChartOptions.onSelect});
 *   the focused bucket is announced through a polite live region.
 * - **Screen readers**: a visually hidden `<table>` holds the same numbers (one row per bucket).
 * - Markers ({@link Chart.setMarkers}: dashed vertical lines, e.g. loss spikes).
 * - Tooltip (bucket label and each series' value), a legend whose items toggle series, PNG export
 *   ({@link Chart.toPng}: a data URL with background, title and legend) and CSV/JSON export
 *   ({@link Chart.toCsv}, {@link Chart.toJson}). Saving is the host's job
 *   (`PanelChannel.exportFile` → `PanelHost.saveExport`).
 *
 * Text (series labels come from user input or data) is only ever inserted as text.
 */
import uPlot from 'uplot';
import { xTickSpace, zeroBasedRange } from './chartScale';
import { h, visibleNodes } from '../common';

/** One series: a label and one value per bucket (null = no value, e.g. not scanned yet). */
export interface ChartSeries {
  label: string;
  values: (number | null)[];
  /** `right`: drawn against a second y axis on the right ({@link ChartOptions.y2Label}); default left. */
  axis?: 'left' | 'right';
}

/** What the chart shows. */
export interface ChartData {
  /** X value of each bucket (ascending), e.g. the bucket's first update. */
  x: number[];
  series: ChartSeries[];
}

/** A vertical marker line at an x value (e.g. a loss spike), labelled in the tooltip of the nearest bucket. */
export interface ChartMarker {
  x: number;
  label: string;
}

/** Options of {@link Chart}. */
export interface ChartOptions {
  /** Accessible name of the chart, the PNG's title and the hidden table's caption. */
  title: string;
  /** Axis labels. */
  xLabel: string;
  yLabel: string;
  /** The left y axis starts at 0 (counts and rates; {@link zeroBasedRange}); default false (e.g. a loss). */
  yFromZero?: boolean;
  /** Label of the right-hand y axis, used when a series has `axis: 'right'` (default: that series' label). */
  y2Label?: string;
  /** Formats a y value for the tooltip, table, announcements and CSV (default: up to 4 significant decimals). */
  formatY?: (v: number) => string;
  /** Formats an x value for the x axis ticks (default: thousands separators). */
  formatX?: (v: number) => string;
  /** Names bucket `i` for the tooltip, table rows and announcements (default: "x = …"). */
  bucketLabel?: (i: number) => string;
  /** Called when a bucket is chosen: click, or Enter on the keyboard cursor; `series` = the focused/nearest series. */
  onSelect?: (bucket: number, series: number) => void;
  /** Height of the plot in CSS pixels (default 280). */
  height?: number;
  /** Names of CSV/JSON columns for x (default "x"). */
  xKey?: string;
  /** Extra per-bucket columns for CSV/JSON (e.g. `first_update`, `last_update`, `tokens`), same length as x. */
  extraColumns?: () => Record<string, number[]>;
}

/** Theme colours for series, in order; repeats with dashes after the sixth. */
const SERIES_VARS = [
  '--vscode-charts-blue',
  '--vscode-charts-orange',
  '--vscode-charts-green',
  '--vscode-charts-purple',
  '--vscode-charts-red',
  '--vscode-charts-yellow',
];
const FALLBACK = ['#3794ff', '#d18616', '#89d185', '#b180d7', '#f14c4c', '#cca700'];
const DASHES: number[][] = [[], [6, 3], [2, 3], [8, 3, 2, 3]];

/** The value of a theme CSS variable (`--vscode-*`), or `fallback` when the theme does not set it. */
export function cssVar(name: string, fallback: string): string {
  const v =
    getComputedStyle(document.documentElement).getPropertyValue(name).trim() ||
    getComputedStyle(document.body).getPropertyValue(name).trim();
  return v || fallback;
}

/** Colour and dash pattern of series `i` in the current theme. */
export function seriesStyle(i: number): { color: string; dash: number[] } {
  const k = i % SERIES_VARS.length;
  return { color: cssVar(SERIES_VARS[k], FALLBACK[k]), dash: DASHES[Math.floor(i / SERIES_VARS.length) % DASHES.length] };
}

const defaultFormatY = (v: number) =>
  Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumSignificantDigits: 4 });
const defaultFormatX = (v: number) => v.toLocaleString('en-US');

/** A bucketed line chart; see the file comment. */
export class Chart {
  /** The element to insert into the page (toolbar-free: legend, plot, hidden table, live region). */
  readonly element: HTMLElement;
  private readonly plotEl: HTMLElement;
  private readonly legendEl: HTMLElement;
  private readonly tableEl: HTMLTableElement;
  private readonly liveEl: HTMLElement;
  private readonly tooltipEl: HTMLElement;
  private u?: uPlot;
  private data: ChartData = { x: [], series: [] };
  private hidden = new Set<number>();
  private cursorIdx: number | null = null;
  private cursorSeries = 0;
  private selectedIdx: number | null = null;
  private markers: ChartMarker[] = [];
  private tableTimer?: number;
  private readonly resizeObserver: ResizeObserver;
  private readonly themeObserver: MutationObserver;
  private readonly fmtY: (v: number) => string;
  private readonly fmtX: (v: number) => string;

  constructor(private readonly opts: ChartOptions) {
    this.fmtY = opts.formatY ?? defaultFormatY;
    this.fmtX = opts.formatX ?? defaultFormatX;
    this.legendEl = h('div', { class: 'chart-legend', role: 'group', 'aria-label': `${opts.title}: series (toggle to show or hide)` });
    this.plotEl = h('div', {
      class: 'chart-plot',
      tabindex: 0,
      role: 'application',
      'aria-roledescription': 'chart',
      'aria-label': `${opts.title}. Left and right arrows move between buckets, up and down pick the series, Enter selects the bucket.`,
    });
    this.tooltipEl = h('div', { class: 'chart-tooltip', role: 'presentation', hidden: true });
    this.liveEl = h('div', { class: 'visually-hidden', 'aria-live': 'polite' });
    this.tableEl = h('table', { class: 'visually-hidden chart-table' });
    this.element = h('div', { class: 'chart' }, this.legendEl, this.plotEl, this.liveEl, this.tableEl);

    this.plotEl.addEventListener('keydown', (e) => this.onKey(e));
    this.plotEl.addEventListener('focus', () => {
      if (this.cursorIdx === null && this.data.x.length) this.moveCursor(this.selectedIdx ?? 0);
    });
    this.plotEl.addEventListener('blur', () => {
      this.tooltipEl.hidden = true;
    });
    this.resizeObserver = new ResizeObserver(() => this.resize());
    this.resizeObserver.observe(this.plotEl);
    // VS Code sets the theme's variables on <html style> and its kind as a class on <body>.
    this.themeObserver = new MutationObserver(() => this.rebuild());
    this.themeObserver.observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
    this.themeObserver.observe(document.body, { attributes: true, attributeFilter: ['class'] });
  }

  /**
   * Replaces the data (same call for partial results while they stream in). Keeps the hidden
   * series, the selection and the keyboard cursor when the number of buckets is unchanged.
   */
  setData(data: ChartData): void {
    const shapeChanged =
      data.x.length !== this.data.x.length ||
      data.series.length !== this.data.series.length ||
      data.series.some((s, i) => s.label !== this.data.series[i]?.label);
    this.data = data;
    if (shapeChanged) {
      this.hidden.clear();
      if (this.selectedIdx !== null && this.selectedIdx >= data.x.length) this.selectedIdx = null;
      if (this.cursorIdx !== null && this.cursorIdx >= data.x.length) this.cursorIdx = null;
      this.rebuild();
    } else if (this.u) {
      this.u.setData(this.aligned(), true);
      this.renderLegend();
      if (this.cursorIdx !== null) this.renderTooltip(this.cursorIdx);
    } else {
      this.rebuild();
    }
    // The table is for reading, not watching: refresh it at most every half second.
    if (this.tableTimer === undefined) {
      this.tableTimer = window.setTimeout(
        () => {
          this.tableTimer = undefined;
          this.renderTable();
        },
        shapeChanged ? 0 : 500,
      );
    }
  }

  /**
   * Changes the left y axis label (e.g. "per million tokens" ↔ "occurrences" when the panel
   * switches to raw counts): the axis, the hidden table's caption and the JSON export follow.
   */
  setYLabel(label: string): void {
    if (label === this.opts.yLabel) return;
    this.opts.yLabel = label;
    this.rebuild();
    this.renderTable();
  }

  /** Marks bucket `i` as selected (a band behind it), or none. Does not call `onSelect`. */
  setSelected(i: number | null): void {
    this.selectedIdx = i;
    this.u?.redraw(false, false);
  }

  /** Draws dashed vertical lines at `markers` (replacing earlier ones); their labels join the tooltip of the bucket at that x. */
  setMarkers(markers: ChartMarker[]): void {
    this.markers = markers.slice();
    this.u?.redraw(false, false);
  }

  /** The selected bucket, if any. */
  get selected(): number | null {
    return this.selectedIdx;
  }

  /** Moves the keyboard cursor to bucket `i` (clamped) and shows its tooltip. */
  moveCursor(i: number): void {
    const n = this.data.x.length;
    if (!n || !this.u) return;
    i = Math.max(0, Math.min(n - 1, i));
    this.cursorIdx = i;
    const left = this.u.valToPos(this.data.x[i], 'x');
    const v = this.data.series[this.cursorSeries]?.values[i];
    const top = v === null || v === undefined ? this.u.bbox.height / devicePixelRatio / 2 : this.u.valToPos(v, 'y');
    this.u.setCursor({ left, top });
    this.renderTooltip(i);
    this.liveEl.textContent = this.describe(i);
  }

  /** One sentence for bucket `i`: its label and every visible series' value. */
  describe(i: number): string {
    const parts = this.data.series
      .map((s, k) =>
        this.hidden.has(k)
          ? null
          : `${s.label}: ${s.values[i] === null || s.values[i] === undefined ? 'no value' : this.fmtY(s.values[i]!)}`,
      )
      .filter((x): x is string => x !== null);
    return `${this.bucketLabel(i)}. ${parts.join(', ')}`;
  }

  /**
   * A PNG of the chart as a `data:image/png;base64,…` URL: the plot on the theme's editor
   * background, with the title above and the legend below (device pixel ratio kept).
   */
  toPng(): string {
    const u = this.u;
    if (!u) throw new Error('the chart has not been drawn yet');
    const src = u.ctx.canvas;
    const ratio = src.width / Math.max(1, src.clientWidth || parseFloat(src.style.width) || src.width);
    const pad = Math.round(12 * ratio),
      titleH = Math.round(22 * ratio),
      lineH = Math.round(18 * ratio);
    const font = cssVar('--vscode-font-family', 'sans-serif');
    const measure = document.createElement('canvas').getContext('2d')!;
    measure.font = `${Math.round(12 * ratio)}px ${font}`;
    // Lay the legend out in rows that fit the width.
    const items = this.data.series.map((s, i) => ({ s, i })).filter(({ i }) => !this.hidden.has(i));
    const rows: { label: string; i: number; x: number }[][] = [[]];
    let x = pad;
    for (const { s, i } of items) {
      const w = Math.round(24 * ratio) + measure.measureText(s.label).width + pad;
      if (x + w > src.width + pad && rows[rows.length - 1].length) {
        rows.push([]);
        x = pad;
      }
      rows[rows.length - 1].push({ label: s.label, i, x });
      x += w;
    }
    const out = document.createElement('canvas');
    out.width = src.width + 2 * pad;
    out.height = src.height + titleH + pad * 2 + rows.length * lineH + pad;
    const ctx = out.getContext('2d')!;
    ctx.fillStyle = cssVar('--vscode-editor-background', '#1e1e1e');
    ctx.fillRect(0, 0, out.width, out.height);
    ctx.fillStyle = cssVar('--vscode-foreground', '#cccccc');
    ctx.textBaseline = 'middle';
    ctx.font = `600 ${Math.round(13 * ratio)}px ${font}`;
    ctx.fillText(this.opts.title, pad, pad + titleH / 2);
    ctx.drawImage(src, pad, pad + titleH);
    ctx.font = `${Math.round(12 * ratio)}px ${font}`;
    rows.forEach((row, r) => {
      const y = pad + titleH + src.height + pad + r * lineH + lineH / 2;
      for (const it of row) {
        const st = seriesStyle(it.i);
        ctx.strokeStyle = st.color;
        ctx.lineWidth = 2 * ratio;
        ctx.setLineDash(st.dash.map((d) => d * ratio));
        ctx.beginPath();
        ctx.moveTo(it.x, y);
        ctx.lineTo(it.x + 18 * ratio, y);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = cssVar('--vscode-foreground', '#cccccc');
        ctx.fillText(it.label, it.x + 24 * ratio, y);
      }
    });
    return out.toDataURL('image/png');
  }

  /** The data as CSV: `x` (or `xKey`), the extra columns, then one column per series (raw numbers, RFC 4180 quoting). */
  toCsv(): string {
    const extra = this.opts.extraColumns?.() ?? {};
    const head = [this.opts.xKey ?? 'x', ...Object.keys(extra), ...this.data.series.map((s) => s.label)];
    const lines = [head.map(csvCell).join(',')];
    for (let i = 0; i < this.data.x.length; i++) {
      lines.push(
        [this.data.x[i], ...Object.values(extra).map((c) => c[i]), ...this.data.series.map((s) => s.values[i] ?? '')]
          .map(csvCell)
          .join(','),
      );
    }
    return lines.join('\r\n') + '\r\n';
  }

  /** The data as JSON: `{ title, x_label, y_label, buckets: [{ x, …extra, values: [...] }], series: [labels] }`. */
  toJson(): string {
    const extra = this.opts.extraColumns?.() ?? {};
    const xKey = this.opts.xKey ?? 'x';
    return (
      JSON.stringify(
        {
          title: this.opts.title,
          x_label: this.opts.xLabel,
          y_label: this.opts.yLabel,
          series: this.data.series.map((s) => s.label),
          buckets: this.data.x.map((x, i) => ({
            [xKey]: x,
            ...Object.fromEntries(Object.entries(extra).map(([k, c]) => [k, c[i]])),
            values: this.data.series.map((s) => s.values[i]),
          })),
        },
        null,
        2,
      ) + '\n'
    );
  }

  /** Removes the chart and its observers. */
  destroy(): void {
    this.resizeObserver.disconnect();
    this.themeObserver.disconnect();
    if (this.tableTimer !== undefined) clearTimeout(this.tableTimer);
    this.u?.destroy();
    this.u = undefined;
    this.element.remove();
  }

  // ───────────── internals ─────────────

  private bucketLabel(i: number): string {
    return this.opts.bucketLabel?.(i) ?? `${this.opts.xLabel} ${this.fmtX(this.data.x[i])}`;
  }

  private aligned(): uPlot.AlignedData {
    return [this.data.x, ...this.data.series.map((s) => s.values)] as uPlot.AlignedData;
  }

  private width(): number {
    return Math.max(200, Math.floor(this.plotEl.clientWidth || this.element.clientWidth || 600));
  }

  private resize(): void {
    if (!this.u) return;
    const w = this.width();
    if (Math.abs(w - this.u.width) >= 1) this.u.setSize({ width: w, height: this.opts.height ?? 280 });
  }

  /** (Re)creates the uPlot instance with the current theme's colours. */
  private rebuild(): void {
    this.u?.destroy();
    this.u = undefined;
    this.plotEl.replaceChildren();
    if (!this.element.isConnected && !this.plotEl.clientWidth) {
      // Drawn once the element is in the page (ResizeObserver fires then).
      requestAnimationFrame(() => {
        if (!this.u && this.element.isConnected) this.rebuild();
      });
      return;
    }
    const fg = cssVar('--vscode-descriptionForeground', '#999999');
    const grid = cssVar('--vscode-editorWidget-border', cssVar('--vscode-panel-border', 'rgba(128,128,128,0.35)'));
    const font = `${cssVar('--vscode-font-size', '12px')} ${cssVar('--vscode-font-family', 'sans-serif')}`;
    const measure = document.createElement('canvas').getContext('2d')!;
    measure.font = font;
    const axis = (label: string, values: (u: uPlot, v: number[]) => string[]): uPlot.Axis => ({
      label,
      stroke: fg,
      font,
      labelFont: font,
      values,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
    });
    const right = this.data.series.find((s) => s.axis === 'right');
    const opts: uPlot.Options = {
      width: this.width(),
      height: this.opts.height ?? 280,
      legend: { show: false },
      cursor: {
        drag: { x: true, y: false, setScale: true },
        points: { size: 7 },
        focus: { prox: 24 },
      },
      focus: { alpha: 0.35 },
      scales: {
        x: { time: false },
        ...(this.opts.yFromZero ? { y: { range: (_u: uPlot, _min: number, max: number) => zeroBasedRange(max) } } : {}),
        ...(right ? { y2: { auto: true } } : {}),
      },
      axes: [
        {
          ...axis(this.opts.xLabel, (_u, v) => v.map((x) => this.fmtX(x))),
          // Ticks far enough apart for their labels (six-digit updates ran together at uPlot's default 50 px).
          space: (_u: uPlot, _axis: number, min: number, max: number) =>
            xTickSpace(min, max, this.fmtX, (t) => measure.measureText(t).width),
        },
        axis(this.opts.yLabel, (_u, v) => v.map((y) => this.fmtY(y))),
        ...(right
          ? [
              {
                ...axis(this.opts.y2Label ?? right.label, (_u: uPlot, v: number[]) => v.map((y) => this.fmtY(y))),
                scale: 'y2',
                side: 1,
                grid: { show: false },
              } as uPlot.Axis,
            ]
          : []),
      ],
      series: [
        { label: this.opts.xLabel },
        ...this.data.series.map((s, i) => {
          const st = seriesStyle(i);
          return {
            label: s.label,
            ...(s.axis === 'right' ? { scale: 'y2' } : {}),
            stroke: st.color,
            dash: st.dash,
            width: 2,
            show: !this.hidden.has(i),
            spanGaps: false,
            points: { show: this.data.x.length <= 80, size: 5, fill: st.color },
          } as uPlot.Series;
        }),
      ],
      hooks: {
        setCursor: [
          (u) => {
            const idx = u.cursor.idx;
            if (idx === null || idx === undefined) {
              if (document.activeElement !== this.plotEl) this.tooltipEl.hidden = true;
              return;
            }
            this.cursorIdx = idx;
            this.renderTooltip(idx);
          },
        ],
        setSeries: [
          (_u, i, o) => {
            if (i !== null && i > 0 && (o as { focus?: boolean }).focus) this.cursorSeries = i - 1;
          },
        ],
        drawClear: [(u) => this.drawSelection(u)],
        draw: [(u) => this.drawMarkers(u)],
      },
    };
    this.u = new uPlot(opts, this.aligned(), this.plotEl);
    this.u.over.append(this.tooltipEl);
    this.u.over.addEventListener('mouseleave', () => {
      if (document.activeElement !== this.plotEl) this.tooltipEl.hidden = true;
    });
    this.u.over.addEventListener('click', () => {
      const idx = this.u?.cursor.idx;
      if (idx === null || idx === undefined) return;
      this.select(idx);
    });
    this.renderLegend();
  }

  private select(idx: number): void {
    this.setSelected(idx);
    this.opts.onSelect?.(idx, this.cursorSeries);
  }

  /** Paints a band behind the selected bucket (before the series are drawn). */
  private drawSelection(u: uPlot): void {
    const i = this.selectedIdx;
    const x = this.data.x;
    if (i === null || i >= x.length) return;
    const at = (k: number) => u.valToPos(x[k], 'x', true);
    const left = i > 0 ? (at(i - 1) + at(i)) / 2 : at(i) - (x.length > 1 ? (at(1) - at(0)) / 2 : 8);
    const right = i < x.length - 1 ? (at(i) + at(i + 1)) / 2 : at(i) + (x.length > 1 ? (at(i) - at(i - 1)) / 2 : 8);
    const ctx = u.ctx;
    ctx.save();
    ctx.fillStyle = cssVar('--vscode-editor-findMatchHighlightBackground', 'rgba(234,92,0,0.33)');
    ctx.fillRect(
      Math.max(u.bbox.left, left),
      u.bbox.top,
      Math.min(u.bbox.left + u.bbox.width, right) - Math.max(u.bbox.left, left),
      u.bbox.height,
    );
    ctx.restore();
  }

  private drawMarkers(u: uPlot): void {
    if (!this.markers.length) return;
    const ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = cssVar('--vscode-charts-red', '#f14c4c');
    ctx.lineWidth = Math.max(1, devicePixelRatio);
    ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
    for (const m of this.markers) {
      const x = Math.round(u.valToPos(m.x, 'x', true));
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
    }
    ctx.restore();
  }

  private renderTooltip(i: number): void {
    const u = this.u;
    if (!u) return;
    const rows: HTMLElement[] = [];
    this.data.series.forEach((s, k) => {
      if (this.hidden.has(k)) return;
      const v = s.values[i];
      const st = seriesStyle(k);
      const sw = h('span', { class: 'chart-swatch' });
      sw.style.background = st.color;
      rows.push(
        h(
          'div',
          { class: k === this.cursorSeries ? 'chart-tip-row focused' : 'chart-tip-row' },
          sw,
          h('span', { class: 'chart-tip-label' }, ...visibleNodes(s.label)),
          h('span', { class: 'chart-tip-value' }, v === null || v === undefined ? '—' : this.fmtY(v)),
        ),
      );
    });
    const x = this.data.x[i],
      nextX = this.data.x[i + 1] ?? Infinity;
    const marks = this.markers.filter((m) => m.x >= x && m.x < nextX).map((m) => h('div', { class: 'chart-tip-marker' }, m.label));
    this.tooltipEl.replaceChildren(h('div', { class: 'chart-tip-head' }, this.bucketLabel(i)), ...rows, ...marks);
    this.tooltipEl.hidden = false;
    const left = u.valToPos(this.data.x[i], 'x');
    const w = u.over.clientWidth;
    // Keep the tooltip inside the plot: right of the cursor, or left of it near the right edge.
    const tipW = this.tooltipEl.offsetWidth || 180;
    this.tooltipEl.style.left = `${left + 12 + tipW > w ? Math.max(0, left - 12 - tipW) : left + 12}px`;
    this.tooltipEl.style.top = '4px';
  }

  private renderLegend(): void {
    const totals = this.data.series.map((s) => s.values.reduce<number>((a, v) => a + (v ?? 0), 0));
    const items = this.data.series.map((s, i) => {
      const st = seriesStyle(i);
      const sw = h('span', { class: 'chart-swatch' + (st.dash.length ? ' dashed' : '') });
      sw.style.background = st.dash.length ? 'transparent' : st.color;
      sw.style.borderColor = st.color;
      const b = h(
        'button',
        { class: 'chart-legend-item', type: 'button', 'aria-pressed': String(!this.hidden.has(i)), title: `Show or hide ${s.label}` },
        sw,
        h('span', { class: 'chart-legend-label' }, ...visibleNodes(s.label)),
      );
      b.dataset.total = String(totals[i]);
      b.addEventListener('click', () => this.toggle(i));
      return b;
    });
    this.legendEl.replaceChildren(...items);
  }

  private toggle(i: number): void {
    if (this.hidden.has(i)) this.hidden.delete(i);
    else this.hidden.add(i);
    this.u?.setSeries(i + 1, { show: !this.hidden.has(i) });
    this.renderLegend();
    this.renderTable();
  }

  private renderTable(): void {
    const head = h(
      'tr',
      {},
      h('th', { scope: 'col' }, this.opts.xLabel),
      ...this.data.series.map((s) => h('th', { scope: 'col' }, s.label)),
    );
    const body = this.data.x.map((_x, i) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row' }, this.bucketLabel(i)),
        ...this.data.series.map((s) => h('td', {}, s.values[i] === null || s.values[i] === undefined ? '—' : this.fmtY(s.values[i]!))),
      ),
    );
    this.tableEl.replaceChildren(
      h('caption', {}, `${this.opts.title} (${this.opts.yLabel})`),
      h('thead', {}, head),
      h('tbody', {}, ...body),
    );
  }

  private onKey(e: KeyboardEvent): void {
    const n = this.data.x.length;
    if (!n) return;
    const cur = this.cursorIdx ?? this.selectedIdx ?? 0;
    let next: number | null = null;
    switch (e.key) {
      case 'ArrowRight':
        next = cur + 1;
        break;
      case 'ArrowLeft':
        next = cur - 1;
        break;
      case 'PageDown':
        next = cur + 10;
        break;
      case 'PageUp':
        next = cur - 10;
        break;
      case 'Home':
        next = 0;
        break;
      case 'End':
        next = n - 1;
        break;
      case 'ArrowUp':
      case 'ArrowDown': {
        const visible = this.data.series.map((_s, k) => k).filter((k) => !this.hidden.has(k));
        if (!visible.length) return;
        const at = Math.max(0, visible.indexOf(this.cursorSeries));
        this.cursorSeries = visible[(at + (e.key === 'ArrowDown' ? 1 : visible.length - 1)) % visible.length];
        e.preventDefault();
        this.moveCursor(cur);
        this.liveEl.textContent = `${this.data.series[this.cursorSeries].label}. ${this.describe(cur)}`;
        return;
      }
      case 'Enter':
      case ' ':
        e.preventDefault();
        this.select(cur);
        return;
      default:
        return;
    }
    e.preventDefault();
    this.moveCursor(next);
  }
}

/** One CSV cell (RFC 4180: quoted when it holds a comma, quote or line break). */
export function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
