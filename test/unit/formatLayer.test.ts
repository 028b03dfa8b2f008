/**
 * The format layer's reading machinery (src/core/formats/, TokenStream layouts, the verify
 * worker's decoder), on files a numpy script writes from the sample's real tokens (real text, the
 * dolma2 tokenizer; GPT-2-range ids for uint16 are the sample's ids mod 50,257), judged by numpy
 * reading the same bytes:
 * - a Megatron `.bin`/`.idx` whose sequence pointers leave gaps between some sequences (legal:
 *   the reader follows pointers; the stream becomes extents, one per run of back-to-back
 *   sequences), int32: `read`, `readSync` and the
 *   decoder fed in random-size chunks give numpy's `bin[ptr:ptr+len]` concatenated, at seeded
 *   random ranges crossing extent edges; documents equal `document_indices`;
 * - uint16 headerless and `np.save` uint16 `.npy` files: widened ids equal numpy's at ranges that
 *   start and end on odd tokens; the dtype of the headerless file is guessed and the guess says why;
 * - the stream index built over each (the worker decodes the layout from the hashed bytes): its
 *   document count equals numpy's EOS count + 1;
 * - folder order is byte-wise (Python's `sorted`), not UTF-16 or locale order.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openPath } from '../../src/core/dataset';
import { LayoutDecoder } from '../../src/core/formats/decode';
import { byteOrder } from '../../src/core/formats/registry';
import { pathToFileURL } from 'url';
import { cliPath, repoRoot, runCli, sampleDir, sha256sum } from './fixtures';

/** The numpy script writing the files (from the sample's first shard) and printing what numpy reads back. */
const WRITER = `
import json, sys, struct, numpy as np
src, out = sys.argv[1], sys.argv[2]
ids = np.fromfile(src, dtype='<u4')[:120_000]
EOS = 100257
rng = np.random.default_rng(20261202)
# Megatron int32 with gaps: one sequence per document (split after each EOS), random filler bytes between.
ends = list(np.nonzero(ids == EOS)[0] + 1)
if ends[-1] != len(ids): ends.append(len(ids))
starts = [0] + ends[:-1]
lengths = np.array([e - s for s, e in zip(starts, ends)], dtype='<i4')
body, pointers, at = bytearray(), [], 0
for s, e in zip(starts, ends):
    gap = int(rng.integers(0, 3)) * 4 + int(rng.integers(0, 2)) * 2
    body += bytes(rng.integers(0, 256, gap, dtype=np.uint8)); at += gap
    pointers.append(at)
    chunk = ids[s:e].astype('<i4').tobytes(); body += chunk; at += len(chunk)
open(out + '/meg/gapped.bin', 'wb').write(bytes(body))
# Documents of 3 sequences each, so documents and sequences differ.
doc_idx = list(range(0, len(lengths), 3)) + [len(lengths)]
with open(out + '/meg/gapped.idx', 'wb') as f:
    f.write(b'MMIDIDX\\x00\\x00'); f.write(struct.pack('<Q', 1)); f.write(struct.pack('<B', 4))
    f.write(struct.pack('<Q', len(lengths))); f.write(struct.pack('<Q', len(doc_idx)))
    f.write(lengths.tobytes()); f.write(np.array(pointers, dtype='<i8').tobytes()); f.write(np.array(doc_idx, dtype='<i8').tobytes())
# uint16: GPT-2-range ids; an odd token count so the size is not a multiple of 4.
u16 = (ids[:99_999] % 50257).astype('<u2')
u16.tofile(out + '/u16/data.bin')
np.save(out + '/npy/data.npy', u16)
# What numpy reads back, by following the index and the headers.
binb = open(out + '/meg/gapped.bin', 'rb').read()
meg = np.concatenate([np.frombuffer(binb, dtype='<i4', count=int(l), offset=int(p)) for l, p in zip(lengths, pointers)])
tok_starts = np.concatenate([[0], np.cumsum(lengths)])
print(json.dumps({
  'megatron': meg.astype(np.int64).tolist(),
  'megatron_documents': [int(tok_starts[i]) for i in doc_idx[:-1]],
  'megatron_extents': 1 + sum(int(pointers[i] != pointers[i - 1] + 4 * int(lengths[i - 1])) for i in range(1, len(pointers))),
  'u16': np.fromfile(out + '/u16/data.bin', dtype='<u2').astype(np.int64).tolist(),
  'npy': np.load(out + '/npy/data.npy').astype(np.int64).tolist(),
  'eos': {'megatron': int((meg == EOS).sum()), 'u16': int((np.fromfile(out + '/u16/data.bin', dtype='<u2') == 50256).sum())},
}))
`;

