#!/usr/bin/env node
// Runs the extension-host mocha suite (out/test/vscode/index.js) inside a real VS Code: code-server
// 4.100.3 serves the workbench, Debian's Chromium (driven by playwright-core) loads it with a
// `payload` that names this repository as the extension under development and the suite as its
// tests. The suite's output is streamed here; the process exits with the suite's code.
//
//   node scripts/test-vscode.mjs [--no-build] [--grep <title regexp>] [--timeout <seconds>]
//
// Environment: TSI_SAMPLE_DIR (folder to open, default sample/), HEADED=1 (show the browser),
// TSI_VERBOSE=1 (also print the workbench's own log lines).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import util from 'node:util';
import {
  REPO_ROOT,
  checkSystemPrerequisites,
  ensureCodeServer,
  findExtensionHostLogs,
  launchChromium,
  startCodeServer,
  tailFile,
} from './code-server.mjs';

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);

const timeoutSec = Number(option('--timeout', process.env.TSI_VSCODE_TIMEOUT ?? 600));
const grep = option('--grep', process.env.MOCHA_GREP);
const verbose = process.env.TSI_VERBOSE === '1';
const sampleDir = path.resolve(process.env.TSI_SAMPLE_DIR ?? path.join(REPO_ROOT, 'sample'));
const resultsDir = path.join(REPO_ROOT, 'test-results');
const testsEntry = path.join(REPO_ROOT, 'out', 'test', 'vscode', 'index.js');

function say(msg) {
  process.stderr.write(`[test-vscode] ${msg}\n`);
}

function run(cmd, args) {
  say(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: REPO_ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`\`${cmd} ${args.join(' ')}\` failed (exit ${r.status ?? r.signal})`);
}

/** Workbench log lines that are noise here (no network: marketplace, telemetry, update checks). */
const NOISE =
  /open-vsx|marketplace|telemetry|update\.code\.visualstudio|vscode-unpkg|getaddrinfo|ENOTFOUND|ECONNREFUSED|Failed to fetch|extensionGallery|net::ERR_/i;
/** The workbench's routine start-up chatter (its log service also writes to `codeAutomationLog`). */
const CHATTER =
  /^(Resolving connection token|Resolved connection token|Creating a socket|Updating additional builtin extensions cache|\[Service Worker\]|ChatSessionStore:|Started initializing|Completed initializing)/;

/**
 * The workbench forwards the extension host's console (where mocha's spec reporter writes) and
 * its own log service to `codeAutomationLog(type, args)`; everything arrives as type `info` with
 * console-style arguments (`'%s%s', a, b`). Test output is printed as is; start-up chatter and
 * no-network errors only with TSI_VERBOSE=1.
 */
