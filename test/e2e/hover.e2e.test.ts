/**
 * End-to-end: a person opens a JSON file of token ids in the workbench, hovers an id, and reads
 * the decoded list in the hover widget (`.monaco-hover`); then hovers `update k` in a training
 * log. The workspace is a temporary folder holding the sample dataset's metadata and tokenizer
 * (shards hard-linked, or copied across file systems: a symlink leading out of the dataset folder is
 * refused by design), `ids.json` with real ids read from the sample's shards, and
 * `train.log`. Expected text is computed here with the core tokenizer. Screenshots go to
 * test-results/screenshots/ (hover-json-list.png, hover-update.png are the README's).
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Locator } from 'playwright-core';
import { openDataset } from '../../src/core/dataset';
import { fmt } from '../../src/core/units';
import { LoadedTokenizer, loadTokenizer } from '../../src/core/tokenizer';
import { launchWorkbench, SAMPLE_DIR, Workbench } from './harness';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A workspace with the sample's metadata + tokenizer, its shards hard-linked (or copied), and the files to hover. */
function makeWorkspace(ids: number[], update: number, lone: { eos: number; partial: number; text: number }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-hover-e2e-'));
  const data = path.join(dir, 'data');
  fs.mkdirSync(path.join(data, 'tokenizer'), { recursive: true });
  for (const f of ['shard_manifest.jsonl', 'manifest.json']) fs.copyFileSync(path.join(SAMPLE_DIR, f), path.join(data, f));
  fs.copyFileSync(path.join(SAMPLE_DIR, 'tokenizer', 'tokenizer.json'), path.join(data, 'tokenizer', 'tokenizer.json'));
  // Shards inside the dataset folder: a symlink to the sample's folder would lead outside the root,
  // which the manifest check refuses (paths leading out of the dataset folder).
  fs.mkdirSync(path.join(data, 'shards'));
  for (const f of fs.readdirSync(path.join(SAMPLE_DIR, 'shards'))) {
    const src = path.join(SAMPLE_DIR, 'shards', f);
    const dst = path.join(data, 'shards', f);
    try {
      fs.linkSync(src, dst);
    } catch {
      fs.copyFileSync(src, dst);
    }
  }
  fs.writeFileSync(path.join(dir, 'ids.json'), JSON.stringify({ prompt: 'sample', input_ids: ids }, null, 2) + '\n');
  fs.writeFileSync(path.join(dir, 'notes.md'), `EOS is ${lone.eos}; the emoji starts with ${lone.partial}; and ${lone.text} is plain.\n`);
  fs.writeFileSync(
    path.join(dir, 'train.log'),
    [
      `2025-01-01 12:00:00,001 INFO update ${update} loss=2.4817 lr=3.0e-04`,
      `2025-01-01 12:00:09,412 INFO step=${update + 1} loss=2.4790 lr=3.0e-04`,
      '',
    ].join('\n'),
  );
  return dir;
}

/**
 * Screen point of the middle of `text` in the first editor line that contains it (the text may
 * span several token spans: the range is built across text nodes).
 */
async function pointOf(wb: Workbench, lineText: Locator, text: string): Promise<{ x: number; y: number }> {
  let last: unknown;
  // Retried until the point lies on the line itself: right after opening, the editor may still be laid out.
  for (let attempt = 0; attempt < 100; attempt++) {
    await lineText.first().waitFor({ state: 'visible', timeout: 30_000 });
    const handle = await lineText.first().elementHandle();
    last = await wb.page.evaluate(
      ({ el, needle }) => {
        const nodes: Text[] = [];
        const walker = document.createTreeWalker(el!, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n as Text);
        const all = nodes.map((n) => (n.textContent ?? '').replace(/\u00a0/g, ' ')).join('');
        const at = all.indexOf(needle);
        if (at < 0) return undefined;
        const locate = (offset: number): [Text, number] => {
          let o = offset;
          for (const n of nodes) {
            const len = (n.textContent ?? '').length;
            if (o <= len) return [n, o];
            o -= len;
          }
          return [nodes[nodes.length - 1], (nodes[nodes.length - 1].textContent ?? '').length];
        };
        const r = document.createRange();
        r.setStart(...locate(at));
        r.setEnd(...locate(at + needle.length));
        const b = r.getBoundingClientRect();
        const p = { x: b.left + b.width / 2, y: b.top + b.height / 2 };
        const under = document.elementFromPoint(p.x, p.y);
        return { ...p, onLine: !!under && el!.contains(under) && b.width > 0 };
      },
      { el: handle, needle: text },
    );
    const box = last as { x: number; y: number; onLine: boolean } | undefined;
    if (box?.onLine) return { x: box.x, y: box.y };
    // Something covers it (an open hover): close it.
    await wb.page.mouse.move(5, 5);
    await wb.page.keyboard.press('Escape');
    await sleep(200);
  }
  throw new Error(`${text} is not on screen (last: ${JSON.stringify(last)})`);
}

