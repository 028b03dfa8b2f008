/**
 * `count` through a training order vs the plain sequential count, on the same data: a Megatron
 * GPTDataset (`.bin`/`.idx` written as Megatron's IndexedDatasetBuilder writes them, by
 * scripts/make-order-fixtures.py's writer, from the sample's real text repeated REPEAT times)
 * counted by the CLI once per update of the card's order, and once per update of a Megatron run
 * (`run.json`: sequence length 2,048, seed 1234, B = 64, one epoch; indices rebuilt as gpt_dataset.py does).
 * The first count through the order builds and caches the indices and the inverse; the row is
 * every later one (cache warm), as a person's second search sees it; the first is a note. Rows are
 * medians of alternating rounds (TSI_BENCH_ORDER_ROUNDS, default 7). Both counts
 * are whole processes (`/usr/bin/time`: wall and user + system CPU seconds); ratio = sequential /
 * through the order. Goal (issue): the count through the order ≤ 1.2× the sequential count (ratio ≥ 0.83).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeMegatronRun, timedCli as timed } from '../lib/megatron-run.mjs';

const REPEAT = 12;
const TERMS = ['the', 'Lily', ' model'];
/** Alternating rounds (TSI_BENCH_ORDER_ROUNDS, default 7). */
const ROUNDS = Math.max(1, Number(process.env.TSI_BENCH_ORDER_ROUNDS ?? 7));

export async function run(ctx) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-bench-count-order-'));
  try {
    const { bin, runFile } = makeMegatronRun(ctx, dir, REPEAT);
    const env = { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cache') };
    const args = ['count', bin, ...TERMS, '--per', '1', '--json'];
    const first = timed(ctx, ['--run', runFile, ...args], env);
    // Alternating rounds (the order swapped every round), medians: one pair of ~1 s processes
    // swings by a third on a shared machine.
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      const through = () => timed(ctx, ['--run', runFile, ...args], env);
      if (r % 2) {
        const b = through();
        rounds.push([timed(ctx, args, env), b]);
      } else {
        const a = timed(ctx, args, env);
        rounds.push([a, through()]);
      }
    }
    const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    const seq = { wall: med(rounds.map(([a]) => a.wall)), cpu: med(rounds.map(([a]) => a.cpu)), json: rounds[0][0].json };
    const warm = { wall: med(rounds.map(([, b]) => b.wall)), cpu: med(rounds.map(([, b]) => b.cpu)), json: rounds[0][1].json };
    const cpuRatio = med(rounds.map(([a, b]) => b.cpu / a.cpu));
    const wallRatio = med(rounds.map(([a, b]) => b.wall / a.wall));
    const tokens = fs.statSync(bin).size / 4;
    const sum = (r) => r.json.totals.reduce((a, b) => a + b, 0) + (r.json.not_read ?? []).reduce((a, b) => a + b, 0);
    const note = `${(tokens / 1e6).toFixed(1)}M tokens, ${TERMS.length} terms, --per 1; ${warm.json.updates} Megatron updates vs ${seq.json.updates} card updates; first count through the order (builds indices + inverse) ${first.wall.toFixed(1)} s wall; occurrences ${sum(seq)} in file order, ${sum(warm)} read or not through the order`;
    return [
      {
        bench: 'count order',
        name: 'count through a Megatron order vs sequential (wall, s)',
        ours: warm.wall,
        reference: seq.wall,
        unit: 's',
        ratio: 1 / wallRatio,
        note: `${note}; medians of ${ROUNDS} alternating rounds, ratio = median of the rounds' own ratios`,
      },
      {
        bench: 'count order',
        name: 'count through a Megatron order vs sequential (CPU user+sys, s)',
        ours: warm.cpu,
        reference: seq.cpu,
        unit: 's',
        ratio: 1 / cpuRatio,
        note: `whole CLI processes (/usr/bin/time); through the order ${cpuRatio.toFixed(2)}× the sequential CPU (median of ${ROUNDS} rounds' ratios); goal ≤ 1.2×`,
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
