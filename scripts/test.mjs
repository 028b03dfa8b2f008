#!/usr/bin/env node
// `npm test`: every test tier, in order, with one summary at the end.
//   0. lint      type checks (project + scripts), ESLint, import cycles (scripts/lint.mjs)
//   1. unit      mocha over out/test/unit/**/*.test.js (plain Node, no VS Code), the files in
//                parallel worker processes (two on a two-core machine, one fewer than the cores on
//                larger ones): each file makes its own temporary data, and the generated data
//                files share (sample/, format-fixtures/) is made once before the tiers start
//   2. vscode    the extension-host suite inside code-server (scripts/test-vscode.mjs)
//   3. e2e       the packaged .vsix driven through Chromium (scripts/test-e2e.mjs)
// Flags --lint / --unit / --vscode / --e2e run only the named tiers (combinable). Every tier runs
// even when an earlier one failed; the exit code is nonzero when any failed (a lint error too).
// First the Debian packages the chosen tiers need are installed as `npm start` does
// (scripts/lib/prereqs.mjs: as root with apt-get), or the run stops at once with the one command to run.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CODE_SERVER_VERSION, REPO_ROOT, installedCodeServerVersion } from './code-server.mjs';
import { SetupError, ensureDebianPackages, packagesForTiers } from './lib/prereqs.mjs';

const argv = new Set(process.argv.slice(2));
const known = ['--lint', '--unit', '--vscode', '--e2e'];
for (const a of argv) {
  if (!known.includes(a)) {
    console.error(`unknown flag ${a}; usage: node scripts/test.mjs [--lint] [--unit] [--vscode] [--e2e]`);
    process.exit(2);
  }
}
const only = known.filter((f) => argv.has(f));
const wanted = (flag) => only.length === 0 || only.includes(flag);

