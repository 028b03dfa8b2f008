/**
 * Seeded fuzzing of the parsers of untrusted text: 10,000 mutations each of shard_manifest.jsonl text, manifest.json
 * text and token-id list text per run. Every case must end with the parse result or the project's
 * own typed error (DataError / RangeRequestError / problems in the result) — never an untyped
 * exception such as "Maximum call stack size exceeded" or "Cannot read properties of undefined" —
 * and no single case may take over 1 s of this process's CPU time (a bound on pathological inputs,
 * e.g. exponential backtracking or quadratic scans, measured per case with process.cpuUsage so that
 * other processes on a loaded machine do not count; not a benchmark).
 *
 * The seed is fixed (set TSI_FUZZ_SEED to explore others); a failure prints the seed, the case
 * number and the input, so it can be replayed.
 */
import * as assert from 'assert';
import { parse as parseCsvSync } from 'csv-parse/sync';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { parseDatatroveIndex, parseDatatroveMetadata } from '../../src/core/formats/datatrove';
import { checkDolmaRow, sidecarError } from '../../src/core/formats/dolma';
import { GrowableFloat64 } from '../../src/core/formats/growable';
import { parseLitdataChunk, parseLitdataIndex } from '../../src/core/formats/litdata';
import { mdsTokenColumn, parseMdsOffsets, parseMdsSample } from '../../src/core/formats/mds';
import { LLMC_HEADER_BYTES, parseLlmcHeader } from '../../src/core/formats/llmc';
import { parseMegatronIndex } from '../../src/core/formats/megatron';
import { parseNpyHeader } from '../../src/core/formats/npy';
import { execFileSync } from 'child_process';
import { DataError, RangeRequestError } from '../../src/core/errors';
import { extractIds, findIdsAt } from '../../src/core/idList';
import { parseShardManifest, parseSideFile, scheduleOverrides } from '../../src/core/manifest';
import { parseNumberInput } from '../../src/core/numbers';
import { limitDepth } from '../../src/core/safeJson';
import { jsonSafe, plainText, terminalSafe } from '../../src/core/untrusted';
import { repoRoot, sampleDir } from './fixtures';

const SEED = Number(process.env.TSI_FUZZ_SEED ?? 20261201);
const CASES = 10_000;
const CASE_LIMIT_MS = 1000;

/** mulberry32: a small seeded PRNG. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = [
  '[',
  ']',
  '{',
  '}',
  '"',
  ',',
  ':',
  '\\',
  '-',
  '+',
  '.',
  'e',
  'E',
  '0',
  '1',
  '9',
  ' ',
  '\n',
  '\r',
  '\t',
  'x',
  'null',
  'true',
  '1e309',
  '-0',
  '0x1F',
  '9007199254740993',
  '\u0000',
  '\u001b[31m',
  '\u009b',
  '\u202e',
  '\ud800',
  '🐋',
  '$(zap)',
  '[a](command:x)',
  '..',
  '/',
  '../..',
  '/etc/passwd',
  '"shard"',
  '"start_token"',
  '"num_tokens"',
  '"sha256"',
  '__proto__',
  '"__proto__"',
  'constructor',
];

/** One random edit of `s`. */
function mutateOnce(s: string, r: () => number): string {
  const pos = Math.floor(r() * (s.length + 1));
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)];
  switch (Math.floor(r() * 10)) {
    case 0:
      return s.slice(0, pos) + s.slice(pos + 1 + Math.floor(r() * 8)); // delete
    case 1:
    case 2:
      return s.slice(0, pos) + pick(ALPHABET) + s.slice(pos); // insert a token
    case 3:
      return s.slice(0, pos) + pick(ALPHABET) + s.slice(pos + 1); // replace a char
    case 4: {
      const a = Math.floor(r() * s.length),
        n = Math.floor(r() * 40);
      return s.slice(0, pos) + s.slice(a, a + n) + s.slice(pos);
    } // duplicate
    case 5:
      return s.slice(0, pos); // truncate
    case 6: {
      const lines = s.split('\n');
      const i = Math.floor(r() * lines.length),
        j = Math.floor(r() * lines.length);
      [lines[i], lines[j]] = [lines[j], lines[i]];
      return lines.join('\n');
    }
    case 7:
      return s.replace(/\d+/, () =>
        pick(['-1', '1.5', '1e400', '9007199254740993', '0', '16777217', '4294967296', '"12"', '[]', '{}', 'null']),
      );
    case 8: {
      // deep nesting, usually modest, sometimes 100,000 levels
      const n = r() < 0.05 ? 100_000 : Math.floor(r() * 600);
      const [o, c] = r() < 0.5 ? ['[', ']'] : ['{"a":', '}'];
      return s.slice(0, pos) + o.repeat(n) + (r() < 0.5 ? c.repeat(n) : '') + s.slice(pos);
    }
    default:
      return s.slice(0, pos) + String.fromCharCode(Math.floor(r() * 0x3000)) + s.slice(pos);
  }
}

