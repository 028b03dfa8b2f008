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
import { pathToFileURL } from 'url';
import { runCliInProcess } from './cliInProcess';
import { repoRoot, runCli, sampleDir, sha256sum } from './fixtures';

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
  files: { path: string; header_bytes: number; tokens: number }[] | number;
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

/** Runs the reference reader on `p` (absolute) as `format`. */
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
  return JSON.parse(execFileSync('python3', args, { encoding: 'utf8', maxBuffer: 1 << 30 })) as Reference;
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
  return JSON.parse(execFileSync('python3', args, { encoding: 'utf8', maxBuffer: 1 << 30 })) as {
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
            files: Array.isArray(info.files)
              ? info.files.map((f) => ({ path: path.resolve(f.path), header_bytes: f.header_bytes, tokens: f.tokens }))
              : info.files,
            stored_tokens: info.stored_tokens,
            documents: info.documents,
          },
          {
            format: ref.format,
            dtype: ref.dtype,
            files: ref.files.map((f) => ({ path: path.resolve(f.path), header_bytes: f.header_bytes, tokens: f.tokens })),
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
