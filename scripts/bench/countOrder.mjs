/**
 * `count` through a training order vs the plain sequential count, on the same data: a Megatron
 * GPTDataset (`.bin`/`.idx` written as Megatron's IndexedDatasetBuilder writes them, by
 * scripts/make-order-fixtures.py's writer, from the sample's real text repeated REPEAT times)
 * counted by the CLI once per update of the card's order, and once per update of a Megatron run
 * (`run.json`: sequence length 2,048, seed 1234, B = 64, one epoch; indices rebuilt as gpt_dataset.py does).
 * The first count through the order builds and caches the indices and the inverse; the row is
 * the second (cache warm), as a person's second search sees it; the first is a note. Both counts
 * are whole processes (`/usr/bin/time`: wall and user + system CPU seconds); ratio = sequential /
 * through the order. Goal (issue): the count through the order ≤ 1.2× the sequential count (ratio ≥ 0.83).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const REPEAT = 12;
const TERMS = ['the', 'Lily', ' model'];

/** Runs the CLI under /usr/bin/time: wall seconds, CPU seconds (user + system) and the JSON it printed. */
function timed(ctx, args, env) {
  const out = path.join(os.tmpdir(), `tsi-bench-count-order-${process.pid}.time`);
  const stdout = execFileSync(
    '/usr/bin/time',
    ['-f', '%e %U %S', '-o', out, process.execPath, path.join(ctx.repo, 'dist', 'cli.js'), ...args],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      env,
    },
  );
  const [wall, user, sys] = fs.readFileSync(out, 'utf8').trim().split(/\s+/).slice(-3).map(Number);
  fs.rmSync(out, { force: true });
  return { wall, cpu: user + sys, json: JSON.parse(stdout) };
}

export async function run(ctx) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-bench-count-order-'));
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
    // One epoch of samples: train_iters = ⌊tokens / 2,048 / 64⌋.
    const trainIters = Math.floor(fs.statSync(bin).size / 4 / 2048 / 64);
    fs.writeFileSync(
      runFile,
      JSON.stringify({ order: 'megatron', sequence_length: 2048, seed: 1234, global_batch_size: 64, train_iters: trainIters }),
    );
    const env = { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cache') };
    const args = ['count', bin, ...TERMS, '--per', '1', '--json'];
    const seq = timed(ctx, args, env);
    const first = timed(ctx, ['--run', runFile, ...args], env);
    const warm = timed(ctx, ['--run', runFile, ...args], env);
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
        ratio: seq.wall / warm.wall,
        note,
      },
      {
        bench: 'count order',
        name: 'count through a Megatron order vs sequential (CPU user+sys, s)',
        ours: warm.cpu,
        reference: seq.cpu,
        unit: 's',
        ratio: seq.cpu / warm.cpu,
        note: 'whole CLI processes (/usr/bin/time)',
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
