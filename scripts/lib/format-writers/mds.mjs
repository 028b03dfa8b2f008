/**
 * Writer port of MosaicML Streaming's MDS shards (mosaicml/streaming, commit 89e7bb90,
 * `streaming/base/format/`) holding the token column llm-foundry writes: `tokens` as
 * `ndarray:int32` (mosaicml/llm-foundry, commit 8c8dd48f, `llmfoundry/command_utils/data_prep/
 * convert_dataset_hf.py` L347, samples from `llmfoundry/data/data.py` `ConcatTokensDataset.__iter__`
 * L160–177: documents concatenated with BOS/EOS text tokens and cut into `max_length` samples).
 *
 * Followed line by line:
 * - `mds/writer.py` `MDSWriter.__init__` L76–89: columns in sorted name order, their encodings and
 *   fixed sizes (`None` for variable), `config_data` = `json.dumps(get_config(), sort_keys=True)`;
 *   `encode_sample` L101–117: `uint32` sizes of the variable-size columns, then each column's bytes;
 *   `encode_joint_shard` L139–144: `uint32 num_samples`, `uint32 offsets[num_samples + 1]` (byte
 *   offsets from the start of the file, past the config), the config JSON, the samples.
 * - `mds/encodings.py` `NDArray` L97–268 with a fixed dtype and no shape: `[ndim << 2 | shape
 *   dtype code: 1 byte] [shape: ndim × (u8|u16|u32|u64, the smallest that holds the largest
 *   dimension)] [values]` — so token values start 1 + 1/2/4/8 bytes into a sample's column, not
 *   aligned to 4.
 * - `base/writer.py` `Writer.write` L248–269: a new shard when the next sample (plus 4 bytes) would
 *   pass `size_limit` (default `1 << 26`, counted from `extra_bytes_per_shard`, L146–151 and
 *   mds/writer.py L89); `_name_next_shard` L165–185: `shard.{n:05}.mds` and, compressed,
 *   `shard.{n:05}.mds.{ext}`; `_hash` / `_process_file` L187–227: hashes (hex digests,
 *   `hashing.py` L55–68) of the raw bytes and of the compressed bytes, only the compressed file
 *   written; `JointWriter.flush_shard` L424–441 and `_write_index` L271–282: `index.json` =
 *   `{"shards": [...], "version": 2}`, each shard `{samples, raw_data, zip_data}` plus the config.
 * - `compression.py` L113–156: `gz` = gzip level 9, `br` = brotli level 11 (the Node zlib codecs
 *   used here); `zstd`, `bz2`, `snappy` are the others.
 */
import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { copyFixture, halvedCopy, pythonJson } from './common.mjs';

/** `NDArray._value_dtype2int` (encodings.py L131–143) for the token dtypes. */
const VALUE_DTYPE_CODE = Object.freeze({ uint16: 16, uint32: 32, int32: 33 });

/**
 * `NDArray.encode` for a 1-D array with the dtype fixed by the column (`ndarray:int32`) and a
 * dynamic shape.
 * @param {Uint16Array | Uint32Array | Int32Array} arr
 */
export function encodeNdarray1d(arr) {
  const n = arr.length;
  if (n === 0) throw new Error('Attempting to encode a numpy array with 0 elements.');
  const code = n < 1 << 8 ? 0 : n < 1 << 16 ? 1 : n < 2 ** 32 ? 2 : 3;
  const shape = Buffer.alloc(1 << code);
  if (code === 0) shape.writeUInt8(n);
  else if (code === 1) shape.writeUInt16LE(n);
  else if (code === 2) shape.writeUInt32LE(n);
  else shape.writeBigUInt64LE(BigInt(n));
  return Buffer.concat([Buffer.from([(1 << 2) | code]), shape, Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength)]);
}

/**
 * @param {string} algo a hashlib name (`sha1`, `sha256`, `md5`, …)
 * @param {Buffer} data
 */
function hexHash(algo, data) {
  return crypto.createHash(algo).update(data).digest('hex');
}

/**
 * Writes an MDS dataset with one column `tokens` (`ndarray:{dtype}`), one sample per token array.
 * @param {string} dir output folder (created)
 * @param {readonly (Uint16Array | Uint32Array | Int32Array)[]} samples
 * @param {{ dtype: 'int32' | 'uint16' | 'uint32', compression: null | 'gz' | 'br' | 'zstd', hashes: string[], sizeLimit: number, keepRaw?: boolean }} opts
 *   `hashes` sorted hashlib names (the writer requires sorted, L89–94); `keepRaw`: also leave the
 *   raw shards next to the compressed ones, as a reader's local cache does (`stream.py`
 *   `_decompress_shard_part` L319–347 writes the decompressed shard under its raw name)
 * @returns {{ shards: Record<string, unknown>[] }} the index's shard entries
 */