const mochaBin = path.join(REPO_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
/** Unit test files at once: two on a two-core machine (mocha's own default would be one). */
const unitJobs = Math.max(2, os.availableParallelism() - 1);

/** Tiers in running order. */
const tiers = [
  { flag: '--lint', name: 'lint (tsc, eslint, import cycles)', cmd: ['scripts/lint.mjs'], noCounts: true },
  {
    flag: '--unit',
    name: 'unit',
    cmd: [
      mochaBin,
      '--ui',
      'bdd',
      '--reporter',
      'spec',
      '--timeout',
      '60000',
      '--parallel',
      '--jobs',
      String(unitJobs),
      'out/test/unit/**/*.test.js',
    ],
  },
  { flag: '--vscode', name: 'vscode (extension host in code-server)', cmd: ['scripts/test-vscode.mjs', '--no-build'] },
  { flag: '--e2e', name: 'e2e (packaged .vsix in Chromium)', cmd: ['scripts/test-e2e.mjs', '--no-build'] },
].filter((t) => wanted(t.flag));

/** Removes terminal colour codes (mocha colours its output when CI is set, even through a pipe). */
function stripAnsi(s) {
  // eslint-disable-next-line no-control-regex -- matching terminal colour codes (ESC) is the point
  return s.replace(/\x1b\[[0-9;]*m/g, '');
}

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`; 100 on Linux), or 0 when unknown. */
const clockTicks = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.trim()) || 0 : 0;
})();

/**
 * CPU seconds (user + system) of every finished child process of this one and of their waited-for
 * descendants: fields 16–17 (`cutime`, `cstime`) of /proc/self/stat (proc(5)). The difference across
 * a tier is the CPU time of the tier's whole process tree, a figure that other jobs on the machine
 * hardly change. `undefined` where /proc is missing.
 */
function childCpuSeconds() {
  if (!clockTicks) return undefined;
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
    return (Number(fields[13]) + Number(fields[14])) / clockTicks;
  } catch {
    return undefined;
  }
}

function banner(text) {
  process.stdout.write(`\n${'='.repeat(78)}\n== ${text}\n${'='.repeat(78)}\n`);
}

/**
 * Runs `node ...args`, streaming its output through, and reads mocha's closing counts
 * ("N passing", "N failing", "N pending") from it.
 */
function runTier(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const counts = { passing: 0, failing: 0, pending: 0, seen: false };
    const scan = (chunk, carry) => {
      const text = carry.value + chunk;
      const lines = text.split('\n');
      carry.value = lines.pop();
      for (const line of lines) {
        const m = /^\s*(\d+) (passing|failing|pending)\b/.exec(stripAnsi(line));
        if (m) {
          counts[m[2]] += Number(m[1]);
          counts.seen = true;
        }
      }
    };
    const outCarry = { value: '' };
    child.stdout.on('data', (d) => {
      process.stdout.write(d);
      scan(String(d), outCarry);
    });
    child.stderr.on('data', (d) => {
      process.stderr.write(d);
    }); // counts come on stdout only
    child.on('error', (err) => {
      console.error(err);
      resolve({ code: 1, counts });
    });
    child.on('close', (code, signal) => {
      scan('\n', outCarry);
      resolve({ code: code ?? (signal ? 1 : 0), counts });
    });
  });
}

async function main() {
  const started = Date.now();
  const results = [];

  try {
    const wantedPackages = packagesForTiers(
      tiers.map((t) => t.flag.slice(2)),
      { codeServerInstalled: installedCodeServerVersion() === CODE_SERVER_VERSION },
    );
    ensureDebianPackages(wantedPackages);
  } catch (err) {
    if (!(err instanceof SetupError)) throw err;
    console.error(`\n✖ npm test: ${err.message}`);
    console.error('tests: 0 passed, 1 failed');
    process.exit(1);
  }

  banner('build: node esbuild.js --tests');
  const build = spawnSync(process.execPath, ['esbuild.js', '--tests'], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (build.status !== 0) {
    console.error('\nBUILD FAILED: no tests were run.');
    console.error('tests: 0 passed, 1 failed');
    process.exit(1);
  }
  // The sample dataset and the format fixtures (with their damaged copies), which many unit test
  // files and every later tier read: made (or found up to date) once here, so that parallel test
  // files never race to write them.
  if (tiers.some((t) => t.flag !== '--lint')) {
    for (const [script, ...args] of [['scripts/make-sample.mjs'], ['scripts/make-format-fixtures.mjs', '--bad', '--quiet']]) {
      const made = spawnSync(process.execPath, [script, ...args], { cwd: REPO_ROOT, stdio: 'inherit' });
      if (made.status !== 0) {
        console.error(`\n${path.basename(script, '.mjs')} FAILED: no tests were run.`);
        console.error('tests: 0 passed, 1 failed');
        process.exit(1);
      }
    }
  }

  for (const tier of tiers) {
    banner(`${tier.name}: node ${path.relative(REPO_ROOT, tier.cmd[0])} ${tier.cmd.slice(1).join(' ')}`);
    const t0 = Date.now();
    const cpu0 = childCpuSeconds();
    const { code, counts } = await runTier(tier.cmd);
    const cpu1 = childCpuSeconds();
    const cpuSeconds = cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0;
    results.push({ ...tier, code, counts, seconds: (Date.now() - t0) / 1000, cpuSeconds });
  }

  banner('summary');
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const r of results) {
    const ok = r.code === 0;
    const counts = r.noCounts
      ? ok
        ? 'clean'
        : 'errors (see above)'
      : r.counts.seen
        ? `${r.counts.passing} passing, ${r.counts.failing} failing${r.counts.pending ? `, ${r.counts.pending} pending` : ''}`
        : 'no test counts (the tier stopped before its tests ran)';
    const cpu = r.cpuSeconds === undefined ? '' : ` (CPU ${r.cpuSeconds.toFixed(0).padStart(4)} s)`;
    console.log(
      `${ok ? 'PASS' : 'FAIL'}  ${r.name.padEnd(40)} ${r.seconds.toFixed(1).padStart(6)} s${cpu}   ${counts}${ok ? '' : `   (exit ${r.code})`}`,
    );
    passed += r.counts.passing;
    skipped += r.counts.pending;
    // A tier that failed without a mocha failure (crash, timeout, setup) still counts as one failure.
    failed += r.counts.failing > 0 ? r.counts.failing : ok ? 0 : 1;
  }
  const bad = results.filter((r) => r.code !== 0);
  console.log(
    `load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')} (1, 5, 15 min; ${os.availableParallelism()} cores)`,
  );
  console.log(
    `\n${bad.length === 0 ? 'ALL TIERS PASSED' : `FAILED TIERS: ${bad.map((r) => r.name.split(' ')[0]).join(', ')}`} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(bad.length === 0 ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  console.error('tests: 0 passed, 1 failed');
  process.exit(1);
});
