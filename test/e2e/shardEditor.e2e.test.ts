/**
 * The shard editor end to end, as a person uses it (code-server + Chromium, the packaged .vsix):
 * open a shard from the Explorer; the first document's text in the webview equals the
 * tokenizer library's decode of its ids (ids from the dataset card's Python reader); switch
 * views; scroll to the end; hover a token and read its card; and a document holding `<script>`
 * and `<img onerror>` text (a tiny dataset built here with the real tokenizer) shows as text and
 * runs nothing. Screenshots of each view go to test-results/screenshots/.
 *
 * Run with `node scripts/test-e2e.mjs --grep "shard editor"`.
 */
import * as assert from 'assert';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { FrameLocator } from 'playwright-core';
import { launchWorkbench, reportIfFailed, SAMPLE_DIR, until, Workbench } from './harness';
import { loadTokenizer, LoadedTokenizer } from '../../src/core/tokenizer';
import { pyTokens } from '../unit/pyref';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface ManifestLine {
  shard: string;
  start_token: number;
  num_tokens: number;
}
function manifest(root: string): ManifestLine[] {
  return fs
    .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as ManifestLine)
    .sort((a, b) => a.start_token - b.start_token);
}

/** Text tokens rendered in the Documents view: [local offset, text]. */
function renderedText(frame: FrameLocator): Promise<[number, string][]> {
  return frame
    .locator('.viewport .tok.tx')
    .evaluateAll((els) => els.map((e) => [Number((e as HTMLElement).dataset.o), e.textContent ?? ''] as [number, string]));
}

/**
 * Reads the text of local tokens `[start, end)` from the Documents view, paging down until the
 * separator at `end` (the document's EOS) is drawn.
 */
async function collectDocument(w: Workbench, frame: FrameLocator, start: number, end: number): Promise<string> {
  const got = new Map<number, string>();
  for (let i = 0; i < 400; i++) {
    for (const [o, t] of await renderedText(frame)) if (o >= start && o < end) got.set(o, t);
    if (await frame.locator(`.viewport .blk.sep[data-s="${end}"]`).count()) break;
    await w.page.keyboard.press('PageDown');
    await sleep(150);
  }
  assert.ok(await frame.locator(`.viewport .blk.sep[data-s="${end}"]`).count(), `the separator at ${end} never appeared`);
  return [...got.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, t]) => t)
    .join('');
}

async function clickView(frame: FrameLocator, view: 'documents' | 'tokens' | 'ids'): Promise<void> {
  await frame.locator(`vscode-tab-header[data-view="${view}"]`).click();
  await until(async () => (await frame.locator('body').getAttribute('data-view')) === view, `view ${view}`);
  await sleep(500);
}

