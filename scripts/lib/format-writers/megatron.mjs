/**
 * Megatron-LM `PREFIX.bin` + `PREFIX.idx` writer, ported line by line from
 * NVIDIA/Megatron-LM at commit d98e8a64ddf34856e74b24714e3bedb2f5a39553:
 *
 * - `megatron/core/datasets/indexed_dataset.py`: `_INDEX_HEADER` (l. 54), `DType` codes and
 *   `optimal_dtype` (l. 57–126), `_IndexWriter` (l. 129–233), `IndexedDatasetBuilder`
 *   (l. 930–1081), `get_idx_path` / `get_bin_path` (l. 1084–1105).
 * - `tools/preprocess_data.py`: `Encoder.encode` (l. 86–108: empty sentences are dropped, the EOD
 *   id is appended to a non-empty document with `--append-eod` and counted in its last sentence),
 *   the output names `{prefix}_{key}_{level}.bin/.idx` and the dtype
 *   `DType.optimal_dtype(tokenizer.vocab_size)` (l. 163–181), one `add_document` per JSON line
 *   (l. 184–190), `finalize` (l. 194).
 *
 * The layout (little-endian): `.bin` is the tokens of every sequence back to back in the
 * builder's dtype; `.idx` is `MMIDIDX\x00\x00`, `<Q` version 1, `<B` dtype code, `<Q` sequence
 * count S, `<Q` document count D, `int32 lengths[S]` (tokens), `int64 pointers[S]` (byte offsets
 * into `.bin`), `int64 document_indices[D]` (sequence index where each document starts: begins
 * with 0 and ends with S, so D = documents + 1), and `int8 modes[S]` only for multimodal data.
 *
 * Also the fixture maker's plug-in for the `megatron` format ({@link fixtures}, {@link badFixtures},
 * {@link bigFixture}).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ITEMSIZE, toBytes, writeAll } from './common.mjs';

/** `_INDEX_HEADER` (indexed_dataset.py l. 54): the 9 bytes every `.idx` begins with. */
export const INDEX_HEADER = Buffer.from('MMIDIDX\x00\x00', 'latin1');

/** `DType` (indexed_dataset.py l. 57–67): numpy dtype name → the `<B` code stored at byte 17. */
export const DTYPE_CODES = Object.freeze({ uint8: 1, int8: 2, int16: 3, int32: 4, int64: 5, float64: 6, float32: 7, uint16: 8 });

/** Byte offsets of the `.idx` header fields (from the writes in `_IndexWriter.__enter__` and `write`). */
export const IDX_OFFSETS = Object.freeze({ magic: 0, version: 9, dtype: 17, sequenceCount: 18, documentCount: 26, arrays: 34 });

/** @typedef {'uint16' | 'int32'} TokenDtype the two dtypes `optimal_dtype` picks for token data */

/**
 * `DType.optimal_dtype` (indexed_dataset.py l. 113–126): uint16 below 65,500 ids, else int32.
 * @param {number | null} cardinality the tokenizer's vocabulary size
 * @returns {TokenDtype}
 */
export function optimalDtype(cardinality) {
  return cardinality !== null && cardinality < 65500 ? 'uint16' : 'int32';
}

/**
 * `Encoder.encode` for one JSON key (tools/preprocess_data.py l. 86–108).
 * @param {ArrayLike<number>[]} sentenceIds the tokenizer's ids of each sentence (a whole document is one sentence)
 * @param {{ appendEod: boolean, eod: number }} o `--append-eod` and `tokenizer.eod`
 * @returns {{ ids: number[], lengths: number[] }} the document's ids and its sentences' lengths (tokens)
 */
export function encodeDocument(sentenceIds, o) {
  /** @type {number[]} */
  const ids = [];
  /** @type {number[]} */
  const lengths = [];
  for (const s of sentenceIds) {
    if (s.length > 0) {
      for (let i = 0; i < s.length; i++) ids.push(s[i]);
      lengths.push(s.length);
    }
  }
  if (ids.length > 0 && o.appendEod) {
    ids.push(o.eod);
    lengths[lengths.length - 1] += 1;
  }
  return { ids, lengths };
}

