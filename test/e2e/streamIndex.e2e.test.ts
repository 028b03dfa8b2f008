/**
 * The stream index in a real workbench, on the planted-anomaly dataset of
 * scripts/make-index-fixtures.mjs: a person runs "Index Stream" from the palette; the special
 * token planted inside a document shows as a Problem naming its global offset and as a banner in
 * the shard editor of its shard, whose button puts the cursor there; then the status bar and the
 * editor's cursor line give the same document number, which equals numpy's
 * (scripts/index_reference.py).
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT, SAMPLE_DIR, Workbench, launchWorkbench, reportIfFailed } from './harness';

describe('e2e: stream index', function () {
  this.timeout(300_000);
  let wb: Workbench | undefined;
  let tmp = '';
  let root = '';
  let planted: { id: number; offset: number };

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-e2e-index-'));
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'make-index-fixtures.mjs'), '--sample', SAMPLE_DIR, '--out', tmp], {
      stdio: 'ignore',
    });
    root = path.join(tmp, 'anomalies');
    planted = JSON.parse(fs.readFileSync(path.join(root, 'fixture.json'), 'utf8')).planted.special;
    wb = await launchWorkbench({ folder: root });
  });

  afterEach(async function () {
    await reportIfFailed(this.currentTest, wb);
  });

  after(async () => {
    await wb?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('Index Stream: the planted special token is a Problem and a banner with its offset; status bar and cursor line agree on the document', async () => {
    const w = wb!;
    await w.waitForActivation(60_000);
    const offsetText = planted.offset.toLocaleString('en-US');
    await w.runCommand('Token Shards: Index Stream');
    await w.page
      .locator('.notifications-toasts')
      .filter({ hasText: /Stream indexed: .* documents/ })
      .first()
      .waitFor({ state: 'visible', timeout: 120_000 });
    // Problems: on the shard's manifest line, naming the offset.
    await w.page.keyboard.press('Control+Shift+M');
    await w.page
      .locator('.markers-panel')
      .filter({ hasText: `special token id ${planted.id} inside documents` })
      .first()
      .waitFor({ state: 'visible', timeout: 30_000 });
    const problems = await w.page.locator('.markers-panel').first().innerText();
    assert.ok(problems.includes(offsetText), `the Problem names global offset ${offsetText}: ${problems.slice(0, 400)}`);
    // The shard editor of shards/tokens_000002.u32: a banner with a button to the place.
    await w.openFileFromExplorer('shards', 'tokens_000002.u32');
    const frame = await w.waitForWebview('[data-banner="index-special-in-document"]', 60_000);
    const banner = frame.locator('[data-banner="index-special-in-document"]');
    assert.ok((await banner.innerText()).includes(offsetText));
    await banner
      .locator('vscode-button')
      .filter({ hasText: `Go to ${offsetText}` })
      .click();
    // numpy's document number at that offset.
    const py = JSON.parse(
      execFileSync('python3', [path.join(REPO_ROOT, 'scripts', 'index_reference.py'), root, '--offsets', String(planted.offset)], {
        encoding: 'utf8',
      }),
    );
    const doc = (py.locate[0].document as number).toLocaleString('en-US');
    const footer = frame.locator('.footer');
    await footer.filter({ hasText: `Token ${offsetText} ` }).waitFor({ state: 'visible', timeout: 30_000 });
    await footer.filter({ hasText: `doc ${doc}` }).waitFor({ state: 'visible', timeout: 30_000 });
    await w.page
      .locator('.statusbar-item')
      .filter({ hasText: `Token ${offsetText} ` })
      .filter({ hasText: `doc ${doc}` })
      .first()
      .waitFor({ state: 'visible', timeout: 30_000 });
    const bar = await w.page
      .locator('.statusbar-item')
      .filter({ hasText: `Token ${offsetText} ` })
      .first()
      .innerText();
    const cursorLine = await footer.innerText();
    const docOf = (s: string) => /\bdoc ([\d,]+)/.exec(s)?.[1];
    assert.strictEqual(docOf(bar), docOf(cursorLine), `status bar "${bar}" vs cursor line "${cursorLine}"`);
    assert.strictEqual(docOf(bar), doc);
    await w.screenshot('stream-index-banner');
  });
});
