/**
 * `token-shards encode <root|tokenizer.json> [text…] [--file F] [--json] [--time-limit S]`: text
 * to token ids. The text comes from the arguments, from `--file` (`-` = stdin), or from stdin
 * when it is not a terminal, up to {@link MAX_ENCODE_BYTES} (refused above, naming the file).
 * Encoding runs in a worker thread with a time limit (core `encode.ts`); Ctrl-C stops it.
 */
import * as fs from 'fs';
import type { Command } from 'commander';
import { DataError } from '../../core/errors';
import { fmt } from '../../core/units';
import { UnreadableInputError, fileKind, readRegularTextFile } from '../../core/safeRead';
import { CliContext, UsageError } from '../context';

/**
 * Most bytes of text `encode` takes (from `--file` or stdin): 64 MiB. Encoding takes about a
 * second per 20,000 characters on one thread, so more would run for hours; split the text.
 */
export const MAX_ENCODE_BYTES = 64 * 1024 * 1024;

/** Reads all of stdin as UTF-8, refusing more than {@link MAX_ENCODE_BYTES}. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of process.stdin) {
    total += (c as Buffer).length;
    if (total > MAX_ENCODE_BYTES)
      throw new UsageError(`standard input: more than ${fmt(MAX_ENCODE_BYTES)} bytes, the most encode takes; split the text`);
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads `--file`: a regular file of at most {@link MAX_ENCODE_BYTES} (UsageError naming it otherwise). */
async function readTextFile(ctx: CliContext, file: string): Promise<string> {
  const shown = `--file ${ctx.term(file)}`;
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    throw new UsageError(`${shown}: no such file`);
  }
  // `--file /dev/stdin` (or /proc/self/fd/0): standard input itself, as `--file -`.
  const fd0 = fs.fstatSync(0);
  if (!st.isFile() && st.dev === fd0.dev && st.ino === fd0.ino) return readStdin();
  if (!st.isFile()) {
    const stdin = st.isFIFO() || st.isCharacterDevice() || st.isSocket() ? '; to read standard input, pass --file -' : '';
    throw new UsageError(`${shown}: is ${fileKind(st)}; expected a text file${stdin}`);
  }
  if (st.size > MAX_ENCODE_BYTES)
    throw new UsageError(`${shown}: ${fmt(st.size)} bytes is more than the ${fmt(MAX_ENCODE_BYTES)} bytes encode takes; split the text`);
  try {
    return await readRegularTextFile(file, 'a text file', MAX_ENCODE_BYTES);
  } catch (err) {
    if (err instanceof UnreadableInputError) throw new UsageError(`${shown}: ${err.message.replace(/^[^:]*: /, '')}`);
    throw new DataError(`${shown}: cannot read: ${(err as Error).message}`, file);
  }
}

/** Registers `encode`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('encode')
    .description('encode text to token ids (text from the arguments, --file, or stdin)')
    .argument('<target>', 'a dataset folder, a folder holding tokenizer.json, or a tokenizer.json')
    .argument('[text...]', 'the text (words are joined with single spaces); omit it to read --file or stdin')
    .option('--file <file>', `read the text from this file (- for stdin); at most ${fmt(MAX_ENCODE_BYTES)} bytes`)
    .option('--time-limit <seconds>', 'give up after this many seconds (default: 10 s + 1 s per 20,000 characters)')
    .option('--json', 'print {"text","ids"}')
    .action(
      ctx.run(async (target: string, rest: string[], opts: { file?: string; timeLimit?: string; json?: boolean }, cmd: Command) => {
        if (rest.length && opts.file) throw new UsageError('give the text either as arguments or with --file, not both');
        let text: string;
        if (rest.length) text = rest.join(' ');
        else if (opts.file !== undefined && opts.file !== '-') {
          if (opts.file.trim() === '') throw new UsageError('--file "": expected a file name (or - for standard input)');
          text = await readTextFile(ctx, opts.file);
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
