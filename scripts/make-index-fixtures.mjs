#!/usr/bin/env node
/**
 * Datasets with planted stream anomalies for the stream-index tests, made from the sample
 * (`npm run sample`). Writes into OUT (default `test-results/index-fixtures`, git-ignored):
 *
 * - `anomalies/`: the sample's tokens with, each planted at a place chosen from the data (never a
 *   hand-typed offset):
 *   1. removed EOS: every EOS in a window of 150,000 tokens around the edge of shards 4 and 5 is
 *      replaced by the id before it → one EOS-free run > 100,000 tokens spanning two shards;
 *   2. a special token inside a document: the middle token of a document in shard 2 becomes the
 *      first special id of tokenizer.json other than EOS;
 *   3. unknown ids in shard 7: three ids ≥ the vocabulary size (vocab, vocab + 99, 4,000,000,000);
 *   4. a duplicated document: the first document wholly inside shard 1 is copied (with its EOS)
 *      over the start of a longer document in shard 8;
 *   5. uint16 data: shard 9 holds the ids of shards 0 and 1 (first 500,000 of them, all < 65,536
 *      after `% 65536`) written as uint16 pairs, so read as uint32 they are in the billions.
 *   `shard_manifest.jsonl` carries the new sha256s; `fixture.json` lists what was planted where.
 * - `uint16/`: a one-shard dataset that is wholly uint16 data (the dtype look alone).
 *
 * Usage: node scripts/make-index-fixtures.mjs [--out DIR] [--sample DIR]
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

const sample = path.resolve(arg('sample', path.join(REPO, 'sample')));
const out = path.resolve(arg('out', path.join(REPO, 'test-results', 'index-fixtures')));

function readManifest(root) {
  return fs
    .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
    .sort((a, b) => a.start_token - b.start_token);
}

function readShard(root, e) {
  const b = fs.readFileSync(path.join(root, e.shard));
  return new Uint32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
}

function writeDataset(root, shards, entries, extra = {}) {
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(path.join(root, 'shards'), { recursive: true });
  fs.mkdirSync(path.join(root, 'tokenizer'), { recursive: true });
  fs.copyFileSync(path.join(sample, 'tokenizer', 'tokenizer.json'), path.join(root, 'tokenizer', 'tokenizer.json'));
  if (fs.existsSync(path.join(sample, 'tokenizer', 'tokenizer_config.json'))) {
    fs.copyFileSync(path.join(sample, 'tokenizer', 'tokenizer_config.json'), path.join(root, 'tokenizer', 'tokenizer_config.json'));
  }
  fs.copyFileSync(path.join(sample, 'manifest.json'), path.join(root, 'manifest.json'));
  const lines = [];
  shards.forEach((ids, i) => {
    const e = entries[i];
    const buf = Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength);
    fs.writeFileSync(path.join(root, e.shard), buf);
    lines.push(
      JSON.stringify({
        shard: e.shard,
        start_token: e.start_token,
        num_tokens: e.num_tokens,
        sha256: crypto.createHash('sha256').update(buf).digest('hex'),
      }),
    );
  });
  fs.writeFileSync(path.join(root, 'shard_manifest.jsonl'), lines.join('\n') + '\n');
  fs.writeFileSync(
    path.join(root, 'fixture.json'),
    JSON.stringify({ made_by: 'scripts/make-index-fixtures.mjs', ...extra }, null, 2) + '\n',
  );
}

const meta = JSON.parse(fs.readFileSync(path.join(sample, 'manifest.json'), 'utf8'));
const EOS = meta.eos_token_id ?? 100257;
const tok = JSON.parse(fs.readFileSync(path.join(sample, 'tokenizer', 'tokenizer.json'), 'utf8'));
let vocab = 0;
for (const id of Object.values(tok.model.vocab)) vocab = Math.max(vocab, id + 1);
for (const t of tok.added_tokens ?? []) vocab = Math.max(vocab, t.id + 1);
const special = (tok.added_tokens ?? [])
  .filter((t) => t.special && t.id !== EOS)
  .map((t) => t.id)
  .sort((a, b) => a - b)[0];

const entries = readManifest(sample);
if (entries.length < 10) throw new Error(`${sample}: expected the 10-shard sample`);
const shards = entries.map((e) => readShard(sample, e));
const planted = {};

/** EOS positions of one shard. */
const eosIn = (ids) => {
  const p = [];
  for (let i = 0; i < ids.length; i++) if (ids[i] === EOS) p.push(i);
  return p;
};

