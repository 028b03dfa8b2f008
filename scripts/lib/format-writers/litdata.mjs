/**
 * Writer port of litdata's optimized token chunks (Lightning-AI/litdata, commit bef28be9,
 * `src/litdata/streaming/`), the layout `optimize(..., item_loader=TokensLoader())` writes and
 * LitGPT trains from: `chunk-{rank}-{n}.bin` files and one `index.json`.
 *
 * Followed line by line:
 * - `writer.py` `BinaryWriter._create_chunk` L208–297: a chunk is `uint32 num_items`,
 *   `uint32 offsets[num_items + 1]` (byte offsets from the start of the file: the cumulative item
 *   sizes plus the header's own size, L257–262), then the items' bytes; its `chunk_info` is
 *   `{chunk_bytes, chunk_size (items), dim (sum of the items' dims), filename}`.
 * - `item_loader.py` `TokensLoader.encode_data` L560–583: an item is the token array's raw bytes,
 *   its dim the number of tokens. `serializers.py` `NoHeaderNumpySerializer` L337–357 /
 *   `NoHeaderTensorSerializer` L278–298: data format `no_header_numpy:{i}` / `no_header_tensor:{i}`
 *   with `i` the dtype's index in `constants.py` `_NUMPY_DTYPES_MAPPING` L79–99 / `_TORCH_DTYPES_MAPPING` L56–77.
 * - `writer.py` `_should_write` L371–399 and `add_item` L321–369: with `chunk_size` set, the items
 *   (in index order) go into one chunk until adding the next would pass `chunk_size` **tokens**
 *   (TokensLoader counts `item.dim`); with `chunk_bytes`, until the next would pass that many
 *   bytes; the item that passes starts the next chunk. `done` L425–443 writes the rest.
 * - `writer.py` `get_chunk_filename` L299–302, `write_chunks_index` L415–423 (`{rank}.index.json`)
 *   and `_merge_no_wait` L474–517: the ranks' indexes merged in `sorted()` order of their file
 *   names into `index.json` = `{chunks, config, updated_at}` (`json.dump(..., sort_keys=True)`).
 * - `writer.py` `get_config` L147–157: `compression`, `chunk_size`, `chunk_bytes`, `data_format`,
 *   `data_spec` (`utilities/_pytree.py` `treespec_dumps` L1421–1439: a leaf is `[1, {"type": null,
 *   "context": null, "children_spec": []}]`), `encryption`, `item_loader`.
 * - compression (`compression.py` `ZSTDCompressor` L43–79: `zstd` is level 4, `zstd:N` level N;
 *   `writer.py` `write_chunk_to_file` L401–413): the whole chunk file compressed with python-zstd's
 *   `zstd.compress(data, level)` — one frame with its content size and no checksum
 *   (`ZSTD_compress2` with default parameters), written here by the `zstd` CLI with the same
 *   options (`--no-check --stream-size`) — named `chunk-{rank}-{n}.{compression}.bin`
 *   (`get_chunk_filename` L299–302); `chunk_bytes` stays the size before compression (L272, L289).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { copyFixture, halvedCopy, pythonJson } from './common.mjs';
import { processDocument } from './nanogpt.mjs';

/** `no_header_numpy` dtype indices: position in `_NUMPY_DTYPES_MAPPING` (constants.py L79–99). */
export const LITDATA_NUMPY_DTYPE_INDEX = Object.freeze({ int32: 2, uint16: 5, uint32: 6 });

/**
 * `no_header_tensor` dtype index of torch.int32: `{v: k for k, v in _TORCH_DTYPES_MAPPING.items()}`
 * keeps the last key of `torch.int32` / `torch.int` (15, 16), i.e. 16 (serializers.py L283).
 */
export const LITDATA_TENSOR_INT32_INDEX = 16;

/**
 * python-zstd's `zstd.compress(data, level)` for litdata's compression name (`zstd` = level 4,
 * `zstd:N` = level N, compression.py L71–79), through the `zstd` CLI.
 * @param {Buffer} data
 * @param {string} compression
 * @returns {Buffer}
 */
