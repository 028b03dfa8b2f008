/**
 * `token-shards count <root> <term…> [--word] [--ignore-case] [--ids] [--per UPDATES] [--shards A:B] [--json|--csv] [--jobs N]`:
 * occurrences of each term per bucket of updates (match rules: `src/core/search/index.ts`).
 *
 * - `--json`: exactly `{"terms","options":{"word","ignore_case","ids"},"per","updates","buckets":[{"first_update","last_update","tokens","counts"}],"totals"}`
 *   plus `"shards":[A,B]` with `--shards`; `--csv`: one row per bucket; text: a table and one sparkline per term.
 * - Progress on stderr (shards done, GB/s, time left) when stderr is a terminal; Ctrl-C stops with exit 130.
 * - Exit codes: 0 ok; 1 a shard is missing, unreadable or changed during the scan; 2 bad usage
 *   (empty/whitespace/over-long term, more than 64 terms, bad `--ids`, `--per 0`, `--shards` out of range, missing dataset).
 */
import type { Command } from 'commander';
import { fmt } from '../../core/errors';
import { countTerms } from '../../core/search/count';
import { countCsv, countJson, countText } from '../../core/search/format';
import { parseShardRange, parseTerms } from '../../core/search/terms';
import { CountProgress, SearchOptions } from '../../core/search/types';
import { formatRate } from '../../core/verify/format';
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

/** The search options of the flags. */
export function searchOptions(f: SearchFlags): SearchOptions {
  return { word: !!f.word, ignoreCase: !!f.ignoreCase, ids: !!f.ids };
}

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s >= 3600
    ? `${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`
    : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** The one-line progress text: `count: 12/2,098 shards · 3.21 GB/s · 0:41 left`. */
export function progressLine(p: CountProgress): string {
  return (
    `count: ${fmt(p.shardsDone)}/${fmt(p.shardsTotal)} shards · ${formatRate(p.bytesPerSecond)} · ` +
    (p.etaMs === null ? 'estimating…' : `${duration(p.etaMs)} left`)
  );
}

/** Registers `count`. */
export function register(program: Command, ctx: CliContext): void {
  searchFlags(
    program
      .command('count')
      .description("count each term's occurrences per bucket of updates (all terms in one pass; worker threads)")
      .argument('<root>', 'dataset folder holding shard_manifest.jsonl')
      .argument('<term...>', 'literal strings (UTF-8), or token ids with --ids'),
  )
    .option('--per <updates>', 'updates per bucket (default: about 400 buckets)')
    .option('--shards <A:B>', 'scan only manifest entries A..B-1 (in start_token order); merge parts with `merge`')
    .option('--json', 'the result as one JSON object')
    .option('--csv', 'one CSV row per bucket')
    .option('--jobs <N>', 'worker threads (default, or 0: number of CPU cores)')
    .action(
      ctx.run(
        async (
          root: string,
          rawTerms: string[],
          opts: SearchFlags & { per?: string; shards?: string; json?: boolean; csv?: boolean; jobs?: string },
          cmd: Command,
        ) => {
          if (opts.json && opts.csv) throw new UsageError('--json and --csv are exclusive');
          const options = searchOptions(opts);
          const terms = parseTerms(rawTerms, options);
          const per = ctx.int(opts.per, '--per');
          if (per === 0) throw new UsageError('--per must be at least 1 update');
          const jobs = ctx.int(opts.jobs, '--jobs');
          const ds = await ctx.open(root, cmd);
          if (ds.shards.length === 0) throw new UsageError(`${ds.manifestFile}: no shard to search`);
          const shards = opts.shards !== undefined ? parseShardRange(opts.shards, ds.shards.length) : undefined;
          const tok = await ctx.tokenizerFor(root, cmd, ds);
          const signal = ctx.cancellable();
          const tty = process.stderr.isTTY === true;
          let shown = 0;
          const order = orderSpecFor(ctx, ds, cmd);
          if (order && shards)
            throw new UsageError('--shards: a count through a training order (--run or run.json) covers the whole stream');
          const result = await countTerms(ds, tok, terms, options, {
            per,
            shards,
            order,
            jobs: jobs || undefined,
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
          if (opts.json) await ctx.write(countJson(result, ctx.json) + '\n');
          else if (opts.csv) await ctx.write(countCsv(result));
          else await ctx.write(countText(result, (s) => ctx.term(s)));
          return 0;
        },
      ),
    );
}
