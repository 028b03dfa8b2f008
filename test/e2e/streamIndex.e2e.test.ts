/**
 * The stream index in a real workbench, on the planted-anomaly dataset of
 * scripts/make-index-fixtures.mjs: a person runs "Index Stream" from the palette; the special
 * token planted inside a document shows as a Problem naming its global offset and as a banner in
 * the shard editor of its shard, whose button puts the cursor there; then the status bar and the
 * editor's cursor line give the same document number, which equals numpy's
 * (scripts/index_reference.py). The manifest table then marks every shard numpy finds an anomaly
 * in (tooltip: numpy's global offsets), and the update view marks the sequence holding the
 * planted token.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT, SAMPLE_DIR, Workbench, launchWorkbench, reportIfFailed } from './harness';

/** Runs Index Stream from the palette and waits for its summary toast. */
async function indexStream(w: Workbench): Promise<void> {
  await w.runCommand('Token Shards: Index Stream');
  await w.page
    .locator('.notifications-toasts')
    .filter({ hasText: /Stream indexed: .* documents/ })
    .first()
    .waitFor({ state: 'visible', timeout: 120_000 });
}

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
    await indexStream(w);
    // Problems: on the shard's manifest line, naming the offset.
    await w.page.keyboard.press('Control+Shift+M');
    await w.page
      .locator('.markers-panel')
      .filter({ hasText: `(id ${planted.id}) inside documents` })
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

  it('the manifest table marks every shard with anomalies (tooltip: their global offsets) and the update view marks the sequence holding the planted token', async () => {
    const w = wb!;
    // numpy's anomalies, per shard: EOS-free runs over the threshold, special ids, unknown ids.
    const py = JSON.parse(
      execFileSync('python3', [path.join(REPO_ROOT, 'scripts', 'index_reference.py'), root], { encoding: 'utf8', maxBuffer: 1 << 26 }),
    ) as {
      long_runs: { start: number; length: number }[];
      specials: Record<string, Record<string, { first: number[] }>>;
      unknown: Record<string, { first: number[] }>;
    };
    const shards = fs
      .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { start_token: number; num_tokens: number })
      .sort((a, b) => a.start_token - b.start_token);
    const segOf = (o: number) => shards.findIndex((e) => o >= e.start_token && o < e.start_token + e.num_tokens);
    const want = new Map<number, number[]>();
    const add = (seg: number, offsets: number[]) => want.set(seg, [...(want.get(seg) ?? []), ...offsets]);
    // A run over several shards marks each of them (as the shard editor's banners), naming its start.
    for (const r of py.long_runs) for (let s = segOf(r.start); s <= segOf(r.start + r.length - 1); s++) add(s, [r.start]);
    for (const [seg, per] of Object.entries(py.specials)) for (const o of Object.values(per)) add(Number(seg), o.first);
    for (const [seg, o] of Object.entries(py.unknown)) add(Number(seg), o.first.slice(0, 1));
    const fmt = (n: number) => n.toLocaleString('en-US');

    // Self-contained when run alone: (re)build the index (a no-op read when the first test built it).
    await w.waitForActivation(60_000);
    await w.runCommand('Notifications: Clear All Notifications');
    await indexStream(w);
    await w.runCommand('Token Shards: Open Shard Manifest Table');
    const table = await w.waitForWebview('.mf-grid', 60_000);
    const marked = table.locator('.mf-spacer > .mf-row:not([hidden])[data-anomaly]');
    await marked.nth(want.size - 1).waitFor({ state: 'attached', timeout: 30_000 });
    assert.strictEqual(await marked.count(), want.size, 'one marked row per shard with anomalies');
    const seen = new Set<number>();
    for (let i = 0; i < want.size; i++) {
      const row = marked.nth(i);
      const index = Number((await row.locator('.mf-cell').first().innerText()).trim());
      seen.add(index);
      const mark = row.locator('.mf-anomaly');
      assert.ok(await mark.isVisible(), `the mark of row ${index} is visible`);
      const tip = (await mark.getAttribute('title')) ?? '';
      for (const o of want.get(index) ?? [])
        assert.ok(tip.includes(fmt(o)), `row ${index}'s tooltip names global offset ${fmt(o)}: ${tip}`);
    }
    assert.deepStrictEqual(
      [...seen].sort((a, b) => a - b),
      [...want.keys()].sort((a, b) => a - b),
    );
    const special = marked.filter({ has: table.locator('.mf-cell:first-child', { hasText: new RegExp(`^${segOf(planted.offset)}$`) }) });
    await special.locator('.mf-anomaly').hover();
    await w.screenshot('stream-index-manifest-mark');

    // The update view of the update holding the planted token: its sequence has the mark.
    const m = JSON.parse(fs.readFileSync(path.join(root, 'manifest.json'), 'utf8')) as Record<string, number>;
    const G = m.global_tokens_per_update ?? 131072,
      L = m.sequence_length ?? 1024;
    const k = Math.floor(planted.offset / G);
    const r = Math.floor((planted.offset - k * G) / L);
    // Typed inside the retried step: the manifest table's webview may take the focus late and
    // close the input box (the harness then runs the command again).
    const input = await w.withInputBox('Token Shards: Go to Update…', 'Go to Update (0-based)', async (b) => {
      const i = b.locator('.quick-input-box input');
      await i.fill(String(k), { timeout: 5_000 });
      await b
        .locator('.quick-input-message')
        .filter({ hasText: `update ${fmt(k)} (0-based)` })
        .first()
        .waitFor({ state: 'visible', timeout: 15_000 });
      return i;
    });
    await input.press('Enter');
    const view = await w.waitForWebview(`.rows > .row[data-row="${r}"][data-anomaly="warning"]`, 60_000);
    const tip = (await view.locator(`.rows > .row[data-row="${r}"] .gutter .anomaly`).getAttribute('title')) ?? '';
    assert.ok(tip.includes(`token ${fmt(planted.offset)}`), `the sequence's mark names token ${fmt(planted.offset)}: ${tip}`);
    assert.ok(tip.includes(`(id ${planted.id})`) && tip.includes('special token <|'), tip);
    await view.locator(`.rows > .row[data-row="${r}"]`).scrollIntoViewIfNeeded();
    await w.screenshot('stream-index-update-mark');
  });
});
