/**
 * What every kind of part has in common: the JSON a command writes for one shard range of a
 * dataset (`count|verify|stats … --shards A:B --json`, one per task of a cluster job array) and
 * `token-shards merge` adds into one result. Each kind has its own checker and merge
 * (`search/merge.ts`, `verify/parts.ts`, `statsParts.ts`); here are the rules they share:
 *
 * - {@link datasetFingerprint}: what a part carries about the dataset, so parts of different
 *   datasets are refused;
 * - {@link partChecker}: field checks with one-sentence faults naming the part, the field and what
 *   was expected;
 * - {@link tileShardRanges}: the parts' shard ranges must not overlap and must cover `[0, N)`;
 * - {@link partKind}: which command wrote a part, from its fields.
 */
import * as crypto from 'crypto';
import type { Dataset } from './dataset';
import { DataError, RangeRequestError } from './errors';
import { fmt } from './units';

/**
 * Parts that do not fit together (other datasets, overlapping or missing shard ranges, parts of
 * different commands or options). One line; the CLI exits 2 (a kind of {@link RangeRequestError}).
 */
export class PartsMismatchError extends RangeRequestError {
  constructor(message: string) {
    super(message);
    this.name = 'PartsMismatchError';
  }
}

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

/** The dataset a part belongs to, as parts write it: `"dataset": {"fingerprint", "shards"}` (shards = manifest entries). */
export interface PartDataset {
  fingerprint: string;
  shards: number;
}

/** Largest whole number a part may hold: beyond it JSON numbers are not exact. */
export const MAX_EXACT = Number.MAX_SAFE_INTEGER;

/** A JSON value as a short text for messages (at most 60 characters). */
function shown(v: unknown): string {
  if (v === undefined) return 'missing';
  // Past 2^53−1 the parsed number is already rounded (2^53+1 reads as 2^53): say so, not which.
  const t = typeof v === 'number' && Math.abs(v) > MAX_EXACT ? `a number beyond ${v < 0 ? '−' : ''}2^53−1` : JSON.stringify(v);
  return t.length > 60 ? `${t.slice(0, 57)}…` : t;
}

/** True for a JSON object (not an array, not null). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Field checks of one part; each throws the part's {@link DataError} for the first field that does not fit. */
export interface PartChecker {
  /** @throws DataError `"<label>: field <field> is <value>; expected <expected>"`. */
  fault(field: string, v: unknown, expected: string): never;
  /** `v` as a whole number `min..max` (default max 2^53−1). */
  whole(field: string, v: unknown, min: number, max?: number): number;
  /** `value.dataset` and a shard range `value[rangeKey]` = `[A, B]` with 0 ≤ A < B ≤ dataset.shards. */
  datasetAndRange(value: Record<string, unknown>, rangeKey: string, writer: string): { dataset: PartDataset; shards: [number, number] };
}

/**
 * Field checks for the part named `label` (its file).
 * @param label names the part in every message.
 */
export function partChecker(label: string): PartChecker {
  const fault = (field: string, v: unknown, expected: string): never => {
    throw new DataError(`${label}: field ${field} is ${shown(v)}; expected ${expected}`, label);
  };
  const whole = (field: string, v: unknown, min: number, max = MAX_EXACT): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      fault(field, v, `a whole number ${fmt(min)}..${max === MAX_EXACT ? '2^53−1' : fmt(max)}`);
    return v as number;
  };
  const datasetAndRange = (value: Record<string, unknown>, rangeKey: string, writer: string) => {
    if (!isObject(value.dataset))
      fault('dataset', value.dataset, `{"fingerprint","shards"} as \`${writer}\` writes it (run the part again)`);
    const d = value.dataset as Record<string, unknown>;
    if (typeof d.fingerprint !== 'string' || !/^[0-9a-f]{64}$/.test(d.fingerprint))
      fault('dataset.fingerprint', d.fingerprint, '64 hexadecimal digits');
    const n = whole('dataset.shards', d.shards, 1);
    const r = value[rangeKey];
    if (!Array.isArray(r) || r.length !== 2) fault(rangeKey, r, `[A, B] with 0 ≤ A < B ≤ ${fmt(n)}`);
    const sh = r as unknown[];
    const A = whole(`${rangeKey}[0]`, sh[0], 0, n - 1);
    const B = whole(`${rangeKey}[1]`, sh[1], A + 1, n);
    return { dataset: { fingerprint: d.fingerprint as string, shards: n }, shards: [A, B] as [number, number] };
  };
  return { fault, whole, datasetAndRange };
}

