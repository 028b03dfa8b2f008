/**
 * What Verify Shard Hashes (VS Code) and `token-shards verify PATH [--manifest FILE]` check on a
 * format stream (`formatVerifyChecks`, `streamManifestNextTo` in core/formats/fileHashes.ts):
 * - MDS: each shard's expected digests are its `raw_data.hashes` in `index.json` as Python's json
 *   reads them, the hash kinds are the index's `hashes` list, every file checks ok, and a copy
 *   with one byte changed is a mismatch of that file only;
 * - Megatron (no hashes of its own): nothing to check without a list; with the list written by
 *   the CLI's `token-shards manifest PATH > files.jsonl` next to the data it is found, and the
 *   expected sha256 of every file and sidecar equals `sha256sum` of that file; the CLI's `verify
 *   PATH` finds it too (no `--manifest`) and names the one changed file.
 */
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { formatFilesOf, openPath } from '../../src/core/dataset';
import { checkHashes, formatVerifyChecks, streamManifestNextTo } from '../../src/core/formats/fileHashes';
import { cliPath, repoRoot } from './fixtures';

const fixturesDir = path.join(repoRoot(), 'format-fixtures');

const PY_MDS = `
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({"kinds": d["shards"][0]["hashes"], "files": {s["raw_data"]["basename"]: s["raw_data"]["hashes"] for s in d["shards"]}}))
`;

describe('verify on format streams: what is checked against what', function () {
  this.timeout(300_000);
  let tmp = '';
  before(function () {
    if (!fs.existsSync(path.join(fixturesDir, 'fixtures.json'))) {
      execFileSync(process.execPath, [path.join(repoRoot(), 'scripts', 'make-format-fixtures.mjs')], { cwd: repoRoot(), stdio: 'inherit' });
    }
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-fmtverify-'));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("MDS: the index's raw_data hashes, all ok; one changed byte is a mismatch of that file", async () => {
    const src = path.join(fixturesDir, 'dolma2', 'mds-int32');
    const root = path.join(tmp, 'mds');
    fs.cpSync(src, root, { recursive: true });
    const ref = JSON.parse(execFileSync('python3', ['-c', PY_MDS, path.join(root, 'index.json')], { encoding: 'utf8' })) as {
      kinds: string[];
      files: Record<string, Record<string, string>>;
    };
    const ds = (await openPath(root))!;
    const files = formatFilesOf(ds);
    assert.strictEqual(await streamManifestNextTo(files), undefined);
    const { checks, kinds } = formatVerifyChecks(files);
    assert.deepStrictEqual(kinds, ref.kinds);
    assert.deepStrictEqual(
      Object.fromEntries(checks.map((c) => [c.name, Object.fromEntries(c.expected.map((h) => [h.algorithm, h.hex]))])),
      ref.files,
    );
    assert.deepStrictEqual(
      (await checkHashes(checks)).map((r) => r.status),
      checks.map(() => 'ok'),
    );
    const victim = checks[1].path;
    const fd = fs.openSync(victim, 'r+');
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, 100);
    fs.writeSync(fd, Buffer.from([b[0] ^ 1]), 0, 1, 100);
    fs.closeSync(fd);
    const after = await checkHashes(checks);
    assert.deepStrictEqual(
      after.map((r) => r.status),
      checks.map((c) => (c.path === victim ? 'mismatch' : 'ok')),
    );
    await ds.stream.close();
  });

  it('Megatron: no hashes of its own; the list token-shards manifest wrote next to the data is found and equals sha256sum', async () => {
    const root = path.join(tmp, 'megatron');
    fs.cpSync(path.join(fixturesDir, 'dolma2', 'megatron-multi'), root, { recursive: true });
    const ds = (await openPath(root))!;
    const files = formatFilesOf(ds);
    assert.strictEqual(formatVerifyChecks(files).checks.length, 0);
    const text = execFileSync(process.execPath, [cliPath(), 'manifest', root], { encoding: 'utf8', maxBuffer: 1 << 26 });
    fs.writeFileSync(path.join(root, 'files.jsonl'), text);
    const found = await streamManifestNextTo(files);
    assert.strictEqual(found, path.join(root, 'files.jsonl'));
    const { checks, kinds } = formatVerifyChecks(files, { text: fs.readFileSync(found!, 'utf8'), file: found! });
    assert.deepStrictEqual(kinds, ['sha256']);
    const names = new Set(checks.map((c) => c.name));
    for (const f of files) assert.ok(names.has(f.name), `${f.name} is checked`);
    const sums = execFileSync(
      'sha256sum',
      checks.map((c) => c.path),
      { encoding: 'utf8' },
    )
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/)[0]);
    assert.deepStrictEqual(
      checks.map((c) => c.expected[0].hex),
      sums,
    );
    assert.ok(checks.length > files.length, 'sidecars (.idx) are checked too');
    assert.deepStrictEqual(
      (await checkHashes(checks)).map((r) => r.status),
      checks.map(() => 'ok'),
    );
    await ds.stream.close();
    // The CLI finds the same list without --manifest: all ok, then one changed byte of the .bin is
    // a mismatch of that file only, exit 1.
    const verify = () => spawnSync(process.execPath, [cliPath(), 'verify', root, '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const ok = verify();
    assert.strictEqual(ok.status, 0, ok.stderr);
    const okJson = JSON.parse(ok.stdout) as { all_ok: boolean; files: number };
    assert.deepStrictEqual([okJson.all_ok, okJson.files], [true, checks.length]);
    const bin = files.find((f) => f.path.endsWith('.bin'))!.path;
    const bytes = fs.readFileSync(bin);
    bytes[bytes.length >> 1] ^= 0xff;
    fs.writeFileSync(bin, bytes);
    const bad = verify();
    assert.strictEqual(bad.status, 1, bad.stderr);
    const badJson = JSON.parse(bad.stdout) as { results: { path: string; status: string }[] };
    assert.deepStrictEqual(
      badJson.results.filter((r) => r.status !== 'ok').map((r) => r.path),
      [bin],
    );
  });
});
