/**
 * `token-shards encode <root|tokenizer.json> [text…] [--file F] [--json] [--time-limit S]`: text
 * to token ids. The text comes from the arguments, from `--file` (`-` = stdin), or from stdin
 * when it is not a terminal, so texts of any size can be passed. Encoding runs in a worker
 * thread with a time limit (core `encode.ts`).
 */
import * as fs from 'fs';
import type { Command } from 'commander';
import { CliContext, UsageError } from '../context';

/** Reads all of stdin as UTF-8. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Registers `encode`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('encode')
    .description('encode text to token ids (text from the arguments, --file, or stdin)')
    .argument('<target>', 'a dataset folder, a folder holding tokenizer.json, or a tokenizer.json')
    .argument('[text...]', 'the text (words are joined with single spaces); omit it to read --file or stdin')
    .option('--file <file>', 'read the text from this file (- for stdin)')
    .option('--time-limit <seconds>', 'give up after this many seconds (default: 10 s + 1 s per 20,000 characters)')
    .option('--json', 'print {"text","ids"}')
    .action(
      ctx.run(async (target: string, rest: string[], opts: { file?: string; timeLimit?: string; json?: boolean }, cmd: Command) => {
        if (rest.length && opts.file) throw new UsageError('give the text either as arguments or with --file, not both');
        let text: string;
        if (rest.length) text = rest.join(' ');
        else if (opts.file && opts.file !== '-') {
          if (!fs.existsSync(opts.file) || !fs.statSync(opts.file).isFile())
            throw new UsageError(`--file ${ctx.term(opts.file)}: no such file`);
          text = fs.readFileSync(opts.file, 'utf8');
        } else if (opts.file === '-' || !process.stdin.isTTY) text = await readStdin();
        else throw new UsageError('encode needs the text: as arguments, with --file FILE, or on stdin');
        const seconds = ctx.int(opts.timeLimit, '--time-limit');
        if (seconds === 0) throw new UsageError('--time-limit must be ≥ 1 second');
        const tok = await ctx.tokenizerFor(target, cmd);
        try {
          const ids = await tok.encode(text, {
            timeLimitMs: seconds !== undefined ? seconds * 1000 : undefined,
            signal: ctx.cancellable(),
          });
          if (opts.json) ctx.out(ctx.json({ text, ids }));
          else await ctx.write(ids.join(' ') + '\n');
        } finally {
          tok.dispose?.();
        }
        return 0;
      }),
    );
}
