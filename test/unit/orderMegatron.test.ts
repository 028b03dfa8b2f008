/**
 * Megatron GPTDataset order against a run made by scripts/make-order-fixtures.py (a Python port of
 * Megatron's index building with numpy's own RandomState, files written as Megatron writes them):
 * the product's batches at the first step, a step across the epoch boundary and the last step equal
 * the reference's samples id for id; every probed offset's reads equal the brute-force reference;
 * every token of a checked step maps back to that step; the rebuild from the description equals
 * the cached files element for element, and a changed element is named.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { OrderCache } from '../../src/core/order/order';
import {
  MegatronOrder,
  buildMegatronIndices,
  compareMegatronIndices,
  findMegatronCache,
  parseMegatronDescription,
} from '../../src/core/order/megatron';
import { assertSpansMatchReference, idsOf, idxLengths, orderFixtures, removeOrderFixtures } from './orderFixtures';

describe('training order: Megatron GPTDataset', function () {
  this.timeout(600_000);
  after(removeOrderFixtures);

  for (const run of ['two-epochs', 'three-epochs']) {
    describe(run, () => {
      const open = (cacheDir: string): MegatronOrder => {
        const { dir, ref } = orderFixtures();
        const r = ref.megatron[run];
        const files = findMegatronCache(path.join(dir, 'megatron', `run-${run}`, 'cache'));
        const desc = parseMegatronDescription(fs.readFileSync(files.description, 'utf8'), files.description);
        return new MegatronOrder({
          lengths: idxLengths(path.join(dir, 'megatron', 'text_document.idx')),
          files,
          sequenceLength: desc.sequenceLength,
          addExtraToken: desc.addExtraToken,
          globalBatchSize: r.global_batch_size,
          trainIters: r.train_iters,
          cache: new OrderCache(cacheDir),
          source: 'fixture',
        });
      };

      it('batches at the first step, across the epoch boundary and the last step equal the reference, id for id', () => {
        const { dir, ref, stream } = orderFixtures();
        const r = ref.megatron[run];
        const order = open(path.join(dir, 'order-cache'));
        try {
          assert.strictEqual(order.numUpdates, r.train_iters);
          assert.strictEqual(order.numSamples, r.samples);
          assert.strictEqual(order.sampleTokens, r.sequence_length + 1);
          for (const [k, rows] of Object.entries(r.steps)) {
            const got = order.update(Number(k)).map((s) => idsOf(stream, s.pieces));
            assert.strictEqual(got.length, rows.length);
            got.forEach((ids, slot) => assert.deepStrictEqual(ids, rows[slot], `step ${k} slot ${slot}`));
          }
        } finally {
          order.close();
        }
      });

      it('reads of every probed offset equal the brute-force reference (several epochs, the shared target token)', () => {
        const { dir, ref } = orderFixtures();
        const r = ref.megatron[run];
        const order = open(path.join(dir, 'order-cache'));
        try {
          let multi = 0;
          for (const t of ref.probes) {
            const got = order.reads(t).map((x) => [x.update, x.slot, x.position]);
            const want = r.reads[String(t)];
            assert.deepStrictEqual(got, want, `offset ${t}`);
            if (want.length > 1) multi++;
          }
          assert.ok(multi > 0, 'some probed tokens are read in several epochs');
        } finally {
          order.close();
        }
      });

      it('inputSpan: a span that covers a probed token names the reference’s input updates of it; spans tile the stream', () => {
        const { dir, ref } = orderFixtures();
        const r = ref.megatron[run];
        const order = open(path.join(dir, 'order-cache'));
        try {
          const longer = assertSpansMatchReference(order, ref.probes, r.reads, ref.stream_tokens, 2 * r.sequence_length);
          assert.ok(longer > 0, 'spans longer than one token were checked');
        } finally {
          order.close();
        }
      });

      it('every token of a checked step maps back to that step and slot', () => {
        const { dir, ref } = orderFixtures();
        const r = ref.megatron[run];
        const order = open(path.join(dir, 'order-cache'));
        try {
          for (const k of Object.keys(r.steps).map(Number)) {
            for (const s of order.update(k)) {
              let pos = 0;
              for (const p of s.pieces) {
                for (let t = p.start; t < p.end; t++, pos++) {
                  assert.ok(
                    order.reads(t).some((x) => x.update === k && x.slot === s.slot && x.position === pos),
                    `offset ${t} (step ${k}, slot ${s.slot}, position ${pos})`,
                  );
                }
              }
            }
          }
        } finally {
          order.close();
        }
      });

      it('rebuilding from description.txt and the .idx equals the cached files; a changed element is named', () => {
        const { dir, ref } = orderFixtures();
        const r = ref.megatron[run];
        const files = findMegatronCache(path.join(dir, 'megatron', `run-${run}`, 'cache'));
        const desc = parseMegatronDescription(fs.readFileSync(files.description, 'utf8'), files.description);
        assert.strictEqual(files.hash, r.hash);
        const built = buildMegatronIndices(idxLengths(path.join(dir, 'megatron', 'text_document.idx')), {
          sequenceLength: desc.sequenceLength,
          seed: desc.seed,
          numSamples: desc.numSamples,
          addExtraToken: desc.addExtraToken,
        });
        assert.strictEqual(built.numEpochs, r.epochs);
        assert.strictEqual(built.separateFinalEpoch, r.separate_final_epoch);
        assert.strictEqual(compareMegatronIndices(built, files), undefined);
        const bad = path.join(dir, `bad-${run}-shuffle_index.npy`);
        const bytes = fs.readFileSync(files.shuffleIndex);
        const at = bytes.length - 4 * 7;
        bytes.writeUInt32LE(bytes.readUInt32LE(at) ^ 1, at);
        fs.writeFileSync(bad, bytes);
        const n = built.shuffleIndex.length;
        assert.match(
          compareMegatronIndices(built, { ...files, shuffleIndex: bad }) ?? '',
          new RegExp(`bad-${run}-shuffle_index\\.npy: element ${(n - 7).toLocaleString('en-US')} is \\d+, but the rebuild`),
        );
      });
    });
  }

  it('the shuffle inverse is built once and found in the cache by the next open', () => {
    const { dir, ref } = orderFixtures();
    const cacheDir = path.join(dir, 'order-cache-once');
    const files = findMegatronCache(path.join(dir, 'megatron', 'run-two-epochs', 'cache'));
    const mk = () =>
      new MegatronOrder({
        lengths: idxLengths(path.join(dir, 'megatron', 'text_document.idx')),
        files,
        sequenceLength: 512,
        addExtraToken: true,
        globalBatchSize: 8,
        trainIters: 700,
        cache: new OrderCache(cacheDir),
        source: 'fixture',
      });
    const a = mk();
    a.reads(ref.probes[5]);
    a.close();
    const inv = fs.readdirSync(cacheDir).filter((f) => f.endsWith('-shuffle.inv'));
    assert.strictEqual(inv.length, 1);
    const mtime = fs.statSync(path.join(cacheDir, inv[0])).mtimeMs;
    const b = mk();
    assert.deepStrictEqual(
      b.reads(ref.probes[5]).map((x) => [x.update, x.slot, x.position]),
      ref.megatron['two-epochs'].reads[String(ref.probes[5])],
    );
    b.close();
    assert.strictEqual(fs.statSync(path.join(cacheDir, inv[0])).mtimeMs, mtime);
  });
});
