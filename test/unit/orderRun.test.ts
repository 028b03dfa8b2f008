/**
 * `run.json`: parsed with one-line errors naming the file and the field, and opened into the order
 * it names over the fixture runs (scripts/make-order-fixtures.py): Megatron read from its cache and
 * checked against the rebuild, Megatron rebuilt from its parameters alone, OLMo's file checked
 * against the rebuild, llm.c — each giving the reference's batch at its last step.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as os from 'os';
import { DataError } from '../../src/core/errors';
import { DEFAULT_SCHEDULE, Schedule } from '../../src/core/schedule';
import { OrderCache } from '../../src/core/order/order';
import { OrderInputs, openTrainingOrder } from '../../src/core/order/openOrder';
import { parseRunDescription, readRunDescription } from '../../src/core/order/runFile';
import { idsOf, idxLengths, orderFixtures, removeOrderFixtures } from './orderFixtures';

const FILE = '/data/run.json';

function fault(json: unknown): string {
  try {
    parseRunDescription(typeof json === 'string' ? json : JSON.stringify(json), FILE);
  } catch (err) {
    assert.ok(err instanceof DataError);
    assert.ok(!err.message.includes('\n'), 'one line');
    return err.message;
  }
  assert.fail(`accepted ${JSON.stringify(json)}`);
}

describe('training order: run.json', function () {
  this.timeout(600_000);
  after(removeOrderFixtures);

  it('names the file and the field of every fault', async () => {
    assert.match(fault('{"order": '), /^\/data\/run\.json: not JSON/);
    assert.match(fault([1]), /run\.json: expected a JSON object/);
    assert.match(
      fault({ order: 'deepspeed' }),
      /run\.json: "order" is "deepspeed"; expected one of "sequential", "megatron", "olmo", "llm\.c"/,
    );
    assert.match(
      fault({ order: 'megatron', cache: 'c', global_batch_size: 8, gbs: 1 }),
      /run\.json: unknown field "gbs" for order "megatron"/,
    );
    assert.match(fault({ order: 'megatron', cache: 'c' }), /run\.json: "global_batch_size" is missing/);
    assert.match(
      fault({ order: 'megatron', cache: 'c', global_batch_size: '512' }),
      /run\.json: "global_batch_size" is "512"; expected a positive integer/,
    );
    assert.match(
      fault({ order: 'megatron', global_batch_size: 8, seed: 1 }),
      /without "cache", Megatron's indices are rebuilt and need "sequence_length", "seed" and "train_iters" or "train_samples"/,
    );
    assert.match(
      fault({ order: 'megatron', cache: 'c', global_batch_size: 8, split_fractions: [0.5, 0.2] }),
      /"split_fractions" is \[0\.5,0\.2\]; expected \[begin, end\]/,
    );
    assert.match(
      fault({ order: 'olmo', sequence_length: 4096, global_batch_size: 8 }),
      /OLMo's order needs "global_indices" .* or "seed" and "epoch"/,
    );
    assert.match(
      fault({ order: 'olmo', seed: 1, epoch: 0, rule: 'olmo2', sequence_length: 4096, global_batch_size: 8 }),
      /"rule" is "olmo2"; expected "olmo-core"/,
    );
    assert.match(fault({ order: 'llm.c', B: 4, T: 0, processes: 1 }), /"T" is 0; expected a positive integer/);
    assert.match(fault({ order: 'llm.c', B: 4, T: 8, processes: 1, shuffle: 'yes' }), /"shuffle" is "yes"; expected true or false/);
    const d = parseRunDescription(
      JSON.stringify({ order: 'olmo', global_indices: 'run/gi.npy', sequence_length: 8, global_batch_size: 2 }),
      FILE,
    );
    assert.strictEqual(d.order === 'olmo' && d.globalIndices, '/data/run/gi.npy', 'paths resolve against the folder of run.json');
    await assert.rejects(
      () => readRunDescription('/nonexistent/run.json'),
      /\/nonexistent\/run\.json: cannot read the run description \(ENOENT\)/,
    );
    // Not a regular file (a folder here; a FIFO the same way): refused before it is opened.
    await assert.rejects(() => readRunDescription(os.tmpdir()), /is a folder; expected a run description \(run\.json\) \(a regular file\)/);
  });

  const inputsFor = (sub: string, names: string[], headerBytes: number): OrderInputs => {
    const { dir, ref } = orderFixtures();
    let start = 0;
    const files = names.map((name) => {
      const p = path.join(dir, sub, name);
      const tokens = (fs.statSync(p).size - headerBytes) / 4;
      const f = { name, path: p, start, tokens };
      start += tokens;
      return f;
    });
    const idxFile = path.join(dir, 'megatron', 'text_document.idx');
    return {
      files,
      schedule: new Schedule(DEFAULT_SCHEDULE, ref.stream_tokens),
      megatron: sub === 'megatron' ? { idxFile, lengths: idxLengths(idxFile) } : undefined,
      cache: new OrderCache(path.join(dir, 'order-cache-run')),
    };
  };

  const lastStepEquals = async (json: object, sub: string, names: string[], headerBytes: number, want: Record<string, number[][]>) => {
    const { dir, stream } = orderFixtures();
    const file = path.join(dir, sub, 'run.json');
    fs.writeFileSync(file, JSON.stringify(json));
    const order = await openTrainingOrder(await readRunDescription(file), inputsFor(sub, names, headerBytes));
    try {
      const k = Math.max(...Object.keys(want).map(Number));
      order.update(k).forEach((s) => assert.deepStrictEqual(idsOf(stream, s.pieces), want[String(k)][s.slot], `step ${k} slot ${s.slot}`));
      return order.description;
    } finally {
      order.close();
    }
  };

  it('megatron: the cache, checked against the rebuild from the seed', async () => {
    const r = orderFixtures().ref.megatron['two-epochs'];
    const desc = await lastStepEquals(
      {
        order: 'megatron',
        cache: 'run-two-epochs/cache',
        global_batch_size: r.global_batch_size,
        train_iters: r.train_iters,
        seed: r.seed,
      },
      'megatron',
      ['text_document.bin'],
      0,
      r.steps,
    );
    assert.match(desc, /checked against the rebuild from seed 1234/);
  });

  it('megatron: a wrong seed is caught by the check, naming the file and element', async () => {
    const { dir } = orderFixtures();
    const r = orderFixtures().ref.megatron['two-epochs'];
    const file = path.join(dir, 'megatron', 'run.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        order: 'megatron',
        cache: 'run-two-epochs/cache',
        global_batch_size: r.global_batch_size,
        train_iters: r.train_iters,
        seed: r.seed + 1,
      }),
    );
    await assert.rejects(
      async () => openTrainingOrder(await readRunDescription(file), inputsFor('megatron', ['text_document.bin'], 0)),
      /run\.json: the cached indices are not Megatron's rebuild from seed 1235: .*document_index\.npy: element \d/,
    );
  });

  it('megatron: rebuilt from its parameters alone (no cache) gives the same batches', async () => {
    const r = orderFixtures().ref.megatron['three-epochs'];
    const desc = await lastStepEquals(
      {
        order: 'megatron',
        sequence_length: r.sequence_length,
        seed: r.seed,
        global_batch_size: r.global_batch_size,
        train_iters: r.train_iters,
      },
      'megatron',
      ['text_document.bin'],
      0,
      r.steps,
    );
    assert.match(desc, /rebuilt from seed 7/);
  });

  it('olmo: global_indices checked against the rebuild (the description names the rule used)', async () => {
    const r = orderFixtures().ref.olmo;
    const desc = await lastStepEquals(
      {
        order: 'olmo',
        global_indices: 'global_indices.npy',
        seed: r.seed,
        epoch: r.epoch,
        sequence_length: r.sequence_length,
        global_batch_size: r.global_batch_size,
      },
      'olmo',
      r.files,
      0,
      r.steps,
    );
    assert.match(desc, /checked against OLMo-core's rule \(src\/olmo_core\/data\/data_loader\.py _build_global_indices/);
  });

  it('llm.c', async () => {
    const r = orderFixtures().ref.llmc;
    await lastStepEquals(
      { order: 'llm.c', B: r.B, T: r.T, processes: r.processes, grad_accum_steps: r.grad_accum_steps, steps: r.steps_total },
      'llmc',
      r.files,
      1024,
      r.steps,
    );
  });

  it('without a run description: the sequential order of the card', async () => {
    const order = await openTrainingOrder(undefined, inputsFor('olmo', orderFixtures().ref.olmo.files, 0));
    assert.strictEqual(order.kind, 'sequential');
    assert.deepStrictEqual(order.update(1)[0].pieces, [{ start: 131_072, end: 131_072 + 1025 }]);
  });
});
