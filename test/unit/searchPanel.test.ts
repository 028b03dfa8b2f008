/**
 * The search panel's pure parts (src/panels/searchModel.ts) and its result cache
 * (src/panels/searchCache.ts), in plain Node: splitting the form's terms, merging buckets
 * (checked against sums computed independently from the input), the cache's key and its
 * invalidation when a shard of a copy of the sample changes (mtime/ctime/size via
 * src/core/fileIdentity.ts), LRU pruning, and the PNG/text export bytes of the panel host.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openDataset } from '../../src/core/dataset';
import type { CountResult } from '../../src/core/search';
import { SearchCache, datasetFingerprint, searchKey } from '../../src/panels/searchCache';
import { joinTerms, rebucket, replaySearch, splitTerms } from '../../src/panels/searchModel';
import { sampleDir } from './fixtures';

/** A count result with pseudo-random counts (seeded), `updates` updates in buckets of `per`. */
function syntheticResult(updates: number, per: number, terms: string[], seed = 7): CountResult {
  let s = seed;
  const rnd = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const buckets: CountResult['buckets'] = [];
  for (let first = 0; first < updates; first += per) {
    const last = Math.min(updates - 1, first + per - 1);
    buckets.push({
      first_update: first,
      last_update: last,
      tokens: (last - first + 1) * 131072,
      counts: terms.map(() => Math.floor(rnd() * 50)),
    });
  }
  const totals = terms.map((_t, k) => buckets.reduce((a, b) => a + b.counts[k], 0));
  return { terms, options: { word: false, ignore_case: false, ids: false }, per, updates, buckets, totals };
}