/**
 * Checks that parts belong to one dataset and that their shard ranges do not overlap.
 * @param parts each part's dataset and shard range `[A, B)` (manifest entries).
 * @param labels names of the parts in messages (their files), same order.
 * @param opts.allowPartial accept ranges left uncovered (returned); without it they must tile `[0, N)`.
 * @param opts.verb what a part does with its dataset in the message, e.g. "counts" (default "belongs to").
 * @param opts.redo what to do about missing ranges in the message, e.g. "count them too" (default "run them too").
 * @returns the ranges of `[0, N)` in no part, in order (empty when the parts tile it), and the
 *   parts' indices sorted by range.
 * @throws PartsMismatchError nothing to merge, another dataset, overlapping ranges, or (without
 *   `allowPartial`) missing ranges; each names the parts or ranges.
 */
export function tileShardRanges(
  parts: readonly { dataset: PartDataset; shards: readonly [number, number] }[],
  labels: readonly string[],
  opts: { allowPartial?: boolean; verb?: string; redo?: string } = {},
): { missing: [number, number][]; order: number[] } {
  if (parts.length === 0) throw new PartsMismatchError('nothing to merge');
  const name = (i: number) => labels[i] ?? `part ${i + 1}`;
  const d0 = parts[0].dataset;
  parts.forEach((p, i) => {
    if (p.dataset.fingerprint !== d0.fingerprint || p.dataset.shards !== d0.shards)
      throw new PartsMismatchError(
        `${name(i)} ${opts.verb ?? 'belongs to'} another dataset than ${name(0)} (fingerprint ${p.dataset.fingerprint.slice(0, 12)}… of ${fmt(p.dataset.shards)} shards, ${name(0)} ${d0.fingerprint.slice(0, 12)}… of ${fmt(d0.shards)})`,
      );
  });
  const n = d0.shards;
  const order = parts.map((_, i) => i).sort((x, y) => parts[x].shards[0] - parts[y].shards[0] || parts[x].shards[1] - parts[y].shards[1]);
  const missing: [number, number][] = [];
  let covered = 0;
  order.forEach((i, k) => {
    const s = parts[i].shards;
    if (k > 0) {
      const j = order[k - 1],
        a = parts[j].shards;
      if (s[0] < a[1]) throw new PartsMismatchError(`${name(j)} (shards ${a[0]}:${a[1]}) and ${name(i)} (shards ${s[0]}:${s[1]}) overlap`);
    }
    if (s[0] > covered) missing.push([covered, s[0]]);
    covered = s[1];
  });
  if (covered < n) missing.push([covered, n]);
  if (missing.length && !opts.allowPartial)
    throw new PartsMismatchError(
      `shards ${missing.map(([a, b]) => `${a}:${b}`).join(', ')} of the dataset's 0:${n} are in no part; ${opts.redo ?? 'run them too'}, or pass --allow-partial`,
    );
  return { missing, order };
}

/** The commands whose `--shards A:B --json` output `merge` adds. */
export type PartKind = 'count' | 'verify' | 'stats';

/**
 * Which command wrote a parsed part, from its fields: `terms` (count), `results` (verify),
 * `records` (stats); undefined for anything else.
 */
export function partKind(value: unknown): PartKind | undefined {
  if (!isObject(value)) return undefined;
  if ('terms' in value) return 'count';
  if ('results' in value) return 'verify';
  if ('records' in value) return 'stats';
  return undefined;
}
