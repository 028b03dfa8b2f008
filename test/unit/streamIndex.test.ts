/**
 * The stream index (src/core/streamIndex/scan.ts, streamIndex.ts, indexShards.ts, the `index` and
 * `locate` CLI) against numpy (scripts/index_reference.py over the dataset card's reference reader)
 * on the sample and on datasets with planted anomalies made by scripts/make-index-fixtures.mjs:
 * EOS counts per shard, document numbers/starts/lengths at many random offsets, the longest
 * EOS-free run and its place, the anomaly list, the duplicate summary; a stale entry (file
 * rewritten with the same size) or a damaged one (edited, truncated or foreign `.docs`) is
 * rebuilt, never trusted; verify builds the index in the same read.
 */
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openDataset, Dataset } from '../../src/core/dataset';
import { indexParamsFor, indexSegmentsOf, indexShards, openDatasetIndex } from '../../src/core/streamIndex/indexShards';
import { loadTokenizer } from '../../src/core/tokenizer';
import { anomalyMarksBySegment, anomalyMarksForRows } from '../../src/core/streamIndex/anomalies';
import { IndexStore, lookOf, scanParamsKey } from '../../src/core/streamIndex/entryStore';
import { StreamIndex } from '../../src/core/streamIndex/streamIndex';
import { identityOfStats } from '../../src/core/fileIdentity';
import { fmt } from '../../src/core/units';
import { ShardScanner, combineHash, hashIds, INDEX_BLOCK_TOKENS, lengthBucket, LENGTH_BUCKETS } from '../../src/core/streamIndex/scan';
import {
  EVENT_CAP,
  EVENTS_AT,
  IndexKernel,
  makeIndexKernel,
  SCRATCH_AT,
  SCRATCH_BYTES,
  ST_EOS,
  ST_EVENTS,
  ST_FLOOR,
  ST_H1,
  ST_H2,
  ST_MAX,
} from '../../src/core/streamIndex/kernel';
import { verifyShards } from '../../src/core/verify/verify';
import { closeIdleReadWorkers } from '../../src/core/shardPool';
import { PAGE_TOKENS } from '../../src/core/pages';
import { DocumentIndex } from '../../src/core/documents';
import { VerifyCache } from '../../src/core/verify/cache';
import { cliPath, repoRoot, sampleDir, sha256sum } from './fixtures';
import { python3Cached } from './pyref';

interface PyIndex {
  eos: number;
  vocab: number;
  tokens: number;
  eos_per_shard: number[];
  documents: number;
  longest_run: { start: number; length: number };
  long_runs: { start: number; length: number }[];
  specials: Record<string, Record<string, { count: number; first: number[] }>>;
  unknown: Record<string, { count: number; first: number[] }>;
  duplicates: { count: number; pairs: number[][] };
  locate: { offset: number; shard: string; local_offset: number; document: number; document_start: number; document_length: number }[];
}

function pyIndex(root: string, offsets: number[] = [], threshold = 100_000): PyIndex {
  const out = python3Cached(
    [path.join(repoRoot(), 'scripts', 'index_reference.py'), root, '--threshold', String(threshold), '--offsets', ...offsets.map(String)],
    [root],
  );
  return JSON.parse(out) as PyIndex;
}

/** Deterministic offsets (mulberry32), plus every shard edge and its neighbours. */
function offsetsFor(ds: Dataset, n: number, seed = 13): number[] {
  let a = seed >>> 0;
  const rnd = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = new Set<number>([0, ds.storedTokens - 1]);
  for (const e of ds.shards)
    for (const d of [-1, 0, 1]) {
      const o = e.startToken + d;
      if (o >= 0 && o < ds.storedTokens) out.add(o);
    }
  while (out.size < n) out.add(Math.floor(rnd() * ds.storedTokens));
  return [...out].sort((x, y) => x - y);
}

async function buildIndex(
  root: string,
  store: IndexStore,
): Promise<{ ds: Dataset; ix: StreamIndex; params: ReturnType<typeof indexParamsFor> }> {
  const ds = await openDataset(root);
  const params = indexParamsFor(ds, await loadTokenizer(ds.tokenizerFile!));
  const r = await indexShards(indexSegmentsOf(ds), store, params, { jobs: 2 });
  assert.deepStrictEqual(r.failed, []);
  return { ds, ix: await openDatasetIndex(ds, store, params), params };
}

function cli(args: string[], cacheHome: string): { stdout: string; stderr: string; code: number } {
  const r = spawnSync(process.execPath, [cliPath(), ...args], {
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: cacheHome },
    maxBuffer: 1 << 28,
  });
  return { stdout: r.stdout, stderr: r.stderr, code: r.status ?? -1 };
}