/** `IndexedDatasetBuilder` (indexed_dataset.py l. 930–1081), token data only (not multimodal). */
export class IndexedDatasetBuilder {
  /**
   * @param {string} binPath the `.bin` to write (truncated)
   * @param {TokenDtype} [dtype] default int32, as the Python default
   */
  constructor(binPath, dtype = 'int32') {
    this.fd = fs.openSync(binPath, 'w');
    this.dtype = dtype;
    /** @type {number[]} tokens per sequence */
    this.sequenceLengths = [];
    /** @type {number[]} sequence index where each document starts, then S */
    this.documentIndices = [0];
  }

  /**
   * `add_item`: one sequence (call {@link endDocument} to close the document).
   * @param {ArrayLike<number>} ids
   */
  addItem(ids) {
    writeAll(this.fd, toBytes(ids, this.dtype));
    this.sequenceLengths.push(ids.length);
  }

  /**
   * `add_document`: a whole document with its sentences' lengths.
   * @param {ArrayLike<number>} ids
   * @param {number[]} lengths tokens per sentence (sum = ids.length)
   */
  addDocument(ids, lengths) {
    writeAll(this.fd, toBytes(ids, this.dtype));
    this.sequenceLengths.push(...lengths);
    this.documentIndices.push(this.sequenceLengths.length);
  }

  /** `end_document`. */
  endDocument() {
    this.documentIndices.push(this.sequenceLengths.length);
  }

  /**
   * `finalize`: closes the `.bin` and writes the `.idx`.
   * @param {string} idxPath
   */
  finalize(idxPath) {
    fs.closeSync(this.fd);
    writeIndex(idxPath, this.dtype, this.sequenceLengths, this.documentIndices);
  }
}

/**
 * `_IndexWriter.__enter__` + `write` (indexed_dataset.py l. 142–214) without sequence modes.
 * @param {string} idxPath
 * @param {TokenDtype} dtype
 * @param {number[]} sequenceLengths tokens per sequence
 * @param {number[]} documentIndices sequence index where each document starts, then S
 */
export function writeIndex(idxPath, dtype, sequenceLengths, documentIndices) {
  const head = Buffer.alloc(IDX_OFFSETS.arrays);
  INDEX_HEADER.copy(head, IDX_OFFSETS.magic);
  head.writeBigUInt64LE(1n, IDX_OFFSETS.version);
  head.writeUInt8(DTYPE_CODES[dtype], IDX_OFFSETS.dtype);
  head.writeBigUInt64LE(BigInt(sequenceLengths.length), IDX_OFFSETS.sequenceCount);
  head.writeBigUInt64LE(BigInt(documentIndices.length), IDX_OFFSETS.documentCount);
  const fd = fs.openSync(idxPath, 'w');
  writeAll(fd, head);
  writeAll(fd, toBytes(sequenceLengths, 'int32'));
  writeAll(fd, toBytes(sequencePointers(sequenceLengths, dtype), 'int64'));
  writeAll(fd, toBytes(documentIndices, 'int64'));
  fs.closeSync(fd);
}

/**
 * `_IndexWriter._sequence_pointers` (l. 216–233): the byte offset of each sequence in `.bin`.
 * @param {number[]} sequenceLengths
 * @param {TokenDtype} dtype
 * @returns {number[]} bytes
 */
export function sequencePointers(sequenceLengths, dtype) {
  const out = [];
  let ptr = 0;
  for (const n of sequenceLengths) {
    out.push(ptr);
    ptr += n * ITEMSIZE[dtype];
  }
  return out;
}

/**
 * `tools/preprocess_data.py` for one input file and one JSON key: every document through
 * {@link encodeDocument} into one builder; returns the prefix's two paths.
 * @param {string} prefix output path without `.bin` / `.idx`
 * @param {ArrayLike<number>[][]} documents each document as its sentences' ids
 * @param {{ dtype: TokenDtype, appendEod: boolean, eod: number }} o
 */
export function preprocess(prefix, documents, o) {
  const builder = new IndexedDatasetBuilder(`${prefix}.bin`, o.dtype);
  for (const sentences of documents) {
    const { ids, lengths } = encodeDocument(sentences, o);
    builder.addDocument(ids, lengths);
  }
  builder.finalize(`${prefix}.idx`);
  return { bin: `${prefix}.bin`, idx: `${prefix}.idx` };
}

// ---------------------------------------------------------------------------------------------
// Plug-in for scripts/make-format-fixtures.mjs

/** The format name this module writes (`info --json` "format"). */
export const FORMAT = 'megatron';

