/**
 * End-to-end: a person opens the sample dataset, runs "Token Shards: Go to Update…" from the F1
 * palette, types an update that spans two shards (the input box says so while typing), presses
 * Enter, and the update view shows 128 rows; the first row's text equals the dataset card
 * reader's `x[0]` decoded with the tokenizer library. Clicking a token opens its shard editor.
 * Screenshots (test-results/screenshots/): update-view-input.png, update-view.png,
 * update-view-editor.png (the editor area only: the README's), update-view-shard-edge.png,
 * update-view-click-reveal.png.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { loadTokenizer } from '../../src/core/tokenizer';
import { pyTokens, pyUpdates } from '../unit/pyref';
import { launchWorkbench, SAMPLE_DIR, Workbench, reportIfFailed } from './harness';

interface ManifestLine {
  shard: string;
  start_token: number;
  num_tokens: number;
}

/** Focuses inside the update view (its tab, then its heading), as a person reading it would before a command that reads the view. */
async function focusUpdateView(w: Workbench): Promise<void> {
  await w.page
    .locator('.tabs-container .tab')
    .filter({ hasText: /^Update / })
    .first()
    .click();
  await (await w.activeWebviewFrame()).locator('h1').click();
  await w.page.waitForTimeout(300);
}

describe('e2e: Go to Update → update view', function () {
  this.timeout(300_000);
  let wb: Workbench | undefined;
  let G = 131072,
    L = 1024;
  let k = 0;

  before(async () => {
    const m = JSON.parse(fs.readFileSync(path.join(SAMPLE_DIR, 'manifest.json'), 'utf8')) as Record<string, number>;
    G = m.global_tokens_per_update ?? G;
    L = m.sequence_length ?? L;
    const shards = fs
      .readFileSync(path.join(SAMPLE_DIR, 'shard_manifest.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as ManifestLine)
      .sort((a, b) => a.start_token - b.start_token);
    // The first update whose inputs cross a shard edge.
    k = Math.floor(shards[1].start_token / G);
    assert.ok(G * k < shards[1].start_token && shards[1].start_token < G * (k + 1));
    wb = await launchWorkbench();
  });

  afterEach(async function () {
    await reportIfFailed(this.currentTest, wb);
  });

  after(async () => {
    await wb?.close();
  });

  it('palette → Go to Update… → k spanning two shards → 128 rows, first row = reader x[0] decoded', async () => {
    const w = wb!;
    const { input, message } = await w.withInputBox('Token Shards: Go to Update…', 'Go to Update (0-based)', async (b) => {
      const i = b.locator('.quick-input-box input');
      const m = b.locator('.quick-input-message');
      await i.fill('', { timeout: 5_000 });
      await i.pressSequentially(String(k), { delay: 40, timeout: 10_000 });
      await m.filter({ hasText: 'spans 2 shards' }).waitFor({ state: 'visible', timeout: 15_000 });
      return { input: i, message: m };
    });
    assert.match(await message.innerText(), new RegExp(`update ${k} \\(0-based\\) · tokens \\[`));
    await w.screenshot('update-view-input');
    await input.press('Enter');

    const frame = await w.waitForWebview('.rows > .row[data-row="0"] .text', 60_000);
    await frame.locator('.rows > .row[data-row="127"]').waitFor({ state: 'attached', timeout: 60_000 });
    assert.strictEqual(await frame.locator('.rows > .row').count(), G / L);
    assert.match(await frame.locator('h1').innerText(), new RegExp(`^Update ${k} \\(0-based; the `));

    const ref = pyUpdates(SAMPLE_DIR, [k], G, L).get(k)!;
    const tok = await loadTokenizer(path.join(SAMPLE_DIR, 'tokenizer', 'tokenizer.json'));
    const expected = await tok.libraryDecode(ref.x[0]);
    assert.strictEqual(await frame.locator('.rows > .row[data-row="0"] .text').textContent(), expected);
    // the shard change is marked inside the row that crosses the edge
    assert.strictEqual(await frame.locator('.rows > .row.has-shard-change').count(), 1);
    // The README picture: no side bar, no notifications.
    await w.runCommand('Notifications: Clear All Notifications');
    await w.runCommand('View: Close Primary Side Bar');
    await w.page.waitForTimeout(800); // let fonts and the first screen settle for the picture
    await w.screenshot('update-view');
    await w.page
      .locator('.part.editor')
      .screenshot({ path: path.join(path.dirname(await w.screenshot('update-view')), 'update-view-editor.png') });
    const edgeRow = frame.locator('.rows > .row.has-shard-change');
    await edgeRow.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    assert.ok(await edgeRow.locator('.mark.shard').first().isVisible(), 'the shard change mark is visible in compact mode');
    await w.page.waitForTimeout(300);
    await w.screenshot('update-view-shard-edge');
  });

  it('clicking a token opens its shard editor beside the view', async () => {
    const w = wb!;
    const frame = await w.activeWebviewFrame();
    // Click the 40th character of row 2's first segment, as a person clicks a word.
    const seg = frame.locator('.rows > .row[data-row="2"] .seg').first();
    await seg.evaluate((el) => el.closest('.row')!.scrollIntoView({ block: 'center' }));
    const at = await seg.evaluate((el) => {
      const text = el.firstChild as Text;
      const r = document.createRange();
      r.setStart(text, 40);
      r.setEnd(text, 41);
      const c = r.getBoundingClientRect(),
        b = el.getBoundingClientRect();
      return { x: c.left - b.left + c.width / 2, y: c.top - b.top + c.height / 2 };
    });
    await seg.click({ position: at });
    await w.page
      .locator('.tabs-container .tab[data-resource-name="tokens_000000.u32"]')
      .first()
      .waitFor({ state: 'visible', timeout: 60_000 });
    // The token under character 40 of row 2 (its first segment starts at column 0), by the library's decode.
    const x2 = pyUpdates(SAMPLE_DIR, [k], G, L).get(k)!.x[2];
    const tok = await loadTokenizer(path.join(SAMPLE_DIR, 'tokenizer', 'tokenizer.json'));
    let col = 0;
    while ((await tok.libraryDecode(x2.slice(0, col + 1))).length <= 40) col++;
    const where = `update ${k} · seq 2 · pos ${col}`; // src/editor/statusBar.ts statusText
    await w.page.locator('.statusbar-item').filter({ hasText: where }).first().waitFor({ state: 'visible', timeout: 60_000 });
    await w.page.waitForTimeout(1_000);
    await w.screenshot('update-view-click-reveal');
    // The update view is still open in its own group.
    assert.ok(
      (await w.page
        .locator('.tabs-container .tab')
        .filter({ hasText: /^Update / })
        .count()) >= 1,
    );
  });

  it("is keyboard reachable: a row, ↓, Enter opens that sequence's start in the shard editor", async () => {
    const w = wb!;
    await w.page
      .locator('.tabs-container .tab')
      .filter({ hasText: /^Update / })
      .first()
      .click();
    const frame = await w.activeWebviewFrame();
    await frame.locator('.rows > .row[data-row="5"] .gutter').click();
    await w.page.keyboard.press('ArrowDown');
    assert.strictEqual(await frame.locator('.rows > .row:focus').getAttribute('data-row'), '6');
    await w.page.keyboard.press('Enter');
    await w.page
      .locator('.statusbar-item')
      .filter({ hasText: `update ${k} · seq 6 · pos 0` })
      .first()
      .waitFor({ state: 'visible', timeout: 60_000 });
  });

  it('Next and Previous step through updates in the same view', async () => {
    const w = wb!;
    await w.page
      .locator('.tabs-container .tab')
      .filter({ hasText: /^Update / })
      .first()
      .click();
    const frame = await w.activeWebviewFrame();
    await frame.locator('vscode-button').filter({ hasText: 'Next' }).click();
    await frame
      .locator('h1')
      .filter({ hasText: `Update ${k + 1} (0-based;` })
      .waitFor({ state: 'visible', timeout: 60_000 });
    await frame.locator('.rows > .row[data-row="127"]').waitFor({ state: 'attached', timeout: 60_000 });
    assert.strictEqual(await frame.locator('.rows > .row').count(), G / L);
    const ref = pyUpdates(SAMPLE_DIR, [k + 1], G, L).get(k + 1)!;
    const tok = await loadTokenizer(path.join(SAMPLE_DIR, 'tokenizer', 'tokenizer.json'));
    assert.strictEqual(await frame.locator('.rows > .row[data-row="127"] .text').textContent(), await tok.libraryDecode(ref.x[127]));
    await frame.locator('vscode-button').filter({ hasText: 'Previous' }).click();
    await frame
      .locator('h1')
      .filter({ hasText: `Update ${k} (0-based;` })
      .waitFor({ state: 'visible', timeout: 60_000 });
    assert.strictEqual(
      await w.page
        .locator('.tabs-container .tab')
        .filter({ hasText: /^Update / })
        .count(),
      1,
    );
  });

  it('full rows by default: every EOS inside a row is visible; compact rows elide text but keep every EOS', async () => {
    const w = wb!;
    const frame = await w.activeWebviewFrame();
    assert.strictEqual(await frame.locator('.rows.compact').count(), 0, 'full rows are the default');
    const ref = pyUpdates(SAMPLE_DIR, [k], G, L).get(k)!;
    const m = JSON.parse(fs.readFileSync(path.join(SAMPLE_DIR, 'manifest.json'), 'utf8')) as Record<string, number>;
    const eos = m.eos_token_id ?? 100257;
    const visibleEos = () =>
      frame
        .locator('.rows > .row')
        .evaluateAll((rows) =>
          rows.map(
            (r) => [...r.querySelectorAll<HTMLElement>('.eos')].filter((e) => e.checkVisibility() && e.getClientRects().length > 0).length,
          ),
        );
    const expected = ref.x.map((row) => row.filter((t) => t === eos).length);
    assert.deepStrictEqual(await visibleEos(), expected);
    await frame.locator('vscode-checkbox').filter({ hasText: 'Compact rows' }).click();
    await frame.locator('.rows.compact').waitFor({ state: 'attached' });
    await frame.locator('h1').click(); // no row focused: every row compact
    assert.deepStrictEqual(await visibleEos(), expected, 'compact rows show every EOS');
    assert.ok(await frame.locator('.rows > .row .elide-mark').first().isVisible(), 'compact rows elide long texts');
    await w.screenshot('update-view-compact');
    await frame.locator('vscode-checkbox').filter({ hasText: 'Compact rows' }).click();
    await frame.locator('.rows.compact').waitFor({ state: 'detached' });
  });

  it("next-token chips draw whitespace like the shard editor (· ↵ ⇥), from the reader's y", async () => {
    const w = wb!;
    const frame = await w.activeWebviewFrame();
    const ref = pyUpdates(SAMPLE_DIR, [k], G, L).get(k)!;
    const tok = await loadTokenizer(path.join(SAMPLE_DIR, 'tokenizer', 'tokenizer.json'));
    const chips = await frame.locator('.rows > .row .next .tok').allTextContents();
    assert.strictEqual(chips.length, G / L);
    let spaces = 0;
    for (let r = 0; r < chips.length; r++) {
      const t = await tok.libraryDecode([ref.y[r][L - 1]]);
      if (t.includes(' ')) spaces++;
      const shown = t.replace(/ /g, '·').replace(/\r\n/g, '␍↵').replace(/\n/g, '↵').replace(/\r/g, '␍').replace(/\t/g, '⇥') || '∅';
      assert.strictEqual(chips[r], shown, `row ${r}`);
      assert.ok(!chips[r].includes('␣'));
    }
    assert.ok(spaces > 0, 'some next token holds a space');
  });

  it('Go to Update k after scrolling down lands at the top (row 0, header visible)', async () => {
    const w = wb!;
    await w.page
      .locator('.tabs-container .tab')
      .filter({ hasText: /^Update / })
      .first()
      .click();
    let frame = await w.activeWebviewFrame();
    await frame.locator('.rows > .row[data-row="100"]').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    assert.ok((await frame.locator('body').evaluate(() => window.scrollY)) > 1000);
    const input = await w.withInputBox('Token Shards: Go to Update…', 'Go to Update (0-based)', async (b) => {
      const i = b.locator('.quick-input-box input');
      await i.fill('1', { timeout: 5_000 });
      await b.locator('.quick-input-message').filter({ hasText: 'update 1 (0-based)' }).waitFor({ state: 'visible', timeout: 15_000 });
      return i;
    });
    await input.press('Enter');
    frame = await w.activeWebviewFrame();
    await frame.locator('h1').filter({ hasText: 'Update 1 (0-based;' }).waitFor({ state: 'visible', timeout: 60_000 });
    await frame.locator('.rows > .row[data-row="127"]').waitFor({ state: 'attached', timeout: 60_000 });
    await w.page.waitForTimeout(300);
    assert.strictEqual(await frame.locator('body').evaluate(() => window.scrollY), 0);
    assert.ok(await frame.locator('h1').isVisible());
    assert.ok(await frame.locator('.rows > .row[data-row="0"]').isVisible());
    await w.runCommand('Notifications: Clear All Notifications');
    await w.page.waitForTimeout(500);
    await w.page
      .locator('.part.editor')
      .screenshot({ path: path.join(path.dirname(await w.screenshot('update-view-k1-top')), 'update-view-k1-editor.png') });
  });

  it('Go to Sequence opens pre-filled with the update shown (valid, no error) and takes "#N"', async () => {
    const w = wb!;
    const S = G / L;
    const input = await w.withInputBox(
      'Token Shards: Go to Sequence…',
      'Go to Sequence',
      async (b) => {
        const i = b.locator('.quick-input-box input');
        const message = b.locator('.quick-input-message');
        assert.strictEqual(await i.inputValue(), '1 0');
        await message.filter({ hasText: 'update 1 (0-based), sequence 0 · tokens [' }).waitFor({ state: 'visible', timeout: 15_000 });
        await w.screenshot('go-to-sequence-prefill');
        await i.fill(`#${S + 5}`, { timeout: 5_000 });
        await message.filter({ hasText: `#${S + 5} = update 1 (0-based), sequence 5` }).waitFor({ state: 'visible', timeout: 15_000 });
        await i.fill('1:7', { timeout: 5_000 });
        await message.filter({ hasText: 'update 1 (0-based), sequence 7' }).waitFor({ state: 'visible', timeout: 15_000 });
        return i;
      },
      () => focusUpdateView(w),
    );
    await input.press('Escape');
  });

  it("Go to Document checks the range live (count from the reader's EOS tokens) and reveals the document", async () => {
    const w = wb!;
    const m = JSON.parse(fs.readFileSync(path.join(SAMPLE_DIR, 'manifest.json'), 'utf8')) as Record<string, number>;
    const eos = m.eos_token_id ?? 100257;
    const stored = fs
      .readFileSync(path.join(SAMPLE_DIR, 'shard_manifest.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .reduce((n, l) => n + (JSON.parse(l) as ManifestLine).num_tokens, 0);
    const ids = pyTokens(SAMPLE_DIR, 0, stored);
    const count = ids.filter((t) => t === eos).length + (ids[ids.length - 1] === eos ? 0 : 1);
    const c = count.toLocaleString('en-US');
    const input = await w.withInputBox(
      'Token Shards: Go to Document…',
      'Go to Document (0-based)',
      async (b) => {
        const i = b.locator('.quick-input-box input');
        const message = b.locator('.quick-input-message');
        await i.fill('', { timeout: 5_000 });
        await i.pressSequentially(String(count), { delay: 40, timeout: 10_000 });
        await message
          .filter({ hasText: `Document ${c} is out of range: the stream has ${c} documents` })
          .waitFor({ state: 'visible', timeout: 30_000 });
        await w.screenshot('go-to-document-out-of-range');
        await i.fill(String(count - 1), { timeout: 5_000 });
        await message.filter({ hasText: `of ${c} documents` }).waitFor({ state: 'visible', timeout: 15_000 });
        await i.fill('21', { timeout: 5_000 });
        await message.filter({ hasText: `document 21 (0-based` }).waitFor({ state: 'visible', timeout: 15_000 });
        return i;
      },
      () => focusUpdateView(w),
    );
    await input.press('Enter');
    let start = 0;
    for (let i = 0, n = 0; i < ids.length; i++)
      if (ids[i] === eos && ++n === 21) {
        start = i + 1;
        break;
      }
    await w.page
      .locator('.statusbar-item')
      .filter({ hasText: `Token ${start.toLocaleString('en-US')} ` })
      .first()
      .waitFor({ state: 'visible', timeout: 60_000 });
    await w.page.waitForTimeout(800);
    await w.screenshot('go-to-document-reveal');
  });
});

describe('e2e: update view numbers documents on request when counting is not cheap', function () {
  this.timeout(300_000);
  let wb: Workbench | undefined;

  before(async () => {
    // A scan budget of 1,024 tokens makes every shard before the last update "too many to count".
    wb = await launchWorkbench({ settings: { 'tokenShards.documentScanLimit': 1024 } });
  });

  afterEach(async function () {
    await reportIfFailed(this.currentTest, wb);
  });

  after(async () => {
    await wb?.close();
  });

  it('the last update offers "Number documents"; clicking it numbers them as the reader\'s EOS count says', async () => {
    const w = wb!;
    const m = JSON.parse(fs.readFileSync(path.join(SAMPLE_DIR, 'manifest.json'), 'utf8')) as Record<string, number>;
    const G = m.global_tokens_per_update ?? 131072,
      eos = m.eos_token_id ?? 100257;
    const shards = fs
      .readFileSync(path.join(SAMPLE_DIR, 'shard_manifest.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as ManifestLine)
      .sort((a, b) => a.start_token - b.start_token);
    const stored = shards.reduce((s, e) => s + e.num_tokens, 0);
    const last = Math.floor((stored - 1) / G) - 1;
    const input = await w.withInputBox('Token Shards: Go to Update…', 'Go to Update (0-based)', async (b) => {
      const i = b.locator('.quick-input-box input');
      await i.fill(String(last), { timeout: 5_000 });
      await b
        .locator('.quick-input-message')
        .filter({ hasText: `update ${last} (0-based)` })
        .waitFor({ state: 'visible', timeout: 15_000 });
      return i;
    });
    await input.press('Enter');
    const frame = await w.waitForWebview('.rows > .row[data-row="0"] .text', 60_000);
    const button = frame.locator('.docs-line vscode-button');
    await button.waitFor({ state: 'visible', timeout: 60_000 });
    const before = shards.filter((e) => e.start_token < G * last).length - 1;
    assert.match(await frame.locator('.docs-line').innerText(), new RegExp(`the ${before} shards before this update`));
    await w.runCommand('Notifications: Clear All Notifications');
    await w.screenshot('update-view-number-documents');
    await button.click();
    const ids = pyTokens(SAMPLE_DIR, 0, G * last);
    const first = ids.filter((t) => t === eos).length;
    await frame
      .locator('.docs-line')
      .filter({ hasText: `Documents ${first.toLocaleString('en-US')}..` })
      .waitFor({ state: 'visible', timeout: 120_000 });
    assert.strictEqual(await frame.locator('.rows > .row[data-row="0"] .gutter .docs').innerText(), `doc ${first.toLocaleString('en-US')}`);
  });
});
