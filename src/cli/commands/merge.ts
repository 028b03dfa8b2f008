/**
 * `token-shards merge <part.json…> [--json|--csv]`: adds the results of `count --shards A:B --json`
 * over disjoint shard ranges into one (how a stream too big for one machine is counted: a
 * cluster job array, one `count --shards` per task, then one `merge`).
 *
 * Exit codes: 0 ok; 1 a part is unreadable or not JSON; 2 parts overlap, leave a gap, or differ
 * in terms, options, per or updates.
 */
import type { Command } from 'commander';
import { DataError } from '../../core/errors';
import { READ_LIMITS, readRegularTextFile } from '../../core/safeRead';
import { mergeCounts } from '../../core/search/count';
import { countCsv, countJson, countText } from '../../core/search/format';
import { CountResult } from '../../core/search/types';
import { CliContext, UsageError } from '../context';

/** Registers `merge`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('merge')
    .description('add `count --shards A:B --json` results of disjoint shard ranges into one')
    .argument('<part...>', 'JSON files written by `count --shards A:B --json`')
    .option('--json', 'the result as one JSON object')
    .option('--csv', 'one CSV row per bucket')
    .action(
      ctx.run(async (files: string[], opts: { json?: boolean; csv?: boolean }) => {
        if (opts.json && opts.csv) throw new UsageError('--json and --csv exclude each other: choose one output format');
        const parts: CountResult[] = [];
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
          try {
            parts.push(JSON.parse(text) as CountResult);
          } catch (err) {
            throw new DataError(`${f}: not JSON (${(err as Error).message}); expected the output of \`count --shards A:B --json\``, f);
          }
        }
        const merged = mergeCounts(parts, files);
        if (opts.json) await ctx.write(countJson(merged, ctx.json) + '\n');
        else if (opts.csv) await ctx.write(countCsv(merged));
        else await ctx.write(countText(merged, (s) => ctx.term(s)));
        return 0;
      }),
    );
}
