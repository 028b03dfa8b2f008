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
import type { Envelope } from '../../src/shared/channel';
import { EXTENSION_ID, api } from './probe';
import { sampleRoot as root } from './sample';

const SEARCH_VIEW = 'tokenShards.searchPanel';

interface CountResult {
  terms: string[];
  options: Record<string, boolean>;
  per: number;
  updates: number;
  buckets: { first_update: number; last_update: number; tokens: number; counts: number[] }[];
  totals: number[];
}
interface SearchOutcome {
  root: string;
  terms: string[];
  result?: CountResult;
  cached: boolean;
  status: string;
  error?: string;
  ms: number;
  firstPartialMs?: number;
  drawn: Promise<{ buckets: number; series: number }>;
}

/**
 * `token-shards count ROOT …args --json` run by the extension's own CLI bundle in a separate Node
 * process (asynchronously: the extension host must stay responsive).
 */
function cliCount(args: string[]): Promise<CountResult> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(ext.extensionPath, 'dist', 'cli.js'), 'count', root(), ...args, '--json'],
      { encoding: 'utf8', env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, maxBuffer: 1 << 26 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as CountResult)),
    );
  });
}

async function search(args: Record<string, unknown>): Promise<SearchOutcome> {
  const o = await vscode.commands.executeCommand<SearchOutcome>('tokenShards.searchStream', { root: root(), ...args });
  assert.ok(o, 'searchStream returned nothing');
  return o;
}

/**
 * Resolves with the first event of the search panel's channel (either direction) that `pick`
 * accepts, seen through the API's channel taps (`then` runs synchronously inside the tap).
 */
async function nextPanelEvent<T>(
  pick: (e: { direction: string; body: { type: string } & Record<string, unknown> }) => T | undefined,
  then?: (v: T) => void,
): Promise<T> {
  const a = await api();
  return new Promise<T>((resolve) => {
    const sub = a.tapMessages((m) => {
      if (m.view !== SEARCH_VIEW) return;
      const env = m.envelope as Envelope;
      if (env.kind !== 'event') return;
      const v = pick({ direction: m.direction, body: env.body as { type: string } & Record<string, unknown> });
      if (v === undefined) return;
      sub.dispose();
      then?.(v);
      resolve(v);
    });
  });
}

function cacheFiles(dir: string): string[] {
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((n) => n.endsWith('.json'))
        .sort()
    : [];
}

describe('search: Search Stream command and panel', function () {
  this.timeout(120_000);
  before(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync((await api()).searchPanels.cache.dir, { recursive: true, force: true });
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it("searchStream({terms}) returns the CLI's counts, and the chart draws every bucket", async () => {
    const o = await search({ terms: ['whale', 'Ahab'] });
    assert.strictEqual(o.status, 'done', o.error);
    assert.strictEqual(o.cached, false);
    const want = await cliCount(['whale', 'Ahab']);
    assert.deepStrictEqual(o.result, want);
    assert.ok(want.totals[0] > 0 && want.totals[1] > 0, 'the sample mentions both terms');
    assert.deepStrictEqual(await o.drawn, { buckets: want.buckets.length, series: 2 });
    console.log(
      `      (measured: scan ${o.ms.toFixed(0)} ms, first partial counts posted after ${o.firstPartialMs?.toFixed(0) ?? '—'} ms)`,
    );
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
    const a = await api();
    const dir = a.searchPanels.cache.dir;
    const before = cacheFiles(dir);
    // Cancel (as the Cancel button does) when the first partial counts go to the chart.
    const cancelled = nextPanelEvent(
      (e) => (e.direction === 'toWebview' && e.body.type === 'progress' ? true : undefined),
      () => a.searchPanels.panelFor(root())!.cancel(),
    );
    const o = await search({ terms: ['Starbuck'] });
    await cancelled;
    assert.strictEqual(o.status, 'cancelled');
    assert.deepStrictEqual(cacheFiles(dir), before, 'no cache file was written');
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
    const panel = (await api()).searchPanels.panelFor(root())!;
    const id = panel.currentSearchId;
    const listed = nextPanelEvent((e) =>
      e.direction === 'fromWebview' && e.body.type === 'listed' && e.body.searchId === id && e.body.bucket === b
        ? (e.body.rows as number)
        : undefined,
    );
    panel.select(b, 0);
    const rows = await listed;
    assert.strictEqual(rows, Math.min(o.result!.buckets[b].counts[0], 200), 'the first page of occurrences is listed');
  });
});
