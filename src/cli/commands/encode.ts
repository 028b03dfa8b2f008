/** `token-shards encode <root|tokenizer.json> <text…> [--json]`: text to token ids. */
import type { Command } from 'commander';
import { CliContext, UsageError } from '../context';

/** Registers `encode`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('encode')
    .description('encode text to token ids')
    .argument('<target>', 'a dataset folder, a folder holding tokenizer.json, or a tokenizer.json')
    .argument('[text...]', 'the text (words are joined with single spaces)')
    .option('--json', 'print {"text","ids"}')
    .action(ctx.run(async (target: string, rest: string[], opts: { json?: boolean }, cmd: Command) => {
      if (rest.length === 0) throw new UsageError('encode needs <root|tokenizer.json> and the text');
      const tok = await ctx.tokenizerFor(target, cmd);
      const text = rest.join(' ');
      const ids = await tok.encode(text);
      if (opts.json) ctx.out(JSON.stringify({ text, ids }));
      else ctx.out(ids.join(' '));
      return 0;
    }));
}
