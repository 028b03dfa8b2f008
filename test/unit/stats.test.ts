/**
 * Per-update statistics (src/core/stats.ts) against scripts/reference_stats.py, which computes
 * every field with numpy over the dataset card's x (scripts/reference_reader.py), for every update
 * of the sample and of the stats fixture (scripts/make-stats-fixture.mjs: duplicate rows, unknown
 * and special ids, repeated blocks, an EOS-free update, empty documents, a one-id update). Also the
 * `stats` CLI (JSON, CSV) and the range errors.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as path from 'path';
import { Dataset, openDataset } from '../../src/core/dataset';
import { STATS_CSV_HEADER, STAT_COLUMNS, StatsCalculator, UpdateStats, computeUpdateStats, robustZ, statValue } from '../../src/core/stats';
import { loadTokenizer } from '../../src/core/tokenizer';
import { repoRoot, runCli, sampleDir } from './fixtures';
import { python3Cached } from './pyref';

/** Records from the numpy reference for updates k1..k2. */
export function pyStats(root: string, k1: number, k2: number, tokenizer?: string): UpdateStats[] {
  const args = [path.join(repoRoot(), 'scripts', 'reference_stats.py'), path.resolve(root), String(k1), String(k2)];
  if (tokenizer) args.push('--tokenizer', tokenizer);
  return JSON.parse(python3Cached(args, tokenizer ? [root, tokenizer] : [root]));
}

/** The stats fixture root, made by its script. */
export function statsFixture(): string {
  const out = path.join(repoRoot(), 'out', 'fixtures', 'stats');
  execFileSync(process.execPath, [path.join(repoRoot(), 'scripts', 'make-stats-fixture.mjs'), '--out', out, '--sample', sampleDir()], {
    stdio: 'ignore',
  });
  return out;
}

describe("per-update statistics equal numpy over the card's x", function () {
  this.timeout(0);
  const opened: Dataset[] = [];
  after(async () => {
    for (const ds of opened) await ds.stream.close();
  });

  for (const which of ['sample', 'stats fixture'] as const) {
    it(`every statistic of every update of the ${which}`, async () => {
      const root = which === 'sample' ? sampleDir() : statsFixture();
      const ds = await openDataset(root);
      opened.push(ds);
      const tok = await loadTokenizer(ds.tokenizerFile!);
      const last = ds.schedule.numUpdates - 1;
      const ours = await computeUpdateStats(ds, 0, last, { tokenizer: tok });
      const ref = pyStats(root, 0, last, ds.tokenizerFile);
      assert.strictEqual(ours.length, ref.length);
      for (let k = 0; k <= last; k++) assert.deepStrictEqual(ours[k], ref[k], `update ${k}`);
      // Without a tokenizer the tokenizer-dependent fields are null, the rest unchanged.
      const bare = await computeUpdateStats(ds, 0, last);
      const refBare = pyStats(root, 0, last);
      for (let k = 0; k <= last; k++) assert.deepStrictEqual(bare[k], refBare[k], `update ${k} without tokenizer`);
      if (which === 'stats fixture') {
        // The planted cases exist (so the equality above covers them).
        assert.ok(ref[1].duplicate_sequences > 0 && ref[2].unknown_ids! > 0 && ref[2].special_ids! > 0);
        assert.ok(ref[3].eos === 0 && ref[5].distinct_tokens === 1 && ref[2].max_id > 2 ** 31);
      }
    });
  }

  it('a range in the middle reads the token before it (documents_started at the first update)', async () => {
    const root = statsFixture();
    const ds = await openDataset(root);
    opened.push(ds);
    const ours = await computeUpdateStats(ds, 2, 4);
    assert.deepStrictEqual(ours, pyStats(root, 2, 4));
  });

  it('13-gram hash collisions never count as repeats (a tiny table forces them)', () => {
    // Same ids through a calculator, then checked against a brute-force definition on a small G.
    const G = 4096,
      L = 512;
    const calc = new StatsCalculator({ G, L, eos: 7 });
    const t = new Uint32Array(G);
    let s = 12345;
    for (let i = 0; i < G; i++) {
      s = (s * 1103515245 + 12345) >>> 0;
      t[i] = (s >>> 16) % 5;
    }
    const got = calc.compute(0, t, undefined).repeated_13grams;
    const seen = new Set<string>();
    let want = 0;
    for (let i = 12; i < G; i++) {
      const key = Array.from(t.subarray(i - 12, i + 1)).join(',');
      if (seen.has(key)) want++;
      else seen.add(key);
    }
    assert.strictEqual(got, want);
  });

  it('robust z-scores: median 0, MAD scale, nulls kept', () => {
    const z = robustZ([1, 2, 3, 4, 100, null]);
    assert.strictEqual(z[2], 0);
    assert.strictEqual(z[5], null);
    assert.ok((z[4] as number) > 10);
  });

  it('`token-shards stats` prints the records as JSON and CSV', () => {
    const root = sampleDir();
    const ref = pyStats(root, 3, 6, path.join(root, 'tokenizer', 'tokenizer.json'));
    const json = runCli(['stats', root, '3..6', '--json']);
    assert.strictEqual(json.code, 0, json.stderr);
    assert.deepStrictEqual(JSON.parse(json.stdout), ref);
    const one = runCli(['stats', root, '5', '--json']);
    assert.deepStrictEqual(JSON.parse(one.stdout), [ref[2]]);
    const csv = runCli(['stats', root, '3..6', '--csv']);
    assert.strictEqual(csv.code, 0, csv.stderr);
    const lines = csv.stdout.trim().split('\n');
    assert.strictEqual(lines[0], STATS_CSV_HEADER);
    lines.slice(1).forEach((line, i) => {
      const cells = line.split(',');
      const r = ref[i];
      assert.deepStrictEqual(cells.slice(0, 3).map(Number), [r.update, ...r.token_range]);
      STAT_COLUMNS.forEach((c, j) => {
        const v = statValue(r, c);
        assert.strictEqual(cells[3 + j], v === null ? '' : String(v), `${c} of update ${r.update}`);
      });
    });
  });

  it('`stats` range errors exit 2 naming the valid range', () => {
    const root = sampleDir();
    const r = runCli(['stats', root, '10..99']);
    assert.strictEqual(r.code, 2);
    assert.match(r.stderr, /update 99 is outside 0\.\.\d+/);
    const back = runCli(['stats', root, '5..3']);
    assert.strictEqual(back.code, 2);
    assert.match(back.stderr, /comes before/);
    const junk = runCli(['stats', root, 'a..b']);
    assert.strictEqual(junk.code, 2);
  });
});
