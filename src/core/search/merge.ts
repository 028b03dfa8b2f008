/**
 * Merging the results of `count --shards A:B --json` (the parts of a count split over machines)
 * into one, trusting nothing a part says without checking it:
 *
 * - {@link parseCountPart}: every field of a part against the shape `count` writes (terms,
 *   options, per, updates, buckets with their exact update ranges, counts and tokens as whole
 *   numbers 0..2^53−1, totals equal to the bucket sums, `shards` inside the dataset, the dataset
 *   fingerprint); a fault is one sentence naming the part, the field and what was expected.
 * - {@link datasetFingerprint}: what every part carries about the dataset it counted (the stream
 *   as the manifest describes it and the schedule), so parts of different datasets are refused.
 * - {@link mergeCounts}: the parts must tile the dataset's whole shard range `[0, N)` (or, with
 *   `allowPartial`, any disjoint set of ranges, the missing ones listed); counts, totals and bucket
 *   tokens are summed, and a sum past 2^53−1 is refused rather than rounded. When any part has
 *   shares (`count --share`), so does the result: recomputed from the summed counts.
 */
import * as crypto from 'crypto';
import type { Dataset } from '../dataset';
import { DataError } from '../errors';
import { fmt } from '../units';
import { CountBucket, CountResult, MAX_TERMS, SearchInputError } from './types';

/**
 * The fingerprint of a dataset's token stream: SHA-256 (hex) over the schedule settings (G, L,
 * EOS) and every manifest entry in `start_token` order (`shard` as written, start, tokens,
 * sha256 when the line has one). The same on every machine that mounts the dataset (no paths,
 * inodes or mtimes), different when the manifest or schedule differs.
 */
export function datasetFingerprint(ds: Pick<Dataset, 'settings' | 'shards'>): string {
  const h = crypto.createHash('sha256');
  const s = ds.settings;
  h.update(`token-shard-inspector dataset\tG=${s.globalTokensPerUpdate}\tL=${s.sequenceLength}\teos=${s.eosTokenId}`);
  for (const e of ds.shards) h.update(`\n${JSON.stringify(e.shard)}\t${e.startToken}\t${e.numTokens}\t${e.sha256 ?? ''}`);
  return h.digest('hex');
}

/** Largest count a part may hold: beyond it JSON numbers are not exact. */
const MAX_EXACT = Number.MAX_SAFE_INTEGER;

