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
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeMegatronRun, timedCli as timed } from '../lib/megatron-run.mjs';

const REPEAT = 12;
const STEPS = 100;

export async function run(ctx) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-bench-stats-order-'));
  try {
    const { bin, runFile, trainIters } = makeMegatronRun(ctx, dir, REPEAT);
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
