/**
 * `verify --shards A:B --json` parts (one per task of a cluster job array, each hashing manifest
 * entries A..B−1 of one dataset) and their merge into one summary: how many shards are ok, which
 * are not (with the updates each feeds) and which ranges no part checked. A part is trusted only
 * after every field was checked ({@link parseVerifyPart}); the shared rules (dataset fingerprint,
 * shard ranges that tile the manifest) are in `../parts.ts`.
 */
import type { Dataset } from '../dataset';
import { PartDataset, PartsMismatchError, datasetFingerprint, isObject, partChecker, tileShardRanges } from '../parts';
import { parseShardRange } from '../search/terms';
import { fmt } from '../units';
import { SHARD_STATUSES, ShardStatus, emptyCounts } from './verify';

/** A shard of a verify part, as `verify --json` writes it (less `from_cache` and `checked_at`, which belong to one machine's run). */
export interface VerifyPartRow {
  /** The manifest's `shard` field. */
  shard: string;
  /** 1-based line in `shard_manifest.jsonl`. */
  line: number;
  status: ShardStatus;
  expected_sha256: string | null;
  actual_sha256: string | null;
  /** Bytes: 4 × num_tokens. */
  expected_size: number;
  /** Bytes on disk; null when the file is missing. */
  actual_size: number | null;
  /** One or two sentences naming the shard, its line, what was expected and the updates it feeds. */
  message: string;
  /** The updates that read the shard, first and last (0-based, inclusive); null for an ok shard. */
  updates: [number, number] | null;
}

/** A checked part: what one task of the array found. */
export interface VerifyPart {
  dataset: PartDataset;
  /** Manifest entries `[A, B)` (start_token order) the part hashed. */
  shards: [number, number];
  all_ok: boolean;
  counts: Record<ShardStatus, number>;
  /** One row per shard of the range, in manifest order. */
  results: VerifyPartRow[];
  /** The manifest's problems as `verify --json` lists them (the same in every part of one dataset). */
  manifest_problems: unknown[];
}

/**
 * The merged summary (`merge --json` of verify parts): `{"dataset","shards","all_ok","counts","not_ok":[rows],"manifest_problems"}`
 * plus `"missing_shards":[[A,B],…]` with `--allow-partial`. `shards` counts manifest entries.
 */
export interface VerifySummary {
  dataset: PartDataset;
  /** Manifest entries of the dataset. */
  shards: number;
  /** Every checked shard ok, no manifest line fault, no range left out. */
  all_ok: boolean;
  /** Shards per status, summed over the parts (never estimated). */
  counts: Record<ShardStatus, number>;
  /** The shards that are not ok, in manifest order. */
  not_ok: VerifyPartRow[];
  manifest_problems: unknown[];
  /** Shard ranges `[A, B)` no part checked (only with `allowPartial`). */
  missing_shards?: [number, number][];
}

const SHA = /^[0-9a-f]{64}$/;

/**
 * Checks one parsed part against the shape `verify --shards A:B --json` writes.
 * @param label names the part in messages (its file).
 * @throws DataError `"<label>: field <path> is <value>; expected <what>"` for the first field that
 *   does not fit (a cancelled part too: it did not check its whole range).
 */
