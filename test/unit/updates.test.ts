/**
 * Every update of the sample, read through the CLI (`update --json`) and through the core,
 * equals the dataset card's Python reader: x = batch[:-1], y = batch[1:] with
 * batch = tokens(G·k, G+1), per the dataset card.
 */
import * as assert from 'assert';
import { openDataset, Dataset } from '../../src/core/dataset';
import { readUpdate, inputRow, targetRow, lookAheadToken } from '../../src/core/update';
import { pyUpdates, pyTokens, pyStoredTokens } from './pyref';
import { runCli, sampleDir } from './fixtures';

describe('updates equal the dataset card reader', function () {
  this.timeout(0);
  let ds: Dataset;
  let root: string;
  before(async () => {
    root = sampleDir();
    ds = await openDataset(root);
  });
  after(() => ds?.stream.close());

  it("has the card's update arithmetic: updates = floor((stored − 1) / G)", () => {
    const stored = pyStoredTokens(root);
    assert.strictEqual(ds.storedTokens, stored);
    assert.strictEqual(ds.schedule.numUpdates, Math.floor((stored - 1) / 131072));
    assert.ok(ds.schedule.numUpdates >= 15, `sample should hold at least 15 updates, has ${ds.schedule.numUpdates}`);
    assert.deepStrictEqual(
      ds.problems.filter((p) => p.severity === 'error'),
      [],
    );
  });

  it('core readUpdate equals the reader for every update, row by row', async () => {
    const ks = [...Array(ds.schedule.numUpdates).keys()];
    const ref = pyUpdates(root, ks);
    for (const k of ks) {
      const b = await readUpdate(ds, k);
      const py = ref.get(k)!;
      assert.strictEqual(b.rows, py.x.length);
      for (let r = 0; r < b.rows; r++) {
        assert.deepStrictEqual(Array.from(inputRow(b, r)), py.x[r], `update ${k} x row ${r}`);
        assert.deepStrictEqual(Array.from(targetRow(b, r)), py.y[r], `update ${k} y row ${r}`);
      }
      assert.strictEqual(lookAheadToken(b), py.y[b.rows - 1][b.seqLen - 1]);
    }
  });

  it('CLI `update --json` equals the reader for every update', () => {
    const ks = [...Array(ds.schedule.numUpdates).keys()];
    const ref = pyUpdates(root, ks);
    for (const k of ks) {
      const r = runCli(['update', root, String(k), '--json']);
      assert.strictEqual(r.code, 0, r.stderr);
      const j = JSON.parse(r.stdout);
      assert.strictEqual(j.update, k);
      assert.deepStrictEqual(j.token_range, [131072 * k, 131072 * (k + 1)]);
      assert.deepStrictEqual(j.input_ids, ref.get(k)!.x, `update ${k} input_ids`);
      assert.deepStrictEqual(j.target_ids, ref.get(k)!.y, `update ${k} target_ids`);
      const first = ds.stream.locate(131072 * k).segment;
      const last = ds.stream.locate(131072 * (k + 1)).segment;
      assert.deepStrictEqual(
        j.shards,
        ds.shards.slice(first, last + 1).map((s) => s.shard),
      );
    }
  });

  it('updates that cross a shard edge are one batch (no half-batches)', async () => {
    const crossing = [...Array(ds.schedule.numUpdates).keys()].filter(
      (k) => ds.stream.locate(131072 * k).segment !== ds.stream.locate(131072 * (k + 1)).segment,
    );
    assert.ok(crossing.length > 0, 'the sample must have updates crossing shard edges (250,000-token shards)');
    for (const k of crossing) {
      const b = await readUpdate(ds, k);
      assert.strictEqual(b.tokens.length, 131073);
      assert.ok(b.shards.length >= 2);
    }
  });

  it('CLI `tokens` equals the reader at shard edges and the stream end', () => {
    const edges = ds.shards.slice(1).map((s) => s.startToken);
    const end = ds.storedTokens;
    for (const [start, n] of [
      [0, 5],
      [edges[0] - 3, 7],
      [edges[edges.length - 1] - 1, 2],
      [end - 4, 4],
    ]) {
      const r = runCli(['tokens', root, '--start', String(start), '--count', String(n), '--json']);
      assert.strictEqual(r.code, 0, r.stderr);
      assert.deepStrictEqual(JSON.parse(r.stdout).ids, pyTokens(root, start, n), `tokens at ${start}`);
    }
  });

  it('rejects an update past the end with usage exit code 2 naming the range', () => {
    const r = runCli(['update', root, String(ds.schedule.numUpdates)]);
    assert.strictEqual(r.code, 2);
    assert.match(r.stderr, new RegExp(`outside 0\\.\\.${ds.schedule.numUpdates - 1}`));
    const neg = runCli(['update', root, '-1']);
    assert.strictEqual(neg.code, 2);
  });

  it('`update k` text form shows decoded sequences with document boundaries', async () => {
    const r = runCli(['update', root, '3']);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /^update 3 \(0-based; the 4th update\)/);
    assert.strictEqual((r.stdout.match(/── sequence \d+ ·/g) ?? []).length, 128);
    const b = await readUpdate(ds, 3);
    const eosCount = Array.from(b.tokens.subarray(0, 131072)).filter((t) => t === ds.settings.eosTokenId).length;
    assert.strictEqual((r.stdout.match(/⟦EOS · next document starts at token/g) ?? []).length, eosCount);
  });
});
