/**
 * Input validation of the navigation boxes (Go to Update / Token Offset / Document / Sequence),
 * each case with the message a person sees. Ranges are derived from the sample dataset (its
 * stored-token count comes from the dataset card's reader, run in Python).
 */
import * as assert from 'assert';
import { openDataset, Dataset } from '../../src/core/dataset';
import { fmt } from '../../src/core/units';
import {
  validateUpdateInput,
  validateOffsetInput,
  validateDocumentInput,
  validateSequenceInput,
  splitSequenceInput,
  shardIndexAt,
  numberArg,
  checkUpdate,
  Validated,
  parseNavigationLink,
  formatNavigationLink,
  validateLocalOffsetInput,
} from '../../src/core/navigation';
import { pyStoredTokens } from './pyref';
import { sampleDir } from './fixtures';

function err<T>(v: Validated<T>): string {
  assert.strictEqual(v.ok, false, `expected a rejection, got ${JSON.stringify(v)}`);
  return (v as { error: string }).error;
}
function ok<T>(v: Validated<T>): { value: T; detail: string } {
  assert.strictEqual(v.ok, true, `expected acceptance, got ${JSON.stringify(v)}`);
  return v as { value: T; detail: string };
}

describe('navigation input validation', function () {
  this.timeout(0);
  let ds: Dataset;
  let stored: number;
  let n: number; // updates
  let last: string; // "17" formatted
  const G = 131072,
    L = 1024;
  before(async () => {
    const root = sampleDir();
    ds = await openDataset(root);
    stored = pyStoredTokens(root);
    n = Math.floor((stored - 1) / G);
    last = fmt(n - 1);
  });
  after(() => ds?.stream.close());

  describe('Go to Update…', () => {
    const range = () => `0..${last} (updates are 0-based)`;
    it('accepts 0 and the last update, with token range and shard', () => {
      const a = ok(validateUpdateInput('0', ds));
      assert.strictEqual(a.value, 0);
      assert.strictEqual(a.detail, `update 0 (0-based) · tokens [0, ${fmt(G)}) · shard tokens_000000.u32`);
      const b = ok(validateUpdateInput(String(n - 1), ds));
      assert.strictEqual(b.value, n - 1);
      assert.ok(b.detail.startsWith(`update ${last} (0-based) · tokens [${fmt(G * (n - 1))}, ${fmt(G * n)})`), b.detail);
    });
    it('names both shards for an update that spans a shard edge', () => {
      // Update 1 covers [131072, 262144); the sample's shards hold 250,000 tokens each (manifest).
      const edge = ds.shards[1].startToken;
      const k = Math.floor(edge / G);
      assert.ok(G * k < edge && edge < G * (k + 1), 'update k straddles the first shard edge');
      const v = ok(validateUpdateInput(String(k), ds));
      assert.strictEqual(
        v.detail,
        `update ${fmt(k)} (0-based) · tokens [${fmt(G * k)}, ${fmt(G * (k + 1))}) · spans 2 shards: tokens_000000.u32 → tokens_000001.u32`,
      );
    });
    it('accepts 1_0, 1e1, 0xA and " 10 " as 10', () => {
      for (const t of ['1_0', '1e1', '0xA', ' 10 ', '10']) assert.strictEqual(ok(validateUpdateInput(t, ds)).value, 10, t);
    });
    it('rejects text', () => {
      assert.strictEqual(
        err(validateUpdateInput('abc', ds)),
        `"abc" is not a number (examples: 55000, 55_000, 5.5e4, 0xD6D8). Enter an update ${range()}.`,
      );
    });
    it('rejects empty input', () => {
      assert.strictEqual(err(validateUpdateInput('  ', ds)), `Enter a number. Enter an update ${range()}.`);
    });
    it('rejects negatives', () => {
      assert.strictEqual(err(validateUpdateInput('-1', ds)), `-1 is negative; expected a number ≥ 0. Enter an update ${range()}.`);
    });
    it('rejects decimals', () => {
      assert.strictEqual(err(validateUpdateInput('2.5', ds)), `2.5 is not a whole number. Enter an update ${range()}.`);
    });
    it('rejects k = number of updates (off by one)', () => {
      assert.strictEqual(
        err(validateUpdateInput(String(n), ds)),
        `Update ${fmt(n)} is out of range: this dataset has ${fmt(n)} updates, ${range()}.`,
      );
    });
    it('rejects far out of range (55,000 on the sample)', () => {
      assert.strictEqual(
        err(validateUpdateInput('55_000', ds)),
        `Update 55,000 is out of range: this dataset has ${fmt(n)} updates, ${range()}.`,
      );
    });
    it('rejects non-integers given as command arguments', () => {
      assert.strictEqual(err(checkUpdate(1.5, ds)), `Update 1.5 is not a whole number ≥ 0. Enter an update ${range()}.`);
      assert.strictEqual(err(checkUpdate(-3, ds)), `Update -3 is not a whole number ≥ 0. Enter an update ${range()}.`);
    });
  });

  describe('Go to Token Offset…', () => {
    const range = () => `0..${fmt(stored - 1)}`;
    it('accepts 55_000-style, 5.5e5, hex and comma forms', () => {
      assert.strictEqual(ok(validateOffsetInput('550_000', ds)).value, 550000);
      assert.strictEqual(ok(validateOffsetInput('5.5e5', ds)).value, 550000);
      assert.strictEqual(ok(validateOffsetInput('550,000', ds)).value, 550000);
      assert.strictEqual(ok(validateOffsetInput('0x86470', ds)).value, 0x86470);
    });
    it('describes shard, local offset, update, sequence and position', () => {
      const o = 550000;
      const s = shardIndexAt(ds.shards, o);
      const k = Math.floor(o / G),
        r = Math.floor((o - G * k) / L),
        p = (o - G * k) % L;
      assert.strictEqual(
        ok(validateOffsetInput('550000', ds)).detail,
        `token 550,000 · tokens_${String(s).padStart(6, '0')}.u32 local ${fmt(o - ds.shards[s].startToken)} · update ${fmt(k)} (0-based), sequence ${r}, position ${p}`,
      );
    });
    it('names the last stored token as the look-ahead token', () => {
      const v = ok(validateOffsetInput(String(stored - 1), ds));
      assert.ok(v.detail.endsWith("look-ahead token (the target of the last update's last position)"), v.detail);
    });
    it('rejects past the end, naming the range', () => {
      assert.strictEqual(
        err(validateOffsetInput(String(stored), ds)),
        `Token offset ${fmt(stored)} is past the end: the stream holds ${fmt(stored)} tokens, offsets ${range()}.`,
      );
    });
    it('rejects 5.5e7 on the sample (past the end)', () => {
      assert.strictEqual(
        err(validateOffsetInput('5.5e7', ds)),
        `Token offset 55,000,000 is past the end: the stream holds ${fmt(stored)} tokens, offsets ${range()}.`,
      );
    });
    it('rejects negatives, decimals, text', () => {
      assert.strictEqual(
        err(validateOffsetInput('-5', ds)),
        `-5 is negative; expected a number ≥ 0. Enter a global token offset ${range()}.`,
      );
      assert.strictEqual(err(validateOffsetInput('1.25', ds)), `1.25 is not a whole number. Enter a global token offset ${range()}.`);
      assert.strictEqual(
        err(validateOffsetInput('ten', ds)),
        `"ten" is not a number (examples: 55000, 55_000, 5.5e4, 0xD6D8). Enter a global token offset ${range()}.`,
      );
    });
  });

  describe('Go to Document…', () => {
    it('accepts a document number and says it is 0-based', () => {
      const v = ok(validateDocumentInput('3'));
      assert.strictEqual(v.value, 3);
      assert.strictEqual(
        v.detail,
        'document 3 (0-based: the one after the 3rd EOS) · range known after counting (finding it counts EOS tokens shard by shard)',
      );
      assert.strictEqual(
        ok(validateDocumentInput('3', undefined, true)).detail,
        'document 3 (0-based: the one after the 3rd EOS) · counting documents… (range checked when done)',
      );
      assert.strictEqual(ok(validateDocumentInput('0')).detail, 'document 0 (0-based: the first document, at token 0)');
    });
    it('checks the range when the document count is known', () => {
      assert.strictEqual(
        err(validateDocumentInput('400', 371)),
        'Document 400 is out of range: the stream has 371 documents, 0..370 (documents are 0-based).',
      );
      const last = ok(validateDocumentInput('370', 371));
      assert.strictEqual(last.value, 370);
      assert.strictEqual(last.detail, 'document 370 (0-based: the one after the 370th EOS) · of 371 documents');
    });
    it('rejects negatives, decimals and text', () => {
      assert.strictEqual(
        err(validateDocumentInput('-2')),
        '-2 is negative; expected a number ≥ 0. Enter a document number ≥ 0 (documents are 0-based).',
      );
      assert.strictEqual(
        err(validateDocumentInput('0.5')),
        '0.5 is not a whole number. Enter a document number ≥ 0 (documents are 0-based).',
      );
      assert.strictEqual(
        err(validateDocumentInput('doc')),
        '"doc" is not a number (examples: 55000, 55_000, 5.5e4, 0xD6D8). Enter a document number ≥ 0 (documents are 0-based).',
      );
    });
  });

  describe('Go to Sequence…', () => {
    it('splits "k r", "k/r", "k, r" and "k,r" but not "55,000"', () => {
      assert.deepStrictEqual(splitSequenceInput('5 3'), ['5', '3']);
      assert.deepStrictEqual(splitSequenceInput(' 5/3 '), ['5', '3']);
      assert.deepStrictEqual(splitSequenceInput('5, 3'), ['5', '3']);
      assert.deepStrictEqual(splitSequenceInput('5,3'), ['5', '3']);
      assert.deepStrictEqual(splitSequenceInput('5:3'), ['5', '3']);
      assert.deepStrictEqual(splitSequenceInput('5 : 3'), ['5', '3']);
      assert.deepStrictEqual(splitSequenceInput('55,000 7'), ['55,000', '7']);
      assert.strictEqual(splitSequenceInput('55,000'), undefined);
      assert.strictEqual(splitSequenceInput('1 2 3'), undefined);
    });
    it('accepts each form with the same value and describes the range', () => {
      for (const t of ['5 3', '5/3', '5, 3', '5,3', '5:3', `#${5 * (G / L) + 3}`])
        assert.deepStrictEqual(ok(validateSequenceInput(t, ds)).value, { update: 5, sequence: 3 }, t);
      const s = G * 5 + L * 3;
      assert.ok(
        ok(validateSequenceInput('5 3', ds)).detail.startsWith(
          `update 5 (0-based), sequence 3 · tokens [${fmt(s)}, ${fmt(s + L)}), targets to ${fmt(s + L)} inclusive`,
        ),
      );
    });
    it('rejects a single number, saying how to separate', () => {
      assert.strictEqual(
        err(validateSequenceInput('7', ds)),
        `7 is one number: enter the update and the sequence, e.g. "7 0", "k:r", or a global sequence index "#7" (update 0..${last} (updates are 0-based), sequence 0..127).`,
      );
    });
    it('takes "#N" as the global sequence index N = k·S + r and range-checks it', () => {
      const S = G / L;
      const v = ok(validateSequenceInput(`#${S * 5 + 3}`, ds));
      assert.deepStrictEqual(v.value, { update: 5, sequence: 3 });
      assert.ok(v.detail.startsWith(`#${fmt(S * 5 + 3)} = update 5 (0-based), sequence 3 · `), v.detail);
      assert.deepStrictEqual(ok(validateSequenceInput('#0', ds)).value, { update: 0, sequence: 0 });
      assert.deepStrictEqual(ok(validateSequenceInput(`#${n * S - 1}`, ds)).value, { update: n - 1, sequence: S - 1 });
      assert.strictEqual(
        err(validateSequenceInput(`#${n * S}`, ds)),
        `Sequence #${fmt(n * S)} is out of range: the stream has ${fmt(n * S)} sequences, #0..#${fmt(n * S - 1)} (${S} per update; 0-based).`,
      );
      assert.strictEqual(
        err(validateSequenceInput('#x', ds)),
        `Global sequence index: "x" is not a number (examples: 55000, 55_000, 5.5e4, 0xD6D8). Enter #N with N 0..${fmt(n * S - 1)} (N = k·${S} + r).`,
      );
    });
    it('rejects sequence 128 (sequences are 0..127)', () => {
      assert.strictEqual(
        err(validateSequenceInput('0 128', ds)),
        'Sequence 128 is out of range: each update has 128 sequences, 0..127 (sequences are 0-based).',
      );
    });
    it('rejects a bad update part with the update message', () => {
      assert.strictEqual(
        err(validateSequenceInput(`${n} 0`, ds)),
        `Update ${fmt(n)} is out of range: this dataset has ${fmt(n)} updates, 0..${last} (updates are 0-based).`,
      );
    });
    it('rejects a decimal or negative sequence', () => {
      assert.strictEqual(
        err(validateSequenceInput('1 2.5', ds)),
        'Sequence: 2.5 is not a whole number. Enter a sequence 0..127 (sequences are 0-based).',
      );
      assert.strictEqual(
        err(validateSequenceInput('1 / -2', ds)),
        'Sequence: -2 is negative; expected a number ≥ 0. Enter a sequence 0..127 (sequences are 0-based).',
      );
    });
    it('rejects words', () => {
      assert.strictEqual(
        err(validateSequenceInput('first row', ds)),
        `"first" is not a number (examples: 55000, 55_000, 5.5e4, 0xD6D8). Enter an update 0..${last} (updates are 0-based).`,
      );
    });
  });

  describe('vscode:// links', () => {
    it('parses /update?k=55000, update=, sequence= and root=', () => {
      assert.deepStrictEqual(parseNavigationLink('/update', 'k=55000'), { kind: 'update', update: 55000, root: undefined });
      assert.deepStrictEqual(parseNavigationLink('/update', 'update=55_000&sequence=17&root=%2Fdata%2Fds'), {
        kind: 'update',
        update: 55000,
        sequence: 17,
        root: '/data/ds',
      });
    });
    it('parses /offset?o=… and offset=, in every number form', () => {
      for (const q of ['o=55000000', 'offset=55_000_000', 'o=5.5e7', 'o=0x3473BC0']) {
        assert.deepStrictEqual(parseNavigationLink('/offset', q), { kind: 'offset', offset: 55000000, root: undefined }, q);
      }
    });
    it('rejects missing or malformed numbers and unknown paths with a message', () => {
      assert.deepStrictEqual(parseNavigationLink('/update', 'x=1'), {
        error:
          'the link has no update number (k=…); expected /update?k=<update>[&sequence=<r>][&root=<folder>] or /offset?o=<global token offset>[&root=<folder>]',
      });
      assert.match((parseNavigationLink('/offset', 'o=-5') as { error: string }).error, /^o is negative \(expected a whole number ≥ 0\)/);
      assert.match((parseNavigationLink('/update', 'k=1.5') as { error: string }).error, /^k is not a whole number ≥ 0 \(examples/);
      // A link is untrusted: its values are never echoed into a message.
      const hostile = '[x](command:workbench.action.terminal.new)';
      for (const q of [`k=${encodeURIComponent(hostile)}`, `k=1&sequence=${encodeURIComponent(hostile)}`]) {
        assert.ok(!(parseNavigationLink('/update', q) as { error: string }).error.includes('command:'), q);
      }
      assert.ok(!(parseNavigationLink('/offset', `o=${encodeURIComponent(hostile)}`) as { error: string }).error.includes('command:'));
      assert.ok(!(parseNavigationLink(`/${hostile}`, 'k=1') as { error: string }).error.includes('command:'));
      assert.match(
        (parseNavigationLink('/step', 'k=1') as { error: string }).error,
        /^unknown link path \(neither \/update nor \/offset\); expected/,
      );
    });
    it('formats links that parse back to the same target', () => {
      const links = [
        { kind: 'update' as const, update: 55000 },
        { kind: 'update' as const, update: 3, sequence: 127, root: '/data/my ds' },
        { kind: 'offset' as const, offset: 52428800000, root: '/x' },
      ];
      for (const l of links) {
        const text = formatNavigationLink(l);
        const [p, q] = text.split('?');
        assert.deepStrictEqual(parseNavigationLink(p, q), { root: undefined, ...l }, text);
      }
      assert.strictEqual(formatNavigationLink({ kind: 'update', update: 55000 }), '/update?k=55000');
    });
  });

  describe('lone shard offsets (no manifest)', () => {
    it('checks against the file length and says offsets are local', () => {
      assert.strictEqual(
        ok(validateLocalOffsetInput('10', 100, 'a.u32')).detail,
        'token 10 of a.u32 (local offset: no manifest, so no global offset or update)',
      );
      assert.strictEqual(
        err(validateLocalOffsetInput('100', 100, 'a.u32')),
        'Token offset 100 is past the end of a.u32: it holds 100 tokens, offsets 0..99.',
      );
    });
  });

  describe('link and command arguments', () => {
    it('numberArg takes numbers and strings, rejects others', () => {
      assert.deepStrictEqual(numberArg(55000, 'k'), { value: 55000 });
      assert.deepStrictEqual(numberArg('55_000', 'k'), { value: 55000 });
      assert.deepStrictEqual(numberArg('5.5e7', 'o'), { value: 55000000 });
      assert.deepStrictEqual(numberArg(undefined, 'k'), {});
      assert.deepStrictEqual(numberArg(-1, 'k'), { error: 'k -1 is not a whole number ≥ 0' });
      assert.deepStrictEqual(numberArg('x', 'k'), { error: 'k: "x" is not a number (examples: 55000, 55_000, 5.5e4, 0xD6D8)' });
      assert.deepStrictEqual(numberArg(true, 'k'), { error: 'k must be a number, got boolean' });
    });
  });
});
