/**
 * Per-update statistics through a run's training order (src/core/stats.ts, "Through a run's
 * training order") against scripts/reference_stats.py `--order-fixture`, which takes each step's
 * samples from the framework ports of scripts/make-order-fixtures.py (Megatron's indices rebuilt
 * from seed and sample count, OLMo-core's PCG64 shuffle, llm.c's dataloader.h run from step 0) and
 * computes every field with numpy from the definitions. Runs: the Megatron fixture run of two
 * epochs (its cached GPTDataset indices), OLMo (its global_indices.npy), llm.c (3 processes,
 * shuffled, 2 micro-steps; its delimiter opens documents) at the first step, the epoch boundary
 * and the last step, and a range across the boundary. A run description with the card's
 * sequential order keeps the card's numbers (scripts/reference_stats.py without an order).
 */
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as os from 'os';
import { Dataset, openDataset, openPath } from '../../src/core/dataset';
import { orderInputsOf } from '../../src/core/order/datasetOrder';
import { openTrainingOrder } from '../../src/core/order/openOrder';
import { OrderCache, OrderSample, TokenRange, TrainingOrder } from '../../src/core/order/order';
import { readRunDescription } from '../../src/core/order/runFile';
import {
  AnyUpdateStats,
  ORDERED_STATS_CSV_HEADER,
  OrderedUpdateStats,
  STAT_COLUMNS,
  StatsOrder,
  computeRunUpdateStats,
  statValue,
  statsOfUpdates,
} from '../../src/core/stats';
import { LoadedTokenizer, loadTokenizer } from '../../src/core/tokenizer';
import { overlayUpdates, overlayValues, runUpdates } from '../../src/core/trainingLog/overlay';
import { cliPath, repoRoot, sampleDir } from './fixtures';
import { orderFixtures, removeOrderFixtures, writeMegatronRunFile } from './orderFixtures';

/** The numpy reference's records of steps k1..k2 of a fixture run. */
export function pyOrderStats(
  run: string,
  k1: number,
  k2: number,
  opts: { tokenizer?: string; eos?: number; opens?: boolean } = {},
): AnyUpdateStats[] {
  const args = [
    path.join(repoRoot(), 'scripts', 'reference_stats.py'),
    sampleDir(),
    String(k1),
    String(k2),
    '--order-fixture',
    orderFixtures().dir,
    '--order',
    run,
  ];
  if (opts.tokenizer) args.push('--tokenizer', opts.tokenizer);
  if (opts.eos !== undefined) args.push('--eos', String(opts.eos));
  if (opts.opens) args.push('--opens');
  return JSON.parse(execFileSync('python3', args, { encoding: 'utf8', maxBuffer: 1 << 28 })) as AnyUpdateStats[];
}

/** A fixture dataset and its run's order, opened as the CLI opens them (format layer, run.json, order inputs). */
export async function openFixtureRun(
  target: string,
  runFile: string,
  settings: { eosTokenId?: number } = {},
): Promise<{ ds: Dataset; order: TrainingOrder }> {
  const ds = (await openPath(target, settings))!;
  const run = await readRunDescription(runFile);
  const order = await openTrainingOrder(run, await orderInputsOf(ds, run, new OrderCache(path.join(orderFixtures().dir, 'stats-cache'))));
  return { ds, order };
}

/**
 * A Megatron-shaped order over the stats fixture (scripts/make-stats-fixture.mjs: duplicate rows,
 * unknown and special ids, a repeated block, an EOS-free update, empty documents, a one-id update):
 * update k's G/L samples are the card's rows of update k in a seeded permutation, each read as two
 * pieces, the row's tail from a seeded cut and then its head (1,025 tokens, of which 1,024 are
 * inputs); sample 5 repeats sample 2's pieces, sample 7 continues where sample 6 ends, sample 9
 * is short (half a row, as a padded Megatron sample), and update 0's first sample is the stream's
 * first 1,025 tokens.
 */
