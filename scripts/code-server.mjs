#!/usr/bin/env node
// code-server (VS Code 1.100.3 as a server) for the extension-host and end-to-end tests.
//
// The machines this project runs on reach only the npm registry and Debian's packages, so the
// desktop VS Code that @vscode/test-electron downloads is out of reach; code-server ships the same
// workbench and the same remote (Node) extension host through npm. See docs/real-vscode-tests.md
// in the shared docs for every fact this file relies on.
//
// Importable:
//   ensureCodeServer()                       install code-server@4.100.3 into .vscode-test/code-server
//   startCodeServer({ folder, ... })         start it on a free loopback port → { url, port, stop(), logFile, ... }
//   installExtension(vsix, extensionsDir)    code-server --install-extension
// CLI:
//   node scripts/code-server.mjs install
//   node scripts/code-server.mjs start [folder]     (serves until Ctrl+C)
//   node scripts/code-server.mjs install-extension <file.vsix> <extensionsDir>

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The code-server release whose VS Code (1.100.3) and Node requirement (20) we test against. */
export const CODE_SERVER_VERSION = '4.100.3';
/** Repository root (this file lives in scripts/). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** npm prefix code-server is installed into; `.vscode-test/` is git-ignored. */
export const CODE_SERVER_PREFIX = path.join(REPO_ROOT, '.vscode-test', 'code-server');
/** code-server's Node entry point inside the prefix. */
export const CODE_SERVER_ENTRY = path.join(CODE_SERVER_PREFIX, 'node_modules', 'code-server', 'out', 'node', 'entry.js');

// @vscode/ripgrep's postinstall downloads a binary unless this cached archive exists.
const RIPGREP_PACKAGE_VERSION = '1.15.11';
const RIPGREP_RELEASE = 'v13.0.0-10';
const RIPGREP_TARGETS = { x64: 'x86_64-unknown-linux-musl', arm64: 'aarch64-unknown-linux-musl' };

/** User settings written into every user data dir: no welcome page, no telemetry, no trust prompt, no network chatter. */
export const TEST_USER_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'security.workspace.trust.enabled': false,
  'security.workspace.trust.startupPrompt': 'never',
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'git.enabled': false,
  'chat.disableAIFeatures': true,
  'chat.commandCenter.enabled': false,
  'window.commandCenter': false,
  'files.hotExit': 'off',
};

function log(msg) {
  process.stderr.write(`[code-server] ${msg}\n`);
}

/** Version of the installed code-server, or undefined when none (or a broken one) is installed. */
export function installedCodeServerVersion() {
  try {
    if (!fs.existsSync(CODE_SERVER_ENTRY)) return undefined;
    const pkg = JSON.parse(fs.readFileSync(path.join(CODE_SERVER_PREFIX, 'node_modules', 'code-server', 'package.json'), 'utf8'));
    // The marker is written only after `npm install` succeeded, so a half-finished install is redone.
    const marker = path.join(CODE_SERVER_PREFIX, '.installed');
    if (!fs.existsSync(marker) || fs.readFileSync(marker, 'utf8').trim() !== pkg.version) return undefined;
    return pkg.version;
  } catch {
    return undefined;
  }
}

/**
 * Checks the Debian packages the install and the tests need (.ci/run installs them); returns the
 * list of problems, each a sentence a person can act on.
 */
export function checkSystemPrerequisites({ needChromium = true } = {}) {
  const problems = [];
  if (needChromium && !fs.existsSync('/usr/bin/chromium')) {
    problems.push("/usr/bin/chromium is missing: install Debian's chromium (`apt-get install -y chromium`, done by .ci/run).");
  }
  if (!fs.existsSync('/usr/bin/rg')) {
    problems.push(
      "/usr/bin/rg is missing: install Debian's ripgrep (`apt-get install -y ripgrep`, done by .ci/run); code-server's @vscode/ripgrep cannot download its binary here.",
    );
  }
  if (!fs.existsSync('/usr/bin/krb5-config') && !fs.existsSync('/usr/include/krb5.h')) {
    problems.push(
      "libkrb5-dev looks missing (no krb5-config): install it (`apt-get install -y libkrb5-dev`, done by .ci/run); code-server's `kerberos` native module needs it to build.",
    );
  }
  return problems;
}

