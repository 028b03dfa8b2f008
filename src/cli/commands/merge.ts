/**
 * `token-shards merge <part.json…> [--allow-partial] [--share] [--top N] [--json|--csv]`: adds the
 * parts that `count`, `verify` or `stats` write with `--shards A:B --json` over disjoint shard
 * ranges into one result (how a stream too big for one machine is processed: a cluster job array,
 * one part per task, then one `merge`). The kind of the parts is read from their fields
 * (`core/parts.ts` `partKind`); all parts must be of one kind and one dataset (its fingerprint)
 * and tile its whole shard range.
 *
 * - count parts (`core/search/merge.ts`): counts summed; `--allow-partial` accepts missing ranges
 *   (a warning names them, `--json` lists them as `missing_shards`); parts written with `--share`
 *   give shares, recomputed from the merged counts.
 * - verify parts (`core/verify/parts.ts`): one summary, `--json`
 *   `{"dataset","shards","all_ok","counts","not_ok":[…],"manifest_problems"}` (the rows of the shards
 *   not ok, with the updates each feeds), or the lines `verify` prints; `--allow-partial` lists
 *   unchecked ranges as `missing_shards` (then not all ok).
 * - stats parts (`core/statsParts.ts`): the records of every update, exactly what `stats K1..K2`
 *   prints on one machine (`--json`, `--csv` or the table).
 *
 * Exit codes: 0 ok; 1 a part is unreadable, not JSON, not a part, or has a field that does not fit
 * (the message names the part file and the field), or merged verify parts find a shard not ok; 2
 * parts of different kinds, overlapping or missing ranges, different datasets, or other terms,
 * options, per, updates or tokenizer, or a flag that does not apply to the parts' kind.
 */
import type { Command } from 'commander';
import { DataError } from '../../core/errors';
import { PartKind, PartsMismatchError, partKind } from '../../core/parts';
import { READ_LIMITS, readRegularTextFile } from '../../core/safeRead';
import { mergeCounts, parseCountPart } from '../../core/search/merge';
import { countCsv, countJson, countText } from '../../core/search/format';
import { parseJson } from '../../core/safeJson';
import { mergeStatsParts, parseStatsPart } from '../../core/statsParts';
import { mergeVerifyParts, parseVerifyPart } from '../../core/verify/parts';
import { formatVerifySummary } from '../../core/verify/format';
import { count, fmt } from '../../core/units';
import { CliContext, EXIT, UsageError, listed } from '../context';
import { CountOutputFlags, outputFlags } from './count';
import { statsHead, statsRecordText, statsTail } from './stats';
import { STATUS_WORD } from './verify';

/** What each kind of part is written by, for messages. */
const WRITER: Record<PartKind, string> = {
  count: '`count ROOT TERMS… --shards A:B --json`',
  verify: '`verify ROOT --shards A:B --json`',
  stats: '`stats ROOT K1..K2 --shards A:B --json`',
};

