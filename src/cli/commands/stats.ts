/**
 * `token-shards stats <root> <K | K1..K2> [--json | --csv]`: per-update statistics (the loss-spike workbench;
 * definitions in src/core/stats.ts and docs/format.md). JSON: an array of records with the field names
 * of {@link UpdateStats}; CSV: a header and one row per update; default: an aligned table.
 * Records stream out as they are computed (any range in bounded memory).
 * `--shards A:B --json` writes a part for `merge`: the records of the updates whose first token
 * lies in manifest entries A..B−1 (`core/statsParts.ts`), inside `{"updates","shards","dataset","tokenizer","records"}`.
 *
 * With a run description (`--run FILE` or `<root>/run.json`) naming a Megatron, OLMo or llm.c
 * order, update k is the run's step k and each record is an {@link OrderedUpdateStats} (over the
 * inputs of the step's samples; `order`, `tokens`, `ranges` in place of `token_range`; CSV columns
 * `update,tokens,ranges,…`). `--shards` is refused then (one line): a shuffled step has no first
 * token in a shard range; split the run by update ranges instead.
 */
import type { Command } from 'commander';
import { Dataset } from '../../core/dataset';
import {
  AnyUpdateStats,
  ORDERED_STATS_CSV_HEADER,
  STATS_CSV_HEADER,
  StatsOrder,
  computeRunUpdateStats,
  isRunOrder,
  parseUpdateRange,
  statsToCsvRow,
} from '../../core/stats';
import { checkOrderUpdate } from '../../core/order/order';
import { orderFor } from '../order';

export { parseUpdateRange };
import type { LoadedTokenizer } from '../../core/tokenizer';
import { jsonSafe } from '../../core/untrusted';
import { hashFile } from '../../core/formats/fileHashes';
import { datasetFingerprint } from '../../core/parts';
import { parseShardRange } from '../../core/search/terms';
import { updatesStartingIn } from '../../core/statsParts';
import { CliContext, UsageError } from '../context';

/** Registers `stats`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('stats')
    .description('per-update statistics (EOS, documents, distinct ids, duplicates, 13-gram repeats, …); definitions in the README')
    .argument('<root>', 'dataset folder holding shard_manifest.jsonl (or one .u32 file)')
    .argument('<updates>', 'K or K1..K2: 0-based updates, inclusive')
    .option('--json', 'a JSON array of records (field names as in the README)')
    .option('--csv', 'CSV: a header and one row per update')
    .option('--shards <A:B>', 'with --json: a part for `merge`, the updates whose first token lies in manifest entries A..B-1')
    .action(
      ctx.run(async (root: string, range: string, opts: { json?: boolean; csv?: boolean; shards?: string }, cmd: Command) => {
        if (opts.json && opts.csv) throw new UsageError('--json and --csv exclude each other: choose one output format');
        if (opts.shards !== undefined && !opts.json) throw new UsageError('--shards writes a part for `merge`: add --json');
        const ds = await ctx.open(root, cmd);
        ctx.warnSchedule(ds);
        const order = await orderFor(ctx, ds, cmd);
        try {
          const tok = ctx.globals(cmd).tokenizer || ds.tokenizerFile ? await ctx.tokenizerFor(undefined, cmd, ds) : undefined;
          return await runStats(
            ds,
            range,
            opts.json ? 'json' : opts.csv ? 'csv' : 'table',
            { write: (s) => ctx.write(s), err: (s) => ctx.err(s) },
            tok,
            ctx.cancellable(),
            opts.shards,
            order,
          );
        } finally {
          order.close();
        }
      }),
    );
}

/** Output sinks of a CLI command. */
export interface CliIo {
  /** Writes to stdout with backpressure. */
  write(s: string): Promise<void>;
  /** Writes a line to stderr. */
  err(s: string): void;
}

/** Text table columns: name and value. */
const TABLE: [string, (s: AnyUpdateStats) => string][] = [
  ['update', (s) => String(s.update)],
  ['eos', (s) => String(s.eos)],
  ['docs', (s) => String(s.documents_started)],
  ['distinct', (s) => String(s.distinct_tokens)],
  ['max_id', (s) => String(s.max_id)],
  ['unknown', (s) => (s.unknown_ids ?? '—').toString()],
  ['special', (s) => (s.special_ids ?? '—').toString()],
  ['eos_free_run', (s) => String(s.longest_eos_free_run)],
  ['dup_seqs', (s) => String(s.duplicate_sequences)],
  ['top_id', (s) => String(s.top_token.id)],
  ['top_count', (s) => String(s.top_token.count)],
  // A share, shown as a percentage (the JSON and CSV keep the share).
  ['rep13 %', (s) => (s.repeat_13gram_share === null ? '—' : (100 * s.repeat_13gram_share).toFixed(2))],
  ['mean_doc_len', (s) => (s.mean_complete_document_length === null ? '—' : s.mean_complete_document_length.toFixed(1))],
];

