/**
 * The shard editor's page serving (src/core/pages.ts) and the webview's page model
 * (webview/shardEditor/model.ts), checked against the dataset card's Python reader and the
 * tokenizer library:
 * - every page of a sample shard (so the ids on both sides of every page edge) and the shard's
 *   last token equal the reader's tokens;
 * - the text the Documents view shows (per-token texts joined in order) equals the library's
 *   decode, also when a multi-byte character is split over tokens across a page edge and
 *   right before an EOS (a shard built here from real text with the real tokenizer);
 * - blocks tile pages, EOS tokens are separators, decode groups are never split;
 * - per-page EOS facts and document numbers equal counts over the reader's tokens.
 */
import * as assert from 'assert';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openDataset, Dataset } from '../../src/core/dataset';
import { PAGE_TOKENS, PagePayload, ShardPages, groupEnds } from '../../src/core/pages';
import { TokenStream } from '../../src/core/stream';
import { loadTokenizer, LoadedTokenizer } from '../../src/core/tokenizer';
import { BLOCK_LIMITS, Numbering, PageData, textBlocks } from '../../webview/shardEditor/model';
import { pyTokens } from './pyref';
import { sampleDir } from './fixtures';

const P = PAGE_TOKENS;

/** Reads every page of a shard through ShardPages (as the editor does). */
async function allPages(sp: ShardPages): Promise<PagePayload[]> {
  const out: PagePayload[] = [];
  for (let p = 0; p < sp.pageCount; p++) out.push(await sp.page(p));
  return out;
}

/** The Documents view's text of whole pages: every token's docText, in order. */
function shownText(pages: PagePayload[], eos: number): string {
  let s = '';
  for (const pl of pages) {
    const pd = new PageData(pl, eos);
    for (let o = pd.start; o < pd.end; o++) s += pd.docText(o);
  }
  return s;
}

/** Writes a one-shard dataset (manifest with sha256) so the Python reader can read it. */
function writeDataset(dir: string, ids: number[]): string {
  fs.mkdirSync(path.join(dir, 'shards'), { recursive: true });
  const buf = Buffer.from(new Uint32Array(ids).buffer);
  fs.writeFileSync(path.join(dir, 'shards', 'tokens_000000.u32'), buf);
  const sha = crypto.createHash('sha256').update(buf).digest('hex');
  fs.writeFileSync(
    path.join(dir, 'shard_manifest.jsonl'),
    JSON.stringify({ shard: 'shards/tokens_000000.u32', start_token: 0, num_tokens: ids.length, sha256: sha }) + '\n',
  );
  return path.join(dir, 'shards', 'tokens_000000.u32');
}

