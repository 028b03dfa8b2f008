/**
 * End-to-end: the manifest table and "Verify Shard Hashes" as a person uses them, in the packaged
 * extension (code-server + Chromium, test/e2e/harness.ts).
 *
 * The workspace is a dataset made for this test in a temporary folder with the real layout's
 * row count: 2,098 shards. Their files are hard links (symlinks where the file system refuses) to
 * two real shards: the sample's first shard (1,000,000 bytes) for most rows and the full-size
 * bench shard (100,000,000 bytes, `make-sample --full-size`) for every 70th row, so a run hashes
 * about 5 GB (long enough to watch the progress notification) while using no disk. Every
 * sha256 in its manifest comes from `sha256sum`.
 *
 * Steps: the one-time offer to open the table → the table (screenshot; sha256 column, nested JSON
 * kept indented) → copy a sha256, collapse the header → Verify from the palette
 * → the progress notification "shard i of 2,098 · … GB done · … GB/s · … left" (screenshot) → the
 * summary "2,098 ok" → one shard is corrupted (its link broken, one byte flipped) → Verify →
 * "1 mismatched" with Show, the row says "hash mismatch", Problems lists it on its manifest line
 * (screenshots) → clicking the row opens the shard editor. Also scrolls the 2,098 rows end to end
 * and logs frame gaps (no time limit asserted).
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { FrameLocator } from 'playwright-core';
import { REPO_ROOT, SAMPLE_DIR, Workbench, launchWorkbench, reportIfFailed } from './harness';

const SHARDS = 2098;
const BIG_EVERY = 70;

function sha256sum(file: string): string {
  return execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0];
}

/** The full-size shard the big rows link to (made by make-sample --full-size when missing). */
function bigShard(): string {
  const f = path.join(REPO_ROOT, 'bench-data', 'shards', 'tokens_000000.u32');
  if (!fs.existsSync(f)) {
    process.stderr.write('making bench-data/ (two full-size 100 MB shards, git-ignored; kept for later runs and `npm run bench`)\n');
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'make-sample.mjs'), '--full-size'], {
      cwd: REPO_ROOT,
      stdio: 'inherit',
    });
  }
  return f;
}

function linkOrSymlink(src: string, dst: string): void {
  try {
    fs.linkSync(src, dst);
  } catch {
    fs.symlinkSync(src, dst);
  }
}

