/**
 * Writer port of datatrove's tokenized files (huggingface/datatrove, commit a649de79,
 * `src/datatrove/pipeline/tokens/`): `NAME.ds` raw little-endian tokens, `NAME.ds.index` the
 * documents' cumulative **end** offsets in tokens as `<Q` (uint64), `NAME.ds.loss` one byte per
 * token (1 = trained on, 0 = no loss) when loss metadata is saved, `NAME.ds.metadata` a text file
 * `tokenizer|token_size`, token count, the count in words.
 *
 * Followed line by line (`tokenizer.py` unless named):
 * - `TokenizedFile.__init__` L57–58: `token_size` 2 packs `<H`, 4 packs `<I`;
 *   `utils/tokenization.py` L61–67: `token_size` is 4 when the vocabulary has more than 65,536 ids.
 * - `TokenizedFile.write_bytes` L110–119: the index gets `write_idx` (tokens written so far) after
 *   each document; `close` L79–85 writes the whole index as `<%sQ`.
 * - `TokenizedFile.write` L141–143: loss values as `<%s?` (one byte each);
 *   `DocumentTokenizer.get_loss_values` L366–376: ones, zero over the document's `no_loss_ranges`,
 *   and cut where a no-loss range runs to the document's end; `write_unshuffled` L407–409 cuts the
 *   tokens to the loss values' length.
 * - `TokenizedFile.write_final_metadata` L255–271: `name|token_size`, the count, a humanized count.
 * - `merger.py` `DocumentTokenizerMerger.run` L169–205: files `{n:03d}_{save_filename}.ds`, a new
 *   file once the current one holds `max_tokens_per_file` tokens (checked before each document),
 *   and a final `{save_filename}.ds.metadata` with the total, which has no `.ds` of its own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { copyFixture } from './common.mjs';
import { processDocument } from './nanogpt.mjs';

/**
 * @typedef {object} DatatroveDocument
 * @property {ArrayLike<number>} tokens token ids as the tokenizer gave them (EOS appended by its post-processor)
 * @property {[number, number][]} [noLoss] token ranges `[start, end)` inside the document trained
 *   without loss (datatrove takes character ranges and maps them with `char_to_token`; the bytes
 *   written are the same)
 */

/**
 * datatrove's `humanize.metric(count, unit="T")` for the metadata's third line (3 significant digits).
 * @param {number} n
 */
