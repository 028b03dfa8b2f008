#!/usr/bin/env node
/**
 * `npm run bench`: speed of the project's hot paths, each side by side with a reference in the
 * same run (the dataset card's numpy reader, `sha256sum`, the tokenizer library's decode),
 * reported as ratios (> 1 means we are faster). Not a test: no pass/fail on time.
 *
 * Every module in scripts/bench/*.mjs exports `run(ctx)` returning rows
 * `{ name, ours, reference, unit, ratio, note }`. Full-size data (25,000,000-token shards) is
 * made on first run by `scripts/make-sample.mjs --full-size` into bench-data/.
 *
 * Usage: node scripts/bench.mjs [--only NAME[,NAME]] [--root DIR]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = opt('--only')?.split(',');
const root = path.resolve(opt('--root') ?? path.join(repo, 'bench-data'));
const sample = path.join(repo, 'sample');

function ensure(dir, extra) {
  if (fs.existsSync(path.join(dir, 'shard_manifest.jsonl'))) return;
  console.log(`making ${path.relative(repo, dir)} …`);
  execFileSync(process.execPath, [path.join(repo, 'scripts', 'make-sample.mjs'), ...extra], { cwd: repo, stdio: 'inherit' });
}

ensure(sample, []);
ensure(root, ['--full-size', '--out', root]);
if (!fs.existsSync(path.join(repo, 'dist', 'core.js'))) execFileSync(process.execPath, ['esbuild.js'], { cwd: repo, stdio: 'inherit' });

const ctx = { root, sample, repo, core: require(path.join(repo, 'dist', 'core.js')), log: (s) => console.log(`  ${s}`) };
const modules = fs
  .readdirSync(path.join(here, 'bench'))
  .filter((f) => f.endsWith('.mjs'))
  .sort()
  .filter((f) => !only || only.includes(f.replace(/\.mjs$/, '')));

const rows = [];
for (const f of modules) {
  console.log(`\n▶ ${f}`);
  try {
    const mod = await import(path.join(here, 'bench', f));
    for (const r of await mod.run(ctx)) {
      rows.push({ bench: f.replace(/\.mjs$/, ''), ...r });
    }
  } catch (err) {
    console.error(`  ${f} failed: ${err.stack ?? err}`);
    rows.push({
      bench: f.replace(/\.mjs$/, ''),
      name: 'FAILED',
      ours: NaN,
      reference: NaN,
      unit: '',
      ratio: NaN,
      note: String(err.message ?? err),
    });
  }
}

const num = (v) => (Number.isFinite(v) ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2)) : '—');
console.log('\nResults (ratio > 1: ours is better than the reference)\n');
const table = [
  ['bench', 'measure', 'ours', 'reference', 'unit', 'ratio', 'note'],
  ...rows.map((r) => [
    r.bench,
    r.name,
    num(r.ours),
    num(r.reference),
    r.unit,
    Number.isFinite(r.ratio) ? `${r.ratio.toFixed(2)}×` : '—',
    r.note ?? '',
  ]),
];
const widths = table[0].map((_, i) => Math.max(...table.map((row) => String(row[i]).length)));
for (const row of table)
  console.log(
    row
      .map((c, i) => String(c).padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
fs.mkdirSync(path.join(repo, 'test-results'), { recursive: true });
fs.writeFileSync(path.join(repo, 'test-results', 'bench.json'), JSON.stringify(rows, null, 2));
