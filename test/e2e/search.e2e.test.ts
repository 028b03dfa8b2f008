/**
 * End-to-end: a person opens the sample dataset, runs "Token Shards: Search Stream…" from the F1
 * palette, types two terms, presses Enter; the search panel draws the chart (one legend item and
 * one hidden-table column per term, one table row per bucket of the CLI's `count --json`); the
 * person moves the chart's cursor with the keyboard and presses Enter on a bucket; the list shows
 * that bucket's occurrences in context; clicking one opens the shard editor at that token (the
 * status bar names the same update, sequence and position) with the match highlighted.
 * Screenshots (test-results/screenshots/): search-input.png, search-panel.png,
 * search-occurrences.png, search-panel-editor.png (the editor area with a bucket's occurrences: the
 * README's), search-reveal.png.
 */
import * as assert from 'assert';
import * as path from 'path';
import { runCli } from '../unit/fixtures';
import { launchWorkbench, SAMPLE_DIR, Workbench, reportIfFailed } from './harness';

interface CountResult {
  terms: string[];
  per: number;
  buckets: { first_update: number; last_update: number; counts: number[] }[];
  totals: number[];
}

describe('e2e: Search Stream → search panel → occurrence → shard editor', function () {
  this.timeout(300_000);
  let wb: Workbench | undefined;
  let want: CountResult;

  before(async () => {
    const r = runCli(['count', SAMPLE_DIR, 'whale', 'Ahab', '--json']);
    assert.strictEqual(r.code, 0, r.stderr);
    want = JSON.parse(r.stdout) as CountResult;
    wb = await launchWorkbench();
  });

  afterEach(async function () {
    await reportIfFailed(this.currentTest, wb);
  });

  after(async () => {
    await wb?.close();
  });

  it('palette → Search Stream… → "whale, Ahab" → the chart draws both series', async () => {
    const w = wb!;
    // "Search Stream" + Enter runs Search Stream…: it is listed first, above the selection command.
    const listed = await w.paletteCommands('Token Shards: Search Stream');
    assert.strictEqual(listed[0], 'Token Shards: Search Stream…', listed.join(' | '));
    const box = await w.withInputBox('Token Shards: Search Stream…', 'Search Stream', async (b) => b);
    const input = box.locator('.quick-input-box input');
    await input.pressSequentially('whale, Ahab', { delay: 30 });
    await w.screenshot('search-input');
    await input.press('Enter');

    const frame = await w.waitForWebview('.chart-plot canvas', 60_000);
    await frame
      .locator('.status')
      .filter({ hasText: /^Done:/ })
      .waitFor({ state: 'visible', timeout: 120_000 });
    assert.deepStrictEqual(await frame.locator('.chart-legend-item .chart-legend-label').allTextContents(), ['whale', 'Ahab']);
    // The screen-reader table: one row per bucket, one column per term (plus the bucket column).
    assert.strictEqual(await frame.locator('.chart-table tbody tr').count(), want.buckets.length);
    assert.strictEqual(await frame.locator('.chart-table thead th').count(), 3);
    const totals = await frame.locator('.totals .total').allTextContents();
    assert.deepStrictEqual(
      totals,
      want.terms.map((t, k) => `${t}: ${want.totals[k].toLocaleString('en-US')}`),
    );
    // The canvas has been drawn on (not blank): some pixels differ from the first one.
    const painted = await frame
      .locator('.chart-plot canvas')
      .first()
      .evaluate((c: HTMLCanvasElement) => {
        const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        let differ = 0;
        for (let i = 4; i < d.length; i += 4) if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2] || d[i + 3] !== d[3]) differ++;
        return differ;
      });
    assert.ok(painted > 1000, `the chart canvas is drawn on (${painted} pixels differ)`);
    assert.deepStrictEqual(
      w.errors.filter((e) => /Content Security Policy|Refused to/i.test(e)),
      [],
      'no CSP violations',
    );
    const heap = await frame
      .locator('body')
      .evaluate(() => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize);
    if (heap)
      console.log(
        `      (measured: search panel JS heap ${(heap / 1e6).toFixed(1)} MB with ${want.buckets.length} buckets × ${want.terms.length} terms)`,
      );
    await w.runCommand('Notifications: Clear All Notifications');
    await w.runCommand('View: Close Primary Side Bar');
    await w.page.waitForTimeout(800);
    await w.screenshot('search-panel');
    // Raw counts: the y axis and the screen-reader caption say counts, not "per million tokens".
    const caption = () => frame.locator('.chart-table caption').textContent();
    assert.match((await caption()) ?? '', /per million tokens/);
    await frame.locator('vscode-checkbox', { hasText: 'Raw counts' }).click();
    await w.page.waitForTimeout(800);
    assert.match((await caption()) ?? '', /raw counts/);
    assert.doesNotMatch((await caption()) ?? '', /per million/);
    await w.screenshot('search-panel-raw-counts');
    await frame.locator('vscode-checkbox', { hasText: 'Raw counts' }).click();
  });

  it("keyboard: the chart cursor moves between buckets, Enter lists the bucket's occurrences", async () => {
    const w = wb!;
    const frame = await w.activeWebviewFrame();
    const b = want.buckets.findIndex((x) => x.counts[0] > 0 && x.counts[0] < 500);
    assert.ok(b >= 0, 'a bucket mentions "whale"');
    await frame.locator('.chart-plot').focus();
    await w.page.keyboard.press('Home');
    for (let i = 0; i < b; i++) await w.page.keyboard.press('ArrowRight');
    await w.page.keyboard.press('Enter');
    const bk = want.buckets[b];
    const name = bk.first_update === bk.last_update ? `update ${bk.first_update}` : `updates ${bk.first_update}–${bk.last_update}`;
    await frame
      .locator('.occ-head')
      .filter({ hasText: `in ${name}` })
      .waitFor({ state: 'visible', timeout: 30_000 });
    assert.match(await frame.locator('.occ-head').innerText(), new RegExp(`: ${bk.counts[0].toLocaleString('en-US')} occurrences?$`));
    await frame.locator('.occ-row .occ-where').first().waitFor({ state: 'visible', timeout: 60_000 });
    const marks = await frame.locator('.occ-row mark').allTextContents();
    assert.ok(marks.length > 0 && marks.every((m) => m === 'whale'), `every listed match reads "whale": ${marks.slice(0, 5).join(' | ')}`);
    await w.page.waitForTimeout(300);
    const shot = await w.screenshot('search-occurrences');
    // The README picture: the editor area with the chart, a bucket selected and its occurrences.
    await w.page.locator('.part.editor').screenshot({ path: path.join(path.dirname(shot), 'search-panel-editor.png') });
  });

  it('clicking an occurrence opens the shard editor at its token with the match highlighted', async () => {
    const w = wb!;
    const frame = await w.activeWebviewFrame();
    const row = frame.locator('.occ-row').first();
    const where = (await row.locator('.occ-where').innerText()).trim(); // "update k · seq s · pos p"
    assert.match(where, /^update \d[\d,]* · seq \d+ · pos \d+$/);
    await row.click();
    await w.page.locator('.statusbar-item').filter({ hasText: where }).first().waitFor({ state: 'visible', timeout: 60_000 });
    const editor = await w.activeWebviewFrame();
    await editor.locator('.viewport .tok.hl').first().waitFor({ state: 'attached', timeout: 30_000 });
    const hl = await editor.locator('.viewport .tok.hl').allTextContents();
    assert.ok(hl.join('').includes('whale'), `the highlighted tokens hold the match: ${JSON.stringify(hl)}`);
    await w.page.waitForTimeout(800);
    await w.screenshot('search-reveal');
  });
});
