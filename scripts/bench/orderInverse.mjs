/**
 * Training order: inverting Megatron's shuffle index for 25,000,000 samples (Megatron's size for
 * 52B tokens at 2,049 tokens per sample), once, as the first `locate`/`count` through a Megatron
 * order does — read `shuffle_index.npy` from disk in chunks, build the uint32 inverse, write it to
 * the order cache — against numpy doing the same (`np.load`, `inv[sh] = arange(n)`, `tofile`).
 * The index file is written by numpy (`RandomState(1234).permutation`, cast to uint32 as Megatron
 * stores it). Ours runs in its own Node process so its peak RSS (`maxRSS`) is the build's alone;
 * both inverses are checked equal by sha256. Goal (issue): ≤ 30 s and ≤ 250 MB.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const N = 25_000_000;

export async function run(ctx) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-bench-order-'));
  try {
    const file = path.join(dir, 'shuffle_index.npy');
    const py = JSON.parse(
      execFileSync(
        'python3',
        [
          '-c',
          `import json, sys, time, resource, numpy as np
n, f, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
np.save(f, np.random.RandomState(1234).permutation(n).astype(np.uint32))
t = time.perf_counter()
sh = np.load(f)
inv = np.empty(n, dtype=np.uint32); inv[sh] = np.arange(n, dtype=np.uint32); inv.tofile(out)
ms = (time.perf_counter() - t) * 1000
print(json.dumps({"ms": ms, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))`,
          String(N),
          file,
          path.join(dir, 'numpy.inv'),
        ],
        { encoding: 'utf8' },
      ),
    );
    const ours = JSON.parse(
      execFileSync(
        process.execPath,
        [
          '-e',
          `const core = require(${JSON.stringify(path.join(ctx.repo, 'dist', 'core.js'))});
const t = performance.now();
const { vector } = core.openNpy(process.argv[1]);
const cache = new core.OrderCache(process.argv[2]);
const key = cache.key([process.argv[1]], { bench: 1 });
const inv = cache.inverse(key, 'shuffle', vector.length, () => core.InverseIndex.build(vector, vector.length, (p) => 'element ' + p));
const ms = performance.now() - t;
console.log(JSON.stringify({ ms, maxrss_kb: process.resourceUsage().maxRSS, file: cache.file(key, 'shuffle.inv'), first: inv.positions(0) }));`,
          file,
          path.join(dir, 'cache'),
        ],
        { encoding: 'utf8' },
      ),
    );
    const sha = (f) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');
    const same = sha(ours.file) === sha(path.join(dir, 'numpy.inv'));
    if (!same) throw new Error('order inverse: ours differs from numpy');
    const note = `${N.toLocaleString('en-US')} samples; inverse equal to numpy's (sha256)`;
    return [
      {
        bench: 'order inverse',
        name: 'build the inverse of a 25M-sample shuffle index vs numpy (inv[sh] = arange(n))',
        ours: ours.ms,
        reference: py.ms,
        unit: 'ms',
        ratio: py.ms / ours.ms,
        note: `${note}; goal ≤ 30,000 ms`,
      },
      {
        bench: 'order inverse',
        name: 'peak RSS of that process (MB)',
        ours: ours.maxrss_kb / 1024,
        reference: py.maxrss_kb / 1024,
        unit: 'MB',
        ratio: py.maxrss_kb / ours.maxrss_kb,
        note: 'Node vs python3+numpy, whole process; goal ≤ 250 MB',
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
