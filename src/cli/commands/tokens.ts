/** `token-shards tokens <root> --start S --count N [--json]`: raw token ids of a global range. */
import type { Command } from 'commander';
import { fmt } from '../../core/errors';
import { CliContext, UsageError } from '../context';

/** Tokens read and printed at a time: any count works in bounded memory, and output starts at once. */
export const TOKENS_PRINT_CHUNK = 1 << 20;

/** Registers `tokens`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('tokens')
    .description('print the token ids of the global range [S, S+N)')
    .argument('<root>', 'dataset folder holding shard_manifest.jsonl (or one .u32 file)')
    .option('--start <S>', 'first global token offset')
    .option('--count <N>', 'number of tokens')
    .option('--json', 'print {"start","count","ids"}')
    .action(ctx.run(async (root: string, opts: { start?: string; count?: string; json?: boolean }, cmd: Command) => {
      const ds = await ctx.open(root, cmd);
      const start = ctx.int(opts.start, '--start');
      const count = ctx.int(opts.count, '--count');
      if (start === undefined || count === undefined) throw new UsageError('tokens needs --start S and --count N');
      if (start + count > ds.storedTokens) {
        throw new UsageError(`--start ${fmt(start)} --count ${fmt(count)} runs past the stream end (${fmt(ds.storedTokens)} tokens)`);
      }
      // Read and print in pieces (500M ids do not fit in one JS string); same bytes as one JSON.stringify.
      const sep = opts.json ? ',' : ' ';
      if (opts.json) await ctx.write(`{"start":${start},"count":${count},"ids":[`);
      for (let at = 0; at < count; at += TOKENS_PRINT_CHUNK) {
        const ids = await ds.stream.read(start + at, Math.min(TOKENS_PRINT_CHUNK, count - at));
        await ctx.write((at > 0 ? sep : '') + ids.join(sep));
      }
      await ctx.write(opts.json ? ']}\n' : '\n');
      return 0;
    }));
}
