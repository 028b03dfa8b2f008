/**
 * llm.c / modded-nanogpt `.bin` writer, ported line by line from karpathy/llm.c at commit
 * f1e2ace651495b74ae22d45d1723443fd00ecd3a:
 *
 * - `dev/data/data_common.py`: `HEADERS_INFO` (l. 26–37: GPT-2 = magic 20240520, version 1,
 *   uint16; Llama 3 = magic 20240801, version 7, uint32) and `write_datafile` (l. 39–60: a header
 *   of 256 int32 = 1,024 bytes, header[0] magic, header[1] version, header[2] = token count, the
 *   rest 0; then the tokens).
 * - `dev/data/fineweb.py`: `tokenize_gpt2` / `tokenize_llama` (l. 67–89: every document is
 *   **preceded** by its delimiter, `[eot] + encode(text)`; EOT 50256 for GPT-2, the tokenizer's
 *   BOS 128000 for Llama 3) and the shard loop (l. 96–143: a document that does not fit the
 *   current shard is split, its remainder starts the next shard; shard 0 is named `val`, the
 *   others `train`, `{name}_{split}_{index:06d}.bin`).
 * - Readers that define what is accepted: `llmc/dataloader.h` l. 72–93 (magic 20240520,
 *   version 1, file size = 1,024 + 2·ntok) and `train_llama3.py` l. 750–772 (magic 20240801,
 *   version 7, uint32 tokens, their count = header[2]).
 *
 * Also the fixture maker's plug-in for the `llm.c` format.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { toBytes, writeAll } from './common.mjs';

/** `HEADERS_INFO` (data_common.py l. 26–37). */
export const HEADERS_INFO = Object.freeze({
  'gpt-2': Object.freeze({ magic: 20240520, version: 1, tokenDtype: /** @type {'uint16'} */ ('uint16') }),
  'llama-3': Object.freeze({ magic: 20240801, version: 7, tokenDtype: /** @type {'uint32'} */ ('uint32') }),
});

/** @typedef {keyof typeof HEADERS_INFO} ModelDesc */

/** Header size: 256 int32 values (data_common.py l. 49, dataloader.h `HEADER_SIZE`). */
export const HEADER_BYTES = 256 * 4;

/** Byte offsets of the header fields that are not 0. */
export const HEADER_OFFSETS = Object.freeze({ magic: 0, version: 4, tokenCount: 8 });

/**
 * The 1,024-byte header of `write_datafile` (l. 48–52).
 * @param {number} tokenCount tokens after the header
 * @param {ModelDesc} modelDesc
 * @returns {Buffer}
 */
export function header(tokenCount, modelDesc) {
  const info = HEADERS_INFO[modelDesc];
  const h = Buffer.alloc(HEADER_BYTES);
  h.writeInt32LE(info.magic, HEADER_OFFSETS.magic);
  h.writeInt32LE(info.version, HEADER_OFFSETS.version);
  h.writeInt32LE(tokenCount, HEADER_OFFSETS.tokenCount);
  return h;
}

/**
 * `write_datafile` (data_common.py l. 39–60).
 * @param {string} filename
 * @param {ArrayLike<number>} toks
 * @param {ModelDesc} [modelDesc] default "gpt-2"
 * @throws {Error} on 2^31 tokens or more, as the Python `assert`
 */
export function writeDatafile(filename, toks, modelDesc = 'gpt-2') {
  if (!(toks.length < 2 ** 31)) throw new Error('token count too large');
  const fd = fs.openSync(filename, 'w');
  writeAll(fd, header(toks.length, modelDesc));
  writeAll(fd, toBytes(toks, HEADERS_INFO[modelDesc].tokenDtype));
  fs.closeSync(fd);
}

/**
 * `tokenize_gpt2` / `tokenize_llama` (fineweb.py l. 67–89) after encoding: the delimiter first.
 * @param {ArrayLike<number>} ids the document's ids
 * @param {number} eot the delimiter (EOT 50256 for GPT-2, BOS 128000 for Llama 3)
 * @returns {Uint32Array}
 */
