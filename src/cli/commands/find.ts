/**
 * `token-shards find <root> <term> [--word] [--ignore-case] [--ids] [--limit N=100] [--context CHARS=60] [--json]`:
 * the occurrences of one term in stream order (match rules: `src/core/search/index.ts`).
 *
 * - `--json`: one object per line `{"term","offset","update","sequence","position","context"}`
 *   (`update`/`sequence`/`position` null in the look-ahead token).
 * - Text: keyword-in-context lines, `update 12,004 · seq 17 · pos 300 · 1,573,421,110 │ …and then [Lily] ran to…`
 *   (on a terminal, control characters and newlines in the context shown as visible marks; to a
 *   file or pipe the context as it is, so a line of the data may break the line: use --json).
 * - Stopping at `--limit` is said on stderr (an occurrence past the limit is looked for).
 * - Exit codes: 0 ok (also when nothing is found); 1 unreadable shard; 2 bad usage; 130 Ctrl-C.
 */
import type { Command } from 'commander';
import { findTerms } from '../../core/search/find';
import { occurrenceJson, occurrenceText } from '../../core/search/format';
import { fmt } from '../../core/units';
import { CliContext, UsageError } from '../context';
import { SearchFlags, searchFlags, searchOptions, warnReplacementCharacters } from './count';

/** Registers `find`. */
export function register(program: Command, ctx: CliContext): void {
  searchFlags(
    program
      .command('find')
      .description('list where a term occurs, in stream order, with context')
      .argument('<root>', 'dataset folder holding shard_manifest.jsonl')
      .argument('<term>', 'a literal string (UTF-8), or token ids with --ids'),
  )
    .option('--limit <N>', 'most occurrences to list', '100')
    .option('--context <chars>', 'characters of context each side', '60')
    .option('--json', 'one JSON object per line')
    .action(
      ctx.run(async (root: string, term: string, opts: SearchFlags & { limit: string; context: string; json?: boolean }, cmd: Command) => {
        const options = searchOptions(opts);
        // The term is checked by the core (findTerms), once.
        warnReplacementCharacters(ctx, [term], options.ids);
        const limit = ctx.int(opts.limit, '--limit')!;
        const context = ctx.int(opts.context, '--context')!;
        if (context > 10_000) throw new UsageError('--context: at most 10,000 characters');
        const ds = await ctx.open(root, cmd);
        ctx.warnSchedule(ds);
        const tok = await ctx.tokenizerFor(root, cmd, ds);
        const signal = ctx.cancellable();
        // One more than the limit is looked for, so that stopping at the limit can be said.
        let shown = 0;
        let last: number | undefined;
        for await (const o of findTerms(ds, tok, [term], options, { limit: limit + 1, context, signal })) {
          if (shown === limit) {
            ctx.err(
              `… more occurrences after global offset ${fmt(last ?? 0)}: ${fmt(limit)} listed (use --limit to list more; \`${ctx.self} count\` gives totals)`,
            );
            break;
          }
          await ctx.write((opts.json ? occurrenceJson(o, ctx.json) : occurrenceText(o, (s) => ctx.text(s))) + '\n');
          shown++;
          last = o.offset;
        }
        return 0;
      }),
    );
}
