/**
 * Navigation inside a real VS Code (extension host) on the sample dataset: the Go to commands
 * take arguments and run without prompting (the hover engineer links to
 * `command:tokenShards.goToUpdate?[{"update":k}]`), the update view opens with 128 rendered rows
 * for an update spanning two shards and is reused for the next one, reveals land on the right
 * shard and local offset (checked through the shard editor's test command), and Copy Link
 * produces a link the URI handler understands. Expected values come from the manifest file and
 * the dataset card's Python reader (test/unit/pyref.ts), never typed by hand.
 */
import * as assert from 'assert';
import * as path from 'path';
import * as vscode from 'vscode';
import { pyTokens, pyUpdates } from '../unit/pyref';
import { snapshot } from './probe';
import { sampleManifest as manifest, sampleRoot as root, sampleSchedule as schedule } from './sample';

const EXTENSION_ID = 'token-shards.token-shard-inspector';
const UPDATE_VIEW_TYPE = 'tokenShards.updateView';

interface UpdateViewResult {
  root: string;
  update: number;
  rows: number;
  shards: string[];
  rendered: Promise<number>;
}
interface ShardSnapshot {
  uri: string;
  fileName: string;
  active: boolean;
  cursor: number;
  statusText?: string;
  highlights: { start: number; end: number; label?: string }[];
}

function updateViewTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith(UPDATE_VIEW_TYPE));
}

async function shardEditors(): Promise<ShardSnapshot[]> {
  return snapshot();
}

/** The shard holding global offset `o` and the local offset in it, from the manifest file. */
function locate(o: number): { file: string; local: number } {
  const m = manifest()
    .filter((e) => e.start_token <= o)
    .pop()!;
  return { file: path.basename(m.shard), local: o - m.start_token };
}