export function writeMds(dir, samples, { dtype, compression, hashes, sizeLimit, keepRaw = false }) {
  if (!(dtype in VALUE_DTYPE_CODE)) throw new Error(`unsupported dtype ${dtype}`);
  fs.mkdirSync(dir, { recursive: true });
  const config = {
    column_encodings: [`ndarray:${dtype}`],
    column_names: ['tokens'],
    column_sizes: [null],
    compression,
    format: 'mds',
    hashes,
    size_limit: sizeLimit,
    version: 2,
  };
  const configData = Buffer.from(pythonJson(config), 'utf8');
  const extraPerShard = 4 + 4 + configData.length;
  /** @type {Record<string, unknown>[]} */
  const shards = [];
  /** @type {Buffer[]} */
  let cur = [];
  let size = extraPerShard;
  const flush = () => {
    const n = cur.length;
    const head = Buffer.alloc(4 * (n + 2));
    head.writeUInt32LE(n, 0);
    let off = head.length + configData.length;
    head.writeUInt32LE(off, 4);
    cur.forEach((s, k) => {
      off += s.length;
      head.writeUInt32LE(off, 8 + 4 * k);
    });
    const raw = Buffer.concat([head, configData, ...cur]);
    const rawName = `shard.${String(shards.length).padStart(5, '0')}.mds`;
    const info = (/** @type {string} */ basename, /** @type {Buffer} */ data) => ({
      basename,
      bytes: data.length,
      hashes: Object.fromEntries(hashes.map((h) => [h, hexHash(h, data)])),
    });
    let zipInfo = null;
    if (compression) {
      // The defaults of compression.py: Gzip level 9, Brotli quality 11, Zstandard level 3
      // (zstd CLI: `zstd -3` writes the same frame format as python-zstd's `compress(data, 3)`).
      const zip =
        compression === 'gz'
          ? zlib.gzipSync(raw, { level: 9 })
          : compression === 'br'
            ? zlib.brotliCompressSync(raw, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } })
            : execFileSync('zstd', ['-3', '-q', '-c'], { input: raw, maxBuffer: 1 << 30 });
      zipInfo = info(`${rawName}.${compression}`, zip);
      fs.writeFileSync(path.join(dir, zipInfo.basename), zip);
      if (keepRaw) fs.writeFileSync(path.join(dir, rawName), raw);
    } else {
      fs.writeFileSync(path.join(dir, rawName), raw);
    }
    shards.push({ samples: n, raw_data: info(rawName, raw), zip_data: zipInfo, ...config });
    cur = [];
    size = extraPerShard;
  };
  for (const s of samples) {
    const col = encodeNdarray1d(s);
    const sizes = Buffer.alloc(4);
    sizes.writeUInt32LE(col.length);
    const sample = Buffer.concat([sizes, col]);
    if (sizeLimit && sizeLimit < size + sample.length + 4 && cur.length > 0) flush();
    cur.push(sample);
    size += sample.length + 4;
  }
  if (cur.length) flush();
  fs.writeFileSync(path.join(dir, 'index.json'), pythonJson({ shards, version: 2 }));
  return { shards };
}

// ---------------------------------------------------------------------------------------------
// Plug-in for scripts/make-format-fixtures.mjs

/** The format name this module writes (`info --json` "format"). */
export const FORMAT = 'mds';

/**
 * llm-foundry's `ConcatTokensDataset.__iter__` (llmfoundry/data/data.py L160–177) with no BOS
 * text and the EOS text `<|endoftext|>`: every document's ids then EOS into one buffer, cut into
 * `maxLength` samples as `np.int32`, the remainder carried over (`no_wrap` False) and the last
 * partial sample dropped.
 * @param {import('../../make-format-fixtures.mjs').Corpus} corpus
 * @param {number} from
 * @param {number} to
 * @param {number} maxLength
 * @returns {Int32Array[]}
 */
export function concatTokens(corpus, from, to, maxLength) {
  /** @type {number[]} */
  let buffer = [];
  /** @type {Int32Array[]} */
  const out = [];
  for (const d of corpus.docs.slice(from, to)) {
    for (const id of d.ids) buffer.push(id);
    buffer.push(corpus.eos);
    while (buffer.length >= maxLength) {
      out.push(Int32Array.from(buffer.slice(0, maxLength)));
      buffer = buffer.slice(maxLength);
    }
  }
  return out;
}

