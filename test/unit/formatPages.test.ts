/**
 * The shard editor's pages on storage formats with a document index (core/pages.ts,
 * `shardFormatInfo`): over every file of the Megatron, Dolma and datatrove fixtures, read page by
 * page as the shard editor reads them,
 * - the document starts the pages carry (global) are the numpy reference reader's document table
 *   (`scripts/reference_formats.py --documents`), and the per-page document ends counted for
 *   numbering add up to its document count;
 * - Dolma: each document's provenance equals its `.csv.gz` row (`id`, `src`, `loc`) as Python's
 *   gzip + csv read it;
 * - datatrove: the runs of tokens not trained on equal the zero bytes of the `.ds.loss` files as
 *   numpy reads them.
 *
 * And the manifest table's columns of each file (`formatColumns`): its dtype is the one the
 * fixture generator wrote (fixtures.json); its documents are the reference's document starts
 * inside the file; formats without an index count none; MDS files carry the hash of index.json.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { formatColumns, openPath } from '../../src/core/dataset';
import { PAGE_TOKENS, ShardPages, shardFormatInfo } from '../../src/core/pages';
import { documentIndexOf, findDocumentBounds, formatDocumentAt } from '../../src/core/documents';
import { documentRuleOf } from '../../src/core/documentRule';
import { Numbering, PageData } from '../../webview/shardEditor/model';
import { ViewContext, boundaryLabel } from '../../webview/shardEditor/views';
import { TokenStream } from '../../src/core/stream';
import { repoRoot } from './fixtures';

const fixturesDir = path.join(repoRoot(), 'format-fixtures');

const PY_DOLMA = `
import csv, gzip, json, sys
rows = []
for f in sys.argv[1:]:
    with gzip.open(f, 'rt', newline='') as fh:
        rows.append([r for r in csv.reader(fh)])
print(json.dumps(rows))
`;

const PY_LOSS = `
import json, sys, numpy as np
print(json.dumps(np.concatenate([np.fromfile(f, dtype=np.uint8) for f in sys.argv[1:]]).tolist()))
`;

function python(script: string, args: string[]): string {
  return execFileSync('python3', ['-c', script, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
}

async function pagesOf(root: string) {
  const ds = (await openPath(root))!;
  const starts = new Set<number>();
  const meta = new Map<number, unknown>();
  const noLoss: number[] = [];
  let ends = 0;
  for (const [i, entry] of ds.shards.entries()) {
    const f = ds.format!.files[i];
    const stream = new TokenStream([{ path: f.path, startToken: 0, numTokens: f.numTokens, layout: f.layout }]);
    const pages = new ShardPages(stream, entry.numTokens, undefined, ds.settings.eosTokenId, 0, shardFormatInfo(ds, entry));
    const stats = await pages.scanDocuments();
    ends += stats.eosCount.reduce((a, b) => a + b, 0);
    for (let p = 0; p < pages.pageCount; p++) {
      const page = await pages.page(p);
      page.documents!.starts.forEach((s, k) => {
        const g = entry.startToken + s;
        if (g < ds.storedTokens) starts.add(g);
        if (page.documents!.metadata) meta.set(g, page.documents!.metadata[k]);
      });
      for (const [a, b] of page.noLoss ?? []) for (let t = a; t < b; t++) noLoss.push(entry.startToken + p * PAGE_TOKENS + t);
    }
    await stream.close();
  }
  await ds.stream.close();
  return { ds, starts: [...starts].sort((a, b) => a - b), meta, noLoss, ends };
}

/** The id numpy reads at the last token of each document of `table` (`reference_formats.py --ranges`). */
function lastTokenIds(root: string, format: string, table: [number, number][]): number[] {
  return (
    JSON.parse(
      execFileSync(
        'python3',
        [
          path.join(repoRoot(), 'scripts', 'reference_formats.py'),
          root,
          '--format',
          format,
          '--ranges',
          JSON.stringify(table.map(([s, l]) => [s + l - 1, 1])),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 28 },
      ),
    ) as { ranges: number[][] }
  ).ranges.map((r) => r[0]);
}

