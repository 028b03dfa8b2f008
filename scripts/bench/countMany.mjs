/**
 * `count` over a manifest of very many tiny shards: time per shard must be flat in the number of
 * manifest entries (it was quadratic: every context look-up of the scanner read a 4,096-token
 * block, 256 files of 16 tokens, for every shard). Runs `token-shards count ROOT the` at 1,000,
 * 10,000 and 100,000 16-token shards (`scripts/make-many-shards.mjs` into many-shards/<N>/,
 * git-ignored, made once) with the sample's real tokenizer, and reports milliseconds per shard
 * side by side with the same at 1,000 shards (ratio 1.00 = flat; below 1 = slower per shard).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Shard counts measured. */
const SIZES = [1_000, 10_000, 100_000];

export async function run(ctx) {
  const cli = path.join(ctx.repo, 'dist', 'cli.js');
  const tokenizer = path.join(ctx.sample, 'tokenizer', 'tokenizer.json');
  const perShard = {};
  const rows = [];
  for (const n of SIZES) {
    const data = path.join(ctx.repo, 'many-shards', String(n));
    if (!fs.existsSync(path.join(data, 'shard_manifest.jsonl'))) {
      ctx.log(`making many-shards/${n} …`);
      execFileSync(process.execPath, [path.join(ctx.repo, 'scripts', 'make-many-shards.mjs'), '--shards', String(n)], { stdio: 'inherit' });
    }
    const t0 = process.hrtime.bigint();
    execFileSync(process.execPath, [cli, 'count', data, 'the', '--tokenizer', tokenizer, '--json'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    perShard[n] = ms / n;
    ctx.log(
      `count on ${n.toLocaleString('en-US')} tiny shards (load ${os.loadavg()[0].toFixed(1)}): ${(ms / 1000).toFixed(1)} s, ${(ms / n).toFixed(3)} ms per shard`,
    );
    rows.push({
      name: `count on ${n.toLocaleString('en-US')} 16-token shards: time per shard`,
      ours: perShard[n],
      reference: perShard[SIZES[0]],
      unit: 'ms/shard',
      ratio: perShard[SIZES[0]] / perShard[n],
      note: `reference: per shard at ${SIZES[0].toLocaleString('en-US')}; 1.00 = flat`,
    });
  }
  return rows;
}
