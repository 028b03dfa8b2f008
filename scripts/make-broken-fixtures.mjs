#!/usr/bin/env node
/**
 * make-broken-fixtures.mjs — writes a corpus of small dataset roots, one folder per case, each
 * broken (or merely odd) in one way that the core must report, plus `cases.json` describing
 * every case and what the core should say about it.
 *
 *   node scripts/make-broken-fixtures.mjs [--out DIR=out/fixtures/broken] [--sample DIR=sample] [--no-sparse]
 *
 * Tokens are real: they are the first tokens of the sample stream (made with
 * scripts/make-sample.mjs when missing). Most cases are three shards of 1,000 tokens
 * (tokens [0, 3000) of the sample) with one thing wrong. Every sha256 in a manifest is the sha256
 * of the *intended* shard, so a damaged file also fails verification.
 *
 * cases.json: `{ generated_by, sample, cases: [{ name, dir, description, valid, expect }] }` where
 * `expect` holds
 * - `problems`: exactly what `parseShardManifest` + `validateShardFiles` + `readSideFile`
 *   (src/core/manifest.ts) should report, as `{ code, severity, line? }` (order does not matter);
 * - `sha256_mismatch`: shard paths whose content does not match the manifest's sha256
 *   (missing files are not listed: they have no content);
 * - `anomaly`: the `diagnoseIds` kind (src/core/tokenizer.ts) for the shard content, or null;
 * - `lone`: for a `.u32` with no manifest, `{ file, size_bytes, tokens, trailing_bytes }`;
 * - `regions` (beyond-4GiB only): where real tokens sit and which sample tokens they are.
 *
 * The beyond-4GiB case is a sparse 4.8 GB shard (ftruncate; only ~1.6 MB on disk) so byte
 * offsets pass 2^32; its sha256 is computed from the written regions plus zeros (~3 s). Use --no-sparse to leave it out
 * (it is also left out, and marked skipped, on filesystems that do not keep the file sparse).
 * The output folder is replaced on every run; a folder without our cases.json is never deleted.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { REPO_ROOT, makeSample, DEFAULTS } from './make-sample.mjs';

const CREATED_BY = 'scripts/make-broken-fixtures.mjs';
/** Bumped when the corpus changes. */
export const FIXTURES_VERSION = 1;
/** Tokens per shard in the small cases. */
const SMALL = 1000;

/**
 * Reads global tokens [start, start + count) of a dataset root (via its shard_manifest.jsonl).
 * @param {string} root
 * @param {number} start
 * @param {number} count
 * @returns {Uint32Array}
 */
export function readTokens(root, start, count) {
  const entries = fs
    .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .sort((a, b) => a.start_token - b.start_token);
  const out = new Uint32Array(count);
  let pos = start;
  for (const e of entries) {
    const end = e.start_token + e.num_tokens;
    if (end <= pos || pos >= start + count) continue;
    const a = pos - e.start_token,
      n = Math.min(end, start + count) - pos;
    const buf = Buffer.alloc(n * 4);
    const fd = fs.openSync(path.join(root, e.shard), 'r');
    try {
      fs.readSync(fd, buf, 0, buf.length, a * 4);
    } finally {
      fs.closeSync(fd);
    }
    for (let i = 0; i < n; i++) out[pos - start + i] = buf.readUInt32LE(4 * i);
    pos += n;
  }
  if (pos !== start + count) throw new Error(`${root}: tokens [${start}, ${start + count}) are not all in the stream`);
  return out;
}

/** Little-endian bytes of uint32 ids. */
function u32le(ids) {
  const b = Buffer.alloc(ids.length * 4);
  for (let i = 0; i < ids.length; i++) b.writeUInt32LE(ids[i], 4 * i);
  return b;
}

const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');
const shardName = (i) => `shards/tokens_${String(i).padStart(6, '0')}.u32`;

/**
 * Writes a case folder: files (path → Buffer) and a manifest text.
 * @param {string} dir
 * @param {Record<string, Buffer>} files relative path → contents
 * @param {string | null} manifestText shard_manifest.jsonl contents (null: none)
 */
function writeCase(dir, files, manifestText) {
  fs.mkdirSync(path.join(dir, 'shards'), { recursive: true });
  for (const [rel, buf] of Object.entries(files)) fs.writeFileSync(path.join(dir, rel), buf);
  if (manifestText !== null) fs.writeFileSync(path.join(dir, 'shard_manifest.jsonl'), manifestText);
}

