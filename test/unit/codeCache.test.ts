/**
 * The CLI's V8 code cache (`src/cli/loader.ts`): made by the first run, used as is by the next,
 * and never trusted when it is damaged, rejected by V8, another bundle's, or cannot be kept —
 * the CLI's output is the same in every case.
 */
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CODE_CACHE_MAGIC, codeCacheDir, codeCacheName, readCodeCache, writeCodeCache } from '../../src/cli/loader';
import { cliPath, sampleDir } from './fixtures';

describe('the CLI code cache', function () {
  this.timeout(0);
  let tmp: string;
  before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-code-cache-'))));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  /** Runs the CLI with `XDG_CACHE_HOME=home`; returns its exit code and output. */
  const cli = (home: string, args: string[]) => {
    const r = spawnSync(process.execPath, [cliPath(), ...args], { encoding: 'utf8', env: { ...process.env, XDG_CACHE_HOME: home } });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const bundle = () => fs.readFileSync(path.join(path.dirname(cliPath()), 'cli-main.js'), 'utf8');
  /** The file's identity and content: a rewrite (temporary file + rename) changes the inode. */
  const stamp = (f: string) => {
    const st = fs.statSync(f, { bigint: true });
    return { ino: st.ino, mtime: st.mtimeNs, sha: fs.readFileSync(f).toString('base64') };
  };

  it('made by the first run, used unchanged by the next, rebuilt when damaged or rejected; the output never changes', () => {
    const home = path.join(tmp, 'home');
    const args = ['info', sampleDir(), '--json'];
    const reference = cli(path.join(tmp, 'unused'), [...args]);
    assert.strictEqual(reference.code, 0, reference.stderr);
    const file = path.join(codeCacheDir({ XDG_CACHE_HOME: home }), codeCacheName(bundle()));
    // Another bundle's cache is deleted when this one's is written.
    const other = path.join(path.dirname(file), `cli-${'0'.repeat(32)}.bin`);
    writeCodeCache(other, Buffer.from('another bundle'));
    assert.ok(fs.existsSync(other));

    assert.deepStrictEqual(cli(home, args), reference, 'first run');
    const made = readCodeCache(file);
    assert.ok(made && made.length > 1000, 'the first run wrote a checked cache');
    assert.ok(!fs.existsSync(other), "the other bundle's cache is gone");
    const before = stamp(file);
    assert.deepStrictEqual(cli(home, args), reference, 'second run');
    assert.deepStrictEqual(stamp(file), before, 'a usable cache is read, not rewritten');

    // One payload byte flipped: the checksum no longer matches; ignored and written again.
    const buf = fs.readFileSync(file);
    buf[buf.length - 100] ^= 0xff;
    fs.writeFileSync(file, buf);
    assert.strictEqual(readCodeCache(file), undefined, 'a damaged cache is not returned');
    assert.deepStrictEqual(cli(home, args), reference, 'damaged cache');
    const rebuilt = () => (readCodeCache(file)?.length ?? 0) > 1000;
    assert.ok(rebuilt(), 'rebuilt: a checked cache again');

    // A checked file whose data V8 refuses (not V8's format): rejected, rebuilt.
    writeCodeCache(file, Buffer.from('not V8 cached data'));
    assert.deepStrictEqual(readCodeCache(file), Buffer.from('not V8 cached data'));
    assert.deepStrictEqual(cli(home, args), reference, 'rejected cache');
    assert.ok(rebuilt(), 'rebuilt after V8 rejected it');

    // Another header (a future format, a truncated file): ignored, rebuilt.
    fs.writeFileSync(file, CODE_CACHE_MAGIC.replace('1', '2') + 'x'.repeat(200));
    assert.deepStrictEqual(cli(home, args), reference, 'another format');
    assert.ok(rebuilt(), 'rebuilt after another format');
  });

  it('nothing is written when the cache folder is inside a folder the command reads (a dataset), or with --no-cache', () => {
    const root = path.join(tmp, 'dataset');
    fs.cpSync(sampleDir(), root, { recursive: true });
    const listing = () => fs.readdirSync(root, { recursive: true }).map(String).sort();
    const before = listing();
    // A folder, and a lone file (its dataset is its folder, as the commands see it).
    for (const [target, cache] of [
      [root, path.join(root, '.cache')],
      [path.join(root, 'shards', 'tokens_000000.u32'), path.join(root, 'shards', '.cache')],
    ]) {
      const r = cli(cache, ['info', target, '--json']);
      assert.strictEqual(r.code, 0, r.stderr);
      assert.deepStrictEqual(listing(), before, `${target}: nothing written into the dataset`);
    }
    // --no-cache: no cache of any kind is written.
    const none = path.join(tmp, 'no-cache-home');
    assert.strictEqual(cli(none, ['verify', root, '--no-cache', '--json']).code, 0);
    assert.ok(!fs.existsSync(none), '--no-cache writes no code cache');
  });

  it('a cache folder that cannot be made costs only the compile', () => {
    const blocker = path.join(tmp, 'not-a-folder');
    fs.writeFileSync(blocker, 'a file where the cache folder would go');
    const reference = cli(path.join(tmp, 'elsewhere'), ['--version']);
    assert.strictEqual(reference.code, 0, reference.stderr);
    assert.deepStrictEqual(cli(blocker, ['--version']), reference);
    assert.strictEqual(fs.readFileSync(blocker, 'utf8'), 'a file where the cache folder would go');
  });
});
