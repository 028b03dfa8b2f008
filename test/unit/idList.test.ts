/**
 * The id-list parser (src/core/idList.ts) on a corpus of real prints made by
 * scripts/make-idlist-corpus.mjs: numpy/JSON/Python/torch-shaped prints of real encodings of
 * real text, log lines from Python's logging, and distractors (negatives, floats, versions,
 * identifiers, dates, hex colours, ports, shapes). Expected results come with the corpus,
 * written by construction in Python; none are typed here.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { IdHit, extractIds, findIdsAt } from '../../src/core/idList';
import { loadTokenizer } from '../../src/core/tokenizer';
import { repoRoot, runCli, sampleDir } from './fixtures';

type Expect =
  | null
  | { kind: 'id'; id: number }
  | {
      kind: 'list';
      id: number;
      index: number;
      ids: number[];
      form: 'brackets' | 'bare';
      gaps: number[];
      row?: { index: number; count: number };
    }
  | { kind: 'update'; keyword: 'update' | 'step'; update: number };

interface Corpus {
  vocabSize: number;
  minDigits: number;
  cases: {
    name: string;
    text: string;
    probes: { offset: number; expect: Expect }[];
    lists: { start: number; end: number; rows: number[][] }[];
  }[];
  long_ids: number[];
}

/** The parts of a hit the corpus states (ranges are checked separately). */
function comparable(hit: IdHit | undefined): Expect {
  if (!hit) return null;
  if (hit.kind === 'id') return { kind: 'id', id: hit.id };
  if (hit.kind === 'update') return { kind: 'update', keyword: hit.keyword, update: hit.update };
  const out: Expect = { kind: 'list', id: hit.id, index: hit.index, ids: hit.ids, form: hit.form, gaps: hit.gaps };
  if (hit.row) out.row = { index: hit.row.index, count: hit.row.count };
  return out;
}