/** A JSON value as a short text for messages (at most 60 characters). */
function shown(v: unknown): string {
  if (v === undefined) return 'missing';
  // Past 2^53−1 the parsed number is already rounded (2^53+1 reads as 2^53): say so, not which.
  const t = typeof v === 'number' && Math.abs(v) > MAX_EXACT ? `a number beyond ${v < 0 ? '−' : ''}2^53−1` : JSON.stringify(v);
  return t.length > 60 ? `${t.slice(0, 57)}…` : t;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Checks one parsed part against the shape `count --shards A:B --json` writes.
 * @param label names the part in messages (its file).
 * @returns the part, typed.
 * @throws DataError `"<label>: field <path> is <value>; expected <what>"` for the first field
 *   that does not fit.
 */
export function parseCountPart(value: unknown, label: string): CountResult {
  const fault = (field: string, v: unknown, expected: string): never => {
    throw new DataError(`${label}: field ${field} is ${shown(v)}; expected ${expected}`, label);
  };
  const whole = (field: string, v: unknown, min: number, max = MAX_EXACT): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      fault(field, v, `a whole number ${fmt(min)}..${max === MAX_EXACT ? '2^53−1' : fmt(max)}`);
    return v as number;
  };
  if (!isObject(value)) return fault('(the whole file)', value, 'an object written by `count --shards A:B --json`');
  const v = value;
  if (!Array.isArray(v.terms) || v.terms.length < 1 || v.terms.length > MAX_TERMS)
    fault('terms', v.terms, `an array of 1..${MAX_TERMS} terms`);
  const terms = v.terms as unknown[];
  terms.forEach((t, i) => {
    if (typeof t !== 'string' || t.length === 0) fault(`terms[${i}]`, t, 'a non-empty string');
  });
  if (!isObject(v.options)) fault('options', v.options, 'an object {"word","ignore_case","ids"}');
  const o = v.options as Record<string, unknown>;
  for (const k of ['word', 'ignore_case', 'ids']) if (typeof o[k] !== 'boolean') fault(`options.${k}`, o[k], 'true or false');
  const per = whole('per', v.per, 1);
  const updates = whole('updates', v.updates, 0);
  const nBuckets = Math.ceil(updates / per);
  if (!Array.isArray(v.buckets) || v.buckets.length !== nBuckets)
    fault(
      'buckets',
      Array.isArray(v.buckets) ? `an array of ${v.buckets.length}` : v.buckets,
      `${fmt(nBuckets)} buckets (${fmt(updates)} updates, ${fmt(per)} per bucket)`,
    );
  const totals = new Array<number>(terms.length).fill(0);
  const b0 = (v.buckets as unknown[])[0];
  const withShares = isObject(b0) && 'shares' in b0;
  const buckets: CountBucket[] = (v.buckets as unknown[]).map((b, i) => {
    const at = `buckets[${i}]`;
    if (!isObject(b)) return fault(at, b, 'an object {"first_update","last_update","tokens","counts"}');
    const first = i * per,
      last = Math.min(updates, first + per) - 1;
    if (b.first_update !== first) fault(`${at}.first_update`, b.first_update, `${fmt(first)}`);
    if (b.last_update !== last) fault(`${at}.last_update`, b.last_update, `${fmt(last)}`);
    const tokens = whole(`${at}.tokens`, b.tokens, 0);
    if (!Array.isArray(b.counts) || b.counts.length !== terms.length)
      fault(`${at}.counts`, b.counts, `an array of ${terms.length} counts (one per term)`);
    const counts = (b.counts as unknown[]).map((c, t) => {
      const n = whole(`${at}.counts[${t}]`, c, 0);
      totals[t] += n;
      return n;
    });
    // Shares (`count --share`) are derived from the counts and recomputed on output: only their shape is checked.
    if ('shares' in b !== withShares)
      fault(`${at}.shares`, b.shares, withShares ? 'shares, as buckets[0] has' : 'no shares, as buckets[0] has none');
    if (withShares) {
      const sh = b.shares;
      if (!Array.isArray(sh) || sh.length !== terms.length) fault(`${at}.shares`, sh, `an array of ${terms.length} shares (one per term)`);
      (sh as unknown[]).forEach((x, t) => {
        if (x !== null && (typeof x !== 'number' || !(x >= 0 && x <= 1))) fault(`${at}.shares[${t}]`, x, 'a number 0..1 or null');
      });
    }
    return { first_update: first, last_update: last, tokens, counts };
  });
  if (!Array.isArray(v.totals) || v.totals.length !== terms.length)
    fault('totals', v.totals, `an array of ${terms.length} counts (one per term)`);
  (v.totals as unknown[]).forEach((c, t) => {
    whole(`totals[${t}]`, c, 0);
    if (c !== totals[t]) fault(`totals[${t}]`, c, `${fmt(totals[t])}, the sum of the buckets' counts`);
  });
  // Counts through a training order are never parts (`count` refuses --shards with one).
  if (v.order !== undefined) fault('order', v.order, 'absent: a count through a training order covers the whole stream and is not merged');
  if (!isObject(v.dataset))
    fault('dataset', v.dataset, '{"fingerprint","shards"} as `count --shards A:B --json` writes it (count the part again)');
  const d = v.dataset as Record<string, unknown>;
  if (typeof d.fingerprint !== 'string' || !/^[0-9a-f]{64}$/.test(d.fingerprint))
    fault('dataset.fingerprint', d.fingerprint, '64 hexadecimal digits');
  const n = whole('dataset.shards', d.shards, 1);
  if (!Array.isArray(v.shards) || v.shards.length !== 2) fault('shards', v.shards, `[A, B] with 0 ≤ A < B ≤ ${fmt(n)}`);
  const sh = v.shards as unknown[];
  const A = whole('shards[0]', sh[0], 0, n - 1);
  const B = whole('shards[1]', sh[1], A + 1, n);
  return {
    terms: terms as string[],
    options: { word: o.word as boolean, ignore_case: o.ignore_case as boolean, ids: o.ids as boolean },
    per,
    updates,
    buckets,
    totals,
    shards: [A, B],
    dataset: { fingerprint: d.fingerprint as string, shards: n },
    ...(withShares ? { withShares } : {}),
  };
}

/**
 * Adds checked parts ({@link parseCountPart}) of one dataset into one result.
 * @param labels names of the parts in messages (their files), same order.
 * @param opts.allowPartial accept parts that leave shard ranges uncovered (listed in the result's
 *   `missingShards`, in order); without it, the parts must tile `[0, dataset.shards)`.
 * @returns the sum; its `shards` is `[first A, last B]` of the parts.
 * @throws SearchInputError naming the parts: nothing to merge, parts of different datasets, other
 *   terms, options, `per` or updates, overlapping ranges, missing ranges (without `allowPartial`),
 *   or a sum past 2^53−1.
 */
