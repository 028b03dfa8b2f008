#!/usr/bin/env node
// End-to-end tests: the packaged extension (token-shard-inspector.vsix) in code-server, driven by
// Debian's Chromium through playwright-core (test/e2e/harness.ts). Repackages the .vsix when any
// of its inputs is newer than it, then runs mocha over out/test/e2e/*.e2e.test.js — or, with
// --bench, over the end-to-end benchmarks out/test/bench/*.bench.js instead (they measure and
// are not tests; `npm run bench` runs them through scripts/bench/openTiming.mjs).
//
//   node scripts/test-e2e.mjs [--no-build] [--grep <title regexp>] [--bench] [--jobs N]
//
// The spec files run N at a time (mocha --parallel, one worker process per file at a time; default
// 2, or 1 on a one-core machine). Each file starts its own code-server and Chromium with fresh user
// data, so files share nothing but the generated datasets, each of which one file makes. Most of a
// file's time is spent waiting for the workbench (start-up, hover delays, rendering), so two files
// at once on two cores finish well before one after the other would (docs/benchmarks.md, "The
// test run"). Benchmarks always run one at a time: they measure.
//
// Environment: TSI_SAMPLE_DIR (folder to open, default sample/), HEADED=1, TSI_KEEP_E2E_DATA=1.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, checkSystemPrerequisites, ensureCodeServer } from './code-server.mjs';
import { VSIX_INPUTS, staleReason } from './lib/freshness.mjs';

const argv = process.argv.slice(2);
const VSIX = path.join(REPO_ROOT, 'token-shard-inspector.vsix');
function say(msg) {
  process.stderr.write(`[test-e2e] ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  say(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: REPO_ROOT, stdio: 'inherit', ...opts });
  return r.status ?? 1;
}

function main() {
  const started = Date.now();
  const stale = staleReason(REPO_ROOT, [path.basename(VSIX)], VSIX_INPUTS);
  if (stale) {
    say(`packaging the extension (${stale})`);
    if (run('npm', ['run', 'package']) !== 0) {
      say('FAILED: `npm run package` failed');
      return 1;
    }
  } else {
    say(`${path.basename(VSIX)} is up to date`);
  }
  if (!argv.includes('--no-build') && run(process.execPath, ['esbuild.js', '--tests']) !== 0) {
    say('FAILED: build');
    return 1;
  }
  if (!process.env.TSI_SAMPLE_DIR && run(process.execPath, ['scripts/make-sample.mjs']) !== 0) {
    say('FAILED: make-sample');
    return 1;
  }

  const problems = checkSystemPrerequisites();
  if (problems.length) {
    for (const p of problems) say(`MISSING: ${p}`);
    say('FAILED: system prerequisites are missing (run .ci/run, or install them as it does)');
    return 1;
  }
  return ensureCodeServer().then(() => {
    const bench = argv.includes('--bench');
    const dir = path.join(REPO_ROOT, 'out', 'test', bench ? 'bench' : 'e2e');
    const suffix = bench ? '.bench.js' : '.e2e.test.js';
    // Longest first, so that the last file to start is a short one: mocha hands the files to its
    // workers in this order. The size of a file's source (test/e2e/<name>.ts) stands in for its
    // duration: the edge-documents file, the largest, takes the longest by far.
    const sourceBytes = (f) => {
      try {
        return fs.statSync(path.join(REPO_ROOT, 'test', bench ? 'bench' : 'e2e', f.replace(/\.js$/, '.ts'))).size;
      } catch {
        return 0;
      }
    };
    const files = fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((f) => f.endsWith(suffix))
          .sort()
          .sort((a, b) => sourceBytes(b) - sourceBytes(a))
          .map((f) => path.join(dir, f))
      : [];
    if (files.length === 0) {
      say(`FAILED: no *${suffix} in ${dir}`);
      return 1;
    }
    const grepAt = argv.indexOf('--grep');
    const jobsAt = argv.indexOf('--jobs');
    const jobs = bench ? 1 : jobsAt >= 0 ? Number(argv[jobsAt + 1]) : Math.min(2, os.availableParallelism());
    if (!Number.isInteger(jobs) || jobs < 1) {
      say(`FAILED: --jobs takes a whole number of at least 1, not ${argv[jobsAt + 1]}`);
      return 1;
    }
    const mochaArgs = [
      path.join(REPO_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'),
      '--ui',
      'bdd',
      '--reporter',
      'spec',
      '--timeout',
      '600000',
      '--slow',
      '30000',
      '--exit',
      ...(jobs > 1 && files.length > 1 ? ['--parallel', '--jobs', String(jobs)] : []),
      ...(grepAt >= 0 ? ['--grep', argv[grepAt + 1]] : []),
      ...files,
    ];
    const code = run(process.execPath, mochaArgs);
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    say(code === 0 ? `passed in ${secs} s` : `FAILED in ${secs} s (mocha exit ${code}; screenshots in test-results/screenshots/)`);
    return code;
  });
}

Promise.resolve()
  .then(main)
  .then(
    (code) => process.exit(code),
    (err) => {
      say(`FAILED: ${err.message ?? err}`);
      process.exit(1);
    },
  );