/**
 * The text of a `stats` output before its records.
 * @param ordered the records follow a run's order ({@link OrderedUpdateStats}): the CSV header names `tokens,ranges`.
 */
export function statsHead(format: StatsFormat, ordered = false): string {
  return format === 'json'
    ? '['
    : format === 'csv'
      ? (ordered ? ORDERED_STATS_CSV_HEADER : STATS_CSV_HEADER) + '\n'
      : TABLE.map(([h]) => h).join('\t') + '\n';
}

/** The text of record number `n` (0-based) of a `stats` output. */
export function statsRecordText(s: AnyUpdateStats, format: StatsFormat, n: number): string {
  return format === 'json'
    ? `${n ? ',' : ''}\n${jsonSafe(s)}`
    : format === 'csv'
      ? statsToCsvRow(s) + '\n'
      : TABLE.map(([, f]) => f(s)).join('\t') + '\n';
}

/** The text of a `stats` output after its records. */
export function statsTail(format: StatsFormat): string {
  return format === 'json' ? '\n]\n' : '';
}

/** Output formats of `stats` (and of `merge` of stats parts). */
export type StatsFormat = 'json' | 'csv' | 'table';

/**
 * Runs `stats`: validates the range against the dataset, computes and prints.
 * @param format `json`, `csv` or `table`.
 * @param shardsSpec `--shards A:B` (with `json`): only the updates whose first token lies in those
 *   manifest entries, written as a part for `merge`.
 * @param order the run's training order: updates are its steps when it is not the card's sequential order.
 * @returns the exit code (0).
 * @throws RangeRequestError for updates outside the stream (or the run); UsageError for `--shards`
 *   through a run's order; DataError on a short read; CancelledError on `signal`.
 */
export async function runStats(
  ds: Dataset,
  rangeText: string | undefined,
  format: StatsFormat,
  io: CliIo,
  tok: LoadedTokenizer | undefined,
  signal?: AbortSignal,
  shardsSpec?: string,
  order?: StatsOrder,
): Promise<number> {
  const asked = parseUpdateRange(rangeText);
  const run = isRunOrder(order) ? order : undefined;
  if (run && shardsSpec !== undefined)
    throw new UsageError(
      `--shards A:B splits updates by the shards holding their first token, which steps of the run's ${run.kind} order (read from anywhere in the stream) do not have: compute stats over ranges of updates instead (stats K1..K2 --json per job)`,
    );
  if (run) {
    checkOrderUpdate(run, asked.first);
    checkOrderUpdate(run, asked.last);
  } else {
    ds.schedule.checkUpdate(asked.first);
    ds.schedule.checkUpdate(asked.last);
  }
  let { first, last } = asked;
  let head = statsHead(format, !!run),
    tail = statsTail(format);
  if (shardsSpec !== undefined) {
    const shards = parseShardRange(shardsSpec, ds.shards.length);
    // No update of the range starts in these shards: an empty part (last < first computes nothing).
    [first, last] = updatesStartingIn(ds, asked.first, asked.last, shards) ?? [asked.first, asked.first - 1];
    const fields = {
      updates: [asked.first, asked.last],
      shards,
      dataset: { fingerprint: datasetFingerprint(ds), shards: ds.shards.length },
      tokenizer: tok ? (await hashFile(tok.file, ['sha256'], signal)).sha256 : null,
    };
    // The part's fields, then its records streamed as `stats --json` streams them.
    head = `${jsonSafe(fields).slice(0, -1)},"records":[`;
    tail = '\n]}\n';
  }
  if (!tok) io.err('warning: no tokenizer: unknown_ids and special_ids are null (pass --tokenizer FILE)');
  // Records are written in order behind the computation; the first failed write (a full disk,
  // a closed pipe) stops both, and is what the command ends with.
  let pending: Promise<void> = Promise.resolve();
  let failed: { error: unknown } | undefined;
  let n = 0;
  await io.write(head);
  if (last >= first)
    await computeRunUpdateStats(ds, first, last, {
      order: run,
      tokenizer: tok,
      signal,
      onRecord: (s) => {
        const line = statsRecordText(s, format, n);
        n++;
        if (failed) throw failed.error;
        pending = pending
          .then(() => (failed ? undefined : io.write(line)))
          .catch((error: unknown) => {
            failed ??= { error };
          });
      },
    });
  await pending;
  if (failed) throw failed.error;
  await io.write(tail);
  return 0;
}
