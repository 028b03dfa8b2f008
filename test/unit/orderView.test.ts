/**
 * The extension's training order (`OrderClient`: the order opened in a worker thread, asked
 * asynchronously; `src/orderService.ts` builds one per dataset): over the Megatron fixture run
 * (scripts/make-order-fixtures.py, a Python port of Megatron's index building), its batches equal
 * the reference id for id and its reads the reference reads; the update view's model of a step
 * shows each sample's ids in batch order; a bad run file rejects with one line naming the file
 * and the field, and a cancelled open ends the worker.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { openPath } from '../../src/core/dataset';
import { CancelledError, DataError } from '../../src/core/errors';
import { orderInputsOf } from '../../src/core/order/datasetOrder';
import { orderSpec } from '../../src/core/order/openOrder';
import { OrderCache } from '../../src/core/order/order';
import { OrderClient } from '../../src/core/order/orderClient';
import { describeReads, orderName } from '../../src/core/order/orderText';
import { readRunDescription } from '../../src/core/order/runFile';
import { checkRunUpdate, namedOrder, pieceOffset, readOrderedUpdateModel } from '../../src/core/orderedUpdate';
import { idsOf, orderFixtures, removeOrderFixtures } from './orderFixtures';

describe('training order in a worker (the extension’s OrderClient)', function () {
  this.timeout(600_000);
  after(removeOrderFixtures);

  /** The fixture's Megatron run as the extension opens it: dataset by PATH, run.json, cache folder. */
  async function megatronSpec(runJson: object) {
    const { dir } = orderFixtures();
    const runFile = path.join(dir, 'megatron', `view-run-${Object.keys(runJson).length}.json`);
    fs.writeFileSync(runFile, JSON.stringify(runJson));
    const ds = (await openPath(path.join(dir, 'megatron', 'text_document.bin')))!;
    const run = await readRunDescription(runFile);
    return { ds, runFile, spec: orderSpec(run, await orderInputsOf(ds, run, new OrderCache(path.join(dir, 'view-cache')))) };
  }

  it('batches and reads equal the Megatron reference; names the order', async () => {
    const { ref, stream } = orderFixtures();
    const r = ref.megatron['two-epochs'];
    const { spec } = await megatronSpec({
      order: 'megatron',
      cache: 'run-two-epochs/cache',
      global_batch_size: r.global_batch_size,
      train_iters: r.train_iters,
    });
    const order = await OrderClient.open(spec);
    try {
      assert.strictEqual(order.kind, 'megatron');
      assert.strictEqual(order.numUpdates, r.train_iters);
      assert.strictEqual(orderName(order), `Megatron order, B=${r.global_batch_size} samples of ${r.sequence_length + 1} tokens`);
      for (const [k, rows] of Object.entries(r.steps)) {
        const samples = await order.update(Number(k));
        assert.strictEqual(samples.length, rows.length, `step ${k}`);
        for (const s of samples) assert.deepStrictEqual(idsOf(stream, s.pieces), rows[s.slot], `step ${k} slot ${s.slot}`);
      }
      const reads = await order.reads(ref.probes);
      ref.probes.forEach((t, i) =>
        assert.deepStrictEqual(
          reads[i].map((x) => [x.update, x.slot, x.position]),
          r.reads[String(t)],
          `reads of ${t}`,
        ),
      );
      const read = ref.probes.findIndex((_, i) => reads[i].length > 0);
      const first = reads[read][0];
      assert.match(describeReads(reads[read]), new RegExp(`^update ${first.update}, sample ${first.sample} \\(slot ${first.slot}\\)`));
      await assert.rejects(order.update(r.train_iters), /update 700 is outside 0\.\.699/);
      // The update view's model of each reference step: one row per sample in batch order, its
      // inputs then its extra target = the reference ids; segments tile the inputs, a jump at each piece.
      const ds = (await openPath(path.join(orderFixtures().dir, 'megatron', 'text_document.bin')))!;
      const named = namedOrder(order);
      for (const [k, rows] of Object.entries(r.steps)) {
        const samples = await order.update(Number(k));
        const m = await readOrderedUpdateModel(ds, Number(k), samples, named, undefined);
        assert.strictEqual(m.rows.length, rows.length);
        assert.strictEqual(m.order?.kind, 'megatron');
        m.rows.forEach((row, i) => {
          assert.strictEqual(row.index, i);
          assert.strictEqual(row.sample, samples[i].sample);
          assert.deepStrictEqual([...row.x, row.next!.id], rows[i], `step ${k} slot ${i}`);
          assert.strictEqual(row.segments[0].start, 0);
          assert.strictEqual(row.segments[row.segments.length - 1].end, r.sequence_length);
          let col = 0;
          const jumps = samples[i].pieces.filter((p, pi) => {
            const starts = col;
            col += p.end - p.start;
            return pi > 0 && starts < r.sequence_length;
          }).length;
          assert.strictEqual(row.segments.filter((g) => g.jump).length, jumps, `step ${k} slot ${i} jumps`);
          for (const g of row.segments)
            assert.strictEqual(g.offset, pieceOffset(samples[i].pieces, g.start), `step ${k} slot ${i} segment offset`);
        });
        assert.strictEqual(checkRunUpdate(r.train_iters, named).ok, false);
        assert.strictEqual(checkRunUpdate(Number(k), named).ok, true);
      }
    } finally {
      order.close();
    }
  });

  it('a bad run file rejects with one line naming the file and the field; cancel ends the open', async () => {
    const { spec, runFile } = await megatronSpec({
      order: 'megatron',
      cache: 'run-two-epochs/cache',
      global_batch_size: 8,
      train_iters: 10 ** 9,
    });
    await assert.rejects(OrderClient.open(spec), (err: Error) => {
      assert.ok(err instanceof DataError);
      assert.match(err.message, /train_iters 1,000,000,000 needs/);
      assert.strictEqual(err.message.split('\n').length, 1);
      return true;
    });
    fs.writeFileSync(runFile, JSON.stringify({ order: 'megatron', global_batch_size: 'eight' }));
    await assert.rejects(
      readRunDescription(runFile),
      new RegExp(`${runFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: "global_batch_size" is "eight"`),
    );
    const abort = new AbortController();
    abort.abort();
    await assert.rejects(OrderClient.open(spec, { signal: abort.signal }), (err: Error) => err instanceof CancelledError);
  });
});
