/**
 * The one document rule (`src/core/documentRule.ts`) on llm.c files, whose delimiter **opens**
 * every document (karpathy/llm.c `dev/data/fineweb.py`), against the numpy reference reader
 * (`scripts/reference_formats.py --documents`, written from docs/formats.md, not from the
 * product): every part that numbers or bounds documents — `DocumentIndex` by scanning and with
 * the stream index attached, the stream index's own queries and summary, `findDocumentBounds`,
 * `documentCountIfCheap`, the update model and per-update statistics — gives the reference's
 * document starts and lengths, including documents that continue across files and a stream
 * that begins inside a document (the llm.c files after the first one). The dataset card's layout
 * keeps its rule: its tests are `streamIndex.test.ts`, `stats.test.ts`, `updateModel.test.ts`.
 *
 * Skipped, saying so in each title, only when python3 with numpy is missing.
 */
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Dataset, openPath } from '../../src/core/dataset';
import { documentIndexOf, findDocumentBounds } from '../../src/core/documents';
import { documentRuleOf } from '../../src/core/documentRule';
import { computeUpdateStats } from '../../src/core/stats';
import { documentCountIfCheap, readUpdateModel } from '../../src/core/updateModel';
import { indexParamsFor, indexSegmentsOf, indexShards, openDatasetIndex } from '../../src/core/streamIndex/indexShards';
import { IndexStore } from '../../src/core/streamIndex/entryStore';
import { StreamIndex } from '../../src/core/streamIndex/streamIndex';
import { closeIdleReadWorkers } from '../../src/core/shardPool';
import { repoRoot } from './fixtures';
import { python3Cached } from './pyref';

const REPO = repoRoot();
const FIXTURES = path.join(REPO, 'format-fixtures');
const hasNumpy = spawnSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0;
const SKIP = hasNumpy ? '' : ' — skipped: python3 with numpy is not available';

/** The reference's document table of an llm.c path: `[start, length]` per document, the opening delimiter counted. */
function referenceTable(dir: string, eos: number, files: string[]): [number, number][] {
  const out = python3Cached(
    [path.join(REPO, 'scripts', 'reference_formats.py'), dir, '--format', 'llm.c', '--eos', String(eos), '--documents'],
    files,
  );
  return (JSON.parse(out) as { document_table: [number, number][] }).document_table;
}

interface Case {
  title: string;
  dir: string;
  eos: number;
  ds: Dataset;
  table: [number, number][];
  /** The stream index, built for the case. */
  ix: StreamIndex;
}

/** Offsets worth checking in document `n`: its first and last token, and one inside. */
function offsetsOf([start, length]: [number, number]): number[] {
  return [...new Set([start, start + (length >> 1), start + length - 1])];
}