export function zstdCompress(data, compression) {
  const m = /^zstd(?::(\d+))?$/.exec(compression);
  if (!m) throw new Error(`litdata compresses with zstd or zstd:N only, not ${compression}`);
  const level = m[1] ?? '4';
  return execFileSync('zstd', [`-${level}`, '--no-check', `--stream-size=${data.length}`, '-q', '-c'], { input: data, maxBuffer: 1 << 30 });
}

/**
 * Writes one rank's chunks. Returns its `chunk_info` list (what `{rank}.index.json` holds).
 * @param {string} dir
 * @param {number} rank
 * @param {readonly (Uint16Array | Uint32Array | Int32Array)[]} items one token array per document, in index order
 * @param {{ chunkSize?: number, chunkBytes?: number, compression?: string | null }} limits exactly one of them (writer.py L81–82), and the compression
 * @returns {{ chunk_bytes: number, chunk_size: number, dim: number, filename: string }[]}
 */
function writeRank(dir, rank, items, { chunkSize, chunkBytes, compression = null }) {
  /** @type {{ chunk_bytes: number, chunk_size: number, dim: number, filename: string }[]} */
  const chunks = [];
  let first = 0;
  while (first < items.length) {
    // _should_write: count from `first` until the next item would pass the limit.
    let end = first;
    let bytes = 0;
    let tokens = 0;
    while (end < items.length) {
      bytes += items[end].byteLength;
      tokens += items[end].length;
      end++;
      if ((chunkBytes && chunkBytes < bytes) || (chunkSize && tokens > chunkSize)) {
        end--; // the item that passes starts the next chunk …
        if (end === first) end++; // … unless it is alone: a chunk may exceed the target (L246–248)
        break;
      }
    }
    const part = items.slice(first, end);
    const header = 4 * (1 + part.length + 1);
    const head = Buffer.alloc(header);
    head.writeUInt32LE(part.length, 0);
    let off = header;
    head.writeUInt32LE(off, 4);
    part.forEach((it, k) => {
      off += it.byteLength;
      head.writeUInt32LE(off, 8 + 4 * k);
    });
    const filename = compression ? `chunk-${rank}-${chunks.length}.${compression}.bin` : `chunk-${rank}-${chunks.length}.bin`;
    const data = Buffer.concat([head, ...part.map((it) => Buffer.from(it.buffer, it.byteOffset, it.byteLength))]);
    fs.writeFileSync(path.join(dir, filename), compression ? zstdCompress(data, compression) : data);
    chunks.push({ chunk_bytes: data.length, chunk_size: part.length, dim: part.reduce((s, it) => s + it.length, 0), filename });
    first = end;
  }
  return chunks;
}

/**
 * Writes a litdata TokensLoader dataset: each rank's chunks, then the merged `index.json`.
 * @param {string} dir output folder (created)
 * @param {readonly (readonly (Uint16Array | Uint32Array | Int32Array)[])[]} ranks per worker rank, its items (one document's tokens each)
 * @param {{ dataFormat: string, chunkSize?: number, chunkBytes?: number, updatedAt: string, compression?: string | null }} opts
 *   `dataFormat` e.g. `no_header_numpy:6`; `updatedAt` the `str(time())` litdata stores (fixed for
 *   reproducible fixtures); `compression` null, `zstd` or `zstd:N`
 * @returns {{ chunks: { chunk_bytes: number, chunk_size: number, dim: number, filename: string }[] }}
 */
export function writeLitdata(dir, ranks, { dataFormat, chunkSize, chunkBytes, updatedAt, compression = null }) {
  fs.mkdirSync(dir, { recursive: true });
  const config = {
    chunk_bytes: chunkBytes ?? null,
    chunk_size: chunkSize ?? null,
    compression,
    data_format: [dataFormat],
    data_spec: '[1, {"type": null, "context": null, "children_spec": []}]',
    encryption: null,
    item_loader: 'TokensLoader',
  };
  // _merge_no_wait: rank index files in sorted() order of their names ("10.index.json" < "2.index.json").
  const order = ranks.map((_, r) => r).sort((a, b) => (`${a}.index.json` < `${b}.index.json` ? -1 : 1));
  const perRank = ranks.map((items, r) => writeRank(dir, r, items, { chunkSize, chunkBytes, compression }));
  const chunks = order.flatMap((r) => perRank[r]);
  fs.writeFileSync(path.join(dir, 'index.json'), pythonJson({ chunks, config, updated_at: updatedAt }));
  return { chunks };
}

