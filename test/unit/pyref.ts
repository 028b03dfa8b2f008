/**
 * The dataset card's Python reference reader (scripts/reference_reader.py, the card's snippet
 * verbatim), run through `python3` + numpy, as the ground truth for tests. Helpers only wrap it
 * to take arguments and print JSON.
 *
 * Every reference run goes through {@link python3Cached}: its output is kept in a git-ignored
 * folder (`.cache/references/`), keyed by the content of the data it reads and of the reference
 * scripts, so a second test run reads the same answer without running Python again.
 */
import { execFileSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { repoRoot } from './fixtures';

const SCRIPTS = path.join(repoRoot(), 'scripts');
const READER = `
import json, sys, numpy as np
sys.path.insert(0, ${JSON.stringify(SCRIPTS)})
from reference_reader import tokens
`;

/** Where reference outputs are kept (git-ignored); TSI_REFERENCE_CACHE=0 turns the cache off. */
export const REFERENCE_CACHE_DIR = path.join(repoRoot(), '.cache', 'references');

/** sha256 of a file's bytes, remembered for this process by (path, size, mtime, inode). */
const fileDigests = new Map<string, string>();
function fileDigest(file: string, st: fs.Stats): string {
  const key = `${file}|${st.size}|${st.mtimeMs}|${st.ino}`;
  let d = fileDigests.get(key);
  if (!d) {
    d = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    fileDigests.set(key, d);
  }
  return d;
}

/**
 * Data holding more than this many bytes in all is not hashed: reading it would cost more than the
 * reference run, which reads only the tokens it asks for (the e2e tier's 2,098-shard edge dataset
 * is 196 GB of sparse files; the sparse 4 GiB fixture).
 */
const MAX_HASHED_BYTES = 256 * 1024 * 1024;

/** A file to hash: its path relative to the hashed input ('' for a file given directly), its path, its stats. */
type Listed = [rel: string, file: string, st: fs.Stats];

/** `p` itself when it is a file, else every file under the folder `p`, by relative path in sorted order (stat only, nothing read). */
function listFiles(p: string, rel = ''): Listed[] {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return [[rel, p, st]];
  return fs
    .readdirSync(p)
    .sort()
    .flatMap((e) => listFiles(path.join(p, e), rel ? `${rel}/${e}` : e));
}

/** Feeds the content of the listed files into `h` (each as its relative path and sha256). */
function hashListed(h: crypto.Hash, files: Listed[]): void {
  for (const [rel, file, st] of files) h.update(`${rel}\0${fileDigest(file, st)}\0`);
}

/**
 * The Python files a reference run may import, relative to `scripts/`: every `scripts/*.py` and the
 * `.py` files of its reference packages (the folders `scripts/reference…`, e.g. the per-format readers that
 * `reference_formats.py` imports), in sorted order.
 */
function referenceScripts(): string[] {
  return fs
    .readdirSync(SCRIPTS, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() && e.name.startsWith('reference')
        ? fs
            .readdirSync(path.join(SCRIPTS, e.name))
            .filter((f) => f.endsWith('.py'))
            .map((f) => `${e.name}/${f}`)
        : e.isFile() && e.name.endsWith('.py')
          ? [e.name]
          : [],
    )
    .sort();
}

/**
 * Runs `python3 ...args` and returns its stdout, from the cache when the same reference already
 * ran on the same data. The key is the sha256 of: `args` with each of `inputs` replaced by a
 * placeholder (so a fresh temporary copy of the same data hits), the content of each of `inputs`
 * (files, or folders hashed file by file), and the content of every `scripts/*.py` and
 * the `.py` files of the folders `scripts/reference…` (the reference scripts, their per-format readers and the card's reader). `inputs` must name everything the run reads besides those scripts.
 * Runs on data over 256 MiB in all are not cached ({@link MAX_HASHED_BYTES}): the sizes are summed
 * from `stat` before anything is read.
 */
export function python3Cached(args: string[], inputs: string[], opts: { maxBuffer?: number } = {}): string {
  const run = () => execFileSync('python3', args, { encoding: 'utf8', maxBuffer: opts.maxBuffer ?? 1 << 30 });
  if (process.env.TSI_REFERENCE_CACHE === '0') return run();
  const h = crypto.createHash('sha256');
  const abs = inputs.map((p) => path.resolve(p));
  h.update(JSON.stringify(args.map((a) => abs.reduce((s, p, i) => s.split(p).join(`<input ${i}>`), a))));
  const listed = abs.map((p) => listFiles(p));
  if (listed.flat().reduce((sum, [, , st]) => sum + st.size, 0) > MAX_HASHED_BYTES) return run();
  for (const files of listed) hashListed(h.update('\0input\0'), files);
  for (const f of referenceScripts()) hashListed(h.update(`\0${f}\0`), listFiles(path.join(SCRIPTS, f)));
  const file = path.join(REFERENCE_CACHE_DIR, `${h.digest('hex')}.out`);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    const out = run();
    fs.mkdirSync(REFERENCE_CACHE_DIR, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, out);
    fs.renameSync(tmp, file); // whole or not at all
    return out;
  }
}

/** Runs the card's reader with `body`; `args[0]` is the dataset root (the data it reads). */
function runPython(body: string, args: string[]): string {
  return python3Cached(['-c', READER + body, ...args], [args[0]]);
}

/** Global tokens `[start, start+n)` read by the reference reader. */
export function pyTokens(root: string, start: number, n: number): number[] {
  return JSON.parse(
    runPython(
      `
root, start, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print(json.dumps(tokens(root, start, n).tolist()))
`,
      [path.resolve(root), String(start), String(n)],
    ),
  );
}

/** One update's `x` and `y` (S × L lists), built exactly as the dataset card does. */
export interface PyBatch {
  x: number[][];
  y: number[][];
}

/**
 * Batches of several updates in one python process (`G`, `L` as given; card defaults
 * 131,072 and 1,024): `batch = tokens(root, G*k, G+1); x, y = batch[:-1].reshape(S, L), batch[1:].reshape(S, L)`.
 */
export function pyUpdates(root: string, ks: number[], G = 131072, L = 1024): Map<number, PyBatch> {
  const out = runPython(
    `
root, G, L = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
res = {}
for k in map(int, sys.argv[4:]):
    batch = tokens(root, G * k, G + 1)
    x, y = batch[:-1].reshape(G // L, L), batch[1:].reshape(G // L, L)
    res[k] = {"x": x.tolist(), "y": y.tolist()}
print(json.dumps(res))
`,
    [path.resolve(root), String(G), String(L), ...ks.map(String)],
  );
  const parsed = JSON.parse(out) as Record<string, PyBatch>;
  return new Map(Object.entries(parsed).map(([k, v]) => [Number(k), v]));
}

/** Total stored tokens according to the manifest, computed in Python (sum of num_tokens). */
export function pyStoredTokens(root: string): number {
  return Number(
    runPython(
      `
root = sys.argv[1]
print(sum(json.loads(l)["num_tokens"] for l in open(f"{root}/shard_manifest.jsonl") if l.strip()))
`,
      [path.resolve(root)],
    ).trim(),
  );
}