export function tokenizeDocument(ids, eot) {
  const out = new Uint32Array(ids.length + 1);
  out[0] = eot;
  out.set(ids, 1);
  return out;
}

/**
 * fineweb.py's shard loop (l. 96–143) over already tokenized documents.
 * @param {string} dir output folder
 * @param {string} name file name stem (`fineweb`, `edu_fineweb`, …)
 * @param {Iterable<Uint32Array>} documents each from {@link tokenizeDocument}
 * @param {{ shardSize: number, modelDesc: ModelDesc, split?: (shardIndex: number) => string }} o
 *   `split` names the shard's split; fineweb.py's is `val` for shard 0, else `train`
 * @returns {string[]} the files written, in write order
 */
export function writeShards(dir, name, documents, o) {
  const split = o.split ?? ((i) => (i === 0 ? 'val' : 'train'));
  const file = (i) => path.join(dir, `${name}_${split(i)}_${String(i).padStart(6, '0')}.bin`);
  const files = [];
  let shardIndex = 0;
  const allTokens = new Uint32Array(o.shardSize);
  let tokenCount = 0;
  for (const tokens of documents) {
    if (tokenCount + tokens.length < o.shardSize) {
      allTokens.set(tokens, tokenCount);
      tokenCount += tokens.length;
    } else {
      const remainder = o.shardSize - tokenCount;
      allTokens.set(tokens.subarray(0, remainder), tokenCount);
      writeDatafile(file(shardIndex), allTokens, o.modelDesc);
      files.push(file(shardIndex));
      shardIndex += 1;
      allTokens.set(tokens.subarray(remainder), 0);
      tokenCount = tokens.length - remainder;
    }
  }
  if (tokenCount !== 0) {
    writeDatafile(file(shardIndex), allTokens.subarray(0, tokenCount), o.modelDesc);
    files.push(file(shardIndex));
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// Plug-in for scripts/make-format-fixtures.mjs

/** The format name this module writes (`info --json` "format"). */
export const FORMAT = 'llm.c';

/**
 * Every shard is named `train` here: fineweb.py calls shard 0 `val`, which sorts after the
 * `train` shards and would put the stream's first document last (the spec, docs/formats.md, says so).
 */
const ALL_TRAIN = () => 'train';

/**
 * Writes the llm.c fixtures: GPT-2 (version 1, uint16) over three files with documents split
 * across file edges, and Llama-3-layout (version 7, uint32) with dolma2 ids over two files. The
 * dolma2 tokenizer adds no BOS (`encode('')` is empty), so its delimiter is its EOS 100257.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @returns {import('../../make-format-fixtures.mjs').FixtureEntry[]}
 */
export function fixtures(ctx) {
  const g2 = ctx.corpus.gpt2;
  const d2 = ctx.corpus.dolma2;
  const out = [];
  {
    const dir = ctx.dir('llmc-gpt2', 'gpt2');
    const docs = g2.docs.slice(0, 30).map((d) => tokenizeDocument(d.ids, g2.eos));
    const total = docs.reduce((s, d) => s + d.length, 0);
    // Three full shards and a short last one; edges fall inside documents.
    const files = writeShards(dir, 'tinyfineweb', docs, { shardSize: Math.ceil(total / 3.5), modelDesc: 'gpt-2', split: ALL_TRAIN });
    out.push(ctx.entry({ name: 'llmc-gpt2', dir, format: FORMAT, dtype: 'uint16', corpus: g2, files: files.length, documents: null }));
  }
  {
    const dir = ctx.dir('llmc-llama3-v7', 'dolma2');
    const docs = d2.docs.slice(30, 50).map((d) => tokenizeDocument(d.ids, d2.eos));
    const total = docs.reduce((s, d) => s + d.length, 0);
    const files = writeShards(dir, 'tinyfineweb', docs, { shardSize: Math.ceil(total / 1.6), modelDesc: 'llama-3', split: ALL_TRAIN });
    out.push(ctx.entry({ name: 'llmc-llama3-v7', dir, format: FORMAT, dtype: 'uint32', corpus: d2, files: files.length, documents: null }));
  }
  return out;
}

/**
 * Bad copies of the first `llmc-gpt2` file: wrong magic, a version that does not belong to the
 * magic, a header cut short, a token count larger than the file holds.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @param {import('../../make-format-fixtures.mjs').FixtureEntry[]} good
 * @returns {import('../../make-format-fixtures.mjs').BadFixtureEntry[]}
 */
export function badFixtures(ctx, good) {
  const src = good.find((e) => e.name === 'llmc-gpt2');
  if (!src) return [];
  const first = fs
    .readdirSync(ctx.abs(src.path))
    .filter((f) => f.endsWith('.bin'))
    .sort()[0];
  const bytes = fs.readFileSync(path.join(ctx.abs(src.path), first));
  const ntok = bytes.readInt32LE(HEADER_OFFSETS.tokenCount);
  /** @type {{ name: string, fault: string, bytes: number[], edit: (b: Buffer) => Buffer, args?: string[] }[]} */
  const cases = [
    {
      name: 'llmc-bad-magic',
      fault: 'read with --format llm.c, magic 20240521 is neither 20240520 (GPT-2) nor 20240801 (Llama 3)',
      bytes: [HEADER_OFFSETS.magic],
      edit: (b) => (b.writeInt32LE(20240521, HEADER_OFFSETS.magic), b),
      // Without the magic nothing says the file is llm.c: unforced it is a headerless file.
      args: ['--format', FORMAT],
    },
    {
      name: 'llmc-bad-version',
      fault: 'version 7 with the GPT-2 magic 20240520 (expected 1)',
      bytes: [HEADER_OFFSETS.version],
      edit: (b) => (b.writeInt32LE(7, HEADER_OFFSETS.version), b),
    },
    {
      name: 'llmc-truncated-header',
      fault: 'the file ends at byte 1,000, inside its 1,024-byte header',
      bytes: [1000, HEADER_BYTES],
      edit: (b) => b.subarray(0, 1000),
    },
    {
      name: 'llmc-count-past-end',
      fault: 'header[2] says 1,000 tokens more than the file holds',
      bytes: [HEADER_OFFSETS.tokenCount, HEADER_BYTES + 2 * ntok, HEADER_BYTES + 2 * (ntok + 1000)],
      edit: (b) => (b.writeInt32LE(ntok + 1000, HEADER_OFFSETS.tokenCount), b),
    },
  ];
  return cases.map((c) => {
    const dir = ctx.dir(c.name, 'bad');
    fs.writeFileSync(path.join(dir, first), c.edit(Buffer.from(bytes)));
    return {
      name: c.name,
      format: FORMAT,
      path: ctx.rel(path.join(dir, first)),
      file: first,
      bytes: c.bytes,
      fault: c.fault,
      from: src.name,
      ...(c.args ? { args: c.args } : {}),
    };
  });
}

/**
 * The benchmark fixture: one Llama-3-layout (uint32) file of about `bytes` bytes of tokens,
 * dolma2 documents repeated with their delimiter first. Written as `write_datafile` lays it
 * out, in document-sized writes, the header's count patched at the end (the file is never
 * held in memory; a count of 2^31 or more is refused as in `write_datafile`).
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @param {number} bytes
 * @returns {import('../../make-format-fixtures.mjs').FixtureEntry}
 */
export function bigFixture(ctx, bytes) {
  const d2 = ctx.corpus.dolma2;
  const dir = ctx.dir('llmc-big', 'dolma2');
  const file = path.join(dir, 'big_train_000000.bin');
  const fd = fs.openSync(file, 'w');
  writeAll(fd, header(0, 'llama-3'));
  let count = 0;
  for (let i = 0; count * 4 < bytes; i = (i + 1) % d2.docs.length) {
    const t = tokenizeDocument(d2.docs[i].ids, d2.eos);
    writeAll(fd, toBytes(t, 'uint32'));
    count += t.length;
  }
  if (!(count < 2 ** 31)) throw new Error('token count too large');
  fs.writeSync(fd, header(count, 'llama-3'), 0, HEADER_BYTES, 0);
  fs.closeSync(fd);
  return ctx.entry({ name: 'llmc-big', dir, format: FORMAT, dtype: 'uint32', corpus: d2, files: 1, documents: null });
}