export function mergeCounts(parts: readonly CountResult[], labels: readonly string[], opts: { allowPartial?: boolean } = {}): CountResult {
  if (parts.length === 0) throw new SearchInputError('nothing to merge');
  const name = (i: number) => labels[i] ?? `part ${i + 1}`;
  const first = parts[0];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  parts.forEach((p, i) => {
    if (!p.dataset || !p.shards) throw new SearchInputError(`${name(i)} is not a checked part (no dataset or shards)`);
    if (p.dataset.fingerprint !== first.dataset!.fingerprint || p.dataset.shards !== first.dataset!.shards)
      throw new SearchInputError(
        `${name(i)} counts another dataset than ${name(0)} (fingerprint ${p.dataset.fingerprint.slice(0, 12)}… of ${fmt(p.dataset.shards)} shards, ${name(0)} ${first.dataset!.fingerprint.slice(0, 12)}… of ${fmt(first.dataset!.shards)})`,
      );
    if (!same(p.terms, first.terms))
      throw new SearchInputError(
        `${name(i)} counts other terms (${JSON.stringify(p.terms)}) than ${name(0)} (${JSON.stringify(first.terms)})`,
      );
    if (!same(p.options, first.options))
      throw new SearchInputError(
        `${name(i)} has other options (${JSON.stringify(p.options)}) than ${name(0)} (${JSON.stringify(first.options)})`,
      );
    if (p.per !== first.per) throw new SearchInputError(`${name(i)} has --per ${p.per}, ${name(0)} has ${first.per}`);
    // Same dataset fingerprint, other updates: the schedule's run length differed (e.g. --updates).
    if (p.updates !== first.updates)
      throw new SearchInputError(
        `${name(i)} covers ${fmt(p.updates)} updates, ${name(0)} ${fmt(first.updates)}: counted with other schedules`,
      );
  });
  const n = first.dataset!.shards;
  const order = parts.map((p, i) => ({ i, s: p.shards! })).sort((x, y) => x.s[0] - y.s[0] || x.s[1] - y.s[1]);
  const missing: [number, number][] = [];
  let covered = 0;
  for (let k = 0; k < order.length; k++) {
    const { i, s } = order[k];
    if (k > 0 && s[0] < order[k - 1].s[1]) {
      const a = order[k - 1];
      throw new SearchInputError(`${name(a.i)} (shards ${a.s[0]}:${a.s[1]}) and ${name(i)} (shards ${s[0]}:${s[1]}) overlap`);
    }
    if (s[0] > covered) missing.push([covered, s[0]]);
    covered = s[1];
  }
  if (covered < n) missing.push([covered, n]);
  if (missing.length && !opts.allowPartial)
    throw new SearchInputError(
      `shards ${missing.map(([a, b]) => `${a}:${b}`).join(', ')} of the dataset's 0:${n} are in no part; count them too, or pass --allow-partial`,
    );
  const result: CountResult = {
    terms: [...first.terms],
    options: { ...first.options },
    per: first.per,
    updates: first.updates,
    buckets: first.buckets.map((b) => ({ ...b, tokens: 0, counts: b.counts.map(() => 0) })),
    totals: first.totals.map(() => 0),
    shards: [order[0].s[0], order[order.length - 1].s[1]],
    dataset: { ...first.dataset! },
    ...(missing.length ? { missingShards: missing } : {}),
    // Shares are recomputed from the merged counts on output, never averaged over parts.
    ...(parts.some((p) => p.withShares) ? { withShares: true } : {}),
  };
  const add = (a: number, b: number, what: string): number => {
    const s = a + b;
    if (s > MAX_EXACT) throw new SearchInputError(`the merged ${what} pass 2^53−1 (JSON numbers are not exact beyond it)`);
    return s;
  };
  for (const p of parts) {
    p.buckets.forEach((b, bi) => {
      const o = result.buckets[bi];
      o.tokens = add(o.tokens, b.tokens, `tokens of bucket ${bi}`);
      b.counts.forEach((c, t) => (o.counts[t] = add(o.counts[t], c, `counts of bucket ${bi}`)));
    });
    p.totals.forEach((c, t) => (result.totals[t] = add(result.totals[t], c, `totals of term ${t + 1}`)));
  }
  return result;
}
