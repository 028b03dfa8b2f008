/**
 * Writer port of Dolma's token files (allenai/dolma, commit 669f5348, `python/dolma/tokenizer/`),
 * the files OLMo trains from: for every writer process a run of raw little-endian memmaps named
 * `.npy` **without** a numpy header, each with a gzip'd CSV sidecar `.csv.gz` whose rows
 * `start,end,id,src,loc` give every document's token range in that file and its provenance.
 *
 * Followed line by line:
 * - `memmap_writer.py` `MemmapWriter`: L40–42 the `.npy` / `.csv.gz` names from one base path;
 *   L77–79 a document that would make the file reach `max_tokens` is not written (`>=`), the caller
 *   opens the next file; L81–92 one CSV row per document, `MemmapMetadata(start, end, id, src, loc)`
 *   with `start` = tokens written before it and `end = start + len(tokens)` (tokens, end-exclusive);
 *   L153–156 the memmap is `np.memmap(dtype)` (raw, no header) and the CSV is opened with
 *   `smart_open` in text mode, which gzips it for the `.gz` suffix; L179–189 the memmap is cut to
 *   the tokens written.
 * - `data_types.py` L45–50: the row's field order `start, end, id, src, loc`.
 * - `executor.py` L135 and L231–236: file names `{destination}-{mm_cnt:05d}`; L306–310 destination
 *   `part-{i:0{digits}d}` for writer process i; L222–244 documents that do not fit go to the next
 *   file.
 * - `tokenizer.py` L468–485: `loc` is the 1-based line of the document in its source file, `src`
 *   that file's path; L248–259: EOS (and BOS when configured) are added to every document.
 *
 * The CSV is written the way Python's `csv.writer` does with its defaults (QUOTE_MINIMAL, `"`
 * doubled inside quotes, rows ended by `\r\n`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { copyFixture, toBytes } from './common.mjs';
import { processDocument, writeNpy } from './nanogpt.mjs';

/**
 * @typedef {object} DolmaDocument
 * @property {ArrayLike<number>} tokens token ids, EOS included (the tokenizer adds it)
 * @property {string} id the document's id (the `id` field of its JSON line)
 * @property {string} src path of the source file the document came from
 * @property {number} loc 1-based line number of the document in `src`
 */

/** @typedef {'uint16' | 'uint32'} DolmaDtype */

/** Suffix of the metadata sidecar (memmap_writer.py L24). */
export const DOLMA_SIDECAR = '.csv.gz';

/** Default `max_tokens` of `MemmapWriter` (memmap_writer.py L22): 512 Mi tokens per file. */
export const DOLMA_DEFAULT_MAX_TOKENS = 512 * 1024 * 1024;

/**
 * One field the way Python's `csv.writer` (QUOTE_MINIMAL) writes it: quoted when it holds the
 * delimiter, the quote character or a line break, with quotes doubled.
 * @param {string | number} value
 */
