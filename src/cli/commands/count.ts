/**
 * `token-shards count <root> [term…] [--terms-file FILE] [--word] [--ignore-case] [--ids] [--per UPDATES] [--shards A:B]
 * [--share] [--top N] [--json|--csv] [--jobs N]`: occurrences of each term per bucket of updates (match rules:
 * `src/core/search/index.ts`).
 *
 * - `--json`: exactly `{"terms","options":{"word","ignore_case","ids"},"per","updates","buckets":[{"first_update","last_update","tokens","counts"}],"totals"}`
 *   plus `"shares"` per bucket with `--share`, `"shards":[A,B]` and `"dataset"` with `--shards`, and `"order"` and
 *   `"not_read"` through a run's training order (`--run FILE` or `<root>/run.json`: each occurrence counts in every
 *   update that read it as an input); `--csv`: one row per bucket (a `share:<term>` column per term with `--share`);
 *   text: a table (shares as percentages with `--share`, or the top N terms of each bucket with `--top N`) and one
 *   sparkline per term.
 * - `--terms-file`: one term per line (`src/core/search/termsFile.ts`), instead of terms on the command line.
 * - Progress on stderr (shards done, GB/s, time left) when stderr is a terminal; Ctrl-C stops with exit 130.
 * - Exit codes: 0 ok; 1 a shard is missing, unreadable or changed during the scan; 2 bad usage
 *   (empty/whitespace/over-long term, more than 10,000 terms, a bad terms file line, bad `--ids`, `--per 0`,
 *   `--shards` out of range, `--jobs` over 256, `--json` with `--csv`, `--top` with `--json`/`--csv`, missing dataset).
 */
import type { Command } from 'commander';
import { fmt } from '../../core/units';
import { countTerms } from '../../core/search/count';
import { countCsv, countJson, countText } from '../../core/search/format';
import { parseShardRange } from '../../core/search/terms';
import { readTermsFile } from '../../core/search/termsFile';
import { CountProgress, SearchOptions } from '../../core/search/types';
import { formatRateAndTimeLeft } from '../../core/units';
import { orderSpecFor } from '../order';
import { CliContext, UsageError } from '../context';

/** Options shared by `count` and `find`. */
export interface SearchFlags {
  word?: boolean;
  ignoreCase?: boolean;
  ids?: boolean;
}

/** Adds `--word`, `--ignore-case`, `--ids` to a command. */
export function searchFlags(cmd: Command): Command {
  return cmd
    .option('--word', 'whole words only: no letter, digit or _ just before or after (a document edge counts as none)')
    .option('--ignore-case', 'Unicode simple case folding')
    .option('--ids', 'terms are token ids matched as exact runs, e.g. 791,4062 (EOS included when named)');
}

/** Output flags shared by `count` and `merge`. */
export interface CountOutputFlags {
  json?: boolean;
  csv?: boolean;
  share?: boolean;
  top?: string;
}

/**
 * Checks the output flags of `count`/`merge`.
 * @returns the `--top` number (undefined without it).
 * @throws UsageError for `--json` with `--csv`, `--top` with either, or `--top` that is not ≥ 1.
 */
export function outputFlags(ctx: CliContext, opts: CountOutputFlags): number | undefined {
  if (opts.json && opts.csv) throw new UsageError('--json and --csv exclude each other: choose one output format');
  const top = ctx.int(opts.top, '--top');
  if (top !== undefined && (opts.json || opts.csv))
    throw new UsageError('--top applies to the text output; --json and --csv hold every term (with --share, every share)');
  if (top !== undefined && top < 1) throw new UsageError(`--top ${top}: expected a number of terms ≥ 1`);
  return top;
}

/** The search options of the flags. */
export function searchOptions(f: SearchFlags): SearchOptions {
  return { word: !!f.word, ignoreCase: !!f.ignoreCase, ids: !!f.ids };
}

/** The one-line progress text: `count: 12/2,098 shards · 3.21 GB/s · 41 s left` (the words of every progress line: `formatRateAndTimeLeft`). */
export function progressLine(p: CountProgress): string {
  const tail = formatRateAndTimeLeft(p.bytesPerSecond, p.etaMs ?? undefined);
  return `count: ${fmt(p.shardsDone)}/${fmt(p.shardsTotal)} shards · ${tail || 'estimating…'}`;
}

