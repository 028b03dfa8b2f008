/** `token-shards decode <root|tokenizer.json> <id…> [--pieces] [--json]`: token ids to text. */
import type { Command } from 'commander';
import { fmt } from '../../core/units';
import { decodeForDisplay, unknownIdMark } from '../../core/tokenizer';
import { CliContext, EXIT, UsageError } from '../context';
import { unknownWarning } from '../diagnose';

/** Largest uint32: the largest value a shard can hold. */
const MAX_TOKEN_ID = 0xffffffff;

/** Registers `decode`. Exit 1 when an id is not in the vocabulary (as in `tokens` and `update`); 2 for an id that is no uint32. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('decode')
    .description('decode token ids to text (ids may be separated by spaces, commas or brackets)')
    .argument('<target>', 'a dataset folder, a folder holding tokenizer.json, or a tokenizer.json')
    .argument('<ids...>', 'token ids')
    .option('--pieces', 'one line per token with its bytes')
    .option('--json', 'machine-readable output')
    .action(
      ctx.run(async (target: string, rest: string[], opts: { pieces?: boolean; json?: boolean }, cmd: Command) => {
        const ids = rest
          .flatMap((a) => a.split(/[\s,[\]]+/).filter(Boolean))
          .map((a) => {
            const id = ctx.int(a, `id ${JSON.stringify(ctx.term(a))}`)!;
            // Shards hold uint32: anything larger cannot be a token id in any of them.
            if (id > MAX_TOKEN_ID) throw new UsageError(`id ${fmt(id)} is not a token id: ids are uint32 (at most ${fmt(MAX_TOKEN_ID)})`);
            return id;
          });
        if (ids.length === 0)
          throw new UsageError(
            `decode needs at least one id; got only separators (${rest.map((a) => JSON.stringify(ctx.term(a))).join(' ')})`,
          );
        const tok = await ctx.tokenizerFor(target, cmd);
        const unknown = ids.filter((id) => !tok.isKnown(id));
        if (opts.pieces) {
          const pieces = tok.pieces(ids);
          if (opts.json) ctx.out(ctx.json(pieces));
          else
            ctx.out(
              pieces
                .map(
                  (p) =>
                    `${String(p.id).padStart(7)}  ${p.kind.padEnd(7)}  ${p.kind === 'unknown' ? unknownIdMark(p.id) : ctx.text(JSON.stringify(p.text))}  [${p.hex}]`,
                )
                .join('\n'),
            );
        } else if (opts.json) {
          ctx.out(ctx.json({ ids, text: tok.decode(ids), unknown_ids: unknown }));
        } else {
          // To a file or pipe: the text itself, byte for byte the tokenizer's decode (no newline
          // added); on a terminal, control characters as marks and a final newline.
          const text = decodeForDisplay(tok, ids).text;
          if (ctx.marks()) ctx.out(ctx.text(text, { keepLayout: true }));
          else await ctx.write(text);
        }
        if (unknown.length) {
          ctx.warn(
            `${unknownWarning(unknown.length, tok.vocabSize)}: ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ', …' : ''}`,
          );
          return EXIT.data;
        }
        return EXIT.ok;
      }),
    );
}
