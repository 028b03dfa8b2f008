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

/**
 * @typedef {object} DolmaDocument
 * @property {ArrayLike<number>} tokens token ids, EOS included (the tokenizer adds it)
 * @property {string} id the document's id (the `id` field of its JSON line)
 * @property {string} src path of the source file the document came from
 * @property {number} loc 1-based line number of the document in `src`
 */

/** @typedef {'uint16' | 'uint32'} DolmaDtype */

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
 * @param {{ dtype: DolmaDtype, maxTokens?: number }} opts
 * @returns {{ npy: string, csv: string, tokens: number, documents: number }[]} the files written, in order
 */
export function writeDolmaPart(dir, prefix, docs, { dtype, maxTokens = DOLMA_DEFAULT_MAX_TOKENS }) {
  fs.mkdirSync(dir, { recursive: true });
  const Arr = dtype === 'uint16' ? Uint16Array : Uint32Array;
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
    const arr = Arr.from(ids);
    fs.writeFileSync(`${base}.npy`, Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength));
    fs.writeFileSync(`${base}.csv.gz`, zlib.gzipSync(Buffer.from(rows.join(''), 'utf8'), { level: 9 }));
    files.push({ npy: `${base}.npy`, csv: `${base}.csv.gz`, tokens: ids.length, documents: rows.length });
  }
  return files;
}

/**
 * Writes a real numpy `.npy` file (with its header) holding a 1-D array, byte for byte as
 * `np.save` does (numpy/lib/format.py, `_write_array_header`, format version 1.0): magic
 * `\x93NUMPY`, version 1.0, `<H` header length, the header dict `{'descr': …, 'fortran_order':
 * False, 'shape': (N,), }` padded with spaces (plus 21 spaces of shape-growth room, numpy ≥ 1.24)
 * and ended by `\n` so that the data starts at a multiple of 64 bytes.
 * @param {string} file
 * @param {Uint16Array | Uint32Array | Int32Array} ids
 */
export function writeNumpyNpy(file, ids) {
  const descr = ids instanceof Uint16Array ? '<u2' : ids instanceof Uint32Array ? '<u4' : '<i4';
  const shape = `(${ids.length},)`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(21 - String(ids.length).length);
  const pad = 64 - ((8 + 2 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength)]));
}
