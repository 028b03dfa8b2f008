/**
 * The warnings every command that reads tokens prints when it opens a dataset (`CliContext.open`):
 * faults of the manifest that do not stop a read but change what it means, which `info`, `index`
 * and `verify` list among their problems and the other commands would otherwise pass over.
 *
 * - A shard file longer than its manifest entry: only the `num_tokens` tokens the entry lists are
 *   read; the rest of the file is not part of the stream (one line per shard, at most
 *   {@link MAX_LISTED}, then a count).
 * - Overlapping entries: the tokens two shards claim are refused at read time (`TokenStream`,
 *   naming both lines); the warning says so before anything is read, naming both lines.
 */
import { BYTES_PER_TOKEN, SHARD_MANIFEST } from '../core/manifest';
import type { Dataset } from '../core/dataset';
import { count, fmt } from '../core/units';

/** Shards listed one per line before the rest are counted. */
export const MAX_LISTED = 20;

/** Commands whose own output lists every manifest problem (no warning from `open` then). */
export const LISTS_PROBLEMS = new Set(['info', 'index', 'verify']);

/** The warning lines for a dataset (without the `warning: ` prefix); none for a lone file. */
export function readFaultWarnings(ds: Dataset): string[] {
  if (ds.lone) return [];
  const out = ds.problems.filter((p) => p.code === 'overlap').map((p) => p.message);
  const longer = ds.shards.filter((e, i) => (ds.fileStates[i]?.size ?? 0) > e.numTokens * BYTES_PER_TOKEN);
  for (const e of longer.slice(0, MAX_LISTED)) {
    const size = ds.fileStates[e.index].size!;
    const extra = size - e.numTokens * BYTES_PER_TOKEN;
    out.push(
      `${e.shard} (${SHARD_MANIFEST} line ${e.line}) has ${fmt(size)} bytes, ${fmt(extra)} more than its num_tokens ${fmt(e.numTokens)} need; ` +
        `the ${count(Math.floor(extra / BYTES_PER_TOKEN), 'token')}${extra % BYTES_PER_TOKEN ? ` and ${count(extra % BYTES_PER_TOKEN, 'byte')}` : ''} after them are not read`,
    );
  }
  if (longer.length > MAX_LISTED)
    out.push(
      `… and ${count(longer.length - MAX_LISTED, 'more shard')} longer than ${longer.length - MAX_LISTED === 1 ? 'its entry' : 'their entries'} (\`info\` lists them all)`,
    );
  return out;
}
