/**
 * Export (src/core/export.ts, `token-shards export`): npz read back by numpy.load equals the
 * dataset card's x and y stacked; jsonl rows equal the card's rows and decode with the tokenizer
 * library; txt equals `update`'s text; cancellation leaves no file.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openDataset } from '../../src/core/dataset';
import { CancelledError } from '../../src/core/errors';
import { exportUpdatesToFile, npyHeader } from '../../src/core/export';
import { loadTokenizer } from '../../src/core/tokenizer';
import { terminalSafe } from '../../src/core/untrusted';
import { repoRoot, runCli, sampleDir } from './fixtures';
import { pyUpdates } from './pyref';

const NPZ_CHECK = `
import json, sys, numpy as np
sys.path.insert(0, sys.argv[1])
from reference_reader import tokens
root, f, k1, k2 = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
G, L = 131072, 1024
z = np.load(f)
xs, ys = [], []
for k in range(k1, k2 + 1):
    batch = tokens(root, G * k, G + 1)
    xs.append(batch[:-1].reshape(G // L, L)); ys.append(batch[1:].reshape(G // L, L))
x, y = np.stack(xs), np.stack(ys)
print(json.dumps({"files": sorted(z.files), "dtype": [str(z["input_ids"].dtype), str(z["target_ids"].dtype)],
  "shape": list(z["input_ids"].shape), "x": bool(np.array_equal(z["input_ids"], x)), "y": bool(np.array_equal(z["target_ids"], y))}))
`;

describe('export: npz, jsonl, txt', function () {
  this.timeout(0);
  let tmp: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-export-'));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("`export --format npz` round-trips through numpy.load equal to the card's x and y (every update)", () => {
    const root = sampleDir();
    const last = Number(JSON.parse(runCli(['info', root, '--json']).stdout).updates) - 1;
    for (const [k1, k2] of [
      [0, last],
      [7, 7],
    ]) {
      const f = path.join(tmp, `u${k1}-${k2}.npz`);
      const r = runCli(['export', root, k1 === k2 ? String(k1) : `${k1}..${k2}`, '--format', 'npz', '--out', f]);
      assert.strictEqual(r.code, 0, r.stderr);
      const got = JSON.parse(
        execFileSync('python3', ['-c', NPZ_CHECK, path.join(repoRoot(), 'scripts'), root, f, String(k1), String(k2)], { encoding: 'utf8' }),
      );
      assert.deepStrictEqual(got, {
        files: ['input_ids', 'target_ids'],
        dtype: ['uint32', 'uint32'],
        shape: [k2 - k1 + 1, 128, 1024],
        x: true,
        y: true,
      });
    }
  });

  it('.npy headers are 64-byte aligned and name <u4, C order and the shape', () => {
    for (const shape of [[1, 128, 1024], [400000, 128, 1024], [3]]) {
      const h = npyHeader(shape);
      assert.strictEqual(h.length % 64, 0);
      assert.strictEqual(h.readUInt16LE(8), h.length - 10);
      assert.match(
        h.toString('latin1'),
        new RegExp(`'descr': '<u4', 'fortran_order': False, 'shape': \\(${shape.join(', ')}${shape.length === 1 ? ',' : ''}\\)`),
      );
    }
  });

  it("`export --format jsonl` rows equal the card's rows; text is the library's decode of input_ids", async () => {
    const root = sampleDir();
    const r = runCli(['export', root, '4..5', '--format', 'jsonl']);
    assert.strictEqual(r.code, 0, r.stderr);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.strictEqual(rows.length, 2 * 128);
    const ref = pyUpdates(root, [4, 5]);
    const tok = await loadTokenizer(path.join(root, 'tokenizer', 'tokenizer.json'));
    for (const row of rows) {
      assert.deepStrictEqual(Object.keys(row), ['update', 'sequence', 'token_range', 'input_ids', 'target_ids', 'text']);
      const py = ref.get(row.update)!;
      assert.deepStrictEqual(row.input_ids, py.x[row.sequence]);
      assert.deepStrictEqual(row.target_ids, py.y[row.sequence]);
      assert.deepStrictEqual(row.token_range, [131072 * row.update + 1024 * row.sequence, 131072 * row.update + 1024 * (row.sequence + 1)]);
    }
    for (const row of [rows[0], rows[200]]) {
      assert.strictEqual(row.text, await tok.libraryDecode(row.input_ids));
    }
  });

  it("`export --format txt` is `update`'s text, update after update (the text itself to a pipe; both mark control characters with --escape)", () => {
    const root = sampleDir();
    const r = runCli(['export', root, '1..2', '--format', 'txt']);
    assert.strictEqual(r.code, 0, r.stderr);
    const u1 = runCli(['update', root, '1']).stdout,
      u2 = runCli(['update', root, '2']).stdout;
    assert.strictEqual(r.stdout, u1 + '\n' + u2);
    const e = runCli(['--escape', 'export', root, '1..2', '--format', 'txt']).stdout;
    assert.strictEqual(e, runCli(['--escape', 'update', root, '1']).stdout + '\n' + runCli(['--escape', 'update', root, '2']).stdout);
    assert.strictEqual(e, terminalSafe(r.stdout, { keepLayout: true }));
  });

  it('cancelling stops the export and leaves no file (nor a .partial)', async () => {
    const ds = await openDataset(sampleDir());
    for (const format of ['npz', 'jsonl'] as const) {
      const f = path.join(tmp, `cancel.${format}`);
      const ac = new AbortController();
      await assert.rejects(
        exportUpdatesToFile(ds, 0, 10, format, f, {
          signal: ac.signal,
          onProgress: (p) => {
            if (p.done === 2) ac.abort();
          },
        }),
        CancelledError,
      );
      assert.ok(!fs.existsSync(f) && !fs.existsSync(f + '.partial'), format);
    }
    await ds.stream.close();
  });

  it('bad format and npz to a terminal are usage errors', () => {
    const r = runCli(['export', sampleDir(), '1', '--format', 'parquet']);
    assert.strictEqual(r.code, 2);
    assert.match(r.stderr, /expected one of jsonl, txt, npz/);
  });
});
