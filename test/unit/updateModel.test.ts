/**
 * The update view's model (src/core/updateModel.ts) against the dataset card's Python reader:
 * for EVERY update of the sample (which includes k = 0, the last update and every update that
 * spans a shard edge), rows equal the reader's `x` and `y` row by row; segments tile each row
 * and split exactly at EOS tokens and shard edges; document numbers and "continues" flags
 * equal what the reader's stream says; each row's decoded text equals the tokenizer library's
 * decode of the reader's row. Also the CLI's `update --text/--sequence` forms.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { openDataset, Dataset } from '../../src/core/dataset';
import { loadTokenizer, LoadedTokenizer } from '../../src/core/tokenizer';
import { readUpdate } from '../../src/core/update';
import {
  UpdateModel,
  buildUpdateModel,
  readUpdateModel,
  columnAtChar,
  toUpdateViewData,
  formatUpdateModelText,
  documentCountIfCheap,
} from '../../src/core/updateModel';
import { DocumentIndex } from '../../src/core/documents';
import { pyUpdates, pyTokens, PyBatch } from './pyref';
import { runCli, sampleDir } from './fixtures';

/** Shard edges from the manifest file itself (start_token of every shard but the first). */
function manifestEdges(root: string): number[] {
  return fs
    .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l).start_token as number)
    .sort((a, b) => a - b)
    .slice(1);
}

/** The row's text as the view shows it: segment text, EOS as its token text. */
function rowText(m: UpdateModel, r: number): string {
  return m.rows[r].segments.map((s) => s.text + (s.eos ? m.eosText : '')).join('');
}