/** The extension's own log (its LogOutputChannel's file in the extension host's log folder), '' until it exists. */
function extensionLog(wb: Workbench): string {
  const host = wb.codeServer.userDataDir;
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/Token Shard Inspector\.log$/.test(e.name)) found.push(p);
    }
  };
  try {
    walk(path.join(host, 'logs'));
  } catch {
    /* not yet */
  }
  return found.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
}

/** Waits (polling the log file) until the extension's log matches `re`. */
async function waitForLog(wb: Workbench, re: RegExp, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!re.test(extensionLog(wb))) {
    if (Date.now() > deadline) throw new Error(`the extension log never matched ${re}:\n${extensionLog(wb)}`);
    await sleep(250);
  }
}

/**
 * Hovers a point until the hover widget shows our content: the first hover may say
 * "Loading tokenizer…" (a hover never waits on a file read): then the extension's log is
 * awaited (`loadedLog`) before asking again by moving away and back. Waits are generous: these
 * machines are small and shared, and the extension host can be slow to answer.
 */
async function hoverUntil(wb: Workbench, at: { x: number; y: number }, ready: RegExp, loadedLog = /loaded tokenizer/): Promise<Locator> {
  let last = '';
  for (let attempt = 0; attempt < 12; attempt++) {
    // Away to the window's corner (never onto the hover itself, which keeps it open), then back.
    await wb.page.mouse.move(5, 5);
    await wb.page.keyboard.press('Escape');
    await sleep(150);
    await wb.page.mouse.move(at.x, at.y, { steps: 4 });
    // Several `.monaco-hover` elements can be visible (explorer tooltips, empty containers):
    // wait for the one with our text, or with the loading notice.
    const hovers = wb.page.locator('.monaco-hover:visible');
    const ours = hovers.filter({ hasText: ready }).first();
    const loading = hovers.filter({ hasText: /Loading tokenizer/ }).first();
    await Promise.race([ours.waitFor({ timeout: 30_000 }), loading.waitFor({ timeout: 30_000 })]).catch(() => undefined);
    if (await ours.isVisible()) return ours;
    last = (await hovers.allInnerTexts()).join(' | ');
    if (process.env.TSI_DEBUG_HOVER) {
      const under = await wb.page.evaluate(({ x, y }) => {
        const e = document.elementFromPoint(x, y);
        return e ? `${e.tagName}.${e.className} ${JSON.stringify((e.textContent ?? '').slice(0, 30))}` : 'none';
      }, at);
      console.log(
        `    attempt ${attempt}: under the mouse ${under}; hovers: ${JSON.stringify(last)}; log: ${JSON.stringify(extensionLog(wb).slice(-300))}`,
      );
    }
    if (await loading.isVisible()) await waitForLog(wb, loadedLog);
    await sleep(300);
  }
  throw new Error(`the hover never matched ${ready}; last: ${last}`);
}

