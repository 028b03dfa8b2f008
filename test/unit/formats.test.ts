/**
 * The field's token formats (Megatron `.bin`/`.idx`, llm.c `.bin`, nanoGPT and other headerless
 * files, `.npy`) opened through the product's CLI and judged by the independent numpy reader
 * `scripts/reference_formats.py` (written from docs/formats.md, not from the product's code), on
 * the datasets `scripts/make-format-fixtures.mjs` writes exactly as each format's own writer lays
 * them out, from real text and real tokenizers (dolma2; GPT-2 ids for uint16):
 *
 * - `info --json`: "format", "dtype", "files", "stored_tokens", "documents" (the index's count, or
 *   null where only EOS tells), and the tokenizer found in a parent folder;
 * - `tokens --json`: the whole stream, then ranges at the first and last token, across every file
 *   edge and at seeded random offsets, id for id;
 * - `locate --json`: "document", "document_start", "document_length" at document starts, ends,
 *   EOS tokens, file edges and random offsets;
 * - `count --json`: per-update counts equal the byte-level reference (scripts/reference_search.py
 *   over the reference reader's ids), text terms with the dolma2 tokenizer, id runs everywhere;
 * - `--format` / `--dtype` forcing; the `.npy` writer equals `np.save` byte for byte;
 * - bad input (wrong magic, version or dtype code, truncated header, `.idx` pointers or lengths
 *   past the end of `.bin`, an llm.c count past the end): exit 1, one line naming the file and the
 *   byte, nothing written (sha256 of every file of the folder before and after).
 *
 * Skipped, saying so in each title, only when python3 with numpy is missing.
 */
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pipeline } from 'stream/promises';
import { pathToFileURL } from 'url';
import * as zlib from 'zlib';
import { readLossMask } from '../../src/core/formats/lossMask';
import { openFormat } from '../../src/core/formats/registry';
import { runCliInProcess } from './cliInProcess';
import { cliPath, repoRoot, runCli, sampleDir, sha256sum } from './fixtures';
import { python3Cached } from './pyref';

const REPO = repoRoot();
const FIXTURES = path.join(REPO, 'format-fixtures');
const SKIP_REASON = ' — skipped: python3 with numpy is not available';

/** One dataset of fixtures.json (scripts/make-format-fixtures.mjs, `FixtureEntry`). */
interface FixtureEntry {
  name: string;
  format: string;
  dtype: string;
  path: string;
  files: number;
  documents: number | null;
  tokenizer: 'dolma2' | 'gpt2';
  tokenizer_file: string | null;
  eos: number;
  vocab_size: number;
}

/** One damaged copy of fixtures.json (`BadFixtureEntry`). */
interface BadFixtureEntry {
  name: string;
  format: string;
  path: string;
  file: string;
  bytes: number[];
  fault: string;
  from: string;
  /** CLI options the case needs (e.g. `--format llm.c`: a file without its magic is otherwise a headerless file) */
  args?: string[];
}

/** fixtures.json (the fields these tests read). */
interface FixturesJson {
  fixtures: FixtureEntry[];
  bad: BadFixtureEntry[];
  corpora: Record<'dolma2' | 'gpt2', { documents: { title: string; source: string; file: string; tokens: number }[] }>;
}

/** The fields of `token-shards info --json` these tests read. */
interface InfoJson {
  format: string;
  dtype: string;
  /** How many files form the stream. */
  files: number;
  /** The files in stream order. */
  stream_files: { path: string; stored_as: string | null; header_bytes: number; tokens: number }[];
  stored_tokens: number;
  documents: number | null;
  tokenizer: string | null;
}

/** What `scripts/reference_formats.py` prints. */
interface Reference {
  format: string;
  dtype: string;
  files: { path: string; header_bytes: number; tokens: number }[];
  stored_tokens: number;
  documents: number | null;
  ranges: number[][];
  locate: { offset: number; document: number; document_start: number; document_length: number }[];
  document_table?: [number, number][];
}

const hasNumpy = spawnSync('python3', ['-c', 'import numpy, regex'], { stdio: 'ignore' }).status === 0;

/** Writes (or finds up to date) the fixtures, with the bad copies; returns fixtures.json. */
function loadFixtures(): FixturesJson {
  execFileSync(process.execPath, [path.join(REPO, 'scripts', 'make-format-fixtures.mjs'), '--bad', '--quiet', '--out', FIXTURES], {
    stdio: 'inherit',
  });
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fixtures.json'), 'utf8')) as FixturesJson;
}

/**
 * What a reference run on `p` reads: the folder itself, or the folder a file lies in (the readers
 * open sidecars next to the file: `.idx`, `.csv.gz`, `.ds.index`, `index.json`).
 */