// ---------------------------------------------------------------------------------------------
// Plug-in for scripts/make-format-fixtures.mjs

/** The format name this module writes (`info --json` "format"). */
export const FORMAT = 'litdata';

/** The `str(time())` stored as `updated_at` (fixed: the fixtures are reproducible). */
const UPDATED_AT = '1764633600.0';

/**
 * Writes the litdata fixtures, one item per document with its EOS (LitGPT's `tokenizer.encode(text,
 * eos=True)`): dolma2 ids as `no_header_numpy:6` (uint32) from two worker ranks with `chunk_size`
 * in tokens; dolma2 ids as LitGPT's torch int32 tensors (`no_header_tensor:16`) with `chunk_bytes`;
 * GPT-2 ids as `no_header_numpy:5` (uint16) in one rank; plus one chunk opened alone; and
 * compressed copies, listed like the others (`writer.py` `write_chunk_to_file` L401–413 and
 * `compression.py` L43–79, see {@link zstdCompress}; their tokens are read from decompressed
 * copies in the user's cache, and `info` names each chunk's compressed file as `stored_as`): the
 * items of `litdata-uint32` with `compression="zstd"` (`dolma2/litdata-uint32-zstd`) and of
 * `litdata-uint16` with `"zstd:9"` (`gpt2/litdata-uint16-zstd9`).
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @returns {import('../../make-format-fixtures.mjs').FixtureEntry[]}
 */
export function fixtures(ctx) {
  const d2 = ctx.corpus.dolma2;
  const g2 = ctx.corpus.gpt2;
  const items = (
    /** @type {import('../../make-format-fixtures.mjs').Corpus} */ c,
    /** @type {number} */ a,
    /** @type {number} */ b,
    /** @type {'uint16' | 'uint32' | 'int32'} */ dtype,
  ) =>
    c.docs.slice(a, b).map((d) => {
      const t = processDocument(d.ids, c.eos);
      return dtype === 'uint16' ? Uint16Array.from(t) : dtype === 'int32' ? Int32Array.from(t) : t;
    });
  const tokens = (/** @type {ArrayLike<number>[]} */ xs) => xs.reduce((s, x) => s + x.length, 0);
  const out = [];
  {
    const dir = ctx.dir('litdata-uint32', 'dolma2');
    const ranks = [items(d2, 0, 12, 'uint32'), items(d2, 12, 24, 'uint32')];
    const chunkSize = Math.ceil(Math.max(...ranks.map(tokens)) / 3);
    const { chunks } = writeLitdata(dir, ranks, {
      dataFormat: `no_header_numpy:${LITDATA_NUMPY_DTYPE_INDEX.uint32}`,
      chunkSize,
      updatedAt: UPDATED_AT,
    });
    const zstdDir = ctx.dir('litdata-uint32-zstd', 'dolma2');
    const zipped = writeLitdata(zstdDir, ranks, {
      dataFormat: `no_header_numpy:${LITDATA_NUMPY_DTYPE_INDEX.uint32}`,
      chunkSize,
      updatedAt: UPDATED_AT,
      compression: 'zstd',
    });
    out.push(ctx.entry({ name: 'litdata-uint32', dir, format: FORMAT, dtype: 'uint32', corpus: d2, files: chunks.length, documents: 24 }));
    out.push(
      ctx.entry({
        name: 'litdata-uint32-zstd',
        dir: zstdDir,
        format: FORMAT,
        dtype: 'uint32',
        corpus: d2,
        files: zipped.chunks.length,
        documents: 24,
      }),
    );
    out.push(
      ctx.entry({
        name: 'litdata-uint32-chunk',
        dir,
        file: chunks[1].filename,
        format: FORMAT,
        dtype: 'uint32',
        corpus: d2,
        files: 1,
        documents: chunks[1].chunk_size,
      }),
    );
  }
  {
    const dir = ctx.dir('litdata-int32-tensor', 'dolma2');
    const ranks = [items(d2, 24, 40, 'int32')];
    const chunkBytes = Math.ceil((4 * tokens(ranks[0])) / 3);
    const { chunks } = writeLitdata(dir, ranks, {
      dataFormat: `no_header_tensor:${LITDATA_TENSOR_INT32_INDEX}`,
      chunkBytes,
      updatedAt: UPDATED_AT,
    });
    out.push(
      ctx.entry({ name: 'litdata-int32-tensor', dir, format: FORMAT, dtype: 'int32', corpus: d2, files: chunks.length, documents: 16 }),
    );
  }
  {
    const dir = ctx.dir('litdata-uint16', 'gpt2');
    const ranks = [items(g2, 40, 60, 'uint16')];
    const { chunks } = writeLitdata(dir, ranks, {
      dataFormat: `no_header_numpy:${LITDATA_NUMPY_DTYPE_INDEX.uint16}`,
      chunkSize: 1 << 20,
      updatedAt: UPDATED_AT,
    });
    const zstdDir = ctx.dir('litdata-uint16-zstd9', 'gpt2');
    const zipped = writeLitdata(zstdDir, ranks, {
      dataFormat: `no_header_numpy:${LITDATA_NUMPY_DTYPE_INDEX.uint16}`,
      chunkSize: Math.ceil(tokens(ranks[0]) / 2),
      updatedAt: UPDATED_AT,
      compression: 'zstd:9',
    });
    out.push(ctx.entry({ name: 'litdata-uint16', dir, format: FORMAT, dtype: 'uint16', corpus: g2, files: chunks.length, documents: 20 }));
    out.push(
      ctx.entry({
        name: 'litdata-uint16-zstd9',
        dir: zstdDir,
        format: FORMAT,
        dtype: 'uint16',
        corpus: g2,
        files: zipped.chunks.length,
        documents: 20,
      }),
    );
  }
  return out;
}

