/**
 * "Index Stream" inside a real extension host, on a copy of the planted-anomaly dataset
 * (`scripts/make-index-fixtures.mjs`: an EOS-free run across shards 4 and 5, among others).
 *
 * - The command resolves when the index is reloaded, not when its closing notification is
 *   dismissed (a notification left open kept the build "running": the next Index Stream did
 *   nothing).
 * - After a shard inside the EOS-free run is touched and indexed again, the window's index is
 *   whole: every shard indexed, the same document count and anomalies as before the touch (the
 *   numbers themselves are compared with numpy in `test/unit/streamIndex.test.ts`).
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { statIdentity, sameIdentity } from '../../src/core/fileIdentity';
import { api } from './probe';
import { sampleRoot } from './sample';

describe('Index Stream', () => {
  let tmp: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-vscode-index-'));
    execFileSync(
      process.execPath,
      [path.resolve(__dirname, '..', '..', '..', 'scripts', 'make-index-fixtures.mjs'), '--sample', sampleRoot(), '--out', tmp],
      { stdio: 'ignore' },
    );
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('runs again while the last notification is open; a touched shard is rebuilt and the index stays whole', async () => {
    const root = path.join(tmp, 'anomalies');
    const { services } = await api();
    const hooks = services.streamIndex!;
    await vscode.commands.executeCommand('tokenShards.indexStream', root);
    const ds = await services.openRoot(root);
    const first = hooks.peek(root)!;
    assert.ok(first.complete, 'every shard indexed');
    const documents = first.documentCount;
    const anomalies = (await hooks.anomaliesOf(ds)).map((a) => a.message);
    assert.ok(
      anomalies.some((m) => m.includes('without EOS')),
      `the planted EOS-free run is found: ${anomalies.join(' | ')}`,
    );
    // Touch the shard that lies inside the EOS-free run (its identity changes, its bytes do not).
    const victim = ds.shards[4].path;
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(victim, later, later);
    await vscode.commands.executeCommand('tokenShards.indexStream', root);
    const second = hooks.peek(root)!;
    assert.notStrictEqual(second, first, 'the index was built and reloaded again');
    assert.ok(sameIdentity(second.records[4]!.identity, await statIdentity(victim)), 'the touched shard was indexed again');
    assert.ok(second.complete, 'every shard indexed after the partial rebuild');
    assert.strictEqual(second.documentCount, documents);
    assert.deepStrictEqual(
      (await hooks.anomaliesOf(ds)).map((a) => a.message),
      anomalies,
    );
  });
});
