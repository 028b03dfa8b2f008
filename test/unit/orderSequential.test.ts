/**
 * The dataset card's order through the training-order interface: update k's samples equal the
 * card's `x`/`y` rows (the reference reader's batch, `x[r] + [y[r][-1]]` = the L + 1 tokens read),
 * and every token of an update reads back to it (as an input, and as the previous sequence's target).
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { Schedule, DEFAULT_SCHEDULE } from '../../src/core/schedule';
import { SequentialOrder } from '../../src/core/order/sequential';
import { inputUpdates } from '../../src/core/order/order';
import { pyUpdates } from './pyref';
import { sampleDir } from './fixtures';
import { idsOf, orderFixtures, removeOrderFixtures } from './orderFixtures';

describe('training order: sequential (the dataset card)', function () {
  this.timeout(300_000);
  after(removeOrderFixtures);
  const root = sampleDir();
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'manifest.json'), 'utf8')) as { stored_tokens: number };
  const G = 16_384,
    L = 512;
  const order = new SequentialOrder(
    new Schedule({ ...DEFAULT_SCHEDULE, globalTokensPerUpdate: G, sequenceLength: L }, manifest.stored_tokens),
  );

  it('update k = the card reader batch, sequence by sequence, for the first, a middle and the last update', () => {
    const ks = [0, Math.floor(order.numUpdates / 2), order.numUpdates - 1];
    const ref = pyUpdates(root, ks, G, L);
    const { stream } = orderFixtures();
    for (const k of ks) {
      const b = ref.get(k)!;
      const samples = order.update(k);
      assert.strictEqual(samples.length, G / L);
      for (const s of samples) {
        assert.deepStrictEqual(s.pieces, [{ start: G * k + L * s.slot, end: G * k + L * (s.slot + 1) + 1 }]);
        assert.deepStrictEqual(idsOf(stream, s.pieces), [...b.x[s.slot], b.y[s.slot][L - 1]], `update ${k} sequence ${s.slot}`);
      }
    }
  });

  it('reads: an input of its own sequence, and the target of the sequence before at each boundary', () => {
    const k = 3;
    const start = G * k;
    assert.deepStrictEqual(
      order.reads(start + L).map((r) => [r.update, r.slot, r.position, r.target]),
      [
        [k, 0, L, true],
        [k, 1, 0, false],
      ],
    );
    assert.deepStrictEqual(inputUpdates(order, start + 5), [k]);
    assert.deepStrictEqual(order.reads(G * order.numUpdates + 1), [], 'tokens after the last update are never read');
  });
});
