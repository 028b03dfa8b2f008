/**
 * A terms × buckets heatmap on one canvas (one pixel per cell in an offscreen image, scaled up
 * without smoothing: no DOM node per cell, so 1,000 terms × 400 buckets draw in one `drawImage`).
 *
 * - **Theme**: colours only from `--vscode-*` variables: each cell interpolates between
 *   `--vscode-editor-background` (0) and `--vscode-charts-blue` (the largest value); a cell with no
 *   value keeps the background with no tint; labels in `--vscode-foreground`.
 * - **Keyboard**: the canvas is one tab stop; arrow keys move the focused cell (Home/End: first/last
 *   bucket), Enter opens it (the same as a click); the focused cell is announced in a live region.
 * - **Screen readers**: a visually hidden `<table>` (a row per term: its total, peak bucket and
 *   largest value) summarizes the picture.
 * - **Export**: {@link Heatmap.toPng} (a data URL) and {@link heatmapCsv} (cell values, the
 *   panel's CSV export).
 */
import type { HeatmapModel } from '../../src/core/search/heatmap';
import { h } from '../common';
import { cssVar } from './chart';

/** What the heatmap draws: the model, the terms and how to name buckets and values. */
export interface HeatmapData {
  model: HeatmapModel;
  terms: string[];
  totals: number[];
  bucketLabel: (b: number) => string;
  formatValue: (v: number) => string;
}

const LABEL_W = 140;

/** Parses any CSS colour to [r, g, b] through a canvas (the browser's own parser). */
function rgb(color: string): [number, number, number] {
  const c = document.createElement('canvas');
  c.width = c.height = 1;
  const ctx = c.getContext('2d')!;
  ctx.fillStyle = color;
  ctx.fillRect(0, 0, 1, 1);
  const d = ctx.getImageData(0, 0, 1, 1).data;
  return [d[0], d[1], d[2]];
}

/** The heatmap view of the search panel. */
export class Heatmap {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly liveEl: HTMLElement;
  private readonly tableEl: HTMLElement;
  private data?: HeatmapData;
  /** Focused cell: row (position in `model.rows`) and bucket. */
  private focus = { row: 0, bucket: 0 };

  /** @param onOpen called with (bucket, term index) when a cell is clicked or Enter is pressed on it. */
  constructor(private readonly onOpen: (bucket: number, term: number) => void) {
    this.canvas = h('canvas', {
      class: 'heatmap-canvas',
      tabindex: 0,
      role: 'img',
      'aria-label': 'Heatmap of terms by bucket: arrow keys move, Enter lists the occurrences',
    }) as HTMLCanvasElement;
    this.liveEl = h('div', { class: 'visually-hidden', 'aria-live': 'polite' });
    this.tableEl = h('table', { class: 'visually-hidden heatmap-table' });
    this.element = h('div', { class: 'heatmap' }, this.canvas, this.liveEl, this.tableEl);
    this.canvas.addEventListener('click', (e) => {
      const cell = this.cellAt(e.offsetX, e.offsetY);
      if (!cell) return;
      this.focus = cell;
      this.draw();
      this.open();
    });
    this.canvas.addEventListener('keydown', (e) => this.onKey(e));
    new ResizeObserver(() => this.draw()).observe(this.element);
  }

  /** Shows new data (keeps the focused cell when it still exists). */
  setData(d: HeatmapData): void {
    this.data = d;
    const rows = d.model.rows.length,
      nb = d.model.buckets;
    this.focus = { row: Math.min(this.focus.row, Math.max(0, rows - 1)), bucket: Math.min(this.focus.bucket, Math.max(0, nb - 1)) };
    this.draw();
    this.fillTable();
  }

  private geometry() {
    const d = this.data!;
    const rows = d.model.rows.length;
    const rowH = Math.max(2, Math.min(18, Math.floor(480 / Math.max(1, rows))));
    const width = Math.max(LABEL_W + 50, this.element.clientWidth || 600);
    const cellW = (width - LABEL_W) / Math.max(1, d.model.buckets);
    return { rows, rowH, width, height: rows * rowH + 20, cellW };
  }

  private cellAt(x: number, y: number): { row: number; bucket: number } | undefined {
    if (!this.data) return undefined;
    const g = this.geometry();
    if (x < LABEL_W || y >= g.rows * g.rowH) return undefined;
    const bucket = Math.min(this.data.model.buckets - 1, Math.floor((x - LABEL_W) / g.cellW));
    return { row: Math.floor(y / g.rowH), bucket };
  }

