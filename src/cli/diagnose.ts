/**
 * The CLI's use of the editor's id diagnosis (`diagnoseIds`, docs/format.md "token dtype
 * mix-ups"): uint16 data read as uint32 gives ids in the billions, uint32 read as uint16 gives
 * every other id 0, and both decode to (nearly) empty text. `info` reports it as a problem,
 * `update` and `tokens` warn, and every text output marks unknown ids `⟨unknown N⟩` and says how
 * many there were.
 */
import { Dataset } from '../core/dataset';
import { count as countOf, fmt } from '../core/units';
import { IdAnomaly, diagnoseIds } from '../core/tokenizer';

/** Ids read from the start of each sampled shard. */
const SAMPLE_IDS_PER_SHARD = 4096;
/** Shards sampled (evenly spread over the manifest). */
const SAMPLE_SHARDS = 16;

/**
 * Reads a sample of ids (the first 4,096 of up to 16 shards spread over the stream) and diagnoses
 * it against the vocabulary size. Reads at most 256 KiB.
 */
export async function diagnoseDataset(ds: Dataset, vocabSize: number): Promise<IdAnomaly | undefined> {
  const n = ds.shards.length;
  if (n === 0) return undefined;
  const picks = [
    ...new Set(Array.from({ length: Math.min(n, SAMPLE_SHARDS) }, (_, i) => Math.floor((i * n) / Math.min(n, SAMPLE_SHARDS)))),
  ];
  const parts: Uint32Array[] = [];
  const partShards: string[] = [];
  for (const i of picks) {
    const e = ds.shards[i];
    const count = Math.min(SAMPLE_IDS_PER_SHARD, e.numTokens);
    if (count === 0) continue;
    try {
      parts.push(await ds.stream.read(e.startToken, count));
      partShards.push(e.shard);
    } catch {
      /* an unreadable shard is reported elsewhere */
    }
  }
  const all = new Uint32Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    all.set(p, o);
    o += p.length;
  }
  const found = diagnoseIds(all, vocabSize);
  if (!found) return undefined;
  // Name the shards whose own sample shows the fault (a clean shard is never named); when it
  // only shows in the whole sample, every shard sampled.
  const own = parts.map((p) => diagnoseIds(p, vocabSize));
  const bad = partShards.map((_, k) => k).filter((k) => own[k]?.kind === found.kind);
  if (bad.length === 1) {
    // One shard: its own numbers (the share of its ids), not those of the whole sample.
    const k = bad[0];
    return {
      ...own[k]!,
      message: `${partShards[k]} (first ${fmt(Math.min(SAMPLE_IDS_PER_SHARD, parts[k].length))} ids): ${own[k]!.message}`,
    };
  }
  const names = bad.length ? bad.map((k) => partShards[k]) : partShards;
  const where =
    names.length === 1
      ? `${names[0]} (first ${fmt(SAMPLE_IDS_PER_SHARD)} ids)`
      : `${names[0]} and ${countOf(names.length - 1, 'more shard', 'more shards')} (first ${fmt(SAMPLE_IDS_PER_SHARD)} ids of each)`;
  return { ...found, message: `${where}: ${found.message}` };
}

/** The stderr warning for unknown ids in a text output. */
export function unknownWarning(count: number, vocabSize: number): string {
  return `${countOf(count, 'id')} not in the tokenizer's vocabulary (${fmt(vocabSize)} ids), shown as ⟨unknown N⟩`;
}
