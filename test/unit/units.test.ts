/**
 * Units for people (src/core/units.ts): the one count-with-noun helper (no "1 tokens"), durations,
 * and the rate-and-time-left tail every progress line ends with (verify, index, document numbering).
 */
import * as assert from 'assert';
import { count, formatDuration, formatRate, formatRateAndTimeLeft, progressRate, ShardScanRate } from '../../src/core/units';
import type { VerifyProgress } from '../../src/core/verify/verify';
import { formatVerifyProgress } from '../../src/core/verify/format';

describe('units for people', () => {
  it('count: singular for exactly one, plural otherwise (0 included), thousands separators, irregular plurals', () => {
    assert.strictEqual(count(1, 'token'), '1 token');
    assert.strictEqual(count(0, 'document'), '0 documents');
    assert.strictEqual(count(2, 'shard'), '2 shards');
    assert.strictEqual(count(1024, 'token'), `${(1024).toLocaleString('en-US')} tokens`);
    assert.strictEqual(count(1, 'anomaly', 'anomalies'), '1 anomaly');
    assert.strictEqual(count(3, 'anomaly', 'anomalies'), '3 anomalies');
  });

  it('formatDuration: ms below a second, one decimal below 10 s, then s, min and h', () => {
    assert.strictEqual(formatDuration(640), '640 ms');
    assert.strictEqual(formatDuration(6_300), '6.3 s');
    assert.strictEqual(formatDuration(45_000), '45 s');
    assert.strictEqual(formatDuration((3 * 60 + 5) * 1000), '3 min 05 s');
    assert.strictEqual(formatDuration((65 * 60 + 10) * 1000), '1 h 05 min');
  });

  it('progressRate: bytes per second from what was done; the time left is what remains at that rate', () => {
    const done = 1.5e9,
      total = 4e9,
      elapsed = 750;
    const r = progressRate(done, total, elapsed);
    assert.strictEqual(r.bytesPerSecond, done / (elapsed / 1000));
    assert.ok(Math.abs((r.etaMs! / 1000) * r.bytesPerSecond - (total - done)) < 1e-3, 'rate × time left = bytes left');
    assert.deepStrictEqual(progressRate(0, total, elapsed), { bytesPerSecond: 0, etaMs: undefined }, 'nothing done yet: no rate');
    assert.strictEqual(progressRate(total, total, elapsed).etaMs, 0, 'all done: nothing left');
  });

  it('formatRateAndTimeLeft uses the words of the verify progress line (one wording for every progress)', () => {
    const p: VerifyProgress = {
      shardsTotal: 10,
      shardsDone: 3,
      shardsFromCache: 0,
      running: [],
      bytesTotal: 4e9,
      bytesDone: 1.2e9,
      elapsedMs: 740,
      bytesPerSecond: 1.62e9,
      etaMs: 130_000,
    };
    const tail = formatRateAndTimeLeft(p.bytesPerSecond, p.etaMs);
    assert.strictEqual(tail, `${formatRate(p.bytesPerSecond)} · ${formatDuration(p.etaMs!)} left`);
    assert.ok(formatVerifyProgress(p).endsWith(` · ${tail}`), formatVerifyProgress(p));
    assert.strictEqual(formatRateAndTimeLeft(0, undefined), '', 'nothing known yet: no tail');
    assert.strictEqual(formatRateAndTimeLeft(0, 5_000), `${formatDuration(5_000)} left`);
  });

  it('ShardScanRate: only shards read in this run count, for the rate and for the time left', () => {
    // Five shards; shards 0 and 2 were counted before the scan started (cached): reading them costs nothing.
    const bytes = [4e9, 3e9, 2e9, 1e9, 5e9];
    const known = new Set([0, 2]);
    const r = new ShardScanRate(bytes, (i) => known.has(i));
    const readUpTo = (done: number) => bytes.slice(0, done).reduce((a, b, i) => a + (known.has(i) ? 0 : b), 0);
    // After the cached shard 0 only: nothing read, so no rate and no time left (was "… GB/s" from shard 0's 4 GB).
    assert.deepStrictEqual(r.at(1, 5, 10), { bytesPerSecond: 0, etaMs: undefined });
    // After shards 0–2 (only shard 1 was read): the rate is shard 1's bytes over the time taken.
    const elapsed = 2_000;
    const at3 = r.at(3, 5, elapsed);
    assert.strictEqual(r.bytesRead(3), readUpTo(3));
    assert.strictEqual(at3.bytesPerSecond, (readUpTo(3) / elapsed) * 1000);
    // Time left: the unread bytes still to do (shards 3 and 4), at that rate.
    assert.ok(
      Math.abs((at3.etaMs! / 1000) * at3.bytesPerSecond - (readUpTo(5) - readUpTo(3))) < 1e-3,
      'rate × time left = bytes left to read',
    );
    // Counting up to shard 3 only (total 3): nothing left once 3 are done.
    assert.strictEqual(r.at(3, 3, elapsed).etaMs, 0);
    // Nothing cached: the same as progressRate over the manifest sizes.
    const all = new ShardScanRate(bytes, () => false);
    assert.deepStrictEqual(
      all.at(2, 5, 700),
      progressRate(
        bytes[0] + bytes[1],
        bytes.reduce((a, b) => a + b, 0),
        700,
      ),
    );
    // Out-of-range counts are clamped to the shards there are.
    assert.strictEqual(
      all.bytesRead(99),
      bytes.reduce((a, b) => a + b, 0),
    );
  });
});