/**
 * Splits a document's text into paragraphs (the "sentences" of a `--split-sentences` run): each
 * paragraph keeps its trailing blank lines, so the sentences concatenate to the text.
 * @param {string} text
 * @returns {string[]}
 */
function paragraphs(text) {
  return text.split(/(?<=\n\n)/);
}

/**
 * Writes the Megatron fixtures: int32 dolma2 with `--append-eod` and an empty document, uint16
 * GPT-2 with `--append-eod`, a folder of three prefixes without EOD, and a sentence-level run.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @returns {import('../../make-format-fixtures.mjs').FixtureEntry[]}
 */
export function fixtures(ctx) {
  const d2 = ctx.corpus.dolma2;
  const g2 = ctx.corpus.gpt2;
  const out = [];
  {
    // A document whose text is empty is written as an index entry with no sequences.
    const docs = d2.docs.slice(0, 24).map((d) => [d.ids]);
    docs.splice(5, 0, [new Uint32Array(0)]);
    const dir = ctx.dir('megatron-int32-eod', 'dolma2');
    const dtype = optimalDtype(d2.vocabSize);
    preprocess(path.join(dir, 'corpus_text_document'), docs, { dtype, appendEod: true, eod: d2.eos });
    out.push(ctx.entry({ name: 'megatron-int32-eod', dir, format: FORMAT, dtype, corpus: d2, files: 1, documents: docs.length }));
  }
  {
    const docs = g2.docs.slice(0, 24).map((d) => [d.ids]);
    const dir = ctx.dir('megatron-uint16-eod', 'gpt2');
    const dtype = optimalDtype(g2.vocabSize);
    preprocess(path.join(dir, 'corpus_text_document'), docs, { dtype, appendEod: true, eod: g2.eos });
    out.push(ctx.entry({ name: 'megatron-uint16-eod', dir, format: FORMAT, dtype, corpus: g2, files: 1, documents: docs.length }));
  }
  {
    // A folder of prefixes (one preprocess_data.py run per input partition), no --append-eod:
    // documents come only from the index.
    const dir = ctx.dir('megatron-multi', 'dolma2');
    const dtype = optimalDtype(d2.vocabSize);
    let n = 0;
    for (let part = 0; part < 3; part++) {
      const docs = d2.docs.slice(24 + 10 * part, 34 + 10 * part).map((d) => [d.ids]);
      preprocess(path.join(dir, `part_${String(part).padStart(5, '0')}_text_document`), docs, { dtype, appendEod: false, eod: d2.eos });
      n += docs.length;
    }
    out.push(ctx.entry({ name: 'megatron-multi', dir, format: FORMAT, dtype, corpus: d2, files: 3, documents: n }));
  }
  {
    // --split-sentences: several sequences per document (paragraphs here), EOD in the last one.
    const dir = ctx.dir('megatron-sentences', 'dolma2');
    const dtype = optimalDtype(d2.vocabSize);
    const docs = d2.docs.slice(54, 66).map((d) => paragraphs(d.text).map((p) => ctx.encode(d2, p)));
    preprocess(path.join(dir, 'corpus_text_sentence'), docs, { dtype, appendEod: true, eod: d2.eos });
    out.push(ctx.entry({ name: 'megatron-sentences', dir, format: FORMAT, dtype, corpus: d2, files: 1, documents: docs.length }));
  }
  return out;
}

/**
 * Bad copies of `megatron-int32-eod`, each with one fault the reader must name: the damaged
 * file, the byte offset of the fault (any listed one is right) and the exit code 1.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @param {import('../../make-format-fixtures.mjs').FixtureEntry[]} good the entries {@link fixtures} returned
 * @returns {import('../../make-format-fixtures.mjs').BadFixtureEntry[]}
 */
