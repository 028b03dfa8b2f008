/**
 * Update arithmetic per the dataset card: update k (0-based) trained on [G·k, G·(k+1));
 * sequence r is [G·k + L·r, G·k + L·(r+1)); updates = floor((stored − 1) / G).
 */
import * as assert from 'assert';
import { Schedule, DEFAULT_SCHEDULE, PAST_LAST_UPDATE_TEXT, describeUpdate } from '../../src/core/schedule';
import { parseNumberInput } from '../../src/core/numbers';

const CARD_STORED = 2097 * 25_000_000 + 3_800_001; // shard counts and sizes from the dataset card

describe('schedule', () => {
  const s = new Schedule(DEFAULT_SCHEDULE, CARD_STORED);

  it('reproduces the card: 52,428,800,001 stored tokens hold 400,000 updates', () => {
    assert.strictEqual(CARD_STORED, 52_428_800_001);
    assert.strictEqual(s.numUpdates, 400_000);
    assert.strictEqual(s.sequencesPerUpdate, 128);
  });

  it("update 55,000 (the card's example) covers [G·55000, G·55001) and the card's shard formula", () => {
    const [a, b] = s.updateRange(55_000);
    assert.deepStrictEqual([a, b], [131_072 * 55_000, 131_072 * 55_001]);
    assert.strictEqual(Math.floor(a / 25e6), Math.floor((131_072 * 55_000) / 25_000_000));
    assert.ok(a * 4 > 2 ** 32, 'byte offsets beyond 2^32 stay exact');
  });

  it('the last update is 399,999 and its look-ahead is the last stored token', () => {
    const [a, b] = s.updateRange(399_999);
    assert.strictEqual(b, CARD_STORED - 1);
    assert.strictEqual(b - a, 131_072);
    assert.throws(() => s.updateRange(400_000), /outside 0\.\.399,999/);
    assert.throws(() => s.updateRange(-1), /outside/);
    assert.throws(() => s.updateRange(1.5), /outside/);
    assert.deepStrictEqual(s.position(CARD_STORED - 1), { lookAhead: true });
  });

  it('only one token is the look-ahead token; the ones after it are not trained', () => {
    // 42,000 more tokens than the card's stream: still 400,000 updates (the card's update count).
    const tail = new Schedule(DEFAULT_SCHEDULE, CARD_STORED + 42_000);
    assert.strictEqual(tail.numUpdates, 400_000);
    // The card reads update k as tokens(root, G*k, G+1): the last token read by update 399,999.
    const lastRead = 131_072 * 399_999 + 131_072;
    assert.strictEqual(tail.pastLastUpdate(lastRead - 1), undefined, 'inside the last update');
    assert.strictEqual(tail.pastLastUpdate(lastRead), 'lookAhead');
    for (const o of [lastRead + 1, lastRead + 2, CARD_STORED + 41_999]) assert.strictEqual(tail.pastLastUpdate(o), 'untrained', String(o));
    assert.strictEqual(PAST_LAST_UPDATE_TEXT.untrained, 'after the last update (not trained)');
    // A stream shorter than one update has no look-ahead token.
    assert.strictEqual(new Schedule(DEFAULT_SCHEDULE, 131_072).pastLastUpdate(0), 'untrained');
  });

  it('sequences tile the update with 1,024 tokens each (not 1,025)', () => {
    const [a] = s.updateRange(7);
    for (const r of [0, 1, 127]) {
      const [x, y] = s.sequenceRange(7, r);
      assert.strictEqual(x, a + 1024 * r);
      assert.strictEqual(y - x, 1024);
    }
    assert.throws(() => s.sequenceRange(7, 128), /outside 0\.\.127/);
  });

  it('position() inverts the ranges', () => {
    for (const off of [0, 1023, 1024, 131_071, 131_072, 7_208_960_123]) {
      const p = s.position(off);
      const [x] = s.sequenceRange(p.update!, p.sequence!);
      assert.strictEqual(x + p.position!, off);
    }
  });

  it('rejects a G that is not a multiple of L', () => {
    assert.throws(() => new Schedule({ ...DEFAULT_SCHEDULE, sequenceLength: 1000 }, CARD_STORED), /multiple/);
  });

  it('describes updates as 0-based', () => {
    assert.strictEqual(describeUpdate(0), 'update 0 (0-based; the 1st update)');
    assert.strictEqual(describeUpdate(55_000), 'update 55,000 (0-based; the 55,001st update)');
    assert.strictEqual(describeUpdate(11), 'update 11 (0-based; the 12th update)');
  });
});

describe('number input', () => {
  const ok = (t: string, v: number) => assert.deepStrictEqual(parseNumberInput(t), { ok: true, value: v }, t);
  const bad = (t: string, re: RegExp) => {
    const r = parseNumberInput(t);
    assert.ok(!r.ok && re.test(r.error), `${t}: ${JSON.stringify(r)}`);
  };
  it('accepts the forms people type', () => {
    ok('55000', 55000);
    ok(' 55_000 ', 55000);
    ok('55,000', 55000);
    ok('5.5e7', 55_000_000);
    ok('0xD6D8', 0xd6d8);
    ok('0', 0);
  });
  it('rejects the rest with a reason', () => {
    bad('', /enter a number/);
    bad('-3', /negative/);
    bad('1.5', /whole/);
    bad('abc', /not a number/);
    bad('1e300', /too large/);
    bad('12,34', /not a number/);
  });
});
