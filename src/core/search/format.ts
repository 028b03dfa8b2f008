/**
 * Text forms of search results for the CLI and exports: the count JSON (the exact shape of
 * `count --json`), CSV, a text table with one sparkline per term, and keyword-in-context lines.
 * Pure functions; terms and context come from users and data, so callers that print to a
 * terminal pass the text through their terminal-safety helper.
 */
import { count, fmt } from '../units';
import { CountResult, Occurrence } from './types';

/**
 * The `count --json` object, keys in the documented order (`shards` and `dataset` only for a
 * part; `order` and `not_read` only when counted through a run's training order;
 * `missing_shards` only for a partial merge).
 * @param stringify how to write it (the CLI passes its `jsonSafe`, which also escapes DEL, C1 and bidi controls).
 */
export function countJson(r: CountResult, stringify: (value: unknown) => string = JSON.stringify): string {
  const o: Record<string, unknown> = {
    terms: r.terms,
    options: { word: r.options.word, ignore_case: r.options.ignore_case, ids: r.options.ids },
    per: r.per,
    updates: r.updates,
    buckets: r.buckets.map((b) => ({ first_update: b.first_update, last_update: b.last_update, tokens: b.tokens, counts: b.counts })),
    totals: r.totals,
  };
  if (r.shards) o.shards = [r.shards[0], r.shards[1]];
  if (r.order) {
    o.order = r.order;
    o.not_read = r.not_read;
  }
  if (r.dataset) o.dataset = { fingerprint: r.dataset.fingerprint, shards: r.dataset.shards };
  if (r.missingShards?.length) o.missing_shards = r.missingShards.map(([a, b]) => [a, b]);
  return stringify(o);
}

function csvField(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** CSV: `first_update,last_update,tokens,<term…>`, one row per bucket. */
export function countCsv(r: CountResult): string {
  const lines = [['first_update', 'last_update', 'tokens', ...r.terms.map(csvField)].join(',')];
  for (const b of r.buckets) lines.push([b.first_update, b.last_update, b.tokens, ...b.counts].join(','));
  return lines.join('\n') + '\n';
}

const BARS = '▁▂▃▄▅▆▇█';

/**
 * One line of block characters: occurrences per token of each group of buckets (at most
 * `width` groups), scaled to the line's maximum; a blank for a group with no tokens.
 */
export function sparkline(r: CountResult, term: number, width = 80): string {
  const n = r.buckets.length;
  if (n === 0) return '';
  const groups = Math.min(width, n);
  const rates: number[] = [];
  for (let g = 0; g < groups; g++) {
    const from = Math.floor((g * n) / groups),
      to = Math.floor(((g + 1) * n) / groups);
    let c = 0,
      t = 0;
    for (let i = from; i < to; i++) {
      c += r.buckets[i].counts[term];
      t += r.buckets[i].tokens;
    }
    rates.push(t > 0 ? c / t : NaN);
  }
  const max = Math.max(0, ...rates.filter((x) => !Number.isNaN(x)));
  return rates
    .map((x) => (Number.isNaN(x) ? ' ' : max === 0 || x === 0 ? '▁' : BARS[Math.min(7, 1 + Math.floor((x / max) * 6.999))]))
    .join('');
}

/**
 * The text table: one row per bucket (updates, tokens, count per term), totals, and one
 * sparkline per term (occurrences per million tokens over the update axis).
 * @param safe makes a term printable (e.g. the terminal-safety helper).
 */
export function countText(r: CountResult, safe: (s: string) => string = (s) => s): string {
  const names = r.terms.map((t) => safe(t));
  const head = ['updates', 'tokens', ...names];
  const rows = r.buckets.map((b) => [`${fmt(b.first_update)}–${fmt(b.last_update)}`, fmt(b.tokens), ...b.counts.map(fmt)]);
  const tokens = r.buckets.reduce((s, b) => s + b.tokens, 0);
  const total = ['total', fmt(tokens), ...r.totals.map(fmt)];
  const widths = head.map((h, i) => Math.max(h.length, total[i].length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const out = [line(head), ...rows.map(line), line(total), ''];
  const opts = [r.options.word && 'whole word', r.options.ignore_case && 'ignore case', r.options.ids && 'token ids']
    .filter(Boolean)
    .join(', ');
  out.push(
    `${count(r.buckets.length, 'bucket')} of ${count(r.per, 'update')} over ${count(r.updates, 'update')}` +
      (r.shards ? `, shards ${r.shards[0]}:${r.shards[1]} only` : '') +
      (opts ? ` (${opts})` : ''),
  );
  const nameWidth = Math.max(...names.map((n) => n.length));
  r.terms.forEach((_, t) => {
    const perM = tokens > 0 ? (r.totals[t] / tokens) * 1e6 : 0;
    out.push(
      `${names[t].padEnd(nameWidth)}  ${sparkline(r, t)}  ${fmt(r.totals[t])} (${perM.toFixed(perM < 10 ? 2 : 1)} per million tokens)`,
    );
  });
  if (r.order && r.not_read) {
    out.push(
      `(${r.order} training order: counts per update that read each occurrence as an input; never read by the run: ${r.not_read.map((c, t) => `${names[t]} ${fmt(c)}`).join(', ')})`,
    );
  }
  return out.join('\n') + '\n';
}

/**
 * The `find --json` line of an occurrence.
 * @param stringify how to write it (the CLI passes its `jsonSafe`).
 */
export function occurrenceJson(o: Occurrence, stringify: (value: unknown) => string = JSON.stringify): string {
  return stringify({
    term: o.term,
    offset: o.offset,
    update: o.update,
    sequence: o.sequence,
    position: o.position,
    context: o.context,
  });
}

/**
 * A keyword-in-context line: `update 12,004 · seq 17 · pos 300 · 1,573,421,110 │ …and then [Lily] ran to…`.
 * @param safe makes data text printable (newlines and control characters become visible marks).
 */
export function occurrenceText(o: Occurrence, safe: (s: string) => string = (s) => s): string {
  const where = o.update === null ? 'look-ahead' : `update ${fmt(o.update)} · seq ${fmt(o.sequence!)} · pos ${fmt(o.position!)}`;
  const pre = o.context.slice(0, o.matchStart),
    mid = o.context.slice(o.matchStart, o.matchEnd),
    post = o.context.slice(o.matchEnd);
  return `${where} · ${fmt(o.offset)} │ …${safe(pre)}[${safe(mid)}]${safe(post)}…`;
}