  /** Draws the cells, the labels (when rows are tall enough) and the focused cell. */
  private draw(): void {
    const d = this.data;
    if (!d) return;
    const { model } = d;
    const g = this.geometry();
    const ratio = window.devicePixelRatio || 1;
    this.canvas.style.width = `${g.width}px`;
    this.canvas.style.height = `${g.height}px`;
    this.canvas.width = Math.round(g.width * ratio);
    this.canvas.height = Math.round(g.height * ratio);
    const ctx = this.canvas.getContext('2d')!;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    const bg = cssVar('--vscode-editor-background', '#1e1e1e');
    ctx.fillStyle = bg;
    ctx.fillRect(0, 0, g.width, g.height);
    const nb = model.buckets;
    if (g.rows > 0 && nb > 0) {
      const [r0, g0, b0] = rgb(bg);
      const [r1, g1, b1] = rgb(cssVar('--vscode-charts-blue', '#3794ff'));
      const img = new ImageData(nb, g.rows);
      model.rows.forEach((t, row) => {
        for (let b = 0; b < nb; b++) {
          const v = model.values[t * nb + b];
          const f = Number.isNaN(v) || model.max === 0 ? 0 : v / model.max;
          const k = (row * nb + b) * 4;
          img.data[k] = r0 + (r1 - r0) * f;
          img.data[k + 1] = g0 + (g1 - g0) * f;
          img.data[k + 2] = b0 + (b1 - b0) * f;
          img.data[k + 3] = 255;
        }
      });
      const off = document.createElement('canvas');
      off.width = nb;
      off.height = g.rows;
      off.getContext('2d')!.putImageData(img, 0, 0);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(off, LABEL_W, 0, g.width - LABEL_W, g.rows * g.rowH);
    }
    const fg = cssVar('--vscode-foreground', '#cccccc');
    const font = cssVar('--vscode-font-family', 'sans-serif');
    ctx.fillStyle = fg;
    ctx.textBaseline = 'middle';
    if (g.rowH >= 10) {
      ctx.font = `${Math.min(12, g.rowH - 2)}px ${font}`;
      model.rows.forEach((t, row) => {
        let label = d.terms[t];
        while (label.length > 1 && ctx.measureText(label).width > LABEL_W - 8) label = label.slice(0, -2) + '…';
        ctx.fillText(label, 4, row * g.rowH + g.rowH / 2);
      });
    }
    ctx.font = `11px ${font}`;
    ctx.fillText(d.bucketLabel(0), LABEL_W, g.rows * g.rowH + 10);
    const last = d.bucketLabel(nb - 1);
    ctx.fillText(last, Math.max(LABEL_W + 120, g.width - ctx.measureText(last).width - 2), g.rows * g.rowH + 10);
    if (document.activeElement === this.canvas && g.rows > 0) {
      ctx.strokeStyle = cssVar('--vscode-focusBorder', fg);
      ctx.lineWidth = 2;
      ctx.strokeRect(LABEL_W + this.focus.bucket * g.cellW, this.focus.row * g.rowH, Math.max(2, g.cellW), g.rowH);
    }
  }

  private onKey(e: KeyboardEvent): void {
    const d = this.data;
    if (!d || d.model.rows.length === 0) return;
    const f = { ...this.focus };
    switch (e.key) {
      case 'ArrowUp':
        f.row--;
        break;
      case 'ArrowDown':
        f.row++;
        break;
      case 'ArrowLeft':
        f.bucket--;
        break;
      case 'ArrowRight':
        f.bucket++;
        break;
      case 'Home':
        f.bucket = 0;
        break;
      case 'End':
        f.bucket = d.model.buckets - 1;
        break;
      case 'Enter':
        e.preventDefault();
        this.open();
        return;
      default:
        return;
    }
    e.preventDefault();
    this.focus = {
      row: Math.max(0, Math.min(d.model.rows.length - 1, f.row)),
      bucket: Math.max(0, Math.min(d.model.buckets - 1, f.bucket)),
    };
    this.draw();
    this.liveEl.textContent = this.describe();
  }

  /** The focused cell in words: term, bucket and value. */
  private describe(): string {
    const d = this.data!;
    const t = d.model.rows[this.focus.row];
    const v = d.model.values[t * d.model.buckets + this.focus.bucket];
    return `${d.terms[t]}, ${d.bucketLabel(this.focus.bucket)}: ${Number.isNaN(v) ? 'no value' : d.formatValue(v)}`;
  }

  private open(): void {
    const d = this.data;
    if (!d || d.model.rows.length === 0) return;
    this.onOpen(this.focus.bucket, d.model.rows[this.focus.row]);
  }

  private fillTable(): void {
    const d = this.data!;
    const nb = d.model.buckets;
    const head = h('tr', {}, h('th', {}, 'term'), h('th', {}, 'total'), h('th', {}, 'peak bucket'), h('th', {}, 'peak value'));
    const rows = d.model.rows.map((t) => {
      const p = d.model.peak[t];
      return h(
        'tr',
        {},
        h('th', {}, d.terms[t]),
        h('td', {}, String(d.totals[t])),
        h('td', {}, p < 0 ? 'none' : d.bucketLabel(p)),
        h('td', {}, p < 0 ? '–' : d.formatValue(d.model.values[t * nb + p])),
      );
    });
    this.tableEl.replaceChildren(h('caption', {}, 'Terms in heatmap order, with where each peaks'), head, ...rows);
  }

  /** The heatmap as a `data:image/png;base64,…` URL (as drawn, theme background included). */
  toPng(): string {
    if (!this.data) throw new Error('the heatmap has not been drawn yet');
    return this.canvas.toDataURL('image/png');
  }
}

/**
 * The heatmap's cells as CSV: a header `term,total,<bucket first_update…>`, then one row per term
 * in heatmap order with its cell values (empty for no value).
 * @param firstUpdates first update of each bucket (column names).
 */
export function heatmapCsv(d: Pick<HeatmapData, 'model' | 'terms' | 'totals'>, firstUpdates: number[]): string {
  const cell = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const nb = d.model.buckets;
  const lines = [['term', 'total', ...firstUpdates.map((u) => `update ${u}`)].map(cell).join(',')];
  for (const t of d.model.rows) {
    const vals: string[] = [];
    for (let b = 0; b < nb; b++) {
      const v = d.model.values[t * nb + b];
      vals.push(Number.isNaN(v) ? '' : String(v));
    }
    lines.push([cell(d.terms[t]), String(d.totals[t]), ...vals].join(','));
  }
  return lines.join('\r\n') + '\r\n';
}
