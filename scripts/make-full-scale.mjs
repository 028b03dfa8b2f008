#!/usr/bin/env node
/**
 * make-full-scale.mjs — the full-scale stand-in for search and scan benchmarks: a dataset root
 * with the real layout of the dataset card (2,098 manifest entries, 52,428,800,001 tokens =
 * 400,000 updates × 131,072 + 1 look-ahead token) that costs ~215 MB of disk: entries 0..2096
 * are hard links to two real 25,000,000-token shards (alternating), the last entry is a
 * 3,800,001-token file (a copy of the first tokens of the first shard), as in the real data.
 *
 *   node scripts/make-full-scale.mjs [--out DIR=bench-data-full] [--entries N=2098] [--force]
 *
 * The two source shards are written by scripts/make-sample.mjs (`--full-size --shards 3`) into
 * DIR/source/ (reused when up to date). The manifest carries real sha256 (each source hashed
 * once), so `verify` works; the page cache holds only the two sources, so a warm count of the
 * stand-in measures scan speed at full scale. DIR is git-ignored.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { REPO_ROOT, makeSample } from './make-sample.mjs';

const SHARD_TOKENS = 25_000_000;
const LAST_TOKENS = 3_800_001;

function sha256File(file) {
  const h = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.allocUnsafe(8 << 20);
  try {
    for (let n; (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0;) h.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}

/**
 * Writes the stand-in.
 * @param {{ out?: string, entries?: number, force?: boolean, quiet?: boolean }} [o]
 * @returns {Promise<{ root: string, entries: number, storedTokens: number }>}
 */
export async function makeFullScale(o = {}) {
  const root = path.resolve(o.out ?? path.join(REPO_ROOT, 'bench-data-full'));
  const entries = o.entries ?? 2098;
  if (!(Number.isSafeInteger(entries) && entries >= 3)) throw new Error(`--entries must be an integer ≥ 3 (got ${entries})`);
  const log = o.quiet ? () => {} : (s) => process.stderr.write(`make-full-scale: ${s}\n`);
  const storedTokens = (entries - 1) * SHARD_TOKENS + LAST_TOKENS;
  const marker = path.join(root, 'manifest.json');
  if (!o.force && fs.existsSync(marker)) {
    try {
      const m = JSON.parse(fs.readFileSync(marker, 'utf8'));
      if (
        m.created_by === 'scripts/make-full-scale.mjs' &&
        m.entries === entries &&
        fs.existsSync(path.join(root, 'shard_manifest.jsonl'))
      ) {
        log(`${root} is up to date (${entries} entries); --force rebuilds it`);
        return { root, entries, storedTokens };
      }
    } catch {
      /* rebuild */
    }
  }
  const src = path.join(root, 'source');
  fs.mkdirSync(root, { recursive: true });
  const made = await makeSample({ fullSize: true, shards: 3, out: src, quiet: o.quiet });
  const sources = [0, 1].map((i) => path.join(src, 'shards', `tokens_00000${i}.u32`));
  for (const s of sources) if (fs.statSync(s).size !== SHARD_TOKENS * 4) throw new Error(`${s}: expected ${SHARD_TOKENS} tokens`);
  log('hashing the two source shards');
  const hashes = sources.map(sha256File);
  const shardDir = path.join(root, 'shards');
  fs.rmSync(shardDir, { recursive: true, force: true });
  fs.mkdirSync(shardDir);
  const lines = [];
  for (let i = 0; i < entries; i++) {
    const name = `shards/tokens_${String(i).padStart(6, '0')}.u32`;
    const file = path.join(root, name);
    if (i < entries - 1) {
      fs.linkSync(sources[i % 2], file);
      lines.push(JSON.stringify({ shard: name, start_token: i * SHARD_TOKENS, num_tokens: SHARD_TOKENS, sha256: hashes[i % 2] }));
    } else {
      const fd = fs.openSync(sources[0], 'r');
      const buf = Buffer.allocUnsafe(LAST_TOKENS * 4);
      fs.readSync(fd, buf, 0, buf.length, 0);
      fs.closeSync(fd);
      fs.writeFileSync(file, buf);
      lines.push(
        JSON.stringify({
          shard: name,
          start_token: i * SHARD_TOKENS,
          num_tokens: LAST_TOKENS,
          sha256: crypto.createHash('sha256').update(buf).digest('hex'),
        }),
      );
    }
  }
  fs.writeFileSync(path.join(root, 'shard_manifest.jsonl'), lines.join('\n') + '\n');
  fs.mkdirSync(path.join(root, 'tokenizer'), { recursive: true });
  fs.copyFileSync(path.join(made.root, 'tokenizer', 'tokenizer.json'), path.join(root, 'tokenizer', 'tokenizer.json'));
  fs.writeFileSync(
    marker,
    JSON.stringify(
      {
        name: 'token-shard-inspector-full-scale-stand-in',
        created_by: 'scripts/make-full-scale.mjs',
        entries,
        description: `${entries} manifest entries in the dataset card's layout; entries 0..${entries - 2} are hard links to source/shards/tokens_000000.u32 and tokens_000001.u32 (alternating), the last is the first ${LAST_TOKENS.toLocaleString('en-US')} tokens of tokens_000000.u32`,
        stored_tokens: storedTokens,
        updates: Math.floor((storedTokens - 1) / 131072),
      },
      null,
      2,
    ) + '\n',
  );
  log(`${root}: ${entries} entries, ${storedTokens.toLocaleString('en-US')} tokens`);
  return { root, entries, storedTokens };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, entries: { type: 'string' }, force: { type: 'boolean' }, quiet: { type: 'boolean' } },
  });
  makeFullScale({ out: values.out, entries: values.entries ? Number(values.entries) : undefined, force: values.force, quiet: values.quiet })
    .then((r) => console.log(`${r.root}: ${r.entries} entries, ${r.storedTokens.toLocaleString('en-US')} tokens`))
    .catch((err) => {
      console.error(`make-full-scale: ${err.message}`);
      process.exit(1);
    });
}
