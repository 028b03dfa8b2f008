/**
 * Smoke test of the packaged extension in a real workbench: a person opens the sample dataset,
 * clicks shards → tokens_000000.u32 in the Explorer, and the shard editor's webview appears.
 * Run with `node scripts/test-e2e.mjs` (packages the .vsix when stale).
 */
import * as assert from 'assert';
import * as fs from 'fs';
import { launchWorkbench, Workbench } from './harness';

describe('e2e: smoke', function () {
  this.timeout(300_000);
  let wb: Workbench | undefined;
  let failed = false;

  before(async () => {
    wb = await launchWorkbench();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && wb) {
      failed = true;
      const shot = await wb.screenshot(`FAILED-${this.currentTest.fullTitle()}`).catch(() => undefined);
      if (shot) console.error(`    screenshot: ${shot}`);
      console.error(wb.diagnostics());
    }
  });

  after(async () => {
    if (failed && wb) console.error(`    logs kept in ${wb.codeServer.userDataDir}`);
    await wb?.close({ keepData: failed });
  });

  it('opens a shard from the Explorer in the shard editor', async () => {
    const w = wb!;
    await w.openFileFromExplorer('shards', 'tokens_000000.u32');
    await w.waitForActivation(60_000);
    // The custom editor's webview: a text editor would show `.monaco-editor` in the editor part instead.
    const frame = await w.waitForWebview('body', 60_000);
    await w.page.waitForTimeout(1_000); // let the first window of tokens render
    const text = await frame.locator('body').innerText();
    assert.ok(text.trim().length > 0, 'the shard editor webview is empty');
    await w.screenshot('smoke-shard-editor');
  });

  it('a palette closed by a late focus change is opened again (runCommand tries again)', async () => {
    const w = wb!;
    const widget = w.page.locator('.quick-input-widget');
    // A stand-in for a webview that takes the focus late: the first palette shown is closed at once.
    const stolen = widget.waitFor({ state: 'visible', timeout: 30_000 }).then(() => w.page.keyboard.press('Escape'));
    await w.runCommand('Token Shards: Open Shard Manifest Table');
    await stolen;
    await w.activeTab('shard_manifest.jsonl').waitFor({ state: 'visible', timeout: 30_000 });
  });

  it('keeps its IPC sockets in a folder of its own and leaves nothing behind when closed', async () => {
    const w = wb!;
    const dir = w.codeServer.runtimeDir;
    const sockets = fs.readdirSync(dir).filter((f) => /^vscode-ipc-.*\.sock$/.test(f));
    assert.ok(sockets.length > 0, `no vscode-ipc-*.sock in ${dir}: ${fs.readdirSync(dir).join(', ')}`);
    await w.close();
    assert.strictEqual(fs.existsSync(dir), false, `${dir} is left behind`);
  });
});