function printAutomationLog(type, args) {
  const parts = Array.isArray(args) ? args : [args];
  let text = util.format(...parts.map((a) => (typeof a === 'string' || typeof a === 'number' ? a : util.inspect(a, { depth: 4 }))));
  // eslint-disable-next-line no-control-regex -- matching terminal colour codes (ESC) is the point
  if (!process.stdout.isTTY) text = text.replace(/\x1b\[[0-9;]*m/g, ''); // mocha colours its marks when CI is set
  if (!verbose && (CHATTER.test(text) || NOISE.test(text))) return;
  (type === 'error' || type === 'warn' ? process.stderr : process.stdout).write(text.endsWith('\n') ? text : text + '\n');
}

async function main() {
  const started = Date.now();
  fs.mkdirSync(resultsDir, { recursive: true });

  if (!flag('--no-build')) run(process.execPath, ['esbuild.js', '--tests']);
  if (!fs.existsSync(testsEntry))
    throw new Error(`${testsEntry} is missing: is test/vscode/index.ts there, and did \`node esbuild.js --tests\` run?`);

  if (process.env.TSI_SAMPLE_DIR) {
    if (!fs.existsSync(path.join(sampleDir, 'shards'))) throw new Error(`TSI_SAMPLE_DIR=${sampleDir} has no shards/ folder`);
  } else {
    run(process.execPath, ['scripts/make-sample.mjs']); // idempotent: a no-op when sample/ is up to date
    if (!fs.existsSync(path.join(sampleDir, 'shards'))) throw new Error(`scripts/make-sample.mjs made no ${sampleDir}/shards`);
  }

  const problems = checkSystemPrerequisites();
  if (problems.length) {
    for (const p of problems) say(`MISSING: ${p}`);
    throw new Error('system prerequisites are missing (run .ci/run, or install them as it does)');
  }
  const install = await ensureCodeServer();
  if (install.installed) say(`code-server installed in ${install.seconds.toFixed(1)} s`);

  if (grep) process.env.MOCHA_GREP = grep; // inherited by code-server and its extension host
  const cs0 = Date.now();
  const cs = await startCodeServer({ folder: sampleDir }); // its log lives in the user data dir, kept on failure
  say(`code-server ${cs.url} up in ${((Date.now() - cs0) / 1000).toFixed(1)} s (log: ${cs.logFile})`);

  let browser;
  let page;
  let exitCode = 1;
  let failure;
  let timer;
  try {
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });

    let finish;
    const finished = new Promise((resolve) => {
      finish = resolve;
    });
    await page.exposeFunction('codeAutomationLog', (type, args) => printAutomationLog(type, args));
    await page.exposeFunction('codeAutomationExit', (code, logs) => {
      // `logs` are the workbench's browser-side log files (kept in IndexedDB): keep them for a post-mortem.
      if (Array.isArray(logs)) {
        const dir = path.join(resultsDir, 'vscode-suite-workbench-logs');
        fs.rmSync(dir, { recursive: true, force: true });
        for (const f of logs) {
          if (!f || typeof f.relativePath !== 'string' || f.relativePath.includes('..')) continue;
          const p = path.join(dir, f.relativePath);
          fs.mkdirSync(path.dirname(p), { recursive: true });
          fs.writeFileSync(p, String(f.contents ?? ''));
        }
      }
      finish({ code: Number(code) });
    });
    // The webview frames' console (their own page and code-server's webview host page, which says
    // what its service worker does) goes to a file: the post-mortem of a webview that never loaded.
    const webviewLog = path.join(resultsDir, 'vscode-webview-console.log');
    fs.writeFileSync(webviewLog, '');
    page.on('console', (m) => {
      const frame = m.location()?.url ?? '';
      if (!/webview/.test(frame)) return;
      const id = /[?&]id=([^&]+)/.exec(frame)?.[1] ?? '';
      fs.appendFileSync(webviewLog, `${new Date().toISOString()} [${id.slice(0, 8)}] ${m.type()}: ${m.text()}\n`);
    });
    // …and the webview resources they load (through code-server's webview service worker): when
    // each was asked for and when it finished, to tell a resource that never came back.
    const asked = new Map();
    const resourceName = (u) => /vscode-cdn|vscode-resource/.test(u) && u.replace(/^.*\/(?=[^/]+$)/, '').replace(/\?.*$/, '');
    page.on('request', (r) => {
      const name = resourceName(r.url());
      if (!name) return;
      asked.set(r, Date.now());
      fs.appendFileSync(
        webviewLog,
        `${new Date().toISOString()} request ${name} (frame ${(/[?&]id=([^&]+)/.exec(r.frame().url())?.[1] ?? '?').slice(0, 8)})\n`,
      );
    });
    const settled = (how) => (r) => {
      const t = asked.get(r);
      if (t === undefined) return;
      asked.delete(r);
      fs.appendFileSync(
        webviewLog,
        `${new Date().toISOString()} ${how} ${resourceName(r.url())} after ${Date.now() - t} ms${how === 'failed' ? ` (${r.failure()?.errorText})` : ''}\n`,
      );
    };
    page.on('requestfinished', settled('finished'));
    page.on('requestfailed', settled('failed'));
    page.on('pageerror', (err) => {
      if (verbose || !NOISE.test(String(err))) say(`page error: ${err.message ?? err}`);
    });
    page.on('crash', () => finish({ code: 1, reason: 'the workbench page crashed' }));
    page.on('close', () => finish({ code: 1, reason: 'the workbench page closed before the suite finished' }));

    const remote = (p) => `vscode-remote://127.0.0.1:${cs.port}${p}`;
    const payload = [
      ['extensionDevelopmentPath', remote(REPO_ROOT)],
      ['extensionTestsPath', remote(testsEntry)],
      ['skipWelcome', 'true'],
      ['skipReleaseNotes', 'true'],
    ];
    const url = `${cs.url}?folder=${encodeURIComponent(sampleDir)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    say(`opening the workbench with the suite as its extension tests (timeout ${timeoutSec} s)`);
    const timedOut = new Promise((resolve) => {
      timer = setTimeout(
        () =>
          resolve({
            code: 1,
            reason: `timed out after ${timeoutSec} s waiting for the suite to finish (is the extension host hanging? see the logs below)`,
          }),
        timeoutSec * 1000,
      );
    });
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 120_000 });
    const result = await Promise.race([
      finished,
      timedOut,
      cs.exited.then((c) => ({ code: 1, reason: `code-server exited (${c}) during the run` })),
    ]);
    exitCode = result.code;
    if (result.reason) failure = result.reason;
    else if (exitCode !== 0) failure = `the suite failed (exit code ${exitCode})`;
  } catch (err) {
    failure = `runner error: ${err.stack ?? err}`;
    exitCode = 1;
  } finally {
    clearTimeout(timer);
    if (exitCode !== 0) {
      if (page && !page.isClosed()) {
        const shot = path.join(resultsDir, 'vscode-suite-failure.png');
        try {
          await page.screenshot({ path: shot, timeout: 10_000 });
          say(`screenshot: ${path.relative(REPO_ROOT, shot)}`);
        } catch {
          /* page gone */
        }
      }
      const hostLogs = findExtensionHostLogs(cs.userDataDir);
      if (hostLogs.length) {
        for (const f of hostLogs.slice(0, 2)) {
          process.stderr.write(`\n----- tail of extension host log ${f} -----\n${tailFile(f, 80)}\n`);
        }
      } else {
        say(`no extension host log found under ${path.join(cs.userDataDir, 'logs')}`);
      }
      process.stderr.write(`\n----- tail of code-server log ${cs.logFile} -----\n${tailFile(cs.logFile, 40)}\n\n`);
    }
    if (browser) await browser.close().catch(() => {});
    await cs.stop();
    if (exitCode === 0) fs.rmSync(path.dirname(cs.userDataDir), { recursive: true, force: true });
    else say(`user data dir kept for inspection: ${cs.userDataDir}`);
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (failure) say(`FAILED in ${secs} s: ${failure}`);
  else say(`passed in ${secs} s`);
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    say(`FAILED: ${err.message ?? err}`);
    process.exit(1);
  },
);
