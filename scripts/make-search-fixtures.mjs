#!/usr/bin/env node
/**
 * make-search-fixtures.mjs — writes a small dataset root that exercises every rule of the
 * stream search for the unit tests, judged by scripts/reference_search.py:
 * names at line starts / after `(` and `"` / in `Lily's`, whole-word edges, case folding
 * (ß/ẞ, Kelvin sign, long s, final sigma, Greek, title-case digraphs), an emoji ZWJ sequence,
 * CJK, overlapping occurrences, a term split across tokens in unusual ways (one token per
 * character, one token per byte, an unknown id and an added token inside), invalid UTF-8 next
 * to a match, a name beside a character outside ASCII (a word character or not, or one cut
 * across tokens), a term that would cross an EOS (must not count), a term crossing a shard edge,
 * a match in the look-ahead token, and runs of ids for `--ids`.
 *
 *   node scripts/make-search-fixtures.mjs --out DIR [--tokenizer FILE=sample/tokenizer/tokenizer.json]
 *
 * Schedule: G = 64 tokens per update, L = 16 (written to manifest.json), so the few thousand
 * tokens make dozens of updates. Shards are 37 tokens (odd, so matches cross edges), plus a
 * cut placed inside a character-split "Lily" (its offset is listed in manifest.json
 * `search_fixture.shard_edge_matches`). Text is encoded with @huggingface/tokenizers.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Tokenizer } from '@huggingface/tokenizers';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EOS = 100257;
const G = 64,
  L = 16,
  SHARD = 37;

/** GPT-2 byte-level alphabet: byte → the character the vocab uses for it. */
function byteChars() {
  const keep = (b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const out = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(keep(b) ? b : 256 + n++);
  return out;
}

/** Pieces of `text` with each character outside ASCII cut across two byte tokens (its last byte alone). */
function cutChars(text) {
  return text.split(/([^\p{ASCII}])/u).flatMap((part, i) => {
    if (i % 2 === 0) return part ? [part] : [];
    const b = [...Buffer.from(part)];
    return [{ bytes: b.slice(0, -1) }, { bytes: b.slice(-1) }];
  });
}

/** The documents: each an array of pieces; a piece is text (encoded normally) or { ids } / { bytes } / { chars }. */
function documents() {
  return [
    [
      'Lily ran to the park.\nLily saw (Lily) and "Lily" with Lily\'s dog. lily LILY Lilyana xLily Lily_ Lily2 Lily. Ben and Lily went home.',
    ],
    ['family 👨‍👩‍👧 and 👨‍👩‍👧‍👦 together, again 👨‍👩‍👧! '],
    ['東京は日本の首都です。東京タワー。京都と東京。東京'],
    ['aaaa aaa banana anana bananana'],
    ['Straße STRASSE straẞe STRAẞE ǅemal ǄEMAL ǆemal K-Kelvin K k kelvin ſtop STOP stop Σίσυφος ΣΊΣΥΦΟΣ σίσυφοσ ς Ⅻ ⅻ'],
    ['the story ends with Li'], // next document starts with "ly": "Lily" must not count across the EOS
    ['ly was not here. '],
    [
      'split: ',
      { chars: 'Lily' },
      ' and ',
      { bytes: [...Buffer.from('Lily')] },
      ' and Li',
      { ids: [100277 + 5000] },
      'ly and Li',
      { ids: [100256] },
      'ly',
    ],
    [
      'bad bytes: ',
      { bytes: [0xe2] },
      'Lily',
      ' and ',
      { bytes: [0xc3, 0xa9] },
      'Lily',
      ' and ',
      { bytes: [0xc3] },
      { bytes: [0xa9] },
      'Lily ',
      'Lily',
      { bytes: [0xe2, 0x82] },
      ' end',
    ],
    ['cut here: ', { chars: 'Lily', cut: 2 }, ' done. Ben and Lily.'],
    ['emoji split: ', { bytes: [...Buffer.from('👨‍👩‍👧')] }, ' ok'],
    ['<|fim_prefix|> as text, and as a token: ', { ids: [100258] }, ' fim_prefix'],
    // a name's neighbour is a character outside ASCII: a word character (Tomás, Benítez), not one
    // (Ben’s, Lily—, «Tom»), or one cut across tokens (the scanner reads on), in each position of
    // a group of four tokens
    ['Tomás met Benítez; Ben’s dog and Lily’s cat ran, Lily—then «Tom» and Tom… Sue·Ben Lily', ...cutChars('é and Lily’s end')],
    ...[0, 1, 2, 3].map((k) => cutChars(`${'x '.repeat(k)}so Tomás met Benítez and Lilyé and Sueña and Ben’s cat.`)),
    // a term beside a letter outside ASCII inside one token (` mañana`, ` benötigt`, ` københavn`)
    ['Mañana Ben benötigt in København a válido mañana, Ben.'],
    // an id past the vocabulary (no bytes) after a name: the character after it decides
    ...[0, 1].map((k) => ['y '.repeat(k) + 'and Lily', { ids: [100277 + 5000] }, 'ana met Tom', { ids: [100277 + 5000] }, ' and Sue.']),
  ];
}

export async function makeSearchFixtures({ out, tokenizer = path.join(REPO, 'sample', 'tokenizer', 'tokenizer.json') }) {
  const tjText = fs.readFileSync(tokenizer, 'utf8');
  const tj = JSON.parse(tjText);
  const tok = new Tokenizer(tj, {});
  const vocab = tj.model.vocab;
  const bc = byteChars();
  const byteId = (b) => vocab[bc[b]];
  const ids = [];
  const cuts = [];
  const edgeMatches = [];
  for (const doc of documents()) {
    for (const piece of doc) {
      if (typeof piece === 'string') ids.push(...tok.encode(piece).ids);
      else if (piece.ids) ids.push(...piece.ids);
      else if (piece.bytes) ids.push(...piece.bytes.map(byteId));
      else if (piece.chars) {
        const at = ids.length;
        for (const ch of piece.chars) ids.push(...tok.encode(ch).ids);
        if (piece.cut !== undefined) {
          cuts.push(at + piece.cut);
          edgeMatches.push(at);
        }
      }
    }
    ids.push(EOS);
  }
  // Fill to whole updates, then end with one look-ahead token holding " Lily".
  const filler = tok.encode(' Ben and Lily walk.').ids;
  const lily = tok.encode(' Lily').ids;
  if (lily.length !== 1) throw new Error('expected " Lily" to be one token');
  while (ids.length % G !== 0 || ids.length < 6 * G) ids.push(filler[ids.length % filler.length]);
  ids.push(lily[0]);
  // Shards: SHARD tokens each, plus the cuts inside split terms.
  const bounds = new Set([0, ids.length]);
  for (let p = SHARD; p < ids.length; p += SHARD) bounds.add(p);
  for (const c of cuts) bounds.add(c);
  const sorted = [...bounds].sort((a, b) => a - b);
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(path.join(out, 'shards'), { recursive: true });
  fs.mkdirSync(path.join(out, 'tokenizer'), { recursive: true });
  fs.writeFileSync(path.join(out, 'tokenizer', 'tokenizer.json'), tjText);
  const lines = [];
  for (let i = 0; i + 1 < sorted.length; i++) {
    const a = sorted[i],
      b = sorted[i + 1];
    const buf = Buffer.alloc((b - a) * 4);
    for (let k = a; k < b; k++) buf.writeUInt32LE(ids[k], (k - a) * 4);
    const name = `shards/tokens_${String(i).padStart(6, '0')}.u32`;
    fs.writeFileSync(path.join(out, name), buf);
    lines.push(
      JSON.stringify({ shard: name, start_token: a, num_tokens: b - a, sha256: crypto.createHash('sha256').update(buf).digest('hex') }),
    );
  }
  fs.writeFileSync(path.join(out, 'shard_manifest.jsonl'), lines.join('\n') + '\n');
  fs.writeFileSync(
    path.join(out, 'manifest.json'),
    JSON.stringify(
      {
        name: 'token-shard-inspector-search-fixture',
        created_by: 'scripts/make-search-fixtures.mjs',
        global_tokens_per_update: G,
        sequence_length: L,
        eos_token_id: EOS,
        search_fixture: { stored_tokens: ids.length, shard_edge_matches: edgeMatches, look_ahead_offset: ids.length - 1 },
      },
      null,
      2,
    ) + '\n',
  );
  return { root: out, storedTokens: ids.length, shardEdgeMatches: edgeMatches };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, tokenizer: { type: 'string' } } });
  if (!values.out) {
    console.error('usage: make-search-fixtures.mjs --out DIR [--tokenizer FILE]');
    process.exit(2);
  }
  const r = await makeSearchFixtures({ out: path.resolve(values.out), tokenizer: values.tokenizer });
  console.log(`${r.root}: ${r.storedTokens} tokens`);
}
