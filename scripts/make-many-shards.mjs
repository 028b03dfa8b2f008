#!/usr/bin/env node
/**
 * A dataset with very many tiny shards, for the memory/time check of verifying a 100,000-line
 * manifest (bounded memory, linear time): N shards of T tokens each (ids from a fixed LCG, an EOS every 50
 * tokens), with their sha256 in shard_manifest.jsonl. Files go into 100 sub-folders.
 * Default output: `many-shards/<N>/` (git-ignored); an existing dataset there is kept.
 *
 * Usage: node scripts/make-many-shards.mjs [--out DIR] [--shards N=100000] [--tokens T=16]
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i >= 0 ? process.argv[i + 1] : d;
};
const N = Number(arg('shards', 100000)),
  T = Number(arg('tokens', 16));
if (!Number.isSafeInteger(N) || N < 1 || !Number.isSafeInteger(T) || T < 1) {
  console.error('usage: node scripts/make-many-shards.mjs [--out DIR] [--shards N] [--tokens T]');
  process.exit(2);
}
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = arg('out') ?? path.join(repo, 'many-shards', String(N));
if (!arg('out') && fs.existsSync(path.join(out, 'shard_manifest.jsonl'))) {
  console.log(`${out} exists; kept`);
  process.exit(0);
}
fs.mkdirSync(out, { recursive: true });
let x = 12345;
const lines = [];
for (let i = 0; i < N; i++) {
  const ids = new Uint32Array(T);
  for (let j = 0; j < T; j++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    ids[j] = (i * T + j) % 50 === 49 ? 100257 : (x >>> 8) % 100000;
  }
  const rel = `shards/${String(i % 100).padStart(2, '0')}/tokens_${String(i).padStart(6, '0')}.u32`;
  fs.mkdirSync(path.join(out, path.dirname(rel)), { recursive: true });
  const buf = Buffer.from(ids.buffer);
  fs.writeFileSync(path.join(out, rel), buf);
  lines.push(
    JSON.stringify({ shard: rel, start_token: i * T, num_tokens: T, sha256: crypto.createHash('sha256').update(buf).digest('hex') }),
  );
}
fs.writeFileSync(path.join(out, 'shard_manifest.jsonl'), lines.join('\n') + '\n');
fs.writeFileSync(
  path.join(out, 'manifest.json'),
  JSON.stringify({ global_tokens_per_update: 1024, sequence_length: 64, eos_token_id: 100257 }) + '\n',
);
console.log(`${N} shards of ${T} tokens in ${out}`);
