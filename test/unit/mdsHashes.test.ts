/**
 * MDS hashes of the xxHash family (mosaicml/streaming `streaming/base/hashing.py`, commit 89e7bb90:
 * python-xxhash's `xxh32`, `xxh64`, `xxh3_64`, `xxh3_128`, `xxh128`, `hexdigest()` with seed 0)
 * are computed and checked by `verify`, not left unchecked.
 *
 * Reference values: python-xxhash is not importable on this machine, so the digests are the
 * seed-0 test vectors of the `hash-wasm` package's own tests (Daninet/hash-wasm
 * `test/xxhash32.test.ts`, `xxhash64.test.ts`, `xxhash3.test.ts`, `xxhash128.test.ts`, "simple
 * strings with 0 seed"), which are also the canonical digests of the xxHash reference
 * implementation (`xxhsum`): e.g. XXH64("") = ef46db3751d8e999, XXH128("") = 99aa06d3…497f.
 * They are typed here because they are published constants of the algorithm, not data of ours.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { xxhash64 } from 'hash-wasm';
import { hashFile, hashSupported } from '../../src/core/formats/fileHashes';
import { cliPath, repoRoot } from './fixtures';

/** input → algorithm → hex digest (seed 0), from hash-wasm's tests. */
const VECTORS: Record<string, Record<string, string>> = {
  '': { xxh32: '02cc5d05', xxh64: 'ef46db3751d8e999', xxh3_64: '2d06800538d394c2', xxh128: '99aa06d3014798d86001c324468d497f' },
  a: { xxh32: '550d7456', xxh64: 'd24ec4f1a98c6e5b', xxh3_64: 'e6c632b61e964e1f', xxh128: 'a96faf705af16834e6c632b61e964e1f' },
  'a\x00': { xxh32: '19832f52', xxh64: 'e513e02c99167f96', xxh3_64: '0d78baac08237ddb', xxh128: 'fe6c33c14011b5780d78baac08237ddb' },
  abc: { xxh32: '32d153ff', xxh64: '44bc2cf5ad770999', xxh3_64: '78af5f94892f3950', xxh128: '06b05ab6733a618578af5f94892f3950' },
  '1234567890': {
    xxh32: 'e8412d73',
    xxh64: 'a9d4d4132eff23b6',
    xxh3_64: '80048550fad2b420',
    xxh128: '82d9f70aeb974c48565e705734e91277',
  },
};

describe('MDS xxHash digests (xxh32, xxh64, xxh3_64, xxh3_128, xxh128)', function () {
  this.timeout(120_000);
  let tmp = '';
  before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-xxh-'))));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('hashFile gives the published seed-0 digests; xxh3_128 is xxh128', async () => {
    let i = 0;
    for (const [text, want] of Object.entries(VECTORS)) {
      const f = path.join(tmp, `v${i++}`);
      fs.writeFileSync(f, Buffer.from(text, 'latin1'));
      const got = await hashFile(f, ['xxh32', 'xxh64', 'xxh3_64', 'xxh128', 'xxh3_128']);
      assert.deepStrictEqual(got, { ...want, xxh3_128: want.xxh128 }, JSON.stringify(text));
    }
    for (const a of ['xxh32', 'xxh64', 'xxh3_64', 'xxh3_128', 'xxh128', 'XXH64', 'sha1']) assert.ok(hashSupported(a), a);
    for (const a of ['constructor', 'xxh16']) assert.ok(!hashSupported(a), a);
  });

  it('a file read in many 1 MiB chunks hashes as the whole buffer at once', async () => {
    const buf = Buffer.alloc(3 * (1 << 20) + 12345);
    for (let j = 0; j < buf.length; j++) buf[j] = (j * 2654435761) >>> 24;
    const f = path.join(tmp, 'big');
    fs.writeFileSync(f, buf);
    assert.strictEqual((await hashFile(f, ['xxh64'])).xxh64, await xxhash64(buf, 0, 0));
  });

  it('verify checks an MDS shard listed with xxh64 / xxh3_64 / xxh128: ok when equal, a mismatch naming the algorithm after one byte changes', async () => {
    const src = path.join(repoRoot(), 'format-fixtures', 'dolma2', 'mds-int32');
    if (!fs.existsSync(path.join(src, 'index.json')))
      execFileSync(process.execPath, [path.join(repoRoot(), 'scripts', 'make-format-fixtures.mjs'), '--quiet'], { stdio: 'inherit' });
    const dir = path.join(tmp, 'mds');
    fs.cpSync(src, dir, { recursive: true });
    const indexFile = path.join(dir, 'index.json');
    const index = JSON.parse(fs.readFileSync(indexFile, 'utf8')) as {
      shards: { hashes: string[]; raw_data: { basename: string; hashes: Record<string, string> } }[];
    };
    const shard0 = path.join(dir, index.shards[0].raw_data.basename);
    // Digests of the shard by python-xxhash's algorithms, as streaming's writer lists them (sorted names).
    const algos = ['xxh128', 'xxh3_64', 'xxh64'];
    for (const s of index.shards) {
      const digests = await hashFile(path.join(dir, s.raw_data.basename), algos);
      s.hashes = algos;
      s.raw_data.hashes = digests;
    }
    fs.writeFileSync(indexFile, JSON.stringify(index));
    const verify = () => {
      try {
        return { code: 0, out: execFileSync(process.execPath, [cliPath(), 'verify', dir, '--json'], { encoding: 'utf8' }) };
      } catch (err) {
        const e = err as { status: number; stdout: string };
        return { code: e.status, out: e.stdout };
      }
    };
    const ok = verify();
    const okJson = JSON.parse(ok.out) as { all_ok: boolean; results: { status: string; digests: { algorithm: string }[] }[] };
    assert.strictEqual(ok.code, 0, ok.out);
    assert.ok(okJson.all_ok);
    assert.ok(okJson.results.every((r) => r.status === 'ok' && r.digests.map((d) => d.algorithm).join() === algos.join()));
    const fd = fs.openSync(shard0, 'r+');
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, 100);
    b[0] ^= 1;
    fs.writeSync(fd, b, 0, 1, 100);
    fs.closeSync(fd);
    const bad = verify();
    const badJson = JSON.parse(bad.out) as { all_ok: boolean; results: { status: string; message: string | null }[] };
    assert.strictEqual(bad.code, 1, bad.out);
    assert.strictEqual(badJson.results[0].status, 'mismatch');
    assert.match(badJson.results[0].message ?? '', /xxh/);
    assert.ok(badJson.results.slice(1).every((r) => r.status === 'ok'));
  });
});
