/**
 * Update statistics through the run in force inside a real VS Code: with the setting
 * `tokenShards.run` naming an OLMo run over the sample (its shards read as OLMo token files,
 * global indices rebuilt from seed and epoch), Inspect Updates Around shows the run's steps and
 * the training-log overlay pairs log step s with the run's step s − 1; both equal
 * `token-shards stats --run FILE --json` (which test/unit/orderStats.test.ts checks against the
 * numpy reference over the framework ports).
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { repoRoot } from '../unit/fixtures';
import { sampleManifest, sampleRoot as root } from './sample';

interface Stats {
  update: number;
  order?: string;
  distinct_tokens: number;
}

describe('statistics through the run in force (tokenShards.run)', function () {
  this.timeout(300_000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-order-stats-vs-'));
  const runFile = path.join(tmp, 'run.json');
  const config = () => vscode.workspace.getConfiguration('tokenShards');

  before(async () => {
    fs.writeFileSync(runFile, JSON.stringify({ order: 'olmo', seed: 6198, epoch: 1, sequence_length: 1000, global_batch_size: 16 }));
    await config().update('run', runFile, vscode.ConfigurationTarget.Global);
  });
  after(async () => {
    await config().update('run', undefined, vscode.ConfigurationTarget.Global);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** `token-shards stats ROOT RANGE --run FILE --json` (its caches in the test's folder). */
  const cliStats = (range: string): Stats[] =>
    JSON.parse(
      execFileSync(process.execPath, [path.join(repoRoot(), 'dist', 'cli.js'), '--run', runFile, 'stats', root(), range, '--json'], {
        encoding: 'utf8',
        maxBuffer: 1 << 28,
        env: { ...process.env, XDG_CACHE_HOME: path.join(tmp, 'cache') },
      }),
    ) as Stats[];

  it("Inspect Updates Around shows the run's steps, equal to `stats --run`", async () => {
    const r = await vscode.commands.executeCommand<{ first: number; last: number; records: Stats[] }>('tokenShards.inspectUpdates', {
      update: 50,
      radius: 2,
      root: root(),
    });
    assert.ok(r, 'the command resolved with a result');
    assert.deepStrictEqual([r.first, r.last], [48, 52]);
    const want = cliStats('48..52');
    assert.ok(want.every((s) => s.order === 'olmo'));
    assert.deepStrictEqual(JSON.parse(JSON.stringify(r.records)), want);
  });

  it("the training-log overlay draws log step s at the run's step s − 1, up to the run's last step", async () => {
    // The run's steps: OLMo instances (each shard's whole 1,000-token chunks) ÷ 16 per batch.
    const instances = sampleManifest().reduce((a, e) => a + Math.floor(e.num_tokens / 1000), 0);
    const steps = Math.floor(instances / 16);
    const logged = steps + 40; // the log runs past the run's last step
    assert.ok(logged <= 400, 'every update is drawn (no sampling)');
    const file = path.join(tmp, 'log.jsonl');
    fs.writeFileSync(file, Array.from({ length: logged }, (_, i) => JSON.stringify({ step: i + 1, loss: 3 - i / 1000 })).join('\n') + '\n');
    const r = await vscode.commands.executeCommand<{
      panel: {
        overlay(column: string): Promise<{ updates: number[]; values: (number | null)[] } | undefined>;
        host: { panel: vscode.WebviewPanel };
      };
    }>('tokenShards.openTrainingLog', { file, root: root() });
    assert.ok(r, 'the command resolved');
    try {
      const o = await r.panel.overlay('distinct_tokens');
      assert.ok(o, 'an overlay was drawn');
      assert.deepStrictEqual(
        o.updates,
        Array.from({ length: steps }, (_, k) => k),
      );
      const want = cliStats(`0..${steps - 1}`);
      assert.deepStrictEqual(
        o.values,
        want.map((s) => s.distinct_tokens),
      );
    } finally {
      r.panel.host.panel.dispose();
    }
  });
});
