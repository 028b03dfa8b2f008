/**
 * End-to-end, the loss-spike workbench, as a person would use it on the sample:
 * - palette → Inspect Updates Around… → "9 ± 5" → a table of 11 updates whose EOS column equals
 *   numpy over the card's x (scripts/reference_stats.py); clicking a row opens that update's view;
 * - palette → Open Training Log… → the metrics fixture (scripts/make-metrics-fixture.mjs, a W&B
 *   CSV with a planted spike at logged step S) typed into the file dialog → the chart renders, the
 *   axis states the step convention, the spike is listed at update S − 1; clicking it opens the
 *   inspect panel around update S − 1.
 * Screenshots: inspect-updates.png, training-log.png (test-results/screenshots/; the README's).
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT, SAMPLE_DIR, Workbench, launchWorkbench, reportIfFailed } from './harness';

interface Expected {
  spikeStep: number;
}

describe('e2e: loss-spike workbench', function () {
  this.timeout(300_000);
  let wb: Workbench | undefined;
  const fixtures = path.join(REPO_ROOT, 'test-results', 'e2e-metrics');
  let exp: Expected;

  before(async () => {
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'make-metrics-fixture.mjs'), '--out', fixtures], { stdio: 'ignore' });
    exp = JSON.parse(fs.readFileSync(path.join(fixtures, 'expected.json'), 'utf8'));
    wb = await launchWorkbench();
    await wb.waitForActivation();
  });
  afterEach(async function () {
    await reportIfFailed(this.currentTest, wb);
  });
  after(async () => {
    await wb?.close();
  });

  it('Inspect Updates Around… renders one row per update with numpy-equal statistics; a row click opens the update', async () => {
    const w = wb!;
    const input = await w.withInputBox('Token Shards: Inspect Updates Around…', 'Inspect Updates Around', async (b) => {
      const i = b.locator('.quick-input-box input');
      await i.fill('9 ± 5', { timeout: 5_000 });
      await b.locator('.quick-input-message').filter({ hasText: 'updates 4–14' }).waitFor({ state: 'visible', timeout: 15_000 });
      return i;
    });
    await input.press('Enter');
    const frame = await w.waitForWebview('body[data-done="true"] .wb-table tbody tr', 90_000);
    const rows = frame.locator('.wb-table tbody tr');
    assert.strictEqual(await rows.count(), 11);
    const ref = JSON.parse(
      execFileSync('python3', [path.join(REPO_ROOT, 'scripts', 'reference_stats.py'), SAMPLE_DIR, '4', '14'], { encoding: 'utf8' }),
    ) as { update: number; eos: number }[];
    const headers = await frame.locator('.wb-table thead th').evaluateAll((ths) => ths.map((t) => t.getAttribute('data-key')));
    const eosCol = headers.indexOf('eos');
    for (const r of ref) {
      const cell = frame.locator(`.wb-table tbody tr[data-update="${r.update}"] > *`).nth(eosCol);
      assert.strictEqual((await cell.innerText()).trim().replace(/,/g, ''), String(r.eos), `EOS of update ${r.update}`);
    }
    await w.screenshot('inspect-updates');
    await frame.locator('.wb-table tbody tr[data-update="7"]').click();
    const view = await w.waitForWebview('.rows > .row[data-row="0"] .text', 60_000);
    await view.locator('.rows > .row[data-row="127"]').waitFor({ state: 'attached', timeout: 60_000 });
    await w.page.locator('.tab.active').filter({ hasText: 'Update 7 ·' }).waitFor({ state: 'visible', timeout: 30_000 });
  });

  it('Open Training Log… draws loss against updates, lists the planted spike, and a spike click inspects its updates', async () => {
    const w = wb!;
    await w.runCommand('Token Shards: Open Training Log…');
    // code-server's own file dialog: a quick input holding a path.
    const box = w.page.locator('.quick-input-widget');
    await box.waitFor({ state: 'visible', timeout: 30_000 });
    const input = box.locator('.quick-input-box input');
    const target = path.join(fixtures, 'wandb.csv');
    // The simple file dialog first fills the box with its starting folder and may overwrite what was
    // typed before that: wait for its own value, then type until the box holds exactly our path.
    await w.page.waitForFunction(
      () => ((document.querySelector('.quick-input-widget .quick-input-box input') as HTMLInputElement | null)?.value ?? '') !== '',
      undefined,
      { timeout: 30_000 },
    );
    for (let attempt = 0; attempt < 10; attempt++) {
      await input.fill(target);
      await w.page.waitForTimeout(250);
      if ((await input.inputValue()) === target) break;
    }
    assert.strictEqual(await input.inputValue(), target);
    const ok = box.locator('.monaco-button').filter({ hasText: /^OK$/ });
    if (await ok.count()) await ok.first().click();
    else await input.press('Enter');
    const frame = await w.waitForWebview('body[data-ready="true"] .wb-spikes li', 90_000);
    await frame.locator('.chart-plot canvas').first().waitFor({ state: 'visible', timeout: 30_000 });
    assert.match(await frame.locator('.wb-axis-note').innerText(), /logged step s = loss of update s − 1/);
    const spike = frame.locator('.wb-spike.spike');
    assert.strictEqual(await spike.count(), 1);
    assert.strictEqual(await spike.getAttribute('data-update'), String(exp.spikeStep - 1));
    assert.match(await frame.locator('.wb-spike.non-finite').first().innerText(), /NaN/);
    assert.match(await frame.locator('.wb-summary').innerText(), /restart/);
    // One statistic on the second axis (EOS per update, numpy-checked in the unit tests).
    await frame.locator('select.wb-select').selectOption('eos');
    await frame.locator('.chart-legend-item').nth(1).waitFor({ state: 'visible', timeout: 60_000 });
    assert.match(await frame.locator('.chart-legend').innerText(), /EOS/);
    await w.screenshot('training-log');
    await spike.click();
    const inspect = await w.waitForWebview('body[data-done="true"] .wb-table tbody tr.center', 90_000);
    assert.strictEqual(await inspect.locator('.wb-table tbody tr.center').getAttribute('data-update'), String(exp.spikeStep - 1));
    assert.match(await inspect.locator('.wb-title').innerText(), new RegExp(`around update ${exp.spikeStep - 1}\\b`));
  });
});
