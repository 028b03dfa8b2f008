/**
 * Stream search judged by the byte-level Python reference (scripts/reference_search.py:
 * the card's reader + numpy, tokenizer.json's byte table decoded on its own, the `regex` module over
 * each document's text): per-update counts and `find` offsets exactly equal, on the sample and on
 * the dataset made by scripts/make-search-fixtures.mjs (names, whole words, case folding, emoji
 * ZWJ, CJK, shard edges, EOS, overlaps, odd tokenizations, invalid UTF-8, --ids runs).
 */
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { Dataset, openDataset } from '../../src/core/dataset';
import { CancelledError, DataError } from '../../src/core/errors';
import { LoadedTokenizer, loadTokenizer } from '../../src/core/tokenizer';
import {
  CountProgress,
  CountResult,
  SearchInputError,
  SearchOptions,
  countTerms,
  defaultPer,
  findTerms,
  datasetFingerprint,
  mergeCounts,
  parseCountPart,
  parseShardRange,
  parseTerms,
} from '../../src/core/search';
import { Dfa, TokenTable, compileTerms, tokenBytesOf } from '../../src/core/search/automaton';
import { RangeScanner } from '../../src/core/search/scan';
import { CountSetup, countTask } from '../../src/core/search/task';
import { CASED_END, caseFoldClasses } from '../../src/core/search/terms';
import { cliPath, repoRoot, runCli, sampleDir } from './fixtures';
import { python3Cached } from './pyref';
import * as crypto from 'crypto';

interface RefCounts {
  updates: number;
  counts: Record<string, number[]>;
}

function reference(root: string, terms: string[], o: SearchOptions, mode: 'counts' | 'offsets', G: number): unknown {
  const flags = [o.word && '--word', o.ignoreCase && '--ignore-case', o.ids && '--ids'].filter(Boolean) as string[];
  const out = python3Cached(
    [
      path.join(repoRoot(), 'scripts', 'reference_search.py'),
      root,
      '--terms',
      JSON.stringify(terms),
      ...flags,
      '--G',
      String(G),
      '--mode',
      mode,
    ],
    [root],
  );
  return JSON.parse(out);
}

/** Per-update counts of a `per: 1` result, only updates with a non-zero count (the reference's shape). */
function perUpdate(r: CountResult): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const b of r.buckets) if (b.counts.some((c) => c > 0)) out[String(b.first_update)] = b.counts;
  return out;
}

async function findAll(ds: Dataset, tok: LoadedTokenizer, terms: string[], o: SearchOptions): Promise<[number, number][]> {
  const out: [number, number][] = [];
  for await (const occ of findTerms(ds, tok, terms, o, { limit: 1e9 })) out.push([occ.offset, occ.termIndex]);
  return out;
}

const PLAIN: SearchOptions = { word: false, ignoreCase: false, ids: false };
const COMBOS: SearchOptions[] = [
  PLAIN,
  { ...PLAIN, word: true },
  { ...PLAIN, ignoreCase: true },
  { ...PLAIN, word: true, ignoreCase: true },
];
const label = (o: SearchOptions) => [o.word && 'word', o.ignoreCase && 'ignore-case', o.ids && 'ids'].filter(Boolean).join('+') || 'plain';

