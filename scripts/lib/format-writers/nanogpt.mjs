/**
 * Headerless ("raw") token files: nanoGPT's `train.bin` / `val.bin`, a bare uint32 stream, and a
 * real `.npy`. Ported from:
 *
 * - karpathy/nanoGPT at commit 3adf61e154c3fe3fca428ad6bc3818b27a3b8291,
 *   `data/openwebtext/prepare.py` l. 43–74: `ids = enc.encode_ordinary(text)`,
 *   `ids.append(enc.eot_token)` (EOT 50256 **appended**), every split's documents concatenated in
 *   order into a `np.memmap` of dtype uint16 named `{split}.bin` (`train`, `val`), no header;
 *   `data/shakespeare/prepare.py` l. 19–30 writes the same layout with no EOT at all; `train.py`
 *   l. 117–122 reads it back with `np.memmap(..., dtype=np.uint16, mode='r')`.
 * - numpy 2.4.6 `numpy/lib/_format_impl.py` (the `.npy` format, version 1.0): `MAGIC_PREFIX`
 *   `\x93NUMPY` (l. 178), `ARRAY_ALIGN` 64 (l. 180), `GROWTH_AXIS_MAX_DIGITS` 21 (l. 183),
 *   `_write_array_header` (l. 445–479: the dict `{'descr': …, 'fortran_order': False, 'shape': (N,), }`
 *   in key order, then spaces for the shape to grow) and `_wrap_header` (l. 397–418: magic,
 *   version 1.0, `<H` header length, the header padded with spaces and one `\n` so that data
 *   starts at a multiple of 64 bytes).
 *
 * Also the fixture maker's plug-in for the `raw` format.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { toBytes, writeAll } from './common.mjs';

/**
 * prepare.py's `process` (openwebtext l. 43–48): the document's ids, then EOT.
 * @param {ArrayLike<number>} ids
 * @param {number} eot 50256 for GPT-2
 * @returns {Uint32Array}
 */
export function processDocument(ids, eot) {
  const out = new Uint32Array(ids.length + 1);
  out.set(ids, 0);
  out[ids.length] = eot;
  return out;
}

/**
 * One split of prepare.py (l. 59–74): every document's ids, concatenated, as headerless tokens.
 * @param {string} filename `train.bin` / `val.bin`
 * @param {Iterable<ArrayLike<number>>} documents each from {@link processDocument}
 * @param {'uint16' | 'uint32'} [dtype] uint16 in nanoGPT
 * @returns {number} tokens written
 */
export function writeSplit(filename, documents, dtype = 'uint16') {
  const fd = fs.openSync(filename, 'w');
  let n = 0;
  for (const d of documents) {
    writeAll(fd, toBytes(d, dtype));
    n += d.length;
  }
  fs.closeSync(fd);
  return n;
}

/** numpy's `.npy` constants (`_format_impl.py` l. 178–183). */
export const NPY = Object.freeze({ magic: Buffer.from('\x93NUMPY', 'latin1'), arrayAlign: 64, growthAxisMaxDigits: 21 });

/** numpy `descr` of each dtype, little-endian. */
const DESCR = { uint16: '<u2', uint32: '<u4', int32: '<i4' };

/**
 * The `.npy` version 1.0 header of a 1-D C-order array, as `np.save` writes it.
 * @param {number} length elements
 * @param {'uint16' | 'uint32' | 'int32'} dtype
 * @returns {Buffer} magic through the final `\n` (a multiple of 64 bytes)
 */
export function npyHeader(length, dtype) {
  const shape = `(${length},)`;
  let header = `{'descr': '${DESCR[dtype]}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(NPY.growthAxisMaxDigits - String(length).length);
  const hlen = Buffer.byteLength(header, 'latin1') + 1;
  const padlen = NPY.arrayAlign - ((NPY.magic.length + 2 + 2 + hlen) % NPY.arrayAlign);
  const prefix = Buffer.alloc(NPY.magic.length + 4);
  NPY.magic.copy(prefix, 0);
  prefix[6] = 1; // major
  prefix[7] = 0; // minor
  prefix.writeUInt16LE(hlen + padlen, 8);
  return Buffer.concat([prefix, Buffer.from(header + ' '.repeat(padlen) + '\n', 'latin1')]);
}

/**
 * `np.save(filename, np.array(ids, dtype))` for a 1-D array.
 * @param {string} filename
 * @param {ArrayLike<number>} ids
 * @param {'uint16' | 'uint32' | 'int32'} dtype
 */
export function writeNpy(filename, ids, dtype) {
  const fd = fs.openSync(filename, 'w');
  writeAll(fd, npyHeader(ids.length, dtype));
  writeAll(fd, toBytes(ids, dtype));
  fs.closeSync(fd);
}

// ---------------------------------------------------------------------------------------------
// Plug-in for scripts/make-format-fixtures.mjs

/** The format name this module writes (`info --json` "format"). */
export const FORMAT = 'raw';

/**
 * Concatenation of typed arrays.
 * @param {ArrayLike<number>[]} parts
 * @returns {Uint32Array}
 */
function concat(parts) {
  const out = new Uint32Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Writes the raw fixtures: nanoGPT `train.bin` + `val.bin` (GPT-2, uint16, EOT appended), a
 * headerless uint32 dolma2 stream (EOS appended, as the dataset card's shards), and the same
 * kind of stream as a real `.npy`.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @returns {import('../../make-format-fixtures.mjs').FixtureEntry[]}
 */
export function fixtures(ctx) {
  const g2 = ctx.corpus.gpt2;
  const d2 = ctx.corpus.dolma2;
  const out = [];
  {
    const dir = ctx.dir('nanogpt', 'gpt2');
    const docs = g2.docs.slice(30, 60).map((d) => processDocument(d.ids, g2.eos));
    writeSplit(path.join(dir, 'train.bin'), docs.slice(0, 27));
    writeSplit(path.join(dir, 'val.bin'), docs.slice(27));
    out.push(ctx.entry({ name: 'nanogpt', dir, format: FORMAT, dtype: 'uint16', corpus: g2, files: 2, documents: null }));
    out.push(
      ctx.entry({
        name: 'nanogpt-train-file',
        dir,
        file: 'train.bin',
        format: FORMAT,
        dtype: 'uint16',
        corpus: g2,
        files: 1,
        documents: null,
      }),
    );
  }
  {
    const dir = ctx.dir('headerless-uint32', 'dolma2');
    writeSplit(
      path.join(dir, 'tokens.bin'),
      d2.docs.slice(66, 86).map((d) => processDocument(d.ids, d2.eos)),
      'uint32',
    );
    out.push(
      ctx.entry({
        name: 'headerless-uint32',
        dir,
        file: 'tokens.bin',
        format: FORMAT,
        dtype: 'uint32',
        corpus: d2,
        files: 1,
        documents: null,
      }),
    );
  }
  {
    const dir = ctx.dir('npy-uint32', 'dolma2');
    writeNpy(path.join(dir, 'tokens.npy'), concat(d2.docs.slice(86, 100).map((d) => processDocument(d.ids, d2.eos))), 'uint32');
    out.push(
      ctx.entry({ name: 'npy-uint32', dir, file: 'tokens.npy', format: FORMAT, dtype: 'uint32', corpus: d2, files: 1, documents: null }),
    );
  }
  return out;
}