function mutate(s: string, r: () => number): string {
  let t = s;
  for (let k = 1 + Math.floor(r() * 4); k > 0; k--) t = mutateOnce(t, r);
  return t;
}

/** Runs `target` on 10,000 mutations of the seeds; returns the failures (untyped throws, slow cases). */
function fuzz(name: string, seeds: string[], target: (text: string) => void): string[] {
  const r = rng(SEED ^ [...name].reduce((h, c) => Math.imul(h, 31) + c.charCodeAt(0), 7));
  const failures: string[] = [];
  let slowest = 0;
  for (let i = 0; i < CASES; i++) {
    const input = mutate(seeds[i % seeds.length], r);
    const t0 = process.cpuUsage();
    try {
      target(input);
    } catch (e) {
      if (!(e instanceof DataError || e instanceof RangeRequestError)) {
        failures.push(
          `${name} seed ${SEED} case ${i}: untyped ${(e as Error)?.name}: ${(e as Error)?.message} for ${JSON.stringify(input.slice(0, 200))}`,
        );
      }
    }
    const used = process.cpuUsage(t0);
    const ms = (used.user + used.system) / 1000;
    slowest = Math.max(slowest, ms);
    if (ms > CASE_LIMIT_MS)
      failures.push(
        `${name} seed ${SEED} case ${i}: ${ms.toFixed(0)} ms (> ${CASE_LIMIT_MS} ms CPU) for ${JSON.stringify(input.slice(0, 200))}`,
      );
    if (failures.length > 20) break;
  }
  process.stdout.write(`      ${name}: ${CASES.toLocaleString('en-US')} mutations, slowest case ${slowest.toFixed(1)} ms CPU\n`);
  return failures;
}

const SHA = 'a'.repeat(64);
const MANIFEST =
  [0, 1, 2]
    .map((i) => JSON.stringify({ shard: `shards/tokens_00000${i}.u32`, start_token: i * 1000, num_tokens: 1000, sha256: SHA }))
    .join('\n') + '\n';
const PROVENANCE = JSON.stringify(
  {
    name: 'x',
    global_tokens_per_update: 131072,
    sequence_length: 1024,
    eos_token_id: 100257,
    training: { seq_len: 1024 },
    sources: [{ id: 'a', file: 'b' }],
  },
  null,
  2,
);
const ID_LISTS = [
  '[791, 4062, 14198]',
  'tensor([[  791,  4062, 14198],\n        [  13,   220,  100257]])',
  'ids: 791 4062 14198 at update 55000',
  '{"input_ids": [[791, 4062], [14198, 13]]}',
  'array([791, ..., 14198], dtype=uint32)',
];