function reference(root: string, format: string): { documents: number; document_table: [number, number][] } {
  return JSON.parse(
    execFileSync('python3', [path.join(repoRoot(), 'scripts', 'reference_formats.py'), root, '--format', format, '--documents'], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    }),
  );
}

describe('shard editor pages on formats with a document index', function () {
  before(function () {
    if (!fs.existsSync(path.join(fixturesDir, 'fixtures.json'))) {
      execFileSync(process.execPath, [path.join(repoRoot(), 'scripts', 'make-format-fixtures.mjs')], { cwd: repoRoot(), stdio: 'inherit' });
    }
  });

  for (const [dir, format] of [
    ['dolma2/megatron-multi', 'megatron'],
    ['dolma2/dolma-uint32', 'dolma'],
    ['dolma2/datatrove-uint32-loss', 'datatrove'],
    ['gpt2/datatrove-uint16', 'datatrove'],
  ] as const) {
    it(`${dir}: document starts and ends equal the numpy reference's document table`, async () => {
      const root = path.join(fixturesDir, dir);
      const got = await pagesOf(root);
      const ref = reference(root, format);
      assert.deepStrictEqual(
        got.starts,
        ref.document_table.map(([s]) => s),
      );
      assert.strictEqual(got.ends, ref.documents);
      assert.ok(ref.documents > 1);
    });
  }

  it("dolma2/dolma-uint32: every document's provenance is its .csv.gz row", async () => {
    const root = path.join(fixturesDir, 'dolma2', 'dolma-uint32');
    const got = await pagesOf(root);
    const csvs = got.ds.format!.files.map((f) => f.path.replace(/\.npy$/, '.csv.gz'));
    const rows = JSON.parse(python(PY_DOLMA, csvs)) as string[][][];
    let n = 0;
    rows.forEach((fileRows, i) => {
      for (const [start, , id, src, loc] of fileRows) {
        const g = got.ds.shards[i].startToken + Number(start);
        assert.deepStrictEqual(got.meta.get(g), { id, src, loc }, `row ${n} (${csvs[i]})`);
        n++;
      }
    });
    assert.strictEqual(n, got.starts.length);
  });

  it('dolma2/datatrove-uint32-loss: tokens not trained on are the zero bytes of the .ds.loss files', async () => {
    const root = path.join(fixturesDir, 'dolma2', 'datatrove-uint32-loss');
    const got = await pagesOf(root);
    const mask = JSON.parse(
      python(
        PY_LOSS,
        got.ds.format!.files.map((f) => f.lossMask!.path),
      ),
    ) as number[];
    const zeros = mask.flatMap((b, i) => (b === 0 ? [i] : []));
    assert.ok(zeros.length > 0 && zeros.length < mask.length, `${zeros.length} of ${mask.length} tokens without loss`);
    assert.deepStrictEqual(got.noLoss, zeros);
  });

  it("manifest table columns: each file's dtype and the reference's documents starting in it", async () => {
    const meta = JSON.parse(fs.readFileSync(path.join(fixturesDir, 'fixtures.json'), 'utf8')) as {
      fixtures: { name: string; format: string; dtype: string; path: string; documents: number | null }[];
    };
    for (const fx of meta.fixtures) {
      const root = path.join(fixturesDir, fx.path);
      const ds = (await openPath(root))!;
      const cols = ds.shards.map((_, i) => formatColumns(ds, i));
      for (const c of cols) assert.strictEqual(c.dtype, fx.dtype, fx.name);
      if (fx.documents === null) {
        for (const c of cols) assert.strictEqual(c.documents, null, fx.name);
      } else {
        const starts = reference(root, fx.format).document_table.map(([s]) => s);
        ds.shards.forEach((e, i) => {
          const inside = starts.filter((s) => s >= e.startToken && s < e.startToken + e.numTokens).length;
          assert.strictEqual(cols[i].documents, inside, `${fx.name} file ${e.shard}`);
        });
        assert.strictEqual(
          cols.reduce((a, c) => a + c.documents!, 0),
          fx.documents,
          fx.name,
        );
      }
      if (fx.format === 'mds') for (const c of cols) assert.ok(c.formatHash && /^[0-9a-f]+$/.test(c.formatHash.hex), fx.name);
      await ds.stream.close();
    }
  });
});