/** Builds the 2,098-shard dataset described in the file header; returns its root. */
function makeDataset(dir: string): { root: string; corruptable: number; smallSha: string } {
  const root = path.join(dir, 'lit-2098');
  fs.mkdirSync(path.join(root, 'shards'), { recursive: true });
  const small = path.join(SAMPLE_DIR, 'shards', 'tokens_000000.u32');
  const big = bigShard();
  const kinds = [
    { file: small, tokens: fs.statSync(small).size / 4, sha: sha256sum(small) },
    { file: big, tokens: fs.statSync(big).size / 4, sha: sha256sum(big) },
  ];
  const lines: string[] = [];
  let start = 0;
  for (let i = 0; i < SHARDS; i++) {
    const k = kinds[i % BIG_EVERY === BIG_EVERY - 1 ? 1 : 0];
    const name = `shards/tokens_${String(i).padStart(6, '0')}.u32`;
    linkOrSymlink(k.file, path.join(root, name));
    lines.push(JSON.stringify({ shard: name, start_token: start, num_tokens: k.tokens, sha256: k.sha }));
    start += k.tokens;
  }
  fs.writeFileSync(path.join(root, 'shard_manifest.jsonl'), lines.join('\n') + '\n');
  fs.writeFileSync(
    path.join(root, 'manifest.json'),
    JSON.stringify(
      {
        name: 'lit-2098 (e2e fixture)',
        description:
          "The real row count (2,098 shards) built from two real shards by hard links: the sample's first shard and, every 70th row, the full-size bench shard.",
        created_by: 'test/e2e/manifest.e2e.test.ts',
        global_tokens_per_update: 131072,
        sequence_length: 1024,
        eos_token_id: 100257,
        seed: 20260730,
        stored_tokens: start,
        sources: [
          { id: 'sample', file: 'sample/shards/tokens_000000.u32' },
          { id: 'bench', file: 'bench-data/shards/tokens_000000.u32' },
        ],
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(
    path.join(root, 'verification.json'),
    JSON.stringify(
      {
        method: 'sha256sum of the two source files, recorded for every row',
        all_shards_match: true,
        checked_by: 'test/e2e/manifest.e2e.test.ts',
      },
      null,
      2,
    ),
  );
  fs.symlinkSync(path.join(SAMPLE_DIR, 'tokenizer'), path.join(root, 'tokenizer'));
  return { root, corruptable: 7, smallSha: kinds[0].sha };
}

describe('e2e: manifest table and Verify Shard Hashes', function () {
  this.timeout(600_000);
  let wb: Workbench | undefined;
  let tmp: string;
  let root: string;
  let victim: number;
  let smallSha: string;
  let frame: FrameLocator;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-e2e-manifest-'));
    ({ root, corruptable: victim, smallSha } = makeDataset(tmp));
    wb = await launchWorkbench({ folder: root, settings: { 'tokenShards.verify.workers': 2 } });
  });

  afterEach(async function () {
    await reportIfFailed(this.currentTest, wb);
  });

  after(async () => {
    await wb?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  const toast = (re: RegExp) => wb!.page.locator('.notifications-toasts .notification-toast').filter({ hasText: re });
  const row = (index: number) =>
    frame
      .locator('.mf-spacer > .mf-row:not([hidden])')
      .filter({ has: frame.locator('.mf-cell:first-child', { hasText: new RegExp(`^${index}$`) }) });

  it('offers to open the table once, and opens it (2,098 rows, header from manifest.json and verification.json)', async () => {
    const w = wb!;
    await w.waitForActivation(60_000);
    const offer = toast(/is a token dataset \(2,098 shards\)/);
    await offer.waitFor({ state: 'visible', timeout: 30_000 });
    await offer.getByRole('button', { name: 'Open Manifest Table' }).waitFor({ state: 'visible' });
    await w.page.waitForTimeout(600); // let the toast finish sliding in
    await w.screenshot('manifest-offer');
    await offer.getByRole('button', { name: 'Open Manifest Table' }).click();
    frame = await w.waitForWebview('.mf-grid', 60_000);
    await frame.locator('.mf-spacer > .mf-row').first().waitFor({ state: 'visible', timeout: 30_000 });
    const stats = await frame.locator('.mf-stats').innerText();
    assert.match(stats, /shards\s+2,098/);
    const head = await frame.locator('.mf-head').innerText();
    assert.match(head, /manifest\.json/);
    assert.match(head, /verification\.json/);
    assert.match(head, /all_shards_match\s+true/);
    // Nested values: JSON.stringify(v, null, 2) as text, indentation kept (white-space: pre, monospace).
    const sources = frame.locator('pre.mf-json').filter({ hasText: '"bench"' });
    assert.strictEqual(
      await sources.innerText(),
      JSON.stringify(
        [
          { id: 'sample', file: 'sample/shards/tokens_000000.u32' },
          { id: 'bench', file: 'bench-data/shards/tokens_000000.u32' },
        ],
        null,
        2,
      ),
    );
    assert.strictEqual(await sources.evaluate((el) => getComputedStyle(el).whiteSpace), 'pre');
    await sources.scrollIntoViewIfNeeded();
    await w.screenshot('manifest-header-json');
    await frame.locator('.mf-head-body').evaluate((el: HTMLElement) => {
      el.scrollTop = 0;
      el.parentElement!.scrollTop = 0;
    });
    assert.match(await row(0).innerText(), /tokens_000000\.u32/);
    // The sha256 column, after status: the first 12 hex digits, the full digest (sha256sum's) in the tooltip.
    const heads = await frame.locator('.mf-colheads .mf-cell').allInnerTexts();
    assert.strictEqual(heads[heads.indexOf('status') + 1], 'sha256', heads.join(' | '));
    const hashCell = row(0).locator('.mf-cell.mf-hash');
    assert.strictEqual((await hashCell.innerText()).trim(), smallSha.slice(0, 12));
    assert.ok((await hashCell.getAttribute('title'))?.includes(smallSha), 'full sha256 in the tooltip');
    // The offer is gone once answered: nothing covers the table.
    assert.strictEqual(await toast(/token dataset/).count(), 0, 'the offer closed');
    await w.page.mouse.move(5, 500);
    await w.screenshot('manifest-table');
  });

  it('copies a full sha256 from its cell, and the header collapses (remembered) and scrolls inside a max height', async () => {
    const w = wb!;
    await w.page
      .context()
      .grantPermissions(['clipboard-read', 'clipboard-write'])
      .catch(() => undefined);
    await row(0).hover();
    await row(0).locator('.mf-copy').click();
    await w.page
      .locator('.statusbar')
      .filter({ hasText: /Copied the sha256 of shards\/tokens_000000\.u32/ })
      .waitFor({ state: 'visible', timeout: 10_000 });
    const clip = await w.page.evaluate(() => navigator.clipboard.readText()).catch(() => undefined);
    if (clip !== undefined) assert.strictEqual(clip, smallSha);
    else console.log('    (clipboard not readable in this browser; the status bar confirmed the copy)');
    assert.strictEqual(
      await w.page.locator('.tabs-container .tab.active').getAttribute('data-resource-name'),
      'shard_manifest.jsonl',
      'copying opened nothing',
    );

    const body = frame.locator('.mf-head-body');
    const geo = await body.evaluate((el) => ({
      max: parseFloat(getComputedStyle(el).maxHeight),
      h: el.clientHeight,
      overflowY: getComputedStyle(el).overflowY,
      win: window.innerHeight,
    }));
    assert.ok(geo.max <= geo.win * 0.3 && geo.h <= geo.max, `header body ${geo.h}px ≤ max ${geo.max}px of ${geo.win}px`);
    assert.strictEqual(geo.overflowY, 'auto');
    const toggle = frame.locator('.mf-head-toggle');
    assert.strictEqual(await toggle.getAttribute('aria-expanded'), 'true');
    const gridBefore = await frame.locator('.mf-grid').evaluate((el) => el.clientHeight);
    await toggle.click();
    await body.waitFor({ state: 'hidden', timeout: 5_000 });
    assert.strictEqual(await toggle.getAttribute('aria-expanded'), 'false');
    const gridAfter = await frame.locator('.mf-grid').evaluate((el) => el.clientHeight);
    assert.ok(gridAfter > gridBefore, `the table grew: ${gridBefore} → ${gridAfter} px`);
    await w.screenshot('manifest-table-collapsed');
    // Left collapsed: the keyboard test below comes back to this tab (its webview rebuilt from setState) and checks it.
  });

  it('scrolls 2,098 rows with only the visible ones in the DOM', async () => {
    const grid = frame.locator('.mf-scroll');
    const stats = await grid.evaluate(async (el: HTMLElement) => {
      const gaps: number[] = [];
      let last = performance.now();
      const step = Math.max(200, Math.floor(el.scrollHeight / 120));
      while (el.scrollTop + el.clientHeight < el.scrollHeight - 1) {
        el.scrollTop += step;
        await new Promise((r) => requestAnimationFrame(() => r(undefined)));
        const now = performance.now();
        gaps.push(now - last);
        last = now;
      }
      await new Promise((r) => setTimeout(r, 100));
      gaps.sort((a, b) => a - b);
      return {
        frames: gaps.length,
        median: gaps[Math.floor(gaps.length / 2)],
        p95: gaps[Math.floor(gaps.length * 0.95)],
        max: gaps[gaps.length - 1],
        domRows: el.querySelectorAll('.mf-row:not([hidden])').length,
      };
    });
    console.log(
      `    scroll 2,098 rows: ${stats.frames} frames, frame gap median ${stats.median.toFixed(1)} ms, p95 ${stats.p95.toFixed(1)} ms, max ${stats.max.toFixed(1)} ms; ${stats.domRows} rows in the DOM`,
    );
    assert.ok(stats.domRows < 150, `virtualised: ${stats.domRows} row elements`);
    await row(SHARDS - 1).waitFor({ state: 'visible', timeout: 10_000 });
    await grid.evaluate((el: HTMLElement) => {
      el.scrollTop = 0;
    });
    await row(0).waitFor({ state: 'visible', timeout: 10_000 });
  });

  it('Verify from the palette: progress in a notification, then "2,098 ok"', async () => {
    const w = wb!;
    await w.runCommand('Token Shards: Verify Shard Hashes');
    const progress = toast(/shard [\d,]+ of 2,098 · \d+(\.\d+)? [MG]B done/);
    const done = toast(/Shard hashes: 2,098 ok/);
    // The summary is an information toast, which the workbench removes 15 s after it shows
    // (NotificationsToasts.PURGE_TIMEOUT, code-server 4.100). On a fast machine the run ends while
    // the optional waits below still run, so the summary is watched for from the start, and each
    // optional wait gives up as soon as it shows. Whether a progress toast was still up is read the
    // moment the summary shows.
    const summaryShown = done
      .waitFor({ state: 'visible', timeout: 300_000 })
      .then(async () => ({ progressToasts: await toast(/[MG]B done/).count() }));
    summaryShown.catch(() => undefined); // awaited below; this only keeps an early failure from being unhandled
    const unlessDone = (p: Promise<unknown>) => Promise.race([p.catch(() => undefined), summaryShown.catch(() => undefined)]);
    await progress.waitFor({ state: 'visible', timeout: 30_000 });
    // Wait until the rate and time left are known, then take the picture.
    await unlessDone(toast(/[kMG]B\/s · .* left/).waitFor({ state: 'visible', timeout: 8_000 }));
    // The table's toolbar receives the same progress line a moment after the notification.
    await unlessDone(
      frame.locator('.mf-progress', { hasText: /Verifying: shard [\d,]+ of 2,098/ }).waitFor({ state: 'visible', timeout: 5_000 }),
    );
    const table = await frame
      .locator('.mf-progress')
      .innerText()
      .catch(() => '');
    await w.screenshot('verify-progress');
    const text = await progress
      .first()
      .innerText()
      .catch(() => '');
    console.log(`    progress notification: ${text.replace(/\s+/g, ' ').trim()}`);
    console.log(`    table toolbar: ${table.replace(/\s+/g, ' ').trim()}`);
    // The shards are hard links of two files, read from the page cache, so on a quiet machine the run
    // can end before the toolbar is read; when it is still running, its line has the notification's form.
    if (/Verifying: \S/.test(table)) {
      assert.match(table, /Verifying: shard [\d,]+ of 2,098 · \d+(\.\d+)? [MG]B done/);
      assert.doesNotMatch(table, /0\.00 GB/);
    } else console.log('    (the run ended before the table toolbar was read)');
    const { progressToasts } = await summaryShown;
    assert.strictEqual(progressToasts, 0, 'the progress notification closed before the summary showed');
    assert.match(await frame.locator('.mf-counts').innerText(), /2,098 ok/);
    await w.screenshot('verify-done');
  });

  it('a corrupted shard: "1 mismatched — Show", "hash mismatch" in the table, and in Problems on its line', async () => {
    const w = wb!;
    const file = path.join(root, 'shards', `tokens_${String(victim).padStart(6, '0')}.u32`);
    const bytes = fs.readFileSync(file);
    fs.rmSync(file); // break the hard link before damaging the copy
    bytes[12_345] ^= 0x20;
    fs.writeFileSync(file, bytes);
    const actual = sha256sum(file);
    // Dismiss the earlier toasts so the new summary is the one we see.
    await w.page.keyboard.press('Escape');
    await frame.locator('vscode-button', { hasText: /^\s*Verify\s*$/ }).click();
    const summary = toast(/Shard hashes: 1 mismatched/);
    await summary.waitFor({ state: 'visible', timeout: 120_000 });
    // A short run (one shard re-hashed, the rest from the cache): no "… done" progress lingers beside the summary.
    assert.strictEqual(await toast(/[MG]B done/).count(), 0, 'the progress notification closed before the summary showed');
    assert.ok(await summary.getByRole('button', { name: 'Show' }).isVisible(), 'the summary offers Show');
    const r = row(victim);
    await r.waitFor({ state: 'visible', timeout: 10_000 });
    await frame.locator('.mf-row[data-status="mismatch"]').first().waitFor({ state: 'visible', timeout: 10_000 });
    assert.match(await r.innerText(), /hash mismatch/);
    await w.screenshot('verify-mismatch');

    await w.page.keyboard.press('Control+Shift+M');
    const markers = w.page.locator('.markers-panel');
    await markers.waitFor({ state: 'visible', timeout: 15_000 });
    const item = markers
      .locator('.monaco-list-row')
      .filter({ hasText: /sha256 mismatch/ })
      .first();
    await item.waitFor({ state: 'visible', timeout: 15_000 });
    const itemText = await item.innerText();
    assert.ok(itemText.includes(`tokens_${String(victim).padStart(6, '0')}.u32 (shard_manifest.jsonl line ${victim + 1})`), itemText);
    assert.ok(itemText.includes(actual.slice(0, 16)), `Problems names the digest sha256sum computes (${actual})`);
    await w.screenshot('verify-problems');

    await summary.getByRole('button', { name: 'Show' }).click();
    await w.page
      .locator('.output-view, .panel .monaco-editor')
      .filter({ hasText: /sha256\s+mismatch/ })
      .first()
      .waitFor({ state: 'visible', timeout: 15_000 });
    await w.screenshot('verify-log');
  });

  it('the keyboard (↓, Enter) and a click open shards in the shard editor', async () => {
    const w = wb!;
    await w.page.keyboard.press('Control+J'); // hide the panel again
    const grid = frame.locator('.mf-grid');
    await grid.focus();
    // Each key is handled by the webview asynchronously: wait for its effect before the next
    // one, so Home cannot land after an arrow (that read row-4 under load).
    const activeRow = async (want: string) => {
      const deadline = Date.now() + 10_000;
      while ((await grid.getAttribute('aria-activedescendant')) !== want && Date.now() < deadline) await w.page.waitForTimeout(50);
      return grid.getAttribute('aria-activedescendant');
    };
    await grid.press('Home');
    await activeRow('row-0');
    for (let i = 1; i <= 5; i++) {
      await grid.press('ArrowDown');
      await activeRow(`row-${i}`);
    }
    assert.strictEqual(await grid.getAttribute('aria-activedescendant'), 'row-5');
    await grid.press('Enter');
    await w.activeTab('tokens_000005.u32').waitFor({ state: 'visible', timeout: 30_000 });
    await w.page.locator('.tabs-container .tab[data-resource-name="shard_manifest.jsonl"]').click();
    frame = await w.waitForWebview('.mf-grid', 30_000);
    // The header stayed collapsed (setState) although the table's webview was hidden and rebuilt.
    await frame.locator('.mf-head-toggle[aria-expanded="false"]').waitFor({ state: 'visible', timeout: 10_000 });
    assert.ok(await frame.locator('.mf-head-body').isHidden(), 'the header is still collapsed');
    await row(3).dblclick();
    await w.activeTab('tokens_000003.u32').waitFor({ state: 'visible', timeout: 30_000 });
    const input = await w.page.locator('.tabs-container .tab.active').getAttribute('data-resource-name');
    assert.strictEqual(input, 'tokens_000003.u32');
  });

  it("the shard editor's title-bar action verifies that one shard", async () => {
    const w = wb!;
    await w.waitForWebview('body', 30_000); // the shard editor is up (its title-bar actions depend on it)
    const action = w.page.locator('.editor-group-container.active .editor-actions [aria-label*="Verify This Shard"]').first();
    await action.waitFor({ state: 'visible', timeout: 15_000 });
    await action.click();
    const done = toast(/tokens_000003\.u32: sha256 matches the manifest/);
    await done.waitFor({ state: 'visible', timeout: 60_000 });
    await w.page.waitForTimeout(400);
    await w.screenshot('verify-this-shard');
  });
});
