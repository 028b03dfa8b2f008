/**
 * Compressed MDS shards (mosaicml/streaming `streaming/base/compression.py`): the fixture maker
 * writes the samples of `mds-int32` again with zstd (`zstd -3`, compression.py's default level)
 * and with brotli (quality 11), as streaming's writer names and indexes them
 * (`shard.NNNNN.mds.zstd`, `zip_data`); opened, their ids equal the uncompressed fixture's and the
 * numpy reference's over it, `verify` checks `raw_data.hashes` on the decompressed shards, the
 * decompressed copies live in the cache (`XDG_CACHE_HOME`) and are reused, and a codec this reader
 * does not decompress is named in a one-line refusal.
 */
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { openPath } from '../../src/core/dataset';
import { DataError } from '../../src/core/errors';
import { decompressedShard } from '../../src/core/formats/compression';
import { repoRoot, cliPath, sha256sum } from './fixtures';
import { python3Cached } from './pyref';

const REPO = repoRoot();
const FIXTURES = path.join(REPO, 'format-fixtures');
const hasNumpy = spawnSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0;

describe('compressed MDS shards (zstd, brotli) read like the uncompressed ones', function () {
  this.timeout(300_000);
  let tmp = '';
  let saved: string | undefined;
  const plain = path.join(FIXTURES, 'dolma2', 'mds-int32');

  const cli = (args: string[]) => {
    const r = spawnSync(process.execPath, [cliPath(), ...args], { encoding: 'utf8', env: { ...process.env, XDG_CACHE_HOME: tmp } });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const allIds = async (dir: string) => {
    const ds = (await openPath(dir))!;
    try {
      return Array.from(await ds.stream.read(0, ds.storedTokens));
    } finally {
      await ds.stream.close();
    }
  };

  before(() => {
    execFileSync(process.execPath, [path.join(REPO, 'scripts', 'make-format-fixtures.mjs'), '--quiet', '--out', FIXTURES], {
      stdio: 'inherit',
    });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-mdsz-'));
    saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = tmp;
  });
  after(() => {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  for (const codec of ['zstd', 'br']) {
    it(`${codec}: ids equal the uncompressed fixture's${hasNumpy ? ' and the numpy reference' : ''}; verify passes; the data folder is untouched`, async () => {
      const dir = path.join(FIXTURES, 'dolma2', `mds-int32-${codec}`);
      assert.ok(
        fs.readdirSync(dir).every((f) => f === 'index.json' || f.endsWith(`.mds.${codec}`)),
        'only compressed shards',
      );
      const before = sha256sum(fs.readdirSync(dir).map((f) => path.join(dir, f)));
      const want = await allIds(plain);
      assert.deepStrictEqual(await allIds(dir), want);
      if (hasNumpy) {
        const out = python3Cached(
          [path.join(REPO, 'scripts', 'reference_formats.py'), plain, '--format', 'mds', '--ranges', JSON.stringify([[0, want.length]])],
          fs.readdirSync(plain).map((f) => path.join(plain, f)),
        );
        assert.deepStrictEqual((JSON.parse(out) as { ranges: number[][] }).ranges[0], want);
      }
      const v = cli(['verify', dir, '--json']);
      assert.strictEqual(v.code, 0, v.stderr + v.stdout);
      const results = (JSON.parse(v.stdout) as { results: { status: string }[] }).results;
      assert.ok(results.length > 1 && results.every((r) => r.status === 'ok'), v.stdout);
      assert.deepStrictEqual([...sha256sum(fs.readdirSync(dir).map((f) => path.join(dir, f)))], [...before], 'nothing written');
    });
  }

  it('a decompressed shard is kept in the cache and reused while the compressed file is unchanged', async () => {
    const dir = path.join(FIXTURES, 'dolma2', 'mds-int32-zstd');
    const ds = (await openPath(dir))!;
    const cached = ds.shards.map((s) => s.path);
    assert.ok(
      cached.every((p) => p.startsWith(path.join(tmp, 'token-shard-inspector', 'decompressed'))),
      cached.join(),
    );
    const mtimes = cached.map((p) => fs.statSync(p).mtimeMs);
    const again = (await openPath(dir))!;
    assert.deepStrictEqual(
      again.shards.map((s) => s.path),
      cached,
    );
    assert.deepStrictEqual(
      cached.map((p) => fs.statSync(p).mtimeMs),
      mtimes,
    );
    assert.deepStrictEqual(
      ds.format?.files[0].sidecars?.map((f) => path.basename(f)),
      ['index.json', 'shard.00000.mds.zstd'],
    );
  });

  it('seeded fuzzing: mutated or cut zstd, brotli and gzip shards decompress to their raw size or fail with a DataError naming the file, leaving nothing in the cache', async () => {
    const { mulberry32 } = (await import(pathToFileURL(path.join(REPO, 'scripts', 'lib', 'mulberry32.mjs')).href)) as {
      mulberry32: (seed: number) => () => number;
    };
    const rnd = mulberry32(Number(process.env.TSI_FUZZ_SEED ?? 20261202));
    const cases: [string, string][] = [
      [path.join(FIXTURES, 'dolma2', 'mds-int32-zstd', 'shard.00000.mds.zstd'), 'zstd'],
      [path.join(FIXTURES, 'dolma2', 'mds-int32-br', 'shard.00000.mds.br'), 'br'],
      [path.join(FIXTURES, 'gpt2', 'mds-gz-only', 'shard.00000.mds.gz'), 'gz'],
    ];
    const cache = path.join(tmp, 'fuzz-cache');
    for (const [src, codec] of cases) {
      const good = fs.readFileSync(src);
      const rawBytes = (await fs.promises.stat(await decompressedShard(src, codec, 'raw.mds', undefined, path.join(tmp, 'sizes')))).size;
      for (let i = 0; i < 60; i++) {
        const b = Buffer.from(good);
        const kind = i % 3;
        if (kind === 0) for (let k = 0; k < 1 + Math.floor(rnd() * 4); k++) b[Math.floor(rnd() * b.length)] ^= 1 + Math.floor(rnd() * 255);
        const data =
          kind === 1
            ? b.subarray(0, Math.floor(rnd() * b.length))
            : kind === 2
              ? Buffer.concat([b, Buffer.from([Math.floor(rnd() * 256)])])
              : b;
        const f = path.join(tmp, `fuzz-${codec}-${i}`);
        fs.writeFileSync(f, data);
        try {
          const out = await decompressedShard(f, codec, 'raw.mds', rawBytes, cache);
          assert.strictEqual(fs.statSync(out).size, rawBytes);
        } catch (err) {
          assert.ok(err instanceof DataError, `${codec} case ${i}: ${String(err)}`);
          assert.ok(err.message.startsWith(f), err.message);
        }
      }
    }
    const left = fs
      .readdirSync(cache, { recursive: true })
      .map(String)
      .filter((n) => n.endsWith('.tmp'));
    assert.deepStrictEqual(left, [], 'no partial file left');
  });

  it('a codec streaming writes but this reader does not decompress (snappy) is refused in one line naming the file and the codec', () => {
    const dir = path.join(tmp, 'snappy');
    fs.cpSync(path.join(FIXTURES, 'dolma2', 'mds-int32-zstd'), dir, { recursive: true });
    const indexFile = path.join(dir, 'index.json');
    const index = JSON.parse(fs.readFileSync(indexFile, 'utf8')) as {
      shards: { compression: string; zip_data: { basename: string } }[];
    };
    for (const s of index.shards) {
      const name = s.zip_data.basename.replace(/\.zstd$/, '.snappy');
      fs.renameSync(path.join(dir, s.zip_data.basename), path.join(dir, name));
      s.zip_data.basename = name;
      s.compression = 'snappy';
    }
    fs.writeFileSync(indexFile, JSON.stringify(index));
    const r = cli(['info', dir, '--json']);
    assert.strictEqual(r.code, 1, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.strictEqual(lines.length, 1, r.stderr);
    assert.match(lines[0], /shard\.00000\.mds\.snappy: compressed with snappy, which this reader does not decompress/);
  });
});