function plantedOrder(G: number, L: number, updates: number): StatsOrder & { samples(k: number): OrderSample[] } {
  const B = G / L;
  const samples = (k: number): OrderSample[] => {
    let x = (12345 + k * 7919) >>> 0;
    const next = (n: number) => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return (x >>> 8) % n;
    };
    const perm = Array.from({ length: B }, (_, i) => i);
    for (let i = B - 1; i > 0; i--) {
      const j = next(i + 1);
      [perm[i], perm[j]] = [perm[j], perm[i]];
    }
    const cut = 1 + next(L - 1);
    const out: OrderSample[] = [];
    for (let slot = 0; slot < B; slot++) {
      let pieces: TokenRange[];
      if (slot === 5) pieces = out[2].pieces;
      else if (slot === 7) {
        const end = out[6].pieces[1].end - 1;
        pieces = [{ start: end, end: end + L + 1 }];
      } else if (slot === 0 && k === 0) pieces = [{ start: 0, end: L + 1 }];
      else if (slot === 9) {
        // A short (padded) sample: fewer tokens than the inputs.
        const base = G * k + L * perm[slot];
        pieces = [{ start: base, end: base + L / 2 }];
      } else {
        const base = G * k + L * perm[slot];
        pieces = [
          { start: base + cut, end: base + L },
          { start: base, end: base + cut + 1 },
        ];
      }
      out.push({ slot, sample: slot, pieces });
    }
    return out;
  };
  return { kind: 'megatron', numUpdates: updates, samplesPerUpdate: B, inputTokens: L, update: samples, samples };
}

describe('statistics through an order: the definitions over planted oddities', function () {
  this.timeout(600_000);
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-order-stats-'));
  });
  after(() => (process.env.KEEP ? undefined : fs.rmSync(dir, { recursive: true, force: true })));

  it('every field of every update equals numpy given the same stream ranges', async () => {
    const root = path.join(dir, 'stats');
    execFileSync(process.execPath, [path.join(repoRoot(), 'scripts', 'make-stats-fixture.mjs'), '--out', root, '--sample', sampleDir()], {
      stdio: 'ignore',
    });
    const ds = await openDataset(root);
    try {
      const tok = await loadTokenizer(ds.tokenizerFile!);
      const order = plantedOrder(ds.schedule.G, ds.schedule.L, ds.schedule.numUpdates);
      const last = order.numUpdates - 1;
      const spec = { kind: order.kind, inputs: order.inputTokens, updates: {} as Record<string, [number, number][][]> };
      for (let k = 0; k <= last; k++) spec.updates[k] = order.samples(k).map((s) => s.pieces.map((p) => [p.start, p.end]));
      const file = path.join(dir, 'ranges.json');
      fs.writeFileSync(file, JSON.stringify(spec));
      const ref = JSON.parse(
        execFileSync(
          'python3',
          [
            path.join(repoRoot(), 'scripts', 'reference_stats.py'),
            root,
            '0',
            String(last),
            '--ranges',
            file,
            '--tokenizer',
            ds.tokenizerFile!,
          ],
          { encoding: 'utf8', maxBuffer: 1 << 28 },
        ),
      ) as OrderedUpdateStats[];
      const ours = await computeRunUpdateStats(ds, 0, last, { order, tokenizer: tok });
      assert.deepStrictEqual(ours, ref);
      // The planted cases exist (so the equality covers them).
      assert.ok(ref.every((r) => r.duplicate_sequences >= 1 && r.ranges < 2 * order.samplesPerUpdate));
      assert.ok(
        ref.every((r) => r.tokens === (order.samplesPerUpdate - 0.5) * order.inputTokens),
        'one sample is half a row',
      );
      assert.ok(ref.some((r) => r.complete_documents > 0) && ref.some((r) => r.repeated_13grams > 0));
      assert.ok(ref.some((r) => r.unknown_ids! > 0 && r.special_ids! > 0) && ref.some((r) => r.distinct_tokens === 1));
    } finally {
      await ds.stream.close();
    }
  });
});