// 1. removed EOS around the edge of shards 4 and 5.
{
  const edge = entries[5].start_token;
  const from = edge - 75_000,
    to = edge + 75_000;
  const removed = [];
  for (const s of [4, 5]) {
    const ids = shards[s];
    for (let i = 0; i < ids.length; i++) {
      const g = entries[s].start_token + i;
      if (g >= from && g < to && ids[i] === EOS) {
        ids[i] = i > 0 ? ids[i - 1] : 13;
        removed.push(g);
      }
    }
  }
  planted.removed_eos = { window: [from, to], removed };
}
// 2. a special id in the middle of a document of shard 2.
{
  const p = eosIn(shards[2]);
  const a = p[1],
    b = p[2]; // a document between two EOS
  const mid = Math.floor((a + b) / 2);
  shards[2][mid] = special;
  planted.special = { id: special, offset: entries[2].start_token + mid };
}
// 3. unknown ids in shard 7.
{
  const ids = shards[7];
  const offs = [1000, 54_321, 200_000].map((x) => Math.min(ids.length - 2, x));
  const vals = [vocab, vocab + 99, 4_000_000_000];
  offs.forEach((o, i) => {
    if (ids[o] === EOS) throw new Error('picked an EOS');
    ids[o] = vals[i];
  });
  planted.unknown = { offsets: offs.map((o) => entries[7].start_token + o), ids: vals };
}
// 4. duplicate the first whole document of shard 1 at the start of a longer document in shard 8.
{
  const p1 = eosIn(shards[1]);
  const docStart = p1[0] + 1,
    docEnd = p1[1]; // [start, end) + EOS at end
  const doc = shards[1].slice(docStart, docEnd + 1);
  const p8 = eosIn(shards[8]);
  let at = -1;
  for (let j = 0; j + 1 < p8.length; j++)
    if (p8[j + 1] - p8[j] - 1 > doc.length + 1) {
      at = p8[j] + 1;
      break;
    }
  if (at < 0) throw new Error('no long enough document in shard 8');
  shards[8].set(doc, at);
  planted.duplicate = {
    original_start: entries[1].start_token + docStart,
    copy_start: entries[8].start_token + at,
    length: doc.length - 1,
  };
}
// 5. shard 9 as uint16 data.
{
  const n = entries[9].num_tokens;
  const u16 = new Uint16Array(2 * n);
  const src = [...shards[0], ...shards[1]];
  for (let i = 0; i < u16.length; i++) u16[i] = src[i % src.length] % 65536;
  shards[9] = new Uint32Array(u16.buffer);
  planted.uint16_shard = { shard: entries[9].shard, start_token: entries[9].start_token };
}
writeDataset(path.join(out, 'anomalies'), shards, entries, { eos: EOS, vocab_size: vocab, planted });

// A one-shard uint16 dataset (the look alone).
{
  const n = entries[0].num_tokens;
  const u16 = new Uint16Array(2 * n);
  const src = readShard(sample, entries[0]);
  for (let i = 0; i < u16.length; i++) u16[i] = src[i % src.length] % 65536;
  const e = { shard: 'shards/tokens_000000.u32', start_token: 0, num_tokens: n };
  writeDataset(path.join(out, 'uint16'), [new Uint32Array(u16.buffer)], [e], { eos: EOS, vocab_size: vocab });
}
console.log(`index fixtures in ${path.relative(process.cwd(), out) || '.'}: anomalies/, uint16/`);