export function parseVerifyPart(value: unknown, label: string): VerifyPart {
  const { fault, whole, datasetAndRange } = partChecker(label);
  if (!isObject(value)) return fault('(the whole file)', value, 'an object written by `verify --shards A:B --json`');
  const v = value;
  const { dataset, shards } = datasetAndRange(v, 'shard_range', 'verify --shards A:B --json');
  const n = shards[1] - shards[0];
  if (v.shards !== n) fault('shards', v.shards, `${fmt(n)}, the entries of shard_range`);
  if (v.cancelled !== false) fault('cancelled', v.cancelled, 'false (a cancelled part did not check its whole range: run it again)');
  if (typeof v.all_ok !== 'boolean') fault('all_ok', v.all_ok, 'true or false');
  if (!Array.isArray(v.results) || v.results.length !== n)
    fault(
      'results',
      Array.isArray(v.results) ? `an array of ${v.results.length}` : v.results,
      `${fmt(n)} rows, one per shard of the range`,
    );
  const tally = emptyCounts();
  const str = (field: string, x: unknown, nullable: boolean, re?: RegExp): string | null => {
    if ((x === null && nullable) || (typeof x === 'string' && (!re || re.test(x)))) return x;
    return fault(field, x, `${re ? '64 hexadecimal digits' : 'a string'}${nullable ? ' or null' : ''}`);
  };
  const results = (v.results as unknown[]).map((r, i): VerifyPartRow => {
    const at = `results[${i}]`;
    if (!isObject(r)) return fault(at, r, 'an object {"shard","line","status",…}');
    const status = r.status as ShardStatus;
    if (!SHARD_STATUSES.includes(status)) fault(`${at}.status`, r.status, SHARD_STATUSES.join(', '));
    tally[status]++;
    let updates: [number, number] | null = null;
    if (r.updates !== null) {
      if (!Array.isArray(r.updates) || r.updates.length !== 2) fault(`${at}.updates`, r.updates, '[first, last] or null');
      const u = r.updates as unknown[];
      const a = whole(`${at}.updates[0]`, u[0], 0);
      updates = [a, whole(`${at}.updates[1]`, u[1], a)];
    }
    return {
      shard: str(`${at}.shard`, r.shard, false)!,
      line: whole(`${at}.line`, r.line, 1),
      status,
      expected_sha256: str(`${at}.expected_sha256`, r.expected_sha256, true, SHA),
      actual_sha256: str(`${at}.actual_sha256`, r.actual_sha256, true, SHA),
      expected_size: whole(`${at}.expected_size`, r.expected_size, 0),
      actual_size: r.actual_size === null ? null : whole(`${at}.actual_size`, r.actual_size, 0),
      message: str(`${at}.message`, r.message, false)!,
      updates,
    };
  });
  if (!isObject(v.counts)) fault('counts', v.counts, `an object {${SHARD_STATUSES.map((s) => `"${s}"`).join(',')}}`);
  const c = v.counts as Record<string, unknown>;
  for (const s of SHARD_STATUSES) if (c[s] !== tally[s]) fault(`counts.${s}`, c[s], `${fmt(tally[s])}, the rows with status ${s}`);
  if (!Array.isArray(v.manifest_problems)) fault('manifest_problems', v.manifest_problems, 'an array');
  return { dataset, shards, all_ok: v.all_ok as boolean, counts: tally, results, manifest_problems: v.manifest_problems as unknown[] };
}

/**
 * Merges checked verify parts of one dataset into one summary.
 * @param labels names of the parts in messages (their files), same order.
 * @param opts.allowPartial accept parts that leave shard ranges unchecked (listed in `missing_shards`;
 *   the summary is then not all ok).
 * @throws PartsMismatchError naming the parts: nothing to merge, another dataset, overlapping or
 *   (without `allowPartial`) missing ranges, other manifest problems (the manifest changed between parts).
 */
export function mergeVerifyParts(
  parts: readonly VerifyPart[],
  labels: readonly string[],
  opts: { allowPartial?: boolean } = {},
): VerifySummary {
  const { missing, order } = tileShardRanges(parts, labels, { allowPartial: opts.allowPartial, verb: 'verifies', redo: 'verify them too' });
  const problems = JSON.stringify(parts[0].manifest_problems);
  parts.forEach((p, i) => {
    if (JSON.stringify(p.manifest_problems) !== problems)
      throw new PartsMismatchError(
        `${labels[i] ?? `part ${i + 1}`} lists other manifest problems than ${labels[0] ?? 'part 1'}: the manifest changed between the parts; run them again`,
      );
  });
  const counts = emptyCounts();
  const notOk: VerifyPartRow[] = [];
  for (const i of order) {
    for (const s of SHARD_STATUSES) counts[s] += parts[i].counts[s];
    for (const r of parts[i].results) if (r.status !== 'ok') notOk.push(r);
  }
  return {
    dataset: { ...parts[0].dataset },
    shards: parts[0].dataset.shards,
    all_ok: missing.length === 0 && parts.every((p) => p.all_ok),
    counts,
    not_ok: notOk,
    manifest_problems: parts[0].manifest_problems,
    ...(missing.length ? { missing_shards: missing } : {}),
  };
}

/**
 * The fields `verify --shards A:B --json` adds to its output to make it a part:
 * `"shard_range":[A,B]` and `"dataset":{"fingerprint","shards"}`.
 * @param spec `A:B` as typed (manifest entries A..B−1; `A:` to the end, one number = one entry).
 * @throws SearchInputError (exit 2) for a malformed, empty or out-of-range spec.
 */
export function verifyPartOf(
  ds: Pick<Dataset, 'settings' | 'shards'>,
  spec: string,
): { shard_range: [number, number]; dataset: PartDataset } {
  return {
    shard_range: parseShardRange(spec, ds.shards.length),
    dataset: { fingerprint: datasetFingerprint(ds), shards: ds.shards.length },
  };
}