describe(`seeded fuzzing (seed ${SEED}, ${CASES} mutations per target): only typed errors, no case over 1 s`, function () {
  this.timeout(0);

  it('shard_manifest.jsonl text → parseShardManifest (never throws; every problem names the file)', () => {
    const failures = fuzz('manifest lines', [MANIFEST], (text) => {
      const p = parseShardManifest(text, '/data/root/shard_manifest.jsonl');
      for (const pr of p.problems) if (!pr.file || !pr.message) throw new Error(`problem without file or message: ${JSON.stringify(pr)}`);
      for (const e of p.entries) terminalSafe(e.shard);
    });
    assert.deepStrictEqual(failures, []);
  });

  it('manifest.json text → parseSideFile, scheduleOverrides, info --json output (limitDepth + jsonSafe)', () => {
    const failures = fuzz('manifest.json', [PROVENANCE], (text) => {
      const { side, problems } = parseSideFile(text, '/data/root/manifest.json', 'bad-provenance');
      for (const pr of problems) if (!pr.file || !pr.message) throw new Error(`problem without file or message: ${JSON.stringify(pr)}`);
      if (side) {
        scheduleOverrides(side);
        jsonSafe(limitDepth(side.data), 2);
        plainText(Object.keys(side.data).join(', '));
      }
    });
    assert.deepStrictEqual(failures, []);
  });

  it('token-id list text → extractIds, findIdsAt, parseNumberInput', () => {
    const failures = fuzz('id lists', ID_LISTS, (text) => {
      const x = extractIds(text);
      for (const id of x.ids) if (!Number.isSafeInteger(id) || id < 0) throw new Error(`bad id ${id}`);
      findIdsAt(text, Math.floor(text.length / 2));
      for (const w of text.split(/[\s,[\]]+/).slice(0, 50)) parseNumberInput(w);
    });
    assert.deepStrictEqual(failures, []);
  });
});

/**
 * The format parsers of Dolma, datatrove, litdata and MDS on mutations of real files: each format's
 * writer port (`scripts/lib/format-writers/`) writes a small dataset of the sample's first ids
 * (real text, the dolma2 tokenizer), and binary files are mutated as latin1 text (one char per byte).
 */