function humanMetric(n) {
  const prefixes = ['', 'k', 'M', 'G', 'T', 'P'];
  let e = 0;
  let v = n;
  while (Math.abs(v) >= 1000 && e < prefixes.length - 1) {
    v /= 1000;
    e++;
  }
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${prefixes[e]}T`;
}

/**
 * Writes merged datatrove files as `DocumentTokenizerMerger` leaves them.
 * @param {string} dir output folder (created)
 * @param {readonly DatatroveDocument[]} docs documents in merge order
 * @param {{ saveFilename: string, tokenizerName: string, tokenSize: 2 | 4, maxTokensPerFile: number, saveLoss: boolean }} opts
 * @returns {{ ds: string, tokens: number, documents: number }[]} the `.ds` files written, in order
 */
export function writeDatatrove(dir, docs, { saveFilename, tokenizerName, tokenSize, maxTokensPerFile, saveLoss }) {
  fs.mkdirSync(dir, { recursive: true });
  /** @type {{ ds: string, tokens: number, documents: number }[]} */
  const files = [];
  /** @type {{ name: string, tokens: Buffer[], loss: Buffer[], ends: bigint[], writeIdx: number } | undefined} */
  let cur;
  let total = 0;
  const close = () => {
    if (!cur) return;
    const ds = path.join(dir, cur.name);
    fs.writeFileSync(ds, Buffer.concat(cur.tokens));
    if (saveLoss) fs.writeFileSync(`${ds}.loss`, Buffer.concat(cur.loss));
    const index = Buffer.alloc(8 * cur.ends.length);
    cur.ends.forEach((e, k) => index.writeBigUInt64LE(e, 8 * k));
    fs.writeFileSync(`${ds}.index`, index);
    writeMetadata(`${ds}.metadata`, tokenizerName, tokenSize, cur.writeIdx);
    files.push({ ds, tokens: cur.writeIdx, documents: cur.ends.length });
  };
  for (const d of docs) {
    if (!cur || (maxTokensPerFile > 0 && maxTokensPerFile <= cur.writeIdx)) {
      close();
      cur = { name: `${String(files.length).padStart(3, '0')}_${saveFilename}.ds`, tokens: [], loss: [], ends: [], writeIdx: 0 };
    }
    let loss = new Uint8Array(d.tokens.length).fill(1);
    for (const [s, e] of d.noLoss ?? []) {
      loss.fill(0, s, e);
      if (e >= d.tokens.length) loss = loss.subarray(0, s);
    }
    const n = saveLoss ? loss.length : d.tokens.length;
    const buf = Buffer.alloc(n * tokenSize);
    for (let k = 0; k < n; k++) {
      if (tokenSize === 2) buf.writeUInt16LE(d.tokens[k], 2 * k);
      else buf.writeUInt32LE(d.tokens[k], 4 * k);
    }
    cur.tokens.push(buf);
    if (saveLoss) cur.loss.push(Buffer.from(loss));
    cur.writeIdx += n;
    cur.ends.push(BigInt(cur.writeIdx));
    total += n;
  }
  close();
  writeMetadata(path.join(dir, `${saveFilename}.ds.metadata`), tokenizerName, tokenSize, total);
  return files;
}

/**
 * @param {string} file
 * @param {string} tokenizerName
 * @param {number} tokenSize
 * @param {number} count
 */
function writeMetadata(file, tokenizerName, tokenSize, count) {
  fs.writeFileSync(file, [`${tokenizerName}|${tokenSize}`, String(count), humanMetric(count)].join('\n'));
}

// ---------------------------------------------------------------------------------------------
// Plug-in for scripts/make-format-fixtures.mjs

/** The format name this module writes (`info --json` "format"). */
export const FORMAT = 'datatrove';

/**
 * Writes the datatrove fixtures: dolma2 ids (token size 4) in three merged files with a
 * `.ds.loss` — every third document has its first 16 tokens without loss (a prompt), and one a
 * no-loss range running to its end, which cuts it (tokenizer.py L373–375, L407–409) — and GPT-2
 * ids (token size 2) in one file without loss; plus one file of the first opened alone.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @returns {import('../../make-format-fixtures.mjs').FixtureEntry[]}
 */
export function fixtures(ctx) {
  const d2 = ctx.corpus.dolma2;
  const g2 = ctx.corpus.gpt2;
  const out = [];
  {
    const dir = ctx.dir('datatrove-uint32-loss', 'dolma2');
    /** @type {DatatroveDocument[]} */
    const docs = d2.docs.slice(60, 80).map((d, i) => {
      const tokens = processDocument(d.ids, d2.eos);
      /** @type {[number, number][]} */
      const noLoss = i % 3 === 0 ? [[0, Math.min(16, tokens.length - 1)]] : [];
      if (i === 10) noLoss.push([tokens.length - 40, tokens.length]);
      return { tokens, noLoss };
    });
    const total = docs.reduce((s, d) => s + d.tokens.length, 0);
    const files = writeDatatrove(dir, docs, {
      saveFilename: 'dolma2_corpus',
      tokenizerName: 'allenai/dolma2-tokenizer',
      tokenSize: 4,
      maxTokensPerFile: Math.ceil(total / 3),
      saveLoss: true,
    });
    out.push(
      ctx.entry({ name: 'datatrove-uint32-loss', dir, format: FORMAT, dtype: 'uint32', corpus: d2, files: files.length, documents: 20 }),
    );
    out.push(
      ctx.entry({
        name: 'datatrove-uint32-file',
        dir,
        file: path.basename(files[0].ds),
        format: FORMAT,
        dtype: 'uint32',
        corpus: d2,
        files: 1,
        documents: files[0].documents,
      }),
    );
  }
  {
    const dir = ctx.dir('datatrove-uint16', 'gpt2');
    const docs = g2.docs.slice(80, 100).map((d) => ({ tokens: processDocument(d.ids, g2.eos) }));
    writeDatatrove(dir, docs, { saveFilename: 'gpt2_corpus', tokenizerName: 'gpt2', tokenSize: 2, maxTokensPerFile: 0, saveLoss: false });
    out.push(ctx.entry({ name: 'datatrove-uint16', dir, format: FORMAT, dtype: 'uint16', corpus: g2, files: 1, documents: 20 }));
  }
  return out;
}

/**
 * Damaged copies of `datatrove-uint32-loss`: in the second file's `.ds.index` two ends swapped
 * (not increasing); in the third's the last end 10 tokens past the `.ds`.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @param {import('../../make-format-fixtures.mjs').FixtureEntry[]} good
 * @returns {import('../../make-format-fixtures.mjs').BadFixtureEntry[]}
 */
export function badFixtures(ctx, good) {
  const from = good.find((g) => g.name === 'datatrove-uint32-loss');
  if (!from) return [];
  const src = ctx.abs(from.path);
  const copy = (/** @type {string} */ name) => copyFixture(ctx, from, name);
  const indexes = fs
    .readdirSync(src)
    .filter((f) => f.endsWith('.ds.index'))
    .sort();
  const out = [];
  {
    const dir = copy('datatrove-index-decreasing');
    const file = path.join(dir, indexes[1]);
    const b = fs.readFileSync(file);
    const a = b.readBigUInt64LE(0);
    b.writeBigUInt64LE(b.readBigUInt64LE(8), 0);
    b.writeBigUInt64LE(a, 8);
    fs.writeFileSync(file, b);
    out.push({
      name: 'datatrove-index-decreasing',
      format: FORMAT,
      path: ctx.rel(dir),
      file: indexes[1],
      bytes: [8],
      fault: `${indexes[1]}: its first two document ends swapped (not increasing)`,
      from: from.name,
    });
  }
  {
    const dir = copy('datatrove-index-past-end');
    const file = path.join(dir, indexes[2]);
    const b = fs.readFileSync(file);
    b.writeBigUInt64LE(b.readBigUInt64LE(b.length - 8) + 10n, b.length - 8);
    fs.writeFileSync(file, b);
    out.push({
      name: 'datatrove-index-past-end',
      format: FORMAT,
      path: ctx.rel(dir),
      file: indexes[2],
      bytes: [b.length - 8],
      fault: `${indexes[2]}: the last document ends 10 tokens past the end of its .ds`,
      from: from.name,
    });
  }
  return out;
}
