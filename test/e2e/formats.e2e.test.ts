/**
 * Every storage format in the shard editor, end to end (code-server + Chromium, the packaged
 * .vsix), in one workbench opened on format-fixtures/ (`scripts/make-format-fixtures.mjs`):
 * Megatron `.idx` and datatrove `.ds` open the shard editor by default; llm.c, nanoGPT, litdata
 * `.bin`, Dolma `.npy` and MDS `.mds` files open in the text editor and the offer
 * ("Open as token shard (Megatron int32)?") opens them. For each, the first document's text in the
 * Documents view equals the tokenizer's decode of its ids, the document and its ids taken from
 * the numpy reference reader (`scripts/reference_formats.py`); Dolma's separator shows the next
 * document's provenance as its `.csv.gz` row says; llm.c's separator is the EOT that opens the
 * next document, labelled with its number, start and length from the reference's table; Megatron
 * documents stored without EOS (megatron-multi) get a boundary marker with the same label;
 * datatrove's tokens not trained on are marked
 * and labelled. The manifest table opened from the Dolma file lists its stream's files with the
 * reference's token counts and the generator's dtype and document count. Screenshots:
 * test-results/screenshots/formats-*.png.
 *
 * Run with `node scripts/test-e2e.mjs --grep "formats"`.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { FrameLocator } from 'playwright-core';
import { launchWorkbench, REPO_ROOT, Workbench, reportIfFailed, until } from './harness';
import { loadTokenizer } from '../../src/core/tokenizer';
import { count, fmt } from '../../src/core/units';
import { FORMAT_LABELS, offerQuestion } from '../../src/core/formats/offer';
import type { FormatName, TokenDtype } from '../../src/core/formats/types';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const FIXTURES = path.join(REPO_ROOT, 'format-fixtures');

interface Fixture {
  name: string;
  format: FormatName;
  dtype: TokenDtype;
  path: string;
  eos: number;
  tokenizer_file: string;
  /** Documents in the format's index; null where EOS (or llm.c's delimiter) separates them. */
  documents: number | null;
}

/** The numpy reference's view of one file: its first document `[start, start + length)` and the ids through its end. */
function reference(fx: Fixture, file: string): { first: [number, number]; second?: [number, number]; ids: number[] } {
  const table = JSON.parse(
    execFileSync(
      'python3',
      [
        path.join(REPO_ROOT, 'scripts', 'reference_formats.py'),
        file,
        '--format',
        fx.format,
        '--dtype',
        fx.dtype,
        '--eos',
        String(fx.eos),
        '--documents',
      ],
      { encoding: 'utf8', maxBuffer: 1 << 28 },
    ),
  ) as { document_table: [number, number][] };
  const first = table.document_table[0];
  const second = table.document_table[1];
  const ranges = JSON.stringify([[0, first[0] + first[1] + 1]]);
  const ids = (
    JSON.parse(
      execFileSync(
        'python3',
        [
          path.join(REPO_ROOT, 'scripts', 'reference_formats.py'),
          file,
          '--format',
          fx.format,
          '--dtype',
          fx.dtype,
          '--eos',
          String(fx.eos),
          '--ranges',
          ranges,
        ],
        { encoding: 'utf8', maxBuffer: 1 << 28 },
      ),
    ) as { ranges: number[][] }
  ).ranges[0];
  return { first, second, ids };
}

/** Text of local tokens `[start, end)` in the Documents view, paging down until the separator at `sep` is drawn. */
async function documentText(w: Workbench, frame: FrameLocator, start: number, end: number, sep: number): Promise<string> {
  const got = new Map<number, string>();
  const sepAt = frame.locator(`.viewport .blk.sep[data-s="${sep}"]`);
  await frame.locator('.viewport').click({ position: { x: 5, y: 5 } });
  for (let i = 0; i < 600; i++) {
    const shown = await frame
      .locator('.viewport .tok.tx')
      .evaluateAll((els) => els.map((e) => [Number((e as HTMLElement).dataset.o), e.textContent ?? ''] as [number, string]));
    for (const [o, t] of shown) if (o >= start && o < end) got.set(o, t);
    if (await sepAt.count()) break;
    await w.page.keyboard.press('PageDown');
    await sleep(120);
  }
  assert.ok(await sepAt.count(), `the separator at ${sep} never appeared`);
  return [...got.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, t]) => t)
    .join('');
}