describe('statistics through a training order equal numpy over the framework ports', function () {
  this.timeout(600_000);
  let tok: LoadedTokenizer;
  const tokFile = () => path.join(sampleDir(), 'tokenizer', 'tokenizer.json');
  before(async () => {
    tok = await loadTokenizer(tokFile());
  });
  after(removeOrderFixtures);

  /** Asserts the product's records of each reference step, and of a range around the middle one, equal the reference. */
  async function assertRun(ds: Dataset, order: TrainingOrder, run: string, steps: number[], py: { eos?: number; opens?: boolean } = {}) {
    try {
      assert.strictEqual(steps.length, 3, 'first, an epoch boundary, last');
      for (const k of steps) {
        const [ours] = await statsOfUpdates(ds, [k], { order, tokenizer: tok });
        const [ref] = pyOrderStats(run, k, k, { ...py, tokenizer: tokFile() });
        assert.deepStrictEqual(ours, ref, `${run} step ${k}`);
        assert.ok('order' in ref && ref.order === order.kind, `${run} step ${k}: order`);
        assert.ok('tokens' in ref && ref.tokens === order.samplesPerUpdate * order.inputTokens, `${run} step ${k}: B × inputs`);
      }
      const mid = steps[1];
      const ours = await computeRunUpdateStats(ds, mid - 1, mid + 1, { order });
      assert.deepStrictEqual(ours, pyOrderStats(run, mid - 1, mid + 1, py), `${run} steps ${mid - 1}..${mid + 1} without a tokenizer`);
      // Documents begin inside the steps (the sample's documents are longer than most samples).
      assert.ok(
        ours.some((r) => r.documents_started > 0 && r.eos > 0),
        `${run}: documents`,
      );
    } finally {
      order.close();
      await ds.stream.close();
    }
  }

  it('Megatron (the two-epoch run, its cached GPTDataset indices)', async () => {
    const { dir, ref } = orderFixtures();
    const { ds, order } = await openFixtureRun(path.join(dir, 'megatron', 'text_document.bin'), writeMegatronRunFile('stats-run.json'));
    const steps = Object.keys(ref.megatron['two-epochs'].steps).map(Number);
    const [first] = pyOrderStats('megatron:two-epochs', steps[0], steps[0]);
    assert.ok('ranges' in first && first.ranges > 1, 'a shuffled update reads several stream ranges');
    await assertRun(ds, order, 'megatron:two-epochs', steps);
  });

  it('OLMo (global_indices.npy)', async () => {
    const { dir, ref } = orderFixtures();
    const r = ref.olmo;
    // The token files alone in a folder (beside them, global_indices.npy would be read as one).
    const data = path.join(dir, 'olmo-stats');
    fs.mkdirSync(data, { recursive: true });
    for (const f of r.files) fs.copyFileSync(path.join(dir, 'olmo', f), path.join(data, f));
    const runFile = path.join(dir, 'olmo', 'stats-run.json');
    fs.writeFileSync(
      runFile,
      JSON.stringify({
        order: 'olmo',
        global_indices: 'global_indices.npy',
        sequence_length: r.sequence_length,
        global_batch_size: r.global_batch_size,
      }),
    );
    const { ds, order } = await openFixtureRun(data, runFile, { eosTokenId: 100257 });
    await assertRun(ds, order, 'olmo', Object.keys(r.steps).map(Number));
  });

  it('llm.c (3 processes, shuffled, 2 micro-steps; the delimiter opens documents)', async () => {
    const { dir, ref } = orderFixtures();
    const r = ref.llmc;
    const runFile = path.join(dir, 'llmc', 'stats-run.json');
    fs.writeFileSync(
      runFile,
      JSON.stringify({
        order: 'llm.c',
        B: r.B,
        T: r.T,
        processes: r.processes,
        grad_accum_steps: r.grad_accum_steps,
        steps: r.steps_total,
      }),
    );
    // The sample's EOS as llm.c's delimiter: it opens documents in llm.c files (documentRule.ts).
    const { ds, order } = await openFixtureRun(path.join(dir, 'llmc'), runFile, { eosTokenId: 100257 });
    assert.strictEqual(ds.format?.delimiter, 'opens');
    await assertRun(ds, order, 'llmc', Object.keys(r.steps).map(Number), { eos: 100257, opens: true });
  });
});

/**
 * `token-shards stats` through `--run FILE` (the Megatron fixture run opened from its `.bin`): JSON
 * and CSV equal the reference records; `--shards` is refused in one line; a run description
 * naming the card's sequential order gives the card's statistics (the reference without an order).
 */