interface Written {
  megatron: number[];
  megatron_documents: number[];
  megatron_extents: number;
  u16: number[];
  npy: number[];
  eos: { megatron: number; u16: number };
}

describe('format layer: layouts read like numpy (headers, uint16, int32, extents), in TokenStream, the decoder and the index', function () {
  this.timeout(0);
  let dir: string;
  let ref: Written;
  /** mulberry32 from scripts/lib (the PRNG the fixture scripts share): the same ranges every run. */
  let rng: (seed: number) => () => number;
  before(async () => {
    ({ mulberry32: rng } = (await import(pathToFileURL(path.join(repoRoot(), 'scripts', 'lib', 'mulberry32.mjs')).href)) as {
      mulberry32(seed: number): () => number;
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-format-layer-'));
    for (const d of ['meg', 'u16', 'npy']) fs.mkdirSync(path.join(dir, d));
    const shard = path.join(sampleDir(), 'shards', 'tokens_000000.u32');
    ref = JSON.parse(execFileSync('python3', ['-c', WRITER, shard, dir], { encoding: 'utf8', maxBuffer: 1 << 30 })) as Written;
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Seeded ranges over `n` tokens: both ends, odd starts and counts, and 40 random ones. */
  const rangesOf = (n: number, seed: number): [number, number][] => {
    const r = rng(seed);
    const out: [number, number][] = [
      [0, 1],
      [0, Math.min(n, 5000)],
      [n - 1, 1],
      [n - 777, 777],
      [1, n - 2],
    ];
    for (let i = 0; i < 40; i++) {
      const c = 1 + Math.floor(r() * 3000);
      out.push([Math.floor(r() * (n - c)), c]);
    }
    return out;
  };

  const cases = () => [
    { name: 'Megatron int32 with gaps between sequences', p: path.join(dir, 'meg'), ids: ref.megatron, format: 'megatron', dtype: 'int32' },
    { name: 'headerless uint16 (dtype guessed)', p: path.join(dir, 'u16', 'data.bin'), ids: ref.u16, format: 'raw', dtype: 'uint16' },
    { name: 'np.save uint16 .npy', p: path.join(dir, 'npy', 'data.npy'), ids: ref.npy, format: 'raw', dtype: 'uint16' },
  ];

  it('read and readSync equal numpy at ranges crossing extent edges and odd token boundaries', async () => {
    for (const [k, c] of cases().entries()) {
      const ds = (await openPath(c.p))!;
      assert.deepStrictEqual(
        { format: ds.format?.name, dtype: ds.format?.dtype, tokens: ds.storedTokens },
        { format: c.format, dtype: c.dtype, tokens: c.ids.length },
        c.name,
      );
      const diffs: string[] = [];
      for (const [s, n] of rangesOf(c.ids.length, 7 + k)) {
        const want = c.ids.slice(s, s + n);
        const a = Array.from(await ds.stream.read(s, n));
        const b = Array.from(ds.stream.readSync(s, n));
        if (a.join() !== want.join()) diffs.push(`${c.name}: read(${s}, ${n}) differs`);
        if (b.join() !== want.join()) diffs.push(`${c.name}: readSync(${s}, ${n}) differs`);
      }
      const all = Array.from(await ds.stream.read(0, c.ids.length));
      if (all.join() !== c.ids.join()) diffs.push(`${c.name}: the whole stream differs`);
      await ds.stream.close();
      assert.deepStrictEqual(diffs, []);
    }
  });

  it('the Megatron stream is made of one extent per run of back-to-back sequences, and documents are document_indices', async () => {
    const ds = (await openPath(path.join(dir, 'meg')))!;
    const layout = ds.format!.files[0].layout;
    assert.strictEqual(layout.extents?.numTokens.length, ref.megatron_extents);
    assert.deepStrictEqual(Array.from(ds.format!.documents!.starts), ref.megatron_documents);
  });

  it('the headerless file says its dtype was guessed and why', async () => {
    const ds = (await openPath(path.join(dir, 'u16', 'data.bin')))!;
    assert.strictEqual(ds.format?.dtypeSource, 'guessed');
    assert.ok(
      ds.format!.notes.some((n) => /dtype guessed uint16: data\.bin has 199,998 token bytes, not a multiple of 4/.test(n)),
      ds.format!.notes.join(' | '),
    );
  });

  it('LayoutDecoder fed the file in random-size chunks (1 byte to 64 KiB) gives numpy ids', async () => {
    for (const [k, c] of cases().entries()) {
      const ds = (await openPath(c.p))!;
      const f = ds.format!.files[0];
      const bytes = fs.readFileSync(f.path);
      const r = rng(100 + k);
      for (let round = 0; round < 3; round++) {
        const got: number[] = [];
        const dec = new LayoutDecoder(f.layout, f.numTokens, (ids) => {
          for (let i = 0; i < ids.length; i++) got.push(ids[i]);
        });
        for (let at = 0; at < bytes.length;) {
          const n = Math.min(bytes.length - at, 1 + Math.floor(r() ** 3 * 65536));
          // A copy at an odd offset of its own buffer: the decoder must not assume alignment.
          const buf = Buffer.alloc(n + 1);
          bytes.copy(buf, 1, at, at + n);
          dec.push(buf.subarray(1));
          at += n;
        }
        assert.ok(got.length === c.ids.length && got.every((v, i) => v === c.ids[i]), `${c.name}, round ${round}`);
      }
    }
  });

  it('the stream index over each layout counts numpy EOS + 1 documents (EOS-separated streams)', () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-format-index-'));
    try {
      const env = { ...process.env, XDG_CACHE_HOME: cache };
      const run = (args: string[]) => {
        return execFileSync(process.execPath, [cliPath(), ...args], { encoding: 'utf8', env });
      };
      for (const [p, eos, n] of [
        [path.join(dir, 'meg'), 100257, ref.eos.megatron],
        [path.join(dir, 'u16', 'data.bin'), 50256, ref.eos.u16],
      ] as const) {
        run(['index', p, '--eos', String(eos)]);
        const info = JSON.parse(run(['info', p, '--json', '--eos', String(eos)])) as {
          stream_index: { documents: number; complete: boolean };
        };
        assert.deepStrictEqual(
          { documents: info.stream_index.documents, complete: info.stream_index.complete },
          { documents: n + 1, complete: true },
          p,
        );
      }
    } finally {
      fs.rmSync(cache, { recursive: true, force: true });
    }
  });

  it("a folder's files are in byte-wise name order, as Python's sorted", () => {
    const names = ['b.bin', 'B.bin', 'a_1.bin', 'a-1.bin', '\u{1F40B}.bin', '\uFF5E.bin', 'é.bin'];
    const py = JSON.parse(
      execFileSync('python3', ['-c', 'import json,sys; print(json.dumps(sorted(json.loads(sys.argv[1]))))', JSON.stringify(names)], {
        encoding: 'utf8',
      }),
    ) as string[];
    assert.deepStrictEqual([...names].sort(byteOrder), py);
  });

  it('bad --dtype and --format values are usage errors naming the value', () => {
    const a = runCli(['info', path.join(dir, 'u16', 'data.bin'), '--dtype', 'float32']);
    assert.strictEqual(a.code, 2);
    assert.match(a.stderr, /^error: --dtype float32 is not a token dtype/);
    const b = runCli(['info', path.join(dir, 'u16', 'data.bin'), '--format', 'parquet']);
    assert.strictEqual(b.code, 2);
    assert.match(b.stderr, /^error: --format parquet is not a known format/);
  });
});

describe('manifest and verify --manifest on any format', function () {
  this.timeout(0);
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-format-manifest-'));
    // A Megatron pair of the sample's first 50,000 ids, written by the fixtures' writer port.
    execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { writeIndex } from ${JSON.stringify(pathToFileURL(path.join(repoRoot(), 'scripts', 'lib', 'format-writers', 'megatron.mjs')).href)};
         import * as fs from 'fs';
         const b = fs.readFileSync(process.argv[1]);
         const ids = new Uint32Array(b.buffer, b.byteOffset, 50000);
         fs.writeFileSync(process.argv[2] + '/p.bin', Buffer.from(Int32Array.from(ids).buffer));
         writeIndex(process.argv[2] + '/p.idx', 'int32', [20000, 30000], [0, 1, 2]);`,
        path.join(sampleDir(), 'shards', 'tokens_000000.u32'),
        dir,
      ],
      { stdio: 'inherit' },
    );
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('manifest lists each token file and sidecar with the sha256 sha256sum computes; verify passes, then names a changed byte', () => {
    const m = runCli(['manifest', dir]);
    assert.strictEqual(m.code, 0, m.stderr);
    const lines = m.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { shard: string; sha256: string; num_tokens: number; sidecars: { file: string; sha256: string }[] });
    const sums = sha256sum([path.join(dir, 'p.bin'), path.join(dir, 'p.idx')]);
    assert.deepStrictEqual(
      lines.map((l) => [l.shard, l.sha256, l.num_tokens, l.sidecars.map((s) => [s.file, s.sha256])]),
      [['p.bin', sums.get(path.join(dir, 'p.bin')), 50000, [['p.idx', sums.get(path.join(dir, 'p.idx'))]]]],
    );
    const file = path.join(os.tmpdir(), `tsi-manifest-${process.pid}.jsonl`);
    fs.writeFileSync(file, m.stdout);
    try {
      const ok = runCli(['verify', dir, '--manifest', file]);
      assert.strictEqual(ok.code, 0, ok.stdout + ok.stderr);
      const fd = fs.openSync(path.join(dir, 'p.bin'), 'r+');
      fs.writeSync(fd, Buffer.from([0x55]), 0, 1, 123_457);
      fs.closeSync(fd);
      const bad = runCli(['verify', dir, '--manifest', file, '--json']);
      assert.strictEqual(bad.code, 1, bad.stderr);
      const r = JSON.parse(bad.stdout) as { all_ok: boolean; results: { file: string; status: string }[] };
      assert.deepStrictEqual(
        r.results.map((x) => [x.file, x.status]),
        [
          ['p.bin', 'mismatch'],
          ['p.idx', 'ok'],
        ],
      );
      const none = runCli(['verify', dir]);
      assert.strictEqual(none.code, 2);
      assert.match(none.stderr, /carries no hashes: write them once with `token-shards manifest/);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  it("a files.jsonl of a whole Megatron folder verifies one unit opened alone (its .idx): that unit's rows only, digests from sha256sum", () => {
    const multi = path.join(repoRoot(), 'format-fixtures', 'dolma2', 'megatron-multi');
    execFileSync(
      process.execPath,
      [path.join(repoRoot(), 'scripts', 'make-format-fixtures.mjs'), '--quiet', '--out', path.join(repoRoot(), 'format-fixtures')],
      {
        stdio: 'inherit',
      },
    );
    const folder = path.join(dir, 'multi');
    fs.cpSync(multi, folder, { recursive: true });
    const m = runCli(['manifest', folder]);
    assert.strictEqual(m.code, 0, m.stderr);
    fs.writeFileSync(path.join(folder, 'files.jsonl'), m.stdout);
    const bins = fs
      .readdirSync(folder)
      .filter((f) => f.endsWith('.bin'))
      .sort();
    assert.ok(bins.length > 1, 'a folder of several units');
    const unit = bins[1].replace(/\.bin$/, '');
    const sums = sha256sum([path.join(folder, `${unit}.bin`), path.join(folder, `${unit}.idx`)]);
    type Verified = { all_ok: boolean; results: { file: string; path: string; status: string; digests: { actual?: string }[] }[] };
    const ok = runCli(['verify', path.join(folder, `${unit}.idx`), '--json']);
    assert.strictEqual(ok.code, 0, ok.stdout + ok.stderr);
    const r = JSON.parse(ok.stdout) as Verified;
    assert.deepStrictEqual(
      r.results.map((x) => [path.basename(x.path), x.status, x.digests[0].actual]),
      [`${unit}.bin`, `${unit}.idx`].map((f) => [f, 'ok', sums.get(path.join(folder, f))]),
    );
    // A changed byte of that unit is found; a changed byte of another unit is not this unit's.
    const fd = fs.openSync(path.join(folder, bins[0]), 'r+');
    fs.writeSync(fd, Buffer.from([0x55]), 0, 1, 101);
    fs.closeSync(fd);
    assert.strictEqual(runCli(['verify', path.join(folder, `${unit}.idx`)]).code, 0);
    const fd2 = fs.openSync(path.join(folder, `${unit}.bin`), 'r+');
    fs.writeSync(fd2, Buffer.from([0x55]), 0, 1, 101);
    fs.closeSync(fd2);
    const bad = runCli(['verify', path.join(folder, `${unit}.idx`), '--json']);
    assert.strictEqual(bad.code, 1, bad.stderr);
    assert.deepStrictEqual(
      (JSON.parse(bad.stdout) as Verified).results.map((x) => [path.basename(x.path), x.status]),
      [
        [`${unit}.bin`, 'mismatch'],
        [`${unit}.idx`, 'ok'],
      ],
    );
    // A row naming a file that is not in the folder at all is still an error naming the line.
    fs.appendFileSync(path.join(folder, 'files.jsonl'), JSON.stringify({ shard: 'gone.bin', sha256: '0'.repeat(64) }) + '\n');
    const gone = runCli(['verify', path.join(folder, `${unit}.idx`)]);
    assert.strictEqual(gone.code, 1);
    assert.match(gone.stderr, /files\.jsonl line \d+: gone\.bin is not a file of this stream/);
  });
});
