#!/usr/bin/env node
/**
 * `npm start`: the main job in one command. Builds the extension, makes the sample dataset if
 * it is missing, packages the .vsix, then opens the sample in VS Code with the extension:
 * - the desktop `code` when it is on PATH (`--extensionDevelopmentPath`, this checkout);
 * - otherwise code-server on 127.0.0.1 with the .vsix installed; prints the URL to open and
 *   serves until Ctrl-C, which stops it cleanly.
 *
 * `npm start -- --screenshot out.png` instead opens shards/tokens_000000.u32 of the sample
 * headlessly in Chromium (code-server + the packaged .vsix), saves what a user would see and
 * exits: proof that the main job runs on a machine without a display.
 *
 * Options: --folder DIR (default: sample/), --screenshot FILE, --code-server (skip desktop `code`).
 */
import { spawnSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const opt = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const screenshot = opt('--screenshot');
const folder = path.resolve(opt('--folder') ?? path.join(repo, 'sample'));
const vsix = path.join(repo, 'token-shard-inspector.vsix');

function step(title, cmd, cmdArgs) {
  const t0 = Date.now();
  process.stderr.write(`▶ ${title}\n`);
  const r = spawnSync(cmd, cmdArgs, { cwd: repo, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) {
    process.stderr.write(`✖ ${title} failed (exit ${r.status ?? r.signal})\n`);
    process.exit(1);
  }
  process.stderr.write(`  done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}

function onPath(bin) {
  return (process.env.PATH ?? '').split(path.delimiter).some((d) => d && fs.existsSync(path.join(d, bin)));
}

step('build (extension, CLI, webviews, test harness)', process.execPath, ['esbuild.js', '--tests']);
if (!fs.existsSync(path.join(folder, 'shard_manifest.jsonl'))) {
  if (opt('--folder')) { process.stderr.write(`✖ ${folder} holds no shard_manifest.jsonl\n`); process.exit(2); }
  step('make the sample dataset', process.execPath, ['scripts/make-sample.mjs']);
}
step('package the extension (.vsix, npm run package)', 'npm', ['run', '--silent', 'package']);

if (screenshot) {
  const { launchWorkbench } = require(path.join(repo, 'out', 'test', 'e2e', 'harness.js'));
  const wb = await launchWorkbench({ folder });
  let code = 0;
  try {
    const shard = fs.readdirSync(path.join(folder, 'shards')).filter((f) => f.endsWith('.u32')).sort()[0];
    await wb.openFileFromExplorer('shards', shard);
    await wb.waitForWebview('.viewport .tok', 60_000);
    await wb.page.waitForTimeout(1500); // let the status bar and document numbers settle
    fs.mkdirSync(path.dirname(path.resolve(screenshot)), { recursive: true });
    await wb.page.screenshot({ path: path.resolve(screenshot) });
    process.stderr.write(`✔ saved ${path.resolve(screenshot)} (shards/${shard} open in the Token Shard editor)\n`);
  } catch (err) {
    process.stderr.write(`✖ could not take the screenshot: ${err?.message ?? err}\n`);
    code = 1;
  } finally {
    await wb.close();
  }
  process.exit(code);
}

if (onPath('code') && !args.includes('--code-server')) {
  process.stderr.write(`▶ opening ${folder} in VS Code with this checkout as the development extension\n`);
  const child = spawn('code', ['--extensionDevelopmentPath', repo, folder], { stdio: 'inherit' });
  child.on('exit', (c) => process.exit(c ?? 0));
} else {
  let server;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    process.stderr.write('\nstopping code-server …\n');
    await server?.stop();
    process.exit(0);
  };
  // Registered before code-server starts, so Ctrl-C during the install stops cleanly too.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const cs = await import(path.join(repo, 'scripts', 'code-server.mjs'));
  // One user-data folder per checkout: workspace state (e.g. the manifest-table offer, shown
  // once per workspace) survives restarts, as it does in a desktop VS Code.
  const userDataDir = path.join(repo, '.vscode-test', 'start-user-data');
  server = await cs.startCodeServer({ folder, installVsix: vsix, userDataDir, extensionsDir: path.join(userDataDir, 'extensions') });
  const url = `${server.url}?folder=${encodeURIComponent(folder)}`;
  process.stdout.write(`\nToken Shard Inspector is running in code-server (VS Code in the browser).\n\n  Open ${url}\n\n` +
    `Over SSH, forward the port first: ssh -L ${server.port}:127.0.0.1:${server.port} <host>\n` +
    'Press Ctrl-C to stop.\n');
  server.exited.then((c) => { if (!stopping) { process.stderr.write(`code-server exited (${c}); log: ${server.logFile}\n`); process.exit(1); } });
}