/** A seeded PRNG (mulberry32) for the property test. */
function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('shard editor pages', function () {
  this.timeout(0);
  let root: string;
  let ds: Dataset;
  let tok: LoadedTokenizer;
  let eos: number;
  let tmp: string;

  before(async () => {
    root = sampleDir();
    ds = await openDataset(root);
    tok = await loadTokenizer(ds.tokenizerFile!);
    eos = ds.settings.eosTokenId;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-pages-'));
  });

  after(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  for (const which of ['second', 'last'] as const) {
    it(`every page and the last token of the ${which} sample shard equal the Python reader`, async () => {
      const e = which === 'second' ? ds.shards[1] : ds.shards[ds.shards.length - 1];
      const { stream } = await TokenStream.fromFile(e.path);
      const sp = new ShardPages(stream, stream.totalTokens, tok, eos);
      assert.strictEqual(stream.totalTokens, e.numTokens);
      assert.ok(sp.pageCount >= 2, 'the shard should span several pages');
      const pages = await allPages(sp);
      for (const pl of pages) {
        const n = pl.ids.length;
        assert.deepStrictEqual(pl.ids, pyTokens(root, e.startToken + pl.start, n), `page ${pl.index} (local ${pl.start}, ${n} tokens)`);
        assert.strictEqual(pl.texts!.length, n);
        assert.strictEqual(pl.kinds!.length, n);
      }
      // The last token, three ways: the page, a ranged read, the reader.
      const lastRef = pyTokens(root, e.startToken + e.numTokens - 1, 1);
      assert.deepStrictEqual([pages[pages.length - 1].ids.at(-1)], lastRef);
      assert.deepStrictEqual(Array.from(await sp.read(e.numTokens - 1, 1)), lastRef);
      assert.deepStrictEqual(Array.from(await sp.read(e.numTokens - 1, 10)), lastRef, 'reads are clipped at the shard end');
      // Shown text equals the library's decode of the reader's ids.
      const ref = pyTokens(root, e.startToken, e.numTokens);
      const shown = shownText(pages, eos);
      assert.strictEqual(shown, tok.decode(ref));
      assert.strictEqual(shown, await tok.libraryDecode(ref));
      await stream.close();
    });
  }

  it('a character split over tokens at a page edge and before an EOS decodes exactly', async () => {
    const text = 'Ünïcödé ✓ 東京都 👩‍👩‍👧 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🧪🧬 naïve café';
    const piece = await tok.encode(text);
    const kinds = tok.pieces(piece).map((p) => p.kind);
    const firstPartial = kinds.indexOf('partial');
    assert.ok(firstPartial >= 0, 'the sample text should contain tokens holding part of a character');
    const filler = (await tok.encode('The quick brown fox jumps over the lazy dog. ')).filter((id) => id !== eos);
    const ids: number[] = [];
    // Page 0 ends inside a character: the partial token is the page's last token.
    while (ids.length < P - 1 - firstPartial) ids.push(filler[ids.length % filler.length]);
    ids.push(...piece);
    // A partial token cut off by an EOS (the document ends mid-character), then more text.
    ids.push(piece[firstPartial], eos, ...piece, eos);
    while (ids.length < 2 * P + 100) ids.push(filler[ids.length % filler.length]);
    const file = writeDataset(path.join(tmp, 'split'), ids);
    const { stream } = await TokenStream.fromFile(file);
    const sp = new ShardPages(stream, stream.totalTokens, tok, eos);
    const pages = await allPages(sp);
    const dsRoot = path.join(tmp, 'split');
    for (const pl of pages) assert.deepStrictEqual(pl.ids, pyTokens(dsRoot, pl.start, pl.ids.length));
    assert.strictEqual(pages[0].ids.at(-1), piece[firstPartial]);
    assert.ok((pages[1].cont ?? 0) > 0, "page 1 starts with tokens that finish page 0's character");
    const lastJoin = pages[0].joins!.at(-1)!;
    assert.ok(lastJoin[0] + lastJoin[1] > P, "page 0's last group runs into page 1");
    assert.strictEqual(shownText(pages, eos), await tok.libraryDecode(ids));
    // Per document (as the Documents view draws them, EOS excluded): equal to the library's decode.
    let from = 0;
    for (let i = 0; i <= ids.length; i++) {
      if (i === ids.length || ids[i] === eos) {
        const doc = ids.slice(from, i);
        let s = '';
        for (const pl of pages) {
          const pd = new PageData(pl, eos);
          for (let o = Math.max(from, pd.start); o < Math.min(i, pd.end); o++) s += pd.docText(o);
        }
        assert.strictEqual(s, doc.length ? await tok.libraryDecode(doc) : '', `document ending at ${i}`);
        from = i + 1;
      }
    }
    // Partial tokens carry their bytes.
    const pd0 = new PageData(pages[0], eos);
    assert.strictEqual(pd0.hexOf(P - 1), tok.pieces([piece[firstPartial]])[0].hex);
    await stream.close();
  });

  it('decode groups join exactly like the decoder on random mixes of partial, whole, special and unknown ids', async () => {
    const partial: number[] = [],
      whole: number[] = [];
    for (let id = 0; id < tok.vocabSize && (partial.length < 400 || whole.length < 400); id += 7) {
      const k = tok.pieces([id])[0].kind;
      if (k === 'partial') partial.push(id);
      else if (k === 'text') whole.push(id);
    }
    const r = rng(20260730);
    for (let trial = 0; trial < 300; trial++) {
      const ids: number[] = [];
      const n = 1 + Math.floor(r() * 60);
      for (let i = 0; i < n; i++) {
        const x = r();
        ids.push(
          x < 0.55
            ? partial[Math.floor(r() * partial.length)]
            : x < 0.9
              ? whole[Math.floor(r() * whole.length)]
              : x < 0.95
                ? eos
                : tok.vocabSize + Math.floor(r() * 1000),
        );
      }
      const ends = groupEnds(ids, tok, eos);
      let s = '',
        from = 0;
      for (let i = 0; i < ids.length; i++)
        if (ends[i] || i === ids.length - 1) {
          s += tok.decode(ids.slice(from, i + 1));
          from = i + 1;
        }
      assert.strictEqual(s, tok.decode(ids), `trial ${trial}: ${ids.join(',')}`);
      assert.ok(
        ids.every((id, i) => id !== eos || (ends[i] && (i === 0 || ends[i - 1]))),
        'groups never span an EOS',
      );
    }
  });

  it('blocks tile each page, EOS tokens are separators, groups are never split, ID rows align', async () => {
    const e = ds.shards[1];
    const { stream } = await TokenStream.fromFile(e.path);
    const sp = new ShardPages(stream, stream.totalTokens, tok, eos);
    for (let p = 0; p < sp.pageCount; p++) {
      const pd = new PageData(await sp.page(p), eos);
      for (const view of ['documents', 'tokens'] as const) {
        const blocks = pd.blocks(view, 16);
        assert.strictEqual(blocks[0].start, pd.start);
        assert.strictEqual(blocks.at(-1)!.end, pd.end);
        for (let i = 1; i < blocks.length; i++) assert.strictEqual(blocks[i].start, blocks[i - 1].end);
        for (const b of blocks) {
          assert.ok(b.end > b.start);
          const hasEos = pd.ids.slice(b.start - pd.start, b.end - pd.start).includes(eos);
          if (b.kind === 'sep') assert.ok(b.end - b.start === 1 && pd.id(b.start) === eos);
          else assert.ok(!hasEos, `${view} block ${b.start}–${b.end} holds an EOS`);
          assert.notStrictEqual(pd.groupSize(b.start), 0, 'a block starts inside a decode group');
        }
      }
      const rows = pd.blocks('ids', 16);
      assert.ok(rows.every((b) => b.start % 16 === 0 && b.end - b.start <= 16));
      assert.strictEqual(rows.length, Math.ceil(pd.ids.length / 16));
    }
    // The same function with tiny limits still tiles.
    const pd = new PageData(await sp.page(0), eos);
    const tiny = textBlocks(pd, { soft: 3, hard: 5 });
    assert.ok(tiny.every((b) => b.end - b.start <= 5 + 8));
    await stream.close();
  });

  it('Documents view: only real newlines and EOS start lines; every other block edge is a flagged soft break', async () => {
    // Shards 0 and 1 hold the trial's examples (offset 6,144 of shard 0, "State⏎ and local" in shard 1).
    for (const e of ds.shards.slice(0, 2)) {
      const { stream } = await TokenStream.fromFile(e.path);
      const sp = new ShardPages(stream, stream.totalTokens, tok, eos);
      const ref = pyTokens(root, e.startToken, e.numTokens);
      let text = '';
      let softBreaks = 0;
      let prevText = ''; // the decoded text of the previous block (or separator marker)
      let prevKind: string | undefined;
      let prevLen = 0;
      for (let p = 0; p < sp.pageCount; p++) {
        const pl = await sp.page(p);
        // The host's lineStart flag equals "shard start, or the reader's previous id is EOS or ends with a newline byte".
        const expectLineStart = pl.start === 0 || ref[pl.start - 1] === eos || tok.bytesOf(ref[pl.start - 1]).at(-1) === 0x0a;
        assert.strictEqual(pl.lineStart, expectLineStart, `lineStart of page ${p}`);
        const pd = new PageData(pl, eos);
        for (const b of pd.blocks('documents', 16)) {
          let t = '';
          for (let o = b.start; o < b.end; o++) t += pd.docText(o);
          if (b.kind === 'text' && b.start > 0) {
            // A block that does not follow a newline or an EOS must carry the soft-break flag, and vice versa.
            const realBreak = prevKind === 'sep' || prevText.endsWith('\n');
            assert.strictEqual(
              !!b.midLine,
              !realBreak,
              `block at local ${b.start} of ${path.basename(e.path)}: midLine=${b.midLine} after ${JSON.stringify(prevText.slice(-20))}`,
            );
            if (b.midLine) {
              softBreaks++;
              // Blocks prefer ending at newlines: a soft break only at a page edge or after a block of ≥ the soft limit.
              assert.ok(
                b.start % P === 0 || prevLen >= BLOCK_LIMITS.documents.soft,
                `soft break at ${b.start} after a block of ${prevLen} tokens`,
              );
            }
          }
          if (b.kind === 'sep') assert.ok(!b.midLine);
          text += t;
          prevText = b.kind === 'sep' ? '' : t;
          prevKind = b.kind;
          prevLen = b.end - b.start;
        }
      }
      // The blocks' texts concatenated equal the library's decode (no newline inserted anywhere).
      assert.strictEqual(text, await tok.libraryDecode(ref));
      assert.ok(softBreaks > 0, 'the sample has long newline-free runs, so some soft breaks are expected');
      await stream.close();
    }
  });

  it("per-page EOS facts and document numbers equal counts over the reader's tokens", async () => {
    const e = ds.shards[2];
    const { stream } = await TokenStream.fromFile(e.path);
    const sp = new ShardPages(stream, stream.totalTokens, tok, eos);
    const stats = await sp.scanDocuments();
    const ref = pyTokens(root, e.startToken, e.numTokens);
    const before = pyTokens(root, 0, e.startToken).filter((id) => id === eos).length;
    for (let p = 0; p < sp.pageCount; p++) {
      const slice = ref.slice(p * P, (p + 1) * P);
      assert.strictEqual(stats.eosCount[p], slice.filter((id) => id === eos).length, `page ${p} EOS count`);
      assert.strictEqual(stats.firstEos[p], slice.indexOf(eos));
      assert.strictEqual(stats.lastEos[p], slice.lastIndexOf(eos));
    }
    const num = new Numbering(P, e.startToken);
    num.update({
      type: 'numbering',
      generation: 0,
      state: 'global',
      pageEos: stats.eosCount,
      pageFirstEos: stats.firstEos,
      pageLastEos: stats.lastEos,
      docBase: before,
    });
    const pages = new Map<number, PageData>();
    for (let p = 0; p < sp.pageCount; p++) pages.set(p, new PageData(await sp.page(p), eos));
    const pageAt = (i: number) => pages.get(i);
    // Every EOS position and a spread of others.
    const probes = new Set<number>([0, e.numTokens - 1]);
    ref.forEach((id, i) => {
      if (id === eos) {
        probes.add(i);
        probes.add(i + 1);
      }
    });
    for (let o = 0; o < e.numTokens; o += 9973) probes.add(o);
    let eosBefore = 0;
    const prefix = new Int32Array(e.numTokens + 1);
    for (let i = 0; i < e.numTokens; i++) {
      prefix[i] = eosBefore;
      if (ref[i] === eos) eosBefore++;
    }
    prefix[e.numTokens] = eosBefore;
    for (const o of probes) {
      if (o >= e.numTokens) continue;
      const info = num.docAt(o, pageAt(Math.floor(o / P)), pageAt);
      assert.strictEqual(info.number, before + prefix[o], `document number at local ${o}`);
      assert.strictEqual(info.scope, 'global');
      const lastBefore = ref.lastIndexOf(eos, o - 1);
      if (o > 0 && lastBefore >= 0) assert.strictEqual(info.start, lastBefore + 1, `document start at ${o}`);
      const nextEos = ref.indexOf(eos, o);
      if (nextEos >= 0) assert.strictEqual(info.end, nextEos + 1, `document end at ${o}`);
      if (ref[o] === eos && o + 1 < e.numTokens) {
        const after = num.docAfterEos(o, pageAt(Math.floor(o / P))!, pageAt);
        assert.strictEqual(after.number, before + prefix[o] + 1);
        assert.strictEqual(after.start, o + 1);
        const n2 = ref.indexOf(eos, o + 1);
        if (n2 >= 0) assert.strictEqual(after.end, n2 + 1);
      }
    }
    await stream.close();
  });

  it('pages without a tokenizer carry ids only; out-of-range pages are refused with the valid range', async () => {
    const e = ds.shards[0];
    const { stream } = await TokenStream.fromFile(e.path);
    const sp = new ShardPages(stream, stream.totalTokens, undefined, eos);
    const pl = await sp.page(1);
    assert.deepStrictEqual(pl.ids, pyTokens(root, P, P));
    assert.strictEqual(pl.texts, undefined);
    await assert.rejects(sp.page(sp.pageCount), /outside 0\.\.\d+/);
    await assert.rejects(sp.page(-1), /outside/);
    await stream.close();
  });
});
