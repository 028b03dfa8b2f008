#!/usr/bin/env node
/**
 * `npm start`: the main job in one command. Installs what a fresh Debian machine lacks (as root
 * with apt-get; otherwise prints the exact command and stops), builds the extension, makes the
 * sample dataset if it is missing, packages the .vsix, then opens the sample in VS Code with the
 * extension:
 * - the desktop `code` when it is on PATH (`--extensionDevelopmentPath`, this checkout);
 * - otherwise code-server on 127.0.0.1 with the .vsix installed; prints the URL to open and
 *   serves until Ctrl-C, which stops it cleanly.
 *
 * `npm start -- --screenshot [FILE]` instead opens shards/tokens_000000.u32 of the sample
 * headlessly in Chromium (code-server + the packaged .vsix), saves what a user would see and
 * exits. FILE is relative to the folder you ran `npm start` in; without FILE the picture goes to
 * test-results/screenshots/npm-start.png in this checkout (git-ignored).
 *
 * Output is a few lines (one per step); `--verbose` shows the build, packaging and apt output.
 * Failures are one line (plus the failing step's last output lines), exit code 1; no stack trace.
 *
 * Options: --folder DIR (default: sample/), --screenshot [FILE], --code-server (skip desktop
 * `code`), --verbose.
 */
import { spawnSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { BUILD_INPUTS, VSIX_INPUTS, staleReason } from './lib/freshness.mjs';
import { SetupError, ensureDebianPackages, runScript } from './lib/prereqs.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const verbose = args.includes('--verbose');
/** The folder the user ran `npm start` in (npm runs scripts in the package root). */
const userCwd = process.env.INIT_CWD ?? process.cwd();
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] && !args[i + 1].startsWith('--') ? args[i + 1] : undefined;
};
const KNOWN = new Set(['--verbose', '--screenshot', '--folder', '--code-server']);
const DEFAULT_SCREENSHOT = path.join(repo, 'test-results', 'screenshots', 'npm-start.png');
const screenshot = args.includes('--screenshot') ? path.resolve(userCwd, opt('--screenshot') ?? DEFAULT_SCREENSHOT) : undefined;
const folder = path.resolve(userCwd, opt('--folder') ?? path.join(repo, 'sample'));
const vsix = path.join(repo, 'token-shard-inspector.vsix');
const say = (s) => process.stderr.write(s + '\n');

