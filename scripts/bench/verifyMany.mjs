/**
 * Verifying a manifest of very many tiny shards (the goal: 100,000 lines under 300 MB,
 * time linear in the line count), side by side in one run with the dataset card's "Verifying a
 * download" Python loop (hashlib over `open(...).read()`, verbatim) on the same files:
 * - peak resident set size (MB) and wall seconds of `token-shards verify --no-index` at 50,000
 *   and 100,000 16-token shards, with an empty verify cache (cold: every shard hashed, the cache
 *   written) and then a full one (warm: every shard answered from the cache);
 * - linearity: seconds per shard at 100,000 ÷ seconds per shard at 50,000 (1.00 = linear);
 * - the default command (the stream index built in the same read, one index entry per shard
 *   written by the workers), cold and warm: peak RSS, and its time ÷ `--no-index`'s (the price of
 *   the index for tiny shards: mostly creating one small file per shard).
 * Peak RSS is the kernel's `ru_maxrss` of the child, read by a small Python wrapper (no
 * `/usr/bin/time` needed). Data: `scripts/make-many-shards.mjs` into many-shards/<N>/
 * (git-ignored, made once, ~0.6 GB of file-system blocks for 100,000 files).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Runs argv[1:] (cwd, env inherited), prints its wall seconds and peak RSS (kB on Linux).
const MEASURE = `
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
s = time.perf_counter() - t0
if p.returncode != 0:
    sys.stderr.write(p.stderr[-2000:])
    sys.exit(p.returncode)
print(json.dumps({"s": s, "rss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
`;

// The dataset card's loop, verbatim.
const CARD_LOOP = `
import json, hashlib
for l in open("shard_manifest.jsonl"):
    e = json.loads(l)
    h = hashlib.sha256(open(e["shard"], "rb").read()).hexdigest()
    assert h == e["sha256"], e["shard"]
`;

function measure(argv, opts = {}) {
  return JSON.parse(execFileSync('python3', ['-c', MEASURE, ...argv], { encoding: 'utf8', ...opts }));
}

export async function run(ctx) {
  const repo = ctx.repo;
  const cli = path.join(repo, 'dist', 'cli.js');
  const rows = [];
  const perShard = {};
  for (const n of [50_000, 100_000]) {
    const data = path.join(repo, 'many-shards', String(n));
    if (!fs.existsSync(path.join(data, 'shard_manifest.jsonl'))) {
      ctx.log(`making many-shards/${n} …`);
      execFileSync(process.execPath, [path.join(repo, 'scripts', 'make-many-shards.mjs'), '--shards', String(n)], { stdio: 'inherit' });
    }
    const cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-bench-many-'));
    const indexHome = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-bench-many-index-'));
    try {
      const env = { ...process.env, XDG_CACHE_HOME: cacheHome };
      const py = measure(['python3', '-c', CARD_LOOP], { cwd: data });
      const cold = measure([process.execPath, cli, 'verify', data, '--no-index'], { env });
      const warm = measure([process.execPath, cli, 'verify', data, '--no-index'], { env });
      const ienv = { ...process.env, XDG_CACHE_HOME: indexHome };
      const icold = measure([process.execPath, cli, 'verify', data], { env: ienv });
      const iwarm = measure([process.execPath, cli, 'verify', data], { env: ienv });
      perShard[n] = { ours: cold.s / n, py: py.s / n };
      const label = `${n.toLocaleString('en-US')} tiny shards`;
      const mb = (kb) => kb / 1024;
      ctx.log(
        `${label} (load ${os.loadavg()[0].toFixed(1)}): ours cold ${mb(cold.rss_kb).toFixed(0)} MB ${cold.s.toFixed(1)} s · warm ${mb(warm.rss_kb).toFixed(0)} MB ${warm.s.toFixed(1)} s · with the index cold ${mb(icold.rss_kb).toFixed(0)} MB ${icold.s.toFixed(1)} s · warm ${mb(iwarm.rss_kb).toFixed(0)} MB ${iwarm.s.toFixed(1)} s · card loop ${mb(py.rss_kb).toFixed(0)} MB ${py.s.toFixed(1)} s`,
      );
      for (const [phase, r, plain] of [
        ['cold', icold, cold],
        ['warm', iwarm, warm],
      ]) {
        rows.push(
          {
            name: `verify ${label} with the index (default), ${phase}: peak RSS`,
            ours: mb(r.rss_kb),
            reference: mb(plain.rss_kb),
            unit: 'MB',
            ratio: plain.rss_kb / r.rss_kb,
            note: 'reference: --no-index; goal < 300 MB',
          },
          {
            name: `verify ${label} with the index (default), ${phase}: time`,
            ours: r.s,
            reference: plain.s,
            unit: 's',
            ratio: plain.s / r.s,
            note: 'reference: --no-index',
          },
        );
      }
      for (const [phase, r, note] of [
        ['cold', cold, 'goal < 300 MB; every shard hashed'],
        ['warm', warm, 'every shard from the cache'],
      ]) {
        rows.push(
          {
            name: `verify ${label}, ${phase}: peak RSS`,
            ours: mb(r.rss_kb),
            reference: mb(py.rss_kb),
            unit: 'MB',
            ratio: py.rss_kb / r.rss_kb,
            note,
          },
          {
            name: `verify ${label}, ${phase}: time`,
            ours: r.s,
            reference: py.s,
            unit: 's',
            ratio: py.s / r.s,
            note: 'reference: card loop',
          },
        );
      }
    } finally {
      fs.rmSync(cacheHome, { recursive: true, force: true });
      fs.rmSync(indexHome, { recursive: true, force: true });
    }
  }
  const growth = (k) => perShard[100_000][k] / perShard[50_000][k];
  rows.push({
    name: 'time per shard, 100,000 ÷ 50,000 (cold)',
    ours: growth('ours'),
    reference: growth('py'),
    unit: '×',
    ratio: growth('py') / growth('ours'),
    note: '1.00 = linear',
  });
  return rows;
}
