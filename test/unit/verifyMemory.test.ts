/**
 * Verifying a manifest of very many tiny shards stays in bounded memory. The
 * bound is a V8 heap cap on a child process (`--max-old-space-size`), not a clock: the CLI
 * verifies 50,000 16-token shards (scripts/make-many-shards.mjs) with a 112 MB heap, first with an
 * empty verify cache (every shard hashed, the cache written) and then answered wholly from the
 * cache. The run before the compact storage needed between 128 and 192 MB of heap for this
 * (it ran out of memory at 128 MB); the compact one needs about 64 MB, so the cap leaves
 * room on both sides. Peak RSS at 100,000 shards is measured by `npm run bench` (verifyMany).
 *
 * The default command (the stream index built in the same read) runs the same way, with two
 * workers (`--jobs 2`: every worker has its own heap, so RSS grows with the pool), and its peak
 * resident set size — the child's own `process.resourceUsage().maxRSS`, written at exit by a
 * preloaded script — stays under the 300 MB, which it must meet at twice this size. Every
 * shard gets its index entry (one `.json` per file in the CLI's index folder).
 */
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { cliPath, repoRoot } from './fixtures';

const SHARDS = 50_000;
const HEAP_MB = 112;

describe('verify: 50,000 tiny shards in a 112 MB heap', function () {
  this.timeout(0);
  let dir: string;
  let data: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-verify-mem-'));
    data = path.join(dir, 'data');
    const made = spawnSync(
      process.execPath,
      [path.join(repoRoot(), 'scripts', 'make-many-shards.mjs'), '--out', data, '--shards', String(SHARDS)],
      {
        encoding: 'utf8',
      },
    );
    assert.strictEqual(made.status, 0, made.stderr);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /**
   * Runs `verify` in a child with the heap cap; `cache` names its XDG_CACHE_HOME.
   * @returns the exit code, output and the child's peak RSS in bytes.
   */
  function verify(cache: string, args: string[] = ['--no-index']): { code: number | null; stdout: string; stderr: string; maxRss: number } {
    const rssFile = path.join(dir, 'max-rss');
    const preload = path.join(dir, 'max-rss.js');
    fs.writeFileSync(
      preload,
      `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(rssFile)}, String(process.resourceUsage().maxRSS * 1024)));\n`,
    );
    fs.rmSync(rssFile, { force: true });
    const r = spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MB}`, '-r', preload, cliPath(), 'verify', data, ...args], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: path.join(dir, cache) },
      maxBuffer: 1 << 24,
    });
    const maxRss = fs.existsSync(rssFile) ? Number(fs.readFileSync(rssFile, 'utf8')) : NaN;
    return { code: r.status, stdout: r.stdout, stderr: r.stderr, maxRss };
  }

  it('hashes every shard (cold cache), then answers every shard from the cache (warm)', () => {
    const lines = fs.readFileSync(path.join(data, 'shard_manifest.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    assert.strictEqual(lines, SHARDS);
    const cold = verify('cache');
    assert.strictEqual(cold.code, 0, cold.stderr.slice(-2000));
    const n = SHARDS.toLocaleString('en-US');
    assert.ok(cold.stdout.includes(`${n} shards: ${n} ok · `), cold.stdout);
    const warm = verify('cache');
    assert.strictEqual(warm.code, 0, warm.stderr.slice(-2000));
    assert.ok(warm.stdout.includes(`${n} shards: ${n} ok · ${n} not re-read (cached) · `), warm.stdout);
  });

  it('builds the stream index in the same read (the default) within the same heap and under 300 MB RSS', () => {
    const n = SHARDS.toLocaleString('en-US');
    const cold = verify('cache-index', ['--jobs', '2']);
    assert.strictEqual(cold.code, 0, cold.stderr.slice(-2000));
    assert.ok(cold.stdout.includes(`${n} shards: ${n} ok · `), cold.stdout);
    const indexDir = path.join(dir, 'cache-index', 'token-shard-inspector', 'stream-index');
    const entries = fs.readdirSync(indexDir).filter((f) => f.endsWith('.json'));
    assert.strictEqual(entries.length, SHARDS, 'one index entry per shard file');
    assert.ok(cold.maxRss < 300 * 1024 * 1024, `cold: peak RSS ${(cold.maxRss / 1048576).toFixed(0)} MB`);
    const warm = verify('cache-index', ['--jobs', '2']);
    assert.strictEqual(warm.code, 0, warm.stderr.slice(-2000));
    assert.ok(warm.stdout.includes(`${n} shards: ${n} ok · ${n} not re-read (cached) · `), warm.stdout);
    assert.ok(warm.maxRss < 300 * 1024 * 1024, `warm: peak RSS ${(warm.maxRss / 1048576).toFixed(0)} MB`);
  });
});
