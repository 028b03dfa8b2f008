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

  it('packagesForTiers: the unit tier needs the Python references and zstd, e2e Chromium and the fonts', async () => {
    const m = await import(prereqs());
    assert.deepStrictEqual(m.packagesForTiers(['lint']), []);
    assert.deepStrictEqual(m.packagesForTiers(['unit']), ['python3-numpy', 'python3-regex', 'zstd']);
    assert.deepStrictEqual(m.packagesForTiers(['vscode']), ['ripgrep', 'libkrb5-dev']);
    assert.deepStrictEqual(m.packagesForTiers(['vscode'], { codeServerInstalled: true }), []);
    assert.deepStrictEqual(m.packagesForTiers(['lint', 'unit', 'vscode', 'e2e'], { codeServerInstalled: true }), [
      'python3-numpy',
      'python3-regex',
      'zstd',
      'chromium',
      'fonts-noto-cjk',
      'fonts-noto-color-emoji',
    ]);
    // The presence checks agree with the machine, asked independently.
    const imports = (mod: string) => spawnSync('python3', ['-c', `import ${mod}`], { stdio: 'ignore' }).status === 0;
    assert.strictEqual(m.DEBIAN_PACKAGES['python3-regex'].present(), imports('regex'));
    assert.strictEqual(m.DEBIAN_PACKAGES['python3-numpy'].present(), imports('numpy'));
  });

  it('npm test without the Python regex module: stops before building, with the one command to run', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-npm-test-'));
    try {
      // python3 that lacks every module, and an apt-get that cannot reach its mirrors.
      fs.writeFileSync(path.join(dir, 'python3'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
      fs.writeFileSync(path.join(dir, 'apt-get'), '#!/bin/sh\necho "no mirror" >&2\nexit 100\n', { mode: 0o755 });
      const r = spawnSync(process.execPath, [path.join(repoRoot(), 'scripts', 'test.mjs'), '--unit'], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}` },
      });
      assert.strictEqual(r.status, 1, r.stderr);
      const root = typeof process.getuid === 'function' && process.getuid() === 0 && fs.existsSync('/usr/bin/apt-get');
      assert.match(
        r.stderr,
        root
          ? /✖ npm test: apt-get update failed \(exit 100\).*Run it yourself: apt-get update && apt-get install -y python3-numpy python3-regex/
          : /✖ npm test: missing system packages: python3-numpy .*python3-regex .*Run: /,
      );
      assert.doesNotMatch(r.stdout, /build: node esbuild\.js|passing/, 'nothing was built or run');
      assert.match(r.stdout + r.stderr, /tests: 0 passed, 1 failed/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('build freshness (npm start skips an unchanged build and .vsix)', function () {
  const freshness = () => pathToFileURL(path.join(repoRoot(), 'scripts', 'lib', 'freshness.mjs')).href;

  it('staleReason: missing output, input newer than the oldest output, and fresh', async () => {
    const m = await import(freshness());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-fresh-'));
    try {
      fs.mkdirSync(path.join(dir, 'src', 'deep'), { recursive: true });
      const at = (f: string, seconds: number) => {
        fs.writeFileSync(path.join(dir, f), f);
        fs.utimesSync(path.join(dir, f), seconds, seconds);
      };
      at('src/deep/a.ts', 1_000);
      at('package.json', 1_000);
      assert.strictEqual(m.staleReason(dir, ['out.vsix'], ['package.json', 'src']), 'out.vsix does not exist');
      at('out.vsix', 2_000);
      at('out2.js', 2_000);
      assert.strictEqual(m.staleReason(dir, ['out.vsix', 'out2.js'], ['package.json', 'src', 'absent']), '');
      at('src/deep/a.ts', 3_000); // a file two folders down changed
      assert.strictEqual(m.staleReason(dir, ['out.vsix'], ['package.json', 'src']), 'newer inputs: src');
      at('out.vsix', 4_000);
      assert.strictEqual(
        m.staleReason(dir, ['out.vsix', 'out2.js'], ['package.json', 'src']),
        'newer inputs: src',
        'the oldest output decides',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