/** How each fixture is opened: the file (relative to format-fixtures/) and whether the offer opens it. */
const CASES: { fixture: string; file: string[]; offer: boolean }[] = [
  { fixture: 'megatron-int32-eod', file: ['dolma2', 'megatron-int32-eod', 'corpus_text_document.idx'], offer: false },
  { fixture: 'datatrove-uint32-loss', file: ['dolma2', 'datatrove-uint32-loss', '000_dolma2_corpus.ds'], offer: false },
  { fixture: 'dolma-uint32', file: ['dolma2', 'dolma-uint32', 'part-0-00000.npy'], offer: true },
  { fixture: 'llmc-gpt2', file: ['gpt2', 'llmc-gpt2', 'tinyfineweb_train_000000.bin'], offer: true },
  { fixture: 'nanogpt', file: ['gpt2', 'nanogpt', 'train.bin'], offer: true },
  { fixture: 'litdata-uint32', file: ['dolma2', 'litdata-uint32', 'chunk-0-0.bin'], offer: true },
  { fixture: 'mds-int32', file: ['dolma2', 'mds-int32', 'shard.00000.mds'], offer: true },
];

describe('e2e: formats in the shard editor', function () {
  this.timeout(900_000);
  let wb: Workbench | undefined;
  const meta = () => (JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fixtures.json'), 'utf8')) as { fixtures: Fixture[] }).fixtures;

  before(async () => {
    if (!fs.existsSync(path.join(FIXTURES, 'fixtures.json'))) {
      execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'make-format-fixtures.mjs')], { cwd: REPO_ROOT, stdio: 'inherit' });
    }
    wb = await launchWorkbench({ folder: FIXTURES, viewport: { width: 1400, height: 900 } });
  });

  afterEach(async function () {
    await reportIfFailed(this.currentTest, wb);
  });

  after(async () => {
    await wb?.close();
  });

  for (const c of CASES) {
    it(`${c.fixture}: the first document's text equals the decode of the reference ids`, async () => {
      const w = wb!;
      const fx = meta().find((f) => f.name === c.fixture)!;
      const file = path.join(FIXTURES, ...c.file);
      // The fixtures' tree is long: folders opened before would push the next ones out of view.
      await w.runCommand('Collapse Folders in Explorer');
      await w.openFileFromExplorer(...c.file);
      if (c.offer) {
        // The question names the format and dtype the generator wrote.
        const question = offerQuestion(fx.format, fx.dtype);
        assert.ok(question.includes(FORMAT_LABELS[fx.format]));
        const toast = w.page.locator('.notification-toast').filter({ hasText: question }).first();
        await toast.waitFor({ state: 'visible', timeout: 60_000 });
        await toast.locator('a.monaco-button', { hasText: /^Open$/ }).click();
      }
      const frame = await w.waitForWebview('.viewport .tok', 60_000);
      await until(async () => (await frame.locator('body').getAttribute('data-view')) === 'documents', 'documents view');
      const tok = await loadTokenizer(path.join(FIXTURES, fx.tokenizer_file));
      const { first, second, ids } = reference(fx, c.file[c.file.length - 1].endsWith('.idx') ? file.replace(/\.idx$/, '.bin') : file);
      const [s, n] = first;
      // Where the text of document 0 is and which separator ends it, by the format's document rule
      // (docs/formats.md): index formats store the EOS inside the document; nanoGPT's reference
      // length leaves the appended EOT out; llm.c's document begins with its EOT.
      const rule = fx.documents !== null ? 'index' : fx.format === 'llm.c' ? 'before' : 'after';
      const [a, b, sep] = rule === 'after' ? [s, s + n, s + n] : rule === 'before' ? [s + 1, s + n, s + n] : [s, s + n - 1, s + n - 1];
      assert.strictEqual(ids[sep], fx.eos, `the reference's token ${sep} is the EOS that ends document 0`);
      const text = await documentText(w, frame, a, b, sep);
      assert.strictEqual(text, tok.decode(ids.slice(a, b)));
      if (fx.format === 'dolma') {
        const row = execFileSync(
          'python3',
          [
            '-c',
            'import csv,gzip,sys,json; print(json.dumps(list(csv.reader(gzip.open(sys.argv[1],"rt",newline="")))[1]))',
            file.replace(/\.npy$/, '.csv.gz'),
          ],
          { encoding: 'utf8' },
        );
        const [, , id, src, loc] = JSON.parse(row) as string[];
        const prov = frame.locator(`.viewport .blk.sep[data-s="${sep}"] .prov`);
        assert.strictEqual((await prov.textContent())?.trim(), `id ${id} · src ${src} · loc ${loc}`);
      }
      if (fx.format === 'llm.c') {
        // The EOT at the end of document 0 opens document 1 (documentRule.ts): its separator carries
        // document 1's number, its start at that EOT and its length counting it, as the reference's table says.
        const [s1, n1] = second!;
        assert.strictEqual(s1, sep);
        const label = frame.locator(`.viewport .blk.sep[data-s="${sep}"] .next`);
        const want = `document 1 · starts at global offset ${fmt(s1)} · ${count(n1 - 1, 'token')} + EOS`;
        await until(async () => (await label.textContent())?.trim() === want, `separator label "${want}"`);
      }
      if (fx.format === 'datatrove') {
        assert.ok(await frame.locator('[data-banner="loss"]').count(), 'the loss mask legend is shown');
      }
      await frame.locator(`.viewport .blk.sep[data-s="${sep}"]`).scrollIntoViewIfNeeded();
      await sleep(300);
      await w.screenshot(`formats-${c.fixture}`);
    });
  }

  it('megatron-multi (no EOD stored): document 1 gets a boundary marker labelled with the reference’s number, start and length', async () => {
    const w = wb!;
    const fx = meta().find((f) => f.name === 'megatron-multi')!;
    const dir = path.join(FIXTURES, fx.path);
    const idx = fs.readdirSync(dir).filter((f) => f.endsWith('.idx'))[0];
    await w.runCommand('Collapse Folders in Explorer');
    await w.openFileFromExplorer('dolma2', 'megatron-multi', idx);
    const frame = await w.waitForWebview('.viewport .tok', 60_000);
    const { first, second, ids } = reference(fx, path.join(dir, idx.replace(/\.idx$/, '.bin')));
    const [s1, n1] = second!;
    assert.strictEqual(s1, first[0] + first[1]);
    assert.notStrictEqual(ids[s1 - 1], fx.eos, 'document 0 ends without a stored EOS');
    const last = (
      JSON.parse(
        execFileSync(
          'python3',
          [
            path.join(REPO_ROOT, 'scripts', 'reference_formats.py'),
            dir,
            '--format',
            'megatron',
            '--ranges',
            JSON.stringify([[s1 + n1 - 1, 1]]),
          ],
          { encoding: 'utf8' },
        ),
      ) as { ranges: number[][] }
    ).ranges[0][0];
    const want = `document 1 · starts at global offset ${fmt(s1)} · ${last === fx.eos ? `${count(n1 - 1, 'token')} + EOS` : `${count(n1, 'token')}, no closing EOS`}`;
    const marker = frame.locator(`.viewport .bound[data-b="${s1}"]`);
    await frame.locator('.viewport').click({ position: { x: 5, y: 5 } });
    for (let i = 0; i < 200 && !(await marker.count()); i++) {
      await w.page.keyboard.press('PageDown');
      await sleep(120);
    }
    const label = marker.locator('.next');
    await until(async () => (await label.textContent())?.trim() === want, `boundary label "${want}"`);
    assert.strictEqual(await marker.getAttribute('role'), 'separator');
    // Between tokens: the marker holds no token, and the token after it is document 1's first.
    assert.strictEqual(await marker.locator('[data-o]').count(), 0);
    const next = frame.locator(`.viewport .tok[data-o="${s1}"]`);
    assert.ok(await next.count(), 'document 1’s first token is drawn');
    await marker.scrollIntoViewIfNeeded();
    await sleep(300);
    await w.screenshot('formats-megatron-boundary');
  });

  it('the manifest table of a Dolma file lists its files: tokens, dtype, documents', async () => {
    const w = wb!;
    const fx = meta().find((f) => f.name === 'dolma-uint32-file')!;
    const file = path.join(FIXTURES, fx.path);
    const ref = JSON.parse(
      execFileSync('python3', [path.join(REPO_ROOT, 'scripts', 'reference_formats.py'), file, '--format', fx.format, '--documents'], {
        encoding: 'utf8',
      }),
    ) as { files: { path: string; tokens: number }[]; documents: number };
    // The Dolma shard editor opened above is active again once its tab is clicked.
    await w.page
      .locator('.tabs-container .tab', { hasText: path.basename(file) })
      .last()
      .click();
    await w.runCommand('Token Shards: Open Shard Manifest Table');
    const frame = await w.waitForWebview('.mf-spacer > .mf-row', 60_000);
    const rows = await frame
      .locator('.mf-spacer > .mf-row:not([hidden])')
      .evaluateAll((els) => els.map((e) => [...e.querySelectorAll('.mf-cell')].map((c) => c.textContent ?? '')));
    assert.deepStrictEqual(
      rows.map((r) => [r[1], r[3], r[9], r[10]]),
      ref.files.map((f) => [path.basename(f.path), f.tokens.toLocaleString('en-US'), fx.dtype, String(ref.documents)]),
    );
    assert.strictEqual(ref.documents, fx.documents);
    // Nothing cut at this window size: no cell or column head wider than its box, and the last
    // column (documents) inside the window.
    const cut = await frame
      .locator('.mf-spacer > .mf-row:not([hidden]) .mf-cell:not(.mf-file), .mf-colheads .mf-cell')
      .evaluateAll((els) =>
        els
          .filter((e) => getComputedStyle(e).display !== 'none' && e.scrollWidth > e.clientWidth + 1)
          .map((e) => `"${e.textContent}" ${e.scrollWidth}>${e.clientWidth}`),
      );
    assert.deepStrictEqual(cut, [], 'manifest table cells');
    // Column heads: a one-word head (num_tokens, start_token) stays on one line; documents, the
    // last column, ends inside the window.
    const heads = await frame.locator('.mf-colheads .mf-cell').evaluateAll((els) =>
      els
        .filter((e) => getComputedStyle(e).display !== 'none')
        .map((e) => {
          const r = document.createRange();
          r.selectNodeContents(e);
          const lines = new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size;
          return { text: e.textContent ?? '', lines, right: e.getBoundingClientRect().right, window: document.documentElement.clientWidth };
        }),
    );
    assert.deepStrictEqual(
      heads.filter((x) => !/\s/.test(x.text.trim()) && x.lines > 1).map((x) => x.text),
      [],
      'one-word column heads broken inside the word',
    );
    const last = heads[heads.length - 1];
    assert.strictEqual(last.text, 'documents', heads.map((x) => x.text).join(' | '));
    assert.ok(last.right <= last.window + 1, `documents ends at ${last.right}, the window at ${last.window}`);
    await w.screenshot('formats-manifest-table-dolma');
  });
});
