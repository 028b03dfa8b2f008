/**
 * Compressed litdata chunks (Lightning-AI/litdata `streaming/compression.py`, `writer.py`
 * `write_chunk_to_file`: the whole chunk file compressed with zstd, named
 * `chunk-{rank}-{n}.{compression}.bin`, `chunk_bytes` its size before compression). The fixture
 * maker writes the items of `litdata-uint32` with `compression="zstd"` and those of
 * `litdata-uint16` with `"zstd:9"` as litdata's writer does; opened, their ids and documents equal
 * the numpy reference's (scripts/reference_formats.py, which decompresses with the `zstd` command,
 * not with the product's `fzstd`) and the uncompressed fixtures'; the decompressed copies live in
 * the user's cache (`XDG_CACHE_HOME`), never next to the data, and are reused; litdata's own
 * decompressed copy next to a compressed chunk is read; `manifest` + `verify` work on the stream; a
 * cut or mutated compressed chunk is one DataError naming the chunk (seeded fuzzing), and the
 * bad-input corpus holds a truncated one (`litdata-zstd-truncated`, checked by formats.test.ts).
 */
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { openPath } from '../../src/core/dataset';
import { DataError } from '../../src/core/errors';
import { sniffFormat } from '../../src/core/formats/registry';
import { repoRoot, cliPath, sha256sum } from './fixtures';
import { python3Cached } from './pyref';

const REPO = repoRoot();
const FIXTURES = path.join(REPO, 'format-fixtures');
const hasNumpy = spawnSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0;
const hasZstd = spawnSync('zstd', ['--version'], { stdio: 'ignore' }).status === 0;

/** What `scripts/reference_formats.py --ranges [[0, all]] --documents` prints (the fields read here). */
interface Reference {
  stored_tokens: number;
  documents: number;
  files: { path: string; tokens: number }[];
  ranges: number[][];
  document_table: [number, number][];
}

