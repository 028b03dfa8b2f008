/**
 * Search Stream inside a real VS Code (extension host) on the sample dataset: the command with
 * arguments runs without prompting and returns exactly the counts of the CLI's
 * `token-shards count … --json` (the same core, run as a separate process); the chart draws every
 * bucket; a second run comes from the result cache; a bucket size that is a multiple of the
 * automatic one matches the CLI's `--per`; options (`--word --ignore-case`, `--ids`) pass through;
 * bad input is refused with a message; a cancelled scan caches nothing; selecting a bucket lists
 * its occurrences. Expected values always come from the CLI, never typed by hand.
 */
import * as assert from 'assert';
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

const EXTENSION_ID = 'token-shards.token-shard-inspector';

interface CountResult { terms: string[]; options: Record<string, boolean>; per: number; updates: number; buckets: { first_update: number; last_update: number; tokens: number; counts: number[] }[]; totals: number[] }
interface SearchOutcome { root: string; terms: string[]; result?: CountResult; cached: boolean; status: string; error?: string; ms: number; firstPartialMs?: number; drawn: Promise<{ buckets: number; series: number }> }
interface TestHandle { searchId?: number; select?(b: number, t: number): void; whenListed?(s: number, t: number, b: number): Promise<number>; cancelOnFirstProgress?(): void; cacheDir: string }

function root(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the tests need the sample dataset open as the workspace folder');
  return folder.uri.fsPath;
}

/**
 * `token-shards count ROOT …args --json` run by the extension's own CLI bundle in a separate Node
 * process (asynchronously: the extension host must stay responsive).
 */
function cliCount(args: string[]): Promise<CountResult> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(ext.extensionPath, 'dist', 'cli.js'), 'count', root(), ...args, '--json'],
      { encoding: 'utf8', env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, maxBuffer: 1 << 26 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as CountResult)));
  });
}

async function search(args: Record<string, unknown>): Promise<SearchOutcome> {
  const o = await vscode.commands.executeCommand<SearchOutcome>('tokenShards.searchStream', { root: root(), ...args });
  assert.ok(o, 'searchStream returned nothing');
  return o;
}

async function handle(): Promise<TestHandle> {
  return (await vscode.commands.executeCommand<TestHandle>('tokenShards._test.searchPanel', root()))!;
}

function cacheFiles(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort() : [];
}

describe('search: Search Stream command and panel', function () {
  this.timeout(120_000);
  before(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync((await handle()).cacheDir, { recursive: true, force: true });
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('searchStream({terms}) returns the CLI\'s counts, and the chart draws every bucket', async () => {
    const o = await search({ terms: ['whale', 'Ahab'] });
    assert.strictEqual(o.status, 'done', o.error);
    assert.strictEqual(o.cached, false);
    const want = await cliCount(['whale', 'Ahab']);
    assert.deepStrictEqual(o.result, want);
    assert.ok(want.totals[0] > 0 && want.totals[1] > 0, 'the sample mentions both terms');
    assert.deepStrictEqual(await o.drawn, { buckets: want.buckets.length, series: 2 });
    console.log(`      (measured: scan ${o.ms.toFixed(0)} ms, first partial counts posted after ${o.firstPartialMs?.toFixed(0) ?? '—'} ms)`);
  });

  it('reopens the same search from the cache with identical counts', async () => {
    const o = await search({ terms: ['whale', 'Ahab'] });
    assert.strictEqual(o.status, 'done');
    assert.strictEqual(o.cached, true);
    assert.deepStrictEqual(o.result, await cliCount(['whale', 'Ahab']));
    console.log(`      (measured: reopened from the cache in ${o.ms.toFixed(1)} ms)`);
  });

  it('a coarser bucket size (string terms form) equals the CLI with --per', async () => {
    const auto = (await cliCount(['whale'])).per;
    const per = auto * 3;
    const o = await search({ terms: 'whale, Ahab', per });
    assert.strictEqual(o.status, 'done', o.error);
    assert.deepStrictEqual(o.result, await cliCount(['whale', 'Ahab', '--per', String(per)]));
  });

  it('passes whole word and ignore case through', async () => {
    const o = await search({ terms: ['the', 'SEA'], word: true, ignoreCase: true });
    assert.strictEqual(o.status, 'done', o.error);
    assert.deepStrictEqual(o.result, await cliCount(['the', 'SEA', '--word', '--ignore-case']));
  });

  it('searches token-id runs with ids: true', async () => {
    const eos = await cliCount(['--ids', '100257']);
    const o = await search({ terms: ['100257'], ids: true });
    assert.strictEqual(o.status, 'done', o.error);
    assert.deepStrictEqual(o.result, eos);
  });

  it('refuses an empty term with a message (no scan)', async () => {
    const o = await search({ terms: ['whale', '   '] });
    assert.strictEqual(o.status, 'error');
    assert.ok(o.error && o.error.length > 0);
  });

  it('a cancelled scan caches nothing', async () => {
    const h = await handle();
    const before = cacheFiles(h.cacheDir);
    h.cancelOnFirstProgress!();
    const o = await search({ terms: ['Starbuck'] });
    assert.strictEqual(o.status, 'cancelled');
    assert.deepStrictEqual(cacheFiles(h.cacheDir), before, 'no cache file was written');
    const again = await search({ terms: ['Starbuck'] });
    assert.strictEqual(again.status, 'done');
    assert.strictEqual(again.cached, false, 'the next run scans');
    assert.deepStrictEqual(again.result, await cliCount(['Starbuck']));
  });

  it('selecting a bucket lists its occurrences in the panel', async () => {
    const o = await search({ terms: ['whale'] });
    const b = o.result!.buckets.findIndex((x) => x.counts[0] > 0);
    assert.ok(b >= 0);
    await o.drawn;
    const h = await handle();
    const listed = h.whenListed!(h.searchId!, 0, b);
    h.select!(b, 0);
    const rows = await listed;
    assert.strictEqual(rows, Math.min(o.result!.buckets[b].counts[0], 200), 'the first page of occurrences is listed');
  });
});