describe('training order: CLI stats with --run', function () {
  this.timeout(600_000);
  after(removeOrderFixtures);

  const cli = (args: string[]): { stdout: string; stderr: string; code: number } => {
    const r = spawnSync(process.execPath, [cliPath(), ...args], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      env: { ...process.env, XDG_CACHE_HOME: path.join(orderFixtures().dir, 'stats-cli-cache') },
    });
    return { stdout: r.stdout, stderr: r.stderr, code: r.status ?? -1 };
  };

  it('stats K1..K2 --run FILE --json / --csv equal the reference; --shards is refused', () => {
    const { dir, ref } = orderFixtures();
    const runFile = writeMegatronRunFile('stats-cli-run.json');
    const bin = path.join(dir, 'megatron', 'text_document.bin');
    const tokenizer = path.join(sampleDir(), 'tokenizer', 'tokenizer.json');
    const k = Number(Object.keys(ref.megatron['two-epochs'].steps)[1]);
    const want = pyOrderStats('megatron:two-epochs', k - 1, k + 1, { tokenizer });
    const json = cli(['--run', runFile, '--tokenizer', tokenizer, 'stats', bin, `${k - 1}..${k + 1}`, '--json']);
    assert.strictEqual(json.code, 0, json.stderr);
    assert.deepStrictEqual(JSON.parse(json.stdout), want);
    const csv = cli(['--run', runFile, '--tokenizer', tokenizer, 'stats', bin, `${k - 1}..${k + 1}`, '--csv']);
    assert.strictEqual(csv.code, 0, csv.stderr);
    const lines = csv.stdout.trim().split('\n');
    assert.strictEqual(lines[0], ORDERED_STATS_CSV_HEADER);
    lines.slice(1).forEach((line, i) => {
      const r = want[i];
      assert.ok('tokens' in r);
      assert.deepStrictEqual(line.split(',').slice(0, 3).map(Number), [r.update, r.tokens, r.ranges]);
      assert.deepStrictEqual(
        line.split(',').slice(3),
        STAT_COLUMNS.map((c) => String(statValue(r, c) ?? '')),
      );
    });
    const parts = cli(['--run', runFile, 'stats', bin, '0..3', '--json', '--shards', '0:1']);
    assert.strictEqual(parts.code, 2);
    assert.strictEqual(parts.stderr.trim().split('\n').length, 1, parts.stderr);
    assert.match(parts.stderr, /--shards A:B .* megatron order/);
    // A run description naming the card's sequential order: the card's statistics, unchanged.
    const seqRun = path.join(dir, 'sequential-run.json');
    fs.writeFileSync(seqRun, JSON.stringify({ order: 'sequential' }));
    const seq = cli(['--run', seqRun, 'stats', sampleDir(), '3..4', '--json']);
    assert.strictEqual(seq.code, 0, seq.stderr);
    const card = JSON.parse(
      execFileSync('python3', [path.join(repoRoot(), 'scripts', 'reference_stats.py'), sampleDir(), '3', '4', '--tokenizer', tokenizer], {
        encoding: 'utf8',
      }),
    ) as AnyUpdateStats[];
    assert.ok(card.every((r) => 'token_range' in r));
    assert.deepStrictEqual(JSON.parse(seq.stdout), card);
    const past = cli(['--run', runFile, 'stats', bin, String(ref.megatron['two-epochs'].train_iters)]);
    assert.notStrictEqual(past.code, 0);
    assert.match(past.stderr, /outside 0\.\.699/);
  });
});

/**
 * The training-log overlay through a run's order (src/core/trainingLog/overlay.ts): a log's steps
 * map to the run's steps (not the stream's updates: the Megatron fixture's stream holds 18 updates
 * of the card's G, the run 700 steps), and the value drawn at update k is the statistic of the
 * run's step k, equal to the reference for every column.
 */
describe('training-log overlay through the training order', function () {
  this.timeout(600_000);
  after(removeOrderFixtures);

  it("pairs the log's steps with the run's steps and draws the reference statistics of those steps", async () => {
    const { dir, ref } = orderFixtures();
    const r = ref.megatron['two-epochs'];
    const { ds, order } = await openFixtureRun(path.join(dir, 'megatron', 'text_document.bin'), writeMegatronRunFile('overlay-run.json'));
    try {
      assert.ok(ds.schedule.numUpdates < order.numUpdates, 'the run has more steps than the stream has card updates');
      assert.strictEqual(runUpdates(ds, order), r.train_iters);
      assert.strictEqual(runUpdates(ds, undefined), ds.schedule.numUpdates);
      // Logged steps 1..train_iters + 5 ("after": step s is update s − 1), clipped to the run's last step.
      const steps = Float64Array.from({ length: r.train_iters + 5 }, (_, i) => i + 1);
      const all = overlayUpdates(steps, 'after', runUpdates(ds, order), 400);
      assert.deepStrictEqual([all.length, all[0], all[all.length - 1]], [400, 0, r.train_iters - 1]);
      assert.deepStrictEqual(overlayUpdates(steps, 'update', runUpdates(ds, order), 3), [1, 350, 699]);
      const updates = overlayUpdates(steps, 'after', runUpdates(ds, order), 5);
      const want = new Map(
        updates.map((k) => {
          const [rec] = pyOrderStats('megatron:two-epochs', k, k);
          return [k, rec];
        }),
      );
      for (const column of STAT_COLUMNS) {
        const values = await overlayValues(ds, updates, column, { order });
        assert.deepStrictEqual(
          values,
          updates.map((k) => statValue(want.get(k)!, column)),
          column,
        );
      }
      // Without the run: the card's updates of the stream (the sequential statistics), a different series.
      const card = await overlayValues(ds, [0, 1], 'distinct_tokens');
      assert.notDeepStrictEqual(card, await overlayValues(ds, [0, 1], 'distinct_tokens', { order }));
    } finally {
      order.close();
      await ds.stream.close();
    }
  });
});