describe('stream search (count / find / merge) against the Python reference', function () {
  this.timeout(0);
  let sample: Dataset, sampleTok: LoadedTokenizer;
  let fx: Dataset, fxTok: LoadedTokenizer, fxRoot: string, tmp: string;
  let fxInfo: { shard_edge_matches: number[]; look_ahead_offset: number };

  before(async () => {
    sample = await openDataset(sampleDir());
    sampleTok = await loadTokenizer(sample.tokenizerFile!);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-search-'));
    const mod = await import(pathToFileURL(path.join(repoRoot(), 'scripts', 'make-search-fixtures.mjs')).href);
    fxRoot = path.join(tmp, 'fixture');
    await mod.makeSearchFixtures({ out: fxRoot, tokenizer: sample.tokenizerFile });
    fx = await openDataset(fxRoot);
    fxTok = await loadTokenizer(fx.tokenizerFile!);
    fxInfo = JSON.parse(fs.readFileSync(path.join(fxRoot, 'manifest.json'), 'utf8')).search_fixture;
  });
  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('case folding: no code point from CASED_END up folds with any other (caseFoldClasses scans below it only)', () => {
    // /iu canonicalization of this runtime: a code point above that matched one below, or whose
    // lower/upper case differs from itself, would be missed by caseFoldClasses.
    const below = new RegExp(`^[\\u{0}-\\u{${(CASED_END - 1).toString(16)}}]$`, 'iu');
    const partnered: number[] = [];
    for (let x = CASED_END; x <= 0x10ffff; x++) {
      const s = String.fromCodePoint(x);
      if (below.test(s) || s.toLowerCase() !== s || s.toUpperCase() !== s) partnered.push(x);
    }
    assert.deepStrictEqual(partnered, []);
    // and the scan below it still finds the classes the full definition gives (K: the Kelvin sign, ſ: long s)
    const cls = caseFoldClasses([0x6b, 0x73, 0x1e922, CASED_END + 5]);
    const full = (c: number) => {
      const re = new RegExp(`^\\u{${c.toString(16)}}$`, 'iu');
      const r: number[] = [];
      for (let x = 0; x <= 0x10ffff; x++) if (!(x >= 0xd800 && x < 0xe000) && re.test(String.fromCodePoint(x))) r.push(x);
      return r;
    };
    for (const c of [0x6b, 0x73, 0x1e922, CASED_END + 5]) assert.deepStrictEqual(cls.get(c), full(c), `U+${c.toString(16)}`);
  });

  it('sample: names per update (worker threads) equal the reference', async () => {
    const terms = ['Lily', 'whale', 'Ahab', 'Queequeg', 'the United States', 'the'];
    const r = await countTerms(sample, sampleTok, terms, PLAIN, { per: 1, jobs: 2 });
    const ref = reference(sample.root, terms, PLAIN, 'counts', sample.schedule.G) as RefCounts;
    assert.strictEqual(r.updates, ref.updates);
    assert.deepStrictEqual(perUpdate(r), ref.counts);
    assert.ok(r.totals[1] > 0 && r.totals[5] > 0, 'the sample has whales');
  });

  it('sample: --word --ignore-case per update and find offsets equal the reference', async () => {
    const terms = ['whale', 'god', 'ing', 'Mr.'];
    const o = { word: true, ignoreCase: true, ids: false };
    const r = await countTerms(sample, sampleTok, terms, o, { per: 1, jobs: 2 });
    assert.deepStrictEqual(perUpdate(r), (reference(sample.root, terms, o, 'counts', sample.schedule.G) as RefCounts).counts);
    assert.deepStrictEqual(await findAll(sample, sampleTok, terms, o), reference(sample.root, terms, o, 'offsets', sample.schedule.G));
  });

  const FX_TERMS = [
    'Lily',
    'the',
    '👨‍👩‍👧',
    '東京',
    'aa',
    'ana',
    'Straße',
    'strasse',
    'kelvin',
    'stop',
    'σίσυφος',
    'ΣΊΣΥΦΟΣ',
    'ǆemal',
    'fim_prefix',
    '<|fim_prefix|>',
    'Lily and',
    'ⅻ',
    'ς',
    'Li',
    'ly',
    'dog.',
    'Tom',
    'Ben',
    'Sue',
  ];
  for (const o of COMBOS) {
    it(`fixture (${label(o)}): counts per update and find offsets equal the reference`, async () => {
      const r = await countTerms(fx, fxTok, FX_TERMS, o, { per: 1, jobs: 2 });
      const ref = reference(fxRoot, FX_TERMS, o, 'counts', fx.schedule.G) as RefCounts;
      assert.strictEqual(r.updates, ref.updates);
      assert.deepStrictEqual(perUpdate(r), ref.counts);
      const offs = await findAll(fx, fxTok, FX_TERMS, o);
      assert.deepStrictEqual(offs, reference(fxRoot, FX_TERMS, o, 'offsets', fx.schedule.G));
      // the same on the calling thread
      assert.deepStrictEqual(await countTerms(fx, fxTok, FX_TERMS, o, { per: 1, jobs: 0 }), r);
    });
  }

  // The kernel's count path with each state-0 test forced (the automatic choice takes the branch
  // test on the small fixture): the pair test tallies the tokens whose matches all start in them, a
  // whole word's edges from the class bytes of the tokens beside them (`edgeClasses`: a character
  // outside ASCII, one cut across tokens, EOS); pieces of one update, and 61-token chunks.
  it("the kernel's own counts, each state-0 test forced, one piece per update: fixture and sample, every option, equal the reference", async () => {
    const countForced = async (
      ds: Dataset,
      tok: LoadedTokenizer,
      terms: string[],
      o: SearchOptions,
      kernel: 'pair' | 'branch',
      chunkTokens?: number,
    ) => {
      const compiled = compileTerms(parseTerms(terms, o), o);
      const setup: CountSetup = {
        compiled,
        tokenBytes: tokenBytesOf(tok),
        eos: ds.settings.eosTokenId,
        word: o.word,
        G: ds.schedule.G,
        updates: ds.schedule.numUpdates,
        per: 1,
      };
      const table = new TokenTable(new Dfa(compiled, o.word), setup.tokenBytes, setup.eos, undefined, o.word, kernel);
      const scanner = new RangeScanner(ds.stream, table, o.word);
      const nt = terms.length;
      const counts: Record<string, number[]> = {};
      for (const [index, e] of ds.shards.entries()) {
        const cells = await countTask(
          scanner,
          setup,
          { index, path: e.path, startToken: e.startToken, numTokens: e.numTokens },
          { chunkTokens },
        );
        for (let k = 0; k < cells.length; k += 2)
          (counts[String(Math.floor(cells[k] / nt))] ??= terms.map(() => 0))[cells[k] % nt] += cells[k + 1];
      }
      return counts;
    };
    const SAMPLE_TERMS = ['The', 'It', 'In', 'We', 'States', 'Congress', 'whale', 'Ahab', 'the sea'];
    for (const [ds, tok, terms, name] of [
      [fx, fxTok, FX_TERMS, 'fixture'],
      // names alone: no other term's state holds the byte after them (`Straße` would, making the
      // name a stop of the pair test), so the pair test itself reads every edge of theirs
      [fx, fxTok, ['Tom', 'Ben', 'Lily', 'Sue'], 'fixture (names)'],
      [sample, sampleTok, SAMPLE_TERMS, 'sample'],
    ] as const) {
      for (const o of COMBOS) {
        const ref = (reference(ds.root, [...terms], o, 'counts', ds.schedule.G) as RefCounts).counts;
        for (const mode of ['pair', 'branch'] as const)
          for (const chunkTokens of [undefined, 61])
            assert.deepStrictEqual(
              await countForced(ds, tok, [...terms], o, mode, chunkTokens),
              ref,
              `${name} ${label(o)} ${mode} chunks of ${chunkTokens ?? 'default'}`,
            );
      }
    }
  });

  it('fixture: a match across a shard edge is found; one across an EOS is not; one in the look-ahead token has no update', async () => {
    const offs = reference(fxRoot, ['Lily'], PLAIN, 'offsets', fx.schedule.G) as [number, number][];
    const found = await findAll(fx, fxTok, ['Lily'], PLAIN);
    assert.deepStrictEqual(found, offs);
    for (const at of fxInfo.shard_edge_matches) {
      const shard = fx.shards.find((s) => s.startToken <= at && at < s.startToken + s.numTokens)!;
      assert.ok(at + 4 > shard.startToken + shard.numTokens, 'the fixture cuts a shard inside this match');
      assert.ok(
        found.some(([o]) => o === at),
        `occurrence at ${at} (crossing a shard edge) found`,
      );
    }
    const last: { update: number | null }[] = [];
    for await (const occ of findTerms(fx, fxTok, ['Lily'], PLAIN, { fromOffset: fxInfo.look_ahead_offset, limit: 5 })) last.push(occ);
    assert.deepStrictEqual(
      last.map((x) => x.update),
      [null],
    );
    const r = await countTerms(fx, fxTok, ['Lily'], PLAIN, { per: 1, jobs: 0 });
    assert.strictEqual(r.totals[0], found.length - 1, 'the look-ahead occurrence is not counted');
    // "…Li" EOS "ly…": the byte sequence exists only across the EOS
    const decoded = fxTok.decode(Array.from(await fx.stream.read(0, fx.storedTokens)));
    assert.ok(decoded.includes('with Li<|endoftext|>ly was'));
  });

  it('fixture: --ids runs (EOS included when named) equal the reference', async () => {
    const ids = Array.from(await fx.stream.read(0, 200));
    const eos = fx.settings.eosTokenId;
    const afterEos = ids[ids.indexOf(eos) + 1];
    const terms = [`${ids[0]},${ids[1]}`, String(eos), `${ids[0]}`, `${eos},${afterEos}`, '105277', '1,2,3'];
    const o = { word: false, ignoreCase: false, ids: true };
    const r = await countTerms(fx, fxTok, terms, o, { per: 1, jobs: 2 });
    assert.deepStrictEqual(perUpdate(r), (reference(fxRoot, terms, o, 'counts', fx.schedule.G) as RefCounts).counts);
    assert.deepStrictEqual(await findAll(fx, fxTok, terms, o), reference(fxRoot, terms, o, 'offsets', fx.schedule.G));
    assert.ok(r.totals[1] > 0 && r.totals[3] > 0);
  });

  it("sample, 200 names plain and --word --ignore-case: the JavaScript step finds what the WebAssembly kernel finds, and both (and the kernel's own counts) count as the reference", async () => {
    const names = JSON.parse(
      python3Cached(
        [path.join(repoRoot(), 'scripts', 'reference_search.py'), sample.root, '--mode', 'names', '--top', '200'],
        [sample.root],
      ),
    ) as string[];
    assert.strictEqual(names.length, 200);
    const G = sample.schedule.G;
    for (const o of [PLAIN, { word: true, ignoreCase: true, ids: false }]) {
      const terms = parseTerms(names, o);
      const matches = async (kernel: boolean | 'pair' | 'branch', chunkTokens?: number, end = sample.stream.totalTokens) => {
        const table = new TokenTable(
          new Dfa(compileTerms(terms, o), o.word),
          tokenBytesOf(sampleTok),
          sample.settings.eosTokenId,
          undefined,
          o.word,
          kernel,
        );
        const out: number[] = [];
        await new RangeScanner(sample.stream, table, o.word).scanRange(0, end, (t, start, sb) => out.push(t, start, sb), { chunkTokens });
        return out;
      };
      const js = await matches(false);
      assert.deepStrictEqual(await matches(true), js, `${label(o)}: the kernel's matches equal the JavaScript step's`);
      // Chunk edges: the kernel's state-0 skip looks at the token after each one (a token that only
      // leaves state 0 is skipped when the next continues no state); the last token of a chunk has
      // none in hand. Odd chunk sizes put every kind of token at a chunk's end; both state-0 tests.
      const part = 150_000;
      const jsPart = await matches(false, undefined, part);
      for (const mode of ['pair', 'branch'] as const) {
        assert.deepStrictEqual(await matches(mode), js, `${label(o)}: kernel (${mode})`);
        assert.deepStrictEqual(await matches(mode, 4097), js, `${label(o)}: kernel (${mode}), 4,097-token chunks`);
        assert.deepStrictEqual(await matches(mode, 61, part), jsPart, `${label(o)}: kernel (${mode}), 61-token chunks`);
      }
      const counts: Record<string, number[]> = {};
      for (let k = 0; k < js.length; k += 3) {
        const u = Math.floor(js[k + 1] / G);
        if (u < sample.schedule.numUpdates) (counts[String(u)] ??= terms.map(() => 0))[js[k]]++;
      }
      const ref = (reference(sample.root, terms, o, 'counts', G) as RefCounts).counts;
      assert.deepStrictEqual(counts, ref, label(o));
      // The count path, where the kernel counts the matches that start and end in one token itself
      // (word edges from its neighbours' class bytes): one bucket per update, and 61-token chunks
      // (a neighbour across a chunk's edge goes to the JavaScript step).
      for (const chunkTokens of [undefined, 61]) {
        const r = await countTerms(sample, sampleTok, terms, o, { per: 1, jobs: 0, chunkTokens });
        assert.deepStrictEqual(perUpdate(r), ref, `${label(o)}: count, chunks of ${chunkTokens ?? 'default'} tokens`);
      }
    }
  });

  it('partial counts arrive per chunk, before any shard is finished, and never exceed the final counts (worker and calling thread)', async () => {
    const terms = ['whale', 'the'];
    const whole = await countTerms(sample, sampleTok, terms, PLAIN, { per: 1, jobs: 1 });
    for (const jobs of [1, 0]) {
      const seen: CountProgress[] = [];
      const r = await countTerms(sample, sampleTok, terms, PLAIN, { per: 1, jobs, chunkTokens: 65536, onProgress: (p) => seen.push(p) });
      assert.deepStrictEqual(r, whole, 'chunked reads count the same');
      const early = seen.filter((p) => p.shardsDone === 0 && p.partial.totals[1] > 0);
      assert.ok(early.length > 0, `jobs ${jobs}: counts before the first shard finished`);
      for (const p of seen) {
        assert.strictEqual(
          p.partial.buckets.reduce((s, b) => s + b.tokens, 0),
          Math.min(p.tokensDone, sample.schedule.numUpdates * sample.schedule.G),
          'bucket tokens are the tokens scanned',
        );
        p.partial.buckets.forEach((b, i) => b.counts.forEach((c, t) => assert.ok(c <= whole.buckets[i].counts[t])));
      }
    }
  });

  it('find: context holds the match at matchStart..matchEnd, within one document', async () => {
    for await (const occ of findTerms(fx, fxTok, ['lily'], { word: false, ignoreCase: true, ids: false }, { limit: 50, context: 20 })) {
      assert.strictEqual(occ.context.slice(occ.matchStart, occ.matchEnd).toLowerCase(), 'lily');
      assert.ok(!occ.context.includes('<|endoftext|>'));
      assert.ok(occ.matchStart <= 20 && occ.context.length - occ.matchEnd <= 20);
    }
  });

  it('merge of two halves equals the whole (CLI count --shards --json, merge --json)', () => {
    const n = sample.shards.length,
      h = Math.floor(n / 2);
    const args = ['whale', 'Lily', 'the sea', '--word'];
    const whole = runCli(['count', sample.root, ...args, '--json']);
    assert.strictEqual(whole.code, 0, whole.stderr);
    const p1 = runCli(['count', sample.root, ...args, '--shards', `0:${h}`, '--json']);
    const p2 = runCli(['count', sample.root, ...args, '--shards', `${h}:${n}`, '--json']);
    assert.deepStrictEqual(JSON.parse(p1.stdout).shards, [0, h]);
    const f1 = path.join(tmp, 'p1.json'),
      f2 = path.join(tmp, 'p2.json');
    fs.writeFileSync(f1, p1.stdout);
    fs.writeFileSync(f2, p2.stdout);
    const merged = runCli(['merge', f2, f1, '--json']);
    assert.strictEqual(merged.code, 0, merged.stderr);
    const m = JSON.parse(merged.stdout),
      w = JSON.parse(whole.stdout);
    assert.deepStrictEqual(m.shards, [0, n]);
    assert.deepStrictEqual(m.dataset, JSON.parse(p1.stdout).dataset, 'the merged result names the dataset of its parts');
    delete m.shards;
    delete m.dataset;
    assert.deepStrictEqual(m, w);
    assert.deepStrictEqual(Object.keys(w), ['terms', 'options', 'per', 'updates', 'buckets', 'totals']);
    assert.strictEqual(w.per, defaultPer(sample.schedule.numUpdates));
    const overlap = runCli(['merge', f1, f1]);
    assert.strictEqual(overlap.code, 2);
    assert.match(overlap.stderr, /overlap/);
    const [c1, c2] = [parseCountPart(JSON.parse(p1.stdout), 'p1.json'), parseCountPart(JSON.parse(p2.stdout), 'p2.json')];
    assert.throws(() => mergeCounts([c1, { ...c2, per: 2 }], ['p1.json', 'p2.json']), /p2\.json has --per 2, p1\.json has/);
  });

  it('merge checks every field of its parts, their dataset and that they tile its shards (--allow-partial names the gaps)', () => {
    const n = sample.shards.length,
      h = Math.floor(n / 2);
    const args = ['whale', 'Lily', '--word'];
    const p1 = JSON.parse(runCli(['count', sample.root, ...args, '--shards', `0:${h}`, '--json']).stdout);
    const p2 = JSON.parse(runCli(['count', sample.root, ...args, '--shards', `${h}:${n}`, '--json']).stdout);
    assert.strictEqual(p1.dataset.fingerprint, datasetFingerprint(sample), 'a part carries its dataset fingerprint');
    assert.strictEqual(p1.dataset.shards, n);
    // Another dataset: the sample's manifest with one line's sha256 changed (its stream is another).
    const other = path.join(tmp, 'other-dataset');
    fs.cpSync(sample.root, other, { recursive: true });
    const lines = fs.readFileSync(path.join(other, 'shard_manifest.jsonl'), 'utf8').split('\n');
    const first = JSON.parse(lines[0]);
    first.sha256 = crypto.createHash('sha256').update('another shard').digest('hex');
    lines[0] = JSON.stringify(first);
    fs.writeFileSync(path.join(other, 'shard_manifest.jsonl'), lines.join('\n'));
    const q1 = JSON.parse(runCli(['count', other, ...args, '--shards', `0:${h}`, '--json']).stdout);
    const write = (name: string, value: unknown) => {
      const f = path.join(tmp, name);
      fs.writeFileSync(f, typeof value === 'string' ? value : JSON.stringify(value));
      return f;
    };
    const edited = (p: typeof p1, edit: (x: typeof p1) => void) => {
      const x = JSON.parse(JSON.stringify(p));
      edit(x);
      return x;
    };
    const ok2 = write('ok2.json', p2);
    const big = JSON.stringify(p1).replace(/"counts":\[(\d+)/, '"counts":[9007199254740993');
    const cases: [string[], number, RegExp][] = [
      [
        [
          write(
            'strings.json',
            edited(p1, (x) => (x.buckets[0].counts = ['1', null])),
          ),
          ok2,
        ],
        1,
        /strings\.json: field buckets\[0\]\.counts\[0\] is "1"; expected a whole number 0\.\.2\^53−1/,
      ],
      [
        [
          write(
            'negative.json',
            edited(p1, (x) => (x.buckets[1].counts[1] = -3)),
          ),
          ok2,
        ],
        1,
        /negative\.json: field buckets\[1\]\.counts\[1\] is -3; expected a whole number 0/,
      ],
      [[write('big.json', big), ok2], 1, /big\.json: field buckets\[0\]\.counts\[0\] is a number beyond 2\^53−1/],
      [
        [
          write(
            'tokens.json',
            edited(p1, (x) => (x.buckets[0].tokens = -1)),
          ),
          ok2,
        ],
        1,
        /tokens\.json: field buckets\[0\]\.tokens is -1/,
      ],
      [
        [
          write(
            'range.json',
            edited(p1, (x) => (x.shards = [5, 1e308])),
          ),
        ],
        1,
        /range\.json: field shards\[1\] is a number beyond 2\^53−1; expected a whole number 6\.\./,
      ],
      [
        [
          write(
            'totals.json',
            edited(p1, (x) => (x.totals[0] += 1)),
          ),
          ok2,
        ],
        1,
        /totals\.json: field totals\[0\] is \d+; expected [\d,]+, the sum of the buckets' counts/,
      ],
      [
        [
          write(
            'old.json',
            edited(p1, (x) => delete x.dataset),
          ),
          ok2,
        ],
        1,
        /old\.json: field dataset is missing/,
      ],
      [[write('other.json', q1), ok2], 2, /ok2\.json counts another dataset than .*other\.json/],
      [[ok2], 2, new RegExp(`shards 0:${h} of the dataset's 0:${n} are in no part; count them too, or pass --allow-partial`)],
      [
        [
          write(
            'schedule.json',
            edited(p1, (x) => {
              x.updates -= 1;
              x.buckets = x.buckets.slice(0, Math.ceil(x.updates / x.per));
              x.buckets[x.buckets.length - 1].last_update = Math.min(x.updates, x.buckets[x.buckets.length - 1].first_update + x.per) - 1;
              x.totals = x.totals.map((_: number, t: number) =>
                x.buckets.reduce((s: number, b: { counts: number[] }) => s + b.counts[t], 0),
              );
            }),
          ),
          ok2,
        ],
        2,
        /ok2\.json covers [\d,]+ updates, .*schedule\.json [\d,]+: counted with other schedules/,
      ],
    ];
    for (const [files, code, re] of cases) {
      const r = runCli(['merge', ...files, '--json']);
      assert.strictEqual(r.code, code, `${files.map((f) => path.basename(f)).join(' ')}: exit ${r.code}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.strictEqual(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    // (runCli keeps stderr only on failure.)
    const partial = spawnSync(process.execPath, [cliPath(), 'merge', ok2, '--allow-partial', '--json'], { encoding: 'utf8' });
    assert.strictEqual(partial.status, 0, partial.stderr);
    assert.match(partial.stderr, new RegExp(`warning: shards 0:${h} of the dataset's 0:${n} are in no part`));
    const m = JSON.parse(partial.stdout);
    assert.deepStrictEqual(m.missing_shards, [[0, h]]);
    assert.deepStrictEqual(m.totals, p2.totals);
  });

  it('bad input: one-line errors, exit 2', () => {
    const root = sample.root;
    const cases: [string[], RegExp][] = [
      [['count', root, ''], /term 1 is empty/],
      [['count', root, '  \t'], /only whitespace/],
      [['count', root, 'x'.repeat(1001)], /1,001 bytes.*at most 1,000/],
      [['count', root, ...Array.from({ length: 10_001 }, (_, i) => `t${i}`)], /10,001 terms given; at most 10,000/],
      [['count', root, '12,-3', '--ids'], /"-3" is not a token id/],
      [['count', root, '4294967296', '--ids'], /not a token id/],
      [['count', root, 'whale', '--per', '0'], /--per/],
      [['count', root, 'whale', '--shards', `0:${sample.shards.length + 1}`], /--shards .*at most/],
      [['count', path.join(root, 'no-such-folder'), 'whale'], /no such/],
      [['find', root, ''], /term 1 is empty/],
    ];
    for (const [args, re] of cases) {
      const r = runCli(args);
      assert.strictEqual(r.code, 2, `${args.join(' ').slice(0, 80)}: exit ${r.code} ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.strictEqual(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    assert.throws(() => parseShardRange('3:2', 10), SearchInputError);
    assert.deepStrictEqual(parseTerms(['791, 4062'], { word: false, ignoreCase: false, ids: true }), ['791,4062']);
  });

  it('a shard that changes during the scan is reported (as verify does); cancellation rejects', async () => {
    const copy = path.join(tmp, 'changing');
    fs.cpSync(fxRoot, copy, { recursive: true });
    const ds = await openDataset(copy);
    const read = ds.stream.read.bind(ds.stream);
    let touched = false;
    ds.stream.read = async (s: number, n: number) => {
      const out = await read(s, n);
      if (!touched) {
        touched = true;
        const f = ds.shards[0].path;
        const t = new Date(Date.now() + 5000);
        fs.utimesSync(f, t, t);
      }
      return out;
    };
    await assert.rejects(
      countTerms(ds, fxTok, ['Lily'], PLAIN, { jobs: 0, shards: [0, 1] }),
      (e: Error) => e instanceof DataError && /tokens_000000\.u32 was modified while it was being searched/.test(e.message),
    );
    // Grown after the dataset was opened, before the count opened it (not during the read): refused too.
    const grown = path.join(tmp, 'grown');
    fs.cpSync(fxRoot, grown, { recursive: true });
    const ds2 = await openDataset(grown);
    const size = fs.statSync(ds2.shards[0].path).size;
    fs.appendFileSync(ds2.shards[0].path, fs.readFileSync(ds2.shards[0].path).subarray(0, 4));
    await assert.rejects(countTerms(ds2, fxTok, ['Lily'], PLAIN, { jobs: 0, shards: [0, 1] }), (e: Error) => {
      const want = `tokens_000000.u32 grew from ${size.toLocaleString('en-US')} to ${(size + 4).toLocaleString('en-US')} bytes since the dataset was opened`;
      return e instanceof DataError && e.message.includes(want);
    });
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(countTerms(sample, sampleTok, ['whale'], PLAIN, { signal: ac.signal }), CancelledError);
    const ac2 = new AbortController();
    const p = countTerms(sample, sampleTok, ['whale'], PLAIN, { signal: ac2.signal, jobs: 1, onProgress: () => ac2.abort() });
    await assert.rejects(p, CancelledError);
  });

  it('CLI find prints keyword-in-context lines and NDJSON in stream order', () => {
    const t = runCli(['find', sample.root, 'whale', '--limit', '3', '--context', '20']);
    assert.strictEqual(t.code, 0, t.stderr);
    const lines = t.stdout.trim().split('\n');
    assert.strictEqual(lines.length, 3);
    assert.match(lines[0], /^update [\d,]+ · seq [\d,]+ · pos [\d,]+ · [\d,]+ │ ….*\[whale\].*…$/);
    const j = runCli(['find', sample.root, 'whale', '--limit', '5', '--json'])
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const ref = (reference(sample.root, ['whale'], PLAIN, 'offsets', sample.schedule.G) as [number, number][]).slice(0, 5).map(([o]) => o);
    assert.deepStrictEqual(
      j.map((x) => x.offset),
      ref,
    );
    assert.deepStrictEqual(Object.keys(j[0]), ['term', 'offset', 'update', 'sequence', 'position', 'context']);
  });
});
