/**
 * `token-shards merge <part.json…> [--allow-partial] [--share] [--top N] [--json|--csv]`: adds the results of `count
 * --shards A:B --json` over disjoint shard ranges into one (how a stream too big for one machine
 * is counted: a cluster job array, one `count --shards` per task, then one `merge`). Every part is
 * checked field by field (`core/search/merge.ts`); the parts must belong to one dataset (its
 * fingerprint) and tile its whole shard range, unless `--allow-partial` (then a warning on stderr
 * names the missing ranges, and `--json` lists them as `missing_shards`). Parts written with
 * `--share` give a result with shares, recomputed from the merged counts.
 *
 * Exit codes: 0 ok; 1 a part is unreadable, not JSON, or has a field that does not fit (the
 * message names the part file and the field); 2 parts overlap, leave shards uncovered, belong to
 * different datasets, or differ in terms, options, per or updates.
 */
import type { Command } from 'commander';
import { DataError } from '../../core/errors';
import { READ_LIMITS, readRegularTextFile } from '../../core/safeRead';
import { mergeCounts, parseCountPart } from '../../core/search/merge';
import { countCsv, countJson, countText } from '../../core/search/format';
import { parseJson } from '../../core/safeJson';
import { CliContext, UsageError } from '../context';
import { CountOutputFlags, outputFlags } from './count';

/** Registers `merge`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('merge')
    .description('add `count --shards A:B --json` results of disjoint shard ranges into one')
    .argument('<part...>', 'JSON files written by `count --shards A:B --json`')
    .option('--allow-partial', 'accept parts that do not cover every shard of the dataset (the missing ranges are named)')
    .option('--share', "each term's share of all listed terms' occurrences per bucket (on when the parts have shares)")
    .option('--top <N>', 'text output: the N terms with most occurrences in each bucket, with their shares')
    .option('--json', 'the result as one JSON object')
    .option('--csv', 'one CSV row per bucket')
    .action(
      ctx.run(async (files: string[], opts: CountOutputFlags & { allowPartial?: boolean }) => {
        const top = outputFlags(ctx, opts);
        const parts: ReturnType<typeof parseCountPart>[] = [];
        for (const f of files) {
          let text: string;
          try {
            // A regular file of bounded size: a FIFO, /dev/zero or /dev/urandom is refused, never read.
            text = await readRegularTextFile(f, 'a `count --shards A:B --json` result', READ_LIMITS.countPart);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`${f}: no such file`);
            if (err instanceof DataError) throw err;
            throw new DataError(`${f}: cannot read: ${(err as Error).message}`, f);
          }
          const parsed = parseJson(text);
          if (!parsed.ok) throw new DataError(`${f}: not JSON (${parsed.error}); expected the output of \`count --shards A:B --json\``, f);
          parts.push(parseCountPart(parsed.value, f));
        }
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
