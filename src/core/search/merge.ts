/**
 * Merging the results of `count --shards A:B --json` (the parts of a count split over machines)
 * into one, trusting nothing a part says without checking it:
 *
 * - {@link parseCountPart}: every field of a part against the shape `count` writes (terms,
 *   options, per, updates, buckets with their exact update ranges, counts and tokens as whole
 *   numbers 0..2^53−1, totals equal to the bucket sums, `shards` inside the dataset, the dataset
 *   fingerprint); a fault is one sentence naming the part, the field and what was expected.
 * - `datasetFingerprint` (`../parts.ts`, re-exported): what every part carries about the dataset it
 *   counted, so parts of different datasets are refused.
 * - {@link mergeCounts}: the parts must tile the dataset's whole shard range `[0, N)` (or, with
 *   `allowPartial`, any disjoint set of ranges, the missing ones listed); counts, totals and bucket
 *   tokens are summed, and a sum past 2^53−1 is refused rather than rounded. When any part has
 *   shares (`count --share`), so does the result: recomputed from the summed counts.
 */
import { MAX_EXACT, isObject, partChecker, tileShardRanges } from '../parts';
import { fmt } from '../units';
import { CountBucket, CountResult, MAX_TERMS, SearchInputError } from './types';

export { datasetFingerprint } from '../parts';

/**
 * Checks one parsed part against the shape `count --shards A:B --json` writes.
 * @param label names the part in messages (its file).
 * @returns the part, typed.
 * @throws DataError `"<label>: field <path> is <value>; expected <what>"` for the first field
 *   that does not fit.
 */
export function parseCountPart(value: unknown, label: string): CountResult {
  const { fault, whole, datasetAndRange } = partChecker(label);
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
  const { dataset, shards } = datasetAndRange(v, 'shards', 'count --shards A:B --json');
  return {
    terms: terms as string[],
    options: { word: o.word as boolean, ignore_case: o.ignore_case as boolean, ids: o.ids as boolean },
    per,
    updates,
    buckets,
    totals,
    shards,
    dataset,
    ...(withShares ? { withShares } : {}),
  };
}

/**
 * Adds checked parts ({@link parseCountPart}) of one dataset into one result.
 * @param labels names of the parts in messages (their files), same order.
 * @param opts.allowPartial accept parts that leave shard ranges uncovered (listed in the result's
 *   `missingShards`, in order); without it, the parts must tile `[0, dataset.shards)`.
 * @returns the sum; its `shards` is `[first A, last B]` of the parts.
 * @throws PartsMismatchError (`../parts.ts`) for parts of different datasets, overlapping ranges or
 *   missing ranges (without `allowPartial`); SearchInputError naming the parts for nothing to
 *   merge, other terms, options, `per` or updates, or a sum past 2^53−1.
 */
export function mergeCounts(parts: readonly CountResult[], labels: readonly string[], opts: { allowPartial?: boolean } = {}): CountResult {
  if (parts.length === 0) throw new SearchInputError('nothing to merge');
  const name = (i: number) => labels[i] ?? `part ${i + 1}`;
  const first = parts[0];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const ranges = parts.map((p, i) => {
    if (!p.dataset || !p.shards) throw new SearchInputError(`${name(i)} is not a checked part (no dataset or shards)`);
    return { dataset: p.dataset, shards: p.shards };
  });
  const { missing, order } = tileShardRanges(ranges, labels, { allowPartial: opts.allowPartial, verb: 'counts', redo: 'count them too' });
  parts.forEach((p, i) => {
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
  const result: CountResult = {
    terms: [...first.terms],
    options: { ...first.options },
    per: first.per,
    updates: first.updates,
    buckets: first.buckets.map((b) => ({ ...b, tokens: 0, counts: b.counts.map(() => 0) })),
    totals: first.totals.map(() => 0),
    shards: [ranges[order[0]].shards[0], ranges[order[order.length - 1]].shards[1]],
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
