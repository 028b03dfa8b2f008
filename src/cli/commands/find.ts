/**
 * `token-shards find <root> <term> [--word] [--ignore-case] [--ids] [--limit N=100] [--context CHARS=60] [--json]`:
 * the occurrences of one term in stream order (match rules: `src/core/search/index.ts`).
 *
 * - `--json`: one object per line `{"term","offset","update","sequence","position","context"}`
 *   (`update`/`sequence`/`position` null in the look-ahead token).
 * - Text: keyword-in-context lines, `update 12,004 · seq 17 · pos 300 · 1,573,421,110 │ …and then [Lily] ran to…`
 *   (control characters and newlines in the context shown as visible marks).
 * - Exit codes: 0 ok (also when nothing is found); 1 unreadable shard; 2 bad usage; 130 Ctrl-C.
 */
import type { Command } from 'commander';
import { findTerms } from '../../core/search/find';
import { occurrenceJson, occurrenceText } from '../../core/search/format';
import { parseTerms } from '../../core/search/terms';
import { CliContext, UsageError } from '../context';
import { SearchFlags, searchFlags, searchOptions } from './count';

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
        const terms = parseTerms([term], options);
        const limit = ctx.int(opts.limit, '--limit')!;
        const context = ctx.int(opts.context, '--context')!;
        if (context > 10_000) throw new UsageError('--context: at most 10,000 characters');
        const ds = await ctx.open(root, cmd);
        const tok = await ctx.tokenizerFor(root, cmd, ds);
        const signal = ctx.cancellable();
        for await (const o of findTerms(ds, tok, terms, options, { limit, context, signal })) {
          await ctx.write((opts.json ? occurrenceJson(o, ctx.json) : occurrenceText(o, (s) => ctx.term(s))) + '\n');
        }
        return 0;
      }),
    );
}