/**
 * Damaged copies of `litdata-uint32`: the second chunk's last item offset points past the end of
 * the file; the first chunk cut inside its header; `litdata-uint32-zstd` with its first compressed
 * chunk cut in half.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @param {import('../../make-format-fixtures.mjs').FixtureEntry[]} good
 * @returns {import('../../make-format-fixtures.mjs').BadFixtureEntry[]}
 */
export function badFixtures(ctx, good) {
  const from = good.find((g) => g.name === 'litdata-uint32');
  if (!from) return [];
  const src = ctx.abs(from.path);
  const copy = (/** @type {string} */ name) => copyFixture(ctx, from, name);
  const { chunks } = JSON.parse(fs.readFileSync(path.join(src, 'index.json'), 'utf8'));
  const out = [];
  {
    const dir = copy('litdata-offset-past-end');
    const c = chunks[1];
    const file = path.join(dir, c.filename);
    const b = fs.readFileSync(file);
    const at = 4 + 4 * c.chunk_size;
    b.writeUInt32LE(b.length + 4, at);
    fs.writeFileSync(file, b);
    out.push({
      name: 'litdata-offset-past-end',
      format: FORMAT,
      path: ctx.rel(dir),
      file: c.filename,
      bytes: [at],
      fault: `${c.filename}: the last item offset points 4 bytes past the end of the file`,
      from: from.name,
    });
  }
  {
    const dir = copy('litdata-truncated-header');
    const c = chunks[0];
    const file = path.join(dir, c.filename);
    fs.truncateSync(file, 6);
    out.push({
      name: 'litdata-truncated-header',
      format: FORMAT,
      path: ctx.rel(dir),
      file: c.filename,
      bytes: [6],
      fault: `${c.filename} cut to 6 bytes, inside its header`,
      from: from.name,
    });
  }
  {
    const zsrc = path.join(path.dirname(src), 'litdata-uint32-zstd');
    const zipped = JSON.parse(fs.readFileSync(path.join(zsrc, 'index.json'), 'utf8')).chunks[0].filename;
    const { dir, half } = halvedCopy(ctx, zsrc, 'litdata-zstd-truncated', zipped);
    out.push({
      name: 'litdata-zstd-truncated',
      format: FORMAT,
      path: ctx.rel(dir),
      file: zipped,
      bytes: [half],
      fault: `${zipped} cut in half: it does not decompress to its chunk`,
      from: from.name,
    });
  }
  return out;
}
