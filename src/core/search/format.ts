/**
 * Text forms of search results for the CLI and exports: the count JSON (the exact shape of
 * `count --json`), CSV, a text table with one sparkline per term, and keyword-in-context lines.
 * Pure functions; terms and context come from users and data, so callers that print to a
 * terminal pass the text through their terminal-safety helper.
 */
import { count, fmt } from '../units';
import { bucketShares, topTerms } from './share';
import { CountResult, Occurrence } from './types';

/**
 * The `count --json` object, keys in the documented order (`shares` per bucket only with
 * `withShares`: `bucketShares`, `null`s where no term occurred; `shards` and `dataset` only for a
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
    buckets: r.buckets.map((b) => ({
      first_update: b.first_update,
      last_update: b.last_update,
      tokens: b.tokens,
      counts: b.counts,
      ...(r.withShares ? { shares: bucketShares(b.counts) } : {}),
    })),
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

/**
 * CSV: `first_update,last_update,tokens,<term…>`, one row per bucket; with `withShares` then one
 * `share:<term>` column per term (empty where no term occurred in the bucket).
 */
export function countCsv(r: CountResult): string {
  const shareHead = r.withShares ? r.terms.map((t) => csvField(`share:${t}`)) : [];
  const lines = [['first_update', 'last_update', 'tokens', ...r.terms.map(csvField), ...shareHead].join(',')];
  for (const b of r.buckets) {
    const shares = r.withShares ? bucketShares(b.counts).map((x) => (x === null ? '' : String(x))) : [];
    lines.push([b.first_update, b.last_update, b.tokens, ...b.counts, ...shares].join(','));
  }
  return lines.join('\n') + '\n';
}

/** A share as a percentage for text (`31.2%`), `–` for no share. */
function percent(x: number | null): string {
  return x === null ? '–' : `${(x * 100).toFixed(1)}%`;
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
 * The text table: one row per bucket (updates, tokens, count per term, or with `withShares` the
 * share per term as a percentage, `–` where no term occurred), totals, and one sparkline per term
 * (occurrences per million tokens over the update axis). With `top`, the table is one line per
 * bucket listing its `top` terms with most occurrences (count and share) instead.
 * @param safe makes a term printable (e.g. the terminal-safety helper).
 * @param opts.top terms listed per bucket (≥ 1).
 */
export function countText(r: CountResult, safe: (s: string) => string = (s) => s, opts: { top?: number } = {}): string {
  const names = r.terms.map((t) => safe(t));
  const span = (b: { first_update: number; last_update: number }) => `${fmt(b.first_update)}–${fmt(b.last_update)}`;
  const tokens = r.buckets.reduce((s, b) => s + b.tokens, 0);
  const out: string[] = [];
  if (opts.top !== undefined) {
    const top = opts.top;
    const spans = r.buckets.map(span);
    const w = Math.max('updates'.length, ...spans.map((x) => x.length));
    const tw = Math.max('tokens'.length, ...r.buckets.map((b) => fmt(b.tokens).length));
    out.push(`${'updates'.padEnd(w)}  ${'tokens'.padStart(tw)}  top ${top} (occurrences, share)`);
    r.buckets.forEach((b, i) => {
      const shares = bucketShares(b.counts);
      const list = topTerms(b.counts, top).map((t) => `${names[t]} ${fmt(b.counts[t])} (${percent(shares[t])})`);
      out.push(`${spans[i].padEnd(w)}  ${fmt(b.tokens).padStart(tw)}  ${list.length ? list.join(' · ') : '–'}`);
    });
    const shares = bucketShares(r.totals);
    const list = topTerms(r.totals, top).map((t) => `${names[t]} ${fmt(r.totals[t])} (${percent(shares[t])})`);
    out.push(`${'total'.padEnd(w)}  ${fmt(tokens).padStart(tw)}  ${list.length ? list.join(' · ') : '–'}`, '');
  } else {
    const head = ['updates', 'tokens', ...names];
    const cells = (counts: number[]) => (r.withShares ? bucketShares(counts).map(percent) : counts.map(fmt));
    const rows = r.buckets.map((b) => [span(b), fmt(b.tokens), ...cells(b.counts)]);
    const total = ['total', fmt(tokens), ...cells(r.totals)];
    const widths = head.map((h, i) => Math.max(h.length, total[i].length, ...rows.map((row) => row[i].length)));
    const line = (c: string[]) => c.map((x, i) => (i === 0 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ');
    out.push(line(head), ...rows.map(line), line(total), '');
  }
  const flags = [r.options.word && 'whole word', r.options.ignore_case && 'ignore case', r.options.ids && 'token ids']
    .filter(Boolean)
    .join(', ');
  out.push(
    `${count(r.buckets.length, 'bucket')} of ${count(r.per, 'update')} over ${count(r.updates, 'update')}` +
      (r.shards ? `, shards ${r.shards[0]}:${r.shards[1]} only` : '') +
      (flags ? ` (${flags})` : '') +
      (r.withShares && opts.top === undefined ? '; cells are shares of the occurrences of all listed terms' : ''),
  );
  const nameWidth = Math.max(...names.map((n) => n.length));
  r.terms.forEach((_, t) => {
    const perM = tokens > 0 ? (r.totals[t] / tokens) * 1e6 : 0;
    out.push(
      `${names[t].padEnd(nameWidth)}  ${sparkline(r, t)}  ${fmt(r.totals[t])} (${perM.toFixed(perM < 10 ? 2 : 1)} per million tokens)`,
    );
  });
  if (r.order && r.not_read) {
    // Terms with occurrences no update read, up to 20 of them (a --terms-file may list 10,000).
    const unread = r.terms.map((_, t) => t).filter((t) => r.not_read![t] > 0);
    const list = unread.slice(0, 20).map((t) => `${names[t]} ${fmt(r.not_read![t])}`);
    if (unread.length > 20) list.push(`${fmt(unread.length - 20)} more terms`);
    out.push(
      `(${r.order} training order: counts per update that read each occurrence as an input; never read by the run: ${list.length ? list.join(', ') : 'none'})`,
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
