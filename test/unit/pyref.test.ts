/**
 * The reference cache of test/unit/pyref.ts: a reference run on the same data content is read back
 * instead of run again (also from a fresh copy of the data), and data too large to hash is never
 * read for a key: the run goes to Python every time. The probe prints fresh random bytes, so two
 * equal outputs mean the second came from the cache.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { python3Cached } from './pyref';

/** Prints 16 random bytes as hex and names the data folder's files (so the run reads its input). */
const PROBE = 'import os, sys; print(os.urandom(16).hex(), sorted(os.listdir(sys.argv[1])))';

describe('reference cache (pyref.ts)', () => {
  let tmp: string;
  before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-pyref-'))));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('runs once per data content: the same data, also in a fresh copy, reads the first output back; changed data runs again', () => {
    const a = path.join(tmp, 'small-a');
    fs.mkdirSync(a);
    // Content unique to this test run, so an earlier run's cache entry cannot answer.
    fs.writeFileSync(path.join(a, 'data.bin'), `${process.pid} ${Date.now()} ${Math.random()}`);
    const first = python3Cached(['-c', PROBE, a], [a]);
    assert.strictEqual(python3Cached(['-c', PROBE, a], [a]), first, 'same folder: from the cache');
    const b = path.join(tmp, 'small-b');
    fs.cpSync(a, b, { recursive: true });
    assert.strictEqual(python3Cached(['-c', PROBE, b], [b]), first, 'a copy of the same content: from the cache');
    fs.appendFileSync(path.join(b, 'data.bin'), 'x');
    assert.notStrictEqual(python3Cached(['-c', PROBE, b], [b]), first, 'changed content: run again');
  });

  it('data over 256 MiB in all (three sparse 100 MB files) is not cached: every run goes to Python', () => {
    const big = path.join(tmp, 'big');
    fs.mkdirSync(big);
    for (let i = 0; i < 3; i++) {
      const fd = fs.openSync(path.join(big, `shard_${i}.bin`), 'w');
      fs.ftruncateSync(fd, 100_000_000); // sparse: no data blocks written
      fs.closeSync(fd);
    }
    const first = python3Cached(['-c', PROBE, big], [big]);
    const second = python3Cached(['-c', PROBE, big], [big]);
    assert.match(first, /^[0-9a-f]{32} \['shard_0\.bin', 'shard_1\.bin', 'shard_2\.bin'\]\n$/);
    assert.notStrictEqual(second, first, 'the second run went to Python too');
  });
});
