/**
 * The loss-spike workbench inside a real VS Code (extension host) on the sample: the commands take
 * arguments and run without prompting. Inspect Updates Around resolves with the records shown,
 * equal to numpy over the card's x (scripts/reference_stats.py); Export Updates writes an npz that
 * numpy.load reads equal to the card's x and y; Open Training Log finds the planted spike of the
 * metrics fixture (scripts/make-metrics-fixture.mjs) at update S − 1 under the default step
 * convention and at S after the setting changes to "update".
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { repoRoot } from '../unit/fixtures';
import { sampleRoot as root } from './sample';

interface InspectResult {
  root: string;
  first: number;
  last: number;
  records: unknown[];
}
interface Spike {
  kind: string;
  update: number;
  step: number;
}
interface OpenLogResult {
  convention: string;
  spikes: Spike[];
  summary: string[];
  panel: { spikes: Spike[]; host: { panel: vscode.WebviewPanel } };
}

describe('loss-spike workbench commands', function () {
  this.timeout(180_000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-wb-'));
  after(async () => {
    await vscode.workspace
      .getConfiguration('tokenShards')
      .update('trainingLog.stepConvention', undefined, vscode.ConfigurationTarget.Global);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('Inspect Updates Around (update, radius) resolves with records equal to numpy', async () => {
    const r = await vscode.commands.executeCommand<InspectResult>('tokenShards.inspectUpdates', { update: 3, radius: 2, root: root() });
    assert.ok(r, 'the command resolved with a result');
    const ref = JSON.parse(
      execFileSync(
        'python3',
        [
          path.join(repoRoot(), 'scripts', 'reference_stats.py'),
          root(),
          '1',
          '5',
          '--tokenizer',
          path.join(root(), 'tokenizer', 'tokenizer.json'),
        ],
        { encoding: 'utf8' },
      ),
    );
    assert.deepStrictEqual([r.first, r.last], [1, 5]);
    assert.deepStrictEqual(JSON.parse(JSON.stringify(r.records)), ref);
  });

  it("Export Updates (npz) writes what numpy.load reads as the card's x and y", async () => {
    const file = path.join(tmp, 'u2-3.npz');
    const r = await vscode.commands.executeCommand<{ file: string; bytes: number }>('tokenShards.exportUpdates', {
      first: 2,
      last: 3,
      root: root(),
      format: 'npz',
      file,
    });
    assert.ok(r && fs.existsSync(file) && !fs.existsSync(file + '.partial'));
    const ok = execFileSync(
      'python3',
      [
        '-c',
        `
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
from reference_reader import tokens
z = np.load(sys.argv[3]); G, L = 131072, 1024
b = [tokens(sys.argv[2], G * k, G + 1) for k in (2, 3)]
print(np.array_equal(z["input_ids"], np.stack([x[:-1].reshape(128, L) for x in b])) and np.array_equal(z["target_ids"], np.stack([x[1:].reshape(128, L) for x in b])))
`,
        path.join(repoRoot(), 'scripts'),
        root(),
        file,
      ],
      { encoding: 'utf8' },
    ).trim();
    assert.strictEqual(ok, 'True');
  });

  it('Open Training Log finds the planted spike at update S − 1, and at S under the "update" convention', async () => {
    const dir = path.join(tmp, 'metrics');
    execFileSync(process.execPath, [path.join(repoRoot(), 'scripts', 'make-metrics-fixture.mjs'), '--out', dir], { stdio: 'ignore' });
    const exp = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8')) as { spikeStep: number };
    const r = await vscode.commands.executeCommand<OpenLogResult>('tokenShards.openTrainingLog', {
      file: path.join(dir, 'olmo.jsonl'),
      root: root(),
    });
    assert.ok(r, 'the command resolved');
    assert.strictEqual(r.convention, 'after');
    assert.deepStrictEqual(
      r.spikes.filter((s) => s.kind === 'spike').map((s) => s.update),
      [exp.spikeStep - 1],
    );
    await vscode.workspace
      .getConfiguration('tokenShards')
      .update('trainingLog.stepConvention', 'update', vscode.ConfigurationTarget.Global);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && !r.panel.spikes.some((s) => s.kind === 'spike' && s.update === exp.spikeStep))
      await new Promise((res) => setTimeout(res, 100));
    assert.deepStrictEqual(
      r.panel.spikes.filter((s) => s.kind === 'spike').map((s) => s.update),
      [exp.spikeStep],
    );
    r.panel.host.panel.dispose();
  });
});