export function csvField(value) {
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * Writes one writer process's files, as `MemMapParallelWriter.process_single` does: documents in
 * the given order, a new `{prefix}-{n:05d}.npy` + `.csv.gz` pair whenever the next document would
 * make the current file reach `maxTokens`.
 * @param {string} dir output folder (created)
 * @param {string} prefix destination prefix, e.g. `part-0`
 * @param {readonly DolmaDocument[]} docs
 * @param {{ dtype: DolmaDtype, maxTokens?: number, npyHeader?: boolean }} opts `npyHeader`: write real
 *   `.npy` files (with the numpy header, as `np.save`) instead of Dolma's headerless memmaps
 * @returns {{ npy: string, csv: string, tokens: number, documents: number }[]} the files written, in order
 */
export function writeDolmaPart(dir, prefix, docs, { dtype, maxTokens = DOLMA_DEFAULT_MAX_TOKENS, npyHeader = false }) {
  fs.mkdirSync(dir, { recursive: true });
  /** @type {{ npy: string, csv: string, tokens: number, documents: number }[]} */
  const files = [];
  let i = 0;
  for (let mm = 0; i < docs.length; mm++) {
    const base = path.join(dir, `${prefix}-${String(mm).padStart(5, '0')}`);
    /** @type {number[]} */
    const ids = [];
    /** @type {string[]} */
    const rows = [];
    for (; i < docs.length; i++) {
      const d = docs[i];
      if (d.tokens.length + ids.length >= maxTokens) {
        if (ids.length === 0) throw new Error(`document ${d.id} has ${d.tokens.length} tokens, more than max_tokens ${maxTokens}`);
        break;
      }
      const start = ids.length;
      for (let k = 0; k < d.tokens.length; k++) ids.push(d.tokens[k]);
      rows.push([start, ids.length, d.id, d.src, d.loc].map(csvField).join(',') + '\r\n');
    }
    if (npyHeader) writeNpy(`${base}.npy`, ids, dtype);
    else fs.writeFileSync(`${base}.npy`, toBytes(ids, dtype));
    fs.writeFileSync(`${base}${DOLMA_SIDECAR}`, zlib.gzipSync(Buffer.from(rows.join(''), 'utf8'), { level: 9 }));
    files.push({ npy: `${base}.npy`, csv: `${base}${DOLMA_SIDECAR}`, tokens: ids.length, documents: rows.length });
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// Plug-in for scripts/make-format-fixtures.mjs

/** The format name this module writes (`info --json` "format"). */
export const FORMAT = 'dolma';

/**
 * The corpus documents `from`..`to` as Dolma documents: EOS appended (tokenizer.py L248–259),
 * `id` = the source and title (titles hold commas and quotes: CSV quoting is exercised), `src` one
 * synthetic source file per text source, `loc` the document's 1-based line in it.
 * @param {import('../../make-format-fixtures.mjs').Corpus} corpus
 * @param {number} from
 * @param {number} to
 * @returns {DolmaDocument[]}
 */
function dolmaDocs(corpus, from, to) {
  /** @type {Map<string, number>} */
  const lines = new Map();
  return corpus.docs.slice(from, to).map((d) => {
    const loc = (lines.get(d.source) ?? 0) + 1;
    lines.set(d.source, loc);
    return { tokens: processDocument(d.ids, corpus.eos), id: `${d.source}:${d.title}`, src: `s3://corpus/${d.source}/0000.jsonl.gz`, loc };
  });
}

/** A `max_tokens` that splits `docs` into about `files` files (and holds the longest document). */
function maxTokensFor(/** @type {DolmaDocument[]} */ docs, /** @type {number} */ files) {
  const total = docs.reduce((s, d) => s + d.tokens.length, 0);
  return Math.max(Math.ceil(total / files) + 1, ...docs.map((d) => d.tokens.length + 1));
}

/**
 * Writes the Dolma fixtures: dolma2 ids as uint32 from two writer processes (`part-0-*`,
 * `part-1-*`, two files each), GPT-2 ids as uint16 in one file, and dolma2 ids in a real `.npy`
 * (with header) next to its `.csv.gz`; plus one file of the first opened alone.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @returns {import('../../make-format-fixtures.mjs').FixtureEntry[]}
 */
export function fixtures(ctx) {
  const d2 = ctx.corpus.dolma2;
  const g2 = ctx.corpus.gpt2;
  const out = [];
  {
    const dir = ctx.dir('dolma-uint32', 'dolma2');
    const parts = [dolmaDocs(d2, 0, 15), dolmaDocs(d2, 15, 30)];
    const maxTokens = Math.max(...parts.map((p) => maxTokensFor(p, 2)));
    const written = parts.flatMap((docs, i) => writeDolmaPart(dir, `part-${i}`, docs, { dtype: 'uint32', maxTokens }));
    out.push(ctx.entry({ name: 'dolma-uint32', dir, format: FORMAT, dtype: 'uint32', corpus: d2, files: written.length, documents: 30 }));
    out.push(
      ctx.entry({
        name: 'dolma-uint32-file',
        dir,
        file: path.basename(written[0].npy),
        format: FORMAT,
        dtype: 'uint32',
        corpus: d2,
        files: 1,
        documents: written[0].documents,
      }),
    );
  }
  {
    const dir = ctx.dir('dolma-uint16', 'gpt2');
    writeDolmaPart(dir, 'part-0', dolmaDocs(g2, 30, 50), { dtype: 'uint16' });
    out.push(ctx.entry({ name: 'dolma-uint16', dir, format: FORMAT, dtype: 'uint16', corpus: g2, files: 1, documents: 20 }));
  }
  {
    const dir = ctx.dir('dolma-npy-header', 'dolma2');
    writeDolmaPart(dir, 'part-0', dolmaDocs(d2, 50, 60), { dtype: 'uint32', npyHeader: true });
    out.push(ctx.entry({ name: 'dolma-npy-header', dir, format: FORMAT, dtype: 'uint32', corpus: d2, files: 1, documents: 10 }));
  }
  return out;
}

/**
 * Damaged copies of `dolma-uint32`: the last row of the second file's `.csv.gz` ends past its
 * `.npy`; the first file's `.csv.gz` is not gzip.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @param {import('../../make-format-fixtures.mjs').FixtureEntry[]} good
 * @returns {import('../../make-format-fixtures.mjs').BadFixtureEntry[]}
 */
export function badFixtures(ctx, good) {
  const from = good.find((g) => g.name === 'dolma-uint32');
  if (!from) return [];
  const src = ctx.abs(from.path);
  const copy = (/** @type {string} */ name) => copyFixture(ctx, from, name);
  const csvs = fs
    .readdirSync(src)
    .filter((f) => f.endsWith(DOLMA_SIDECAR))
    .sort();
  const out = [];
  {
    const dir = copy('dolma-row-outside');
    const file = path.join(dir, csvs[1]);
    const rows = zlib.gunzipSync(fs.readFileSync(file)).toString('utf8').split('\r\n').filter(Boolean);
    const last = rows[rows.length - 1].split(',');
    last[1] = String(Number(last[1]) + 7);
    rows[rows.length - 1] = last.join(',');
    fs.writeFileSync(file, zlib.gzipSync(Buffer.from(rows.join('\r\n') + '\r\n', 'utf8')));
    out.push({
      name: 'dolma-row-outside',
      format: FORMAT,
      path: ctx.rel(dir),
      file: csvs[1],
      bytes: [rows.length],
      fault: `row ${rows.length} of ${csvs[1]} ends 7 tokens past the end of its .npy`,
      from: from.name,
    });
  }
  {
    const dir = copy('dolma-csv-not-gzip');
    const file = path.join(dir, csvs[0]);
    fs.writeFileSync(file, zlib.gunzipSync(fs.readFileSync(file)));
    out.push({
      name: 'dolma-csv-not-gzip',
      format: FORMAT,
      path: ctx.rel(dir),
      file: csvs[0],
      bytes: [1],
      fault: `${csvs[0]} is plain CSV, not gzip (row 1 cannot be read)`,
      from: from.name,
    });
  }
  return out;
}