describe('stream index', function () {
  this.timeout(120_000);
  let tmp: string;
  let fixtures: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-index-'));
    fixtures = path.join(tmp, 'fixtures');
    execFileSync(
      process.execPath,
      [path.join(repoRoot(), 'scripts', 'make-index-fixtures.mjs'), '--sample', sampleDir(), '--out', fixtures],
      { stdio: 'ignore' },
    );
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  describe('scanner', () => {
    it("the dtype look with the shard's max id (the fast path) equals the look without it", async () => {
      const vocab = (await loadTokenizer(path.join(sampleDir(), 'tokenizer', 'tokenizer.json'))).vocabSize;
      const shard = fs.readFileSync(path.join(sampleDir(), 'shards', 'tokens_000000.u32'));
      const real = new Uint32Array(shard.buffer, shard.byteOffset, 65536).slice();
      const widened = new Uint32Array(65536).map((_, i) => (i % 2 ? 0 : real[i >> 1])); // uint16 ids padded to uint32
      const nearly = widened.map((v, i) => (i % 40 === 1 ? 7 : v)); // 95% of the odd ids 0: above the 90% threshold
      const below = widened.map((v, i) => (i % 10 === 1 ? 7 : v)); // 80%: not the look
      const zeros = new Uint32Array(65536);
      for (const [name, sample] of Object.entries({ real, widened, nearly, below, zeros })) {
        let max = 0;
        for (const v of sample) max = Math.max(max, v);
        assert.ok(max < vocab, name);
        assert.deepStrictEqual(lookOf(sample, vocab, max), lookOf(sample, vocab), name);
      }
      assert.strictEqual(lookOf(real, vocab, 100000), undefined);
      assert.strictEqual(lookOf(widened, vocab, 100000)?.kind, 'uint32-as-uint16');
      assert.strictEqual(lookOf(nearly, vocab, 100000)?.kind, 'uint32-as-uint16');
      assert.strictEqual(lookOf(below, vocab, 100000), undefined);
    });

    /** Events of a kernel run, by the kernel's contract: [index, id, h1, h2] per rare id; then [max, h1, h2]. */
    function kernelRun(k: IndexKernel, ids: Uint32Array, floor: number, eos: number, from = 0): number[][] {
      const w = k.words;
      new Uint32Array(k.buffer, SCRATCH_AT, ids.length).set(ids);
      [w[ST_FLOOR], w[ST_EOS], w[ST_MAX], w[ST_H1], w[ST_H2], w[ST_EVENTS]] = [floor, eos, 0, 0, 0, 0];
      const out: number[][] = [];
      for (let i = from; ;) {
        i = k.scan(SCRATCH_AT, i, ids.length);
        for (let e = 0; e < w[ST_EVENTS]; e++) out.push([...w.subarray(EVENTS_AT / 4 + 4 * e, EVENTS_AT / 4 + 4 * e + 4)]);
        w[ST_EVENTS] = 0;
        if (i >= ids.length) break;
      }
      out.push([w[ST_MAX], w[ST_H1], w[ST_H2]]);
      return out;
    }

    it('the WebAssembly SIMD kernel compiles here and equals hashIds and its JavaScript twin on every length, start and id range', () => {
      const wasm = makeIndexKernel(0, 'wasm');
      const js = makeIndexKernel(0, 'js');
      assert.strictEqual(wasm.simd, true, 'Node 20 runs WebAssembly SIMD');
      let x = 7;
      const rnd = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
      const cases: { ids: Uint32Array; floor: number; eos: number; from: number }[] = [];
      for (let len = 0; len <= 140; len++)
        for (const rare of [0, 5, 40]) {
          const ids = Uint32Array.from({ length: len }, () => (rnd() % 100 < rare ? 1000 + (rnd() % 3) : rnd() % 1000));
          if (len > 3 && rare === 5) ids[len - 2] = 0xfffffff0 + (rnd() % 15); // an id ≥ 2^31 is rare too
          cases.push({ ids, floor: 1000, eos: 1000, from: len > 20 ? len % 7 : 0 });
        }
      // Every id an EOS: more events than the event area holds (the kernel returns early and resumes).
      cases.push({ ids: new Uint32Array(EVENT_CAP * 2 + 37).fill(3), floor: 3, eos: 3, from: 0 });
      const big = Uint32Array.from({ length: 50_000 }, () => (rnd() % 997 === 0 ? 9 : rnd() % 9));
      cases.push({ ids: big, floor: 9, eos: 9, from: 0 });
      // Short documents: the fast run restarts right after each EOS, at every alignment.
      const short = Uint32Array.from({ length: 50_000 }, () => (rnd() % 37 === 0 ? 9 : rnd() % 997 === 0 ? 10 : rnd() % 9));
      cases.push({ ids: short, floor: 9, eos: 9, from: 3 });
      for (const c of cases) {
        const a = kernelRun(wasm, c.ids, c.floor, c.eos, c.from);
        assert.deepStrictEqual(a, kernelRun(js, c.ids, c.floor, c.eos, c.from), `length ${c.ids.length} from ${c.from}`);
        // Against the reference hash: each event carries the hash of the ids since the last EOS.
        let docStart = c.from;
        let max = 0;
        for (let i = c.from; i < c.ids.length; i++) max = Math.max(max, c.ids[i]);
        for (const [i, v, h1, h2] of a.slice(0, -1)) {
          assert.strictEqual(v, c.ids[i]);
          const h = hashIds(c.ids.subarray(docStart, i));
          assert.deepStrictEqual([h1, h2], [h.h1, h.h2], `hash before index ${i}`);
          if (v === c.eos) docStart = i + 1;
        }
        const tail = hashIds(c.ids.subarray(docStart));
        assert.deepStrictEqual(a.at(-1), [max, tail.h1, tail.h2]);
        const rare = [...c.ids.subarray(c.from)].filter((v) => v >= c.floor).length;
        assert.strictEqual(a.length - 1, rare, 'one event per rare id');
      }
    });

    it('a length bucket is the bit length of the length (capped), below and above 2^32', () => {
      // Independent of both code paths (Math.clz32 below 2^32, Math.log2 above): the binary digits.
      const bits = (n: number) => (n <= 0 ? 0 : BigInt(n).toString(2).length);
      const lengths = [0, 1, 2, 3];
      for (let k = 2; k <= 45; k++) lengths.push(2 ** k - 1, 2 ** k, 2 ** k + 1);
      lengths.push(6_410, 39_487, 582_319, 25_000_000, 52_428_800_000);
      for (const n of lengths) assert.strictEqual(lengthBucket(n), Math.min(LENGTH_BUCKETS - 1, bits(n)), `length ${n}`);
    });

    it('any chunking gives the same scan; polynomial hashes combine exactly', () => {
      const eos = 7;
      let x = 99;
      const ids = new Uint32Array(5 * INDEX_BLOCK_TOKENS + 123);
      for (let i = 0; i < ids.length; i++) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        ids[i] = (x >>> 16) % 50 === 0 ? eos : (x >>> 8) % 1000;
      }
      const params = { eos, vocabSize: 1000, specialIds: [11], holeIds: [5] };
      const whole = new ShardScanner(params, ids.length);
      whole.push(ids);
      const a = whole.finish();
      const js = makeIndexKernel(0, 'js');
      const resident = makeIndexKernel(ids.length * 4);
      for (const [chunk, kernel] of [
        [1, undefined],
        [3, js],
        [1000, undefined],
        [INDEX_BLOCK_TOKENS + 1, js],
        [SCRATCH_BYTES, undefined],
        [INDEX_BLOCK_TOKENS, resident],
      ] as const) {
        const s = new ShardScanner(params, ids.length, kernel);
        const src = kernel === resident ? new Uint32Array(resident.buffer, resident.area.byteOffset, ids.length) : ids;
        if (kernel === resident) src.set(ids); // scanned in place
        for (let o = 0; o < ids.length; o += chunk) s.push(src.subarray(o, Math.min(ids.length, o + chunk)));
        assert.deepStrictEqual(s.finish(), a, `chunk ${chunk}`);
      }
      let eosCount = 0,
        hole = 0;
      for (const v of ids) {
        if (v === eos) eosCount++;
        if (v === 5) hole++;
      }
      assert.strictEqual(a.eosCount, eosCount);
      assert.strictEqual(a.unknown.count, hole);
      assert.strictEqual(a.specials[11]?.count ?? 0, ids.filter((v) => v === 11).length);
      const p = ids.indexOf(eos);
      assert.deepStrictEqual(a.leadHash, hashIds(ids.subarray(0, p)));
      const left = ids.subarray(0, 777),
        right = ids.subarray(777, 5000);
      assert.deepStrictEqual(combineHash(hashIds(left), hashIds(right)), hashIds(ids.subarray(0, 5000)));
    });
  });

  for (const name of ['sample', 'anomalies']) {
    it(`${name}: EOS per shard, documents, longest run, anomalies, duplicates and 300 document lookups equal numpy`, async () => {
      const root = name === 'sample' ? sampleDir() : path.join(fixtures, 'anomalies');
      const store = new IndexStore(path.join(tmp, `store-${name}`));
      const { ds, ix } = await buildIndex(root, store);
      const offsets = offsetsFor(ds, 300);
      const py = pyIndex(root, offsets);
      assert.ok(ix.complete);
      assert.deepStrictEqual(
        ix.records.map((r) => r!.eosCount),
        py.eos_per_shard,
      );
      assert.strictEqual(ix.documentCount, py.documents);
      const s = ix.summary();
      assert.deepStrictEqual({ start: s.longestRun.start, length: s.longestRun.length }, py.longest_run);
      assert.deepStrictEqual(s.documents.count, py.documents);
      for (let i = 0; i < offsets.length; i++) {
        const d = await ix.documentAt(offsets[i]);
        const want = py.locate[i];
        assert.deepStrictEqual(
          { document: d!.document, start: d!.start, length: d!.length },
          { document: want.document, start: want.document_start, length: want.document_length },
          `offset ${offsets[i]}`,
        );
      }
      // Document n → start: the inverse of the lookup.
      for (const want of py.locate.slice(0, 50)) assert.strictEqual((await ix.documentInfo(want.document))!.start, want.document_start);
      await assert.rejects(ix.documentInfo(py.documents), /does not exist: the stream has/);
      const anomalies = ix.anomalies(ds.schedule);
      const runs = anomalies.filter((a) => a.kind === 'eos-free-run').map((a) => ({ start: a.offsets[0], length: a.count }));
      assert.deepStrictEqual(runs, py.long_runs);
      const specials = anomalies
        .filter((a) => a.kind === 'special-in-document')
        .map((a) => [String(a.segment), String(a.id), a.count, a.offsets]);
      assert.deepStrictEqual(
        specials,
        Object.entries(py.specials).flatMap(([seg, per]) => Object.entries(per).map(([id, o]) => [seg, id, o.count, o.first])),
      );
      // Each names its token as tokenizer.json spells it (read here as plain JSON, not through the loader).
      const added = new Map(
        (JSON.parse(fs.readFileSync(ds.tokenizerFile!, 'utf8')) as { added_tokens: { id: number; content: string }[] }).added_tokens.map(
          (t) => [t.id, t.content],
        ),
      );
      for (const a of anomalies.filter((x) => x.kind === 'special-in-document'))
        assert.ok(a.message.includes(`special token ${added.get(a.id!)} (id ${a.id})`), a.message);
      const looks = new Set(anomalies.filter((a) => a.kind === 'dtype-look').map((a) => a.segment));
      const unknown = anomalies.filter((a) => a.kind === 'unknown-ids').map((a) => [String(a.segment), a.count, a.offsets]);
      assert.deepStrictEqual(
        unknown,
        Object.entries(py.unknown)
          .filter(([seg]) => !looks.has(Number(seg)))
          .map(([seg, o]) => [seg, o.count, o.first]),
      );
      for (const seg of looks) assert.strictEqual(ix.records[seg]!.unknown.count, py.unknown[String(seg)].count);
      let progress: number[] = [];
      const dups = await ix.duplicates(store, { onProgress: (done, total) => (progress = [done, total]) });
      assert.strictEqual(dups.duplicates, py.duplicates.count);
      assert.strictEqual(progress[1], py.documents, 'the duplicate pass counts progress in documents, of all of them');
      assert.ok(progress[0] > 0 && progress[0] <= py.documents);
      assert.deepStrictEqual(
        dups.pairs.map((p) => [p.document, p.start, p.length, p.earlierDocument, p.earlierStart]),
        py.duplicates.pairs,
      );
      if (name === 'anomalies') {
        const planted = JSON.parse(fs.readFileSync(path.join(root, 'fixture.json'), 'utf8')).planted;
        assert.ok(
          runs.some((r) => r.start <= planted.removed_eos.removed[0] && r.start + r.length > planted.removed_eos.removed.at(-1)),
          'the glued run is found',
        );
        assert.deepStrictEqual(looks, new Set([9]), 'shard 9 looks like uint16 data');
        assert.strictEqual(py.duplicates.count >= 1, true);
        assert.ok(anomalies.every((a) => a.updates === undefined || a.updates[0] <= a.updates[1]));
        // Marks of the manifest table: one per shard numpy finds an anomaly in (every shard a run
        // spans, as the shard editor's banners), naming numpy's offsets.
        const segOf = (o: number) => ds.shards.findIndex((e) => o >= e.startToken && o < e.startToken + e.numTokens);
        const marks = anomalyMarksBySegment(anomalies);
        const want = new Map<number, { offsets: number[]; error: boolean }>();
        const add = (seg: number, offsets: number[], error: boolean) => {
          const w = want.get(seg) ?? { offsets: [], error: false };
          want.set(seg, { offsets: [...w.offsets, ...offsets], error: w.error || error });
        };
        for (const r of py.long_runs)
          for (let s = segOf(r.start); s <= segOf(r.start + r.length - 1); s++) add(s, [r.start, r.start + r.length - 1], false);
        assert.ok(
          py.long_runs.some((r) => segOf(r.start + r.length - 1) > segOf(r.start)),
          'the planted run spans shards',
        );
        for (const [seg, per] of Object.entries(py.specials)) for (const o of Object.values(per)) add(Number(seg), o.first, false);
        for (const [seg, o] of Object.entries(py.unknown)) add(Number(seg), looks.has(Number(seg)) ? o.first.slice(0, 1) : o.first, true);
        assert.deepStrictEqual(
          [...marks.keys()].sort((a, b) => a - b),
          [...want.keys()].sort((a, b) => a - b),
        );
        for (const [seg, w] of want) {
          const m = marks.get(seg)!;
          assert.strictEqual(m.severity, w.error ? 'error' : 'warning', `severity of shard ${seg}`);
          for (const o of w.offsets) assert.ok(m.text.includes(fmt(o)), `mark of shard ${seg} names offset ${fmt(o)}: ${m.text}`);
        }
        // Marks of the update view: the sequence holding the planted special token (numpy's offset).
        const o = py.specials[String(segOf(planted.special.offset))][String(planted.special.id)].first[0];
        assert.strictEqual(o, planted.special.offset);
        const { G, L } = ds.schedule;
        const k = Math.floor(o / G);
        const rowMarks = anomalyMarksForRows(anomalies, k * G, L, G / L);
        const row = Math.floor((o - k * G) / L);
        assert.ok(
          rowMarks.get(row)?.text.includes(`token ${fmt(o)} (position ${fmt(o - k * G - row * L)})`),
          'the planted token is marked',
        );
        const pyOffsets = [...want.values()].flatMap((w) => w.offsets);
        for (const [r, m] of rowMarks)
          assert.ok(
            pyOffsets.some((x) => x >= k * G + r * L && x < k * G + (r + 1) * L && m.text.includes(fmt(x))),
            `row ${r} holds a numpy offset`,
          );
      } else {
        assert.deepStrictEqual(anomalies, [], 'the sample has no anomaly');
      }
    });
  }

  it('page EOS facts and per-shard numbering (what the shard editor shows) equal numpy, without reading the shards', async () => {
    for (const root of [sampleDir(), path.join(fixtures, 'anomalies')]) {
      const store = new IndexStore(path.join(tmp, `store-pages-${path.basename(root)}`));
      const { ix } = await buildIndex(root, store);
      const out = python3Cached(
        [path.join(repoRoot(), 'scripts', 'index_reference.py'), root, '--page-tokens', String(PAGE_TOKENS)],
        [root],
      );
      const py = JSON.parse(out) as {
        pages: number[][][];
        numbering: { doc_base: number; head_start: number; tail_end: number; tail_known: boolean }[];
      };
      for (let s = 0; s < ix.segments.length; s++) {
        const st = ix.pageStats(s, PAGE_TOKENS)!;
        assert.deepStrictEqual(
          st.eosCount.map((c, i) => [c, st.firstEos[i], st.lastEos[i]]),
          py.pages[s],
          `pages of shard ${s}`,
        );
        const n = (await ix.segmentNumbering(s))!;
        assert.deepStrictEqual(
          n,
          {
            docBase: py.numbering[s].doc_base,
            headStart: py.numbering[s].head_start,
            tailEnd: py.numbering[s].tail_end,
            tailKnown: py.numbering[s].tail_known,
          },
          `numbering of shard ${s}`,
        );
      }
    }
  });

  it('DocumentIndex with the stream index attached: the same numbers and starts as numpy, instant for indexed shards', async () => {
    const root = path.join(fixtures, 'anomalies');
    const { ds, ix } = await buildIndex(root, new IndexStore(path.join(tmp, 'store-attach')));
    const offsets = offsetsFor(ds, 120, 7);
    const py = pyIndex(root, offsets);
    const di = new DocumentIndex(ds.stream, ds.settings.eosTokenId);
    let told = 0;
    di.onAttach(() => told++);
    di.attachStreamIndex(ix);
    assert.strictEqual(told, 1);
    assert.strictEqual(di.knownDocumentCount, py.documents);
    assert.ok(di.isReadyUpTo(ds.shards.length));
    for (let i = 0; i < offsets.length; i++) {
      assert.ok(di.isInstantAt(offsets[i]));
      assert.strictEqual(await di.documentNumberAt(offsets[i]), py.locate[i].document, `offset ${offsets[i]}`);
      assert.strictEqual(await di.documentStart(py.locate[i].document), py.locate[i].document_start);
    }
    await assert.rejects(di.documentStart(py.documents), /does not exist/);
  });

  it('a uint16 dataset gets the dtype look as a fault', async () => {
    const { ds, ix } = await buildIndex(path.join(fixtures, 'uint16'), new IndexStore(path.join(tmp, 'store-u16')));
    const a = ix.anomalies(ds.schedule);
    const look = a.filter((x) => x.kind === 'dtype-look');
    assert.deepStrictEqual(
      look.map((x) => x.severity),
      ['error'],
    );
    assert.match(look[0].message, /uint16 data read as uint32/);
    assert.deepStrictEqual(
      a.filter((x) => x.kind === 'unknown-ids'),
      [],
      'the look explains the unknown ids: one line',
    );
  });

  it('a shard rewritten with the same size (and its mtime put back) is stale: rebuilt, never trusted', async () => {
    const root = path.join(tmp, 'stale');
    fs.cpSync(sampleDir(), root, { recursive: true });
    const store = new IndexStore(path.join(tmp, 'store-stale'));
    const { ds } = await buildIndex(root, store);
    const victim = ds.shards[4];
    const before = fs.statSync(victim.path, { bigint: true });
    const bytes = fs.readFileSync(victim.path);
    const ids = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    const p = ids.indexOf(ds.settings.eosTokenId);
    ids[p] = 42; // one EOS fewer
    await new Promise((r) => setTimeout(r, 20));
    fs.writeFileSync(victim.path, bytes);
    const ns = before.mtimeNs;
    execFileSync('touch', ['-m', '-d', `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, '0')}`, victim.path]);
    const ds2 = await openDataset(root);
    const params = indexParamsFor(ds2, await loadTokenizer(ds2.tokenizerFile!));
    const stale = await openDatasetIndex(ds2, new IndexStore(store.dir), params);
    assert.strictEqual(stale.readyUpTo, 4, 'the rewritten shard has no valid entry');
    assert.strictEqual(stale.records[5]?.eosCount !== undefined, true, 'later shards keep theirs');
    const r = await indexShards(indexSegmentsOf(ds2), new IndexStore(store.dir), params, { jobs: 1 });
    assert.deepStrictEqual([r.built, r.reused], [1, ds2.shards.length - 1]);
    const fresh = await openDatasetIndex(ds2, new IndexStore(store.dir), params);
    assert.deepStrictEqual(
      fresh.records.map((x) => x!.eosCount),
      pyIndex(root).eos_per_shard,
    );
  });

  it("a damaged entry is one warning and rebuilt, never an answer: eosCount + 5, .docs cut to 7 bytes, another shard's .docs copied in", async () => {
    const cases: { name: string; damage(json: string, docs: string, donorDocs: string): void }[] = [
      {
        name: 'eosCount + 5',
        damage: (json) => {
          const text = fs.readFileSync(json, 'utf8');
          const m = /"eosCount":(\d+)/.exec(text)!;
          fs.writeFileSync(json, text.replace(m[0], `"eosCount":${Number(m[1]) + 5}`));
        },
      },
      { name: '.docs cut to 7 bytes', damage: (_json, docs) => fs.truncateSync(docs, 7) },
      {
        name: "another shard's .docs copied in (cut to this one's length)",
        damage: (_json, docs, donorDocs) => fs.writeFileSync(docs, fs.readFileSync(donorDocs).subarray(0, fs.statSync(docs).size)),
      },
    ];
    for (const c of cases) {
      const root = path.join(tmp, `damaged-${cases.indexOf(c)}`);
      fs.cpSync(sampleDir(), root, { recursive: true });
      const dir = path.join(tmp, `store-damaged-${cases.indexOf(c)}`);
      const { ds, ix, params } = await buildIndex(root, new IndexStore(dir));
      const py = pyIndex(root);
      const key = scanParamsKey(params);
      const baseOf = (i: number) =>
        path.join(dir, new IndexStore(dir).baseName(identityOfStats(fs.statSync(ds.shards[i].path, { bigint: true })), key));
      // The victim: a shard with documents inside; the donor: another with at least as many.
      const victim = ix.records.findIndex((r) => r!.innerDocCount > 1);
      const donor = ix.records.findIndex((r, i) => i !== victim && r!.innerDocCount >= ix.records[victim]!.innerDocCount);
      assert.ok(victim >= 0 && donor >= 0, c.name);
      c.damage(`${baseOf(victim)}.json`, `${baseOf(victim)}.docs`, `${baseOf(donor)}.docs`);
      const warnings: string[] = [];
      const store = new IndexStore(dir, { onWarning: (m) => warnings.push(m) });
      const opened = await openDatasetIndex(ds, store, params);
      if (c.name.startsWith("another shard's")) {
        // Same size: only the content checksum tells, where the hashes are read.
        const dups = await opened.duplicates(store);
        assert.strictEqual(dups.missingSegments, 1, `${c.name}: the foreign hashes are not compared`);
      } else assert.strictEqual(opened.readyUpTo, victim, `${c.name}: the damaged entry is not used`);
      assert.strictEqual(warnings.length, 1, `${c.name}: one warning, got ${JSON.stringify(warnings)}`);
      assert.ok(warnings[0].startsWith(`${ds.shards[victim].shard}: stream index entry ${baseOf(victim)}.`), `${c.name}: ${warnings[0]}`);
      const r = await indexShards(indexSegmentsOf(ds), new IndexStore(dir, { onWarning: (m) => warnings.push(m) }), params, { jobs: 1 });
      assert.deepStrictEqual([r.built, r.reused], [1, ds.shards.length - 1], `${c.name}: rebuilt, the others reused`);
      assert.strictEqual(warnings.length, 2, `${c.name}: the build warns once too`);
      const fresh = new IndexStore(dir, { onWarning: (m) => warnings.push(m) });
      const rebuilt = await openDatasetIndex(ds, fresh, params);
      assert.deepStrictEqual(
        rebuilt.records.map((x) => x!.eosCount),
        py.eos_per_shard,
        c.name,
      );
      assert.strictEqual(rebuilt.documentCount, py.documents, c.name);
      const dups = await rebuilt.duplicates(fresh);
      assert.deepStrictEqual([dups.duplicates, dups.missingSegments], [py.duplicates.count, 0], c.name);
      assert.strictEqual(warnings.length, 2, `${c.name}: nothing left to warn about`);
    }
    // The CLI: `index` names the damaged entry on stderr and rebuilds it; `locate` then equals numpy.
    const root = path.join(tmp, 'damaged-0');
    const cache = path.join(tmp, 'cache-damaged');
    assert.strictEqual(cli(['index', root], cache).code, 0);
    const ds = await openDataset(root);
    const key = scanParamsKey(indexParamsFor(ds, await loadTokenizer(ds.tokenizerFile!)));
    const base = new IndexStore('').baseName(identityOfStats(fs.statSync(ds.shards[1].path, { bigint: true })), key);
    fs.truncateSync(path.join(cache, 'token-shard-inspector', 'stream-index', `${base}.docs`), 7);
    const again = cli(['index', root], cache);
    assert.strictEqual(again.code, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`${ds.shards[1].shard.replace(/[.]/g, '\\.')}: stream index entry .*${base}\\.docs has 7 bytes`));
    assert.match(again.stdout, new RegExp(`1 built, ${ds.shards.length - 1} still valid`));
  });

  it('a dataset opened before a shard was touched reads the index rebuilt after it (no stale identities)', async () => {
    const root = path.join(tmp, 'touched');
    fs.cpSync(sampleDir(), root, { recursive: true });
    const store = new IndexStore(path.join(tmp, 'store-touched'));
    const { ds, params } = await buildIndex(root, store);
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(ds.shards[3].path, later, later);
    const r = await indexShards(indexSegmentsOf(ds), store, params, { jobs: 1 });
    assert.deepStrictEqual([r.built, r.reused, r.pruned], [1, ds.shards.length - 1, 1]);
    const ix = await openDatasetIndex(ds, store, params);
    const py = pyIndex(root);
    assert.strictEqual(ix.readyUpTo, ds.shards.length, 'every shard indexed');
    assert.strictEqual(ix.documentCount, py.documents);
    assert.deepStrictEqual(
      ix.records.map((x) => x!.eosCount),
      py.eos_per_shard,
    );
  });

  it("entries no file can use any more are pruned after builds that write (index and verify); live ones and other datasets' stay", async () => {
    const roots = ['prune-a', 'prune-b'].map((n) => path.join(tmp, n));
    for (const r of roots) fs.cpSync(sampleDir(), r, { recursive: true });
    const store = new IndexStore(path.join(tmp, 'store-prune'));
    const [a, b] = [await buildIndex(roots[0], store), await buildIndex(roots[1], store)];
    const n = a.ds.shards.length;
    const entries = () =>
      fs
        .readdirSync(store.dir)
        .filter((f) => /^[0-9a-f]{32}\.json$/.test(f))
        .map((f) => f.slice(0, 32))
        .sort();
    assert.strictEqual(entries().length, 2 * n, 'two copies: distinct files, distinct entries');
    const key = scanParamsKey(a.params);
    const baseOf = (file: string) => store.baseName(identityOfStats(fs.statSync(file, { bigint: true })), key);
    const rewrite = async (file: string) => {
      const old = baseOf(file);
      await new Promise((r) => setTimeout(r, 20));
      fs.writeFileSync(file, fs.readFileSync(file)); // same bytes, new identity (mtime, ctime)
      return old;
    };
    // a's shard 3 rewritten, b's shard 5 deleted, an entry of an older build (no file recorded),
    // leftovers of interrupted writes: old ones go, a fresh one stays (another writer may own it).
    const stale = await rewrite(a.ds.shards[3].path);
    const goneFile = b.ds.shards[5].path;
    const gone = baseOf(goneFile);
    fs.rmSync(goneFile);
    const legacy = '0'.repeat(32);
    const sample = JSON.parse(fs.readFileSync(path.join(store.dir, `${entries()[0]}.json`), 'utf8')) as Record<string, unknown>;
    delete sample.path;
    fs.writeFileSync(path.join(store.dir, `${legacy}.json`), JSON.stringify(sample));
    const old = Date.now() / 1000 - 2 * 3600;
    for (const f of ['.x.123.abcd.tmp', `${'f'.repeat(32)}.docs`, '.y.1.2.docs']) {
      fs.writeFileSync(path.join(store.dir, f), 'x');
      fs.utimesSync(path.join(store.dir, f), old, old);
    }
    fs.writeFileSync(path.join(store.dir, '.fresh.1.2.tmp'), 'x');
    const r = await indexShards(indexSegmentsOf(await openDataset(roots[0])), store, a.params, { jobs: 1 });
    assert.deepStrictEqual([r.built, r.reused, r.pruned], [1, n - 1, 3], 'the rewritten, the deleted and the legacy entry');
    const now = entries();
    for (const x of [stale, gone, legacy]) assert.ok(!now.includes(x), `${x} pruned`);
    assert.ok(!fs.existsSync(path.join(store.dir, `${stale}.docs`)), 'with its document hashes');
    assert.strictEqual(now.length, 2 * n - 1, "a's n entries and b's n - 1");
    assert.deepStrictEqual(
      fs.readdirSync(store.dir).filter((f) => !/^[0-9a-f]{32}\.(json|docs)$/.test(f)),
      ['.fresh.1.2.tmp'],
      'old leftovers deleted, the fresh one kept',
    );
    // b's other entries are still used: its index loads complete but for the deleted shard.
    const bi = await openDatasetIndex(await openDataset(roots[1]), new IndexStore(store.dir), b.params);
    assert.strictEqual(bi.indexedCount, n - 1);
    // Verify with the index prunes too.
    const stale2 = await rewrite(a.ds.shards[6].path);
    const ds = await openDataset(roots[0]);
    const v = await verifyShards(ds.shards, { jobs: 1, index: { store, params: a.params } });
    assert.strictEqual(v.indexed, n, 'verify scans every shard it hashes');
    assert.ok(!entries().includes(stale2), 'verify pruned the entry of the rewritten shard');
    assert.ok(entries().includes(baseOf(a.ds.shards[6].path)));
    assert.strictEqual(entries().length, 2 * n - 1);
  });

  it('hard links to one file are read once and share one entry', async () => {
    const root = path.join(tmp, 'links');
    fs.mkdirSync(path.join(root, 'shards'), { recursive: true });
    fs.cpSync(path.join(sampleDir(), 'tokenizer'), path.join(root, 'tokenizer'), { recursive: true });
    fs.copyFileSync(path.join(sampleDir(), 'manifest.json'), path.join(root, 'manifest.json'));
    const src = path.join(sampleDir(), 'shards', 'tokens_000000.u32');
    const n = fs.statSync(src).size / 4;
    fs.copyFileSync(src, path.join(root, 'shards', 'base.u32'));
    const lines: string[] = [];
    for (let i = 0; i < 6; i++) {
      const f = `shards/tokens_${String(i).padStart(6, '0')}.u32`;
      fs.linkSync(path.join(root, 'shards', 'base.u32'), path.join(root, f));
      lines.push(JSON.stringify({ shard: f, start_token: i * n, num_tokens: n }));
    }
    fs.writeFileSync(path.join(root, 'shard_manifest.jsonl'), lines.join('\n') + '\n');
    const store = new IndexStore(path.join(tmp, 'store-links'));
    const ds = await openDataset(root);
    const params = indexParamsFor(ds, await loadTokenizer(ds.tokenizerFile!));
    const r = await indexShards(indexSegmentsOf(ds), store, params, { jobs: 2 });
    assert.deepStrictEqual([r.built, r.shared, r.bytesRead], [1, 5, n * 4]);
    const ix = await openDatasetIndex(ds, store, params);
    const py = pyIndex(root, offsetsFor(ds, 40));
    assert.strictEqual(ix.documentCount, py.documents);
    const dups = await ix.duplicates(store);
    assert.strictEqual(dups.duplicates, py.duplicates.count);
    assert.deepStrictEqual(
      dups.pairs.map((p) => [p.document, p.start, p.length, p.earlierDocument, p.earlierStart]),
      py.duplicates.pairs,
    );
  });

  it('verify builds the index in the same read; a cached shard without an entry is read for the index only', async () => {
    const root = path.join(tmp, 'verify-index');
    fs.cpSync(sampleDir(), root, { recursive: true });
    const ds = await openDataset(root);
    const params = indexParamsFor(ds, await loadTokenizer(ds.tokenizerFile!));
    const store = new IndexStore(path.join(tmp, 'store-verify'));
    const cache = VerifyCache.inMemory();
    await verifyShards(ds.shards.slice(0, 3), { jobs: 2, cache });
    const rep = await verifyShards(ds.shards, { jobs: 2, cache, index: { store, params } });
    assert.strictEqual(rep.counts.ok, ds.shards.length);
    assert.strictEqual(rep.fromCache, 3);
    assert.strictEqual(rep.indexed, ds.shards.length);
    const ix = await openDatasetIndex(ds, store, params);
    assert.ok(ix.complete);
    assert.deepStrictEqual(
      ix.records.map((x) => x!.eosCount),
      pyIndex(root).eos_per_shard,
    );
  });

  it('the workers write the entries; an index folder that cannot be made is one sentence naming it, and verify still verifies', async () => {
    const root = path.join(tmp, 'verify-index-unwritable');
    fs.cpSync(sampleDir(), root, { recursive: true });
    const ds = await openDataset(root);
    const params = indexParamsFor(ds, await loadTokenizer(ds.tokenizerFile!));
    // A folder under a regular file cannot be made, even by root.
    const blocker = path.join(tmp, 'index-blocker');
    fs.writeFileSync(blocker, 'not a folder');
    const store = new IndexStore(path.join(blocker, 'stream-index'));
    const rep = await verifyShards(ds.shards, { jobs: 2, index: { store, params } });
    assert.strictEqual(rep.counts.ok, ds.shards.length);
    assert.strictEqual(rep.indexed, 0);
    assert.ok(rep.indexError?.startsWith(`cannot write the stream index in ${store.dir}: ENOTDIR`), rep.indexError);
    const ix = await indexShards(indexSegmentsOf(ds), store, params, { jobs: 2 });
    assert.strictEqual(ix.built, 0);
    assert.deepStrictEqual(
      ix.failed.map((f) => f.segment),
      ds.shards.map((_, i) => i),
    );
    for (const f of ix.failed) assert.ok(f.message.includes(`cannot write the stream index in ${store.dir}: ENOTDIR`), f.message);
    // The same worker code writes into a usable folder: entries equal numpy's EOS counts.
    const good = new IndexStore(path.join(tmp, 'store-worker-written'));
    const built = await indexShards(indexSegmentsOf(ds), good, params, { jobs: 2 });
    assert.strictEqual(built.built, ds.shards.length);
    const opened = await openDatasetIndex(ds, new IndexStore(good.dir), params);
    assert.deepStrictEqual(
      opened.records.map((x) => x!.eosCount),
      pyIndex(root).eos_per_shard,
    );
  });

  it('slices of any size give the same entries; a worker kept from a cancelled run is reused and verifies and indexes right', async () => {
    const root = path.join(tmp, 'verify-index-slices');
    fs.cpSync(sampleDir(), root, { recursive: true });
    const ds = await openDataset(root);
    const params = indexParamsFor(ds, await loadTokenizer(ds.tokenizerFile!));
    await closeIdleReadWorkers();
    // A cancelled run (verify only) leaves its one worker idle, with the abort flag set.
    const ac = new AbortController();
    const cancelled = await verifyShards(ds.shards, {
      jobs: 1,
      signal: ac.signal,
      chunkBytes: 65536,
      keepWorkersWarm: true,
      hooks: { onFirstChunk: (i) => (i === 2 ? ac.abort() : undefined) },
    });
    assert.strictEqual(cancelled.cancelled, true);
    // The next runs (same chunk size) take that worker: still one idle worker after both.
    const stores = [0, 1].map((i) => new IndexStore(path.join(tmp, `store-slices-${i}`)));
    const sums = sha256sum(ds.shards.map((e) => e.path));
    for (const [i, sliceBytes] of [4100, 65536].entries()) {
      const rep = await verifyShards(ds.shards, {
        jobs: 1,
        chunkBytes: 65536,
        sliceBytes,
        keepWorkersWarm: true,
        index: { store: stores[i], params },
      });
      assert.strictEqual(rep.cancelled, false);
      assert.strictEqual(rep.counts.ok, ds.shards.length);
      for (const r of rep.results) assert.strictEqual(r.actualSha256, sums.get(r.path));
      assert.strictEqual(rep.indexed, ds.shards.length);
    }
    assert.strictEqual(await closeIdleReadWorkers(), 1, 'one worker, reused by every run');
    const [a, b] = await Promise.all(stores.map((st) => openDatasetIndex(ds, new IndexStore(st.dir), params)));
    assert.deepStrictEqual(
      a.records.map((x) => x!.eosCount),
      pyIndex(root).eos_per_shard,
    );
    const strip = (r: (typeof a.records)[number]) => ({ ...r!, builtAt: 0 });
    assert.deepStrictEqual(a.records.map(strip), b.records.map(strip));
    for (let i = 0; i < a.records.length; i++)
      assert.deepStrictEqual(await stores[0].loadDocHashes(a.records[i]!), await stores[1].loadDocHashes(b.records[i]!));
  });

  it('verify of a corrupted copy names exactly the updates of that shard (text and --json)', () => {
    const root = path.join(tmp, 'corrupt');
    fs.cpSync(sampleDir(), root, { recursive: true });
    const victim = 4;
    const lines = fs
      .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const f = path.join(root, lines[victim].shard);
    const b = fs.readFileSync(f);
    b[1001] ^= 0x10;
    fs.writeFileSync(f, b);
    // The updates a shard feeds, computed in Python from the manifest and G (floor division, as the dataset card).
    const want = JSON.parse(
      execFileSync(
        'python3',
        [
          '-c',
          `
import json, sys
root = sys.argv[1]
meta = json.load(open(f"{root}/manifest.json"))
G = meta.get("global_tokens_per_update", 131072)
shards = sorted((json.loads(l) for l in open(f"{root}/shard_manifest.jsonl")), key=lambda e: e["start_token"])
stored = sum(e["num_tokens"] for e in shards)
U = (stored - 1) // G
e = shards[int(sys.argv[2])]
print(json.dumps([e["start_token"] // G, min(U - 1, (e["start_token"] + e["num_tokens"] - 1) // G)]))
`,
          root,
          String(victim),
        ],
        { encoding: 'utf8' },
      ),
    );
    const cacheHome = path.join(tmp, 'xdg-corrupt');
    const r = cli(['verify', root, '--json'], cacheHome);
    assert.strictEqual(r.code, 1);
    const j = JSON.parse(r.stdout);
    for (const res of j.results) assert.deepStrictEqual(res.updates, res.shard === lines[victim].shard ? want : null, res.shard);
    const text = cli(['verify', root, '--no-cache'], cacheHome);
    const n = want[1] - want[0] + 1;
    assert.match(
      text.stdout,
      new RegExp(`MISMATCH .*${lines[victim].shard.replace(/[.]/g, '\\.')}.*It feeds updates ${want[0]}–${want[1]} \\(${n} updates\\)`),
    );
  });

  it('CLI: locate equals numpy for random offsets (with and without the index); index --json reports the same numbers', () => {
    const root = path.join(fixtures, 'anomalies');
    const cacheHome = path.join(tmp, 'xdg');
    const offs = [0, 515_987, 1_200_000, 1_751_000, 2_359_296];
    const py = pyIndex(root, offs);
    const want = py.locate.map((l) => ({
      offset: l.offset,
      shard: l.shard,
      local_offset: l.local_offset,
      document: l.document,
      document_start: l.document_start,
      document_length: l.document_length,
    }));
    const strip = (o: Record<string, unknown>) => {
      const { update: _u, sequence: _s, position: _p, sample: _m, order: _o, reads: _r, ...rest } = o;
      return rest;
    };
    const noIndex = cli(['locate', root, String(offs[2]), '--json'], cacheHome);
    assert.strictEqual(noIndex.code, 0, noIndex.stderr);
    assert.deepStrictEqual(strip(JSON.parse(noIndex.stdout)), want[2]);
    // The hint names the command as invoked: `node …/cli.js index` here (`token-shards index` when installed).
    assert.match(noIndex.stderr, /(token-shards|cli\.js) index /);
    const built = cli(['index', root, '--json', '--jobs', '2'], cacheHome);
    // The fixture's unknown ids and dtype look are faults the index reports: exit 1 (the exit-code table).
    assert.strictEqual(built.code, 1, built.stderr);
    const j = JSON.parse(built.stdout);
    assert.deepStrictEqual(j.eos_per_shard, py.eos_per_shard);
    assert.strictEqual(j.documents, py.documents);
    assert.ok(j.index_bytes.json_per_entry <= 64 * 1024);
    assert.ok(j.index_dir.startsWith(cacheHome), 'the index lives in the cache folder, not the dataset');
    for (let i = 0; i < offs.length; i++) {
      const r = cli(['locate', root, String(offs[i]), '--json'], cacheHome);
      assert.strictEqual(r.code, 0, r.stderr);
      assert.strictEqual(r.stderr, '', 'indexed: no fallback note');
      const got = JSON.parse(r.stdout);
      assert.deepStrictEqual(strip(got), want[i]);
      assert.deepStrictEqual(Object.keys(got), [
        'offset',
        'shard',
        'local_offset',
        'update',
        'sequence',
        'position',
        'sample',
        'order',
        'reads',
        'document',
        'document_start',
        'document_length',
      ]);
    }
    assert.strictEqual(cli(['locate', root, String(py.tokens)], cacheHome).code, 2);
  });
});