export function badFixtures(ctx, good) {
  const src = good.find((e) => e.name === 'megatron-int32-eod');
  if (!src) return [];
  const idxName = 'corpus_text_document.idx';
  const binName = 'corpus_text_document.bin';
  const idx = fs.readFileSync(path.join(ctx.abs(src.path), idxName));
  const bin = fs.readFileSync(path.join(ctx.abs(src.path), binName));
  const S = Number(idx.readBigUInt64LE(IDX_OFFSETS.sequenceCount));
  const lengthsAt = IDX_OFFSETS.arrays;
  const pointersAt = lengthsAt + 4 * S;
  /** @type {{ name: string, fault: string, file: string, bytes: number[], edit: (idx: Buffer, bin: Buffer) => { idx: Buffer, bin: Buffer } }[]} */
  const cases = [
    {
      name: 'megatron-bad-magic',
      fault: 'the .idx does not begin with MMIDIDX\\x00\\x00',
      file: idxName,
      bytes: [0],
      edit: (i, b) => (i.write('MMIDIDY', 0, 'latin1'), { idx: i, bin: b }),
    },
    {
      name: 'megatron-bad-version',
      fault: 'the .idx version is 2, expected 1',
      file: idxName,
      bytes: [IDX_OFFSETS.version],
      edit: (i, b) => (i.writeBigUInt64LE(2n, IDX_OFFSETS.version), { idx: i, bin: b }),
    },
    {
      name: 'megatron-bad-dtype',
      fault: 'dtype code 9 is not one of 1..8',
      file: idxName,
      bytes: [IDX_OFFSETS.dtype],
      edit: (i, b) => (i.writeUInt8(9, IDX_OFFSETS.dtype), { idx: i, bin: b }),
    },
    {
      name: 'megatron-truncated-header',
      fault: 'the .idx ends inside its 34-byte header',
      file: idxName,
      bytes: [20, IDX_OFFSETS.arrays],
      edit: (i, b) => ({ idx: i.subarray(0, 20), bin: b }),
    },
    {
      name: 'megatron-pointer-past-end',
      fault: "the last sequence's pointer is the .bin size: its tokens lie past the end of the .bin",
      file: idxName,
      bytes: [pointersAt + 8 * (S - 1)],
      edit: (i, b) => (i.writeBigInt64LE(BigInt(b.length), pointersAt + 8 * (S - 1)), { idx: i, bin: b }),
    },
    {
      name: 'megatron-length-past-end',
      fault: "the last sequence's length runs 1,000 tokens past the end of the .bin",
      file: idxName,
      // The faulty sequence's length entry, or its pointer entry (where the run that passes the end starts).
      bytes: [lengthsAt + 4 * (S - 1), pointersAt + 8 * (S - 1)],
      edit: (i, b) => (i.writeInt32LE(i.readInt32LE(lengthsAt + 4 * (S - 1)) + 1000, lengthsAt + 4 * (S - 1)), { idx: i, bin: b }),
    },
    {
      name: 'megatron-truncated-bin',
      fault: 'the .bin is 6 bytes shorter than the .idx says',
      file: binName,
      bytes: [bin.length - 6, bin.length],
      edit: (i, b) => ({ idx: i, bin: b.subarray(0, b.length - 6) }),
    },
  ];
  return cases.map((c) => {
    const dir = ctx.dir(c.name, 'bad');
    const r = c.edit(Buffer.from(idx), Buffer.from(bin));
    fs.writeFileSync(path.join(dir, idxName), r.idx);
    fs.writeFileSync(path.join(dir, binName), r.bin);
    return { name: c.name, format: FORMAT, path: ctx.rel(dir), file: c.file, bytes: c.bytes, fault: c.fault, from: src.name };
  });
}

/**
 * The benchmark fixture: one int32 prefix of about `bytes` bytes (the dolma2 documents repeated,
 * `--append-eod`), written through the same builder in document-sized writes.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @param {number} bytes target `.bin` size
 * @returns {import('../../make-format-fixtures.mjs').FixtureEntry}
 */
export function bigFixture(ctx, bytes) {
  const d2 = ctx.corpus.dolma2;
  const dir = ctx.dir('megatron-big', 'dolma2');
  const dtype = optimalDtype(d2.vocabSize);
  const builder = new IndexedDatasetBuilder(path.join(dir, 'big_text_document.bin'), dtype);
  let written = 0;
  let documents = 0;
  for (let i = 0; written < bytes; i = (i + 1) % d2.docs.length) {
    const { ids, lengths } = encodeDocument([d2.docs[i].ids], { appendEod: true, eod: d2.eos });
    builder.addDocument(ids, lengths);
    written += ids.length * ITEMSIZE[dtype];
    documents++;
  }
  builder.finalize(path.join(dir, 'big_text_document.idx'));
  return ctx.entry({ name: 'megatron-big', dir, format: FORMAT, dtype, corpus: d2, files: 1, documents });
}