function readsAround(p: string): string {
  return fs.statSync(p).isDirectory() ? p : path.dirname(p);
}

/** Runs the reference reader on `p` (absolute) as `format`, through the reference cache. */
function reference(
  p: string,
  format: string,
  o: { dtype?: string; eos?: number; ranges?: [number, number][]; locate?: number[]; documents?: boolean } = {},
): Reference {
  const args = [path.join(REPO, 'scripts', 'reference_formats.py'), p, '--format', format];
  if (o.dtype) args.push('--dtype', o.dtype);
  if (o.eos !== undefined) args.push('--eos', String(o.eos));
  if (o.ranges) args.push('--ranges', JSON.stringify(o.ranges));
  if (o.locate) args.push('--locate', JSON.stringify(o.locate));
  if (o.documents) args.push('--documents');
  return JSON.parse(python3Cached(args, [readsAround(p)])) as Reference;
}

/**
 * Per-update counts of `terms` from the byte-level search reference (scripts/reference_search.py)
 * over the reference reader's ids of `p` read as `format`: `{"updates", "counts": {"<update>": [...]}}`.
 */
function referenceCounts(
  p: string,
  format: string,
  terms: string[],
  o: { flags: string[]; G: number; eos: number; dtype?: string; tokArgs: string[] },
): { updates: number; counts: Record<string, number[]> } {
  const args = [path.join(REPO, 'scripts', 'reference_search.py'), p, '--format', format, ...(o.dtype ? ['--dtype', o.dtype] : [])];
  args.push('--terms', JSON.stringify(terms), ...o.flags, '--G', String(o.G), '--eos', String(o.eos), '--mode', 'counts', ...o.tokArgs);
  const tokenizer = o.tokArgs.indexOf('--tokenizer');
  const inputs = [readsAround(p), ...(tokenizer >= 0 ? [o.tokArgs[tokenizer + 1]] : [])];
  return JSON.parse(python3Cached(args, inputs)) as {
    updates: number;
    counts: Record<string, number[]>;
  };
}

/**
 * Runs the CLI, asserting exit 0, and parses its JSON output: `info` as a process (`dist/cli.js`),
 * every other command in-process (the same program; starting Node hundreds of times would cost minutes).
 */
