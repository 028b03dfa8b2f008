/**
 * A Megatron run for the benchmarks that go through a training order (scripts/bench/countOrder.mjs,
 * statsOrder.mjs): a GPTDataset `.bin`/`.idx` written as Megatron's IndexedDatasetBuilder writes
 * them (by scripts/make-order-fixtures.py's writer) from the sample's real text repeated `repeat`
 * times, the sample's tokenizer beside it, and a `run.json` (sequence length 2,048, seed 1234,
 * B = 64, one epoch: `train_iters` = ⌊tokens / 2,048 / 64⌋; indices rebuilt as gpt_dataset.py does);
 * and the CLI timed as a whole process.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Writes the dataset and run description into `dir`.
 * @param {{ repo: string, sample: string }} ctx the bench context.
 * @returns {{ bin: string, runFile: string, trainIters: number, tokens: number }} paths, the run's steps and the stream's tokens.
 */
export function makeMegatronRun(ctx, dir, repeat) {
  execFileSync(
    'python3',
    [
      '-c',
      `import importlib.util, sys, numpy as np
spec = importlib.util.spec_from_file_location("fx", sys.argv[1]); fx = importlib.util.module_from_spec(spec); spec.loader.exec_module(fx)
fx.write_megatron_dataset(sys.argv[3], np.tile(fx.stream_of(sys.argv[2]), int(sys.argv[4])))`,
      path.join(ctx.repo, 'scripts', 'make-order-fixtures.py'),
      ctx.sample,
      path.join(dir, 'megatron'),
      String(repeat),
    ],
    { stdio: 'inherit' },
  );
  const tokDir = path.join(dir, 'megatron', 'tokenizer');
  fs.mkdirSync(tokDir);
  fs.copyFileSync(path.join(ctx.sample, 'tokenizer', 'tokenizer.json'), path.join(tokDir, 'tokenizer.json'));
  const bin = path.join(dir, 'megatron', 'text_document.bin');
  const runFile = path.join(dir, 'run.json');
  const tokens = fs.statSync(bin).size / 4;
  const trainIters = Math.floor(tokens / 2048 / 64);
  fs.writeFileSync(
    runFile,
    JSON.stringify({ order: 'megatron', sequence_length: 2048, seed: 1234, global_batch_size: 64, train_iters: trainIters }),
  );
  return { bin, runFile, trainIters, tokens };
}

/**
 * Runs the CLI under /usr/bin/time.
 * @param {{ repo: string }} ctx the bench context. @param {string[]} args the CLI's arguments. @param {NodeJS.ProcessEnv} env
 * @returns {{ wall: number, cpu: number, json: any }} wall seconds, CPU seconds (user + system) and the JSON it printed.
 */
export function timedCli(ctx, args, env) {
  const out = path.join(os.tmpdir(), `tsi-bench-cli-${process.pid}.time`);
  const stdout = execFileSync(
    '/usr/bin/time',
    ['-f', '%e %U %S', '-o', out, process.execPath, path.join(ctx.repo, 'dist', 'cli.js'), ...args],
    { encoding: 'utf8', maxBuffer: 1 << 28, env },
  );
  const [wall, user, sys] = fs.readFileSync(out, 'utf8').trim().split(/\s+/).slice(-3).map(Number);
  fs.rmSync(out, { force: true });
  return { wall, cpu: user + sys, json: JSON.parse(stdout) };
}
