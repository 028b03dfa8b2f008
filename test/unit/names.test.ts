/**
 * Many names in one pass (`count --terms-file`, `--share`, `--top`, `merge` of parts with shares),
 * judged by the byte-level Python reference (scripts/reference_search.py): 200 names taken from
 * the data itself (the reference's `--mode names`: capitalised words by frequency, then other words), counted with
 * `--word --ignore-case` per update on the search fixtures (their few words topped up with the
 * sample's names) and the sample; counts and shares equal
 * the reference's exactly. Bad terms files end with a one-line error and exit 2.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { openDataset } from '../../src/core/dataset';
import { MAX_TERMS, MAX_TERM_BYTES, SearchInputError, parseTermsFile } from '../../src/core/search';
import { bucketShares, topTerms } from '../../src/core/search/share';
import { heatmapModel } from '../../src/core/search/heatmap';
import { repoRoot, runCli, sampleDir } from './fixtures';
import { python3Cached } from './pyref';

interface RefCounts {
  updates: number;
  counts: Record<string, number[]>;
  shares: Record<string, number[]>;
}

interface CountJson {
  terms: string[];
  buckets: { first_update: number; counts: number[]; shares: (number | null)[] }[];
  totals: number[];
}

/** scripts/reference_search.py with `args` (`args[0]` is the dataset root it reads), through the reference cache. */
function py(args: string[]): unknown {
  return JSON.parse(python3Cached([path.join(repoRoot(), 'scripts', 'reference_search.py'), ...args], [args[0]]));
}

const WORD_IC = { word: true, ignoreCase: true, ids: false };

