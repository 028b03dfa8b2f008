/**
 * Export of updates through a run's training order: over the Megatron fixture run
 * (scripts/make-order-fixtures.py, a Python port of Megatron's index building), the npz of update
 * k written through the extension's order (`OrderClient`, a worker) and through the CLI's
 * (`token-shards export ROOT K --run FILE --format npz`), read back with numpy's `np.load`,
 * holds the reference batch of step k: `input_ids[0, s]` = sample s's first L ids,
 * `target_ids[0, s]` = its ids 1..L. jsonl and txt through the order are refused with one line.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { PassThrough } from 'stream';
import { runExport } from '../../src/cli/commands/export';
import { openPath } from '../../src/core/dataset';
import { exportUpdatesToFile } from '../../src/core/export';
import { orderInputsOf } from '../../src/core/order/datasetOrder';
import { openTrainingOrder, orderSpec } from '../../src/core/order/openOrder';
import { OrderCache } from '../../src/core/order/order';
import { OrderClient } from '../../src/core/order/orderClient';
import { readRunDescription } from '../../src/core/order/runFile';
import { orderFixtures, removeOrderFixtures, writeMegatronRunFile } from './orderFixtures';

/** `np.load(file)`'s two arrays, as nested lists (numpy's own zip and .npy reader). */
function npLoad(file: string): { x: number[][][]; y: number[][][]; dtype: string } {
  const py = [
    'import json, sys, numpy as np',
    'd = np.load(sys.argv[1])',
    'x, y = d["input_ids"], d["target_ids"]',
    'assert x.dtype == y.dtype',
    'print(json.dumps({"x": x.tolist(), "y": y.tolist(), "dtype": str(x.dtype)}))',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-c', py, file], { encoding: 'utf8', maxBuffer: 1 << 28 })) as {
    x: number[][][];
    y: number[][][];
    dtype: string;
  };
}

describe('export through the training order (Megatron run → npz)', function () {
  this.timeout(600_000);
  after(removeOrderFixtures);

  /** The fixture's two-epoch Megatron run: its dataset, run.json and reference. */
  async function megatronRun() {
    const { dir, ref } = orderFixtures();
    const r = ref.megatron['two-epochs'];
    const runFile = writeMegatronRunFile('export-run.json');
    const ds = (await openPath(path.join(dir, 'megatron', 'text_document.bin')))!;
    const run = await readRunDescription(runFile);
    const inputs = await orderInputsOf(ds, run, new OrderCache(path.join(dir, 'export-cache')));
    return { dir, r, ds, run, inputs };
  }

  /** Asserts that an npz holds the reference step k as one update: [1, B, L]. */
  function assertStep(file: string, rows: number[][], what: string) {
    const got = npLoad(file);
    assert.strictEqual(got.dtype, 'uint32', what);
    assert.deepStrictEqual(
      got.x[0],
      rows.map((row) => row.slice(0, row.length - 1)),
      `${what}: input_ids`,
    );
    assert.deepStrictEqual(
      got.y[0],
      rows.map((row) => row.slice(1)),
      `${what}: target_ids`,
    );
  }

  it("the extension's order (worker) and the CLI's write the reference batch of step k, id for id", async () => {
    const { dir, r, ds, run, inputs } = await megatronRun();
    const steps = Object.entries(r.steps);
    assert.strictEqual(steps.length, 3, 'first, an epoch boundary, last');
    const client = await OrderClient.open(orderSpec(run, inputs));
    try {
      for (const [k, rows] of steps) {
        const file = path.join(dir, `ext-${k}.npz`);
        await exportUpdatesToFile(ds, Number(k), Number(k), 'npz', file, { order: client });
        assertStep(file, rows, `extension, update ${k}`);
      }
      await assert.rejects(
        exportUpdatesToFile(ds, 0, 0, 'jsonl', path.join(dir, 'ext.jsonl'), { order: client }),
        /^RangeRequestError: through the run's megatron order only npz is exported \(asked: jsonl\); choose npz$/,
      );
      assert.ok(!fs.existsSync(path.join(dir, 'ext.jsonl')), 'nothing written for a refused export');
      await assert.rejects(
        exportUpdatesToFile(ds, r.train_iters, r.train_iters, 'npz', path.join(dir, 'ext-past.npz'), { order: client }),
        /update 700 is outside 0\.\.699/,
      );
    } finally {
      client.close();
    }
    const order = await openTrainingOrder(run, inputs);
    try {
      const [k, rows] = steps[steps.length - 1];
      const file = path.join(dir, `cli-${k}.npz`);
      const stderr = new PassThrough();
      const code = await runExport(ds, k, {
        format: 'npz',
        out: file,
        stdout: new PassThrough(),
        stderr,
        tokenizer: () => Promise.resolve(undefined),
        order,
      });
      assert.strictEqual(code, 0);
      assertStep(file, rows, `CLI, update ${k}`);
    } finally {
      order.close();
    }
  });
});