describe(`seeded fuzzing of the token-format parsers (seed ${SEED}, ${CASES} mutations per target)`, function () {
  this.timeout(0);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-fuzz-formats-'));
  const latin1 = (file: string) => fs.readFileSync(path.join(dir, file)).toString('latin1');
  const bytes = (text: string) => Buffer.from(text, 'latin1');
  const seeds: Record<string, string> = {};
  let docs: Uint32Array[] = [];
  before(async () => {
    const shard = fs.readFileSync(path.join(sampleDir(), 'shards', 'tokens_000000.u32'));
    const ids = new Uint32Array(shard.buffer, shard.byteOffset, 6000);
    // Documents of the sample: split after each EOS (100257, the dataset card's), at most 12.
    let at = 0;
    for (let i = 0; i < ids.length && docs.length < 12; i++) {
      if (ids[i] === 100257) {
        docs.push(ids.slice(at, i + 1));
        at = i + 1;
      }
    }
    if (docs.length < 3) docs = [ids.slice(0, 2000), ids.slice(2000, 4000), ids.slice(4000)];
    const w = (name: string) => import(pathToFileURL(path.join(repoRoot(), 'scripts', 'lib', 'format-writers', name)).href);
    const [dolma, datatrove, litdata, mds] = await Promise.all([w('dolma.mjs'), w('datatrove.mjs'), w('litdata.mjs'), w('mds.mjs')]);
    dolma.writeDolmaPart(
      dir,
      'part-0',
      docs.map((t, i) => ({ tokens: t, id: `doc,"${i}"`, src: 's3://x/0.jsonl.gz', loc: i + 1 })),
      { dtype: 'uint32' },
    );
    datatrove.writeDatatrove(
      dir,
      docs.map((t) => ({ tokens: t })),
      { saveFilename: 'c', tokenizerName: 'allenai/dolma2-tokenizer', tokenSize: 4, maxTokensPerFile: 0, saveLoss: false },
    );
    litdata.writeLitdata(path.join(dir, 'lit'), [docs], { dataFormat: 'no_header_numpy:6', chunkSize: 1 << 20, updatedAt: '0' });
    litdata.writeLitdata(path.join(dir, 'litz'), [docs], {
      dataFormat: 'no_header_numpy:6',
      chunkSize: 1 << 20,
      updatedAt: '0',
      compression: 'zstd:7',
    });
    mds.writeMds(
      path.join(dir, 'mds'),
      docs.map((t) => Int32Array.from(t)),
      { dtype: 'int32', compression: null, hashes: ['sha1'], sizeLimit: 1 << 26 },
    );
    seeds.csv = (await import('zlib')).gunzipSync(fs.readFileSync(path.join(dir, 'part-0-00000.csv.gz'))).toString('utf8');
    seeds.index = latin1('000_c.ds.index');
    seeds.metadata = latin1('000_c.ds.metadata');
    seeds.litIndex = latin1('lit/index.json');
    seeds.litIndexZstd = latin1('litz/index.json');
    seeds.chunkHead = latin1('lit/chunk-0-0.bin').slice(0, 4 * (docs.length + 2) + 64);
    seeds.mdsIndex = latin1('mds/index.json');
    const shardBytes = fs.readFileSync(path.join(dir, 'mds', 'shard.00000.mds'));
    seeds.mdsHead = shardBytes.subarray(0, 4 * (docs.length + 2)).toString('latin1');
    const off = shardBytes.readUInt32LE(4);
    seeds.mdsSample = shardBytes.subarray(off, shardBytes.readUInt32LE(8)).toString('latin1');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('Dolma .csv.gz rows → csv-parse + checkDolmaRow (every fault a DataError naming the row)', () => {
    const total = docs.reduce((s, d) => s + d.length, 0);
    const failures = fuzz('dolma rows', [seeds.csv], (text) => {
      let recs: string[][];
      try {
        recs = parseCsvSync(text, { relax_column_count: false, skip_empty_lines: true }) as string[][];
      } catch (e) {
        throw sidecarError('/d/part-0-00000.csv.gz', 0, e as Error);
      }
      let prev = 0;
      recs.forEach((r, i) => (prev = checkDolmaRow(r, i + 1, prev, total, '/d/part-0-00000.csv.gz', '/d/part-0-00000.npy').end));
    });
    assert.deepStrictEqual(failures, []);
  });

  it('datatrove .ds.index bytes and .ds.metadata text → parseDatatroveIndex, parseDatatroveMetadata', () => {
    const total = docs.reduce((s, d) => s + d.length, 0);
    const failures = [
      ...fuzz('datatrove index', [seeds.index], (text) => {
        parseDatatroveIndex(bytes(text), '/d/000_c.ds.index', '000_c.ds', total, new GrowableFloat64(), 0);
      }),
      ...fuzz('datatrove metadata', [seeds.metadata], (text) => {
        parseDatatroveMetadata(text, '/d/000_c.ds.metadata');
      }),
    ];
    assert.deepStrictEqual(failures, []);
  });

  it('litdata index.json text (uncompressed and zstd:7) and chunk headers → parseLitdataIndex, parseLitdataChunk', () => {
    const { chunks } = parseLitdataIndex(seeds.litIndex, '/d/index.json');
    const failures = [
      ...fuzz('litdata index', [seeds.litIndex, seeds.litIndexZstd], (text) => {
        parseLitdataIndex(text, '/d/index.json');
      }),
      ...fuzz('litdata chunk header', [seeds.chunkHead], (text) => {
        const head = bytes(text);
        parseLitdataChunk(head, '/d/chunk-0-0.bin', chunks[0], head.length, 'uint32', 0, new GrowableFloat64());
      }),
    ];
    assert.deepStrictEqual(failures, []);
  });

  it('MDS index.json shard entries, shard headers and samples → mdsTokenColumn, parseMdsOffsets, parseMdsSample', () => {
    const shard = (JSON.parse(seeds.mdsIndex) as { shards: Record<string, unknown>[] }).shards[0];
    const col = mdsTokenColumn(shard, 'shards[0]', '/d/index.json');
    const failures = [
      ...fuzz('mds index', [seeds.mdsIndex], (text) => {
        let obj: { shards?: unknown };
        try {
          obj = JSON.parse(text) as { shards?: unknown };
        } catch {
          return; // not JSON: openMds says so before looking at shards
        }
        if (obj && Array.isArray(obj.shards))
          obj.shards.forEach(
            (s, i) => s && typeof s === 'object' && mdsTokenColumn(s as Record<string, unknown>, `shards[${i}]`, '/d/index.json'),
          );
      }),
      ...fuzz('mds shard header', [seeds.mdsHead], (text) => {
        const head = bytes(text);
        parseMdsOffsets(head, '/d/shard.00000.mds', head.length + 100_000, docs.length);
      }),
      ...fuzz('mds sample', [seeds.mdsSample], (text) => {
        const b = bytes(text);
        parseMdsSample(b, b.length, col, '/d/shard.00000.mds', 0);
      }),
    ];
    assert.deepStrictEqual(failures, []);
  });
});

/**
 * The parsers of Megatron `.idx`, the llm.c header and the `.npy` header on mutations of real
 * files: the writer ports (`scripts/lib/format-writers/megatron.mjs`, `llmc.mjs`) lay out the
 * sample's first documents (real text, the dolma2 tokenizer), `np.save`'s header comes from
 * numpy itself; binary files are mutated as latin1 text (one char per byte). Every fault must be a
 * DataError (never a RangeError from a read past a buffer, a BigInt conversion error…).
 */
describe(`seeded fuzzing of the Megatron, llm.c and .npy parsers (seed ${SEED}, ${CASES} mutations per target)`, function () {
  this.timeout(0);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-fuzz-core-formats-'));
  const seeds: Record<string, string> = {};
  before(async () => {
    const shard = fs.readFileSync(path.join(sampleDir(), 'shards', 'tokens_000000.u32'));
    const ids = new Uint32Array(shard.buffer, shard.byteOffset, 6000);
    const lengths: number[] = [];
    for (let i = 0, at = 0; i < ids.length && lengths.length < 12; i++) {
      if (ids[i] === 100257) {
        lengths.push(i + 1 - at);
        at = i + 1;
      }
    }
    const w = (name: string) => import(pathToFileURL(path.join(repoRoot(), 'scripts', 'lib', 'format-writers', name)).href);
    const [megatron, llmc] = await Promise.all([w('megatron.mjs'), w('llmc.mjs')]);
    megatron.writeIndex(path.join(dir, 'x.idx'), 'int32', lengths, [...lengths.keys(), lengths.length]);
    llmc.writeDatafile(path.join(dir, 'x.bin'), ids.slice(0, 2000), 'llama-3');
    seeds.idx = fs.readFileSync(path.join(dir, 'x.idx')).toString('latin1');
    seeds.llmc = fs.readFileSync(path.join(dir, 'x.bin')).subarray(0, LLMC_HEADER_BYTES).toString('latin1');
    execFileSync('python3', ['-c', 'import sys, numpy as np; np.save(sys.argv[1], np.arange(1000, dtype="<u2"))', path.join(dir, 'x.npy')]);
    seeds.npy = fs.readFileSync(path.join(dir, 'x.npy')).subarray(0, 128).toString('latin1');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const bytes = (text: string) => Buffer.from(text, 'latin1');

  it('Megatron .idx bytes → parseMegatronIndex against a .bin size (pointers, lengths, document indices)', () => {
    const failures = fuzz('megatron idx', [seeds.idx], (text) => {
      parseMegatronIndex(bytes(text), '/d/x.idx', '/d/x.bin', 24_000);
    });
    assert.deepStrictEqual(failures, []);
  });

  it('llm.c headers → parseLlmcHeader; .npy headers → parseNpyHeader', () => {
    const failures = [
      ...fuzz('llm.c header', [seeds.llmc], (text) => {
        parseLlmcHeader(bytes(text), '/d/x.bin', 1024 + 8000);
      }),
      ...fuzz('npy header', [seeds.npy], (text) => {
        parseNpyHeader(bytes(text), '/d/x.npy', 128 + 2000);
      }),
    ];
    assert.deepStrictEqual(failures, []);
  });
});
