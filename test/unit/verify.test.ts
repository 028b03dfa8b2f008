/**
 * Shard hash verification (src/core/verify/verify.ts, src/core/verify/cache.ts, src/cliVerify.ts)
 * against `sha256sum` on the sample dataset and on damaged copies of it made in a temporary
 * folder: flipped byte, deleted shard, truncated shard, a shard that grows or vanishes while it is
 * read, cancellation, cache invalidation by mtime, unreadable manifest lines, CLI exit codes, and
 * the broken-fixtures corpus (scripts/make-broken-fixtures.mjs).
 *
 * Expected digests always come from `sha256sum` run on the files as they are on disk; timing is
 * never asserted (cancellation points are fixed with the `onFirstChunk` test hook).
 */
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openDataset } from '../../src/core/dataset';
import { ShardEntry } from '../../src/core/manifest';
import { ShardVerifyResult, prestartVerifyWorkers, resolveVerifyWorker, verifyShards } from '../../src/core/verify/verify';
import { closeIdleReadWorkers } from '../../src/core/shardPool';
import { formatDone, formatVerifyProgress, formatVerifySummary, formatVerifyTiming } from '../../src/core/verify/format';
import { VERIFY_CACHE_VERSION, VerifyCache, defaultCliCacheFile } from '../../src/core/verify/cache';
import { FileIdentity, statIdentity } from '../../src/core/fileIdentity';
import { cliPath, repoRoot, sampleDir, sha256sum } from './fixtures';

let tmpRoot: string;
let copies = 0;

/** A fresh copy of the sample (manifest, manifest.json, shards; not the tokenizer) in a temp folder. */
function copySample(): string {
  const dst = path.join(tmpRoot, `copy-${++copies}`);
  const src = sampleDir();
  fs.mkdirSync(dst, { recursive: true });
  for (const f of ['shard_manifest.jsonl', 'manifest.json']) fs.copyFileSync(path.join(src, f), path.join(dst, f));
  fs.cpSync(path.join(src, 'shards'), path.join(dst, 'shards'), { recursive: true });
  return dst;
}

function byStatus(results: ShardVerifyResult[]): Record<string, number[]> {
  const m: Record<string, number[]> = {};
  for (const r of results) (m[r.status] ??= []).push(r.index);
  return m;
}

