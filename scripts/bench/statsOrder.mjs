/**
 * `stats` through a training order vs the card's sequential `stats`, on the same data and the same
 * number of input tokens: a Megatron GPTDataset (`.bin`/`.idx` written by
 * scripts/make-order-fixtures.py's writer from the sample's real text repeated REPEAT times; run:
 * sequence length 2,048, seed 1234, B = 64, one epoch, indices rebuilt as gpt_dataset.py does).
 * B × 2,048 = 131,072 input tokens per step, the card's G per update, so N steps through the
 * order and N card updates are statistics over the same number of tokens (every field, with the
 * tokenizer). Through the order each step reads its 64 samples' pieces from anywhere in the
 * stream. Whole CLI processes (`/usr/bin/time`: wall and user + system CPU seconds), after one
 * warm-up run that builds and caches the indices; ratio = sequential / through the order.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const REPEAT = 12;
const STEPS = 100;

/** Runs the CLI under /usr/bin/time: wall seconds, CPU seconds (user + system) and the JSON it printed. */
function timed(ctx, args, env) {
  const out = path.join(os.tmpdir(), `tsi-bench-stats-order-${process.pid}.time`);
  const stdout = execFileSync(
    '/usr/bin/time',
    ['-f', '%e %U %S', '-o', out, process.execPath, path.join(ctx.repo, 'dist', 'cli.js'), ...args],
    { encoding: 'utf8', maxBuffer: 1 << 28, env },
  );
  const [wall, user, sys] = fs.readFileSync(out, 'utf8').trim().split(/\s+/).slice(-3).map(Number);
  fs.rmSync(out, { force: true });
  return { wall, cpu: user + sys, json: JSON.parse(stdout) };
}

export async function run(ctx) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-bench-stats-order-'));
  try {
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
        String(REPEAT),
      ],
      { stdio: 'inherit' },
    );
    const tokDir = path.join(dir, 'megatron', 'tokenizer');
    fs.mkdirSync(tokDir);
    fs.copyFileSync(path.join(ctx.sample, 'tokenizer', 'tokenizer.json'), path.join(tokDir, 'tokenizer.json'));
    const bin = path.join(dir, 'megatron', 'text_document.bin');
    const runFile = path.join(dir, 'run.json');
    const trainIters = Math.floor(fs.statSync(bin).size / 4 / 2048 / 64);
    fs.writeFileSync(
      runFile,
      JSON.stringify({ order: 'megatron', sequence_length: 2048, seed: 1234, global_batch_size: 64, train_iters: trainIters }),
    );
    const env = { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cache') };
    const seqUpdates = Math.floor(fs.statSync(bin).size / 4 / 131072);
    const n = Math.min(STEPS, trainIters, seqUpdates);
    const range = `0..${n - 1}`;
    timed(ctx, ['--run', runFile, 'stats', bin, '0', '--json'], env); // builds and caches the indices
    const seq = timed(ctx, ['stats', bin, range, '--json'], env);
    const ord = timed(ctx, ['--run', runFile, 'stats', bin, range, '--json'], env);
    const tokens = (r) => r.json.reduce((a, s) => a + (s.tokens ?? s.token_range[1] - s.token_range[0]), 0);
    const ranges = ord.json.reduce((a, s) => a + s.ranges, 0);
    const note = `${n} Megatron steps (B = 64 × 2,048) vs ${n} card updates (G = 131,072): ${tokens(ord)} vs ${tokens(seq)} input tokens; ${ranges} stream ranges read through the order`;
    ctx.log(
      `stats ${range}: sequential ${seq.cpu.toFixed(2)} CPU-s (${seq.wall.toFixed(2)} s wall), through the order ${ord.cpu.toFixed(2)} CPU-s (${ord.wall.toFixed(2)} s wall)`,
    );
    return [
      {
        name: `stats through a Megatron order vs sequential, ${n} updates (CPU user+sys, s)`,
        ours: ord.cpu,
        reference: seq.cpu,
        unit: 's',
        ratio: seq.cpu / ord.cpu,
        note,
      },
      {
        name: `stats through a Megatron order vs sequential, ${n} updates (wall, s)`,
        ours: ord.wall,
        reference: seq.wall,
        unit: 's',
        ratio: seq.wall / ord.wall,
        note: 'whole CLI processes (/usr/bin/time), indices cached by a warm-up run',
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