describe(`llm.c documents begin at their delimiter, everywhere (numpy reference)${SKIP}`, function () {
  this.timeout(600_000);
  const cases: Case[] = [];
  let tmp = '';

  before(async function () {
    if (!hasNumpy) this.skip();
    execFileSync(process.execPath, [path.join(REPO, 'scripts', 'make-format-fixtures.mjs'), '--quiet', '--out', FIXTURES], {
      stdio: 'inherit',
    });
    const entries = (
      JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fixtures.json'), 'utf8')) as {
        fixtures: { name: string; path: string; eos: number }[];
      }
    ).fixtures;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-docrule-'));
    const dirs: { title: string; dir: string; eos: number }[] = [];
    for (const e of entries.filter((f) => f.name === 'llmc-gpt2' || f.name === 'llmc-llama3-v7')) {
      dirs.push({ title: e.name, dir: path.join(FIXTURES, e.path), eos: e.eos });
    }
    // The GPT-2 files after the first one: the stream begins inside a document (no leading delimiter).
    const g2 = dirs.find((d) => d.title === 'llmc-gpt2')!;
    const tail = path.join(tmp, 'llmc-gpt2-tail');
    fs.mkdirSync(tail);
    for (const f of fs.readdirSync(g2.dir).sort().slice(1)) fs.copyFileSync(path.join(g2.dir, f), path.join(tail, f));
    dirs.push({ title: 'llmc-gpt2 without its first file', dir: tail, eos: g2.eos });
    for (const d of dirs) {
      const ds = (await openPath(d.dir, { eosTokenId: d.eos, sequenceLength: 64, globalTokensPerUpdate: 256 }))!;
      assert.strictEqual(ds.format?.delimiter, 'opens');
      const files = ds.shards.map((s) => s.path);
      const store = new IndexStore(path.join(tmp, `store-${cases.length}`));
      const params = indexParamsFor(ds);
      const r = await indexShards(indexSegmentsOf(ds), store, params, { jobs: 1 });
      assert.deepStrictEqual(r.failed, []);
      cases.push({ ...d, ds, table: referenceTable(d.dir, d.eos, files), ix: await openDatasetIndex(ds, store, params) });
    }
    // The fixtures hold what the tests need: documents across file edges, both stream starts.
    const crossing = (c: Case) => c.table.some(([s, n]) => c.ds.shards.some((e) => e.startToken > s && e.startToken < s + n));
    assert.ok(cases.every(crossing), 'every case has a document continuing into the next file');
    const opensWithDelimiter = await Promise.all(cases.map(async (c) => (await c.ds.stream.read(0, 1))[0] === c.eos));
    assert.deepStrictEqual(opensWithDelimiter, [true, true, false], 'two streams begin with their delimiter, one inside a document');
  });

  after(async () => {
    await closeIdleReadWorkers();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the rule of a dataset comes from its format: llm.c opens, the dataset card closes', () => {
    for (const c of cases) assert.deepStrictEqual(documentRuleOf(c.ds), { delimiter: c.eos, role: 'opens' });
    assert.deepStrictEqual(documentRuleOf({ settings: { eosTokenId: 100257 } }), { delimiter: 100257, role: 'closes' });
  });

  it('DocumentIndex by scanning: numbers, starts and the count equal the reference', async () => {
    for (const c of cases) {
      const di = documentIndexOf(c.ds);
      assert.strictEqual(await documentCountIfCheap(di, Infinity), c.table.length, c.title);
      for (let n = 0; n < c.table.length; n++) {
        assert.strictEqual(await di.documentStart(n), c.table[n][0], `${c.title}: start of document ${n}`);
        for (const o of offsetsOf(c.table[n])) assert.strictEqual(await di.documentNumberAt(o), n, `${c.title}: document at ${o}`);
      }
      await assert.rejects(di.documentStart(c.table.length), /does not exist/);
    }
  });

  it('findDocumentBounds: start and length (the opening delimiter counted) equal the reference', async () => {
    for (const c of cases) {
      const { delimiter, role } = documentRuleOf(c.ds);
      for (const [start, length] of c.table) {
        for (const o of offsetsOf([start, length])) {
          const b = await findDocumentBounds(c.ds.stream, o, delimiter, Number.MAX_SAFE_INTEGER, role);
          assert.deepStrictEqual(
            [b.start, b.length, b.end, b.startKnown, b.endKnown],
            [start, length, start + length, true, true],
            `${c.title} @${o}`,
          );
        }
      }
    }
  });

  it('the stream index: count, numbers, documentInfo/documentAt, summary and each file’s numbering equal the reference', async () => {
    for (const c of cases) {
      const ix = c.ix;
      assert.ok(ix.complete, c.title);
      assert.strictEqual(ix.documentCount, c.table.length, c.title);
      assert.strictEqual(ix.summary().documents.count, c.table.length, `${c.title}: summary`);
      for (let n = 0; n < c.table.length; n++) {
        const [start, length] = c.table[n];
        const last = n === c.table.length - 1;
        assert.deepStrictEqual(await ix.documentInfo(n), { document: n, start, length, closed: !last }, `${c.title}: document ${n}`);
        for (const o of offsetsOf(c.table[n])) {
          assert.strictEqual(await ix.documentNumberAt(o), n, `${c.title}: number at ${o}`);
          assert.deepStrictEqual(await ix.documentAt(o), { document: n, start, length, closed: !last }, `${c.title}: at ${o}`);
        }
      }
      // DocumentIndex answers from the attached index the same way.
      const di = documentIndexOf(c.ds);
      di.attachStreamIndex(ix);
      for (let n = 0; n < c.table.length; n++) assert.strictEqual(await di.documentStart(n), c.table[n][0]);
      // Each file: the document holding its first token, and where the document begun at its last delimiter ends.
      for (let s = 0; s < c.ds.shards.length; s++) {
        const e = c.ds.shards[s];
        const num = (await ix.segmentNumbering(s))!;
        const head = c.table.findIndex(([a, n]) => a <= e.startToken && e.startToken < a + n);
        assert.strictEqual(num.headStart, c.table[head][0], `${c.title}: file ${s} head`);
        const inFile = c.table.filter(([a]) => a >= e.startToken && a < e.startToken + e.numTokens);
        const tailDoc = inFile.length ? inFile[inFile.length - 1] : c.table[head];
        const tailEnd = tailDoc[0] + tailDoc[1];
        assert.deepStrictEqual([num.tailEnd, num.tailKnown], [tailEnd, tailEnd < c.ds.stream.totalTokens], `${c.title}: file ${s} tail`);
      }
    }
  });

  it('update model: every segment carries the reference document of its first token; a segment never crosses a delimiter', async () => {
    for (const c of cases) {
      const di = documentIndexOf(c.ds);
      const starts = new Set(c.table.map(([s]) => s));
      const docAt = (o: number) => c.table.findIndex(([a, n]) => a <= o && o < a + n);
      for (let k = 0; k < c.ds.schedule.numUpdates; k += 7) {
        const m = await readUpdateModel(c.ds, k, undefined, await di.documentNumberAt(c.ds.schedule.G * k));
        for (const row of m.rows) {
          for (const g of row.segments) {
            assert.strictEqual(g.eos, false);
            assert.strictEqual(g.document, docAt(g.offset), `${c.title}: update ${k} segment @${g.offset}`);
            assert.strictEqual(g.continues, !starts.has(g.offset), `${c.title}: continues @${g.offset}`);
            for (let o = g.offset + 1; o < g.offset + g.end - g.start; o++)
              assert.ok(!starts.has(o), `${c.title}: segment @${g.offset} holds a start`);
          }
        }
      }
    }
  });

  it('per-update statistics: documents_started and complete documents equal the reference', async () => {
    for (const c of cases) {
      const { G } = c.ds.schedule;
      const last = c.ds.schedule.numUpdates - 1;
      const stats = await computeUpdateStats(c.ds, 0, last);
      for (const s of stats) {
        const lo = G * s.update,
          hi = lo + G;
        const started = c.table.filter(([a]) => a >= lo && a < hi);
        // Complete: it begins in the update and the next document's delimiter is in it too.
        const complete = started.filter(([a, n]) => a + n < hi && a + n < c.ds.stream.totalTokens);
        assert.strictEqual(s.documents_started, started.length, `${c.title}: update ${s.update} started`);
        assert.strictEqual(s.complete_documents, complete.length, `${c.title}: update ${s.update} complete`);
        const mean = complete.length ? complete.reduce((t, [, n]) => t + n, 0) / complete.length : null;
        assert.strictEqual(s.mean_complete_document_length, mean, `${c.title}: update ${s.update} mean`);
      }
    }
  });
});
