/**
 * Format verify results kept across sessions (src/core/verify/formatVerdicts.ts): the verdicts of
 * a Megatron folder's files checked against the `files.jsonl` that `token-shards manifest` wrote
 * (digests of sha256sum's), saved to a cache file outside the dataset, read back by a fresh load
 * (another session), trusted only while the token file, its sidecar and the list keep their size
 * and mtime; the dataset folder is left byte for byte as it was.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openPath, formatFilesOf } from '../../src/core/dataset';
import { checkHashes, fileVerdicts, formatVerifyChecks } from '../../src/core/formats/fileHashes';
import { FormatVerdictCache, verdictInputs } from '../../src/core/verify/formatVerdicts';
import { cliPath, repoRoot, sha256sum } from './fixtures';

describe('format verify results persist across sessions, trusted only while their files are unchanged', function () {
  this.timeout(0);
  let tmp = '';
  before(() => {
    execFileSync(
      process.execPath,
      [path.join(repoRoot(), 'scripts', 'make-format-fixtures.mjs'), '--quiet', '--out', path.join(repoRoot(), 'format-fixtures')],
      {
        stdio: 'inherit',
      },
    );
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-format-verdicts-'));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('save, load in a new session, then a changed sidecar, token file or list makes its row untrusted', async () => {
    const root = path.join(tmp, 'data');
    fs.cpSync(path.join(repoRoot(), 'format-fixtures', 'dolma2', 'megatron-multi'), root, { recursive: true });
    const list = path.join(root, 'files.jsonl');
    fs.writeFileSync(list, execFileSync(process.execPath, [cliPath(), 'manifest', root], { encoding: 'utf8' }));
    const ds = (await openPath(root))!;
    const files = formatFilesOf(ds);
    const { checks } = formatVerifyChecks(files, { text: fs.readFileSync(list, 'utf8'), file: list });
    const sums = sha256sum(checks.map((c) => c.path));
    assert.deepStrictEqual(
      checks.map((c) => c.expected[0].hex),
      checks.map((c) => sums.get(c.path)),
      'the list holds sha256sum digests',
    );
    const before = new Map(fs.readdirSync(root).map((f) => [f, fs.readFileSync(path.join(root, f)).toString('hex')]));
    const store = path.join(tmp, 'storage', 'format-verify-cache.json');
    const session1 = await FormatVerdictCache.load(store);
    for (const [i, f] of files.entries()) {
      const mine = checks.filter((c) => c.file === f.name);
      const inputs = await verdictInputs([f.path, ...mine.map((c) => c.path), list]);
      const v = fileVerdicts(files, await checkHashes(mine))[0];
      assert.strictEqual(v.index, i);
      session1.set(f.path, { status: v.status, detail: v.detail, checkedAt: 1000 + i, against: list, files: inputs });
    }
    await session1.save();
    // A new session: every row's verdict is read back (all ok, as sha256sum says).
    const session2 = await FormatVerdictCache.load(store);
    const statuses = async (c: FormatVerdictCache) =>
      Promise.all(files.map(async (f) => (await c.lookup(f.path))?.status ?? 'not-checked'));
    assert.deepStrictEqual(
      await statuses(session2),
      files.map(() => 'ok'),
    );
    assert.deepStrictEqual((await session2.lookup(files[1].path))?.checkedAt, 1001);
    // Nothing was written into the dataset.
    assert.deepStrictEqual(new Map(fs.readdirSync(root).map((f) => [f, fs.readFileSync(path.join(root, f)).toString('hex')])), before);
    // The second unit's .idx (a sidecar) gets a new mtime: that row only is no longer trusted.
    const idx = files[1].sidecars!.find((s) => s.endsWith('.idx'))!;
    const t = new Date(fs.statSync(idx).mtimeMs + 5000);
    fs.utimesSync(idx, t, t);
    assert.deepStrictEqual(await statuses(await FormatVerdictCache.load(store)), ['ok', 'not-checked', 'ok']);
    // The first token file changes size: its row goes too.
    fs.appendFileSync(files[0].path, Buffer.from([0]));
    assert.deepStrictEqual(await statuses(await FormatVerdictCache.load(store)), ['not-checked', 'not-checked', 'ok']);
    // The list checked against changes: no row is trusted.
    fs.appendFileSync(list, '\n');
    assert.deepStrictEqual(await statuses(await FormatVerdictCache.load(store)), ['not-checked', 'not-checked', 'not-checked']);
    await ds.stream.close();
  });

  it('a cache file that is not one (foreign JSON, wrong version, garbage) loads empty', async () => {
    const f = path.join(tmp, 'bad.json');
    for (const text of ['{"version": 2, "entries": {"/x": {}}}', 'not json', '[]', '{"version": 1, "entries": {"/x": {"status": "ok"}}}']) {
      fs.writeFileSync(f, text);
      assert.strictEqual(await (await FormatVerdictCache.load(f)).lookup('/x'), undefined, text);
    }
  });
});
