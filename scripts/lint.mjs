#!/usr/bin/env node
// `npm run lint`: every static check, in order, each run even when an earlier one failed:
//   1. tsc -p tsconfig.json            the extension, webviews and tests (strict)
//   2. tsc -p tsconfig.scripts.json    the Node scripts, checked through their JSDoc
//   3. eslint .                        eslint.config.mjs (type-aware for TypeScript)
//   4. madge --circular                no import cycles in src/ and webview/
//   5. prettier --check                the formatter's style (.prettierrc.json; `npm run format` fixes it)
// Exits nonzero when any step failed; the last line says which.

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (pkg, file) => path.join(ROOT, 'node_modules', pkg, file);

/** The steps: a name and the node script + arguments to run. */
const steps = [
  { name: 'tsc (project)', args: [bin('typescript', 'bin/tsc'), '-p', 'tsconfig.json'] },
  { name: 'tsc (scripts)', args: [bin('typescript', 'bin/tsc'), '-p', 'tsconfig.scripts.json'] },
  { name: 'eslint', args: [bin('eslint', 'bin/eslint.js'), '--max-warnings', '0', '.'] },
  {
    name: 'madge (import cycles)',
    args: [
      bin('madge', 'bin/cli.js'),
      '--circular',
      '--no-spinner',
      '--extensions',
      'ts',
      '--ts-config',
      'tsconfig.json',
      'src',
      'webview',
    ],
  },
  {
    name: 'prettier (format check)',
    args: [
      bin('prettier', 'bin/prettier.cjs'),
      '--check',
      '--log-level',
      'warn',
      'src',
      'webview',
      'test',
      'scripts',
      'esbuild.js',
      'eslint.config.mjs',
    ],
  },
];

const failed = [];
for (const step of steps) {
  process.stdout.write(`\n── lint: ${step.name}\n`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, step.args, { cwd: ROOT, stdio: 'inherit' });
  const ok = r.status === 0;
  process.stdout.write(`── ${ok ? 'ok' : 'FAILED'}: ${step.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
  if (!ok) failed.push(step.name);
}
console.log(failed.length === 0 ? '\nlint: all checks passed' : `\nlint: FAILED: ${failed.join(', ')}`);
process.exit(failed.length === 0 ? 0 : 1);