const line = (e) => JSON.stringify(e);

/**
 * @typedef {object} FixtureCase
 * @property {string} name
 * @property {string} dir folder relative to the corpus root
 * @property {string} description
 * @property {boolean} valid true when the core should open it without errors
 * @property {Record<string, any>} expect
 * @property {string} [skipped] why the case was not written
 */

/**
 * Writes the corpus.
 * @param {{ out?: string, sampleRoot?: string, sparse?: boolean, quiet?: boolean }} [options]
 * @returns {Promise<{ out: string, cases: FixtureCase[] }>}
 */
export async function makeBrokenFixtures(options = {}) {
  const out = path.resolve(options.out ?? path.join(REPO_ROOT, 'out', 'fixtures', 'broken'));
  const log = options.quiet ? () => {} : (s) => process.stderr.write(`make-broken-fixtures: ${s}\n`);
  const sampleRoot = path.resolve(options.sampleRoot ?? path.join(REPO_ROOT, 'sample'));
  const sparse = options.sparse ?? process.platform !== 'win32';
  if (!fs.existsSync(path.join(sampleRoot, 'shard_manifest.jsonl'))) {
    log(`no sample at ${sampleRoot}; making it`);
    await makeSample({ out: sampleRoot, quiet: options.quiet });
  }

  if (fs.existsSync(out)) {
    let ours = fs.readdirSync(out).length === 0;
    try {
      ours ||= JSON.parse(fs.readFileSync(path.join(out, 'cases.json'), 'utf8')).generated_by === CREATED_BY;
    } catch {
      /* not ours */
    }
    if (!ours) throw new Error(`${out} exists and has no cases.json from ${CREATED_BY}; not touching it`);
    fs.rmSync(out, { recursive: true, force: true });
  }
  fs.mkdirSync(out, { recursive: true });

  const ids = readTokens(sampleRoot, 0, 3 * SMALL);
  const shardBufs = [0, 1, 2].map((i) => u32le(ids.subarray(i * SMALL, (i + 1) * SMALL)));
  const entries = shardBufs.map((b, i) => ({ shard: shardName(i), start_token: i * SMALL, num_tokens: SMALL, sha256: sha256(b) }));
  const files = Object.fromEntries(shardBufs.map((b, i) => [shardName(i), b]));
  const goodManifest = entries.map(line).join('\n') + '\n';
  /** @type {FixtureCase[]} */
  const cases = [];
  const add = (name, description, valid, expect, write) => {
    const dir = path.join(out, name);
    write(dir);
    cases.push({ name, dir: name, description, valid, expect: { problems: [], sha256_mismatch: [], anomaly: null, ...expect } });
  };
  const E = (code, line) => ({ code, severity: 'error', ...(line ? { line } : {}) });
  const W = (code, line) => ({ code, severity: 'warning', ...(line ? { line } : {}) });

  add('valid', 'Three good shards of 1,000 tokens: the control case.', true, {}, (d) => writeCase(d, files, goodManifest));

  add(
    'truncated-file',
    'shards/tokens_000001.u32 holds 600 of its 1,000 tokens (cut at a token boundary).',
    false,
    { problems: [E('size-mismatch', 2)], sha256_mismatch: [shardName(1)] },
    (d) => writeCase(d, { ...files, [shardName(1)]: shardBufs[1].subarray(0, 600 * 4) }, goodManifest),
  );

  add(
    'size-not-multiple-of-4',
    'shards/tokens_000001.u32 lost its last 2 bytes (3,998 bytes): not whole uint32 tokens.',
    false,
    { problems: [E('size-not-multiple-of-4', 2)], sha256_mismatch: [shardName(1)] },
    (d) => writeCase(d, { ...files, [shardName(1)]: shardBufs[1].subarray(0, SMALL * 4 - 2) }, goodManifest),
  );

  add('missing-file', 'shards/tokens_000002.u32 is listed but absent.', false, { problems: [E('missing-file', 3)] }, (d) => {
    const f = { ...files };
    delete f[shardName(2)];
    writeCase(d, f, goodManifest);
  });

  add(
    'gap',
    'Line 3 says shards/tokens_000002.u32 starts at token 2,500; the previous shard ends at 2,000 (gap of 500).',
    false,
    { problems: [E('gap', 3)] },
    (d) => writeCase(d, files, [entries[0], entries[1], { ...entries[2], start_token: 2500 }].map(line).join('\n') + '\n'),
  );

  add(
    'overlap',
    'Line 3 says shards/tokens_000002.u32 starts at token 1,500, inside the previous shard [1,000, 2,000).',
    false,
    { problems: [E('overlap', 3)] },
    (d) => writeCase(d, files, [entries[0], entries[1], { ...entries[2], start_token: 1500 }].map(line).join('\n') + '\n'),
  );

  add(
    'duplicate',
    'The line for shards/tokens_000001.u32 appears twice (lines 2 and 3), so it also overlaps itself.',
    false,
    { problems: [E('duplicate-shard', 3), E('overlap', 3)] },
    (d) => writeCase(d, files, [entries[0], entries[1], entries[1], entries[2]].map(line).join('\n') + '\n'),
  );

  add(
    'malformed-line',
    'Line 2 is cut off mid-object (not JSON); skipping it leaves a gap before shards/tokens_000002.u32.',
    false,
    { problems: [E('malformed-json', 2), E('gap', 3)] },
    (d) => writeCase(d, files, [line(entries[0]), line(entries[1]).slice(0, 40), line(entries[2])].join('\n') + '\n'),
  );

  add(
    'unsorted-lines',
    'Valid, but lines are in the order 2, 0, 1: sorted by start_token before use (warning only).',
    true,
    { problems: [W('unsorted', 2)] },
    (d) => writeCase(d, files, [entries[2], entries[0], entries[1]].map(line).join('\n') + '\n'),
  );

  add('crlf', 'Valid, with CRLF line ends.', true, {}, (d) => writeCase(d, files, entries.map(line).join('\r\n') + '\r\n'));

  add('bom', 'Valid, with a UTF-8 byte order mark before the first line.', true, {}, (d) => writeCase(d, files, '\ufeff' + goodManifest));

  add('empty-manifest', 'shard_manifest.jsonl is an empty file (shard files present).', false, { problems: [E('empty-manifest')] }, (d) =>
    writeCase(d, files, ''),
  );

  add(
    'not-from-zero',
    'The shards are listed at 1,000..4,000: the stream does not start at token 0.',
    false,
    { problems: [E('not-from-zero', 1)] },
    (d) =>
      writeCase(
        d,
        files,
        entries
          .map((e) => ({ ...e, start_token: e.start_token + SMALL }))
          .map(line)
          .join('\n') + '\n',
      ),
  );

  add(
    'missing-field',
    'Line 2 has no start_token (and is skipped, leaving a gap); line 3 has no sha256 (warning: cannot be verified).',
    false,
    { problems: [E('missing-field', 2), W('missing-field', 3), E('gap', 3)] },
    (d) => {
      const { start_token: _s, ...noStart } = entries[1];
      const { sha256: _h, ...noSha } = entries[2];
      writeCase(d, files, [line(entries[0]), line(noStart), line(noSha)].join('\n') + '\n');
    },
  );

  add(
    'bad-field',
    'Line 2 has num_tokens "1000" (a string) and a 63-digit sha256; it is skipped, leaving a gap.',
    false,
    { problems: [E('bad-field', 2), E('gap', 3)] },
    (d) =>
      writeCase(
        d,
        files,
        [entries[0], { ...entries[1], num_tokens: '1000', sha256: entries[1].sha256.slice(1) }, entries[2]].map(line).join('\n') + '\n',
      ),
  );

  add(
    'not-an-object',
    'Line 2 is a JSON array, not an object; it is skipped, leaving a gap.',
    false,
    { problems: [E('not-an-object', 2), E('gap', 3)] },
    (d) => writeCase(d, files, [line(entries[0]), JSON.stringify([entries[1].shard, 1000, 1000]), line(entries[2])].join('\n') + '\n'),
  );

  add(
    'sha256-mismatch',
    'Sizes are right but token 500 of shards/tokens_000001.u32 was changed: only verification (sha256) catches it.',
    false,
    { sha256_mismatch: [shardName(1)] },
    (d) => {
      const bad = Buffer.from(shardBufs[1]);
      bad.writeUInt32LE((bad.readUInt32LE(2000) + 1) % 100256, 2000);
      writeCase(d, { ...files, [shardName(1)]: bad }, goodManifest);
    },
  );

  add(
    'bad-provenance',
    'Shards are fine; manifest.json is not JSON (it ends on line 2 inside an object).',
    false,
    { problems: [E('bad-provenance', 2)] },
    (d) => {
      writeCase(d, files, goodManifest);
      fs.writeFileSync(path.join(d, 'manifest.json'), '{"name": "oops",\n');
    },
  );

  // dtype mix-ups: real ids written with the wrong width.
  {
    const wide = readTokens(sampleRoot, 0, 200_000);
    const narrow = [];
    for (const v of wide) if (v < 65536 && narrow.length < 2 * 65536) narrow.push(v);
    const b16 = Buffer.alloc(narrow.length * 2);
    narrow.forEach((v, i) => b16.writeUInt16LE(v, 2 * i));
    add(
      'uint16-as-uint32',
      'One shard of real ids (those < 65,536, the first 131,072 of them) written as uint16: read as uint32, each token packs two ids and is in the billions. Manifest and sizes are consistent.',
      true,
      { anomaly: 'uint16-as-uint32', tokens: b16.length / 4 },
      (d) =>
        writeCase(
          d,
          { [shardName(0)]: b16 },
          line({ shard: shardName(0), start_token: 0, num_tokens: b16.length / 4, sha256: sha256(b16) }) + '\n',
        ),
    );

    const b64 = Buffer.alloc(65536 * 8);
    for (let i = 0; i < 65536; i++) b64.writeUInt32LE(wide[i], 8 * i);
    add(
      'every-other-zero',
      'One shard of real ids written as uint64 (each id followed by a zero uint32): every other token is 0. Manifest and sizes are consistent.',
      true,
      { anomaly: 'uint32-as-uint16', tokens: b64.length / 4 },
      (d) =>
        writeCase(
          d,
          { [shardName(0)]: b64 },
          line({ shard: shardName(0), start_token: 0, num_tokens: b64.length / 4, sha256: sha256(b64) }) + '\n',
        ),
    );
  }

  // A lone .u32 (no manifest) with 3 trailing bytes.
  {
    const body = u32le(ids.subarray(0, SMALL + 1));
    const lone = body.subarray(0, SMALL * 4 + 3);
    add(
      'lone-trailing-bytes',
      'lone.u32 with no shard_manifest.jsonl: 1,000 real tokens plus 3 bytes of a 1,001st.',
      false,
      { lone: { file: 'lone.u32', size_bytes: lone.length, tokens: SMALL, trailing_bytes: 3 } },
      (d) => {
        fs.mkdirSync(d, { recursive: true });
        fs.writeFileSync(path.join(d, 'lone.u32'), lone);
      },
    );
  }

  // beyond-4GiB: sparse 1.2e9-token shard, so byte offsets pass 2^32.
  {
    const name = 'beyond-4GiB';
    const G = DEFAULTS.globalTokensPerUpdate;
    const first = 1_200_000_000; // tokens in shard 0 (4.8e9 bytes)
    const updates = Math.ceil(first / G); // 9,156: the last update ends in shard 1
    const second = updates * G + 1 - first; // 95,233 tokens: stored = updates·G + 1
    const tail = 2 * G; // real tokens at the end of shard 0
    const at4g = 2 ** 30; // token whose byte offset is exactly 2^32
    const regions = [
      { start_token: 0, num_tokens: 4096, sample_start_token: 0, note: 'head of shard 0' },
      { start_token: at4g - 2048, num_tokens: 4096, sample_start_token: 100_000, note: 'around byte offset 2^32 (token 2^30)' },
      {
        start_token: first - tail,
        num_tokens: tail + second,
        sample_start_token: 0,
        note: 'last 262,144 tokens of shard 0 and all of shard 1 (one stretch of the sample)',
      },
    ];
    const description = `Two shards: shards/tokens_000000.u32 is a sparse file of ${first.toLocaleString('en-US')} tokens (4.8 GB, byte offsets past 2^32; zeros except the regions listed), shards/tokens_000001.u32 starts at token ${first.toLocaleString('en-US')}. Stored ${(updates * G + 1).toLocaleString('en-US')} tokens = ${updates} updates × ${G} + 1. Valid.`;
    if (!sparse) {
      cases.push({ name, dir: name, description, valid: true, expect: {}, skipped: '--no-sparse' });
    } else {
      const t0 = performance.now();
      const d = path.join(out, name);
      fs.mkdirSync(path.join(d, 'shards'), { recursive: true });
      const tailIds = readTokens(sampleRoot, 0, tail + second);
      const f0 = path.join(d, shardName(0));
      const fd = fs.openSync(f0, 'w');
      let sparseOk = false;
      // The file's sha256 is computed from what we write (regions in order, zeros between), not
      // by reading it back: reading 4.8 GB of holes costs the kernel ~10 s, hashing zeros ~3 s.
      const h0 = crypto.createHash('sha256');
      const zeros = Buffer.alloc(16 << 20);
      const hashZeros = (nBytes) => {
        for (; nBytes > 0; nBytes -= zeros.length) h0.update(nBytes >= zeros.length ? zeros : zeros.subarray(0, nBytes));
      };
      try {
        fs.ftruncateSync(fd, first * 4);
        let at = 0; // bytes hashed so far
        for (const r of regions) {
          // the part of the region inside shard 0 (the tail region continues into shard 1)
          const bytes = u32le(readTokens(sampleRoot, r.sample_start_token, Math.min(r.num_tokens, first - r.start_token)));
          fs.writeSync(fd, bytes, 0, bytes.length, r.start_token * 4);
          hashZeros(r.start_token * 4 - at);
          h0.update(bytes);
          at = r.start_token * 4 + bytes.length;
        }
        hashZeros(first * 4 - at);
        sparseOk = fs.fstatSync(fd).blocks * 512 < 256 * 1024 * 1024;
      } finally {
        fs.closeSync(fd);
      }
      if (!sparseOk) {
        fs.rmSync(d, { recursive: true, force: true });
        cases.push({
          name,
          dir: name,
          description,
          valid: true,
          expect: {},
          skipped: 'the filesystem did not keep the 4.8 GB file sparse',
        });
      } else {
        const s1 = u32le(tailIds.subarray(tail));
        fs.writeFileSync(path.join(d, shardName(1)), s1);
        fs.writeFileSync(
          path.join(d, 'shard_manifest.jsonl'),
          line({ shard: shardName(0), start_token: 0, num_tokens: first, sha256: h0.digest('hex') }) +
            '\n' +
            line({ shard: shardName(1), start_token: first, num_tokens: second, sha256: sha256(s1) }) +
            '\n',
        );
        cases.push({
          name,
          dir: name,
          description,
          valid: true,
          expect: { problems: [], sha256_mismatch: [], anomaly: null, stored_tokens: updates * G + 1, updates, regions },
        });
        log(`beyond-4GiB: sparse shard written and hashed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      }
    }
  }

  const sampleManifest = JSON.parse(fs.readFileSync(path.join(sampleRoot, 'manifest.json'), 'utf8'));
  const doc = {
    generated_by: CREATED_BY,
    fixtures_version: FIXTURES_VERSION,
    sample: {
      root: path.relative(out, sampleRoot),
      inputs_sha256: sampleManifest.parameters?.inputs_sha256,
      tokens_used: 'the first tokens of the sample stream',
    },
    problem_codes_from: 'src/core/manifest.ts (ProblemCode); anomaly kinds from src/core/tokenizer.ts (diagnoseIds)',
    expect_format:
      'problems: exact multiset of {code, severity, line?} from parseShardManifest + validateShardFiles + readSideFile(manifest.json); sha256_mismatch: shards whose bytes do not hash to the manifest sha256; anomaly: diagnoseIds kind of the shard content or null',
    cases,
  };
  fs.writeFileSync(path.join(out, 'cases.json'), JSON.stringify(doc, null, 2) + '\n');
  return { out, cases };
}

async function main() {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      sample: { type: 'string' },
      'no-sparse': { type: 'boolean' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(
      'usage: node scripts/make-broken-fixtures.mjs [--out DIR=out/fixtures/broken] [--sample DIR=sample] [--no-sparse] [--quiet]',
    );
    return;
  }
  const t0 = performance.now();
  const r = await makeBrokenFixtures({
    out: values.out,
    sampleRoot: values.sample,
    sparse: values['no-sparse'] ? false : undefined,
    quiet: values.quiet,
  });
  const written = r.cases.filter((c) => !c.skipped);
  const skipped = r.cases.filter((c) => c.skipped).map((c) => `${c.name} (${c.skipped})`);
  console.log(
    `${path.relative(process.cwd(), r.out) || r.out}: ${written.length} cases` +
      (skipped.length ? `, skipped ${skipped.join(', ')}` : '') +
      ` in ${((performance.now() - t0) / 1000).toFixed(1)} s; see cases.json`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`make-broken-fixtures: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  });
}
