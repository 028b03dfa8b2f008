#!/usr/bin/env node
/**
 * Metrics-file fixtures for the training-log tests, with a planted loss spike.
 * Writes into --out DIR (default test-results/metrics-fixture, git-ignored):
 *   wandb.csv      W&B export layout: "Step","train/loss","train/loss__MIN","train/loss__MAX","lr"
 *   olmo.jsonl     OLMo-core-like: {"step", "train/CE loss", "optim/LR"}; Python-style bare NaN
 *   hf.jsonl       Hugging Face Trainer log lines: {"loss","grad_norm","learning_rate","epoch","step"}, eval lines {"eval_loss","step"}
 *   nostep.csv     "epoch","loss": no integer step column
 *   ambiguous.csv  two step columns and two loss columns
 *   expected.json  what was planted: spike step, NaN step, restart, duplicate, steps
 * Every file logs the same curve: a smooth decay plus seeded noise, a spike of +SPIKE at SPIKE_STEP,
 * a NaN at NAN_STEP, a duplicate row at DUP_STEP, and (CSV and OLMo) a restart: after the last step the
 * run resumes from RESTART_STEP with other values.
 * Usage: node scripts/make-metrics-fixture.mjs [--out DIR] [--steps N] [--spike-step S]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from './lib/mulberry32.mjs';
import { parseArgs } from 'node:util';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: argv } = parseArgs({ options: { out: { type: 'string' }, steps: { type: 'string' }, 'spike-step': { type: 'string' } } });
const out = path.resolve(argv.out ?? path.join(repo, 'test-results', 'metrics-fixture'));
const STEPS = Number(argv.steps ?? 30);
const SPIKE_STEP = Number(argv['spike-step'] ?? 15);
const NAN_STEP = STEPS - 4;
const DUP_STEP = 5;
const RESTART_STEP = STEPS - 2;
const SPIKE = 2.5;

const rand = mulberry32(15);
const base = (s) => 3.0 + 0.5 * Math.exp(-s / 50) + (rand() - 0.5) * 0.02;
/** [step, loss] rows in logging order. */
const rows = [];
for (let s = 1; s <= STEPS; s++) {
  let v = base(s);
  if (s === SPIKE_STEP) v += SPIKE;
  if (s === NAN_STEP) v = NaN;
  rows.push([s, v]);
  if (s === DUP_STEP) rows.push([s, base(s)]);
}
const restarted = [];
for (let s = RESTART_STEP; s <= STEPS; s++) restarted.push([s, base(s) - 0.001]);

fs.mkdirSync(out, { recursive: true });
const num = (v) => (Number.isNaN(v) ? 'nan' : String(v));
const all = [...rows, ...restarted];
fs.writeFileSync(
  path.join(out, 'wandb.csv'),
  [
    '"Step","train/loss","train/loss__MIN","train/loss__MAX","lr"',
    ...all.map(([s, v]) => `${s},${num(v)},${num(v)},${num(v)},${((3e-4 * s) / STEPS).toExponential(3)}`),
  ].join('\n') + '\n',
);
fs.writeFileSync(
  path.join(out, 'olmo.jsonl'),
  all.map(([s, v]) => `{"step": ${s}, "train/CE loss": ${Number.isNaN(v) ? 'NaN' : v}, "optim/LR": ${3e-4}}`).join('\n') + '\n',
);
fs.writeFileSync(
  path.join(out, 'hf.jsonl'),
  rows
    .flatMap(([s, v]) => [
      JSON.stringify({ loss: Number.isNaN(v) ? 'NaN' : v, grad_norm: 1.5, learning_rate: 3e-4, epoch: s / STEPS, step: s }),
      ...(s % 10 === 0 ? [JSON.stringify({ eval_loss: v + 0.1, epoch: s / STEPS, step: s })] : []),
    ])
    .join('\n') + '\n',
);
fs.writeFileSync(path.join(out, 'nostep.csv'), ['epoch,loss', ...rows.map(([s, v]) => `${(s - 0.5) / STEPS},${num(v)}`)].join('\n') + '\n');
fs.writeFileSync(
  path.join(out, 'ambiguous.csv'),
  ['Step,_step,train/loss,loss', ...rows.map(([s, v]) => `${s},${s},${num(v)},${num(v)}`)].join('\n') + '\n',
);
fs.writeFileSync(
  path.join(out, 'expected.json'),
  JSON.stringify(
    {
      steps: STEPS,
      spikeStep: SPIKE_STEP,
      nanStep: NAN_STEP,
      dupStep: DUP_STEP,
      restartStep: RESTART_STEP,
      restartLineCsv: rows.length + 2,
      restartDropped: STEPS - RESTART_STEP + 1,
    },
    null,
    2,
  ) + '\n',
);
console.log(`metrics fixtures in ${path.relative(repo, out) || out}`);
