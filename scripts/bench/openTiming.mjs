/**
 * Shard editor open timing, end to end in code-server: Enter in Go to Token Offset → the first
 * decoded text drawn, for five full-size shards of the 2,098-shard edge layout opened one after
 * the other (the first open of the session first). Runs the end-to-end benchmark
 * test/bench/openTiming.bench.ts through `node scripts/test-e2e.mjs --bench` (code-server,
 * Chromium, the packaged .vsix) and reads the measurements it writes to
 * test-results/open-timing.json.
 *
 * Reference: code-server's own wait before it writes a webview's page (the service-worker
 * activation, ~1 s for every open after the first; docs/benchmarks.md, "Opening a shard in
 * code-server") is not separable from the open, so there is no reference column: each row is
 * one open, in ms, with the service-worker timeline in its note.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** @param {{ repo: string, log: (s: string) => void }} ctx */
export async function run(ctx) {
  const results = path.join(ctx.repo, 'test-results', 'open-timing.json');
  fs.rmSync(results, { force: true });
  const r = spawnSync(process.execPath, [path.join(ctx.repo, 'scripts', 'test-e2e.mjs'), '--bench'], { cwd: ctx.repo, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`scripts/test-e2e.mjs --bench exited with ${r.status ?? r.signal}`);
  /** @type {{ open: number, target: number, firstTextMs: number, serviceWorker: string }[]} */
  const opens = JSON.parse(fs.readFileSync(results, 'utf8'));
  return opens.map((o) => ({
    name: `open ${o.open}${o.open === 1 ? ' (first in the session)' : ''}: Enter → first text`,
    ours: o.firstTextMs,
    reference: NaN,
    unit: 'ms',
    ratio: NaN,
    note: `token ${o.target.toLocaleString('en-US')}; service worker: ${o.serviceWorker}`,
  }));
}
