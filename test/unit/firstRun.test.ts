/**
 * Issue 10 items 1–2: the first run sets itself up or says exactly what to run, in one line,
 * without a stack trace (scripts/lib/prereqs.mjs, scripts/start.mjs).
 */
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { repoRoot } from './fixtures';

describe('first run: missing system packages and bad options (issue 10)', function () {
  this.timeout(60_000);

  it('without root (or without apt-get) a missing package is one line with the exact command', async () => {
    const m = await import(pathToFileURL(path.join(repoRoot(), 'scripts', 'lib', 'prereqs.mjs')).href);
    m.DEBIAN_PACKAGES['tsi-fake-pkg'] = { present: () => false, why: 'a test' };
    try {
      assert.deepStrictEqual(m.ensureDebianPackages(['ripgrep'].filter((p: string) => !m.missingPackages([p]).length)), []);
      assert.throws(
        () => m.ensureDebianPackages(['tsi-fake-pkg'], { isRoot: false, apt: true }),
        (e: Error) =>
          e instanceof m.SetupError &&
          !e.message.includes('\n') &&
          e.message.includes("sudo sh -c 'apt-get update && apt-get install -y tsi-fake-pkg'") &&
          e.message.includes('tsi-fake-pkg (a test)'),
      );
      assert.throws(
        () => m.ensureDebianPackages(['tsi-fake-pkg'], { isRoot: true, apt: false }),
        (e: Error) => e instanceof m.SetupError && /install tsi-fake-pkg with your system's package manager/.test(e.message),
      );
    } finally {
      delete m.DEBIAN_PACKAGES['tsi-fake-pkg'];
    }
  });

  it('npm start with an unknown option: one line, exit 1, no stack trace', () => {
    const r = spawnSync(process.execPath, [path.join(repoRoot(), 'scripts', 'start.mjs'), '--bogus'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1);
    assert.match(r.stderr.trim(), /^✖ npm start: unknown option --bogus; usage: npm start -- /);
    assert.strictEqual(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.ok(!/\n\s+at /.test(r.stderr), r.stderr);
  });
});