async function cliJson<T>(args: string[]): Promise<T> {
  const r = args[0] === 'info' ? runCli(args) : await runCliInProcess(args);
  assert.strictEqual(r.code, 0, `token-shards ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout) as T;
}

/** "offset X: expected id A, got B" for the first `limit` differences of two id lists starting at `start`. */
function idDiffs(start: number, expected: number[], got: number[], limit = 5): string[] {
  const out: string[] = [];
  if (expected.length !== got.length) out.push(`at ${start}: expected ${expected.length} ids, got ${got.length}`);
  for (let i = 0; i < Math.min(expected.length, got.length) && out.length < limit; i++) {
    if (expected[i] !== got[i]) out.push(`offset ${start + i}: expected id ${expected[i]}, got ${got[i]}`);
  }
  return out;
}

/** Global token offset where each file of the stream begins (the reference's file list). */
function fileStarts(ref: Reference): number[] {
  const out: number[] = [];
  let at = 0;
  for (const f of ref.files) {
    out.push(at);
    at += f.tokens;
  }
  return out;
}

/** `--eos` for GPT-2 data (the CLI's default is dolma2's). */
const eosArgs = (fx: FixtureEntry) => ['--eos', String(fx.eos)];

describe('token formats: the CLI reads every format like the numpy reference (scripts/reference_formats.py)', function () {
  this.timeout(0);
  if (!hasNumpy) {
    it('every format test' + SKIP_REASON, function () {
      this.skip();
    });
    return;
  }
  const { fixtures, bad, corpora } = loadFixtures();
  /** mulberry32 from scripts/lib (the PRNG the fixture scripts share). */
  let mulberry32: (seed: number) => () => number;
  before(async () => {
    ({ mulberry32 } = (await import(pathToFileURL(path.join(REPO, 'scripts', 'lib', 'mulberry32.mjs')).href)) as {
      mulberry32(seed: number): () => number;
    });
  });

  fixtures.forEach((fx, index) => {
    describe(`${fx.name} (${fx.format}, ${fx.dtype}, ${fx.tokenizer})`, () => {
      const abs = path.join(FIXTURES, fx.path);
      // A headerless file does not say its dtype: the reference takes the writer's.
      const headerless = fx.format === 'raw' && !fx.path.endsWith('.npy');
      const refDtype = headerless ? fx.dtype : undefined;
      let ref: Reference;
      let all: number[];
      /** Random offsets, seeded per fixture: the same whichever tests run. */
      let rand: () => number;
      before(() => {
        rand = mulberry32(20261202 + index);
        const first = reference(abs, fx.format, { dtype: refDtype, eos: fx.eos, documents: true });
        all = reference(abs, fx.format, { dtype: refDtype, eos: fx.eos, ranges: [[0, first.stored_tokens]] }).ranges[0];
        ref = first;
      });

      it('the reference agrees with what the writer says it wrote (format, dtype, files, documents)', () => {
        assert.deepStrictEqual(
          { format: ref.format, dtype: ref.dtype, files: ref.files.length, documents: ref.documents },
          { format: fx.format, dtype: fx.dtype, files: fx.files, documents: fx.documents },
        );
      });

      it('info --json: format, dtype, files (path, header bytes, tokens), stored_tokens, documents equal the reference; the tokenizer is found', async () => {
        const info = await cliJson<InfoJson>(['info', abs, '--json', ...eosArgs(fx)]);
        assert.deepStrictEqual(
          {
            format: info.format,
            dtype: info.dtype,
            files: info.files,
            // A compressed chunk's tokens are read from a decompressed copy; the reference names the chunk the folder holds.
            stream_files: info.stream_files.map((f) => ({
              path: path.resolve(f.stored_as ?? f.path),
              header_bytes: f.header_bytes,
              tokens: f.tokens,
            })),
            stored_tokens: info.stored_tokens,
            documents: info.documents,
          },
          {
            format: ref.format,
            dtype: ref.dtype,
            files: ref.files.length,
            stream_files: ref.files.map((f) => ({ path: path.resolve(f.path), header_bytes: f.header_bytes, tokens: f.tokens })),
            stored_tokens: ref.stored_tokens,
            documents: ref.documents,
          },
          `info --json of ${fx.path} differs from the reference`,
        );
        if (fx.tokenizer_file)
          assert.strictEqual(info.tokenizer, path.join(FIXTURES, fx.tokenizer_file), 'tokenizer.json of a parent folder');
      });

      it('tokens --json: the whole stream, then first, last, every file edge and 8 seeded random ranges, id for id', async () => {
        const n = ref.stored_tokens;
        const whole = await cliJson<{ ids: number[] }>(['tokens', abs, '--start', '0', '--count', String(n), '--json']);
        const diffs = idDiffs(0, all, whole.ids);
        const ranges: [number, number][] = [
          [0, Math.min(64, n)],
          [Math.max(0, n - 64), Math.min(64, n)],
        ];
        for (const s of fileStarts(ref).slice(1)) ranges.push([s - 33, 66]);
        for (let i = 0; i < 8; i++) {
          const count = 1 + Math.floor(rand() * 700);
          ranges.push([Math.floor(rand() * (n - count)), count]);
        }
        for (const [s, c] of ranges) {
          const got = (await cliJson<{ ids: number[] }>(['tokens', abs, '--start', String(s), '--count', String(c), '--json'])).ids;
          diffs.push(...idDiffs(s, all.slice(s, s + c), got));
        }
        assert.deepStrictEqual(diffs, [], `${fx.name}: ids differ from the reference`);
      });

      it('locate --json: document, document_start, document_length at starts, ends, EOS, file edges and random offsets', async () => {
        const table = ref.document_table!;
        const nonEmpty = table.filter(([, len]) => len > 0);
        const offsets = new Set<number>([0, ref.stored_tokens - 1, ...fileStarts(ref).slice(1)]);
        for (const [s, len] of [nonEmpty[1], nonEmpty[Math.floor(nonEmpty.length / 2)], nonEmpty[nonEmpty.length - 1]]) {
          offsets.add(s);
          offsets.add(s + len - 1);
        }
        const eosAt = all.indexOf(fx.eos, 1);
        if (eosAt >= 0) offsets.add(eosAt);
        for (let i = 0; i < 3; i++) offsets.add(Math.floor(rand() * ref.stored_tokens));
        const list = [...offsets].sort((a, b) => a - b);
        const want = reference(abs, fx.format, { dtype: refDtype, eos: fx.eos, locate: list }).locate;
        const diffs: string[] = [];
        for (const w of want) {
          const got = await cliJson<Record<string, unknown>>(['locate', abs, String(w.offset), '--json', ...eosArgs(fx)]);
          for (const k of ['document', 'document_start', 'document_length'] as const) {
            if (got[k] !== w[k]) diffs.push(`offset ${w.offset}: expected ${k} ${w[k]}, got ${String(got[k])}`);
          }
        }
        assert.deepStrictEqual(diffs, [], `${fx.name}: locate differs from the reference`);
      });

      it('count --json: per-update counts equal the byte-level reference (text terms with a tokenizer, id runs always)', async () => {
        const G = 4096;
        const sched = ['--tokens-per-update', String(G), '--sequence-length', '1024'];
        // Id runs taken from the data itself: a bigram of the first document, the EOS id, a lone id.
        const idTerms = [`${all[1]},${all[2]}`, String(fx.eos), String(all[Math.floor(all.length / 2)])];
        const runs: { terms: string[]; flags: string[]; tokArgs: string[] }[] = [{ terms: idTerms, flags: ['--ids'], tokArgs: [] }];
        if (fx.tokenizer_file) {
          const tok = path.join(FIXTURES, fx.tokenizer_file);
          runs.push({ terms: ['whale', 'the', 'United States', 'Congress'], flags: ['--word'], tokArgs: ['--tokenizer', tok] });
        }
        for (const r of runs) {
          const got = await cliJson<{ updates: number; buckets: { first_update: number; counts: number[] }[] }>([
            'count',
            abs,
            ...r.terms,
            ...r.flags,
            '--per',
            '1',
            '--json',
            ...sched,
            ...eosArgs(fx),
            ...r.tokArgs,
          ]);
          const want = referenceCounts(abs, fx.format, r.terms, { flags: r.flags, G, eos: fx.eos, dtype: refDtype, tokArgs: r.tokArgs });
          const perUpdate: Record<string, number[]> = {};
          for (const b of got.buckets) if (b.counts.some((c) => c > 0)) perUpdate[String(b.first_update)] = b.counts;
          assert.strictEqual(got.updates, want.updates, `${fx.name}: updates`);
          assert.deepStrictEqual(perUpdate, want.counts, `${fx.name}: counts of ${JSON.stringify(r.terms)} ${r.flags.join(' ')}`);
        }
      });
    });
  });

  describe('--format and --dtype force the reading', () => {
    const byName = (n: string) => {
      const f = fixtures.find((x) => x.name === n);
      if (!f) throw new Error(`fixtures.json has no ${n}`);
      return f;
    };

    it('--format raw --dtype uint16 reads an llm.c file whole, its 1,024-byte header as 512 ids', async () => {
      const fx = byName('llmc-gpt2');
      const file = path.join(FIXTURES, fx.path, fs.readdirSync(path.join(FIXTURES, fx.path)).sort()[0]);
      const ref = reference(file, 'raw', { dtype: 'uint16', ranges: [[0, 600]] });
      const force = ['--format', 'raw', '--dtype', 'uint16'];
      const info = await cliJson<Record<string, unknown>>(['info', file, '--json', ...force]);
      assert.deepStrictEqual(
        { format: info.format, dtype: info.dtype, stored_tokens: info.stored_tokens },
        { format: 'raw', dtype: 'uint16', stored_tokens: ref.stored_tokens },
      );
      const got = (await cliJson<{ ids: number[] }>(['tokens', file, '--start', '0', '--count', '600', '--json', ...force])).ids;
      assert.deepStrictEqual(idDiffs(0, ref.ranges[0], got), []);
    });

    it('--dtype uint16 reads a headerless uint32 file as twice as many uint16 ids', async () => {
      const fx = byName('headerless-uint32');
      const file = path.join(FIXTURES, fx.path);
      const ref = reference(file, 'raw', { dtype: 'uint16', ranges: [[1000, 300]] });
      // info exits 1 when the forced dtype makes the ids look wrong (an error-level problem it reports); its JSON still counts.
      const r = runCli(['info', file, '--json', '--dtype', 'uint16']);
      assert.ok(r.code === 0 || r.code === 1, `info --dtype uint16 exited ${r.code}: ${r.stderr.trim()}`);
      const info = JSON.parse(r.stdout) as InfoJson;
      assert.deepStrictEqual(
        { dtype: info.dtype, stored_tokens: info.stored_tokens },
        { dtype: 'uint16', stored_tokens: ref.stored_tokens },
      );
      const got = (await cliJson<{ ids: number[] }>(['tokens', file, '--start', '1000', '--count', '300', '--json', '--dtype', 'uint16']))
        .ids;
      assert.deepStrictEqual(idDiffs(1000, ref.ranges[0], got), []);
    });

    it('a Megatron prefix opens from its .bin and from its .idx as from its folder', async () => {
      const fx = byName('megatron-int32-eod');
      const dir = path.join(FIXTURES, fx.path);
      const ref = reference(dir, 'megatron', { ranges: [[0, 200]] });
      for (const f of ['corpus_text_document.bin', 'corpus_text_document.idx']) {
        const info = await cliJson<Record<string, unknown>>(['info', path.join(dir, f), '--json']);
        assert.deepStrictEqual(
          { format: info.format, stored_tokens: info.stored_tokens, documents: info.documents },
          { format: 'megatron', stored_tokens: ref.stored_tokens, documents: ref.documents },
          f,
        );
        const got = (await cliJson<{ ids: number[] }>(['tokens', path.join(dir, f), '--start', '0', '--count', '200', '--json'])).ids;
        assert.deepStrictEqual(idDiffs(0, ref.ranges[0], got), [], f);
      }
    });

    it("today's layout still opens as token-stream (uint32, documents only from EOS)", async () => {
      const root = sampleDir();
      const ref = reference(root, 'token-stream');
      const info = await cliJson<Record<string, unknown>>(['info', root, '--json']);
      assert.deepStrictEqual(
        { format: info.format, dtype: info.dtype, stored_tokens: info.stored_tokens, documents: info.documents },
        { format: 'token-stream', dtype: 'uint32', stored_tokens: ref.stored_tokens, documents: null },
      );
    });

    it('the rebuilt GPT-2 tokenizer.json encodes the corpus exactly as gpt-tokenizer r50k_base (GPT-2 BPE)', async () => {
      const gen = (await import(pathToFileURL(path.join(REPO, 'scripts', 'make-sample.mjs')).href)) as {
        sourceText(source: string, file: string): string;
      };
      const r50k = (await import('gpt-tokenizer/encoding/r50k_base')) as { encode(text: string): number[] };
      const { Tokenizer } = await import('@huggingface/tokenizers');
      const gpt2 = fixtures.find((f) => f.tokenizer === 'gpt2' && f.tokenizer_file);
      assert.ok(gpt2, 'fixtures.json has GPT-2 data with a tokenizer.json');
      const tok = new Tokenizer(JSON.parse(fs.readFileSync(path.join(FIXTURES, gpt2.tokenizer_file!), 'utf8')) as object, {});
      const docs = corpora.gpt2.documents;
      const diffs: string[] = [];
      for (const d of docs.slice(0, 20)) {
        const text = gen.sourceText(d.source, d.file);
        const want = r50k.encode(text);
        diffs.push(...idDiffs(0, want, tok.encode(text).ids, 2).map((x) => `${d.file}: ${x}`));
        if (want.length !== d.tokens) diffs.push(`${d.file}: fixtures.json says ${d.tokens} tokens, r50k_base gives ${want.length}`);
      }
      assert.deepStrictEqual(diffs, []);
    });

    it('the .npy writer equals np.save byte for byte', () => {
      const fx = byName('npy-uint32');
      const file = path.join(FIXTURES, fx.path);
      const same = execFileSync(
        'python3',
        [
          '-c',
          'import io, sys, numpy as np\nb = io.BytesIO(); np.save(b, np.load(sys.argv[1]))\nprint(b.getvalue() == open(sys.argv[1], "rb").read())',
          file,
        ],
        { encoding: 'utf8' },
      ).trim();
      assert.strictEqual(same, 'True');
    });
  });

  describe('without any tokenizer', () => {
    let tmp: string;
    before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-formats-'))));
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it('a GPT-2 nanoGPT train.bin alone: tokens read and count --ids runs (ids need no tokenizer)', async () => {
      const fx = fixtures.find((f) => f.name === 'nanogpt-train-file');
      assert.ok(fx, 'fixtures.json has nanogpt-train-file');
      const file = path.join(tmp, 'train.bin');
      fs.copyFileSync(path.join(FIXTURES, fx.path), file);
      const ref = reference(file, 'raw', { dtype: 'uint16', ranges: [[0, 100]] });
      const got = (await cliJson<{ ids: number[] }>(['tokens', file, '--start', '0', '--count', '100', '--json', ...eosArgs(fx)])).ids;
      assert.deepStrictEqual(idDiffs(0, ref.ranges[0], got), []);
      const terms = [`${got[1]},${got[2]}`, String(fx.eos)];
      const sched = ['--tokens-per-update', '4096', '--sequence-length', '1024'];
      const count = await cliJson<{ totals: number[] }>(['count', file, ...terms, '--ids', '--json', ...sched, ...eosArgs(fx)]);
      const want = referenceCounts(file, 'raw', terms, { flags: ['--ids'], G: 4096, eos: fx.eos, dtype: 'uint16', tokArgs: [] });
      const totals = terms.map((_, i) => Object.values(want.counts).reduce((sum, c) => sum + c[i], 0));
      assert.deepStrictEqual(count.totals, totals);
    });
  });

  describe('bad input: exit 1, one line naming the file and the byte, nothing written', () => {
    for (const b of bad) {
      it(`${b.name}: ${b.fault}`, () => {
        const target = path.join(FIXTURES, b.path);
        const dir = fs.statSync(target).isDirectory() ? target : path.dirname(target);
        const before = sha256sum(fs.readdirSync(dir).map((f) => path.join(dir, f)));
        for (const args of [
          ['info', target, '--json', ...(b.args ?? [])],
          ['tokens', target, '--start', '0', '--count', '10', '--json', ...(b.args ?? [])],
        ]) {
          const r = runCli(args);
          const what = `token-shards ${args[0]} on ${b.name}`;
          assert.strictEqual(r.code, 1, `${what}: exit ${r.code}, expected 1 (stderr: ${r.stderr.trim()})`);
          const lines = r.stderr.trim().split('\n');
          assert.strictEqual(lines.length, 1, `${what}: ${lines.length} lines on stderr, expected one:\n${r.stderr}`);
          assert.ok(lines[0].includes(b.file), `${what}: "${lines[0]}" does not name ${b.file}`);
          const numbers = b.bytes.flatMap((x) => [String(x), x.toLocaleString('en-US')]);
          assert.ok(
            numbers.some((s) => new RegExp(`(^|[^0-9,])${s}([^0-9,]|$)`).test(lines[0])),
            `${what}: "${lines[0]}" names none of the bytes ${b.bytes.join(', ')}`,
          );
        }
        const after = sha256sum(fs.readdirSync(dir).map((f) => path.join(dir, f)));
        assert.deepStrictEqual([...after], [...before], `${b.name}: files changed or appeared in ${dir}`);
      });
    }
  });
});

/** Runs a Python snippet with `scripts/reference_formats/` importable (`import reference_formats_<name>`); returns its JSON output. */
function pyReference<T>(code: string, ...args: string[]): T {
  const prelude =
    'import importlib.util, json, os, sys\n' +
    `HERE = ${JSON.stringify(path.join(REPO, 'scripts', 'reference_formats'))}\n` +
    'def load(n):\n' +
    '    spec = importlib.util.spec_from_file_location("reference_formats_" + n, os.path.join(HERE, n + ".py"))\n' +
    '    m = importlib.util.module_from_spec(spec); sys.modules[spec.name] = m; spec.loader.exec_module(m); return m\n' +
    'load("common")\n';
  return JSON.parse(execFileSync('python3', ['-c', prelude + code, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 })) as T;
}

describe('Dolma, datatrove, litdata, MDS: what each format carries beyond ids, against the numpy reference', function () {
  this.timeout(0);
  if (!hasNumpy) {
    it('every format test' + SKIP_REASON, function () {
      this.skip();
    });
    return;
  }
  const { fixtures } = loadFixtures();
  const byName = (n: string) => {
    const f = fixtures.find((x) => x.name === n);
    if (!f) throw new Error(`fixtures.json has no ${n}`);
    return f;
  };

  it('Dolma: locate --json gives every sampled document the id, src and loc of its .csv.gz row', async () => {
    let quoted = false;
    for (const name of ['dolma-uint32', 'dolma-uint16', 'dolma-npy-header']) {
      const fx = byName(name);
      const abs = path.join(FIXTURES, fx.path);
      const ref = reference(abs, 'dolma', { eos: fx.eos, documents: true });
      const meta = pyReference<[string, string, string][]>('print(json.dumps(load("dolma").document_metadata(sys.argv[1])))', abs);
      assert.strictEqual(meta.length, ref.document_table!.length, `${name}: one metadata row per document`);
      assert.strictEqual(new Set(meta.map((m) => m[0])).size, meta.length, `${name}: every document has its own id`);
      quoted ||= meta.some((m) => /[",]/.test(m[0]));
      const table = ref.document_table!;
      const diffs: string[] = [];
      for (const d of [0, 1, Math.floor(table.length / 2), table.length - 1]) {
        const [start, length] = table[d];
        for (const offset of [start, start + length - 1]) {
          const got = await cliJson<{ document: number; metadata?: { id: string; src: string; loc: string } }>([
            'locate',
            abs,
            String(offset),
            '--json',
            ...eosArgs(fx),
          ]);
          const want = { id: meta[d][0], src: meta[d][1], loc: meta[d][2] };
          if (got.document !== d || JSON.stringify(got.metadata) !== JSON.stringify(want)) {
            diffs.push(
              `${name} offset ${offset}: expected document ${d} ${JSON.stringify(want)}, got ${got.document} ${JSON.stringify(got.metadata)}`,
            );
          }
        }
      }
      assert.deepStrictEqual(diffs, []);
    }
    assert.ok(quoted, 'some ids hold a comma or a quote (CSV quoting is exercised)');
  });

  it('Dolma: a .csv.gz of 2,000,000 rows streams: locate gives the last rows’ provenance, the CLI stays under 320 MB resident', async () => {
    // The sample's real ids, one per document, with synthetic provenance: rows written as the
    // writer port writes them (csvField, \r\n), gzip'd as a stream (level 1: the test's own time).
    const { csvField } = (await import(pathToFileURL(path.join(REPO, 'scripts', 'lib', 'format-writers', 'dolma.mjs')).href)) as {
      csvField(v: string | number): string;
    };
    const N = 2_000_000;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-dolma-big-'));
    try {
      const shard = fs.readFileSync(path.join(sampleDir(), 'shards', 'tokens_000000.u32'));
      const sample = new Uint32Array(shard.buffer, shard.byteOffset, shard.length / 4);
      const ids = new Uint32Array(N);
      for (let i = 0; i < N; i++) ids[i] = sample[i % sample.length];
      fs.writeFileSync(path.join(dir, 'part-0-00000.npy'), Buffer.from(ids.buffer));
      const row = (i: number) => [i, i + 1, `doc,${i}`, `s3://corpus/src-${i % 97}.jsonl.gz`, i + 1].map(csvField).join(',') + '\r\n';
      const gz = zlib.createGzip({ level: 1 });
      const done = pipeline(gz, fs.createWriteStream(path.join(dir, 'part-0-00000.csv.gz')));
      for (let i = 0; i < N; i += 10_000) {
        const part: string[] = [];
        for (let k = i; k < Math.min(N, i + 10_000); k++) part.push(row(k));
        if (!gz.write(part.join(''))) await new Promise((r) => gz.once('drain', r));
      }
      gz.end();
      await done;
      const sampler = path.join(dir, 'peak.js');
      fs.writeFileSync(
        sampler,
        "let peak = 0; const f = () => { peak = Math.max(peak, process.memoryUsage().rss); };\nsetInterval(f, 10).unref();\nprocess.on('exit', () => { f(); require('fs').writeSync(2, 'PEAK_RSS ' + peak + '\\n'); });\n",
      );
      for (const offset of [N - 1, N - 2, Math.floor(N / 2)]) {
        const r = spawnSync(process.execPath, ['-r', sampler, cliPath(), 'locate', dir, String(offset), '--json'], {
          encoding: 'utf8',
          maxBuffer: 1 << 26,
        });
        assert.strictEqual(r.status, 0, r.stderr);
        const got = JSON.parse(r.stdout) as { document: number; document_start: number; document_length: number; metadata: unknown };
        assert.deepStrictEqual(
          { document: got.document, start: got.document_start, length: got.document_length, metadata: got.metadata },
          {
            document: offset,
            start: offset,
            length: 1,
            metadata: { id: `doc,${offset}`, src: `s3://corpus/src-${offset % 97}.jsonl.gz`, loc: String(offset + 1) },
          },
        );
        const mb = Number(/PEAK_RSS (\d+)/.exec(r.stderr)?.[1]) / 2 ** 20;
        process.stdout.write(`      locate ${offset}: peak RSS ${mb.toFixed(0)} MB\n`);
        assert.ok(mb < 320, `peak RSS ${mb.toFixed(0)} MB for 2,000,000 rows: rows must not be held as strings`);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('datatrove: the loss mask (readLossMask) equals the .ds.loss bytes across file edges, zeros where no loss was asked', async () => {
    const fx = byName('datatrove-uint32-loss');
    const abs = path.join(FIXTURES, fx.path);
    const want = pyReference<number[]>('print(json.dumps(load("datatrove").loss_mask(sys.argv[1]).tolist()))', abs);
    const { opened } = await openFormat(abs);
    const total = opened.files.reduce((s, f) => s + f.numTokens, 0);
    assert.strictEqual(want.length, total, 'one loss byte per token');
    assert.ok(want.includes(0) && want.includes(1), 'the fixture has tokens with and without loss');
    assert.deepStrictEqual([...(await readLossMask(opened.files, 0, total))], want);
    let at = 0;
    for (const f of opened.files.slice(0, -1)) {
      at += f.numTokens;
      assert.deepStrictEqual([...(await readLossMask(opened.files, at - 20, 40))], want.slice(at - 20, at + 20), `edge at ${at}`);
    }
    const plain = await openFormat(path.join(FIXTURES, byName('datatrove-uint16').path));
    await assert.rejects(readLossMask(plain.opened.files, 0, 1), /no loss mask/);
  });

  it('litdata: the documents are the chunks’ items, in index.json order', async () => {
    const fx = byName('litdata-uint32');
    const abs = path.join(FIXTURES, fx.path);
    const { chunks } = JSON.parse(fs.readFileSync(path.join(abs, 'index.json'), 'utf8')) as { chunks: { chunk_size: number }[] };
    const ref = reference(abs, 'litdata', { documents: true });
    assert.strictEqual(
      ref.documents,
      chunks.reduce((s, c) => s + c.chunk_size, 0),
    );
    const info = await cliJson<Record<string, unknown>>(['info', abs, '--json']);
    assert.strictEqual(info.documents, ref.documents);
  });

  it('MDS: the shards carry index.json’s raw_data hashes, equal to hashlib over the shard files', async () => {
    for (const name of ['mds-int32', 'mds-int32-gz-cached']) {
      const abs = path.join(FIXTURES, byName(name).path);
      const { opened } = await openFormat(abs);
      const want = pyReference<{ algorithm: string; hex: string }[][]>(
        'import hashlib, glob\n' +
          'index = json.load(open(os.path.join(sys.argv[1], "index.json")))\n' +
          'print(json.dumps([[{"algorithm": a, "hex": hashlib.new(a, open(os.path.join(sys.argv[1], s["raw_data"]["basename"]), "rb").read()).hexdigest()} for a in s["hashes"]] for s in index["shards"]]))',
        abs,
      );
      assert.deepStrictEqual(
        opened.files.map((f) => f.hashes),
        want,
        name,
      );
    }
  });

  it('MDS: verify checks every shard against index.json’s hashes; one flipped token byte fails that shard alone', () => {
    const src = path.join(FIXTURES, byName('mds-int32').path);
    const ok = runCli(['verify', src]);
    assert.strictEqual(ok.code, 0, ok.stderr + ok.stdout);
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-mds-verify-'));
    try {
      for (const f of fs.readdirSync(src)) fs.copyFileSync(path.join(src, f), path.join(copy, f));
      const shard = path.join(copy, 'shard.00002.mds');
      const b = fs.readFileSync(shard);
      b[b.length - 3] ^= 0x01; // inside the last sample's token values
      fs.writeFileSync(shard, b);
      const bad = runCli(['verify', copy]);
      assert.strictEqual(bad.code, 1, bad.stderr + bad.stdout);
      const index = JSON.parse(fs.readFileSync(path.join(copy, 'index.json'), 'utf8')) as {
        shards: { raw_data: { hashes: Record<string, string> } }[];
      };
      const out = bad.stdout + bad.stderr;
      assert.match(out, /shard\.00002\.mds/);
      assert.ok(out.includes(index.shards[2].raw_data.hashes.sha1), 'names the hash index.json expects');
      assert.ok(!/shard\.0000[013-7]\.mds: /.test(out), `only shard.00002.mds fails:\n${out}`);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  it('MDS: shards compressed with gz and no raw shard open (decompressed into the cache, nothing written next to them) and read like the reference over Python-decompressed shards', async () => {
    const dir = path.join(FIXTURES, 'gpt2', 'mds-gz-only');
    const before = sha256sum(fs.readdirSync(dir).map((f) => path.join(dir, f)));
    const r = runCli(['info', dir, '--json']);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual([...sha256sum(fs.readdirSync(dir).map((f) => path.join(dir, f)))], [...before], 'nothing written');
    // What streaming does on download (stream.py _decompress_shard_part): the raw shard next to the compressed one.
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-mds-gz-'));
    try {
      execFileSync('python3', [
        '-c',
        'import gzip, os, shutil, sys\nfor n in os.listdir(sys.argv[1]):\n    shutil.copy(os.path.join(sys.argv[1], n), sys.argv[2])\n    if n.endswith(".gz"):\n        open(os.path.join(sys.argv[2], n[:-3]), "wb").write(gzip.decompress(open(os.path.join(sys.argv[1], n), "rb").read()))',
        dir,
        copy,
      ]);
      const ref = reference(copy, 'mds', { eos: 50256 });
      const all = reference(copy, 'mds', { eos: 50256, ranges: [[0, ref.stored_tokens]] }).ranges[0];
      for (const from of [copy, dir]) {
        const got = (await cliJson<{ ids: number[] }>(['tokens', from, '--start', '0', '--count', String(ref.stored_tokens), '--json']))
          .ids;
        assert.deepStrictEqual(idDiffs(0, all, got), [], from);
      }
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });
});