/**
 * Writes the MDS fixtures (`tokens` as `ndarray:int32`, as llm-foundry writes it): dolma2 ids in
 * 2,048-token samples, uncompressed, shards of at most 64 KiB, sha1 + sha256 hashes; GPT-2 ids in
 * 1,000-token samples compressed with gz and cached raw next to the compressed shards; GPT-2 ids
 * compressed with gz only (written to `gpt2/mds-gz-only`, not listed: the format tests read it
 * against the reference over a copy decompressed by Python's gzip); the samples of `mds-int32`
 * compressed with zstd (`dolma2/mds-int32-zstd`) and with brotli (`dolma2/mds-int32-br`), not
 * listed either (the numpy reference reads raw shards only; `mdsCompression.test.ts` compares
 * their ids with `mds-int32`'s); plus one shard opened alone.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @returns {import('../../make-format-fixtures.mjs').FixtureEntry[]}
 */
export function fixtures(ctx) {
  const d2 = ctx.corpus.dolma2;
  const g2 = ctx.corpus.gpt2;
  const out = [];
  {
    const dir = ctx.dir('mds-int32', 'dolma2');
    const samples = concatTokens(d2, 40, 70, 2048);
    const { shards } = writeMds(dir, samples, {
      dtype: 'int32',
      compression: null,
      hashes: ['sha1', 'sha256'],
      sizeLimit: 1 << 16,
    });
    for (const compression of /** @type {const} */ (['zstd', 'br'])) {
      writeMds(ctx.dir(`mds-int32-${compression}`, 'dolma2'), samples, {
        dtype: 'int32',
        compression,
        hashes: ['sha1', 'sha256'],
        sizeLimit: 1 << 16,
      });
    }
    out.push(ctx.entry({ name: 'mds-int32', dir, format: FORMAT, dtype: 'int32', corpus: d2, files: shards.length, documents: null }));
    const second = /** @type {{ basename: string }} */ (shards[1].raw_data).basename;
    out.push(
      ctx.entry({ name: 'mds-int32-shard', dir, file: second, format: FORMAT, dtype: 'int32', corpus: d2, files: 1, documents: null }),
    );
  }
  {
    const dir = ctx.dir('mds-int32-gz-cached', 'gpt2');
    const { shards } = writeMds(dir, concatTokens(g2, 60, 80, 1000), {
      dtype: 'int32',
      compression: 'gz',
      hashes: ['md5', 'sha1'],
      sizeLimit: 1 << 15,
      keepRaw: true,
    });
    out.push(
      ctx.entry({ name: 'mds-int32-gz-cached', dir, format: FORMAT, dtype: 'int32', corpus: g2, files: shards.length, documents: null }),
    );
  }
  writeMds(ctx.dir('mds-gz-only', 'gpt2'), concatTokens(g2, 60, 70, 1000), {
    dtype: 'int32',
    compression: 'gz',
    hashes: ['sha1'],
    sizeLimit: 1 << 15,
  });
  return out;
}

/**
 * Damaged copies of `mds-int32`: the second shard's third sample offset points past the end of
 * the file; the first shard cut inside its offsets.
 * @param {import('../../make-format-fixtures.mjs').FixtureContext} ctx
 * @param {import('../../make-format-fixtures.mjs').FixtureEntry[]} good
 * @returns {import('../../make-format-fixtures.mjs').BadFixtureEntry[]}
 */
export function badFixtures(ctx, good) {
  const from = good.find((g) => g.name === 'mds-int32');
  if (!from) return [];
  const copy = (/** @type {string} */ name) => copyFixture(ctx, from, name);
  const out = [];
  {
    const dir = copy('mds-offset-past-end');
    const file = path.join(dir, 'shard.00001.mds');
    const b = fs.readFileSync(file);
    b.writeUInt32LE(b.length + 100, 4 + 4 * 3);
    fs.writeFileSync(file, b);
    out.push({
      name: 'mds-offset-past-end',
      format: FORMAT,
      path: ctx.rel(dir),
      file: 'shard.00001.mds',
      bytes: [16],
      fault: 'shard.00001.mds: a sample offset points past the end of the file',
      from: from.name,
    });
  }
  {
    // The zstd copy of mds-int32 with its first compressed shard cut in half.
    const src = ctx.abs(from.path).replace(/mds-int32$/, 'mds-int32-zstd');
    const { dir, half } = halvedCopy(ctx, src, 'mds-zstd-truncated', 'shard.00000.mds.zstd');
    out.push({
      name: 'mds-zstd-truncated',
      format: FORMAT,
      path: ctx.rel(dir),
      file: 'shard.00000.mds.zstd',
      bytes: [half],
      fault: 'shard.00000.mds.zstd cut in half: it does not decompress to its raw shard',
      from: from.name,
    });
  }
  {
    const dir = copy('mds-truncated-header');
    const file = path.join(dir, 'shard.00000.mds');
    fs.truncateSync(file, 10);
    out.push({
      name: 'mds-truncated-header',
      format: FORMAT,
      path: ctx.rel(dir),
      file: 'shard.00000.mds',
      bytes: [10],
      fault: 'shard.00000.mds cut to 10 bytes, inside its sample offsets',
      from: from.name,
    });
  }
  return out;
}
