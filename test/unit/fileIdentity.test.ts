/**
 * File identity (src/core/fileIdentity.ts) against `stat --format` (GNU coreutils) on files in a
 * temporary folder: every field, and which everyday operations change the key (write, restored
 * mtime, replacement by rename) or keep it (read, a hard link under another name).
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { fstatIdentity, identityKey, isFileIdentity, sameIdentity, statIdentity } from '../../src/core/fileIdentity';

describe('fileIdentity', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-identity-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('matches stat(1): device, inode, size, mtime and ctime to the nanosecond', async () => {
    const f = path.join(dir, 'a.u32');
    fs.writeFileSync(f, Buffer.alloc(40, 7));
    const [dev, ino, size, mtime, ctime] = execFileSync('stat', ['--format=%d %i %s %Y.%.9Y %Z.%.9Z', f], { encoding: 'utf8' })
      .trim()
      .split(' ');
    const id = await statIdentity(f);
    assert.strictEqual(id.dev, dev);
    assert.strictEqual(id.ino, ino);
    assert.strictEqual(id.size, Number(size));
    // %Y.%.9Y prints "seconds.seconds.fraction": keep the seconds and the fraction.
    const ns = (s: string) => {
      const parts = s.split('.');
      return parts[0] + parts[parts.length - 1].padStart(9, '0');
    };
    assert.strictEqual(id.mtimeNs, ns(mtime));
    assert.strictEqual(id.ctimeNs, ns(ctime));
    assert.ok(isFileIdentity(id));
    assert.ok(isFileIdentity(JSON.parse(JSON.stringify(id))), 'survives JSON');
    const fd = fs.openSync(f, 'r');
    try {
      assert.deepStrictEqual(await fstatIdentity(fd), id);
    } finally {
      fs.closeSync(fd);
    }
  });

  it('a read or a hard link keeps the key; a write with the mtime put back, or a replacement by rename, changes it', async () => {
    const f = path.join(dir, 'b.u32');
    fs.writeFileSync(f, Buffer.alloc(64, 1));
    const id0 = await statIdentity(f);
    fs.readFileSync(f);
    assert.strictEqual(identityKey(await statIdentity(f)), identityKey(id0), 'reading changes nothing');
    const link = path.join(dir, 'b-link.u32');
    fs.linkSync(f, link);
    const idAfterLink = await statIdentity(f); // link() moves ctime (the link count changed)
    assert.ok(sameIdentity(await statIdentity(link), idAfterLink), 'both names are the same file');

    const before = fs.statSync(f, { bigint: true });
    await new Promise((r) => setTimeout(r, 20));
    const bytes = fs.readFileSync(f);
    bytes[3] ^= 0x80;
    fs.writeFileSync(f, bytes);
    const ns = before.mtimeNs;
    execFileSync('touch', ['-m', '-d', `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, '0')}`, f]);
    const id1 = await statIdentity(f);
    assert.strictEqual(id1.mtimeNs, idAfterLink.mtimeNs, 'mtime restored to the nanosecond');
    assert.strictEqual(id1.size, idAfterLink.size);
    assert.ok(!sameIdentity(id1, idAfterLink), 'ctime moved, so the identity differs');

    const other = path.join(dir, 'c.u32');
    fs.writeFileSync(other, bytes);
    fs.renameSync(other, f);
    const id2 = await statIdentity(f);
    assert.notStrictEqual(id2.ino, id1.ino, 'a replacement is another inode');
    assert.notStrictEqual(identityKey(id2), identityKey(id1));
  });

  it('rejects shapes that are not identities', () => {
    assert.ok(!isFileIdentity(undefined));
    assert.ok(!isFileIdentity({ dev: 1, ino: '2', size: 3, mtimeNs: '4', ctimeNs: '5' }));
    assert.ok(!isFileIdentity({ dev: '1', ino: '2', size: -1, mtimeNs: '4', ctimeNs: '5' }));
    assert.ok(!sameIdentity(undefined, undefined));
  });
});