/**
 * The shard editor's document numbering on llm.c, whose delimiter opens every document
 * (`documentRule.ts`): the host's pages and per-page facts (`ShardPages`), read into the
 * webview's model (`PageData`, `Numbering`, `textBlocks`) with the document base and the head and
 * tail bounds the host takes from the core (`documentIndexOf`, `findDocumentBounds`), give every
 * document of the numpy reference's table (`scripts/reference_formats.py --documents`) its number,
 * start and length at its first, middle and last token; each separator is a stored delimiter and
 * begins the reference's document at that offset.
 */
describe('shard editor pages on llm.c: documents begin at their delimiter', function () {
  this.timeout(600_000);
  for (const [dir, eos] of [
    ['gpt2/llmc-gpt2', 50256],
    ['dolma2/llmc-llama3-v7', 100257],
  ] as const) {
    it(`${dir}: document numbers, starts and lengths equal the numpy reference's document table`, async () => {
      const root = path.join(fixturesDir, dir);
      // The Llama 3 fixture prepends the dolma2 tokenizer's EOS, not Llama 3's BOS that the format implies.
      const ds = (await openPath(root, { eosTokenId: eos }))!;
      assert.strictEqual(ds.format!.delimiter, 'opens');
      const table = (
        JSON.parse(
          execFileSync(
            'python3',
            [path.join(repoRoot(), 'scripts', 'reference_formats.py'), root, '--format', 'llm.c', '--eos', String(eos), '--documents'],
            {
              encoding: 'utf8',
              maxBuffer: 1 << 28,
            },
          ),
        ) as { document_table: [number, number][] }
      ).document_table;
      assert.ok(table.length > 2, `${table.length} documents`);
      const rule = documentRuleOf(ds);
      const index = documentIndexOf(ds);
      const firstId = (await ds.stream.read(0, 1))[0];
      let checked = 0;
      let separators = 0;
      for (const [i, entry] of ds.shards.entries()) {
        const f = ds.format!.files[i];
        const stream = new TokenStream([{ path: f.path, startToken: 0, numTokens: f.numTokens, layout: f.layout }]);
        const shard = new ShardPages(stream, entry.numTokens, undefined, ds.settings.eosTokenId, 0, shardFormatInfo(ds, entry));
        const stats = await shard.scanDocuments();
        const pages = new Map<number, PageData>();
        for (let p = 0; p < shard.pageCount; p++) pages.set(p, new PageData(await shard.page(p), ds.settings.eosTokenId));
        const base = entry.startToken;
        const head = await findDocumentBounds(ds.stream, base, rule.delimiter, 1 << 30, rule.role);
        const lastPage = stats.lastEos.reduce((a, x, p) => (x >= 0 ? p : a), -1);
        const tailFrom = lastPage >= 0 ? base + lastPage * PAGE_TOKENS + stats.lastEos[lastPage] + 1 : base;
        const tail =
          tailFrom < ds.stream.totalTokens ? await findDocumentBounds(ds.stream, tailFrom, rule.delimiter, 1 << 30, rule.role) : undefined;
        const numbering = new Numbering(PAGE_TOKENS, base);
        numbering.update({
          type: 'numbering',
          generation: 0,
          state: 'global',
          docBase: await index.documentNumberAt(base),
          pageEos: stats.eosCount,
          pageFirstEos: stats.firstEos,
          pageLastEos: stats.lastEos,
          headStart: head.start,
          headKnown: true,
          tailEnd: tail?.end ?? ds.stream.totalTokens,
          tailKnown: true,
        });
        const pageAt = (p: number) => pages.get(p);
        table.forEach(([start, length], n) => {
          for (const g of new Set([start, start + (length >> 1), start + length - 1])) {
            if (g < base || g >= base + entry.numTokens) continue;
            const o = g - base;
            const doc = numbering.docAt(o, pageAt(Math.floor(o / PAGE_TOKENS)), pageAt);
            assert.deepStrictEqual(
              [doc.number, doc.start! + base, doc.end! - doc.start!],
              [n, start, length],
              `${dir} global offset ${g} (document ${n})`,
            );
            checked++;
          }
        });
        const starts = new Map(table.map(([s, l], n) => [s, [n, l]]));
        for (const page of pages.values()) {
          for (const b of page.blocks('documents', 0).filter((x) => x.kind === 'sep')) {
            assert.strictEqual(page.id(b.start), eos);
            const doc = numbering.docAfterEos(b.start, page, pageAt);
            assert.deepStrictEqual(
              [doc.number, doc.end! - doc.start!],
              starts.get(base + b.start),
              `${dir} separator at ${base + b.start}`,
            );
            separators++;
          }
        }
        await stream.close();
      }
      await ds.stream.close();
      assert.ok(checked >= table.length * 2, `${checked} offsets checked`);
      // Every document begins with its delimiter, except document 0 when the stream does not.
      assert.strictEqual(separators, table.length - (firstId === eos ? 0 : 1));
    });
  }
});

