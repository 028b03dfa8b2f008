/**
 * TokenStream (src/core/stream.ts) on bad input, against the dataset card's Python reader on
 * the broken-fixture corpus (scripts/make-broken-fixtures.mjs, real sample tokens):
 * - a manifest with a gap, or one that does not start at token 0: offsets no shard holds are a
 *   DataError naming the hole (they used to be read at a negative file position, i.e. from the
 *   file handle's current position: silently wrong, different on every read); the tokens the
 *   shards do hold still equal the reader's, read after read;
 * - a folder or a FIFO where a shard should be: a DataError saying what it is (a FIFO used to
 *   block the read forever, a folder gave a bare "EISDIR" with no file name);
 * - a count past what one Buffer holds: a RangeRequestError, before anything is allocated.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { openDataset } from '../../src/core/dataset';
import { DataError, RangeRequestError } from '../../src/core/errors';
import { BYTES_PER_TOKEN } from '../../src/core/manifest';
import { MAX_POOLED_HANDLES, MAX_READ_TOKENS, TokenStream } from '../../src/core/stream';
import { repoRoot, sampleDir } from './fixtures';
import { pyTokens } from './pyref';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the untyped .mjs script modules these tests import
type Any = any;

describe('TokenStream on broken datasets', function () {
  this.timeout(0);
  let out: string;
  let cases: Any[];
  const caseDir = (name: string) => path.join(out, cases.find((c) => c.name === name).dir);
  /** `shard_manifest.jsonl` entries of a case, sorted by start_token. */
  const entriesOf = (root: string) =>
    fs
      .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .sort((a, b) => a.start_token - b.start_token);

  before(async () => {
    const fx = await import(pathToFileURL(path.join(repoRoot(), 'scripts', 'make-broken-fixtures.mjs')).href);
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-stream-'));
    await fx.makeBrokenFixtures({ out, sampleRoot: sampleDir(), sparse: false, quiet: true });
    cases = JSON.parse(fs.readFileSync(path.join(out, 'cases.json'), 'utf8')).cases;
  });
  after(() => {
    if (out) fs.rmSync(out, { recursive: true, force: true });
  });

  it('gap: a range reaching into the hole is a DataError naming it; listed tokens equal the reader, on every read', async () => {
    const root = caseDir('gap');
    const es = entriesOf(root);
    const holeStart = es[1].start_token + es[1].num_tokens,
      holeEnd = es[2].start_token;
    assert.ok(holeEnd > holeStart, 'the fixture has a gap');
    const ds = await openDataset(root);
    await assert.rejects(ds.stream.read(holeStart - 5, 10), (err: Error) => {
      assert.ok(err instanceof DataError, err.message);
      assert.match(err.message, new RegExp(`token ${holeStart.toLocaleString('en-US')} is in no shard`));
      assert.ok(err.message.includes(`[${holeStart.toLocaleString('en-US')}, ${holeEnd.toLocaleString('en-US')})`), err.message);
      assert.ok(err.message.includes(path.basename(es[1].shard)) && err.message.includes(path.basename(es[2].shard)), err.message);
      return true;
    });
    assert.throws(() => ds.stream.locate(holeStart), DataError);
    // The reader fills the hole with the next shard's first tokens (offsets shift); we refuse instead.
    assert.deepStrictEqual(pyTokens(root, holeStart, 4), pyTokens(root, holeEnd, 4));
    // What the shards do hold reads right, the same on every read (no file-position drift).
    for (let i = 0; i < 3; i++) {
      assert.deepStrictEqual(Array.from(await ds.stream.read(holeEnd, 20)), pyTokens(root, holeEnd, 20));
      assert.deepStrictEqual(Array.from(await ds.stream.read(holeStart - 20, 20)), pyTokens(root, holeStart - 20, 20));
    }
    await ds.stream.close();
  });

  it('overlap: a range reaching tokens two shards claim is a DataError naming both lines; the rest equal the reader', async () => {
    const root = caseDir('overlap');
    const es = entriesOf(root);
    const from = es[2].start_token,
      to = es[1].start_token + es[1].num_tokens;
    assert.ok(to > from, 'the fixture overlaps');
    const ds = await openDataset(root);
    const lineOf = (e: { shard: string }) => ds.shards.find((s) => s.shard === e.shard)!.line;
    const claimed = (err: Error) => {
      assert.ok(err instanceof DataError, err.message);
      assert.ok(err.message.startsWith(`token ${from.toLocaleString('en-US')} is claimed by two shards`), err.message);
      assert.ok(err.message.includes(`${path.basename(es[2].shard)} (manifest line ${lineOf(es[2])})`), err.message);
      assert.ok(err.message.includes(`${path.basename(es[1].shard)} (manifest line ${lineOf(es[1])})`), err.message);
      assert.ok(err.message.includes(`[${from.toLocaleString('en-US')}, ${to.toLocaleString('en-US')})`), err.message);
      return true;
    };
    await assert.rejects(ds.stream.read(from - 5, 10), claimed);
    assert.throws(() => ds.stream.readSync(from, 2), claimed);
    assert.throws(() => ds.stream.locate(from), DataError);
    // Before the overlap the tokens read as the reader reads them.
    assert.deepStrictEqual(Array.from(await ds.stream.read(from - 20, 20)), pyTokens(root, from - 20, 20));
    await ds.stream.close();
  });

  it('not-from-zero: tokens before the first shard are a DataError; the shards read as the reader reads them', async () => {
    const root = caseDir('not-from-zero');
    const es = entriesOf(root);
    assert.ok(es[0].start_token > 0, 'the fixture starts past 0');
    const ds = await openDataset(root);
    await assert.rejects(
      ds.stream.read(0, 4),
      (err: Error) =>
        err instanceof DataError &&
        err.message.includes(`[0, ${es[0].start_token.toLocaleString('en-US')})`) &&
        err.message.includes('before the first shard'),
    );
    for (let i = 0; i < 2; i++) {
      assert.deepStrictEqual(Array.from(await ds.stream.read(es[0].start_token, 16)), pyTokens(root, es[0].start_token, 16));
    }
    await ds.stream.close();
  });

  it('a folder or a FIFO where a shard should be is a DataError saying what it is (no hang, no bare EISDIR)', async () => {
    const root = fs.mkdtempSync(path.join(out, 'special-'));
    fs.cpSync(caseDir('valid'), root, { recursive: true });
    const es = entriesOf(root);
    const dir = path.join(root, es[1].shard),
      fifo = path.join(root, es[2].shard);
    fs.rmSync(dir);
    fs.mkdirSync(dir);
    fs.rmSync(fifo);
    execFileSync('mkfifo', [fifo]);
    const ds = await openDataset(root);
    await assert.rejects(
      ds.stream.read(es[1].start_token, 1),
      (err: Error) => err instanceof DataError && err.message.startsWith(`${dir}: is a folder`),
    );
    await assert.rejects(
      ds.stream.read(es[2].start_token, 1),
      (err: Error) => err instanceof DataError && err.message.startsWith(`${fifo}: is a FIFO`),
    );
    assert.deepStrictEqual(Array.from(await ds.stream.read(0, 8)), pyTokens(caseDir('valid'), 0, 8), 'the regular shard still reads');
    await ds.stream.close();
    await assert.rejects(TokenStream.fromFile(dir), (err: Error) => err instanceof DataError && err.message.includes('is a folder'));
  });

  it('a count past one Buffer is refused with the limit before anything is allocated', async () => {
    const shard = path.join(caseDir('valid'), entriesOf(caseDir('valid'))[0].shard);
    const stream = new TokenStream([{ path: shard, startToken: 0, numTokens: 2 * MAX_READ_TOKENS }]);
    await assert.rejects(
      stream.read(0, MAX_READ_TOKENS + 1),
      (err: Error) =>
        err instanceof RangeRequestError &&
        err.message.includes(
          `(${MAX_READ_TOKENS.toLocaleString('en-US')} tokens = ${(MAX_READ_TOKENS * BYTES_PER_TOKEN).toLocaleString('en-US')} bytes)`,
        ),
    );
  });
});

describe('TokenStream file handles', function () {
  this.timeout(0);
  it('a read over 300 tiny files keeps at most MAX_POOLED_HANDLES open and equals the sample', async () => {
    // 300 files of 16 of the sample's tokens each (a scan of 100,000 such files ran out of descriptors).
    const ds = await openDataset(sampleDir());
    const ids = await ds.stream.read(0, 300 * 16);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-handles-'));
    try {
      const segments = Array.from({ length: 300 }, (_, i) => {
        const p = path.join(dir, `s${i}.u32`);
        fs.writeFileSync(p, Buffer.from(ids.slice(16 * i, 16 * (i + 1)).buffer));
        return { path: p, startToken: 16 * i, numTokens: 16 };
      });
      const stream = new TokenStream(segments);
      const got = new Uint32Array(ids.length);
      let most = 0;
      for (let i = 0; i < 300; i++) {
        got.set(await stream.read(16 * i, 16), 16 * i);
        most = Math.max(most, stream.openHandles);
      }
      assert.deepStrictEqual(got, ids);
      assert.ok(most <= MAX_POOLED_HANDLES, `${most} handles open at once`);
      await stream.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
