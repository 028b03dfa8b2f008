/**
 * `stats K1..K2 --shards A:B --json` parts and their merge. A part computes the records of the
 * updates of `K1..K2` whose **first token** lies in manifest entries A..B−1 (start_token order),
 * reading on into the next shard where an update crosses the edge. Every update belongs to exactly
 * one shard, so parts over ranges that tile the manifest hold every record once, each computed
 * whole on one machine: merging is putting the records in update order, never averaging. Shared
 * rules (dataset fingerprint, tiling) are in `parts.ts`.
 */
import type { Dataset } from './dataset';
import { PartDataset, PartsMismatchError, isObject, partChecker, tileShardRanges } from './parts';
import type { UpdateStats } from './stats';
import { fmt } from './units';

/**
 * The updates of `first..last` (inclusive, 0-based) whose first token (global offset G·k) lies in
 * manifest entries `[A, B)`: from the first update starting at or after entry A's start token to
 * the last starting before entry B's (or the end of the stream when B is the last entry).
 * @returns `[k1, k2]` inclusive, or undefined when no update of the range starts there.
 */
export function updatesStartingIn(
  ds: Pick<Dataset, 'schedule' | 'shards'>,
  first: number,
  last: number,
  shards: readonly [number, number],
): [number, number] | undefined {
  const G = ds.schedule.G;
  const [A, B] = shards;
  const k1 = Math.max(first, Math.ceil(ds.shards[A].startToken / G));
  const k2 = B < ds.shards.length ? Math.min(last, Math.ceil(ds.shards[B].startToken / G) - 1) : last;
  return k1 <= k2 ? [k1, k2] : undefined;
}

/**
 * A stats part as `stats K1..K2 --shards A:B --json` writes it:
 * `{"updates":[K1,K2],"shards":[A,B],"dataset":{…},"tokenizer":sha256|null,"records":[…]}`.
 */
export interface StatsPart {
  /** The whole range asked for, `[K1, K2]` inclusive. */
  updates: [number, number];
  /** Manifest entries `[A, B)`. */
  shards: [number, number];
  dataset: PartDataset;
  /** SHA-256 (hex) of the tokenizer.json used for `unknown_ids`/`special_ids`, or null without one. */
  tokenizer: string | null;
  /** The part's records, in update order (possibly none). */
  records: UpdateStats[];
}

/** The fields of a record, in the order `stats --json` writes them, with what each holds. */
const RECORD_FIELDS: [keyof UpdateStats, 'whole' | 'whole|null' | 'share|null' | 'number|null' | 'range' | 'top'][] = [
  ['update', 'whole'],
  ['token_range', 'range'],
  ['eos', 'whole'],
  ['documents_started', 'whole'],
  ['distinct_tokens', 'whole'],
  ['max_id', 'whole'],
  ['unknown_ids', 'whole|null'],
  ['special_ids', 'whole|null'],
  ['longest_eos_free_run', 'whole'],
  ['duplicate_sequences', 'whole'],
  ['top_token', 'top'],
  ['repeated_13grams', 'whole'],
  ['repeat_13gram_share', 'share|null'],
  ['complete_documents', 'whole'],
  ['mean_complete_document_length', 'number|null'],
];

/**
 * Checks one parsed part against the shape `stats K1..K2 --shards A:B --json` writes: every
 * record has exactly the fields of {@link UpdateStats} in their order, and the records are
 * consecutive updates inside `updates`.
 * @param label names the part in messages (its file).
 * @throws DataError `"<label>: field <path> is <value>; expected <what>"` for the first field that does not fit.
 */