/** Registers `merge`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('merge')
    .description('add the `count`, `verify` or `stats` parts (`--shards A:B --json`) of disjoint shard ranges into one result')
    .argument('<part...>', 'JSON files written by `count|verify|stats … --shards A:B --json`')
    .option(
      '--allow-partial',
      'count and verify parts: accept parts that do not cover every shard of the dataset (the missing ranges are named)',
    )
    .option('--share', "count parts: each term's share of all listed terms' occurrences per bucket (on when the parts have shares)")
    .option('--top <N>', 'count parts, text output: the N terms with most occurrences in each bucket, with their shares')
    .option('--json', 'the result as JSON')
    .option('--csv', 'count and stats parts: CSV, one row per bucket or update')
    .action(
      ctx.run(async (files: string[], opts: CountOutputFlags & { allowPartial?: boolean }) => {
        const values: unknown[] = [];
        for (const f of files) {
          let text: string;
          try {
            // A regular file of bounded size: a FIFO, /dev/zero or /dev/urandom is refused, never read.
            text = await readRegularTextFile(f, 'a part written with `--shards A:B --json`', READ_LIMITS.countPart);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`${f}: no such file`);
            if (err instanceof DataError) throw err;
            throw new DataError(`${f}: cannot read: ${(err as Error).message}`, f);
          }
          const parsed = parseJson(text);
          if (!parsed.ok)
            throw new DataError(`${f}: not JSON (${parsed.error}); expected the output of ${Object.values(WRITER).join(', ')}`, f);
          values.push(parsed.value);
        }
        const kinds = values.map((v, i) => {
          const k = partKind(v);
          if (!k) throw new DataError(`${files[i]}: not a part: expected the output of ${Object.values(WRITER).join(', ')}`, files[i]);
          return k;
        });
        const kind = kinds[0];
        kinds.forEach((k, i) => {
          if (k !== kind)
            throw new PartsMismatchError(`${files[i]} is a ${k} part, ${files[0]} a ${kind} part: merge parts of one command`);
        });
        if (kind !== 'count' && (opts.share || opts.top !== undefined))
          throw new UsageError(`--share and --top apply to count parts; these are ${kind} parts`);
        if (kind === 'verify') return mergeVerify(ctx, values, files, opts);
        if (kind === 'stats') return mergeStats(ctx, values, files, opts);
        const top = outputFlags(ctx, opts);
        const parts = values.map((v, i) => parseCountPart(v, files[i]));
        const result = mergeCounts(parts, files, { allowPartial: opts.allowPartial });
        const missing = result.missingShards ?? [];
        if (missing.length)
          ctx.warn(
            `shards ${missing.map(([a, b]) => `${a}:${b}`).join(', ')} of the dataset's 0:${result.dataset!.shards} are in no part: their occurrences and tokens are not counted`,
          );
        // Shares come from the merged counts (countJson/countCsv/countText compute them), never from the parts'.
        if (opts.share) result.withShares = true;
        if (opts.json) await ctx.write(countJson(result, ctx.json) + '\n');
        else if (opts.csv) await ctx.write(countCsv(result));
        else await ctx.write(countText(result, (s) => ctx.term(s), { top }));
        return 0;
      }),
    );
}

/**
 * Merges verify parts and prints the summary.
 * @returns 0 when every shard is ok and no range is missing, else 1 (as `verify`).
 */
async function mergeVerify(
  ctx: CliContext,
  values: unknown[],
  files: string[],
  opts: CountOutputFlags & { allowPartial?: boolean },
): Promise<number> {
  if (opts.csv) throw new UsageError('--csv: verify parts merge into a summary (text, or --json)');
  const summary = mergeVerifyParts(
    values.map((v, i) => parseVerifyPart(v, files[i])),
    files,
    { allowPartial: opts.allowPartial },
  );
  const missing = summary.missing_shards ?? [];
  if (missing.length)
    ctx.warn(
      `shards ${missing.map(([a, b]) => `${a}:${b}`).join(', ')} of the dataset's 0:${summary.shards} are in no part: they were not checked`,
    );
  if (opts.json) await ctx.write(ctx.json(summary, 2) + '\n');
  else {
    const out = listed(
      summary.not_ok.map((r) => `${STATUS_WORD[r.status].padEnd(10)} ${ctx.term(r.message)}`),
      (n) => `… and ${n} more shards not ok (--json lists them all)`,
    );
    const checked = summary.shards - missing.reduce((n, [a, b]) => n + b - a, 0);
    out.push(
      `${count(checked, 'shard')} of ${fmt(summary.shards)} checked by ${count(files.length, 'part')}: ${formatVerifySummary({ counts: summary.counts, cancelled: false, unfinished: [] })}`,
    );
    await ctx.write(out.join('\n') + '\n');
  }
  return summary.all_ok ? EXIT.ok : EXIT.data;
}

/** Merges stats parts and prints their records as `stats` does. @returns 0. */
async function mergeStats(
  ctx: CliContext,
  values: unknown[],
  files: string[],
  opts: CountOutputFlags & { allowPartial?: boolean },
): Promise<number> {
  if (opts.json && opts.csv) throw new UsageError('--json and --csv exclude each other: choose one output format');
  if (opts.allowPartial) throw new UsageError('--allow-partial: stats parts must cover every update of their range');
  const records = mergeStatsParts(
    values.map((v, i) => parseStatsPart(v, files[i])),
    files,
  );
  const format = opts.json ? 'json' : opts.csv ? 'csv' : 'table';
  let text = statsHead(format);
  for (let n = 0; n < records.length; n++) {
    text += statsRecordText(records[n], format, n);
    if (text.length >= 1 << 16) {
      await ctx.write(text);
      text = '';
    }
  }
  await ctx.write(text + statsTail(format));
  return 0;
}