describe('many names in one pass (--terms-file, --share, --top) against the Python reference', function () {
  this.timeout(0);
  let tmp: string, fxRoot: string;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-names-'));
    const sample = await openDataset(sampleDir());
    const mod = await import(pathToFileURL(path.join(repoRoot(), 'scripts', 'make-search-fixtures.mjs')).href);
    fxRoot = path.join(tmp, 'fixture');
    await mod.makeSearchFixtures({ out: fxRoot, tokenizer: sample.tokenizerFile });
  });
  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  for (const which of ['search fixtures', 'sample'] as const) {
    it(`${which}: 200 names from a file, --word --ignore-case --share per update equal the reference; shares sum to 1`, async () => {
      const root = which === 'sample' ? sampleDir() : fxRoot;
      const ds = await openDataset(root);
      const G = ds.schedule.G;
      // The search fixtures hold fewer than 200 distinct words: their own words first, then the sample's names.
      const own = py([root, '--mode', 'names', '--top', '200', '--G', String(G)]) as string[];
      const more = which === 'sample' ? [] : (py([sampleDir(), '--mode', 'names', '--top', '200']) as string[]);
      const names = [...new Set([...own, ...more])].slice(0, 200);
      assert.strictEqual(names.length, 200, `${which}: ${names.length} names`);
      const file = path.join(tmp, `${which.replace(/ /g, '-')}.txt`);
      // A comment, a blank line and CRLF line ends: the file's syntax, not the names, changes.
      fs.writeFileSync(file, `# capitalised words by frequency\n\n${names.join('\r\n')}\n`);
      const r = runCli(['count', root, '--terms-file', file, '--word', '--ignore-case', '--share', '--per', '1', '--json']);
      assert.strictEqual(r.code, 0, r.stderr);
      const got = JSON.parse(r.stdout) as CountJson;
      assert.deepStrictEqual(got.terms, names);
      const ref = py([
        root,
        '--terms',
        JSON.stringify(names),
        '--word',
        '--ignore-case',
        '--G',
        String(G),
        '--mode',
        'counts',
      ]) as RefCounts;
      const counts: Record<string, number[]> = {};
      const shares: Record<string, (number | null)[]> = {};
      let withShares = 0;
      for (const b of got.buckets) {
        if (b.counts.some((c) => c > 0)) {
          counts[String(b.first_update)] = b.counts;
          shares[String(b.first_update)] = b.shares;
          const sum = b.shares.reduce<number>((s, x) => s + x!, 0);
          assert.ok(Math.abs(sum - 1) < 1e-9, `update ${b.first_update}: shares sum to ${sum}`);
          withShares++;
        } else
          assert.ok(
            b.shares.every((x) => x === null),
            `update ${b.first_update}: no occurrence, no share`,
          );
      }
      assert.ok(withShares > 0, 'some update has names');
      assert.deepStrictEqual(counts, ref.counts);
      assert.deepStrictEqual(shares, ref.shares);

      // --top 3 in the text output: the 3 names with most occurrences of each update, from the reference's counts.
      const text = runCli(['count', root, '--terms-file', file, '--word', '--ignore-case', '--per', '1', '--top', '3']);
      assert.strictEqual(text.code, 0, text.stderr);
      const lines = text.stdout.split('\n');
      for (const [u, c] of Object.entries(ref.counts)) {
        const top = c
          .map((n, t) => [n, t])
          .filter(([n]) => n > 0)
          .sort((a, b) => b[0] - a[0] || a[1] - b[1])
          .slice(0, 3)
          .map(([, t]) => names[t]);
        const line = lines.find((l) => l.startsWith(`${Number(u).toLocaleString('en-US')}–`));
        assert.ok(line, `a line for update ${u}`);
        const listed = line
          .split(/\s{2,}/)[2]
          .split(' · ')
          .map((x) => x.replace(/ [\d,]+ \([\d.]+%\)$/, ''));
        assert.deepStrictEqual(listed, top, `update ${u}`);
      }
    });
  }

  it('merge of --share parts: shares of the merged counts, byte for byte the single-machine JSON', async () => {
    const ds = await openDataset(sampleDir());
    const names = py([sampleDir(), '--mode', 'names', '--top', '50', '--G', String(ds.schedule.G)]) as string[];
    const file = path.join(tmp, 'merge-names.txt');
    fs.writeFileSync(file, names.join('\n') + '\n');
    const flags = ['--terms-file', file, '--word', '--ignore-case', '--share', '--json'];
    const whole = runCli(['count', sampleDir(), ...flags]);
    assert.strictEqual(whole.code, 0, whole.stderr);
    const h = Math.floor(ds.shards.length / 2);
    const parts = [`0:${h}`, `${h}:`].map((s, i) => {
      const r = runCli(['count', sampleDir(), ...flags, '--shards', s]);
      assert.strictEqual(r.code, 0, r.stderr);
      const f = path.join(tmp, `part${i}.json`);
      fs.writeFileSync(f, r.stdout);
      return { f, json: JSON.parse(r.stdout) as CountJson };
    });
    // The parts' shares differ from the whole's (each is its own half), so averaging would be wrong.
    const w = JSON.parse(whole.stdout) as CountJson;
    assert.ok(
      w.buckets.some((b, i) => JSON.stringify(b.shares) !== JSON.stringify(parts[0].json.buckets[i].shares)),
      'a part has other shares than the whole',
    );
    const merged = runCli(['merge', ...parts.map((p) => p.f), '--json']);
    assert.strictEqual(merged.code, 0, merged.stderr);
    const m = JSON.parse(merged.stdout) as CountJson & { shards?: unknown; dataset?: unknown };
    delete m.shards;
    delete m.dataset;
    assert.strictEqual(JSON.stringify(m) + '\n', whole.stdout);
    // CSV: one share column per term, equal to the JSON's shares.
    const csv = runCli(['merge', ...parts.map((p) => p.f), '--csv'])
      .stdout.trim()
      .split('\n');
    assert.deepStrictEqual(
      csv[0].split(',').slice(3 + names.length),
      names.map((n) => `share:${n}`),
    );
    csv.slice(1).forEach((row, i) => {
      const cells = row.split(',').slice(3 + names.length);
      assert.deepStrictEqual(
        cells,
        w.buckets[i].shares.map((x) => (x === null ? '' : String(x))),
      );
    });
  });

  it('bad terms files: one-line error naming the file and line, exit 2', () => {
    const sample = sampleDir();
    const write = (name: string, data: string | Buffer) => {
      const f = path.join(tmp, name);
      fs.writeFileSync(f, data);
      return f;
    };
    const words = (n: number) => Array.from({ length: n }, (_, i) => `name${i}`).join('\n') + '\n';
    const cases: [string, RegExp][] = [
      [write('empty.txt', ''), /empty\.txt: no term/],
      [write('comments.txt', '# only a comment\n\n  \n'), /comments\.txt: no term/],
      [write('binary.txt', fs.readFileSync(path.join(sample, ds0Shard(sample)))), /binary\.txt: a NUL byte at line [\d,]+ .*a binary file/],
      [write('many.txt', words(MAX_TERMS + 1)), /many\.txt line 10,001: more than 10,000 terms/],
      [write('long.txt', `Lily\n${'x'.repeat(MAX_TERM_BYTES + 1)}\n`), /long\.txt line 2: 1,001 bytes; a term is at most 1,000 bytes/],
      [write('latin1.txt', Buffer.from('Lily\nZo\xeb\n', 'latin1')), /latin1\.txt line 2: not valid UTF-8 \(byte offset 2 in the line\)/],
      [path.join(tmp, 'missing.txt'), /missing\.txt: no such file/],
    ];
    for (const [file, re] of cases) {
      const r = runCli(['count', sample, '--terms-file', file]);
      assert.strictEqual(r.code, 2, `${path.basename(file)}: exit ${r.code}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.strictEqual(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    // 10,000 terms are accepted by the parser (the limit itself).
    assert.strictEqual(parseTermsFile(Buffer.from(words(MAX_TERMS)), 'ok.txt', WORD_IC).length, MAX_TERMS);
    assert.throws(
      () => parseTermsFile(Buffer.from('12,x\n'), 'ids.txt', { word: false, ignoreCase: false, ids: true }),
      (e: Error) => e instanceof SearchInputError && /ids\.txt line 1: .*"x" is not a token id/.test(e.message),
    );
    const both = runCli(['count', sample, 'Lily', '--terms-file', cases[3][0]]);
    assert.strictEqual(both.code, 2);
    assert.match(both.stderr, /not both/);
    const top = runCli(['count', sample, 'Lily', '--top', '2', '--json']);
    assert.strictEqual(top.code, 2);
    assert.match(top.stderr, /--top applies to the text output/);
  });

  it('heatmap model: cells are the shares, rows by total or by peak bucket (sample, the reference counts)', async () => {
    const ds = await openDataset(sampleDir());
    const names = py([sampleDir(), '--mode', 'names', '--top', '30']) as string[];
    const file = path.join(tmp, 'heat-names.txt');
    fs.writeFileSync(file, names.join('\n') + '\n');
    const r = runCli(['count', sampleDir(), '--terms-file', file, '--word', '--per', '1', '--share', '--json']);
    assert.strictEqual(r.code, 0, r.stderr);
    const got = JSON.parse(r.stdout) as CountJson & { options: { word: boolean; ignore_case: boolean; ids: boolean } };
    const result = { ...got, per: 1, updates: ds.schedule.numUpdates } as unknown as Parameters<typeof heatmapModel>[0];
    const ref = py([
      sampleDir(),
      '--terms',
      JSON.stringify(names),
      '--word',
      '--G',
      String(ds.schedule.G),
      '--mode',
      'counts',
    ]) as RefCounts;
    const nb = got.buckets.length;
    const byTotal = heatmapModel(result, 'total');
    const byPeak = heatmapModel(result, 'peak');
    // Cell values: the reference's shares where any name occurred, no value elsewhere.
    for (let b = 0; b < nb; b++)
      for (let t = 0; t < names.length; t++) {
        const v = byTotal.values[t * nb + b];
        const want = ref.shares[String(b)]?.[t];
        if (want === undefined) assert.ok(Number.isNaN(v), `bucket ${b} term ${t}: no value`);
        else assert.strictEqual(v, want, `bucket ${b} term ${t}`);
      }
    // Orders from the reference's counts: totals descending; first bucket of the largest share ascending.
    const totals = names.map((_, t) => Object.values(ref.counts).reduce((s, c) => s + c[t], 0));
    const idx = names.map((_, t) => t);
    assert.deepStrictEqual(
      byTotal.rows,
      [...idx].sort((a, b) => totals[b] - totals[a] || a - b),
    );
    const peakOf = (t: number) => {
      let best = -1,
        bv = 0;
      for (const [u, s] of Object.entries(ref.shares))
        if (s[t] > bv || (s[t] === bv && best >= 0 && Number(u) < best)) [best, bv] = [Number(u), s[t]];
      return best < 0 ? nb : best;
    };
    assert.deepStrictEqual(
      byPeak.rows,
      [...idx].sort((a, b) => peakOf(a) - peakOf(b) || totals[b] - totals[a] || a - b),
    );
    assert.notDeepStrictEqual(byPeak.rows, byTotal.rows, 'the two orders differ on the sample');
  });

  it('bucketShares and topTerms', () => {
    assert.deepStrictEqual(bucketShares([0, 0, 0]), [null, null, null]);
    assert.deepStrictEqual(bucketShares([1, 3, 0]), [1 / 4, 3 / 4, 0]);
    assert.deepStrictEqual(topTerms([2, 5, 0, 5], 2), [1, 3]);
    assert.deepStrictEqual(topTerms([0, 0], 3), []);
  });
});

/** The first shard file of a dataset's manifest (binary data, holding NUL bytes). */
function ds0Shard(root: string): string {
  const first = fs.readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8').split('\n')[0];
  return (JSON.parse(first) as { shard: string }).shard;
}
