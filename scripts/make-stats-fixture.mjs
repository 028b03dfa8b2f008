#!/usr/bin/env node
/**
 * make-stats-fixture.mjs — a small dataset root (the sample's first 6 updates, re-cut into shards of
 * 300,000 tokens so updates cross shard edges) with oddities planted for the per-update statistics
 * tests. Every planted value is derived from the sample's own tokens; nothing is typed by hand
 * except the positions. The tests compare our statistics with scripts/reference_stats.py (numpy), so
 * this script only has to make the cases *exist*:
 *   update 1  rows 3 and 9 copy row 1, row 10 copies row 9 (3 duplicate sequences); update 0 ends with EOS
 *   update 2  unknown ids (100300, 4,000,000,000), special non-EOS ids (<|pad|>, <|fim_prefix|>),
 *             a 200-token block repeated 6 times (13-gram repeats)
 *   update 3  no EOS at all (EOS replaced by the token before it): longest run = G, no document starts
 *   update 4  runs of consecutive EOS (empty documents), an EOS in its first and last position
 *   update 5  all G tokens equal (one distinct id, every row a duplicate)
 *
 *   node scripts/make-stats-fixture.mjs [--out DIR=out/fixtures/stats] [--sample DIR=sample]
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: argv } = parseArgs({ options: { out: { type: 'string' }, sample: { type: 'string' } } });
const out = path.resolve(argv.out ?? path.join(repo, 'out', 'fixtures', 'stats'));
const sample = path.resolve(argv.sample ?? path.join(repo, 'sample'));
if (!fs.existsSync(path.join(sample, 'shard_manifest.jsonl')))
  execFileSync(process.execPath, [path.join(repo, 'scripts', 'make-sample.mjs')], { cwd: repo, stdio: 'inherit' });

const G = 131072,
  L = 1024,
  EOS = 100257,
  UPDATES = 6,
  SHARD = 300_000;
const N = G * UPDATES + 1;
// Read the sample's first N tokens through its manifest (sorted by start_token).
const entries = fs
  .readFileSync(path.join(sample, 'shard_manifest.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l))
  .sort((a, b) => a.start_token - b.start_token);
const t = new Uint32Array(N);
for (const e of entries) {
  if (e.start_token >= N) break;
  const buf = fs.readFileSync(path.join(sample, e.shard));
  const ids = new Uint32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  t.set(ids.subarray(0, Math.min(ids.length, N - e.start_token)), e.start_token);
}
const row = (k, r) => G * k + L * r;
// update 0 ends with EOS
t[G - 1] = EOS;
// update 1: duplicate rows
t.copyWithin(row(1, 3), row(1, 1), row(1, 2));
t.copyWithin(row(1, 9), row(1, 1), row(1, 2));
t.copyWithin(row(1, 10), row(1, 9), row(1, 10));
// update 2: unknown and special ids, a repeated block
const u2 = G * 2;
t[u2 + 5] = 100300;
t[u2 + 70_000] = 4_000_000_000;
t[u2 + 70_001] = 100300;
t[u2 + 100] = 100277;
t[u2 + 90_000] = 100258;
for (let rep = 1; rep < 6; rep++) t.copyWithin(u2 + 20_000 + 200 * rep, u2 + 20_000, u2 + 20_200);
// update 3: no EOS
for (let i = G * 3; i < G * 4; i++) if (t[i] === EOS) t[i] = i > 0 ? (t[i - 1] === EOS ? 13 : t[i - 1]) : 13;
// update 4: empty documents, EOS first and last
const u4 = G * 4;
t[u4] = EOS;
t[u4 + G - 1] = EOS;
for (let i = 0; i < 7; i++) t[u4 + 5000 + i] = EOS;
for (let i = 0; i < 3; i++) t[u4 + 60_000 + 2 * i] = EOS;
// update 5: one id everywhere
t.fill(t[G * 5 + 17] === EOS ? 279 : t[G * 5 + 17], G * 5, G * 6);

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(path.join(out, 'shards'), { recursive: true });
fs.mkdirSync(path.join(out, 'tokenizer'), { recursive: true });
fs.copyFileSync(path.join(sample, 'tokenizer', 'tokenizer.json'), path.join(out, 'tokenizer', 'tokenizer.json'));
const lines = [];
for (let s = 0, i = 0; s < N; s += SHARD, i++) {
  const ids = t.subarray(s, Math.min(N, s + SHARD));
  const bytes = Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength);
  const name = `shards/tokens_${String(i).padStart(6, '0')}.u32`;
  fs.writeFileSync(path.join(out, name), bytes);
  lines.push(
    JSON.stringify({
      shard: name,
      start_token: s,
      num_tokens: ids.length,
      sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
    }),
  );
}
fs.writeFileSync(path.join(out, 'shard_manifest.jsonl'), lines.join('\n') + '\n');
fs.writeFileSync(
  path.join(out, 'manifest.json'),
  JSON.stringify(
    {
      created_by: 'scripts/make-stats-fixture.mjs',
      from: 'sample',
      updates: UPDATES,
      global_tokens_per_update: G,
      sequence_length: L,
      eos_token_id: EOS,
    },
    null,
    2,
  ) + '\n',
);
console.log(`stats fixture in ${path.relative(repo, out)}: ${UPDATES} updates, ${lines.length} shards`);