export function parseStatsPart(value: unknown, label: string): StatsPart {
  const { fault, whole, datasetAndRange } = partChecker(label);
  if (!isObject(value)) return fault('(the whole file)', value, 'an object written by `stats K1..K2 --shards A:B --json`');
  const v = value;
  const { dataset, shards } = datasetAndRange(v, 'shards', 'stats K1..K2 --shards A:B --json');
  if (!Array.isArray(v.updates) || v.updates.length !== 2) fault('updates', v.updates, '[K1, K2], the range asked for');
  const u = v.updates as unknown[];
  const K1 = whole('updates[0]', u[0], 0);
  const K2 = whole('updates[1]', u[1], K1);
  if (v.tokenizer !== null && (typeof v.tokenizer !== 'string' || !/^[0-9a-f]{64}$/.test(v.tokenizer)))
    fault('tokenizer', v.tokenizer, '64 hexadecimal digits or null');
  if (!Array.isArray(v.records)) fault('records', v.records, 'an array of `stats --json` records');
  const records = (v.records as unknown[]).map((r, i) => {
    const at = `records[${i}]`;
    if (!isObject(r)) return fault(at, r, 'an object, as `stats --json` writes each update');
    const keys = Object.keys(r);
    if (keys.join() !== RECORD_FIELDS.map(([k]) => k).join()) fault(`${at} fields`, keys, RECORD_FIELDS.map(([k]) => k).join(', '));
    for (const [k, kind] of RECORD_FIELDS) {
      const x = r[k];
      const f = `${at}.${k}`;
      if (x === null && kind.endsWith('|null')) continue;
      switch (kind) {
        case 'whole':
        case 'whole|null':
          whole(f, x, 0);
          break;
        case 'share|null':
          if (!(typeof x === 'number' && x >= 0 && x <= 1)) fault(f, x, 'a number 0..1 or null');
          break;
        case 'number|null':
          if (!(typeof x === 'number' && x >= 0)) fault(f, x, 'a number ≥ 0 or null');
          break;
        case 'range': {
          if (!Array.isArray(x) || x.length !== 2) fault(f, x, '[start, end) global token offsets');
          const a = whole(`${f}[0]`, (x as unknown[])[0], 0);
          whole(`${f}[1]`, (x as unknown[])[1], a + 1);
          break;
        }
        case 'top':
          if (!isObject(x) || Object.keys(x).join() !== 'id,count') fault(f, x, '{"id","count"}');
          whole(`${f}.id`, (x as Record<string, unknown>).id, 0);
          whole(`${f}.count`, (x as Record<string, unknown>).count, 1);
      }
    }
    const expected = i === 0 ? undefined : (v.records as Record<string, number>[])[i - 1].update + 1;
    if (expected !== undefined ? r.update !== expected : (r.update as number) < K1)
      fault(
        `${at}.update`,
        r.update,
        expected !== undefined ? `${fmt(expected)} (records are consecutive updates)` : `at least ${fmt(K1)}`,
      );
    if ((r.update as number) > K2) fault(`${at}.update`, r.update, `at most ${fmt(K2)}, the last update asked for`);
    return r as unknown as UpdateStats;
  });
  return { updates: [K1, K2], shards, dataset, tokenizer: v.tokenizer as string | null, records };
}

/**
 * Merges checked stats parts of one dataset: the records of every update of `K1..K2`, in order,
 * each exactly as its part computed it.
 * @param labels names of the parts in messages (their files), same order.
 * @returns the records; equal to `stats K1..K2 --json` on one machine.
 * @throws PartsMismatchError naming the parts: nothing to merge, another dataset, overlapping or
 *   missing shard ranges, another update range or tokenizer, or records that do not cover `K1..K2`
 *   once each (a part that stopped early).
 */
export function mergeStatsParts(parts: readonly StatsPart[], labels: readonly string[]): UpdateStats[] {
  const { order } = tileShardRanges(parts, labels, { verb: 'computes' });
  const name = (i: number) => labels[i] ?? `part ${i + 1}`;
  const p0 = parts[0];
  parts.forEach((p, i) => {
    if (p.updates[0] !== p0.updates[0] || p.updates[1] !== p0.updates[1])
      throw new PartsMismatchError(
        `${name(i)} has updates ${p.updates[0]}..${p.updates[1]}, ${name(0)} ${p0.updates[0]}..${p0.updates[1]}`,
      );
    if (p.tokenizer !== p0.tokenizer)
      throw new PartsMismatchError(
        `${name(i)} was computed with ${p.tokenizer ? `tokenizer ${p.tokenizer.slice(0, 12)}…` : 'no tokenizer'}, ${name(0)} with ${p0.tokenizer ? `tokenizer ${p0.tokenizer.slice(0, 12)}…` : 'none'}`,
      );
  });
  const out: UpdateStats[] = [];
  let next = p0.updates[0];
  for (const i of order) {
    const r = parts[i].records;
    if (r.length && r[0].update !== next)
      throw new PartsMismatchError(
        `${name(i)} begins at update ${fmt(r[0].update)}; expected ${fmt(next)}: updates ${fmt(next)}..${fmt(r[0].update - 1)} are in no part`,
      );
    for (const s of r) out.push(s);
    next += r.length;
  }
  if (next !== p0.updates[1] + 1)
    throw new PartsMismatchError(`updates ${fmt(next)}..${fmt(p0.updates[1])} are in no part (a part stopped early: run it again)`);
  return out;
}
