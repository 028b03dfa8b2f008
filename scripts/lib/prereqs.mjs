/**
 * First-run set-up of the Debian packages `npm start` (and the tests) need, in one place:
 *   ripgrep      code-server's @vscode/ripgrep install step would download rg (no network here)
 *   libkrb5-dev  code-server's `kerberos` native module builds against it
 *   chromium     `npm start -- --screenshot` and the end-to-end tests drive it
 *   fonts-noto-cjk, fonts-noto-color-emoji   CJK and emoji glyphs in the end-to-end screenshots
 *   python3-numpy, python3-regex   the unit tests' Python references (the dataset card's reader,
 *                the search reference's `\b` and case folding)
 *   zstd         the unit tests' zstd-compressed MDS fixtures (scripts/lib/format-writers/mds.mjs)
 *
 * As root with apt-get available, missing packages are installed (one line says what and why;
 * apt's output goes to a log file unless --verbose). Otherwise one line gives the exact command
 * to run, and the caller exits non-zero. Never a stack trace.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Every package this project may need: how to tell it is there, and why it is needed. */
export const DEBIAN_PACKAGES = {
  ripgrep: {
    present: () => fs.existsSync('/usr/bin/rg'),
    why: "code-server's install needs /usr/bin/rg (its own download is out of reach)",
  },
  'libkrb5-dev': {
    present: () =>
      fs.existsSync('/usr/bin/krb5-config') || fs.existsSync('/usr/include/krb5.h') || fs.existsSync('/usr/include/krb5/krb5.h'),
    why: "code-server's kerberos module builds against it",
  },
  chromium: { present: () => fs.existsSync('/usr/bin/chromium'), why: 'the headless browser for --screenshot and the end-to-end tests' },
  'fonts-noto-cjk': { present: () => dpkgInstalled('fonts-noto-cjk'), why: 'CJK glyphs in the end-to-end screenshots' },
  'fonts-noto-color-emoji': { present: () => dpkgInstalled('fonts-noto-color-emoji'), why: 'emoji glyphs in the end-to-end screenshots' },
  'python3-numpy': { present: () => pythonImports('numpy'), why: "the unit tests' reference reader (the dataset card's Python)" },
  'python3-regex': { present: () => pythonImports('regex'), why: "the unit tests' search reference (scripts/reference_search.py)" },
  zstd: { present: () => fs.existsSync('/usr/bin/zstd'), why: "compresses the unit tests' zstd MDS fixtures" },
};

/** True when dpkg says `pkg` is installed. */
function dpkgInstalled(pkg) {
  return spawnSync('dpkg-query', ['-W', '-f', '${Status}', pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed') ?? false;
}

/** True when `python3` (the one on PATH, which the tests run) imports `module`. */
function pythonImports(module) {
  return spawnSync('python3', ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0;
}

/**
 * The Debian packages each test tier needs (`scripts/test.mjs`): `unit` the Python references and zstd;
 * `vscode` code-server's install (only while it is not installed: pass `codeServerInstalled`);
 * `e2e` that too, plus Chromium and the screenshot fonts.
 * @param {string[]} tiers tier names: 'lint', 'unit', 'vscode', 'e2e'
 * @param {{ codeServerInstalled?: boolean }} [o]
 * @returns {string[]} keys of {@link DEBIAN_PACKAGES}, each once
 */
export function packagesForTiers(tiers, { codeServerInstalled = false } = {}) {
  const out = new Set();
  if (tiers.includes('unit')) for (const p of ['python3-numpy', 'python3-regex', 'zstd']) out.add(p);
  if ((tiers.includes('vscode') || tiers.includes('e2e')) && !codeServerInstalled) for (const p of ['ripgrep', 'libkrb5-dev']) out.add(p);
  if (tiers.includes('e2e')) for (const p of ['chromium', 'fonts-noto-cjk', 'fonts-noto-color-emoji']) out.add(p);
  return [...out];
}

/** An error whose message is one line for the user (the caller prints it and exits 1, no stack). */
export class SetupError extends Error {}

/** Names of the packages in `wanted` that are missing. */
export function missingPackages(wanted) {
  return wanted.filter((p) => !DEBIAN_PACKAGES[p].present());
}

function hasApt() {
  return fs.existsSync('/usr/bin/apt-get');
}

/**
 * Makes sure the Debian packages in `wanted` are installed.
 * @param {string[]} wanted keys of DEBIAN_PACKAGES
 * @param {{ verbose?: boolean, log?: (s: string) => void, logDir?: string, isRoot?: boolean, apt?: boolean, aptGet?: string }} [o]
 *   isRoot / apt override what this machine is, aptGet the program run as apt-get (for tests).
 * @throws SetupError with the exact command to run when they are missing and cannot be installed here.
 */
export function ensureDebianPackages(
  wanted,
  { verbose = false, log = (s) => process.stderr.write(s + '\n'), logDir = os.tmpdir(), isRoot, apt, aptGet = 'apt-get' } = {},
) {
  const missing = missingPackages(wanted);
  if (missing.length === 0) return [];
  const why = missing.map((p) => `${p} (${DEBIAN_PACKAGES[p].why})`).join('; ');
  const command = `apt-get update && apt-get install -y ${missing.join(' ')}`;
  isRoot ??= typeof process.getuid === 'function' && process.getuid() === 0;
  apt ??= hasApt();
  if (!isRoot || !apt) {
    const how = apt ? `sudo sh -c '${command}'` : `install ${missing.join(', ')} with your system's package manager`;
    throw new SetupError(`missing system packages: ${why}. Run: ${how}  — then run the command again.`);
  }
  log(`▶ installing ${missing.join(', ')} with apt-get: ${why}`);
  const logFile = path.join(logDir, `tsi-apt-${process.pid}.log`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...missing]]) {
    const r = spawnSync(aptGet, args, {
      env,
      encoding: 'utf8',
      stdio: verbose ? 'inherit' : ['ignore', 'pipe', 'pipe'],
      maxBuffer: 1 << 28,
    });
    if (!verbose) fs.appendFileSync(logFile, `$ apt-get ${args.join(' ')}\n${r.stdout ?? ''}${r.stderr ?? ''}`);
    if (r.status !== 0) {
      throw new SetupError(
        `apt-get ${args[0]} failed (exit ${r.status ?? r.signal})${verbose ? '' : `; its output is in ${logFile}`}. Run it yourself: ${command}`,
      );
    }
  }
  if (!verbose) fs.rmSync(logFile, { force: true });
  const still = missingPackages(missing);
  if (still.length)
    throw new SetupError(
      `apt-get installed ${missing.join(' ')} but ${still.join(', ')} still look missing; check with: dpkg -s ${still.join(' ')}`,
    );
  return missing;
}

/**
 * Runs `main` as the body of a command-line script (`npm start`): what it resolves to is the exit
 * code (default 0); any error becomes one line `✖ <name>: <message>` on stderr and exit 1 — the
 * first line of the message only, and a stack trace only with `verbose` for an error that is not
 * a {@link SetupError}.
 * @param {string} name how the line names the script ("npm start").
 * @param {() => Promise<number | undefined>} main
 * @param {{ verbose?: boolean }} [o]
 */
export function runScript(name, main, { verbose = false } = {}) {
  main().then(
    (code) => process.exit(code ?? 0),
    (err) => {
      const oneLine = err instanceof SetupError ? err.message : `${err?.message ?? err}`.split('\n')[0];
      process.stderr.write(`\n✖ ${name}: ${oneLine}\n`);
      if (verbose && !(err instanceof SetupError) && err?.stack) process.stderr.write(err.stack + '\n');
      process.exit(1);
    },
  );
}