/**
 * Index documents stored without EOS (Megatron written without `--append-eod`): the shard
 * editor draws a separator only where the stored token is the delimiter. Over every page of the
 * fixtures, the separators are exactly the reference documents whose last token (read by numpy,
 * `reference_formats.py --ranges`) is the EOS id; every other document's last token stays in the
 * text and ends its block, and the next document starts a line.
 */
describe('shard editor pages: separators only where the stored token is the delimiter', function () {
  this.timeout(600_000);
  for (const [dir, format] of [
    ['dolma2/megatron-multi', 'megatron'],
    ['dolma2/datatrove-uint32-loss', 'datatrove'],
  ] as const) {
    it(`${dir}: separators are the documents ending with EOS; other document ends stay in the text`, async () => {
      const root = path.join(fixturesDir, dir);
      const got = await pagesOf(root);
      const eos = got.ds.settings.eosTokenId;
      const table = reference(root, format).document_table;
      const lastIds = lastTokenIds(root, format, table);
      const withEos = table.filter((_, n) => lastIds[n] === eos).map(([s, l]) => s + l - 1);
      const without = table.filter((_, n) => lastIds[n] !== eos).map(([s, l]) => s + l - 1);
      assert.ok(without.length > 0, `${dir}: some documents end without EOS`);
      const seps: number[] = [];
      const textEnds = new Set<number>();
      for (const [i, entry] of got.ds.shards.entries()) {
        const f = got.ds.format!.files[i];
        const stream = new TokenStream([{ path: f.path, startToken: 0, numTokens: f.numTokens, layout: f.layout }]);
        const shard = new ShardPages(stream, entry.numTokens, undefined, eos, 0, shardFormatInfo(got.ds, entry));
        for (let p = 0; p < shard.pageCount; p++) {
          const page = new PageData(await shard.page(p), eos);
          const blocks = page.blocks('documents', 0);
          blocks.forEach((b, k) => {
            if (b.kind === 'sep') seps.push(entry.startToken + b.start);
            else {
              textEnds.add(entry.startToken + b.end - 1);
              if (k > 0 && page.isEnd(blocks[k - 1].end - 1)) assert.ok(!b.midLine, `${dir}: block after a document end at ${b.start}`);
            }
          });
        }
        await stream.close();
      }
      assert.deepStrictEqual(seps, withEos);
      for (const e of without) assert.ok(textEnds.has(e), `${dir}: document ending at ${e} ends a text block`);
    });
  }
});