/**
 * Builds the archive @vscode/ripgrep's install step looks for in its download cache
 * ($TMPDIR/vscode-ripgrep-cache-<pkg version>/ripgrep-<release>-<target>.tar.gz, one executable `rg`)
 * from Debian's /usr/bin/rg, so the install step needs no network. Returns the archive path.
 */
export function prepareRipgrepCache(tmpDir = os.tmpdir()) {
  const target = RIPGREP_TARGETS[process.arch];
  if (!target) throw new Error(`no ripgrep target known for arch ${process.arch}`);
  const cacheDir = path.join(tmpDir, `vscode-ripgrep-cache-${RIPGREP_PACKAGE_VERSION}`);
  const archive = path.join(cacheDir, `ripgrep-${RIPGREP_RELEASE}-${target}.tar.gz`);
  if (fs.existsSync(archive) && fs.statSync(archive).size > 0) return archive;
  if (!fs.existsSync('/usr/bin/rg')) throw new Error('/usr/bin/rg is missing: apt-get install -y ripgrep');
  fs.mkdirSync(cacheDir, { recursive: true });
  const staging = fs.mkdtempSync(path.join(tmpDir, 'rg-staging-'));
  try {
    fs.copyFileSync('/usr/bin/rg', path.join(staging, 'rg'));
    fs.chmodSync(path.join(staging, 'rg'), 0o755);
    const tmpArchive = `${archive}.${process.pid}.tmp`;
    const r = spawnSync('tar', ['-czf', tmpArchive, '-C', staging, 'rg'], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`tar failed building ${archive}`);
    fs.renameSync(tmpArchive, archive);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return archive;
}

/** A directory lock (mkdir is atomic) so two test runs never install into the same prefix at once. */
async function withInstallLock(fn) {
  const lock = `${CODE_SERVER_PREFIX}.lock`;
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      // A lock whose owner is gone is stale.
      let owner = NaN;
      try {
        owner = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8'));
      } catch {
        /* being written */
      }
      let alive = true;
      if (Number.isInteger(owner) && owner > 0) {
        try {
          process.kill(owner, 0);
        } catch {
          alive = false;
        }
      }
      if (!alive) {
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the install lock ${lock}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Installs code-server@4.100.3 into .vscode-test/code-server unless that version is already there.
 * Needs /usr/bin/rg and libkrb5-dev (see .ci/run). Returns `{ entry, version, installed, seconds }`.
 */
export async function ensureCodeServer({ quiet = false } = {}) {
  const have = installedCodeServerVersion();
  if (have === CODE_SERVER_VERSION) return { entry: CODE_SERVER_ENTRY, version: have, installed: false, seconds: 0 };
  return withInstallLock(async () => {
    const again = installedCodeServerVersion();
    if (again === CODE_SERVER_VERSION) return { entry: CODE_SERVER_ENTRY, version: again, installed: false, seconds: 0 };
    const problems = checkSystemPrerequisites({ needChromium: false });
    if (problems.length) {
      for (const p of problems) log(`MISSING: ${p}`);
      throw new Error(`cannot install code-server: ${problems.join(' ')}`);
    }
    const started = Date.now();
    const tmpDir = os.tmpdir();
    const archive = prepareRipgrepCache(tmpDir);
    if (!quiet) log(`ripgrep cache: ${archive}`);
    if (have) log(`replacing code-server ${have} with ${CODE_SERVER_VERSION}`);
    fs.rmSync(CODE_SERVER_PREFIX, { recursive: true, force: true });
    fs.mkdirSync(CODE_SERVER_PREFIX, { recursive: true });
    // A package.json of its own keeps npm from walking up into the extension's package.json.
    fs.writeFileSync(
      path.join(CODE_SERVER_PREFIX, 'package.json'),
      JSON.stringify({ name: 'code-server-test-install', private: true }, null, 2) + '\n',
    );
    const logFile = path.join(path.dirname(CODE_SERVER_PREFIX), 'code-server-install.log');
    log(
      `installing code-server@${CODE_SERVER_VERSION} into ${path.relative(REPO_ROOT, CODE_SERVER_PREFIX)} (about a minute; log: ${path.relative(REPO_ROOT, logFile)})`,
    );
    const out = fs.openSync(logFile, 'w');
    const code = await new Promise((resolve, reject) => {
      const child = spawn(
        'npm',
        ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', CODE_SERVER_PREFIX, `code-server@${CODE_SERVER_VERSION}`],
        {
          cwd: CODE_SERVER_PREFIX,
          stdio: ['ignore', out, out],
          env: {
            ...process.env,
            TMPDIR: tmpDir, // where @vscode/ripgrep looks for its cache
            npm_config_unsafe_perm: 'true', // the package refuses to install as root without it
            npm_config_yes: 'true', // node-pty's install runs `npx node-gyp`
          },
        },
      );
      child.on('error', reject);
      child.on('close', resolve);
    });
    fs.closeSync(out);
    const seconds = (Date.now() - started) / 1000;
    if (code !== 0 || !fs.existsSync(CODE_SERVER_ENTRY)) {
      const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-40).join('\n');
      throw new Error(`npm install code-server@${CODE_SERVER_VERSION} failed (exit ${code}); last lines of ${logFile}:\n${tail}`);
    }
    const version = JSON.parse(
      fs.readFileSync(path.join(CODE_SERVER_PREFIX, 'node_modules', 'code-server', 'package.json'), 'utf8'),
    ).version;
    fs.writeFileSync(path.join(CODE_SERVER_PREFIX, '.installed'), version + '\n');
    log(`installed code-server ${version} in ${seconds.toFixed(1)} s`);
    return { entry: CODE_SERVER_ENTRY, version, installed: true, seconds };
  });
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

/** GET `url`; resolves with the status code, rejects on a connection error. */
function httpStatus(url, timeoutMs = 2000) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Writes the test user settings into `<userDataDir>/User/settings.json` (merged with `extra`). */
export function writeUserSettings(userDataDir, extra = {}) {
  const dir = path.join(userDataDir, 'User');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ ...TEST_USER_SETTINGS, ...extra }, null, 2) + '\n');
}

