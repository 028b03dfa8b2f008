/**
 * The manifest table of a litdata or MDS stream lists every file of the stream: `tableFileOf`
 * (src/core/dataset.ts) names the folder's `index.json` for a dataset opened from the folder or
 * from one chunk/shard (a compressed MDS shard too), and that file opens the stream whose files are the numpy reference's
 * (scripts/reference_formats.py over the folder), in order; other formats keep their own file.
 */
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { openPath, tableFileOf } from '../../src/core/dataset';
import { repoRoot } from './fixtures';
import { python3Cached } from './pyref';

const REPO = repoRoot();
const FIXTURES = path.join(REPO, 'format-fixtures');
const hasNumpy = spawnSync('python3', ['-c', 'import numpy, regex'], { stdio: 'ignore' }).status === 0;

describe('manifest table of a format stream: the file that opens every file of the stream', function () {
  this.timeout(0);
  if (!hasNumpy) {
    it('skipped: python3 with numpy is not available', function () {
      this.skip();
    });
    return;
  }
  execFileSync(process.execPath, [path.join(REPO, 'scripts', 'make-format-fixtures.mjs'), '--bad', '--quiet', '--out', FIXTURES], {
    stdio: 'inherit',
  });
  const { fixtures } = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fixtures.json'), 'utf8')) as {
    fixtures: { name: string; format: string; path: string; files: number }[];
  };

  for (const format of ['litdata', 'mds']) {
    it(`${format}: from the folder and from each of its files, index.json, which opens the reference's files of the folder`, async () => {
      const folders = fixtures.filter((f) => f.format === format && fs.statSync(path.join(FIXTURES, f.path)).isDirectory());
      assert.ok(folders.length > 0, `fixtures.json has a ${format} folder`);
      for (const fx of folders) {
        const dir = path.join(FIXTURES, fx.path);
        const ref = JSON.parse(python3Cached([path.join(REPO, 'scripts', 'reference_formats.py'), dir, '--format', format], [dir])) as {
          files: { path: string }[];
        };
        assert.strictEqual(ref.files.length, fx.files, `${fx.name}: the reference lists the files the writer wrote`);
        const want = ref.files.map((f) => path.basename(f.path));
        const starts = [
          dir,
          ...fs
            .readdirSync(dir)
            .filter((n) => /^(chunk-.*\.bin|shard\.\d+\.mds(\.[a-z0-9]+)?)$/.test(n))
            .map((n) => path.join(dir, n)),
        ];
        for (const p of starts) {
          const ds = (await openPath(p))!;
          assert.strictEqual(ds.format?.name, format, `${fx.name}: ${path.basename(p)} opened alone is ${format}`);
          if (p !== dir) {
            // A file opened alone is that one unit; a compressed MDS shard is read from its raw
            // shard when that is there beside it (as streaming reads a decompressed shard), else from itself.
            const [only, ...more] = ds.format!.files;
            assert.strictEqual(more.length, 0, `${fx.name}: ${path.basename(p)} opened alone is one file`);
            const raw = p.replace(/(\.mds)\.[a-z0-9]+$/, '$1');
            const read = raw !== p && fs.existsSync(raw) ? raw : p;
            assert.strictEqual(only.storedAs ?? only.path, read, `${fx.name}: ${path.basename(p)} is read from ${path.basename(read)}`);
          }
          const table = tableFileOf(ds);
          assert.strictEqual(table, path.join(dir, 'index.json'), `${fx.name}: the table of ${path.basename(p)}`);
          const whole = (await openPath(table))!;
          assert.deepStrictEqual(
            whole.format!.files.map((f) => path.basename(f.storedAs ?? f.path)),
            want,
            `${fx.name}: the files of the table opened from ${path.basename(p)}`,
          );
        }
      }
    });
  }

  it('other formats have no such file (a token file opens its own unit)', async () => {
    for (const fx of fixtures.filter((f) => f.format !== 'litdata' && f.format !== 'mds')) {
      const ds = (await openPath(path.join(FIXTURES, fx.path), {}, { format: fx.format as never }))!;
      assert.strictEqual(tableFileOf(ds), undefined, fx.name);
    }
  });
});
