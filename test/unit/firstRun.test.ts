/**
 * The first run sets itself up or says exactly what to run, in one line,
 * without a stack trace (scripts/lib/prereqs.mjs, scripts/start.mjs).
 */
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { repoRoot } from './fixtures';

describe('first run: missing system packages and bad options', function () {
  this.timeout(60_000);

  const prereqs = () => pathToFileURL(path.join(repoRoot(), 'scripts', 'lib', 'prereqs.mjs')).href;

  /**
   * A stand-in for apt-get: appends its arguments as one line to `calls`, and on `install` creates
   * `<marker dir>/<package>` for each package (which the fake package's presence check looks for).
   */
  function fakeAptGet(dir: string): { bin: string; calls: string; installed: (pkg: string) => string } {
    const bin = path.join(dir, 'apt-get');
    const calls = path.join(dir, 'calls.txt');
    fs.writeFileSync(
      bin,
      `#!/bin/sh\necho "$*" >> '${calls}'\nif [ "$1" = install ]; then for a in "$@"; do case "$a" in -*|install) ;; *) touch '${dir}'/"$a".installed ;; esac; done; fi\necho "fake apt output"\n`,
      { mode: 0o755 },
    );
    return { bin, calls, installed: (pkg) => path.join(dir, `${pkg}.installed`) };
  }

  it('as root with apt-get: installs exactly the missing packages, saying what and why in one line', async () => {
    const m = await import(prereqs());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-apt-'));
    const apt = fakeAptGet(dir);
    m.DEBIAN_PACKAGES['tsi-fake-pkg'] = { present: () => fs.existsSync(apt.installed('tsi-fake-pkg')), why: 'a test' };
    m.DEBIAN_PACKAGES['tsi-fake-there'] = { present: () => true, why: 'already there' };
    try {
      const lines: string[] = [];
      const got = m.ensureDebianPackages(['tsi-fake-pkg', 'tsi-fake-there'], {
        isRoot: true,
        apt: true,
        aptGet: apt.bin,
        logDir: dir,
        log: (s: string) => lines.push(s),
      });
      assert.deepStrictEqual(got, ['tsi-fake-pkg']);
      assert.deepStrictEqual(lines, ['▶ installing tsi-fake-pkg with apt-get: tsi-fake-pkg (a test)']);
      assert.deepStrictEqual(fs.readFileSync(apt.calls, 'utf8').trim().split('\n'), [
        'update',
        'install -y --no-install-recommends tsi-fake-pkg',
      ]);
      assert.deepStrictEqual(
        fs.readdirSync(dir).filter((f) => f.startsWith('tsi-apt-')),
        [],
        'the apt log is removed after a successful install',
      );
    } finally {
      delete m.DEBIAN_PACKAGES['tsi-fake-pkg'];
      delete m.DEBIAN_PACKAGES['tsi-fake-there'];
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('nothing missing: no apt-get call and nothing said', async () => {
    const m = await import(prereqs());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-apt-'));
    const apt = fakeAptGet(dir);
    m.DEBIAN_PACKAGES['tsi-fake-there'] = { present: () => true, why: 'already there' };
    try {
      const lines: string[] = [];
      for (const isRoot of [true, false]) {
        const got = m.ensureDebianPackages(['tsi-fake-there'], { isRoot, apt: true, aptGet: apt.bin, log: (s: string) => lines.push(s) });
        assert.deepStrictEqual(got, []);
      }
      assert.deepStrictEqual(lines, []);
      assert.strictEqual(fs.existsSync(apt.calls), false, 'apt-get was not run');
    } finally {
      delete m.DEBIAN_PACKAGES['tsi-fake-there'];
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without root (or without apt-get): one line with the exact command, exit 1, no stack trace', async () => {
    const m = await import(prereqs());
    m.DEBIAN_PACKAGES['tsi-fake-pkg'] = { present: () => false, why: 'a test' };
    try {
      assert.throws(
        () => m.ensureDebianPackages(['tsi-fake-pkg'], { isRoot: true, apt: false }),
        (e: Error) => e instanceof m.SetupError && /install tsi-fake-pkg with your system's package manager/.test(e.message),
      );
    } finally {
      delete m.DEBIAN_PACKAGES['tsi-fake-pkg'];
    }
    // The whole script path: npm start's runner around a set-up that is not root.
    const script = `import { DEBIAN_PACKAGES, ensureDebianPackages, runScript } from ${JSON.stringify(prereqs())};
DEBIAN_PACKAGES['tsi-fake-pkg'] = { present: () => false, why: 'a test' };
runScript('npm start', async () => { ensureDebianPackages(['tsi-fake-pkg'], { isRoot: false, apt: true }); return 0; });`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1, r.stderr);
    assert.strictEqual(r.stdout, '');
    assert.deepStrictEqual(r.stderr.trim().split('\n'), [
      "✖ npm start: missing system packages: tsi-fake-pkg (a test). Run: sudo sh -c 'apt-get update && apt-get install -y tsi-fake-pkg'  — then run the command again.",
    ]);
    assert.ok(!/\n\s+at /.test(r.stderr), r.stderr);
  });

  it('npm start with an unknown option: one line, exit 1, no stack trace', () => {
    const r = spawnSync(process.execPath, [path.join(repoRoot(), 'scripts', 'start.mjs'), '--bogus'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1);
    assert.match(r.stderr.trim(), /^✖ npm start: unknown option --bogus; usage: npm start -- /);
    assert.strictEqual(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.ok(!/\n\s+at /.test(r.stderr), r.stderr);
  });
});
