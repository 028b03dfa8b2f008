/**
 * End-to-end: a person opens the sample dataset, runs "Token Shards: Search Stream…" from the F1
 * palette, types two terms, presses Enter; the search panel draws the chart (one legend item and
 * one hidden-table column per term, one table row per bucket of the CLI's `count --json`); the
 * person moves the chart's cursor with the keyboard and presses Enter on a bucket; the list shows
 * that bucket's occurrences in context; clicking one opens the shard editor at that token (the
 * status bar names the same update, sequence and position) with the match highlighted.
 * Screenshots (test-results/screenshots/): search-input.png, search-panel.png,
 * search-occurrences.png, search-panel-editor.png (the editor area with a bucket's occurrences: the
 * README's), search-reveal.png. Then 20 names (the reference's most frequent capitalised words of
 * the sample) in the heatmap view: its rows in the order of the CLI's `count --share --json`
 * (by total, then by peak bucket), each row's peak share; a cell opened with the keyboard lists
 * that term and bucket; search-heatmap.png (the editor area).
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { repoRoot, runCli } from '../unit/fixtures';
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
    const input = await w.withInputBox('Token Shards: Search Stream…', 'Search Stream', async (b) => {
      const i = b.locator('.quick-input-box input');
      await i.fill('', { timeout: 5_000 });
      await i.pressSequentially('whale, Ahab', { delay: 30, timeout: 10_000 });
      return i;
    });
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

  it('20 names in the heatmap: rows by total and by peak, peak shares, a cell opened with the keyboard', async () => {
    const w = wb!;
    const names = JSON.parse(
      execFileSync('python3', [path.join(repoRoot(), 'scripts', 'reference_search.py'), SAMPLE_DIR, '--mode', 'names', '--top', '20'], {
        encoding: 'utf8',
      }),
    ) as string[];
    const r = runCli(['count', SAMPLE_DIR, ...names, '--share', '--json']);
    assert.strictEqual(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout) as Omit<CountResult, 'buckets'> & {
      buckets: (CountResult['buckets'][number] & { shares: (number | null)[] })[];
    };
    // The shard editor opened by the previous test is closed: the search panel is the only webview.
    await w.runCommand('View: Close Editor');
    const input = await w.withInputBox('Token Shards: Search Stream…', 'Search Stream', async (b) => {
      const i = b.locator('.quick-input-box input');
      await i.fill(names.join(', '), { timeout: 5_000 });
      return i;
    });
    await input.press('Enter');
    const frame = await w.waitForWebview('.search-form', 60_000);
    await frame
      .locator('.status')
      .filter({ hasText: /^Done:/ })
      .waitFor({ state: 'visible', timeout: 120_000 });
    await frame.locator('.heat-toggle').click();
    await frame.locator('.heatmap-canvas').waitFor({ state: 'visible', timeout: 10_000 });
    const idx = names.map((_, t) => t);
    const byTotal = [...idx].sort((a, b) => c.totals[b] - c.totals[a] || a - b);
    const peak = idx.map((t) => {
      let best = -1,
        bv = 0;
      c.buckets.forEach((b, i) => {
        if ((b.shares[t] ?? 0) > bv) [best, bv] = [i, b.shares[t]!];
      });
      return best;
    });
    const rowsOf = async () => frame.locator('.heatmap-table tr th:first-child').allTextContents();
    assert.deepStrictEqual(
      (await rowsOf()).slice(1),
      byTotal.map((t) => names[t]),
    );
    // Each row's peak value: the CLI's share in its peak bucket.
    const peaks = await frame.locator('.heatmap-table tr td:nth-child(4)').allTextContents();
    assert.deepStrictEqual(
      peaks,
      byTotal.map((t) => (peak[t] < 0 ? '–' : `${(c.buckets[peak[t]].shares[t]! * 100).toFixed(1)}% of all terms' occurrences`)),
    );
    await frame.locator('.peak-toggle').click();
    const nb = c.buckets.length;
    const byPeak = [...idx].sort(
      (a, b) => (peak[a] < 0 ? nb : peak[a]) - (peak[b] < 0 ? nb : peak[b]) || c.totals[b] - c.totals[a] || a - b,
    );
    await frame
      .locator('.heatmap-table tr:nth-of-type(2) th')
      .filter({ hasText: names[byPeak[0]] })
      .waitFor({ state: 'attached', timeout: 10_000 });
    assert.deepStrictEqual(
      (await rowsOf()).slice(1),
      byPeak.map((t) => names[t]),
    );
    // Keyboard: the second row, the bucket to the right, Enter → that term's occurrences in that bucket.
    await frame.locator('.heatmap-canvas').focus();
    await w.page.keyboard.press('ArrowDown');
    await w.page.keyboard.press('ArrowRight');
    await w.page.keyboard.press('Enter');
    const bk = c.buckets[1];
    const term = names[byPeak[1]];
    const name = bk.first_update === bk.last_update ? `update ${bk.first_update}` : `updates ${bk.first_update}–${bk.last_update}`;
    await frame
      .locator('.occ-head')
      .filter({ hasText: `in ${name}` })
      .waitFor({ state: 'visible', timeout: 30_000 });
    assert.strictEqual(await frame.locator('.occ-head .occ-term').innerText(), term);
    await frame.locator('.heatmap-canvas').focus();
    await w.page.waitForTimeout(800);
    const shot = await w.screenshot('search-heatmap-window');
    await w.page.locator('.part.editor').screenshot({ path: path.join(path.dirname(shot), 'search-heatmap.png') });
  });

  it('Terms from file…: a bad file is named in the panel with its line; a good one fills the terms', async () => {
    const w = wb!;
    const frame = await w.activeWebviewFrame();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-e2e-terms-'));
    const bad = path.join(dir, 'bad-names.txt');
    fs.writeFileSync(bad, `Lily\n${'x'.repeat(1001)}\n`);
    const good = path.join(dir, 'names.txt');
    fs.writeFileSync(good, '# two names\nLily\n\nAhab, the captain\n');
    const pick = async (file: string) => {
      await frame.locator('vscode-button', { hasText: 'Terms from file…' }).click();
      const input = w.page.locator('.quick-input-widget .quick-input-box input');
      await input.waitFor({ state: 'visible', timeout: 10_000 });
      await input.fill(file);
      // The simple file dialog may still be completing the typed path when Enter arrives (then
      // it keeps the dialog open): press Enter again until the dialog has taken the file.
      for (let i = 0; i < 3; i++) {
        await input.press('Enter');
        const closed = await input
          .waitFor({ state: 'hidden', timeout: 5_000 })
          .then(() => true)
          .catch(() => false);
        if (closed) return;
        if ((await input.inputValue()) !== file) await input.fill(file);
      }
      throw new Error(`the file dialog did not take ${file}`);
    };
    await pick(bad);
    await frame
      .locator('.banner.error')
      .filter({ hasText: 'bad-names.txt line 2: 1,001 bytes' })
      .waitFor({ state: 'visible', timeout: 20_000 });
    assert.ok(!(await frame.locator('.banner.error').innerText()).includes(dir), 'the panel never shows the folder');
    await pick(good);
    await frame.locator('.status').filter({ hasText: '2 terms from names.txt' }).waitFor({ state: 'visible', timeout: 20_000 });
    // The form holds the file's terms in the form's syntax (a literal comma escaped).
    assert.strictEqual(
      await frame.locator('vscode-textfield.terms').evaluate((el) => (el as HTMLElement & { value: string }).value),
      'Lily, Ahab\\, the captain',
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