describe('navigation: Go to commands, update view, links', function () {
  let G: number, L: number;
  before(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    ({ G, L } = schedule());
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('goToUpdate({update}) opens the update view with 128 rows for an update spanning two shards, no prompt', async () => {
    const edge = manifest()[1].start_token;
    const k = Math.floor(edge / G);
    assert.ok(G * k < edge && edge < G * (k + 1), `update ${k} spans the first shard edge`);
    const res = await vscode.commands.executeCommand<UpdateViewResult>('tokenShards.goToUpdate', { update: k });
    assert.ok(res, 'goToUpdate returned nothing');
    assert.strictEqual(res.update, k);
    assert.strictEqual(res.rows, G / L);
    assert.deepStrictEqual(
      res.shards,
      manifest()
        .slice(0, 2)
        .map((e) => e.shard),
    );
    assert.strictEqual(await res.rendered, G / L, 'row elements rendered in the webview');
    assert.strictEqual(updateViewTabs().length, 1);
    assert.match(updateViewTabs()[0].label, new RegExp(`^Update ${k.toLocaleString('en-US')} · `));
  });

  it('reuses the same panel for another update of the dataset (string argument form too)', async () => {
    const res = await vscode.commands.executeCommand<UpdateViewResult>('tokenShards.goToUpdate', { update: '0', root: root() });
    assert.strictEqual(res?.update, 0);
    assert.strictEqual(await res!.rendered, G / L);
    assert.strictEqual(updateViewTabs().length, 1, 'one update view per dataset');
  });

  it('rejects an out-of-range update without prompting (resolves undefined)', async () => {
    const n = Math.floor((manifest().reduce((s, e) => s + e.num_tokens, 0) - 1) / G);
    const res = await vscode.commands.executeCommand('tokenShards.goToUpdate', { update: n });
    assert.strictEqual(res, undefined);
  });

  it('goToOffset({offset}) reveals the token in its shard editor at the right local offset', async () => {
    const o = manifest()[2].start_token + 12345;
    const res = await vscode.commands.executeCommand<{ offset: number }>('tokenShards.goToOffset', { offset: o });
    assert.deepStrictEqual(res, { offset: o });
    const want = locate(o);
    const ed = (await shardEditors()).find((s) => s.active);
    assert.ok(ed, 'a shard editor is active');
    assert.strictEqual(ed.fileName, want.file);
    assert.strictEqual(ed.cursor, want.local);
  });

  it('goToOffset accepts "5.5e5"-style strings', async () => {
    const res = await vscode.commands.executeCommand<{ offset: number }>('tokenShards.goToOffset', { offset: '5.5e5' });
    assert.deepStrictEqual(res, { offset: 550000 });
    const ed = (await shardEditors()).find((s) => s.active)!;
    assert.strictEqual(ed.fileName, locate(550000).file);
    assert.strictEqual(ed.cursor, locate(550000).local);
  });

  it('goToSequence({update, sequence}) reveals the sequence with its inputs highlighted', async () => {
    const k = 3,
      r = 77;
    const res = await vscode.commands.executeCommand<{ update: number; sequence: number; offset: number }>('tokenShards.goToSequence', {
      update: k,
      sequence: r,
    });
    const s = G * k + L * r;
    assert.deepStrictEqual(res, { update: k, sequence: r, offset: s });
    const ed = (await shardEditors()).find((x) => x.active)!;
    const want = locate(s);
    assert.strictEqual(ed.fileName, want.file);
    assert.strictEqual(ed.cursor, want.local);
    const hl = ed.highlights.find((h) => h.start === want.local);
    assert.ok(hl && hl.end - hl.start === L, `highlight of the ${L} inputs: ${JSON.stringify(ed.highlights)}`);
    // the reader agrees on the first id of that sequence (sanity of the schedule arithmetic)
    assert.deepStrictEqual(pyUpdates(root(), [k], G, L).get(k)!.x[r].slice(0, 4), pyTokens(root(), s, 4));
  });

  it('goToDocument({document}) reveals the document start found by counting EOS tokens', async () => {
    const { eos } = schedule();
    const all = pyTokens(
      root(),
      0,
      Math.min(
        600000,
        manifest().reduce((a, e) => a + e.num_tokens, 0),
      ),
    );
    const eosAt: number[] = [];
    all.forEach((t, i) => {
      if (t === eos) eosAt.push(i);
    });
    const n = Math.min(40, eosAt.length - 1);
    const start = eosAt[n - 1] + 1,
      end = eosAt[n] + 1;
    const res = await vscode.commands.executeCommand<{ document: number; start: number; end: number }>('tokenShards.goToDocument', {
      document: n,
    });
    assert.strictEqual(res?.document, n);
    assert.strictEqual(res.start, start);
    assert.strictEqual(res.end, end);
    const ed = (await shardEditors()).find((x) => x.active)!;
    assert.strictEqual(ed.fileName, locate(start).file);
    assert.strictEqual(ed.cursor, locate(start).local);
  });

  it('copyLink in a shard editor copies an offset link; goToSequence args also accept strings', async () => {
    const o = manifest()[1].start_token + 7;
    await vscode.commands.executeCommand('tokenShards.goToOffset', { offset: o });
    // Wait, as a person would, until the shard editor shows the cursor there (its status bar item).
    // The status text starts "$(location) Token 55,000,123 · …" (src/editor/statusBar.ts statusText).
    const shown = new RegExp(`^\\$\\(location\\) (Token )?${o.toLocaleString('en-US')} `);
    while (!(await shardEditors()).some((s) => s.active && shown.test(s.statusText ?? ''))) await new Promise((r) => setTimeout(r, 50));
    const link = await vscode.commands.executeCommand<string>('tokenShards.copyLink');
    assert.ok(link, 'a link was produced');
    assert.strictEqual(link, `${vscode.env.uriScheme}://${EXTENSION_ID}/offset?o=${o}`);
    assert.strictEqual(await vscode.env.clipboard.readText(), link);
    const res = await vscode.commands.executeCommand<{ offset: number }>('tokenShards.goToSequence', { update: '1', sequence: '5' });
    assert.strictEqual(res?.offset, G + 5 * L);
  });

  it('copyLink in the update view copies an update link', async () => {
    const res = await vscode.commands.executeCommand<UpdateViewResult>('tokenShards.goToUpdate', { update: 2 });
    await res!.rendered;
    const link = await vscode.commands.executeCommand<string>('tokenShards.copyLink');
    assert.strictEqual(link, `${vscode.env.uriScheme}://${EXTENSION_ID}/update?k=2`);
  });
});
