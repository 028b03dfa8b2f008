/**
 * OLMo and llm.c orders against runs made by scripts/make-order-fixtures.py: OLMo's
 * `global_indices.npy` written with numpy's own `Generator(PCG64(seed + epoch))` as OLMo-core
 * does, llm.c's batches from a Python port of `llmc/dataloader.h` with 3 processes, shuffling on
 * and 2 micro-steps per step, run into its second epoch. The product's batches at the first step,
 * a middle or epoch-boundary step and the last step equal the reference id for id, and the reads
 * of every probed offset equal the reference's brute force.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { OrderCache, StreamFile } from '../../src/core/order/order';
import { OlmoOrder, buildOlmoGlobalIndices, olmoInstances, openOlmoGlobalIndices } from '../../src/core/order/olmo';
import { LlmcOrder } from '../../src/core/order/llmc';
import { assertMatchesReference, assertSpansMatchReference, orderFixtures, removeOrderFixtures } from './orderFixtures';

function streamFiles(dir: string, names: string[], headerBytes: number): StreamFile[] {
  let start = 0;
  return names.map((name) => {
    const tokens = (fs.statSync(path.join(dir, name)).size - headerBytes) / 4;
    const f = { name, start, tokens };
    start += tokens;
    return f;
  });
}

describe('training order: OLMo and llm.c', function () {
  this.timeout(600_000);
  after(removeOrderFixtures);

  describe('OLMo', () => {
    const open = (indices: 'file' | 'rebuilt') => {
      const { dir, ref } = orderFixtures();
      const r = ref.olmo;
      const files = streamFiles(path.join(dir, 'olmo'), r.files, 0);
      const file = path.join(dir, 'olmo', 'global_indices.npy');
      const n = olmoInstances(files, r.sequence_length).reduce((a, b) => a + b, 0);
      const params = { seed: r.seed, epoch: r.epoch, rule: 'olmo-core' as const };
      return new OlmoOrder({
        files,
        sequenceLength: r.sequence_length,
        globalBatchSize: r.global_batch_size,
        indices: indices === 'file' ? openOlmoGlobalIndices(file) : buildOlmoGlobalIndices(n, params),
        source: indices,
        cache: new OrderCache(path.join(dir, 'order-cache')),
        cacheSources: indices === 'file' ? [file] : [],
        cacheParams: indices === 'file' ? {} : params,
      });
    };

    for (const indices of ['file', 'rebuilt'] as const) {
      it(`batches and reads equal the reference (global indices ${indices === 'file' ? 'read from the file' : 'rebuilt from seed and epoch'})`, () => {
        const { ref, stream } = orderFixtures();
        const r = ref.olmo;
        const order = open(indices);
        try {
          assert.strictEqual(order.numInstances, r.instances);
          const none = assertMatchesReference(order, stream, ref.probes, r).filter((w) => w.length === 0).length;
          assert.ok(none > 0, 'dropped file tails and the last partial batch are never read');
          const longer = assertSpansMatchReference(order, ref.probes, r.reads, ref.stream_tokens, 2 * r.sequence_length);
          assert.ok(longer > 0, 'inputSpan: spans longer than one token were checked');
        } finally {
          order.close();
        }
      });
    }

    it('the rebuild equals the file written by numpy, element for element', () => {
      const { dir, ref } = orderFixtures();
      const r = ref.olmo;
      const file = openOlmoGlobalIndices(path.join(dir, 'olmo', 'global_indices.npy'));
      const built = buildOlmoGlobalIndices(r.instances, { seed: r.seed, epoch: r.epoch, rule: 'olmo-core' });
      assert.deepStrictEqual(Array.from(file.readRange(0, file.length)), Array.from(built));
      file.close();
    });
  });

  describe('llm.c', () => {
    it('batches at the first step, the epoch boundary and the last step, and the reads, equal the dataloader.h port', () => {
      const { dir, ref, stream } = orderFixtures();
      const r = ref.llmc;
      const order = new LlmcOrder({
        files: streamFiles(path.join(dir, 'llmc'), r.files, 1024),
        B: r.B,
        T: r.T,
        processes: r.processes,
        gradAccumSteps: r.grad_accum_steps,
        steps: r.steps_total,
        shuffle: true,
      });
      assert.strictEqual(order.samplesPerUpdate, r.B * r.processes * r.grad_accum_steps);
      const twice = assertMatchesReference(order, stream, ref.probes, r).filter((want) => new Set(want.map((w) => w[0])).size > 1).length;
      assert.ok(twice > 0, 'tokens read in both epochs');
      const longer = assertSpansMatchReference(order, ref.probes, r.reads, ref.stream_tokens, 2 * r.T);
      assert.ok(longer > 0, 'inputSpan: spans longer than one token were checked');
    });

    it('refuses a shard shorter than one batch of all processes, naming it', () => {
      assert.throws(
        () => new LlmcOrder({ files: [{ name: 'shard_9.bin', start: 0, tokens: 100 }], B: 4, T: 64, processes: 1 }),
        /shard_9\.bin: 100 tokens, fewer than one batch of all processes needs \(P·B·T \+ 1 = 257\)/,
      );
    });
  });
});