describe('e2e: token-id hover', function () {
  this.timeout(900_000);
  let wb: Workbench | undefined;
  let tok: LoadedTokenizer;
  let ids: number[];
  let workspace: string;
  let update: number;
  let updateFacts: { start: number; end: number; shard: string };
  let lone: { eos: number; partial: number; text: number };

  before(async () => {
    const ds = await openDataset(SAMPLE_DIR);
    tok = await loadTokenizer(ds.tokenizerFile!);
    // A real sentence of the stream: 24 ids after the first EOS whose text has no newline.
    const head = Array.from(await ds.stream.read(0, 200_000));
    let from = head.indexOf(ds.settings.eosTokenId) + 1;
    while (tok.decode(head.slice(from, from + 24)).includes('\n')) from += 24;
    ids = head.slice(from, from + 24);
    update = ds.schedule.numUpdates - 3;
    const [start, end] = ds.schedule.updateRange(update);
    updateFacts = { start, end, shard: ds.shards[ds.stream.locate(start).segment].shard };
    await ds.stream.close();
    const emoji = await tok.encode('party 🎉');
    lone = {
      eos: ds.settings.eosTokenId,
      partial: emoji.find((id) => tok.pieces([id])[0].kind === 'partial')!,
      text: ids.find((id) => String(id).length >= 4 && tok.pieces([id])[0].text.startsWith(' '))!,
    };
    workspace = makeWorkspace(ids, update, lone);
    wb = await launchWorkbench({ folder: workspace, viewport: { width: 1400, height: 900 } });
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && wb) {
      const shot = await wb.screenshot(`FAILED-${this.currentTest.fullTitle()}`).catch(() => undefined);
      if (shot) console.error(`    screenshot: ${shot}`);
      console.error(wb.diagnostics());
      console.error(`----- extension log -----\n${extensionLog(wb)}`);
    }
  });

  after(async () => {
    await wb?.close();
    if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
  });

  it('hovering an id in a JSON file shows the token and the decoded list', async () => {
    const w = wb!;
    await w.openFileFromExplorer('ids.json');
    const k = ids.findIndex((x, i) => i >= 3 && ids.indexOf(x) === i && ids.lastIndexOf(x) === i);
    const target = ids[k];
    const line = w.page.locator('.monaco-editor .view-line').filter({ hasText: new RegExp(`^\\s*${target},?\\s*$`) });
    const at = await pointOf(w, line, String(target));
    const widget = await hoverUntil(w, at, /Decoded list/);
    const text = (await widget.innerText()).replace(/\u00a0/g, ' ');
    const decoded = tok.decode(ids);
    assert.strictEqual(decoded, await tok.libraryDecode(ids));
    assert.ok(text.includes(decoded), `hover text:\n${text}\nexpected to contain:\n${decoded}`);
    assert.ok(text.includes(`Token ${target}`), text);
    assert.ok(text.includes(`${ids.length} tokens`), text);
    assert.ok(text.includes(`index ${k} in a list of ${ids.length}`), text);
    await w.screenshot('hover-json-list');
    if (process.env.TSI_DEBUG_HOVER) console.log(extensionLog(w));
    await widget.screenshot({ path: path.join(path.dirname(await w.screenshot('hover-json-list')), 'hover-json-list-widget.png') });
  });

  it('hovering "update k" in a log shows its tokens, shard and a link to open it', async () => {
    const w = wb!;
    await w.page.keyboard.press('Escape');
    await w.openFileFromExplorer('train.log');
    const line = w.page.locator('.monaco-editor .view-line').filter({ hasText: `update ${update}` });
    const at = await pointOf(w, line, `update ${update}`);
    const widget = await hoverUntil(w, at, /Open update/);
    const text = (await widget.innerText()).replace(/\u00a0/g, ' ');
    assert.ok(text.includes(`Global tokens [${fmt(updateFacts.start)}, ${fmt(updateFacts.end)})`), text);
    assert.ok(text.includes(updateFacts.shard), text);
    assert.ok(text.includes(`Open update ${fmt(update)}`), text);
    await w.screenshot('hover-update');
    await widget.screenshot({ path: path.join(path.dirname(await w.screenshot('hover-update')), 'hover-update-widget.png') });
    // "step k": the hover says plainly that it may mean "after k updates".
    const stepAt = await pointOf(
      w,
      w.page.locator('.monaco-editor .view-line').filter({ hasText: `step=${update + 1}` }),
      `step=${update + 1}`,
    );
    const step = await hoverUntil(w, stepAt, /after/);
    const stepText = (await step.innerText()).replace(/\u00a0/g, ' ');
    assert.ok(stepText.includes(`after ${fmt(update + 1)} updates`), stepText);
    assert.ok(stepText.includes(`Open update ${fmt(update)}`), stepText);
    await step.screenshot({ path: path.join(path.dirname(await w.screenshot('hover-step')), 'hover-step-widget.png') });
  });

  it('a lone id shows its piece, its bytes when it holds part of a character, and the special flag', async () => {
    const w = wb!;
    await w.page.keyboard.press('Escape');
    await w.openFileFromExplorer('notes.md');
    const line = w.page.locator('.monaco-editor .view-line').filter({ hasText: 'EOS is' });
    const eos = await hoverUntil(w, await pointOf(w, line, String(lone.eos)), /Token/);
    const eosText = (await eos.innerText()).replace(/\u00a0/g, ' ');
    assert.ok(eosText.includes(`Token ${lone.eos} · special token`), eosText);
    assert.ok(eosText.includes(tok.addedContent(lone.eos)!), eosText);
    await eos.screenshot({ path: path.join(path.dirname(await w.screenshot('hover-special')), 'hover-special-widget.png') });
    const part = await hoverUntil(w, await pointOf(w, line, String(lone.partial)), /Bytes/);
    const partText = (await part.innerText()).replace(/\u00a0/g, ' ');
    assert.ok(partText.includes(`Bytes: ${tok.pieces([lone.partial])[0].hex}`), partText);
    assert.ok(!partText.includes('\uFFFD'), partText);
    await part.screenshot({ path: path.join(path.dirname(await w.screenshot('hover-partial')), 'hover-partial-widget.png') });
    const plain = await hoverUntil(w, await pointOf(w, line, String(lone.text)), /Token/);
    const plainText = (await plain.innerText()).replace(/\u00a0/g, ' ');
    assert.ok(plainText.includes(tok.pieces([lone.text])[0].text.replace(/ /g, '·')), plainText);
  });
});

