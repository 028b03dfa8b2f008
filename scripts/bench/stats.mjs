/**
 * Loss-spike workbench:
 * 1. Per-update statistics for 200 consecutive updates of the full-size data (every field of
 *    src/core/stats.ts) against numpy computing the same records over the dataset card's x
 *    (scripts/reference_stats.py: np.unique, sorting, one python3 process timed inside it). Both
 *    sides: one warm-up pass, best of 3 rounds; the records are checked equal.
 * 2. Export throughput: our npz export (streamed through yazl, one update at a time, written to a
 *    file) against the card's reader building x and y for the same updates and writing `np.savez`
 *    (arrays stacked in memory, as a script would). Best of 3; the two files are checked equal
 *    with numpy. Also jsonl (no reference: a script would json.dumps the same rows; measured too).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PY_READER_PRELUDE } from '../lib/reference-reader.mjs';

const SAVEZ = `${PY_READER_PRELUDE}root, out, k1, k2, G, L = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
def once():
    xs, ys = [], []
    for k in range(k1, k2 + 1):
        batch = tokens(root, G * k, G + 1)
        xs.append(batch[:-1].reshape(G // L, L)); ys.append(batch[1:].reshape(G // L, L))
    np.savez(out, input_ids=np.stack(xs), target_ids=np.stack(ys))
once()
best = float("inf")
for _ in range(3):
    t = time.perf_counter(); once(); best = min(best, (time.perf_counter() - t) * 1000)
print(json.dumps({"ms": best}))
`;
const SAME = `import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
print(all(np.array_equal(a[k], b[k]) for k in ("input_ids", "target_ids")) and sorted(a.files) == sorted(b.files))
`;

export async function run(ctx) {
  const { core, root, repo, log } = ctx;
  const ds = await core.openDataset(root);
  const { G, L } = ds.schedule;
  const tok = await core.loadTokenizer(ds.tokenizerFile);
  const n = Math.min(200, ds.schedule.numUpdates);
  const first = Math.max(0, Math.floor((ds.schedule.numUpdates - n) / 2)),
    last = first + n - 1;
  const rows = [];

  // 1. statistics
  const py = JSON.parse(
    execFileSync(
      'python3',
      [
        path.join(repo, 'scripts', 'reference_stats.py'),
        root,
        String(first),
        String(last),
        '--tokenizer',
        ds.tokenizerFile,
        '--G',
        String(G),
        '--L',
        String(L),
        '--eos',
        String(ds.settings.eosTokenId),
        '--rounds',
        '3',
      ],
      { encoding: 'utf8', maxBuffer: 1 << 28 },
    ),
  );
  const calc = new core.StatsCalculator({ G, L, eos: ds.settings.eosTokenId, tokenizer: tok });
  let recs = await core.computeUpdateStats(ds, first, last, { calculator: calc });
  let best = Infinity;
  for (let r = 0; r < 3; r++) {
    const t = performance.now();
    recs = await core.computeUpdateStats(ds, first, last, { calculator: calc });
    best = Math.min(best, performance.now() - t);
  }
  const equal = JSON.stringify(recs) === JSON.stringify(py.records);
  log(`stats: updates ${first}..${last}: ours ${best.toFixed(0)} ms, numpy ${py.ms.toFixed(0)} ms; records equal: ${equal}`);
  rows.push({
    name: `stats, ${n} consecutive updates (all fields)`,
    ours: best,
    reference: py.ms,
    unit: 'ms',
    ratio: py.ms / best,
    note: `numpy over the card's x${equal ? ', records equal' : ', RECORDS DIFFER'}`,
  });

  // 2. export
  const m = Math.min(50, n);
  const k2 = first + m - 1;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-bench-export-'));
  try {
    const ours = path.join(dir, 'ours.npz'),
      ref = path.join(dir, 'ref.npz');
    const time = async (format, file) => {
      await core.exportUpdatesToFile(ds, first, k2, format, file, { tokenizer: tok });
      let b = Infinity;
      for (let r = 0; r < 3; r++) {
        const t = performance.now();
        await core.exportUpdatesToFile(ds, first, k2, format, file, { tokenizer: tok });
        b = Math.min(b, performance.now() - t);
      }
      return b;
    };
    const oursMs = await time('npz', ours);
    const refMs = JSON.parse(
      execFileSync('python3', ['-c', SAVEZ, root, ref, String(first), String(k2), String(G), String(L)], { encoding: 'utf8' }),
    ).ms;
    const same = execFileSync('python3', ['-c', SAME, ours, ref], { encoding: 'utf8' }).trim() === 'True';
    const mb = fs.statSync(ours).size / 1e6;
    log(
      `export npz: ${m} updates, ${mb.toFixed(0)} MB: ours ${oursMs.toFixed(0)} ms (${((mb / oursMs) * 1000).toFixed(0)} MB/s), np.savez ${refMs.toFixed(0)} ms; arrays equal: ${same}`,
    );
    rows.push({
      name: `export npz, ${m} updates (${mb.toFixed(0)} MB)`,
      ours: (mb / oursMs) * 1000,
      reference: (mb / refMs) * 1000,
      unit: 'MB/s',
      ratio: refMs / oursMs,
      note: `card reader + np.savez${same ? ', arrays equal' : ', ARRAYS DIFFER'}; ours streams, bounded memory`,
    });
    const jsonlMs = await time('jsonl', path.join(dir, 'ours.jsonl'));
    const jmb = fs.statSync(path.join(dir, 'ours.jsonl')).size / 1e6;
    rows.push({
      name: `export jsonl, ${m} updates (${jmb.toFixed(0)} MB, with text)`,
      ours: (jmb / jsonlMs) * 1000,
      reference: NaN,
      unit: 'MB/s',
      ratio: NaN,
      note: `${(((m * 128) / jsonlMs) * 1000).toFixed(0)} sequences/s`,
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await ds.stream.close();
  }
  return rows;
}
