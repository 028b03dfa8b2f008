/**
 * `verify` and `stats` parts (`--shards A:B --json`) and their `merge`, on the sample and on a copy
 * of it with one shard damaged and one missing: the merged result equals one machine's (`stats`
 * byte for byte in every output format, the findings of `verify --json`), and bad parts (another
 * kind, overlapping or missing ranges, another dataset, a field that does not fit, a part that
 * stopped early) end with one line on stderr and the exit code of src/cli/exitCodes.ts.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openDataset } from '../../src/core/dataset';
import { EXIT } from '../../src/cli/exitCodes';
import { runCli, sampleDir } from './fixtures';

describe('verify and stats parts, merged', function () {
  this.timeout(300_000);
  let tmp: string;
  let n: number;
  let updates: number;
  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-parts-'));
    const ds = await openDataset(sampleDir());
    n = ds.shards.length;
    updates = ds.schedule.numUpdates;
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  /** Runs the CLI, writes its stdout to `tmp/name` and returns the file. */
  function part(name: string, args: string[], code = 0): string {
    const r = runCli(args);
    assert.strictEqual(r.code, code, r.stderr);
    const f = path.join(tmp, name);
    fs.writeFileSync(f, r.stdout);
    return f;
  }

  /** `merge …` must fail with `code` and one line on stderr matching `re`. */
  function mergeFails(files: string[], code: number, re: RegExp, flags: string[] = []): void {
    const r = runCli(['merge', ...files, ...flags]);
    assert.strictEqual(r.code, code, r.stderr);
    assert.strictEqual(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
    assert.match(r.stderr, re);
    assert.strictEqual(r.stdout, '', 'nothing on stdout');
  }

  /** Ranges of [0, n) in three uneven parts. */
  const ranges = () => [
    [0, 3],
    [3, 7],
    [7, n],
  ];

  it('stats parts merge into exactly what stats prints (--json, --csv, table), whatever their order', () => {
    const range = `1..${updates - 2}`;
    const files = ranges().map(([a, b], i) => part(`stats-${i}.json`, ['stats', sampleDir(), range, '--shards', `${a}:${b}`, '--json']));
    const counts = files.map((f) => (JSON.parse(fs.readFileSync(f, 'utf8')) as { records: unknown[] }).records.length);
    assert.strictEqual(
      counts.reduce((x, y) => x + y),
      updates - 2,
      'every update of the range in exactly one part',
    );
    for (const flags of [['--json'], ['--csv'], []]) {
      const merged = runCli(['merge', ...[...files].reverse(), ...flags]);
      assert.strictEqual(merged.code, 0, merged.stderr);
      assert.strictEqual(merged.stdout, runCli(['stats', sampleDir(), range, ...flags]).stdout, `merge ${flags.join(' ')}`);
    }
  });

  it('verify parts of a copy with one shard damaged and one missing: the findings of verify --json', async () => {
    const root = path.join(tmp, 'damaged');
    fs.cpSync(sampleDir(), root, { recursive: true, dereference: true });
    const ds = await openDataset(root);
    const fd = fs.openSync(ds.shards[1].path, 'r+');
    fs.writeSync(fd, Buffer.from([0xff, 0xff, 0xff, 0xff]), 0, 4, 4 * 1234);
    fs.closeSync(fd);
    fs.rmSync(ds.shards[5].path);
    const files = ranges().map(([a, b], i) =>
      // A part whose shards are not all ok exits 1 (as verify does) and still writes its part.
      part(`verify-${i}.json`, ['verify', root, '--no-cache', '--shards', `${a}:${b}`, '--json'], a <= 5 && 1 < b ? 1 : 0),
    );
    const merged = runCli(['merge', ...files, '--json']);
    assert.strictEqual(merged.code, EXIT.data, merged.stderr);
    const one = JSON.parse(runCli(['verify', root, '--no-cache', '--json']).stdout) as Record<string, unknown> & {
      results: Record<string, unknown>[];
    };
    const m = JSON.parse(merged.stdout) as Record<string, unknown>;
    assert.deepStrictEqual(
      { shards: m.shards, all_ok: m.all_ok, counts: m.counts, manifest_problems: m.manifest_problems, not_ok: m.not_ok },
      {
        shards: one.shards,
        all_ok: one.all_ok,
        counts: one.counts,
        manifest_problems: one.manifest_problems,
        not_ok: one.results
          .filter((r) => r.status !== 'ok')
          .map(({ from_cache, checked_at, ...rest }) => (void from_cache, void checked_at, rest)),
      },
    );
    assert.deepStrictEqual(
      (m.not_ok as { shard: string; status: string; updates: number[] }[]).map((r) => [r.shard, r.status]),
      [
        [ds.shards[1].shard, 'mismatch'],
        [ds.shards[5].shard, 'missing'],
      ],
    );
    // Text: verify's lines for the shards not ok, then the summary.
    const text = runCli(['merge', ...files]);
    assert.strictEqual(text.code, EXIT.data);
    const lines = text.stdout.trim().split('\n');
    assert.match(lines[0], /^MISMATCH /);
    assert.match(lines[1], /^MISSING /);
    assert.strictEqual(lines[2], `${n} shards of ${n} checked by 3 parts: 1 mismatched · 1 missing · ${n - 2} ok`);
    // --allow-partial: the ranges no part checked are listed, and the summary is not all ok.
    const partial = runCli(['merge', files[0], files[2], '--allow-partial', '--json']);
    assert.strictEqual(partial.code, EXIT.data);
    assert.deepStrictEqual((JSON.parse(partial.stdout) as { missing_shards: unknown }).missing_shards, [[3, 7]]);
    assert.match(partial.stderr, /shards 3:7 of the dataset's 0:10 are in no part: they were not checked/);
  });

  it('bad parts: one line naming the part and what was expected, exit 1 (a broken part) or 2 (parts that do not fit)', () => {
    const v = (a: number, b: number, extra: string[] = []) =>
      part(`v-${a}-${b}${extra.length ? '-x' : ''}.json`, [
        'verify',
        sampleDir(),
        '--no-cache',
        '--shards',
        `${a}:${b}`,
        '--json',
        ...extra,
      ]);
    const s = (a: number, b: number, range = `0..${updates - 1}`) =>
      part(`s-${a}-${b}-${range}.json`, ['stats', sampleDir(), range, '--shards', `${a}:${b}`, '--json']);
    const v0 = v(0, 5),
      v1 = v(5, n),
      s0 = s(0, 5),
      s1 = s(5, n);
    assert.strictEqual(runCli(['merge', v0, v1]).code, EXIT.ok, 'the good parts merge');
    mergeFails([v0, s1], EXIT.usage, new RegExp(`${path.basename(s1)} is a stats part, .*${path.basename(v0)} a verify part`));
    mergeFails([v0, v(3, n)], EXIT.usage, /\(shards 0:5\) and .* \(shards 3:10\) overlap/);
    mergeFails([v(0, 3), v1], EXIT.usage, /shards 3:5 of the dataset's 0:10 are in no part; verify them too, or pass --allow-partial/);
    mergeFails([s0, s(7, n)], EXIT.usage, /shards 5:7 of the dataset's 0:10 are in no part/);
    // A copy whose manifest names another hash for one shard is another dataset: its fingerprint differs.
    const copy = path.join(tmp, 'other');
    fs.cpSync(sampleDir(), copy, { recursive: true, dereference: true });
    const manifest = path.join(copy, 'shard_manifest.jsonl');
    fs.writeFileSync(
      manifest,
      fs.readFileSync(manifest, 'utf8').replace(/"sha256": ?"([0-9a-f])/, (m, c: string) => m.slice(0, -1) + (c === '0' ? '1' : '0')),
    );
    const other = part('v-other.json', ['verify', copy, '--no-cache', '--shards', `5:${n}`, '--json']);
    mergeFails([v0, other], EXIT.usage, /v-other\.json verifies another dataset than .*v-0-5\.json/);
    mergeFails([s0, s(5, n, `1..${updates - 1}`)], EXIT.usage, /has updates 1\.\.\d+, .* 0\.\.\d+/);
    mergeFails([v0, v1], EXIT.usage, /--share and --top apply to count parts; these are verify parts/, ['--share']);
    mergeFails([v0, v1], EXIT.usage, /--csv: verify parts merge into a summary/, ['--csv']);
    // Broken parts: the field and what was expected.
    const edit = (from: string, name: string, change: (o: Record<string, unknown>) => void) => {
      const o = JSON.parse(fs.readFileSync(from, 'utf8')) as Record<string, unknown>;
      change(o);
      const f = path.join(tmp, name);
      fs.writeFileSync(f, JSON.stringify(o));
      return f;
    };
    mergeFails(
      [edit(v0, 'v-counts.json', (o) => ((o.counts as Record<string, number>).ok = 4)), v1],
      EXIT.data,
      /v-counts\.json: field counts\.ok is 4; expected 5, the rows with status ok/,
    );
    mergeFails(
      [edit(v0, 'v-cancelled.json', (o) => (o.cancelled = true)), v1],
      EXIT.data,
      /v-cancelled\.json: field cancelled is true; expected false/,
    );
    mergeFails(
      [edit(v0, 'v-sha.json', (o) => ((o.results as Record<string, unknown>[])[2].actual_sha256 = 'xyz')), v1],
      EXIT.data,
      /v-sha\.json: field results\[2\]\.actual_sha256 is "xyz"; expected 64 hexadecimal digits or null/,
    );
    mergeFails(
      [s0, edit(s1, 's-extra.json', (o) => ((o.records as Record<string, unknown>[])[0].loss = 1))],
      EXIT.data,
      /s-extra\.json: field records\[0\] fields is .*; expected update, token_range/,
    );
    // A stats part that stopped early: its last update is in no part.
    mergeFails([edit(s0, 's-short.json', (o) => (o.records as unknown[]).pop()), s1], EXIT.usage, /begins at update \d+; expected \d+/);
    const junk = path.join(tmp, 'junk.json');
    fs.writeFileSync(junk, '{"foo": 1}');
    mergeFails([junk], EXIT.data, /junk\.json: not a part: expected the output of `count/);
    // --shards on stats writes a part: without --json it is refused.
    const r = runCli(['stats', sampleDir(), '0..3', '--shards', '0:2']);
    assert.strictEqual(r.code, EXIT.usage);
    assert.match(r.stderr, /--shards writes a part for `merge`: add --json/);
  });
});
