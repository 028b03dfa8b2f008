/**
 * Training logs (src/core/trainingLog/parse.ts, spikes.ts) on the fixtures of scripts/make-metrics-fixture.mjs: a
 * planted spike found at the right update under both step conventions, in W&B CSV, OLMo-style
 * JSONL (bare NaN) and HF Trainer JSONL; NaN shown as NaN; restarts and duplicates resolved and
 * reported; ambiguous and missing columns; decimation keeps the spike.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import {
  describeLog,
  outOfRangeSteps,
  parseStepConvention,
  parseTrainingLog,
  stepReadings,
  stepToUpdate,
} from '../../src/core/trainingLog/parse';
import { chartSeries, findSpikes, spikeScores } from '../../src/core/trainingLog/spikes';
import { DataError } from '../../src/core/errors';
import { repoRoot } from './fixtures';

interface Expected {
  steps: number;
  spikeStep: number;
  nanStep: number;
  dupStep: number;
  restartStep: number;
  restartLineCsv: number;
  restartDropped: number;
}

describe('training logs and spike detection', function () {
  this.timeout(0);
  const dir = path.join(repoRoot(), 'out', 'fixtures', 'metrics');
  let exp: Expected;
  before(() => {
    execFileSync(process.execPath, [path.join(repoRoot(), 'scripts', 'make-metrics-fixture.mjs'), '--out', dir], { stdio: 'ignore' });
    exp = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8'));
  });

  for (const file of ['wandb.csv', 'olmo.jsonl', 'hf.jsonl']) {
    it(`${file}: the planted spike is found at update s − 1 ("after") and s ("update")`, async () => {
      const log = await parseTrainingLog(path.join(dir, file));
      const scores = spikeScores(log.losses);
      for (const conv of ['after', 'update'] as const) {
        const spikes = findSpikes(log.steps, log.losses, scores, 6, conv).filter((s) => s.kind === 'spike');
        assert.deepStrictEqual(
          spikes.map((s) => [s.step, s.update]),
          [[exp.spikeStep, conv === 'after' ? exp.spikeStep - 1 : exp.spikeStep]],
          conv,
        );
      }
      // NaN is listed as what it is, never dropped or turned into a number.
      const nf = findSpikes(log.steps, log.losses, scores, 6, 'after').filter((s) => s.kind === 'non-finite');
      assert.deepStrictEqual(
        nf.map((s) => [s.step, String(s.loss)]),
        [[exp.nanStep, 'NaN']],
      );
      assert.strictEqual(log.nonFiniteCount, 1);
      // Steps strictly increase, and every step 1..N is there once.
      assert.deepStrictEqual(
        Array.from(log.steps),
        Array.from({ length: exp.steps }, (_, i) => i + 1),
      );
    });
  }

  it('restarts and duplicates: the later run replaces the earlier points, each reported with its line', async () => {
    const log = await parseTrainingLog(path.join(dir, 'wandb.csv'));
    const restart = log.restarts.find((r) => r.kind === 'restart')!;
    assert.deepStrictEqual(
      [restart.line, restart.step, restart.previousStep, restart.dropped],
      [exp.restartLineCsv, exp.restartStep, exp.steps, exp.restartDropped],
    );
    assert.ok(log.restarts.some((r) => r.kind === 'duplicate' && r.step === exp.dupStep && r.dropped === 1));
    // The kept value at the restart step is the second run's (the fixture logs it 0.001 lower).
    const csv = fs
      .readFileSync(path.join(dir, 'wandb.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    const last = csv.filter((c) => Number(c[0]) === exp.restartStep).pop()!;
    assert.strictEqual(log.losses[exp.restartStep - 1], Number(last[1]));
    assert.ok(describeLog(log, 'after').some((l) => /restart/.test(l)));
  });

  it('ambiguous columns are reported with every candidate; explicit choices win', async () => {
    const f = path.join(dir, 'ambiguous.csv');
    const log = await parseTrainingLog(f);
    assert.ok(log.step.ambiguous && log.loss.ambiguous);
    assert.deepStrictEqual(log.step.candidates, ['Step', '_step']);
    assert.deepStrictEqual(log.loss.candidates, ['train/loss', 'loss']);
    const chosen = await parseTrainingLog(f, { stepColumn: '_step', lossColumn: 'loss' });
    assert.ok(!chosen.step.ambiguous && chosen.loss.column === 'loss');
    await assert.rejects(parseTrainingLog(f, { lossColumn: 'nope' }), /no column "nope"/);
  });

  it('a log with no step column fails with one message naming the columns', async () => {
    await assert.rejects(
      parseTrainingLog(path.join(dir, 'nostep.csv')),
      (e: Error) => e instanceof DataError && /no step column/.test(e.message) && /"epoch", "loss"/.test(e.message),
    );
    // A step column with no integers: named with its first line.
    await assert.rejects(parseTrainingLog(path.join(dir, 'nostep.csv'), { stepColumn: 'epoch' }), /holds no non-negative integer \(line 2/);
  });

  it("steps beyond the dataset's updates are counted per convention", async () => {
    const log = await parseTrainingLog(path.join(dir, 'wandb.csv'));
    const numUpdates = 18;
    const after = outOfRangeSteps(log.steps, 'after', numUpdates),
      upd = outOfRangeSteps(log.steps, 'update', numUpdates);
    const count = (conv: 'after' | 'update') =>
      Array.from(log.steps).filter((s) => {
        const u = stepToUpdate(s, conv);
        return u < 0 || u >= numUpdates;
      }).length;
    assert.strictEqual(after.count, count('after'));
    assert.strictEqual(upd.count, count('update'));
    assert.ok(after.count > 0);
  });

  it('bounded memory: past maxPoints the series is decimated and the spike survives', async () => {
    const big = path.join(dir, 'long');
    execFileSync(
      process.execPath,
      [path.join(repoRoot(), 'scripts', 'make-metrics-fixture.mjs'), '--out', big, '--steps', '5000', '--spike-step', '3333'],
      { stdio: 'ignore' },
    );
    const log = await parseTrainingLog(path.join(big, 'wandb.csv'), { maxPoints: 600 });
    assert.ok(log.decimation > 1 && log.steps.length <= 600);
    assert.ok(Array.from(log.steps).includes(3333));
    const spikes = findSpikes(log.steps, log.losses, spikeScores(log.losses), 6, 'after').filter((s) => s.kind === 'spike');
    assert.deepStrictEqual(
      spikes.map((s) => s.update),
      [3332],
    );
    const chart = chartSeries(log.steps, log.losses, 'after', 100);
    assert.ok(chart.x.length <= 2 * 100 + 10 && chart.x.includes(3332));
  });
});

describe('"step k" has one reading everywhere (training log, hover, Go to Update)', () => {
  it('the setting picks the first reading; the other comes second, only inside the stream', () => {
    const n = 400_000; // the dataset card's updates
    // The training log maps logged step 55,050 to update 55,049 under the default: the hover and Go to Update say the same first.
    assert.strictEqual(parseStepConvention(undefined), 'after');
    assert.strictEqual(parseStepConvention('update'), 'update');
    assert.strictEqual(parseStepConvention('bogus'), 'after');
    for (const conv of ['after', 'update'] as const) {
      const readings = stepReadings(55_050, conv, n);
      assert.strictEqual(readings[0], stepToUpdate(55_050, conv));
      assert.deepStrictEqual(
        [...readings].sort((a, b) => a - b),
        [55_049, 55_050],
      );
    }
    assert.deepStrictEqual(stepReadings(55_050, 'after', n), [55_049, 55_050]);
    assert.deepStrictEqual(stepReadings(0, 'after', n), [0], 'step 0 after zero updates is no update');
    assert.deepStrictEqual(stepReadings(n, 'update', n), [n - 1]);
    assert.deepStrictEqual(stepReadings(n + 1, 'update', n), []);
  });
});
