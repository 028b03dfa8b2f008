/** `token-shards tokens <root> --start S --count N [--json | --text]`: the token ids (or decoded text) of a global range. */
import type { Command } from 'commander';
import { count as countOf, fmt } from '../../core/units';
import { DisplayDecoder } from '../../core/tokenizer';
import { CliContext, EXIT, UsageError } from '../context';
import { diagnoseDataset, unknownWarning } from '../diagnose';

/** Tokens read and printed at a time: any count works in bounded memory, and output starts at once. */
export const TOKENS_PRINT_CHUNK = 1 << 20;

/** Registers `tokens`. Exit 1 when `--text` meets ids not in the vocabulary (as `decode` and `update`). */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('tokens')
    .description('print the token ids (or, with --text, the decoded text) of the global range [S, S+N)')
    .argument('<root>', 'dataset folder holding shard_manifest.jsonl (or one .u32 file)')
    .option('--start <S>', 'first global token offset')
    .option('--count <N>', 'number of tokens')
    .option('--json', 'print {"start","count","ids"}')
    .option('--text', 'print the decoded text (unknown ids as ⟨unknown N⟩; control characters as marks on a terminal)')
    .action(
      ctx.run(async (root: string, opts: { start?: string; count?: string; json?: boolean; text?: boolean }, cmd: Command) => {
        if (opts.json && opts.text)
          throw new UsageError('--json and --text exclude each other: --json prints ids as JSON, --text decoded text');
        const start = ctx.int(opts.start, '--start');
        const count = ctx.int(opts.count, '--count');
        if (start === undefined || count === undefined) throw new UsageError('tokens needs --start S and --count N');
        const ds = await ctx.open(root, cmd);
        ctx.warnSchedule(ds);
        if (start + count > ds.storedTokens) {
          throw new UsageError(
            `--start ${fmt(start)} --count ${fmt(count)} runs past the stream end (${countOf(ds.storedTokens, 'token')})`,
          );
        }
        // The tokenizer decodes --text; otherwise it only sizes the dtype diagnosis (skipped when it cannot load).
        const tok = opts.text
          ? await ctx.tokenizerFor(undefined, cmd, ds)
          : ds.tokenizerFile || ctx.globals(cmd).tokenizer
            ? await ctx.tokenizerFor(undefined, cmd, ds).catch(() => undefined)
            : undefined;
        if (tok) {
          const anomaly = await diagnoseDataset(ds, tok.vocabSize);
          if (anomaly && anomaly.kind !== 'out-of-vocab') ctx.warn(anomaly.message);
        }
        if (opts.text) {
          const dec = new DisplayDecoder(tok!);
          for (let at = 0; at < count; at += TOKENS_PRINT_CHUNK) {
            const ids = await ds.stream.read(start + at, Math.min(TOKENS_PRINT_CHUNK, count - at));
            await ctx.write(ctx.text(dec.push(ids), { keepLayout: true }));
          }
          await ctx.write(ctx.text(dec.end(), { keepLayout: true }) + '\n');
          // Ids not in the vocabulary are a data problem: exit 1, as in `decode` and `update`.
          if (dec.unknown) {
            ctx.warn(unknownWarning(dec.unknown, tok!.vocabSize));
            return EXIT.data;
          }
          return EXIT.ok;
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
      }),
    );
}