describe('compressed litdata chunks (zstd, zstd:9) read like the numpy reference', function () {
  this.timeout(300_000);
  if (!hasNumpy || !hasZstd) {
    it('every test — skipped: python3 with numpy or the zstd command is not available', function () {
      this.skip();
    });
    return;
  }
  let tmp = '';
  let saved: string | undefined;

  const files = (dir: string) => fs.readdirSync(dir).map((f) => path.join(dir, f));
  const cli = (args: string[]) => {
    const r = spawnSync(process.execPath, [cliPath(), ...args], { encoding: 'utf8', env: { ...process.env, XDG_CACHE_HOME: tmp } });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const reference = (p: string): Reference => {
    const first = JSON.parse(
      python3Cached([path.join(REPO, 'scripts', 'reference_formats.py'), p, '--format', 'litdata', '--documents'], [path.dirname(p), p]),
    ) as Reference;
    const all = JSON.parse(
      python3Cached(
        [
          path.join(REPO, 'scripts', 'reference_formats.py'),
          p,
          '--format',
          'litdata',
          '--ranges',
          JSON.stringify([[0, first.stored_tokens]]),
        ],
        [path.dirname(p), p],
      ),
    ) as Reference;
    return { ...first, ranges: all.ranges };
  };
  const opened = async (p: string) => {
    const ds = (await openPath(p))!;
    try {
      return {
        ids: Array.from(await ds.stream.read(0, ds.storedTokens)),
        starts: Array.from(ds.format!.documents!.starts),
        paths: ds.format!.files.map((f) => f.path),
        names: ds.format!.files.map((f) => f.name),
        sidecars: ds.format!.files.map((f) => (f.sidecars ?? []).map((s) => path.basename(s))),
      };
    } finally {
      await ds.stream.close();
    }
  };

  before(() => {
    execFileSync(process.execPath, [path.join(REPO, 'scripts', 'make-format-fixtures.mjs'), '--quiet', '--out', FIXTURES], {
      stdio: 'inherit',
    });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-litz-'));
    saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = tmp;
  });
  after(() => {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  for (const [name, group, plain, codec] of [
    ['litdata-uint32-zstd', 'dolma2', 'litdata-uint32', 'zstd'],
    ['litdata-uint16-zstd9', 'gpt2', 'litdata-uint16', 'zstd:9'],
  ] as const) {
    it(`${name}: ids and documents equal the reference's and the uncompressed ${plain}'s; copies only in the cache; the data folder is untouched`, async () => {
      const dir = path.join(FIXTURES, group, name);
      assert.ok(
        fs.readdirSync(dir).every((f) => f === 'index.json' || f.endsWith(`.${codec}.bin`)),
        `only ${codec} chunks in ${dir}`,
      );
      const before = sha256sum(files(dir));
      const ref = reference(dir);
      const got = await opened(dir);
      assert.strictEqual(got.ids.length, ref.stored_tokens);
      assert.deepStrictEqual(got.ids, ref.ranges[0], 'ids equal the reference');
      assert.deepStrictEqual(
        got.starts,
        ref.document_table.map(([s]) => s),
        'document starts equal the reference',
      );
      const uncompressed = await opened(path.join(FIXTURES, group, plain));
      assert.deepStrictEqual(got.ids, uncompressed.ids, `ids equal ${plain}'s`);
      assert.deepStrictEqual(got.starts, uncompressed.starts, `documents equal ${plain}'s`);
      const cache = path.join(tmp, 'token-shard-inspector', 'decompressed') + path.sep;
      assert.ok(
        got.paths.every((p) => p.startsWith(cache)),
        got.paths.join(),
      );
      const listed = (JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8')) as { chunks: { filename: string }[] }).chunks;
      assert.deepStrictEqual(
        got.names,
        listed.map((c) => c.filename.replace(`.${codec}`, '')),
        'a chunk is named as litdata decompresses it (config.py try_decompress: without .{compression})',
      );
      assert.deepStrictEqual(
        got.sidecars,
        ref.files.map((f, i) => [...(i ? [] : ['index.json']), path.basename(f.path)]),
        'the compressed chunk is listed with its copy',
      );
      assert.deepStrictEqual([...sha256sum(files(dir))], [...before], 'nothing written into the dataset');
      assert.deepStrictEqual(fs.readdirSync(dir).sort(), [...before.keys()].map((f) => path.basename(f)).sort());
    });
  }

  it('one compressed chunk opened alone equals the reference on it', async () => {
    const dir = path.join(FIXTURES, 'gpt2', 'litdata-uint16-zstd9');
    const second = (JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8')) as { chunks: { filename: string }[] }).chunks[1]
      .filename;
    const ref = reference(path.join(dir, second));
    const got = await opened(path.join(dir, second));
    assert.deepStrictEqual(got.ids, ref.ranges[0]);
    assert.deepStrictEqual(
      got.starts,
      ref.document_table.map(([s]) => s),
    );
    const info = cli(['info', path.join(dir, second), '--json']);
    assert.strictEqual(info.code, 0, info.stderr);
    const j = JSON.parse(info.stdout) as { format: string; files: number; stored_tokens: number };
    assert.deepStrictEqual([j.format, j.files, j.stored_tokens], ['litdata', 1, ref.stored_tokens]);
  });

  it('a decompressed chunk is kept in the cache and reused while the compressed file is unchanged; litdata’s own copy next to it is read instead', async () => {
    const dir = path.join(tmp, 'with-raw');
    fs.cpSync(path.join(FIXTURES, 'dolma2', 'litdata-uint32-zstd'), dir, { recursive: true });
    const first = await opened(dir);
    const mtimes = first.paths.map((p) => fs.statSync(p).mtimeMs);
    const again = await opened(dir);
    assert.deepStrictEqual(again.paths, first.paths);
    assert.deepStrictEqual(
      again.paths.map((p) => fs.statSync(p).mtimeMs),
      mtimes,
      'not decompressed again',
    );
    // litdata's reader decompresses chunk-0-1.zstd.bin to chunk-0-1.bin next to it (config.py try_decompress).
    execFileSync('zstd', ['-d', '-q', path.join(dir, 'chunk-0-1.zstd.bin'), '-o', path.join(dir, 'chunk-0-1.bin')]);
    const withRaw = await opened(dir);
    assert.strictEqual(withRaw.paths[1], path.join(dir, 'chunk-0-1.bin'));
    assert.deepStrictEqual(withRaw.ids, first.ids);
    // A changed compressed file is decompressed again (its key is its identity), and its change is seen.
    const f0 = path.join(dir, 'chunk-0-0.zstd.bin');
    const t = new Date(fs.statSync(f0).mtimeMs + 5000);
    fs.utimesSync(f0, t, t);
    const touched = await opened(dir);
    assert.notStrictEqual(touched.paths[0], first.paths[0]);
    assert.deepStrictEqual(touched.ids, first.ids);
  });

  it('manifest then verify: the list is written next to the compressed chunks, found there, and checks the copies and the compressed files', () => {
    const dir = path.join(tmp, 'verify');
    fs.cpSync(path.join(FIXTURES, 'dolma2', 'litdata-uint32-zstd'), dir, { recursive: true });
    const m = cli(['manifest', dir]);
    assert.strictEqual(m.code, 0, m.stderr);
    const lines = m.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { shard: string; sha256: string; sidecars: { file: string; sha256: string }[] });
    const zipped = fs.readdirSync(dir).filter((f) => f.endsWith('.zstd.bin'));
    assert.deepStrictEqual(
      lines.flatMap((l) => l.sidecars.map((s) => s.file)).sort(),
      ['index.json', ...zipped].sort(),
      'sidecars named in the folder',
    );
    const sums = sha256sum(zipped.map((f) => path.join(dir, f)));
    for (const l of lines)
      for (const s of l.sidecars) if (s.file !== 'index.json') assert.strictEqual(s.sha256, sums.get(path.join(dir, s.file)), s.file);
    fs.writeFileSync(path.join(dir, 'files.jsonl'), m.stdout);
    const ok = cli(['verify', dir, '--json']);
    assert.strictEqual(ok.code, 0, ok.stderr + ok.stdout);
    const results = (JSON.parse(ok.stdout) as { results: { status: string }[] }).results;
    assert.strictEqual(results.length, lines.length + lines.reduce((n, l) => n + l.sidecars.length, 0));
    assert.ok(
      results.every((r) => r.status === 'ok'),
      ok.stdout,
    );
    // One flipped byte in a compressed chunk's last frame bytes: verify finds the changed file.
    const victim = path.join(dir, zipped[2]);
    const b = fs.readFileSync(victim);
    b[b.length - 1] ^= 0xff;
    fs.writeFileSync(victim, b);
    const bad = cli(['verify', dir, '--json']);
    assert.strictEqual(bad.code, 1, bad.stderr + bad.stdout);
  });

  it('a chunk that decompresses whole but whose header is wrong is one line naming the compressed chunk and the byte', () => {
    const dir = path.join(tmp, 'bad-header');
    fs.cpSync(path.join(FIXTURES, 'dolma2', 'litdata-uint32-zstd'), dir, { recursive: true });
    const zipped = path.join(dir, 'chunk-1-2.zstd.bin');
    const raw = execFileSync('zstd', ['-d', '-q', '-c', zipped], { maxBuffer: 1 << 30 });
    raw.writeUInt32LE(raw.readUInt32LE(0) + 1, 0); // num_items one more than index.json's chunk_size
    fs.writeFileSync(zipped, execFileSync('zstd', ['-4', '--no-check', '-q', '-c'], { input: raw, maxBuffer: 1 << 30 }));
    const r = cli(['tokens', dir, '--start', '0', '--count', '3', '--json']);
    assert.strictEqual(r.code, 1, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.strictEqual(lines.length, 1, r.stderr);
    assert.match(
      lines[0],
      /^error: \S+\/chunk-1-2\.zstd\.bin, decompressed \(\S+\/chunk-1-2\.bin\): byte 0: \d+ items; index\.json says chunk_size \d+$/,
    );
  });

  it('a compression other than litdata’s zstd is refused in one line naming index.json and the codec', () => {
    const dir = path.join(tmp, 'gzip');
    fs.cpSync(path.join(FIXTURES, 'dolma2', 'litdata-uint32-zstd'), dir, { recursive: true });
    const indexFile = path.join(dir, 'index.json');
    const index = JSON.parse(fs.readFileSync(indexFile, 'utf8')) as { config: { compression: string } };
    index.config.compression = 'gzip';
    fs.writeFileSync(indexFile, JSON.stringify(index));
    const r = cli(['info', dir, '--json']);
    assert.strictEqual(r.code, 1, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.strictEqual(lines.length, 1, r.stderr);
    assert.match(
      lines[0],
      /index\.json: config\.compression is "gzip": the chunks are compressed with gzip, which this reader does not decompress/,
    );
  });

  it('seeded fuzzing: mutated, cut or extended compressed chunks open with the right ids or fail with a DataError naming the chunk, leaving nothing partial in the cache', async () => {
    const { mulberry32 } = (await import(pathToFileURL(path.join(REPO, 'scripts', 'lib', 'mulberry32.mjs')).href)) as {
      mulberry32: (seed: number) => () => number;
    };
    const rnd = mulberry32(Number(process.env.TSI_FUZZ_SEED ?? 20261202));
    const src = path.join(FIXTURES, 'gpt2', 'litdata-uint16-zstd9');
    const index = JSON.parse(fs.readFileSync(path.join(src, 'index.json'), 'utf8')) as { chunks: { filename: string }[] };
    const victimName = index.chunks[2].filename; // the smallest chunk: cheap to decompress 60 times
    const good = fs.readFileSync(path.join(src, victimName));
    const want = (await opened(src)).ids;
    const faults: string[] = [];
    for (let i = 0; i < 60; i++) {
      const dir = path.join(tmp, `fuzz-${i}`);
      fs.cpSync(src, dir, { recursive: true });
      const b = Buffer.from(good);
      const kind = i % 3;
      if (kind === 0) for (let k = 0; k < 1 + Math.floor(rnd() * 4); k++) b[Math.floor(rnd() * b.length)] ^= 1 + Math.floor(rnd() * 255);
      const data =
        kind === 1
          ? b.subarray(0, Math.floor(rnd() * b.length))
          : kind === 2
            ? Buffer.concat([b, Buffer.from([Math.floor(rnd() * 256)])])
            : b;
      const victim = path.join(dir, victimName);
      fs.writeFileSync(victim, data);
      try {
        const got = await opened(dir);
        // Opened: the header checks passed; only the token values may differ from the good chunk's.
        assert.strictEqual(got.ids.length, want.length, `case ${i}`);
      } catch (err) {
        if (!(err instanceof DataError)) faults.push(`case ${i} (kind ${kind}): ${String(err)}`);
        else if (!err.message.includes(victimName)) faults.push(`case ${i}: "${err.message}" does not name ${victimName}`);
        else if (err.message.includes('\n')) faults.push(`case ${i}: more than one line`);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
    assert.deepStrictEqual(faults, []);
    const left = fs
      .readdirSync(path.join(tmp, 'token-shard-inspector', 'decompressed'), { recursive: true })
      .map(String)
      .filter((n) => n.endsWith('.tmp'));
    assert.deepStrictEqual(left, [], 'no partial file left');
  });

  it('sniffing: a folder of compressed chunks whose index.json is past the heads a sniffer sees, and one compressed chunk next to index.json, are litdata', () => {
    const names = [...Array.from({ length: 20 }, (_, i) => `chunk-0-${i}.zstd:9.bin`), 'index.json'].sort();
    const folder = sniffFormat({ path: '/d', isDirectory: true, sizeBytes: 0, head: Buffer.alloc(0), names, heads: new Map() });
    assert.strictEqual(folder?.format, 'litdata');
    const one = sniffFormat({
      path: '/d/chunk-0-3.zstd.bin',
      isDirectory: false,
      sizeBytes: 100,
      head: Buffer.from([0x28, 0xb5, 0x2f, 0xfd]),
      names: ['chunk-0-3.zstd.bin', 'index.json'],
      heads: new Map(),
    });
    assert.strictEqual(one?.format, 'litdata');
  });
});