describe('search panel: terms, buckets, cache', () => {
  it('splits comma-separated terms, trims them, keeps escaped commas, and round-trips through joinTerms', () => {
    assert.deepStrictEqual(splitTerms('whale, Ahab ,the sea', false), ['whale', 'Ahab', 'the sea']);
    assert.deepStrictEqual(splitTerms('a\\, b, c\\\\', false), ['a, b', 'c\\']);
    assert.deepStrictEqual(splitTerms('x,,y', false), ['x', '', 'y'], 'empty pieces are kept so parseTerms names them');
    assert.deepStrictEqual(splitTerms('791,4062; 100257', true), ['791,4062', '100257']);
    for (const terms of [
      ['a, b', 'c\\d', ' e'],
      ['Lily', 'Ben and Lily'],
    ]) {
      assert.deepStrictEqual(
        splitTerms(joinTerms(terms, false), false),
        terms.map((t) => t.trim()),
      );
    }
  });

  it('re-buckets by summing consecutive buckets (last bucket shorter)', () => {
    const fine = syntheticResult(23, 2, ['a', 'b']);
    for (const per of [2, 4, 6, 22, 24]) {
      const r = rebucket(fine, per);
      assert.strictEqual(r.per, per);
      assert.strictEqual(r.buckets.length, Math.ceil(23 / per));
      r.buckets.forEach((b, j) => {
        const first = j * per,
          last = Math.min(22, first + per - 1);
        assert.strictEqual(b.first_update, first);
        assert.strictEqual(b.last_update, last);
        const members = fine.buckets.filter((f) => f.first_update >= first && f.last_update <= last);
        assert.strictEqual(
          b.tokens,
          members.reduce((a, f) => a + f.tokens, 0),
        );
        assert.deepStrictEqual(
          b.counts,
          [0, 1].map((k) => members.reduce((a, f) => a + f.counts[k], 0)),
        );
      });
      assert.deepStrictEqual(r.totals, fine.totals);
    }
    assert.throws(() => rebucket(fine, 3), /not a multiple/);
  });

  describe('result cache', () => {
    let tmp: string;
    let root: string;
    before(() => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-search-cache-'));
      root = path.join(tmp, 'data');
      fs.mkdirSync(path.join(root, 'shards'), { recursive: true });
      const src = sampleDir();
      for (const f of ['shard_manifest.jsonl', 'manifest.json']) fs.copyFileSync(path.join(src, f), path.join(root, f));
      for (const f of fs.readdirSync(path.join(src, 'shards'))) fs.copyFileSync(path.join(src, 'shards', f), path.join(root, 'shards', f));
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it('stores and returns a result under its key, and misses for other terms, options or bucket sizes', async () => {
      const ds = await openDataset(root);
      const fp = await datasetFingerprint(ds, undefined);
      const q = { terms: ['whale'], options: { word: false, ignoreCase: false, ids: false }, per: 1 };
      const key = searchKey(q, fp);
      assert.match(key, /^[0-9a-f]{64}$/);
      assert.notStrictEqual(searchKey({ ...q, terms: ['Whale'] }, fp), key);
      assert.notStrictEqual(searchKey({ ...q, options: { ...q.options, word: true } }, fp), key);
      assert.notStrictEqual(searchKey({ ...q, per: 2 }, fp), key);
      const cache = new SearchCache(path.join(tmp, 'cache'));
      assert.strictEqual(await cache.get(key), undefined);
      const result = syntheticResult(ds.schedule.numUpdates, 1, ['whale']);
      await cache.put(key, root, result, 1234);
      const hit = await cache.get(key);
      assert.deepStrictEqual(hit?.result, result);
      assert.strictEqual(hit?.scanMs, 1234);
      await ds.stream.close();
    });

    it('changes the fingerprint when a shard is rewritten (even with its mtime restored) or replaced', async () => {
      const ds = await openDataset(root);
      const before = await datasetFingerprint(ds, undefined);
      assert.strictEqual(await datasetFingerprint(ds, undefined), before, 'stable while nothing changes');
      const shard = ds.shards[3].path;
      const st = fs.statSync(shard);
      const bytes = fs.readFileSync(shard);
      bytes[100] ^= 1;
      fs.writeFileSync(shard, bytes);
      fs.utimesSync(shard, st.atime, st.mtime);
      const afterWrite = await datasetFingerprint(ds, undefined);
      assert.notStrictEqual(afterWrite, before, 'ctime moves on a write even when mtime is restored');
      const copy = `${shard}.new`;
      fs.copyFileSync(shard, copy);
      fs.renameSync(copy, shard);
      assert.notStrictEqual(await datasetFingerprint(ds, undefined), afterWrite, 'a replaced file (new inode) changes it');
      await ds.stream.close();
    });

    it('keeps at most the configured number of entries, dropping the least recently used', async () => {
      const cache = new SearchCache(path.join(tmp, 'small'), 3);
      const r = syntheticResult(4, 1, ['x']);
      const keys = ['a', 'b', 'c', 'd'].map((t) =>
        searchKey({ terms: [t], options: { word: false, ignoreCase: false, ids: false }, per: 1 }, 'fp'),
      );
      for (const [i, k] of keys.entries()) {
        await cache.put(k, root, r, 0);
        const t = new Date(Date.now() - (10 - i) * 1000);
        fs.utimesSync(path.join(cache.dir, `${k}.json`), t, t);
      }
      const left = fs
        .readdirSync(cache.dir)
        .filter((n) => n.endsWith('.json'))
        .sort();
      assert.deepStrictEqual(
        left,
        keys
          .slice(1)
          .map((k) => `${k}.json`)
          .sort(),
      );
    });
  });
});

describe('search panel: a page rebuilt after Cancel draws the search as it stands', () => {
  const form = { text: 'whale, Ahab', word: false, ignoreCase: false, ids: false, per: null };
  const counts = syntheticResult(40, 4, ['whale', 'Ahab']);
  const progress = {
    shardsDone: 3,
    shardsTotal: 10,
    bytesDone: 3_000_000,
    bytesTotal: 10_000_000,
    tokensDone: 750_000,
    tokensTotal: 2_359_297,
    bytesPerSecond: 1e6,
    etaMs: 7000,
  };
  const base = { id: 7, form, terms: ['whale', 'Ahab'], per: 4 };

  it('cancelled: started, its partial chart, cancelled — never a search left running', () => {
    const msgs = replaySearch({ ...base, state: 'cancelled', partial: { counts, progress } });
    assert.deepStrictEqual(
      msgs.map((m) => m.type),
      ['started', 'progress', 'cancelled'],
    );
    const p = msgs[1] as Extract<(typeof msgs)[number], { type: 'progress' }>;
    assert.strictEqual(p.partial, counts, 'the partial counts drawn before Cancel');
    assert.ok(msgs.every((m) => !('searchId' in m) || m.searchId === 7));
  });

  it('cancelling, running, done, failed, and a cancelled cache-only restore', () => {
    assert.deepStrictEqual(
      replaySearch({ ...base, state: 'cancelling', partial: { counts, progress } }).map((m) => m.type),
      ['started', 'progress', 'cancelling'],
    );
    assert.deepStrictEqual(
      replaySearch({ ...base, state: 'running', partial: { counts, progress } }).map((m) => m.type),
      ['started', 'progress'],
    );
    assert.deepStrictEqual(
      replaySearch({ ...base, state: 'running' }).map((m) => m.type),
      ['started'],
    );
    const done = replaySearch({ ...base, state: 'done', result: counts, partial: { counts, progress } });
    assert.deepStrictEqual(
      done.map((m) => m.type),
      ['started', 'done'],
    );
    assert.deepStrictEqual(
      replaySearch({ ...base, state: 'failed', error: 'shard 3 is gone' }).map((m) => [m.type, 'message' in m ? m.message : '']),
      [
        ['started', ''],
        ['error', 'shard 3 is gone'],
      ],
    );
    assert.deepStrictEqual(
      replaySearch({ ...base, state: 'cancelled' }).map((m) => m.type),
      ['started', 'cancelled'],
    );
  });
});