/** Runs one step; its output is shown only with --verbose or when it fails (last 40 lines). */
function step(title, cmd, cmdArgs) {
  const t0 = Date.now();
  process.stderr.write(`▶ ${title} … `);
  const r = spawnSync(cmd, cmdArgs, {
    cwd: repo,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    stdio: verbose ? ['ignore', 'inherit', 'inherit'] : ['ignore', 'pipe', 'pipe'],
  });
  if (r.status !== 0) {
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trimEnd().split('\n').slice(-40).join('\n');
    throw new SetupError(`${title} failed (exit ${r.status ?? r.signal})${out ? `; its last output lines:\n${out}` : ''}`);
  }
  process.stderr.write(`${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}

function onPath(bin) {
  return (process.env.PATH ?? '').split(path.delimiter).some((d) => d && fs.existsSync(path.join(d, bin)));
}

async function main() {
  for (let i = 0; i < args.length; i++) {
    if (!args[i].startsWith('--')) continue;
    if (!KNOWN.has(args[i]))
      throw new SetupError(
        `unknown option ${args[i]}; usage: npm start -- [--screenshot [FILE]] [--folder DIR] [--code-server] [--verbose]`,
      );
  }
  const useDesktop = !screenshot && onPath('code') && !args.includes('--code-server');
  const cs = await import(path.join(repo, 'scripts', 'code-server.mjs'));
  // Debian packages: only what this run needs (code-server's install, Chromium for a screenshot).
  const wanted = [];
  if (!useDesktop && cs.installedCodeServerVersion() !== cs.CODE_SERVER_VERSION) wanted.push('ripgrep', 'libkrb5-dev');
  if (screenshot) wanted.push('chromium');
  ensureDebianPackages(wanted, { verbose, log: say });

  // Skipped when nothing changed since the last run (outputs newer than every input).
  const buildStale = staleReason(repo, ['dist/extension.js', 'out/test/e2e/harness.js'], BUILD_INPUTS);
  if (buildStale) step(`build (${buildStale})`, process.execPath, ['esbuild.js', '--tests']);
  else say('✔ build is up to date');
  if (!fs.existsSync(path.join(folder, 'shard_manifest.jsonl'))) {
    if (opt('--folder')) throw new SetupError(`${folder} holds no shard_manifest.jsonl; pass a dataset folder to --folder`);
    step('make the sample dataset (sample/, git-ignored)', process.execPath, ['scripts/make-sample.mjs']);
  }
  const vsixStale = staleReason(repo, [path.basename(vsix)], VSIX_INPUTS);
  if (vsixStale) step(`package the extension (token-shard-inspector.vsix; ${vsixStale})`, 'npm', ['run', '--silent', 'package']);
  else say(`✔ ${path.basename(vsix)} is up to date`);

  if (screenshot) {
    const { launchWorkbench } = require(path.join(repo, 'out', 'test', 'e2e', 'harness.js'));
    say('▶ opening a shard in code-server + headless Chromium …');
    const wb = await launchWorkbench({ folder });
    try {
      const shard = fs
        .readdirSync(path.join(folder, 'shards'))
        .filter((f) => f.endsWith('.u32'))
        .sort()[0];
      await wb.openFileFromExplorer('shards', shard);
      await wb.waitForWebview('.viewport .tok', 60_000);
      await wb.page.waitForTimeout(1500); // let the status bar and document numbers settle
      fs.mkdirSync(path.dirname(screenshot), { recursive: true });
      await wb.page.screenshot({ path: screenshot });
      say(`✔ saved ${screenshot} (shards/${shard} open in the Token Shard editor)`);
    } catch (err) {
      throw new SetupError(`could not take the screenshot: ${err?.message ?? err}`);
    } finally {
      await wb.close();
    }
    return 0;
  }

  if (useDesktop) {
    say(`▶ opening ${folder} in VS Code with this checkout as the development extension`);
    const child = spawn('code', ['--extensionDevelopmentPath', repo, folder], { stdio: 'inherit' });
    return new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 0)));
  }
  let server;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    say('\nstopping code-server …');
    await server?.stop();
    process.exit(0);
  };
  // Registered before code-server starts, so Ctrl-C during the install stops cleanly too.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  if (cs.installedCodeServerVersion() !== cs.CODE_SERVER_VERSION)
    say(`▶ installing code-server ${cs.CODE_SERVER_VERSION} into .vscode-test/ (first run only: about a minute, ~300 MB)`);
  // One user-data folder per checkout: workspace state (e.g. the manifest-table offer, shown
  // once per workspace) survives restarts, as it does in a desktop VS Code.
  const userDataDir = path.join(repo, '.vscode-test', 'start-user-data');
  server = await cs.startCodeServer({
    folder,
    installVsix: vsix,
    userDataDir,
    extensionsDir: path.join(userDataDir, 'extensions'),
    quiet: !verbose,
  });
  const url = `${server.url}?folder=${encodeURIComponent(folder)}`;
  process.stdout.write(
    `\nToken Shard Inspector is running in code-server (VS Code in the browser).\n\n  Open ${url}\n\n` +
      `Over SSH, forward the port first: ssh -L ${server.port}:127.0.0.1:${server.port} <host>\n` +
      'Press Ctrl-C to stop.\n',
  );
  return server.exited.then((c) => {
    if (stopping) return 0;
    say(`✖ code-server exited (${c}); log: ${server.logFile}`);
    return 1;
  });
}

runScript('npm start', main, { verbose });