/**
 * Environment for code-server child processes: no IPC hook inherited from a surrounding VS Code
 * terminal, plus `extra`.
 * @param {Record<string, string>} [extra]
 */
function childEnv(extra = {}) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE') delete env[k];
  }
  return { ...env, ...extra };
}

/**
 * Installs a packaged extension with `code-server --install-extension` (a bare folder copied into
 * the extensions dir is not picked up). Resolves when done; rejects with the command's output.
 */
export async function installExtension(vsixPath, extensionsDir, { userDataDir } = /** @type {{ userDataDir?: string }} */ ({})) {
  await ensureCodeServer();
  if (!fs.existsSync(vsixPath)) throw new Error(`no such .vsix: ${vsixPath}`);
  fs.mkdirSync(extensionsDir, { recursive: true });
  const ownData = !userDataDir;
  const dataDir = userDataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-cs-install-'));
  try {
    const args = [
      CODE_SERVER_ENTRY,
      '--extensions-dir',
      extensionsDir,
      '--user-data-dir',
      dataDir,
      '--config',
      path.join(dataDir, 'config.yaml'),
      '--force',
      '--install-extension',
      path.resolve(vsixPath),
    ];
    const r = await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, args, { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => {
        output += d;
      });
      child.stderr.on('data', (d) => {
        output += d;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
    if (r.code !== 0) throw new Error(`--install-extension ${vsixPath} failed (exit ${r.code}):\n${r.output}`);
    if (/Failed Installing/i.test(r.output)) throw new Error(`--install-extension ${vsixPath} failed:\n${r.output}`);
    const installed = fs.readdirSync(extensionsDir).filter((f) => !f.startsWith('.') && f !== 'extensions.json');
    if (installed.length === 0) throw new Error(`--install-extension ${vsixPath} installed nothing:\n${r.output}`);
    return r.output;
  } finally {
    if (ownData) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Every live code-server started by this process, stopped if the process exits first. */
const running = new Set();
/** The socket folders of those servers ({@link startCodeServer}), removed when the process exits. */
const runtimeDirs = new Set();
process.on('exit', () => {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  for (const dir of runtimeDirs) fs.rmSync(dir, { recursive: true, force: true });
});
/** On Ctrl+C / SIGTERM (when the caller has no handler of its own) exit, so the 'exit' handler above runs. */
function exitOnSignals() {
  for (const [sig, code] of /** @type {[NodeJS.Signals, number][]} */ ([
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ])) {
    if (process.listenerCount(sig) === 0) process.once(sig, () => process.exit(code));
  }
}

/**
 * Starts code-server on a free 127.0.0.1 port serving `folder`, with fresh (or the given) user data
 * and extensions dirs, and waits until its HTTP server answers.
 *
 * Its sockets live in a folder of their own, removed when it stops: VS Code's server and extension
 * host name their IPC sockets (VSCODE_IPC_HOOK_CLI and others) `vscode-ipc-<uuid>.sock` in
 * $XDG_RUNTIME_DIR, else in the system temp folder, and never delete them (`createRandomIPCHandle`,
 * src/vs/base/parts/ipc/node/ipc.net.ts in microsoft/vscode), so each run used to leave one in /tmp.
 *
 * @param {object} o
 * @param {string} o.folder          the folder to open (absolute or relative to cwd)
 * @param {string} [o.extensionsDir] default: a fresh temp dir
 * @param {string} [o.userDataDir]   default: a fresh temp dir; test user settings are written into it
 * @param {string} [o.installVsix]   a .vsix to install into the extensions dir before starting
 * @param {object} [o.settings]      extra user settings
 * @param {string} [o.logFile]       where code-server's stdout/stderr go (default: <userDataDir>/code-server.log)
 * @param {number} [o.startTimeoutMs] default 60 s
 * @param {boolean} [o.quiet]        fewer log lines while installing
 * @returns {Promise<{url: string, port: number, folder: string, userDataDir: string, extensionsDir: string,
 *   runtimeDir: string, logFile: string, pid: number, stop: () => Promise<void>, exited: Promise<number|null>}>}
 */
export async function startCodeServer(
  {
    folder,
    extensionsDir,
    userDataDir,
    installVsix,
    settings,
    logFile,
    startTimeoutMs = 60_000,
    quiet = false,
  } = /** @type {{ folder: string }} */ ({ folder: '' }),
) {
  if (!folder) throw new Error('startCodeServer: folder is required');
  exitOnSignals();
  await ensureCodeServer({ quiet });
  const absFolder = path.resolve(folder);
  if (!fs.existsSync(absFolder)) throw new Error(`startCodeServer: folder ${absFolder} does not exist`);
  // A temporary folder only when the caller gives no folders of its own (npm start gives both:
  // it used to leave an empty tsi-code-server-* folder behind on every run).
  const tmpRoot = userDataDir && extensionsDir ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-code-server-'));
  userDataDir = path.resolve(userDataDir ?? path.join(/** @type {string} */ (tmpRoot), 'user-data'));
  extensionsDir = path.resolve(extensionsDir ?? path.join(/** @type {string} */ (tmpRoot), 'extensions'));
  fs.mkdirSync(userDataDir, { recursive: true });
  fs.mkdirSync(extensionsDir, { recursive: true });
  writeUserSettings(userDataDir, settings);
  if (installVsix) await installExtension(installVsix, extensionsDir, { userDataDir });
  logFile = path.resolve(logFile ?? path.join(userDataDir, 'code-server.log'));
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  fs.writeFileSync(logFile, ''); // one run per log file: a failure's tail shows this run only

  // Short (a socket path has at most 107 bytes) and private to this server.
  const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-ipc-'));
  runtimeDirs.add(runtimeDir);
  const removeRuntimeDir = () => {
    fs.rmSync(runtimeDir, { recursive: true, force: true });
    runtimeDirs.delete(runtimeDir);
  };

  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const args = [
      CODE_SERVER_ENTRY,
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--user-data-dir',
      userDataDir,
      '--extensions-dir',
      extensionsDir,
      '--config',
      path.join(userDataDir, 'config.yaml'), // keep ~/.config/code-server untouched
      absFolder,
    ];
    const out = fs.openSync(logFile, 'a');
    fs.writeSync(out, `\n### ${new Date().toISOString()} node ${args.join(' ')}\n`);
    // detached: its own process group, so stop() ends code-server and every host it spawned.
    const child = spawn(process.execPath, args, {
      cwd: absFolder,
      env: childEnv({ XDG_RUNTIME_DIR: runtimeDir }),
      stdio: ['ignore', out, out],
      detached: true,
    });
    const pid = /** @type {number} */ (child.pid);
    fs.closeSync(out);
    running.add(child.pid);
    let exitCode;
    const exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        running.delete(child.pid);
        exitCode = code ?? signal;
        resolve(code);
      }),
    );
    child.on('error', (e) => {
      lastError = e;
    });

    const url = `http://127.0.0.1:${port}/`;
    const deadline = Date.now() + startTimeoutMs;
    let up = false;
    while (Date.now() < deadline && exitCode === undefined) {
      try {
        const status = await httpStatus(`${url}healthz`);
        if (status > 0 && status < 500) {
          up = true;
          break;
        }
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const stop = async () => {
      if (exitCode !== undefined) return;
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {
        return;
      }
      const t = setTimeout(() => {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }, 5000);
      await exited;
      clearTimeout(t);
      // Hosts that outlived the server in the same group.
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    };
    if (up) {
      const stopAndClean = async () => {
        await stop();
        removeRuntimeDir();
      };
      return { url, port, folder: absFolder, userDataDir, extensionsDir, runtimeDir, logFile, pid, stop: stopAndClean, exited };
    }
    await stop();
    const tail = tailFile(logFile, 30);
    lastError = new Error(
      exitCode !== undefined
        ? `code-server exited (${exitCode}) before answering on port ${port}; log ${logFile}:\n${tail}`
        : `code-server did not answer on ${url} within ${startTimeoutMs / 1000} s; log ${logFile}:\n${tail}`,
    );
    if (!/EADDRINUSE/.test(tail)) break; // only a port race is worth retrying
  }
  removeRuntimeDir();
  throw lastError;
}

/** Flags for Debian's Chromium under test (no sandbox as root, no GPU, no background network). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];
/** Debian's Chromium (apt-get install chromium); playwright's own browser downloads are out of reach here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Launches Debian's Chromium through playwright-core (headless unless HEADED=1). */
export async function launchChromium({ headless = process.env.HEADED !== '1' } = {}) {
  if (!fs.existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: apt-get install -y chromium (done by .ci/run)`);
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless, args: CHROMIUM_ARGS });
}

/** The last `lines` lines of a text file ('' when it does not exist). */
export function tailFile(file, lines = 60) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Log files under a code-server user data dir whose file name matches `re`, newest first. */
export function findLogs(userDataDir, re) {
  const found = [];
  const walk = (dir, depth) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && depth < 6) walk(p, depth + 1);
      else if (e.isFile() && re.test(e.name)) found.push(p);
    }
  };
  walk(path.join(userDataDir, 'logs'), 0);
  return found.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
}

/** Log files of the extension host under a code-server user data dir, newest first. */
export function findExtensionHostLogs(userDataDir) {
  return findLogs(userDataDir, /^(remote)?exthost\d*\.log$/);
}

// ---------------------------------------------------------------------------------------- CLI
async function cli(argv) {
  const [cmd, ...rest] = argv;
  if (cmd === 'install' || cmd === undefined) {
    for (const p of checkSystemPrerequisites()) log(`MISSING: ${p}`);
    const r = await ensureCodeServer();
    console.log(
      r.installed ? `code-server ${r.version} installed in ${r.seconds.toFixed(1)} s` : `code-server ${r.version} already installed`,
    );
  } else if (cmd === 'start') {
    const folder = rest[0] ?? path.join(REPO_ROOT, 'sample');
    const vsix = rest.includes('--vsix') ? rest[rest.indexOf('--vsix') + 1] : undefined;
    let cs;
    const shutdown = async () => {
      await cs?.stop();
      process.exit(0);
    };
    process.on('SIGINT', shutdown); // registered first, so startCodeServer adds no exit-at-once handler
    process.on('SIGTERM', shutdown);
    cs = await startCodeServer({ folder, installVsix: vsix });
    console.log(`code-server: ${cs.url}?folder=${encodeURIComponent(cs.folder)}\nlog: ${cs.logFile}\nuser data: ${cs.userDataDir}`);
    const code = await cs.exited;
    process.exit(code ?? 1);
  } else if (cmd === 'install-extension') {
    if (rest.length < 2) throw new Error('usage: install-extension <file.vsix> <extensionsDir>');
    console.log(await installExtension(rest[0], rest[1]));
  } else {
    console.error('usage: node scripts/code-server.mjs install | start [folder] [--vsix file] | install-extension <vsix> <dir>');
    process.exit(2);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli(process.argv.slice(2)).catch((e) => {
    console.error(`[code-server] ${e.message ?? e}`);
    process.exit(1);
  });
}