/** Runs the built CLI with its cache in `cacheHome`; never throws on a non-zero exit. */
function cli(args: string[], cacheHome: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cliPath(), ...args], {
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: cacheHome },
    maxBuffer: 1 << 26,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('verify: shard hashes', function () {
  this.timeout(120_000);
  let sample: string;
  let shards: ShardEntry[];

  before(async () => {
    tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-verify-'));
    sample = sampleDir();
    shards = (await openDataset(sample)).shards;
    assert.ok(shards.length >= 4, 'the sample has several shards');
  });

  after(() => {
    fs.rmSync(tmpRoot, { recursive: true, force: true });
  });

  it('progress says MB below 1 GB done (never "0.00 GB"), GB from 1 GB on', () => {
    assert.strictEqual(formatDone(0), '0 MB');
    assert.strictEqual(formatDone(1_000_000), '1.00 MB');
    assert.strictEqual(formatDone(8_000_000), '8.00 MB');
    assert.strictEqual(formatDone(42_500_000), '42.5 MB');
    assert.strictEqual(formatDone(812_000_000), '812 MB');
    assert.strictEqual(formatDone(999_999_999), '1000 MB');
    assert.strictEqual(formatDone(1_000_000_000), '1.00 GB');
    assert.strictEqual(formatDone(5_070_000_000), '5.07 GB');
    assert.strictEqual(formatDone(210_000_000_000), '210.0 GB');
    const line = formatVerifyProgress({
      shardsDone: 3,
      shardsTotal: 8,
      shardsFromCache: 0,
      running: [],
      bytesDone: 3_000_000,
      bytesTotal: 8_000_000,
      elapsedMs: 10,
      bytesPerSecond: 0,
    });
    assert.strictEqual(line, 'shard 3 of 8 · 3.00 MB done');
    for (let b = 0; b < 2e9; b += 1.7e7) assert.doesNotMatch(formatDone(b), /^0\.00 GB/);
  });

  it('a run takes the workers started ahead of it, agrees with sha256sum, and says where its time went', async () => {
    const sums = sha256sum(shards.map((e) => e.path));
    await closeIdleReadWorkers();
    for (const index of [false, true]) {
      prestartVerifyWorkers({ jobs: 1, index });
      const report = await verifyShards(shards, { jobs: 1, keepWorkersWarm: true });
      // The run took the started worker and kept it: one idle worker, not the started one plus
      // the run's own (two, on a machine of two cores or more).
      assert.strictEqual(await closeIdleReadWorkers(), 1, `index ${index}: the started worker was used`);
      assert.strictEqual(report.counts.ok, shards.length);
      for (const r of report.results) assert.strictEqual(r.actualSha256, sums.get(r.path), r.shard);
      const t = report.timing;
      assert.ok(t.startedAtMs > 0 && t.triageMs >= 0 && t.finishMs >= 0 && t.cpuMs > 0, JSON.stringify(t));
      // The first byte was hashed after the stat pass and before the last read ended.
      assert.ok(t.firstByteMs !== undefined && t.firstByteMs >= t.triageMs && t.firstByteMs <= t.triageMs + t.readMs, JSON.stringify(t));
      assert.match(
        formatVerifyTiming(report),
        /^timing: first byte hashed \d+ ms after the start \(stat and cache \d+ ms\) · reading .* · CPU /,
      );
    }
    // Nothing to read (every shard the wrong size): no first byte, and the line says so.
    const none = await verifyShards(
      shards.map((e) => ({ ...e, numTokens: e.numTokens + 1 })),
      { jobs: 1 },
    );
    assert.strictEqual(none.timing.firstByteMs, undefined);
    assert.strictEqual(none.timing.readMs, 0);
    assert.match(formatVerifyTiming(none), /^timing: nothing read \(stat and cache/);
  });

  it('finds the worker from a bundled test by walking up to dist/workers', () => {
    const w = resolveVerifyWorker();
    assert.strictEqual(w, path.join(repoRoot(), 'dist', 'workers', 'verifyWorker.js'));
    assert.strictEqual(resolveVerifyWorker('/x/y.js'), '/x/y.js');
    assert.throws(() => resolveVerifyWorker(undefined, '/'), /cannot find the hash worker verifyWorker\.js/);
  });

  it('the sample verifies clean, and every digest agrees with sha256sum', async () => {
    const sums = sha256sum(shards.map((e) => e.path));
    for (const jobs of [1, 2]) {
      const report = await verifyShards(shards, { jobs });
      assert.strictEqual(report.cancelled, false);
      assert.strictEqual(report.results.length, shards.length);
      assert.strictEqual(report.counts.ok, shards.length, JSON.stringify(byStatus(report.results)));
      assert.strictEqual(report.jobs, jobs);
      for (const r of report.results) {
        assert.strictEqual(r.actualSha256, sums.get(r.path), `${r.shard}: ours vs sha256sum`);
        assert.strictEqual(r.expectedSha256, sums.get(r.path), `${r.shard}: manifest vs sha256sum`);
        assert.strictEqual(r.actualSize, fs.statSync(r.path).size);
        assert.strictEqual(r.fromCache, false);
      }
      assert.strictEqual(
        report.bytesHashed,
        shards.reduce((s, e) => s + fs.statSync(e.path).size, 0),
      );
    }
  });

  it('small reads (64 KiB chunks) give the same digests as 8 MiB reads', async () => {
    const sums = sha256sum(shards.map((e) => e.path));
    const report = await verifyShards(shards, { jobs: 2, chunkBytes: 65536 });
    for (const r of report.results) assert.strictEqual(r.actualSha256, sums.get(r.path));
  });

  it('one flipped byte in one shard: exactly that shard mismatches', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const victim = ds.shards[Math.floor(ds.shards.length / 2)];
    const fd = fs.openSync(victim.path, 'r+');
    const b = Buffer.alloc(1);
    const at = 123_457;
    fs.readSync(fd, b, 0, 1, at);
    b[0] ^= 0x01;
    fs.writeSync(fd, b, 0, 1, at);
    fs.closeSync(fd);
    const sums = sha256sum(ds.shards.map((e) => e.path));
    const report = await verifyShards(ds.shards, { jobs: 2 });
    assert.deepStrictEqual(byStatus(report.results), {
      ok: ds.shards.filter((e) => e !== victim).map((e) => e.index),
      mismatch: [victim.index],
    });
    const bad = report.results[victim.index];
    assert.strictEqual(bad.actualSha256, sums.get(victim.path), 'the reported digest is what sha256sum says');
    assert.notStrictEqual(bad.actualSha256, victim.sha256);
    assert.match(
      bad.message,
      new RegExp(`${victim.shard.replace(/[.]/g, '\\.')} \\(shard_manifest\\.jsonl line ${victim.line}\\): sha256 mismatch`),
    );
  });

  it('a deleted shard is missing; a truncated one is a size mismatch (not hashed)', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const [, gone, cut4, cut1] = ds.shards;
    fs.rmSync(gone.path);
    fs.truncateSync(cut4.path, cut4.numTokens * 4 - 4);
    fs.truncateSync(cut1.path, cut1.numTokens * 4 - 1);
    const report = await verifyShards(ds.shards, { jobs: 2 });
    const st = byStatus(report.results);
    assert.deepStrictEqual(st.missing, [gone.index]);
    assert.deepStrictEqual(st['size-mismatch'], [cut4.index, cut1.index]);
    assert.strictEqual(st.ok.length, ds.shards.length - 3);
    const r4 = report.results[cut4.index];
    assert.strictEqual(r4.actualSize, fs.statSync(cut4.path).size);
    assert.strictEqual(r4.actualSha256, undefined);
    assert.match(r4.message, /needs 1,000,000 bytes \(4 short\); not hashed/);
    assert.match(report.results[gone.index].message, /file not found/);
  });

  it('a folder or a FIFO in place of a shard is unreadable at once (no hang); bytes hashed count only hashed shards', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const [, folder, fifo] = ds.shards;
    fs.rmSync(folder.path);
    fs.mkdirSync(folder.path);
    fs.rmSync(fifo.path);
    execFileSync('mkfifo', [fifo.path]); // opening it for reading used to block the worker forever
    const report = await verifyShards(ds.shards, { jobs: 2 });
    const st = byStatus(report.results);
    assert.deepStrictEqual(st.unreadable, [folder.index, fifo.index]);
    for (const e of [folder, fifo])
      assert.match(report.results[e.index].message, new RegExp(`${e.path.replace(/[.]/g, '\\.')} is not a regular file`));
    const rest = ds.shards.filter((e) => e !== folder && e !== fifo);
    assert.deepStrictEqual(
      st.ok,
      rest.map((e) => e.index),
    );
    const sums = sha256sum(rest.map((e) => e.path));
    for (const e of rest) assert.strictEqual(report.results[e.index].actualSha256, sums.get(e.path));
    // Only what was read to the end counts (they used to add the folder's and the FIFO's expected sizes).
    assert.strictEqual(
      report.bytesHashed,
      rest.reduce((s, e) => s + fs.statSync(e.path).size, 0),
    );
  });

  it('cancel mid-run: finished shards are cached, unfinished ones are not', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const cacheFile = path.join(tmpRoot, 'cancel-cache.json');
    const cache = await VerifyCache.load(cacheFile);
    const ac = new AbortController();
    const stopAt = 3;
    const report = await verifyShards(ds.shards, {
      jobs: 1,
      cache,
      signal: ac.signal,
      chunkBytes: 65536,
      hooks: {
        onFirstChunk: (i) => {
          if (i === stopAt) ac.abort();
        },
      },
    });
    assert.strictEqual(report.cancelled, true);
    assert.deepStrictEqual(
      report.results.map((r) => r.index),
      [0, 1, 2],
    );
    assert.deepStrictEqual(
      report.unfinished,
      ds.shards.map((e) => e.index).filter((i) => i >= stopAt),
    );
    const onDisk = JSON.parse(fs.readFileSync(cacheFile, 'utf8'));
    assert.strictEqual(onDisk.version, VERIFY_CACHE_VERSION);
    assert.deepStrictEqual(
      Object.keys(onDisk.entries).sort(),
      ds.shards
        .slice(0, stopAt)
        .map((e) => e.path)
        .sort(),
    );
    const sums = sha256sum(ds.shards.slice(0, stopAt).map((e) => e.path));
    for (const e of ds.shards.slice(0, stopAt)) assert.strictEqual(onDisk.entries[e.path].sha256, sums.get(e.path));
  });

  it('cancel with two workers at an arbitrary point: the cache holds exactly the finished shards', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const cacheFile = path.join(tmpRoot, 'cancel2-cache.json');
    const ac = new AbortController();
    const report = await verifyShards(ds.shards, {
      jobs: 2,
      cache: await VerifyCache.load(cacheFile),
      signal: ac.signal,
      chunkBytes: 65536,
      onResult: () => ac.abort(),
    });
    assert.ok(report.results.length >= 1);
    const finished = new Set(report.results.map((r) => r.path));
    const cached = Object.keys(JSON.parse(fs.readFileSync(cacheFile, 'utf8')).entries);
    assert.deepStrictEqual(cached.sort(), [...finished].sort());
    assert.strictEqual(report.results.length + report.unfinished.length, ds.shards.length);
    assert.strictEqual(report.cancelled, report.unfinished.length > 0);
  });

  it('a second run uses the cache; touching a file invalidates its entry; ignoreCache re-hashes', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const cacheFile = path.join(tmpRoot, 'touch-cache.json');
    const first = await verifyShards(ds.shards, { jobs: 2, cache: await VerifyCache.load(cacheFile) });
    assert.strictEqual(first.counts.ok, ds.shards.length);
    assert.strictEqual(first.fromCache, 0);

    const second = await verifyShards(ds.shards, { jobs: 2, cache: await VerifyCache.load(cacheFile) });
    assert.strictEqual(second.counts.ok, ds.shards.length);
    assert.strictEqual(second.fromCache, ds.shards.length);
    assert.strictEqual(second.bytesHashed, 0);

    const touched = ds.shards[2];
    const before = fs.statSync(touched.path);
    const later = new Date(before.mtimeMs + 60_000);
    fs.utimesSync(touched.path, later, later);
    const cache3 = await VerifyCache.load(cacheFile);
    assert.strictEqual(cache3.lookup(touched.path, await statIdentity(touched.path)), undefined, 'entry no longer valid');
    const third = await verifyShards(ds.shards, { jobs: 2, cache: cache3 });
    assert.strictEqual(third.counts.ok, ds.shards.length);
    assert.deepStrictEqual(
      third.results.filter((r) => !r.fromCache).map((r) => r.index),
      [touched.index],
    );
    assert.strictEqual(third.bytesHashed, touched.numTokens * 4);
    const entry = (await VerifyCache.load(cacheFile)).get(touched.path)!;
    assert.deepStrictEqual(entry.identity, await statIdentity(touched.path), 'the entry was re-recorded with the new identity');

    const fourth = await verifyShards(ds.shards, { jobs: 2, cache: await VerifyCache.load(cacheFile), ignoreCache: true });
    assert.strictEqual(fourth.fromCache, 0);
    assert.strictEqual(fourth.counts.ok, ds.shards.length);
  });

  it('a flipped byte with a restored mtime is not a cache hit (identity includes ctime); summaries name cached shards', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const cacheFile = path.join(tmpRoot, 'flip-cache.json');
    const first = await verifyShards(ds.shards, { jobs: 1, cache: await VerifyCache.load(cacheFile) });
    assert.strictEqual(first.counts.ok, ds.shards.length);
    const victim = ds.shards[3];
    const before = fs.statSync(victim.path, { bigint: true });
    const bytes = fs.readFileSync(victim.path);
    bytes[17] ^= 0x01;
    // Let the clock move so that ctime surely changes (ctime resolution is the kernel tick).
    await new Promise((r) => setTimeout(r, 20));
    fs.writeFileSync(victim.path, bytes);
    // Restore the mtime to the nanosecond (what an attacker or a careless copy tool does): touch -d @s.ns.
    const ns = before.mtimeNs;
    execFileSync('touch', ['-m', '-d', `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, '0')}`, victim.path]);
    const after = fs.statSync(victim.path, { bigint: true });
    assert.strictEqual(after.mtimeNs, before.mtimeNs, 'mtime restored');
    assert.strictEqual(after.size, before.size, 'same size');
    const second = await verifyShards(ds.shards, { jobs: 1, cache: await VerifyCache.load(cacheFile) });
    const expected = sha256sum([victim.path]).get(victim.path);
    const r = second.results.find((x) => x.index === victim.index)!;
    assert.strictEqual(r.fromCache, false, 'the flipped shard was re-read');
    assert.strictEqual(r.status, 'mismatch');
    assert.strictEqual(r.actualSha256, expected);
    assert.strictEqual(second.fromCache, ds.shards.length - 1);
    assert.match(
      formatVerifySummary(second),
      new RegExp(`1 mismatched · ${ds.shards.length - 1} ok · ${ds.shards.length - 1} not re-read \\(cached\\)`),
    );
  });

  it('a cached mismatch is re-hashed, a repaired file then verifies ok', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const cacheFile = path.join(tmpRoot, 'repair-cache.json');
    const victim = ds.shards[1];
    const original = fs.readFileSync(victim.path);
    const damaged = Buffer.from(original);
    damaged[10] ^= 0xff;
    fs.writeFileSync(victim.path, damaged);
    const r1 = await verifyShards(ds.shards, { cache: await VerifyCache.load(cacheFile) });
    assert.deepStrictEqual(byStatus(r1.results).mismatch, [victim.index]);
    const r2 = await verifyShards(ds.shards, { cache: await VerifyCache.load(cacheFile) });
    assert.deepStrictEqual(
      r2.results.filter((r) => !r.fromCache).map((r) => r.index),
      [victim.index],
      'only the known-bad shard is read again',
    );
    fs.writeFileSync(victim.path, original);
    const r3 = await verifyShards(ds.shards, { cache: await VerifyCache.load(cacheFile) });
    assert.strictEqual(r3.counts.ok, ds.shards.length);
  });

  it('a shard growing while it is read gives a per-shard error, the rest still verify', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const victim = ds.shards[2];
    const cacheFile = path.join(tmpRoot, 'grow-cache.json');
    const report = await verifyShards(ds.shards, {
      jobs: 2,
      chunkBytes: 65536,
      cache: await VerifyCache.load(cacheFile),
      hooks: {
        onFirstChunk: (i) => {
          if (i === victim.index) fs.appendFileSync(victim.path, Buffer.alloc(4096));
        },
      },
    });
    const st = byStatus(report.results);
    assert.deepStrictEqual(st.changed, [victim.index]);
    assert.strictEqual(st.ok.length, ds.shards.length - 1);
    const r = report.results[victim.index];
    assert.match(
      r.message,
      new RegExp(`grew from ${victim.numTokens * 4} to ${victim.numTokens * 4 + 4096} bytes while it was being verified`),
    );
    assert.strictEqual((await VerifyCache.load(cacheFile)).get(victim.path), undefined, 'nothing cached for it');
  });

  it('a shard deleted or rewritten while it is read gives a per-shard error', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const [, gone, rewritten] = ds.shards;
    const report = await verifyShards(ds.shards, {
      jobs: 1,
      chunkBytes: 65536,
      hooks: {
        onFirstChunk: (i) => {
          if (i === gone.index) fs.rmSync(gone.path);
          if (i === rewritten.index) {
            // Same size, new content, written in place: only the mtime tells.
            const fd = fs.openSync(rewritten.path, 'r+');
            fs.writeSync(fd, Buffer.from([1, 2, 3, 4]), 0, 4, 500_000);
            fs.closeSync(fd);
            const t = new Date(fs.statSync(rewritten.path).mtimeMs + 5_000);
            fs.utimesSync(rewritten.path, t, t);
          }
        },
      },
    });
    const st = byStatus(report.results);
    assert.deepStrictEqual(st.changed, [gone.index, rewritten.index]);
    assert.match(report.results[gone.index].message, /was deleted while it was being verified/);
    assert.match(report.results[rewritten.index].message, /was modified while it was being verified/);
  });

  it('unreadable manifest lines are reported and the other shards still verified', async () => {
    const root = copySample();
    const mf = path.join(root, 'shard_manifest.jsonl');
    const lines = fs.readFileSync(mf, 'utf8').split('\n');
    lines.splice(3, 1, '{"shard": "shards/tokens_000003.u32", "start_token": 750000,'); // cut short
    fs.writeFileSync(mf, lines.join('\n'));
    const ds = await openDataset(root);
    assert.ok(ds.problems.some((p) => p.code === 'malformed-json' && p.line === 4));
    const report = await verifyShards(ds.shards, { jobs: 2 });
    assert.strictEqual(report.counts.ok, ds.shards.length);
    assert.ok(!report.results.some((r) => r.shard === 'shards/tokens_000003.u32'));

    const cacheHome = path.join(tmpRoot, 'xdg-bad-line');
    const r = cli(['verify', root, '--json'], cacheHome);
    assert.strictEqual(r.code, 1, r.stderr);
    const json = JSON.parse(r.stdout);
    assert.strictEqual(json.counts.ok, ds.shards.length);
    assert.strictEqual(json.all_ok, false);
    assert.ok(json.manifest_problems.some((p: { code: string; line: number }) => p.code === 'malformed-json' && p.line === 4));
    const text = cli(['verify', root], cacheHome);
    assert.strictEqual(text.code, 1);
    assert.match(text.stderr, /shard_manifest\.jsonl line 4: not valid JSON/);
    assert.match(text.stdout, /manifest problem/);
  });

  describe('CLI', () => {
    it('exit 0 on the sample, with digests equal to sha256sum; the second run comes from the cache', () => {
      const cacheHome = path.join(tmpRoot, 'xdg-cli');
      const r = cli(['verify', sample, '--json', '--jobs', '2'], cacheHome);
      assert.strictEqual(r.code, 0, r.stderr);
      const json = JSON.parse(r.stdout);
      assert.strictEqual(json.all_ok, true);
      assert.strictEqual(json.counts.ok, shards.length);
      const sums = sha256sum(shards.map((e) => e.path));
      for (const res of json.results) assert.strictEqual(res.actual_sha256, sums.get(path.join(sample, res.shard)));
      // Where the time went: the run started after the process did, the first byte within the read.
      const t = json.timing;
      assert.ok(t.started_at_ms > 0 && t.first_byte_ms >= t.triage_ms && t.first_byte_ms <= t.triage_ms + t.read_ms, JSON.stringify(t));
      assert.ok(t.cpu_ms > 0 && t.finish_ms >= 0, JSON.stringify(t));
      const cacheFile = defaultCliCacheFile({ XDG_CACHE_HOME: cacheHome });
      assert.strictEqual(json.cache_file, cacheFile);
      assert.ok(fs.existsSync(cacheFile));
      const again = JSON.parse(cli(['verify', sample, '--json'], cacheHome).stdout);
      assert.strictEqual(again.from_cache, shards.length);
      assert.strictEqual(again.bytes_hashed, 0);
      assert.strictEqual(again.timing.first_byte_ms, null, 'nothing read: no first byte');
      const againText = cli(['verify', sample], cacheHome);
      assert.match(againText.stdout, new RegExp(`${shards.length} not re-read \\(cached\\)`));
      const noCache = cli(['verify', sample, '--json', '--no-cache'], path.join(tmpRoot, 'xdg-none'));
      assert.strictEqual(noCache.code, 0);
      assert.strictEqual(JSON.parse(noCache.stdout).from_cache, 0);
      assert.ok(!fs.existsSync(path.join(tmpRoot, 'xdg-none')), '--no-cache writes no cache');
    });

    it('exit 1 on a mismatch, a missing shard or a size fault, naming the shard', () => {
      const cacheHome = path.join(tmpRoot, 'xdg-faults');
      for (const damage of ['flip', 'delete', 'truncate'] as const) {
        const root = copySample();
        const f = path.join(root, 'shards', 'tokens_000001.u32');
        if (damage === 'flip') {
          const b = fs.readFileSync(f);
          b[999] ^= 0x80;
          fs.writeFileSync(f, b);
        }
        if (damage === 'delete') fs.rmSync(f);
        if (damage === 'truncate') fs.truncateSync(f, 4000);
        const r = cli(['verify', root], cacheHome);
        assert.strictEqual(r.code, 1, `${damage}: ${r.stdout}${r.stderr}`);
        const word = { flip: 'MISMATCH', delete: 'MISSING', truncate: 'SIZE' }[damage];
        assert.match(r.stdout, new RegExp(`^${word} +shards/tokens_000001\\.u32 \\(shard_manifest\\.jsonl line 2\\)`, 'm'));
        assert.strictEqual(r.stdout.split('\n').filter((l) => /^[A-Z-]{2,} /.test(l)).length, 1, 'exactly one faulty shard listed');
      }
    });

    it('exit 2 on bad usage; 1 for a manifest that cannot be read (a broken dataset, as in info)', () => {
      const cacheHome = path.join(tmpRoot, 'xdg-usage');
      assert.strictEqual(cli(['verify'], cacheHome).code, 2);
      assert.strictEqual(cli(['verify', path.join(tmpRoot, 'no-such-folder')], cacheHome).code, 2);
      assert.strictEqual(cli(['verify', sample, '--jobs', 'many'], cacheHome).code, 2);
      assert.strictEqual(cli(['verify', sample, '--bogus'], cacheHome).code, 2);
      const noManifest = fs.mkdtempSync(path.join(tmpRoot, 'empty-'));
      const r = cli(['verify', noManifest], cacheHome);
      assert.strictEqual(r.code, 2);
      assert.match(r.stderr, /no shard_manifest\.jsonl here, so it is not a dataset folder/);
      const dirManifest = fs.mkdtempSync(path.join(tmpRoot, 'dir-'));
      fs.mkdirSync(path.join(dirManifest, 'shard_manifest.jsonl'));
      assert.strictEqual(cli(['verify', dirManifest], cacheHome).code, 1);
      const garbage = fs.mkdtempSync(path.join(tmpRoot, 'garbage-'));
      fs.writeFileSync(path.join(garbage, 'shard_manifest.jsonl'), 'not json\n');
      const g = cli(['verify', garbage], cacheHome);
      assert.strictEqual(g.code, 1);
      assert.match(g.stderr, /line 1: not valid JSON/);
    });
  });

  describe('cache file', () => {
    it('a corrupt cache is reported and replaced by a valid one; saves merge with other writers', async () => {
      const file = path.join(tmpRoot, 'cache-merge', 'verify-cache.json');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, '{ not json');
      const a = await VerifyCache.load(file);
      assert.match(a.warning ?? '', /verify-cache\.json: the verification cache is not valid JSON/);
      const id = (n: number): FileIdentity => ({
        dev: '1',
        ino: String(n),
        size: n,
        mtimeNs: String(n * 1000),
        ctimeNs: String(n * 1000 + 1),
      });
      const entry = (n: number) => ({ identity: id(n), sha256: 'a'.repeat(63) + String(n % 10), checkedAt: n });
      a.record('/p/one', entry(1));
      await a.save();
      const b = await VerifyCache.load(file);
      assert.strictEqual(b.warning, undefined);
      b.record('/p/two', entry(2));
      a.record('/p/three', entry(3));
      await b.save();
      await a.save(); // must keep b's entry
      const c = await VerifyCache.load(file);
      assert.deepStrictEqual(c.get('/p/one'), entry(1));
      assert.deepStrictEqual(c.get('/p/two'), entry(2));
      assert.deepStrictEqual(c.get('/p/three'), entry(3));
      assert.strictEqual(c.lookup('/p/two', id(2))?.sha256, entry(2).sha256);
      assert.strictEqual(c.lookup('/p/two', { ...id(2), ctimeNs: '1' }), undefined);
      assert.strictEqual(c.lookup('/p/two', { ...id(2), ino: '99' }), undefined);
      assert.deepStrictEqual(fs.readdirSync(path.dirname(file)), ['verify-cache.json'], 'no temporary files left');
    });

    it('a cache line longer than any entry, or an oversized old-layout file, is a one-line warning (never a crash), and a save repairs it', async () => {
      const dir = path.join(tmpRoot, 'cache-long');
      fs.mkdirSync(dir, { recursive: true });
      const long = path.join(dir, 'long.json');
      // This version's layout (header line, one entry per line) with one 2 MB line.
      fs.writeFileSync(long, `{"version":${VERIFY_CACHE_VERSION},"entries":{\n"${'a'.repeat(2_000_000)}":1\n}}\n`);
      const a = await VerifyCache.load(long);
      assert.match(
        a.warning ?? '',
        /long\.json: the verification cache is not valid JSON \(line 2 is longer than [\d,]+ characters\); starting empty\./,
      );
      a.record('/p/x', { identity: { dev: '1', ino: '2', size: 3, mtimeNs: '4', ctimeNs: '5' }, sha256: 'b'.repeat(64), checkedAt: 6 });
      await a.save();
      const b = await VerifyCache.load(long);
      assert.strictEqual(b.warning, undefined);
      assert.strictEqual(b.get('/p/x')?.sha256, 'b'.repeat(64));
      // The CLI on the sample with that cache: exit 0, the warning once, nothing thrown.
      const home = path.join(dir, 'home');
      const file = defaultCliCacheFile({ XDG_CACHE_HOME: home });
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `{"version":${VERIFY_CACHE_VERSION},"entries":{\n"${'a'.repeat(2_000_000)}":1\n}}\n`);
      const r = cli(['verify', sampleDir(), '--no-index'], home);
      assert.strictEqual(r.code, 0, r.stderr);
      assert.strictEqual(r.stderr.split('\n').filter((l) => /longer than/.test(l)).length, 1, r.stderr);
    });

    it('an unusable cache folder is one warning line naming it; verify still verifies (sha256sum) and index refuses in one line', () => {
      // XDG_CACHE_HOME under a regular file: the folder cannot be made, even by root.
      const home = path.join(tmpRoot, 'xdg-blocked');
      fs.writeFileSync(home, 'a file, not a folder');
      const folder = path.dirname(defaultCliCacheFile({ XDG_CACHE_HOME: home }));
      const sums = sha256sum(shards.map((e) => e.path));
      for (const args of [[], ['--no-index']]) {
        const r = cli(['verify', sample, '--json', ...args], home);
        assert.strictEqual(r.code, 0, r.stderr);
        const lines = r.stderr.split('\n').filter(Boolean);
        assert.strictEqual(lines.length, 1, r.stderr);
        assert.ok(lines[0].startsWith(`warning: cannot use the cache folder ${folder} (ENOTDIR`), lines[0]);
        const json = JSON.parse(r.stdout);
        assert.strictEqual(json.counts.ok, shards.length);
        assert.strictEqual(json.from_cache, 0);
        for (const res of json.results) assert.strictEqual(res.actual_sha256, sums.get(path.join(sample, res.shard)));
      }
      const ix = cli(['index', sample], home);
      assert.strictEqual(ix.code, 1);
      const lines = ix.stderr.split('\n').filter(Boolean);
      assert.strictEqual(lines.length, 1, ix.stderr);
      assert.ok(lines[0].startsWith(`error: cannot write the stream index in ${path.join(folder, 'stream-index')} (ENOTDIR`), lines[0]);
    });

    it('the CLI cache lives under $XDG_CACHE_HOME, else ~/.cache', () => {
      assert.strictEqual(defaultCliCacheFile({ XDG_CACHE_HOME: '/x/cache' }), '/x/cache/token-shard-inspector/verify-cache.json');
      assert.strictEqual(
        defaultCliCacheFile({ XDG_CACHE_HOME: 'relative' }),
        path.join(os.homedir(), '.cache', 'token-shard-inspector', 'verify-cache.json'),
      );
      assert.strictEqual(defaultCliCacheFile({}), path.join(os.homedir(), '.cache', 'token-shard-inspector', 'verify-cache.json'));
    });
  });

  describe('broken-fixtures corpus', () => {
    interface Case {
      name: string;
      dir: string;
      expect: { problems: { code: string; severity: string; line?: number }[]; sha256_mismatch: string[] };
    }
    it('every damaged or mismatching shard the corpus describes is found, and nothing else', async function () {
      const corpus = path.join(repoRoot(), 'out', 'fixtures', 'broken');
      if (!fs.existsSync(path.join(corpus, 'cases.json'))) {
        execFileSync(process.execPath, [path.join(repoRoot(), 'scripts', 'make-broken-fixtures.mjs')], {
          cwd: repoRoot(),
          stdio: 'ignore',
        });
      }
      const cases = (JSON.parse(fs.readFileSync(path.join(corpus, 'cases.json'), 'utf8')) as { cases: Case[] }).cases;
      let checked = 0;
      for (const c of cases) {
        const dir = path.isAbsolute(c.dir) ? c.dir : path.join(corpus, c.dir);
        if (!fs.existsSync(path.join(dir, 'shard_manifest.jsonl'))) continue;
        const ds = await openDataset(dir);
        const report = await verifyShards(ds.shards, { jobs: 2 });
        const bad = report.results
          .filter((r) => r.status === 'mismatch' || r.status === 'size-mismatch')
          .map((r) => r.shard)
          .sort();
        assert.deepStrictEqual(bad, [...c.expect.sha256_mismatch].sort(), `${c.name}: content faults`);
        const missing = report.results
          .filter((r) => r.status === 'missing')
          .map((r) => r.line)
          .sort();
        const expectedMissing = c.expect.problems
          .filter((p) => p.code === 'missing-file')
          .map((p) => p.line!)
          .sort();
        assert.deepStrictEqual(missing, expectedMissing, `${c.name}: missing files`);
        const noHash = report.results
          .filter((r) => r.status === 'no-hash')
          .map((r) => r.line)
          .sort();
        const expectedNoHash = c.expect.problems
          .filter((p) => p.code === 'missing-field' && p.severity === 'warning')
          .map((p) => p.line!)
          .sort();
        assert.deepStrictEqual(noHash, expectedNoHash, `${c.name}: lines without sha256`);
        const others = report.results.filter((r) => !['ok', 'mismatch', 'size-mismatch', 'missing', 'no-hash'].includes(r.status));
        assert.deepStrictEqual(
          others.map((r) => r.message),
          [],
          `${c.name}: no other faults`,
        );
        checked++;
      }
      assert.ok(checked >= 10, `checked ${checked} cases`);
    });
  });
});
