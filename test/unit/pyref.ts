/**
 * The dataset card's Python reference reader (scripts/reference_reader.py, the card's snippet
 * verbatim), run through `python3` + numpy, as the ground truth for tests. Helpers only wrap it
 * to take arguments and print JSON.
 */
import { execFileSync } from 'child_process';
import * as path from 'path';
import { repoRoot } from './fixtures';

const SCRIPTS = path.join(repoRoot(), 'scripts');
const READER = `
import json, sys, numpy as np
sys.path.insert(0, ${JSON.stringify(SCRIPTS)})
from reference_reader import tokens
`;

function runPython(body: string, args: string[]): string {
  return execFileSync('python3', ['-c', READER + body, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
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