describe('e2e: shard editor', function () {
  this.timeout(600_000);
  let wb: Workbench | undefined;
  let tok: LoadedTokenizer;
  let eos: number;

  before(async () => {
    tok = await loadTokenizer(path.join(SAMPLE_DIR, 'tokenizer', 'tokenizer.json'));
    const prov = JSON.parse(fs.readFileSync(path.join(SAMPLE_DIR, 'manifest.json'), 'utf8')) as { eos_token_id?: number };
    eos = prov.eos_token_id ?? 100257;
  });

  afterEach(async function () {
    await reportIfFailed(this.currentTest, wb);
  });

  after(async () => {
    await wb?.close();
  });

  describe('sample dataset', () => {
    let frame: FrameLocator;
    const line = () => manifest(SAMPLE_DIR)[0];

    before(async () => {
      wb = await launchWorkbench({ viewport: { width: 1400, height: 900 } });
    });

    after(async () => {
      await wb?.close();
      wb = undefined;
    });

    it("opens a shard from the Explorer; the first document's text equals the decode of its ids", async () => {
      const w = wb!;
      // Every resource a webview loads goes through code-server's one webview service worker; one
      // still in flight when its webview closes blocks every new webview for 30 s. The shard
      // editor's page has everything inside it: it must ask for no resource at all.
      const requested: string[] = [];
      const onRequest = (r: { url(): string }) => {
        const url = r.url().replace(/\?.*$/, ''); // (the webview host page names the resource domain in its query)
        if (/vscode-cdn|vscode-resource/.test(url)) requested.push(url);
      };
      w.page.on('request', onRequest);
      await w.openFileFromExplorer('shards', path.basename(line().shard));
      frame = await w.waitForWebview('.viewport .tok', 60_000);
      await until(async () => (await frame.locator('body').getAttribute('data-view')) === 'documents', 'documents view');
      // The first document: tokens up to the first EOS (from the reader; the shard starts the stream).
      const head = pyTokens(SAMPLE_DIR, line().start_token, Math.min(line().num_tokens, 200_000));
      const firstEos = head.indexOf(eos);
      assert.ok(firstEos > 0, "the sample's first shard has an EOS in its first 200,000 tokens");
      await frame.locator('.viewport').click({ position: { x: 40, y: 10 } });
      const shown = await collectDocument(w, frame, 0, firstEos);
      assert.strictEqual(shown, await tok.libraryDecode(head.slice(0, firstEos)));
      // The separator names the next document (number 1, at the EOS + 1) once numbering is known.
      const sep = frame.locator(`.viewport .blk.sep[data-s="${firstEos}"] .next`);
      await until(async () => /document 1\b/.test(await sep.innerText()), 'separator with document 1');
      const label = await sep.innerText();
      assert.ok(label.includes(`global offset ${(firstEos + 1).toLocaleString('en-US')}`), label);
      const second = head.indexOf(eos, firstEos + 1);
      // The length counts the text tokens and says the closing EOS separately (`N tokens + EOS`).
      if (second > 0) assert.ok(label.includes(`${(second - firstEos - 1).toLocaleString('en-US')} tokens + EOS`), label);
      await w.page.keyboard.press('Home');
      await w.page.mouse.move(700, 880);
      await sleep(800);
      await w.screenshot('shard-editor-documents');
      // The toolbar's icons still have their font (inline, as a data: URL), and nothing was fetched.
      const codicons = await frame
        .locator('body')
        .evaluate(() =>
          document.fonts.ready.then(() => [...document.fonts].some((f) => /codicon/.test(f.family) && f.status === 'loaded')),
        );
      assert.ok(codicons, 'the codicon font is loaded in the shard editor');
      w.page.off('request', onRequest);
      assert.deepStrictEqual(requested, [], "resources the shard editor's page asked for");
    });

    it('Documents view: no line break the decode lacks around global offset 6,144; soft breaks are marked and copy exactly', async () => {
      const w = wb!;
      const head = pyTokens(SAMPLE_DIR, line().start_token, Math.min(line().num_tokens, 200_000));
      const at = 6_144;
      const docStart = head.lastIndexOf(eos, at - 1) + 1,
        docEnd = head.indexOf(eos, at);
      assert.ok(docEnd > at, 'a document spans offset 6,144');
      await frame.locator('.viewport').focus();
      await w.page.keyboard.press('Home');
      await sleep(500);
      // Every Documents block of the document: [start, soft-break class, wrap glyph element, text].
      const blocks = new Map<number, { soft: boolean; glyph: string; text: string }>();
      for (let i = 0; i < 600; i++) {
        const seen = await frame.locator('.viewport .blk.doc').evaluateAll((els) =>
          els.map((e) => {
            const wrap = e.querySelector(':scope > .wrap');
            const glyph = wrap ? getComputedStyle(wrap, '::before').content : '';
            return [Number((e as HTMLElement).dataset.s), e.classList.contains('soft'), glyph, e.textContent ?? ''] as [
              number,
              boolean,
              string,
              string,
            ];
          }),
        );
        for (const [s0, soft, glyph, text] of seen) if (s0 >= docStart && s0 < docEnd) blocks.set(s0, { soft, glyph, text });
        if (await frame.locator(`.viewport .blk.sep[data-s="${docEnd}"]`).count()) break;
        await w.page.keyboard.press('PageDown');
        await sleep(120);
      }
      const ordered = [...blocks.entries()].sort((a, b) => a[0] - b[0]);
      assert.strictEqual(ordered[0][0], docStart);
      // The rendered text (block texts; the soft-break glyph is not text) equals the library decode: no inserted newline.
      const rendered = ordered.map(([, b]) => b.text).join('');
      const ref = await tok.libraryDecode(head.slice(docStart, docEnd));
      assert.strictEqual(rendered, ref);
      // Visual lines: a block starts a new line only after a real newline; otherwise it is marked as a soft break.
      let softStart = -1;
      for (let i = 1; i < ordered.length; i++) {
        const realNewline = ordered[i - 1][1].text.endsWith('\n');
        const b = ordered[i][1];
        assert.strictEqual(b.soft, !realNewline, `block at ${ordered[i][0]} after ${JSON.stringify(ordered[i - 1][1].text.slice(-30))}`);
        if (b.soft) {
          assert.ok(b.glyph.includes('↪'), `soft-break glyph at ${ordered[i][0]}: ${b.glyph}`);
          softStart = ordered[i][0];
        }
      }
      // Copying across a soft break gives the exact decoded text (no newline).
      if (softStart > 0) {
        await w.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(w.page.url()).origin });
        const offs = (await renderedText(frame)).map(([o]) => o);
        const a = offs.filter((o) => o < softStart).at(-3),
          bTok = offs.filter((o) => o >= softStart)[3];
        if (a !== undefined && bTok !== undefined) {
          await frame.locator(`.viewport .tok.tx[data-o="${a}"]`).click();
          await frame.locator(`.viewport .tok.tx[data-o="${bTok}"]`).click({ modifiers: ['Shift'] });
          await w.page.keyboard.press('Control+C');
          const n = Number((await frame.locator(`.viewport .tok.tx[data-o="${bTok}"]`).getAttribute('data-n')) || 1);
          const want = await tok.libraryDecode(head.slice(a, bTok + n));
          await until(
            async () => (await w.page.evaluate(() => navigator.clipboard.readText())) === want,
            `clipboard = ${JSON.stringify(want)}`,
            10_000,
          );
          await frame.locator('.viewport').focus();
          await w.page.keyboard.press('Escape');
          // A picture of a soft break with the cursor's update highlighted (README).
          await w.runCommand('Token Shards: Highlight Current Update and Sequences');
          await until(async () => (await frame.locator('.viewport .tok.hl').count()) > 0, 'update highlighted');
          await until(async () => /Highlighted: update/.test(await frame.locator('.foot-hl').innerText()), 'highlight legend');
          await w.page.mouse.move(700, 880);
          await sleep(500);
          await w.screenshot('shard-editor-documents-softbreak');
          await w.runCommand('Token Shards: Highlight Current Update and Sequences');
          await until(async () => (await frame.locator('.viewport .tok.hl').count()) === 0, 'highlight off');
        }
      }
      await w.page.keyboard.press('Home');
      await sleep(300);
    });

    it("switches views: Tokens shows chips, IDs shows the reader's ids", async () => {
      const w = wb!;
      await clickView(frame, 'tokens');
      const chips = frame.locator('.viewport .tok.chip');
      await chips.first().waitFor({ state: 'visible' });
      assert.ok((await chips.count()) > 50);
      await w.page.mouse.move(700, 880);
      await sleep(300);
      await w.screenshot('shard-editor-tokens');
      await clickView(frame, 'ids');
      const cells = await until(async () => {
        const c = await frame
          .locator('.viewport .tok.idc')
          .evaluateAll((els) => els.slice(0, 64).map((e) => [Number((e as HTMLElement).dataset.o), Number(e.textContent)]));
        return c.length >= 64 ? c : undefined;
      }, 'id cells');
      const ref = pyTokens(SAMPLE_DIR, line().start_token + cells[0][0], 64);
      assert.deepStrictEqual(
        cells.map(([, id]) => id),
        ref,
      );
      await w.page.mouse.move(700, 880);
      await sleep(300);
      await w.screenshot('shard-editor-ids');
    });

    it('scrolls to the end of the shard', async () => {
      const w = wb!;
      const n = line().num_tokens;
      await frame.locator('.viewport').focus();
      await w.page.keyboard.press('End');
      const last = frame.locator(`.viewport .tok[data-o="${n - 1}"]`);
      await last.waitFor({ state: 'visible', timeout: 30_000 });
      assert.strictEqual(Number(await last.innerText()), pyTokens(SAMPLE_DIR, line().start_token + n - 1, 1)[0]);
      const box = await last.boundingBox();
      const vp = await frame.locator('.viewport').boundingBox();
      assert.ok(box && vp && box.y + box.height <= vp.y + vp.height + 1 && box.y >= vp.y, 'the last token is inside the viewport');
      await until(
        async () => (await frame.locator('.foot-pos').innerText()).includes(`shard offset ${(n - 1).toLocaleString('en-US')}`),
        'cursor at the last token',
      );
      await w.screenshot('shard-editor-end');
    });

    it('selecting tokens and copying gives their text; Copy Token IDs gives their ids', async () => {
      const w = wb!;
      await w.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(w.page.url()).origin });
      await clickView(frame, 'documents');
      await frame.locator('.viewport').focus();
      await w.page.keyboard.press('Home');
      await sleep(800);
      await frame.locator('.viewport .tok.tx[data-o="0"]').click();
      await frame.locator('.viewport .tok.tx[data-o="12"]').click({ modifiers: ['Shift'] });
      await until(async () => (await frame.locator('.viewport .tok.sel').count()) >= 12, 'selection painted');
      await w.page.keyboard.press('Control+C');
      const ids = pyTokens(SAMPLE_DIR, line().start_token, 13);
      const text = await tok.libraryDecode(ids);
      await until(
        async () => (await w.page.evaluate(() => navigator.clipboard.readText())) === text,
        `clipboard = ${JSON.stringify(text)}`,
        10_000,
      );
      await w.runCommand('Token Shards: Copy Token IDs of Selection');
      await until(
        async () => (await w.page.evaluate(() => navigator.clipboard.readText())) === `[${ids.join(', ')}]`,
        'clipboard = ids',
        10_000,
      );
      await frame.locator('.viewport').focus();
      await w.page.keyboard.press('Escape');
    });

    it('hovering a token shows its id, piece, bytes and position', async () => {
      const w = wb!;
      await clickView(frame, 'tokens');
      await w.page.keyboard.press('Home');
      await sleep(800);
      const chip = frame.locator('.viewport .tok.chip[data-o="5"]');
      await chip.hover();
      const tip = frame.locator('#tip');
      await tip.waitFor({ state: 'visible', timeout: 10_000 });
      const text = await tip.innerText();
      const id = pyTokens(SAMPLE_DIR, line().start_token + 5, 1)[0];
      const piece = tok.pieces([id])[0];
      assert.ok(text.includes(String(id)), text);
      assert.ok(text.includes(JSON.stringify(piece.text)), text);
      assert.ok(text.replace(/\s+/g, ' ').includes(piece.hex), text); // bytes wrap every 8 bytes
      assert.ok(/global offset\s+5\b/.test(text), text);
      assert.ok(/update\s+0 \(0-based\)/.test(text), text);
      assert.ok(/sequence\s+0\b/.test(text) && /position\s+5\b/.test(text), text);
      await w.screenshot('shard-editor-hover');
      await clickView(frame, 'documents');
    });

    it('the end of the shard names the next shard and opens it at its first token', async () => {
      const w = wb!;
      const lines = manifest(SAMPLE_DIR);
      const next = lines[1];
      const nextName = path.basename(next.shard);
      await frame.locator('.viewport').focus();
      await w.page.keyboard.press('End');
      const marker = frame.locator('.viewport .edge.end');
      await marker.waitFor({ state: 'visible', timeout: 30_000 });
      const text = await marker.innerText();
      assert.ok(text.includes(nextName), text);
      assert.ok(text.includes(next.start_token.toLocaleString('en-US')), text);
      const lastId = pyTokens(SAMPLE_DIR, line().start_token + line().num_tokens - 1, 1)[0];
      assert.ok(lastId === eos ? /next document starts in/.test(text) : /continues in/.test(text), text);
      await w.screenshot('shard-editor-end-marker');
      await marker.locator('vscode-button').click();
      await w.activeTab(nextName).waitFor({ state: 'visible', timeout: 30_000 });
      const f2 = await w.activeWebviewFrame();
      await until(
        async () =>
          (await f2.locator('.foot-pos').innerText()).includes(`Token ${next.start_token.toLocaleString('en-US')} (shard offset 0)`),
        "cursor at the next shard's first token",
      );
      const start = f2.locator('.viewport .edge.start');
      await start.waitFor({ state: 'visible', timeout: 30_000 });
      assert.ok((await start.innerText()).includes(path.basename(line().shard)), await start.innerText());
    });
  });

  describe('hostile text', () => {
    let dir: string;

    before(async () => {
      // A tiny dataset whose documents hold markup, tokenized with the real tokenizer.
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-xss-'));
      fs.mkdirSync(path.join(dir, 'shards'));
      fs.mkdirSync(path.join(dir, 'tokenizer'));
      fs.copyFileSync(path.join(SAMPLE_DIR, 'tokenizer', 'tokenizer.json'), path.join(dir, 'tokenizer', 'tokenizer.json'));
      const docs = [
        'Plain first document.',
        '<script>window.__pwned = 1; document.title = "pwned";</script> after the script tag',
        '<img src=x onerror="window.__pwned = 2; document.body.style.background = \'red\'"> and an image',
        '<b>bold?</b> &amp; <a href="javascript:window.__pwned=3">link</a>',
      ];
      const ids: number[] = [];
      for (const d of docs) ids.push(...(await tok.encode(d)), eos);
      const buf = Buffer.from(new Uint32Array(ids).buffer);
      fs.writeFileSync(path.join(dir, 'shards', 'tokens_000000.u32'), buf);
      fs.writeFileSync(
        path.join(dir, 'shard_manifest.jsonl'),
        JSON.stringify({
          shard: 'shards/tokens_000000.u32',
          start_token: 0,
          num_tokens: ids.length,
          sha256: crypto.createHash('sha256').update(buf).digest('hex'),
        }) + '\n',
      );
      fs.writeFileSync(
        path.join(dir, 'manifest.json'),
        JSON.stringify({ global_tokens_per_update: 8, sequence_length: 4, eos_token_id: eos }),
      );
      wb = await launchWorkbench({ folder: dir, viewport: { width: 1400, height: 900 } });
    });

    after(async () => {
      await wb?.close();
      wb = undefined;
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('shows <script> and <img onerror> as text and runs nothing', async () => {
      const w = wb!;
      await w.openFileFromExplorer('shards', 'tokens_000000.u32');
      const frame = await w.waitForWebview('.viewport .tok.tx', 60_000);
      const ids = pyTokens(dir, 0, manifest(dir)[0].num_tokens);
      // Every document's text, as drawn, equals the library's decode.
      const drawn = await renderedText(frame);
      let from = 0;
      for (let i = 0; i < ids.length; i++) {
        if (ids[i] !== eos) continue;
        const text = drawn
          .filter(([o]) => o >= from && o < i)
          .map(([, t]) => t)
          .join('');
        assert.strictEqual(text, await tok.libraryDecode(ids.slice(from, i)), `document ending at ${i}`);
        from = i + 1;
      }
      assert.ok(
        drawn
          .map(([, t]) => t)
          .join('')
          .includes('<script>'),
        'the markup is shown as text',
      );
      // Nothing ran and no element was made from the text.
      const body = frame.locator('body');
      assert.strictEqual(await body.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
      assert.strictEqual(await frame.locator('.viewport script, .viewport img, .viewport b, .viewport a').count(), 0);
      assert.notStrictEqual(await w.page.title(), 'pwned');
      for (const v of ['tokens', 'ids'] as const) {
        await clickView(frame, v);
        assert.strictEqual(await frame.locator('.viewport script, .viewport img, .viewport b, .viewport a').count(), 0);
      }
      assert.strictEqual(await body.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
      await clickView(frame, 'documents');
      await w.screenshot('shard-editor-hostile-text');
    });
  });
});
