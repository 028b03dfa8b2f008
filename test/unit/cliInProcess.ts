/** The CLI run inside the test process: the same commander program as `dist/cli.js`, without starting Node. */
import * as fs from 'fs';
import { PassThrough } from 'stream';
import { main } from '../../src/cli/main';

/** How {@link runCliInProcess} connects standard output. */
export interface InProcessOptions {
  /** Write standard output to this device instead of capturing it (`/dev/full`: every write fails). */
  stdoutTo?: '/dev/full';
  /** Present the captured standard output as a terminal (control characters from data are marked then). */
  tty?: boolean;
}

/** Runs `token-shards ARGS` in-process; returns the exit code and what it wrote to stdout and stderr. */
export async function runCliInProcess(
  args: string[],
  opts: InProcessOptions = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = opts.stdoutTo ? fs.createWriteStream(opts.stdoutTo) : Object.assign(new PassThrough(), opts.tty ? { isTTY: true } : {}),
    stderr = new PassThrough();
  let o = '',
    e = '';
  if (stdout instanceof PassThrough) stdout.on('data', (d) => (o += d));
  stderr.on('data', (d) => (e += d));
  const code = await main(args, { stdout, stderr });
  if (!(stdout instanceof PassThrough)) stdout.destroy();
  return { code, stdout: o, stderr: e };
}