describe('e2e: token-id hover without any tokenizer', function () {
  this.timeout(900_000);
  let wb: Workbench | undefined;
  let workspace: string;
  let id: number;

  before(async () => {
    const ds = await openDataset(SAMPLE_DIR);
    id = (await ds.stream.read(10, 1))[0];
    await ds.stream.close();
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-hover-none-'));
    fs.writeFileSync(path.join(workspace, 'ids.json'), JSON.stringify([id, id + 1, id + 2]) + '\n');
    wb = await launchWorkbench({ folder: workspace, viewport: { width: 1400, height: 900 } });
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && wb) {
      const shot = await wb.screenshot(`FAILED-${this.currentTest.fullTitle()}`).catch(() => undefined);
      if (shot) console.error(`    screenshot: ${shot}`);
      console.error(wb.diagnostics());
      console.error(`----- extension log -----\n${extensionLog(wb)}`);
    }
  });
  after(async () => {
    await wb?.close();
    if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
  });

  it('offers "Choose tokenizer…" once, then stays quiet', async () => {
    const w = wb!;
    await w.openFileFromExplorer('ids.json');
    const line = w.page.locator('.monaco-editor .view-line').filter({ hasText: String(id) });
    const at = await pointOf(w, line, String(id + 1));
    const offer = await hoverUntil(w, at, /Choose tokenizer/, /token hover: 0 dataset/);
    assert.ok(await offer.locator('a', { hasText: 'Choose tokenizer…' }).isVisible());
    await offer.screenshot({ path: path.join(path.dirname(await w.screenshot('hover-no-tokenizer')), 'hover-no-tokenizer-widget.png') });
    // The link runs Choose Tokenizer…: its file dialog opens (code-server's simple dialog).
    await offer.locator('a', { hasText: 'Choose tokenizer…' }).click();
    const dialog = w.page.locator('.quick-input-widget');
    await dialog.waitFor({ state: 'visible', timeout: 10_000 });
    assert.match(await dialog.innerText(), /tokenizer/i);
    await w.screenshot('choose-tokenizer-dialog');
    await w.page.keyboard.press('Escape');
    // Hover again: nothing of ours.
    await w.page.mouse.move(5, 5);
    await w.page.keyboard.press('Escape');
    await sleep(300);
    await w.page.mouse.move(at.x, at.y, { steps: 4 });
    await sleep(2_000);
    const texts = await w.page.locator('.monaco-hover:visible').allInnerTexts();
    assert.ok(!texts.some((t) => /tokenizer/i.test(t)), texts.join('\n'));
  });
});
