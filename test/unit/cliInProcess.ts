/** The CLI run inside the test process: the same commander program as `dist/cli.js`, without starting Node. */
import { PassThrough } from 'stream';
import { main } from '../../src/cli/main';

/** Runs `token-shards ARGS` in-process; returns the exit code and what it wrote to stdout and stderr. */
export async function runCliInProcess(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough(),
    stderr = new PassThrough();
  let o = '',
    e = '';
  stdout.on('data', (d) => (o += d));
  stderr.on('data', (d) => (e += d));
  const code = await main(args, { stdout, stderr });
  return { code, stdout: o, stderr: e };
}
