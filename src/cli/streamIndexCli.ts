/**
 * What the `index`, `locate`, `info` and `verify` subcommands share about the stream index: where
 * the CLI keeps it (`defaultCliIndexDir`: `$XDG_CACHE_HOME/token-shard-inspector/stream-index`, else
 * `~/.cache/…`; never the dataset folder), the scan parameters of a dataset (EOS from its
 * settings, vocabulary and special ids from its tokenizer), the progress line, and the text
 * describing the index (documents, longest EOS-free run, anomalies).
 */
import type { Command } from 'commander';
import { Dataset } from '../core/dataset';
import { count as countOf, fmt } from '../core/units';
import { cachedIndexParams, indexParamsFor, openDatasetIndex } from '../core/streamIndex/indexShards';
import { Anomaly, describeUpdates, updatesTouching } from '../core/streamIndex/anomalies';
import { IndexStore, defaultCliIndexDir } from '../core/streamIndex/entryStore';
import { StreamIndex } from '../core/streamIndex/streamIndex';
import { LENGTH_BUCKETS, ScanParams } from '../core/streamIndex/scan';
import { CliContext, cacheInsideDataset } from './context';

/** The dataset's index as the CLI sees it. */
export interface CliIndex {
  store: IndexStore;
  params: ScanParams;
  index: StreamIndex;
  /** Set when no tokenizer was found: unknown and special ids are not checked. */
  noTokenizer?: string;
}

/**
 * The index parameters of a dataset from its tokenizer (remembered in the index folder `dir`:
 * `cachedIndexParams`), or without one, with a note saying what that leaves unchecked (never throws).
 */
export async function cliIndexParams(
  ctx: CliContext,
  ds: Dataset,
  cmd: Command,
  dir: string,
): Promise<{ params: ScanParams; note?: string }> {
  try {
    // Nothing is written inside the dataset folder (a cache folder there is not used).
    const remember = cacheInsideDataset(dir, ds.root) ? undefined : dir;
    return { params: await cachedIndexParams(ds, await ctx.tokenizerFileFor(ds.root, cmd, ds), remember) };
  } catch (e) {
    return {
      params: indexParamsFor(ds),
      note: `no tokenizer (${(e as Error).message}): ids are checked against 2^20 only and special ids are not recognised`,
    };
  }
}

/** Opens the store and the dataset's index (records loaded; nothing built). */
export async function openCliIndex(ctx: CliContext, ds: Dataset, cmd: Command, env: NodeJS.ProcessEnv = process.env): Promise<CliIndex> {
  const dir = defaultCliIndexDir(env);
  const { params, note } = await cliIndexParams(ctx, ds, cmd, dir);
  const store = new IndexStore(dir, { onWarning: (m) => ctx.warn(ctx.term(m)) });
  return { store, params, index: await openDatasetIndex(ds, store, params), noTokenizer: note };
}

/** Median bucket of a length histogram as "a–b" tokens. */
function medianBucket(hist: number[], count: number): string {
  let acc = 0;
  for (let b = 0; b < LENGTH_BUCKETS; b++) {
    acc += hist[b];
    if (acc * 2 >= count) return b === 0 ? '0' : `${fmt(2 ** (b - 1))}–${fmt(2 ** b - 1)}`;
  }
  return '?';
}

/**
 * The lines `info` and `index` print about an index (documents, longest run, anomalies).
 * @param self the command as invoked (`CliContext.self`), for the hint to build the rest.
 */
export function describeIndex(ds: Dataset, ix: StreamIndex, anomalies: Anomaly[], term: (s: string) => string, self: string): string[] {
  const s = ix.summary();
  const lines: string[] = [];
  if (!ix.complete) {
    // Document numbers are instant only up to the first shard not indexed; none when that is the first.
    const instant =
      s.coveredTokens > 0
        ? `document numbers instant for global offsets < ${fmt(s.coveredTokens)}`
        : `document numbers need ${term(ds.shards[0].shard)}, the first shard, which is not indexed`;
    lines.push(
      `stream index     ${fmt(ix.indexedCount)} of ${fmt(ds.shards.length)} shards indexed (${instant}); run \`${self} index ${term(ds.root)}\``,
    );
  }
  const d = s.documents;
  const count = ix.documentCount;
  lines.push(
    `documents        ${count !== undefined ? `${fmt(count)} (0..${fmt(count - 1)})` : `${fmt(d.count)} in the indexed part`}; length mean ${fmt(Math.round(d.count ? d.sum / d.count : 0))}, median ${medianBucket(d.hist, d.count)}, max ${fmt(d.max)} tokens (EOS excluded)`,
  );
  const r = s.longestRun;
  const u = updatesTouching(ds.schedule, r.start, r.start + r.length);
  lines.push(
    r.length > 0
      ? `longest run      ${fmt(r.length)} tokens without EOS from global offset ${fmt(r.start)}${r.closed ? '' : ' to the end of the stream'}; touches ${describeUpdates(u)}`
      : 'longest run      (no tokens in the indexed shards)',
  );
  const errors = anomalies.filter((a) => a.severity === 'error').length;
  lines.push(
    anomalies.length
      ? `anomalies (${fmt(anomalies.length)}, ${countOf(errors, 'fault')}):\n${anomalies.map((a) => `  ${a.severity}: ${term(a.message)}`).join('\n')}`
      : 'anomalies        none',
  );
  return lines;
}

/** An anomaly as JSON (snake_case, global offsets, updates as [first, last]). */
export function anomalyJson(ds: Dataset, a: Anomaly): Record<string, unknown> {
  return {
    kind: a.kind,
    severity: a.severity,
    shard: ds.shards[a.segment].shard,
    line: ds.shards[a.segment].line,
    offsets: a.offsets,
    count: a.count,
    id: a.id ?? null,
    updates: a.updates ?? null,
    message: a.message,
  };
}