describe('update view model equals the dataset card reader', function () {
  this.timeout(0);
  let root: string;
  let ds: Dataset;
  let tok: LoadedTokenizer;
  let ref: Map<number, PyBatch>;
  let all: number[]; // the whole stream, read by the reference reader
  let eosBefore: Int32Array; // eosBefore[o] = EOS tokens in [0, o), from the reference stream
  let ks: number[];
  let G: number, L: number, eos: number;
  const models = new Map<number, UpdateModel>();

  before(async () => {
    root = sampleDir();
    ds = await openDataset(root);
    tok = await loadTokenizer(ds.tokenizerFile!);
    ({ globalTokensPerUpdate: G, sequenceLength: L, eosTokenId: eos } = ds.settings);
    ks = [...Array(ds.schedule.numUpdates).keys()];
    ref = pyUpdates(root, ks, G, L);
    all = pyTokens(root, 0, ds.storedTokens);
    eosBefore = new Int32Array(all.length + 1);
    for (let i = 0; i < all.length; i++) eosBefore[i + 1] = eosBefore[i] + (all[i] === eos ? 1 : 0);
    for (const k of ks) models.set(k, await readUpdateModel(ds, k, tok, eosBefore[G * k]));
  });
  after(() => ds?.stream.close());

  it('documentCountIfCheap counts the documents of the reference stream, and declines past the budget', async () => {
    // Documents are separated by EOS; a final document not closed by an EOS counts too.
    const expected = eosBefore[all.length] + (all[all.length - 1] === eos ? 0 : 1);
    assert.strictEqual(await documentCountIfCheap(new DocumentIndex(ds.stream, eos), 0), ds.storedTokens > 0 ? undefined : 0);
    const index = new DocumentIndex(ds.stream, eos);
    assert.strictEqual(await documentCountIfCheap(index, ds.storedTokens), expected);
    // Counts are memoised: nothing is left to scan, so even a zero budget answers.
    assert.strictEqual(await documentCountIfCheap(index, 0), expected);
  });

  it('covers k = 0, the last update and every update spanning a shard edge', () => {
    const edges = manifestEdges(root);
    const spanning = ks.filter((k) => edges.some((e) => G * k < e && e < G * (k + 1)));
    assert.ok(ks.includes(0) && ks.includes(ds.schedule.numUpdates - 1));
    assert.ok(spanning.length >= 3, `the sample should have updates spanning shard edges, found ${spanning}`);
    for (const k of spanning) assert.strictEqual(models.get(k)!.shards.length, 2, `update ${k} touches two shards`);
  });

  it('x and y equal the reader row by row, for every update', () => {
    for (const k of ks) {
      const m = models.get(k)!,
        py = ref.get(k)!;
      assert.strictEqual(m.rows.length, py.x.length, `update ${k}: rows`);
      assert.deepStrictEqual(m.tokenRange, [G * k, G * (k + 1)]);
      for (let r = 0; r < m.rows.length; r++) {
        const row = m.rows[r];
        assert.strictEqual(row.index, r);
        assert.strictEqual(row.offset, G * k + L * r, `update ${k} row ${r} offset`);
        assert.deepStrictEqual(Array.from(row.x), py.x[r], `update ${k} x row ${r}`);
        assert.deepStrictEqual(Array.from(row.y), py.y[r], `update ${k} y row ${r}`);
        // the (L+1)-th token shown is the target of the last position
        assert.strictEqual(row.next!.id, py.y[r][L - 1], `update ${k} row ${r} next`);
        assert.strictEqual(row.next!.offset, G * k + L * (r + 1));
      }
      // the look-ahead of the last row is the stream token right after the update
      assert.strictEqual(m.rows[m.rows.length - 1].next!.id, all[G * (k + 1)]);
    }
  });

  it('segments tile each row and split exactly at EOS and at shard edges', () => {
    const edges = new Set(manifestEdges(root));
    for (const k of ks) {
      const m = models.get(k)!;
      for (const row of m.rows) {
        let col = 0;
        for (const s of row.segments) {
          assert.strictEqual(s.start, col, `update ${k} row ${row.index}: segments contiguous`);
          assert.ok(s.end > s.start);
          assert.strictEqual(s.offset, row.offset + s.start);
          const ids = all.slice(s.offset, row.offset + s.end);
          const eosAt = ids.indexOf(eos);
          assert.strictEqual(s.eos, eosAt === ids.length - 1, `update ${k} row ${row.index} col ${s.start}: eos flag`);
          assert.ok(eosAt === -1 || eosAt === ids.length - 1, 'no EOS inside a segment');
          for (let o = s.offset + 1; o < row.offset + s.end; o++) assert.ok(!edges.has(o), 'no shard edge inside a segment');
          assert.strictEqual(
            s.shardChange,
            edges.has(s.offset) && s.offset !== m.tokenRange[0],
            `update ${k} offset ${s.offset}: shard change mark`,
          );
          assert.strictEqual(
            m.shards[s.shard].startToken <= s.offset && s.offset < m.shards[s.shard].startToken + m.shards[s.shard].numTokens,
            true,
          );
          col = s.end;
        }
        assert.strictEqual(col, L);
        assert.strictEqual(row.next!.shardChange, edges.has(row.next!.offset));
      }
    }
  });

  it('document numbers, starts and "continues" flags match the stream', () => {
    for (const k of ks) {
      const m = models.get(k)!;
      assert.strictEqual(m.firstDocument, eosBefore[G * k]);
      for (const row of m.rows) {
        assert.strictEqual(row.continues, row.offset > 0 && all[row.offset - 1] !== eos, `update ${k} row ${row.index} continues`);
        for (const s of row.segments) {
          assert.strictEqual(s.document, eosBefore[s.offset], `update ${k} offset ${s.offset}: document number`);
          const beganHere = s.offset === 0 || all[s.offset - 1] === eos;
          assert.strictEqual(s.continues, !beganHere, `update ${k} offset ${s.offset}: continues`);
          // documentStart, when given, is the offset after the previous EOS
          if (s.documentStart !== undefined) {
            assert.ok(s.documentStart === 0 || all[s.documentStart - 1] === eos);
            assert.strictEqual(eosBefore[s.documentStart], s.document);
          } else {
            assert.ok(s.continues, 'only a document that began before the update lacks a start');
          }
        }
      }
    }
  });

  it("row text equals the tokenizer library decoding the reader's x row (every row of every update)", async () => {
    for (const k of ks) {
      const m = models.get(k)!,
        py = ref.get(k)!;
      for (let r = 0; r < m.rows.length; r++) {
        assert.strictEqual(rowText(m, r), await tok.libraryDecode(py.x[r]), `update ${k} row ${r}`);
      }
      // the next token's display text is the token's piece
      for (const row of m.rows) assert.strictEqual(row.next!.text, tok.pieces([row.next!.id])[0].text);
    }
  });

  it('without document numbers the model leaves them undefined and the rest unchanged', async () => {
    const k = ks[ks.length - 1];
    const m = await readUpdateModel(ds, k, tok);
    assert.strictEqual(m.firstDocument, undefined);
    for (const row of m.rows) for (const s of row.segments) assert.strictEqual(s.document, undefined);
    assert.deepStrictEqual(
      m.rows.map((r) => r.segments.map((s) => [s.start, s.end, s.text])),
      models.get(k)!.rows.map((r) => r.segments.map((s) => [s.start, s.end, s.text])),
    );
  });

  it('without a tokenizer, segments show ids', async () => {
    const b = await readUpdate(ds, 0);
    const m = buildUpdateModel(b, undefined, { numUpdates: ds.schedule.numUpdates, eos });
    const s = m.rows[0].segments[0];
    assert.strictEqual(
      s.text,
      `[${ref
        .get(0)!
        .x[0].slice(s.start, s.end - (s.eos ? 1 : 0))
        .join(' ')}]`,
    );
    assert.strictEqual(m.eosText, '<EOS>');
  });

  it('a click at character c of a segment maps to the token whose text holds c', () => {
    const m = models.get(1)!;
    let checked = 0;
    for (const row of m.rows.slice(0, 8)) {
      row.segments.forEach((s, si) => {
        const body = Array.from(row.x.subarray(s.start, s.end - (s.eos ? 1 : 0)));
        for (let c = s.start; c < s.start + body.length; c++) {
          const before = tok.decode(body.slice(0, c - s.start)).length;
          const after = tok.decode(body.slice(0, c - s.start + 1)).length;
          if (after > before && !tok.decode(body.slice(0, c - s.start + 1)).includes('\uFFFD')) {
            assert.strictEqual(columnAtChar(m, row.index, si, before, tok), c, `row ${row.index} segment ${si} char ${before}`);
            assert.strictEqual(columnAtChar(m, row.index, si, after - 1, tok), c);
            checked++;
          }
        }
      });
    }
    assert.ok(checked > 1000, `checked ${checked} clicks`);
  });

  it('a character split by a shard edge shows whole (no U+FFFD), in the later segment', async () => {
    // A synthetic 2-row batch built from real encoded text: the emoji's tokens straddle the edge.
    const ids = await tok.encode('ab 🎉 cd ef gh ij kl');
    const split = tok.pieces(ids).findIndex((p) => p.kind === 'partial');
    assert.ok(split > 0, 'the emoji is split across tokens');
    const Lx = 4,
      rows = 2,
      tokens = new Uint32Array(rows * Lx + 1);
    for (let i = 0; i < tokens.length; i++) tokens[i] = ids[(i + Math.max(0, split - 2)) % ids.length];
    const edge = 3; // the emoji's first partial token is column 2, its continuation column 3
    const shard = (index: number, startToken: number, numTokens: number) => ({
      index,
      shard: `shards/s${index}.u32`,
      path: `/x/s${index}.u32`,
      startToken,
      numTokens,
      line: index + 1,
      extra: {},
    });
    const m = buildUpdateModel(
      { update: 0, tokenRange: [0, rows * Lx], tokens, shards: [shard(0, 0, edge), shard(1, edge, 100)], rows, seqLen: Lx },
      tok,
      { numUpdates: 1, eos },
    );
    const row = m.rows[0];
    assert.deepStrictEqual(
      row.segments.map((x) => [x.start, x.end, x.shardChange]),
      [
        [0, 3, false],
        [3, 4, true],
      ],
    );
    assert.ok(
      !row.segments[0].text.includes('\uFFFD') && !row.segments[1].text.includes('\uFFFD'),
      JSON.stringify(row.segments.map((x) => x.text)),
    );
    assert.strictEqual(row.segments.map((x) => x.text).join(''), await tok.libraryDecode(Array.from(row.x)));
    assert.ok(row.segments[1].text.includes('🎉'));
  });

  it('flags ids that look like uint16 data read as uint32 (the view shows it as a banner)', async () => {
    const b = await readUpdate(ds, 0);
    const packed = new Uint32Array(b.tokens.length);
    for (let i = 0; i < packed.length; i++)
      packed[i] = ((b.tokens[(2 * i) % b.tokens.length] << 16) | b.tokens[(2 * i + 1) % b.tokens.length]) >>> 0;
    const m = buildUpdateModel({ ...b, tokens: packed }, tok, { numUpdates: ds.schedule.numUpdates, eos });
    assert.match(m.anomaly ?? '', /uint16 data read as uint32/);
    assert.strictEqual(models.get(0)!.anomaly, undefined, 'the sample itself looks fine');
    assert.strictEqual(toUpdateViewData(m).anomaly, m.anomaly);
  });

  it('the webview copy carries no ids and no paths', () => {
    const v = toUpdateViewData(models.get(0)!);
    const json = JSON.stringify(v);
    assert.ok(!json.includes(root), 'no absolute path');
    assert.ok(!('x' in v.rows[0]) && !('y' in v.rows[0]) && !('tokens' in v));
    assert.strictEqual(v.rows.length, ref.get(0)!.x.length);
    assert.strictEqual(v.title, 'update 0 (0-based; the 1st update)');
  });

  it('CLI `update --text` prints the model text (--json with it is an error); --sequence narrows it', () => {
    const k = ks.find((x) => models.get(x)!.shards.length === 2)!;
    const text = formatUpdateModelText(models.get(k)!);
    const a = runCli(['update', root, String(k), '--text']);
    assert.strictEqual(a.code, 0, a.stderr);
    const b = runCli(['update', root, String(k), '--text', '--json']);
    assert.strictEqual(b.code, 2, 'one of them, not silently either');
    assert.match(b.stderr, /^error: --json and --text exclude each other/);
    const plain = runCli(['update', root, String(k)]);
    assert.strictEqual(plain.stdout, a.stdout, 'text is the default');
    // the CLI numbers documents only when cheap; compare with the model built the same way
    assert.ok(a.stdout.includes('⟦shard → '), 'the shard change is marked');
    assert.strictEqual(a.stdout.trimEnd().split('\n')[0], text.split('\n')[0]);
    const r = 5;
    const s = runCli(['update', root, String(k), '--sequence', String(r), '--json']);
    assert.strictEqual(s.code, 0, s.stderr);
    const j = JSON.parse(s.stdout);
    assert.deepStrictEqual(j.input_ids, [ref.get(k)!.x[r]]);
    assert.deepStrictEqual(j.target_ids, [ref.get(k)!.y[r]]);
    const st = runCli(['update', root, String(k), '--sequence', String(r), '--text']);
    assert.ok(st.stdout.includes(`── sequence ${r} ·`) && !st.stdout.includes('── sequence 0 ·'));
    assert.ok(st.stdout.includes(JSON.stringify(tok.pieces([ref.get(k)!.y[r][L - 1]])[0].text)));
    const bad = runCli(['update', root, String(k), '--sequence', '128']);
    assert.strictEqual(bad.code, 2);
    assert.match(bad.stderr, /--sequence 128 is outside 0\.\.127/);
  });
});