/**
 * Warns about terms holding U+FFFD: an argument that is not valid UTF-8 reaches the program with
 * each bad byte replaced by U+FFFD, so the term searched is not the one typed (searching for
 * U+FFFD itself is fine: then this is a note).
 */
export function warnReplacementCharacters(ctx: CliContext, terms: readonly string[], ids: boolean): void {
  if (ids) return;
  terms.forEach((t, i) => {
    if (t.includes('\ufffd'))
      ctx.warn(
        `term ${i + 1} ${ctx.term(JSON.stringify(t))} holds U+FFFD: if the argument was not valid UTF-8, its bad bytes were replaced by U+FFFD and that is what is searched (search the ids with --ids instead)`,
      );
  });
}

/** Registers `count`. */
export function register(program: Command, ctx: CliContext): void {
  searchFlags(
    program
      .command('count')
      .description("count each term's occurrences per bucket of updates (all terms in one pass; worker threads)")
      .argument('<root>', 'dataset folder holding shard_manifest.jsonl')
      .argument('[term...]', 'literal strings (UTF-8), or token ids with --ids (or --terms-file)'),
  )
    .option('--terms-file <file>', 'read the terms from a file: one per line, UTF-8, # comments, blank lines skipped, up to 10,000')
    .option('--per <updates>', 'updates per bucket (default: about 400 buckets)')
    .option('--shards <A:B>', 'scan only manifest entries A..B-1 (in start_token order); merge parts with `merge`')
    .option(
      '--share',
      'each term\'s share of all listed terms\' occurrences per bucket (JSON "shares", CSV share columns, text percentages)',
    )
    .option('--top <N>', 'text output: the N terms with most occurrences in each bucket, with their shares')
    .option('--json', 'the result as one JSON object')
    .option('--csv', 'one CSV row per bucket')
    .option('--jobs <N>', 'worker threads, 1..256 (default, or 0: number of CPU cores)')
    .action(
      ctx.run(
        async (
          root: string,
          rawTerms: string[],
          opts: SearchFlags & CountOutputFlags & { per?: string; shards?: string; jobs?: string; termsFile?: string },
          cmd: Command,
        ) => {
          const top = outputFlags(ctx, opts);
          const options = searchOptions(opts);
          if (opts.termsFile !== undefined && rawTerms.length > 0)
            throw new UsageError('give terms on the command line or --terms-file, not both');
          if (opts.termsFile !== undefined) rawTerms = await readTermsFile(opts.termsFile, options);
          // Terms and --per are checked by the core (countTerms), once.
          const per = ctx.int(opts.per, '--per');
          const jobs = ctx.jobs(opts.jobs);
          warnReplacementCharacters(ctx, rawTerms, options.ids);
          const ds = await ctx.open(root, cmd);
          ctx.warnSchedule(ds);
          if (ds.shards.length === 0) throw new UsageError(`${ds.manifestFile}: no shard to search`);
          const shards = opts.shards !== undefined ? parseShardRange(opts.shards, ds.shards.length) : undefined;
          // Runs of token ids need no tokenizer: without one they are still counted (GPT-2 data often comes without tokenizer.json).
          const tok =
            options.ids && !ds.tokenizerFile && ctx.globals(cmd).tokenizer === undefined
              ? undefined
              : await ctx.tokenizerFor(root, cmd, ds);
          const signal = ctx.cancellable();
          const tty = process.stderr.isTTY === true;
          let shown = 0;
          const order = await orderSpecFor(ctx, ds, cmd);
          if (order && shards)
            throw new UsageError('--shards: a count through a training order (--run or run.json) covers the whole stream');
          const result = await countTerms(ds, tok, rawTerms, options, {
            per,
            shards,
            order,
            jobs,
            signal,
            onProgress: tty
              ? (p) => {
                  const s = progressLine(p);
                  process.stderr.write(`\r${s}${' '.repeat(Math.max(0, shown - s.length))}`);
                  shown = s.length;
                }
              : undefined,
          }).finally(() => {
            if (shown) process.stderr.write(`\r${' '.repeat(shown)}\r`);
          });
          if (opts.share) result.withShares = true;
          if (opts.json) await ctx.write(countJson(result, ctx.json) + '\n');
          else if (opts.csv) await ctx.write(countCsv(result));
          else await ctx.write(countText(result, (s) => ctx.text(s), { top }));
          return 0;
        },
      ),
    );
}