/**
 * Boundary markers (webview/shardEditor/model.ts `PageData.boundaries`, views.ts `boundaryLabel`):
 * a document of the format's index that starts after a stored token other than the delimiter
 * (Megatron written without `--append-eod`: none of megatron-multi's 30 documents ends with EOS;
 * datatrove-uint32-loss: some do, some do not) gets a marker with the separator's label. Over
 * every page of the fixtures, read page by page as the shard editor reads them, with the document
 * numbering the host sends (head and tail from the format's index, `docBase` from the core's
 * document index): every document of the numpy reference's table (`reference_formats.py
 * --documents`) that does not start at a shard's first token (announced there by the shard's
 * start marker) is announced exactly once, by an EOS separator or by a boundary marker, and each
 * marker's label gives the reference's document number, global start and length, saying "no
 * closing EOS" exactly when numpy reads a last token other than the EOS.
 */
describe('shard editor pages: a labelled boundary marker at every index boundary without a stored delimiter', function () {
  this.timeout(600_000);
  for (const [dir, format] of [
    ['dolma2/megatron-multi', 'megatron'],
    ['dolma2/datatrove-uint32-loss', 'datatrove'],
  ] as const) {
    it(`${dir}: boundary markers and separators announce every reference document once; marker labels equal the reference`, async () => {
      const root = path.join(fixturesDir, dir);
      const ds = (await openPath(root))!;
      const eos = ds.settings.eosTokenId;
      const table = reference(root, format).document_table;
      const lastIds = lastTokenIds(root, format, table);
      const docs = ds.format!.documents!;
      const index = documentIndexOf(ds);
      const shardStarts = new Set(ds.shards.map((e) => e.startToken));
      const byStart = new Map(table.map(([s, l], n) => [s, { n, l, eosLast: lastIds[n] === eos }]));
      const announced: number[] = [];
      const markers: number[] = [];
      for (const [i, entry] of ds.shards.entries()) {
        const f = ds.format!.files[i];
        const stream = new TokenStream([{ path: f.path, startToken: 0, numTokens: f.numTokens, layout: f.layout }]);
        const shard = new ShardPages(stream, entry.numTokens, undefined, eos, 0, shardFormatInfo(ds, entry));
        const stats = await shard.scanDocuments();
        const pages = new Map<number, PageData>();
        for (let p = 0; p < shard.pageCount; p++) pages.set(p, new PageData(await shard.page(p), eos));
        const pageAt = (p: number) => pages.get(p);
        const base = entry.startToken;
        // The numbering message as the host builds it for a format with an index (shardDocument.ts).
        const lastPage = stats.lastEos.reduce((a, x, p) => (x >= 0 ? p : a), -1);
        const tailFrom = lastPage >= 0 ? base + lastPage * PAGE_TOKENS + stats.lastEos[lastPage] + 1 : base;
        const numbering = new Numbering(PAGE_TOKENS, base);
        numbering.update({
          type: 'numbering',
          generation: 0,
          state: 'global',
          docBase: await index.documentNumberAt(base),
          pageEos: stats.eosCount,
          pageFirstEos: stats.firstEos,
          pageLastEos: stats.lastEos,
          headStart: base > 0 ? formatDocumentAt(docs, base, ds.stream.totalTokens).start : 0,
          headKnown: true,
          tailEnd: tailFrom < ds.stream.totalTokens ? formatDocumentAt(docs, tailFrom, ds.stream.totalTokens).end : ds.stream.totalTokens,
          tailKnown: true,
        });
        const ctx: ViewContext = {
          view: 'documents',
          cols: 16,
          total: entry.numTokens,
          pageTokens: PAGE_TOKENS,
          eos,
          globalStart: base,
          streamTokens: ds.storedTokens,
          page: pageAt,
          numbering,
          highlights: [],
          cursor: -1,
          invisibles: false,
        };
        for (const page of pages.values()) {
          for (const b of page.blocks('documents', 0)) if (b.kind === 'sep') announced.push(base + b.start + 1);
          for (const o of page.boundaries()) {
            assert.ok(page.isBoundary(o) && !page.isSeparator(o - 1), `${dir}: a marker at ${base + o} follows no separator`);
            announced.push(base + o);
            markers.push(base + o);
            const label = boundaryLabel(o, page, ctx);
            const m = /^document ([\d,]+) · starts at global offset ([\d,]+) · ([\d,]+) tokens?( \+ EOS|, no closing EOS)$/.exec(label);
            assert.ok(m, `${dir}: label at ${base + o}: "${label}"`);
            const num = (x: string) => Number(x.replace(/,/g, ''));
            const want = byStart.get(base + o);
            assert.ok(want, `${dir}: a marker at ${base + o}, where no reference document starts`);
            const length = num(m[3]) + (m[4] === ' + EOS' ? 1 : 0);
            assert.deepStrictEqual(
              [num(m[1]), num(m[2]), length, m[4] === ' + EOS'],
              [want.n, base + o, want.l, want.eosLast],
              `${dir}: label at ${base + o}: "${label}"`,
            );
          }
        }
        await stream.close();
      }
      await ds.stream.close();
      const expected = table.map(([s]) => s).filter((s) => !shardStarts.has(s));
      assert.deepStrictEqual(
        // (an EOS separator at the stream's last token announces its end, not a document)
        announced.filter((g) => !shardStarts.has(g) && g < ds.storedTokens).sort((a, b) => a - b),
        expected,
        `${dir}: every document not at a shard's first token is announced once`,
      );
      // Markers go exactly where the stored token before the document is not the EOS.
      const noEos = table.filter(([s], n) => n > 0 && lastIds[n - 1] !== eos && !shardStarts.has(s)).map(([s]) => s);
      assert.deepStrictEqual(markers, noEos);
      assert.ok(markers.length > 0, `${dir}: some markers`);
      if (dir.includes('megatron')) assert.strictEqual(markers.length, table.length - shardStarts.size, 'megatron-multi: every document');
    });
  }

  it('a document starting exactly at a page edge: a marker when the token before (on the previous page) is not the EOS, none after an EOS', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-bound-'));
    try {
      const { preprocess } = (await import(
        pathToFileURL(path.join(repoRoot(), 'scripts', 'lib', 'format-writers', 'megatron.mjs')).href
      )) as {
        preprocess(prefix: string, documents: ArrayLike<number>[][], o: { dtype: string; appendEod: boolean; eod: number }): unknown;
      };
      // Real dolma2 ids (megatron-multi's first file), cut so that document 1 starts at PAGE_TOKENS.
      const src = (await openPath(path.join(fixturesDir, 'dolma2', 'megatron-multi')))!;
      const ids = Array.from(await src.stream.read(0, PAGE_TOKENS + 500)).filter((id) => id !== src.settings.eosTokenId);
      const eod = src.settings.eosTokenId;
      await src.stream.close();
      for (const appendEod of [false, true]) {
        const first = ids.slice(0, PAGE_TOKENS - (appendEod ? 1 : 0));
        const prefix = path.join(tmp, appendEod ? 'eod' : 'plain');
        preprocess(prefix, [[first], [ids.slice(first.length, first.length + 400)]], { dtype: 'int32', appendEod, eod });
        const root = `${prefix}.bin`;
        const starts = reference(root, 'megatron').document_table.map(([st]) => st);
        assert.deepStrictEqual(starts, [0, PAGE_TOKENS], 'document 1 starts at the page edge');
        const ds = (await openPath(root))!;
        const entry = ds.shards[0];
        const f = ds.format!.files[0];
        const stream = new TokenStream([{ path: f.path, startToken: 0, numTokens: f.numTokens, layout: f.layout }]);
        const shard = new ShardPages(stream, entry.numTokens, undefined, eod, 0, shardFormatInfo(ds, entry));
        const p0 = new PageData(await shard.page(0), eod);
        const p1 = new PageData(await shard.page(1), eod);
        assert.deepStrictEqual([p0.boundaries(), p1.boundaries()], [[], appendEod ? [] : [PAGE_TOKENS]], `appendEod ${appendEod}`);
        assert.deepStrictEqual(
          p0
            .blocks('documents', 0)
            .filter((b) => b.kind === 'sep')
            .map((b) => b.start),
          appendEod ? [PAGE_TOKENS - 1] : [],
        );
        await stream.close();
        await ds.stream.close();
      }
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