describe('idList: finding ids in real prints', function () {
  this.timeout(0);
  let corpus: Corpus;
  before(() => {
    sampleDir();
    const out = path.join(repoRoot(), 'out', 'test', 'fixtures', 'idlist-corpus.json');
    execFileSync(process.execPath, [path.join(repoRoot(), 'scripts', 'make-idlist-corpus.mjs'), '--out', out], { stdio: 'inherit' });
    corpus = JSON.parse(fs.readFileSync(out, 'utf8'));
  });

  it('the corpus covers every shape', () => {
    const names = corpus.cases.map((c) => c.name).join('\n');
    for (const shape of [
      'numpy repr',
      'numpy str',
      'summarised',
      'tensor',
      'json compact',
      'json indented',
      'bare run',
      'lone',
      'training log',
      'distractors',
    ]) {
      assert.ok(names.includes(shape), shape);
    }
    assert.ok(corpus.cases.reduce((n, c) => n + c.probes.length, 0) > 500);
  });

  it('every probe of every case parses as the corpus says', () => {
    const failures: string[] = [];
    for (const c of corpus.cases) {
      for (const p of c.probes) {
        const hit = findIdsAt(c.text, p.offset, { minDigits: corpus.minDigits, vocabSize: corpus.vocabSize });
        try {
          assert.deepStrictEqual(comparable(hit), p.expect);
          if (hit) {
            const r = hit.kind === 'update' ? hit.range : hit.range;
            assert.ok(r.start <= p.offset && p.offset < r.end, 'range covers the cursor');
            if (hit.kind !== 'update') assert.strictEqual(c.text.slice(r.start, r.end), String(hit.id));
            else assert.strictEqual(Number(c.text.slice(hit.numberRange.start, hit.numberRange.end).replace(/,/g, '')), hit.update);
          }
        } catch (err) {
          const ctx =
            c.text.slice(Math.max(0, p.offset - 25), p.offset) + '⟦' + c.text[p.offset] + '⟧' + c.text.slice(p.offset + 1, p.offset + 25);
          failures.push(`${c.name} @${p.offset} ${JSON.stringify(ctx)}: ${(err as Error).message.split('\n').slice(0, 12).join(' ')}`);
        }
      }
    }
    assert.deepStrictEqual(failures, []);
  });

  it('list ranges span the brackets (or the bare run) in the text', () => {
    for (const c of corpus.cases) {
      for (const l of c.lists) {
        const p = c.probes.find((q) => q.offset >= l.start && q.offset < l.end && q.expect?.kind === 'list');
        if (!p) continue;
        const hit = findIdsAt(c.text, p.offset, { minDigits: corpus.minDigits, vocabSize: corpus.vocabSize });
        assert.ok(hit?.kind === 'list', c.name);
        if (hit.form === 'bare') assert.deepStrictEqual(hit.listRange, { start: l.start, end: l.end }, c.name);
        else {
          assert.strictEqual(c.text[hit.listRange.start], '[', c.name);
          assert.strictEqual(c.text[hit.listRange.end - 1], ']', c.name);
          if (hit.row) assert.deepStrictEqual(hit.row.range, { start: l.start, end: l.end }, c.name);
          else assert.deepStrictEqual(hit.listRange, { start: l.start, end: l.end }, c.name);
        }
      }
    }
  });

  it('extractIds returns the rows of every printed list', () => {
    for (const c of corpus.cases) {
      for (const l of c.lists) {
        const got = extractIds(c.text.slice(l.start, l.end));
        assert.deepStrictEqual(got.rows, l.rows, c.name);
        assert.deepStrictEqual(got.ids, l.rows.flat(), c.name);
      }
    }
  });

  it('extractIds skips the ignore-index -100 of a labels list and keeps its ids', () => {
    const c = corpus.cases.find((x) => x.name.startsWith('json indented'))!;
    const labels: number[] = JSON.parse(c.text).labels;
    const from = c.text.indexOf('"labels"');
    const got = extractIds(c.text.slice(from));
    assert.deepStrictEqual(
      got.ids,
      labels.filter((x) => x >= 0),
    );
    assert.deepStrictEqual(
      got.skipped.map((s) => [s.text, s.reason]),
      labels.filter((x) => x < 0).map((x) => [String(x), 'negative']),
    );
  });

  it('extractIds finds no ids in distractor lines (except the all-numbers mask and timestamps lists)', () => {
    const c = corpus.cases.find((x) => x.name === 'distractors')!;
    for (const line of c.text.split('\n').filter(Boolean)) {
      const got = extractIds(line);
      if (/^(attention mask|timestamps) /.test(line)) assert.ok(got.ids.length > 0, line);
      else assert.deepStrictEqual(got.ids, [], line);
    }
    const offsets = extractIds(c.text.split('\n').find((l) => l.startsWith('offsets '))!);
    assert.deepStrictEqual(
      offsets.skipped.map((s) => s.reason),
      ['negative', 'negative', 'negative', 'negative', 'signed'],
    );
  });

  it('a 4,096-id JSON array (one line, and one id per line) is one list of the real ids', () => {
    for (const text of [JSON.stringify(corpus.long_ids), JSON.stringify({ input_ids: corpus.long_ids }, null, 2)]) {
      for (const k of [0, 1234, 4095]) {
        const at = nthNumber(text, k);
        const hit = findIdsAt(text, at, { vocabSize: corpus.vocabSize });
        assert.ok(hit?.kind === 'list');
        assert.strictEqual(hit.index, k);
        assert.deepStrictEqual(hit.ids, corpus.long_ids);
      }
      assert.deepStrictEqual(extractIds(text).ids, corpus.long_ids);
    }
  });

  it('a list longer than the scanning window is not guessed at: the number stands alone', () => {
    const text = JSON.stringify(corpus.long_ids);
    const k = 2000;
    const at = nthNumber(text, k);
    const hit = findIdsAt(text, at, { vocabSize: corpus.vocabSize, maxScan: 1000, minDigits: 1 });
    assert.deepStrictEqual(hit, { kind: 'id', id: corpus.long_ids[k], range: { start: at, end: at + String(corpus.long_ids[k]).length } });
    // Same when the caller passes a window cut from a bigger document.
    const win = text.slice(at - 500, at + 500);
    const hit2 = findIdsAt(win, 500, { vocabSize: corpus.vocabSize, clipped: { start: true, end: true }, minDigits: 1 });
    assert.strictEqual(hit2?.kind, 'id');
  });

  it('without a vocabulary size, candidates are reported (the hover then says the tokenizer is loading)', () => {
    const c = corpus.cases.find((x) => x.name === 'lone ids')!;
    const p = c.probes.find((q) => q.expect?.kind === 'id')!;
    assert.deepStrictEqual(comparable(findIdsAt(c.text, p.offset, { minDigits: corpus.minDigits })), p.expect);
    // And the vocabulary check is what keeps a big number quiet.
    const big = `id ${corpus.vocabSize + 5} here`;
    assert.strictEqual(findIdsAt(big, 4, { vocabSize: corpus.vocabSize }), undefined);
    assert.strictEqual(findIdsAt(big, 4)?.kind, 'id');
  });

  it('minDigits decides lone numbers, not list elements', () => {
    const c = corpus.cases.find((x) => x.name === 'lone ids')!;
    const short = c.probes.find((q) => q.expect === null && /\d/.test(c.text[q.offset]))!;
    assert.strictEqual(findIdsAt(c.text, short.offset, { vocabSize: corpus.vocabSize }), undefined);
    assert.strictEqual(findIdsAt(c.text, short.offset, { vocabSize: corpus.vocabSize, minDigits: 1 })?.kind, 'id');
  });

  it("the CLI's encode output (a bare run) and --json (a JSON array) read back as the library's ids", async () => {
    const sample = sampleDir();
    const tok = await loadTokenizer(path.join(sample, 'tokenizer', 'tokenizer.json'));
    const text = (corpus as unknown as { texts: Record<string, string> }).texts.usher;
    const expected = await tok.encode(text);
    const plain = runCli(['encode', sample, text]);
    assert.strictEqual(plain.code, 0, plain.stderr);
    const line = plain.stdout.trimEnd();
    const hit = findIdsAt(line, line.indexOf(' ') + 1, { vocabSize: tok.vocabSize });
    assert.ok(hit?.kind === 'list' && hit.form === 'bare');
    assert.deepStrictEqual(hit.ids, expected);
    const json = runCli(['encode', path.join(sample, 'tokenizer', 'tokenizer.json'), text, '--json']);
    assert.strictEqual(json.code, 0, json.stderr);
    assert.deepStrictEqual(extractIds(json.stdout).ids, expected);
    assert.deepStrictEqual(JSON.parse(json.stdout), { text, ids: expected });
    // decode is the inverse on the same ids.
    const back = runCli(['decode', sample, ...expected.map(String)]);
    assert.strictEqual(back.stdout, text); // to a pipe: the text itself, no newline added
  });

  it('pathological input ends (bounded scans, no regex backtracking)', () => {
    const digits = '9'.repeat(200_000);
    assert.strictEqual(findIdsAt(digits, 100_000), undefined);
    const brackets = '['.repeat(300_000) + '791, 4062' + ']'.repeat(300_000);
    assert.strictEqual(findIdsAt(brackets, 300_000)?.kind, 'list');
    const commas = Array.from({ length: 100_000 }, (_, i) => String(100 + (i % 900))).join(',');
    const hit = findIdsAt(commas, commas.length >> 1);
    assert.ok(hit === undefined || hit.kind !== 'list' || hit.ids.length < 100_000);
    const steps = 'step '.repeat(50_000) + '12';
    assert.strictEqual(findIdsAt(steps, steps.length - 1)?.kind, 'update');
    assert.deepStrictEqual(extractIds(brackets).ids.length, 2);
  });

  it('extractIds stays linear on a 1 MB selection of ids joined by commas or dots, without brackets', () => {
    // Each rejected number used to re-walk the whole run to report its written form: ~20 minutes
    // on the extension host for a 1 MB selection of a compact JSON array without its brackets.
    const ids: number[] = [];
    while (ids.join(',').length < 1_000_000) ids.push(...corpus.long_ids);
    const text = ids.join(',');
    const found = extractIds(text);
    // Outside brackets a 3-digit number after `<digit>,` (or a ≤ 3-digit one before `,ddd`) reads as a thousands group.
    const len = (k: number) => String(ids[k]).length;
    const grouped = (k: number) => (k > 0 && len(k) === 3) || (k + 1 < ids.length && len(k) <= 3 && len(k + 1) === 3);
    assert.deepStrictEqual(
      found.ids,
      ids.filter((_, k) => !grouped(k)),
    );
    assert.deepStrictEqual(
      found.skipped.map((s) => [s.start, s.text.length, s.reason]),
      [[0, text.length, 'formatted']],
      'one report: the run as written',
    );
    assert.deepStrictEqual(extractIds(`[${text}]`).ids, ids, 'inside brackets every element is an id');
    const dotted = ids.join('.');
    const d = extractIds(dotted);
    assert.deepStrictEqual([d.ids, d.skipped.map((s) => [s.start, s.text.length, s.reason])], [[], [[0, dotted.length, 'decimal']]]);
  });
});

/** Offset of the first digit of the k-th number (0-based) in a text of numbers. */
function nthNumber(text: string, k: number): number {
  const re = /\d+/g;
  let m: RegExpExecArray | null = null;
  for (let i = 0; i <= k; i++) m = re.exec(text);
  return m!.index;
}
