#!/usr/bin/env node
/**
 * make-bad-inputs.mjs — the bad-input corpus: one small dataset folder per hostile or
 * broken input, and `cases.json` saying how the CLI (and the core) must answer each:
 *
 *   node scripts/make-bad-inputs.mjs [--out DIR=out/fixtures/bad-inputs] [--sample DIR=sample]
 *
 * Every case is a copy of a valid base — three shards of 1,000 real tokens (the first 3,000 of
 * the sample), a manifest with their sha256, a manifest.json with G = 512, L = 128, and a small
 * byte-level BPE tokenizer.json (256 byte tokens, EOS 100257, 100,278 ids like dolma2) — with one
 * thing wrong.
 *
 * cases.json: `{ generated_by, cases: [{ name, dir, description, args, code, expect, core? }] }`:
 * - `args`: CLI arguments, `{root}` standing for the case folder (absolute);
 * - `code`: the exit code (0 ok, 1 data fault, 2 usage);
 * - `expect`: a regular expression (source) the one-line stderr (or stdout for `info`) must match:
 *   it names the file and the line, byte offset or field, or the flag;
 * - `core`: `'dataset'` when `openDataset(root)` must report a problem matching `expect` (or throw a
 *   typed error matching it), `'tokenizer'` when `loadTokenizer` + `encode` must throw a DataError;
 * - `before`: CLI runs made first (e.g. `index`, to have a stream index to damage);
 * - `damageIndex`: `{ shard, how }`, what the test does to that shard's stream-index entry after
 *   `before` (`eos-count-plus-5`: the count edited in place; `copy-of-shard-0`: shard 0's entry
 *   copied over it).
 * - `stdout`: where standard output goes (`'/dev/full'`; default a pipe);
 * - `scratch`: files (name → content, or `{ link: target }`, or `{ fifo: true }`) made in the case's
 *   scratch folder `{scratch}` (outside the case folder) before the run; `scratchAfter`:
 *   `{ unchanged?: string[], absent?: string[], present?: string[] }` checked after it;
 * - `env`: environment variables for the run (`{root}`, `{scratch}` replaced);
 * - `spawn`: run `dist/cli.js` as a process instead of in-process: `'head'` closes its stdout
 *   after the first chunk (EPIPE: exit 0, nothing on stderr), `'interrupt'` sends SIGINT once the
 *   process listens for it (exit 130) while it waits on a standard input that never ends.
 * The unit test (test/unit/badInputs.test.ts) also hashes every file of the case folder before
 * and after: nothing may change.
 */
import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from './make-sample.mjs';
import { readTokens } from './make-broken-fixtures.mjs';

const CREATED_BY = 'scripts/make-bad-inputs.mjs';
const SMALL = 1000;

function u32le(ids) {
  const b = Buffer.alloc(ids.length * 4);
  ids.forEach((v, i) => b.writeUInt32LE(v >>> 0, 4 * i));
  return b;
}
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');
const nest = (n, open = '[', close = ']') => open.repeat(n) + close.repeat(n);

/** A small byte-level BPE tokenizer.json: the 256 byte tokens, no merges, EOS as id 256. */
export function miniTokenizer() {
  const vocab = {};
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const keep = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    vocab[String.fromCharCode(keep ? b : 256 + n++)] = b;
  }
  return {
    version: '1.0',
    added_tokens: [{ id: 256, content: '<|endoftext|>', special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: [],
    },
  };
}

/**
 * Writes the corpus.
 * @param {{ out?: string, sampleRoot?: string, quiet?: boolean }} options
 * @returns {Promise<{ out: string, cases: object[] }>}
 */
export async function makeBadInputs(options = {}) {
  const out = path.resolve(options.out ?? path.join(REPO_ROOT, 'out', 'fixtures', 'bad-inputs'));
  const sampleRoot = path.resolve(options.sampleRoot ?? path.join(REPO_ROOT, 'sample'));
  if (fs.existsSync(out)) {
    if (!fs.existsSync(path.join(out, 'cases.json')))
      throw new Error(`${out} exists and is not a corpus of ${CREATED_BY}; not deleting it`);
    fs.rmSync(out, { recursive: true, force: true });
  }
  fs.mkdirSync(out, { recursive: true });
  const tokens = readTokens(sampleRoot, 0, 3 * SMALL);
  const shardBufs = [0, 1, 2].map((i) => u32le(Array.from(tokens.subarray(i * SMALL, (i + 1) * SMALL))));
  const shardName = (i) => `shards/tokens_${String(i).padStart(6, '0')}.u32`;
  const entries = [0, 1, 2].map((i) => ({ shard: shardName(i), start_token: i * SMALL, num_tokens: SMALL, sha256: sha(shardBufs[i]) }));
  const line = (e) => JSON.stringify(e);
  const goodManifest = entries.map(line).join('\n') + '\n';
  const goodProv =
    JSON.stringify({ name: 'bad-input base', global_tokens_per_update: 512, sequence_length: 128, eos_token_id: 100257 }, null, 2) + '\n';
  // The base tokenizer: the small byte-level one with dolma2's EOS id and vocabulary size
  // (100,278 ids; the ids in between are holes), so the sample's ids fit and it loads in ms.
  const baseTok = miniTokenizer();
  baseTok.added_tokens = [
    { id: 100257, content: '<|endoftext|>', special: true },
    { id: 100277, content: '<|pad|>', special: true },
  ];

  const cases = [];
  /**
   * @param {string} name
   * @param {string} description
   * @param {{ args: string[], code: number, expect: string, core?: string, stream?: string, report?: boolean, stdout?: string, env?: Record<string, string>, scratch?: object, scratchAfter?: object, spawn?: string, before?: string[][], damageIndex?: { shard: number, how: string } }} check
   * @param {((dir: string) => void) | null} [mutate] changes the copy of the base
   * @param {{ manifest?: string, prov?: string|null, tokenizer?: object|string|null, files?: Record<string, Buffer|string> }} [base]
   */
  const add = (name, description, check, mutate, base = {}) => {
    const dir = path.join(out, name);
    fs.mkdirSync(path.join(dir, 'shards'), { recursive: true });
    shardBufs.forEach((b, i) => fs.writeFileSync(path.join(dir, shardName(i)), b));
    fs.writeFileSync(path.join(dir, 'shard_manifest.jsonl'), base.manifest ?? goodManifest);
    if (base.prov !== null) fs.writeFileSync(path.join(dir, 'manifest.json'), base.prov ?? goodProv);
    fs.mkdirSync(path.join(dir, 'tokenizer'));
    const tok = base.tokenizer === undefined ? baseTok : base.tokenizer;
    if (tok !== null) fs.writeFileSync(path.join(dir, 'tokenizer', 'tokenizer.json'), typeof tok === 'string' ? tok : JSON.stringify(tok));
    for (const [f, content] of Object.entries(base.files ?? {})) {
      fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      fs.writeFileSync(path.join(dir, f), content);
    }
    mutate?.(dir);
    cases.push({ name, dir: name, description, ...check });
  };
  const M = 'shard_manifest\\.jsonl';
  const lineMsg = (n) => `${M} line ${n}\\b`;
  const withLine = (n, text) => entries.map((e, i) => (i === n - 1 ? text : line(e))).join('\n') + '\n';
  const info = (expect, core = 'dataset') => ({ args: ['info', '{root}'], code: 1, expect, core });

  // ---- shard_manifest.jsonl: one bad line (info exits 1 and names the line; the core reports the same problem)
  add('line-not-json', 'Line 2 is cut off mid-object.', info(lineMsg(2) + '.*not valid JSON'), null, {
    manifest: withLine(2, '{"shard": "shards/tokens_000001.u32", "start_'),
  });
  add(
    'line-deep-array',
    'Line 2 holds a value nested 100,000 arrays deep (was: Maximum call stack size exceeded).',
    info(lineMsg(2) + '.*nested deeper than'),
    null,
    { manifest: withLine(2, `{"shard": "x", "start_token": 1000, "num_tokens": 1000, "x": ${nest(100_000)}}`) },
  );
  add('line-deep-object', 'Line 2 is objects nested 100,000 deep.', info(lineMsg(2) + '.*nested deeper than'), null, {
    manifest: withLine(2, '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)),
  });
  add('line-deep-unclosed', 'Line 2 opens 200,000 arrays and never closes them.', info(lineMsg(2) + '.*nested deeper than'), null, {
    manifest: withLine(2, '['.repeat(200_000)),
  });
  add('line-array', 'Line 2 is a JSON array.', info(lineMsg(2) + '.*expected a JSON object'), null, {
    manifest: withLine(2, JSON.stringify([shardName(1), 1000, 1000])),
  });
  add('line-number', 'Line 2 is a bare number.', info(lineMsg(2) + '.*expected a JSON object'), null, { manifest: withLine(2, '42') });
  add('line-string', 'Line 2 is a JSON string.', info(lineMsg(2) + '.*expected a JSON object'), null, {
    manifest: withLine(2, '"shards/tokens_000001.u32"'),
  });
  add('line-null', 'Line 2 is null.', info(lineMsg(2) + '.*expected a JSON object'), null, { manifest: withLine(2, 'null') });
  add('line-binary', 'Line 2 is binary garbage.', info(lineMsg(2) + '.*not valid JSON'), null, {
    manifest: withLine(2, '\u0000\u00ff\u0001{]'),
  });
  for (const f of ['shard', 'start_token', 'num_tokens']) {
    /** @type {Record<string, unknown>} */
    const rest = { ...entries[1] };
    delete rest[f];
    add(`missing-${f.replace('_', '-')}`, `Line 2 has no ${f}.`, info(lineMsg(2) + `.*missing field.*${f}`), null, {
      manifest: withLine(2, JSON.stringify(rest)),
    });
  }
  const badField = (name, desc, patch, what) =>
    add(name, desc, info(lineMsg(2) + `.*${what}`), null, { manifest: withLine(2, JSON.stringify({ ...entries[1], ...patch })) });
  badField('shard-empty', 'shard is "".', { shard: '' }, 'shard must be a non-empty string');
  badField('shard-number', 'shard is a number.', { shard: 7 }, 'shard must be a non-empty string');
  badField('shard-too-long', 'shard is 5,000 characters.', { shard: 'a/'.repeat(2500) }, 'characters long');
  badField('start-negative', 'start_token is -1.', { start_token: -1 }, 'start_token must be a non-negative integer');
  badField('start-float', 'start_token is 1000.5.', { start_token: 1000.5 }, 'start_token must be a non-negative integer');
  badField('start-string', 'start_token is "1000".', { start_token: '1000' }, 'start_token must be a non-negative integer');
  badField('num-huge', 'num_tokens is 2^60.', { num_tokens: 2 ** 60 }, 'num_tokens .*2\\^53');
  badField('sha-short', 'sha256 has 63 digits.', { sha256: entries[1].sha256.slice(1) }, 'sha256 must be 64 hex digits');
  badField('sha-nonhex', 'sha256 has a z.', { sha256: 'z' + entries[1].sha256.slice(1) }, 'sha256 must be 64 hex digits');
  add('num-1e400', 'num_tokens is 1e400 (Infinity when parsed).', info(lineMsg(2) + '.*num_tokens'), null, {
    manifest: withLine(2, line(entries[1]).replace(/"num_tokens":\d+/, '"num_tokens":1e400')),
  });
  // paths that leave the root (item 5)
  badField('outside-dotdot', 'shard climbs out with ../', { shard: '../../etc/passwd' }, 'climbs out with \\.\\..*not read');
  badField('outside-absolute', 'shard is an absolute path.', { shard: '/etc/passwd' }, 'is an absolute path.*not read');
  add(
    'outside-symlink',
    'shards/tokens_000001.u32 is a symbolic link to /etc/hostname.',
    info(lineMsg(2) + '.*symbolic link.*not read'),
    (d) => {
      fs.rmSync(path.join(d, shardName(1)));
      fs.symlinkSync('/etc/hostname', path.join(d, shardName(1)));
    },
  );
  add(
    'outside-symlink-dir',
    'shards/ is a symbolic link to a folder outside the root.',
    info(lineMsg(1) + '.*symbolic link.*not read'),
    (d) => {
      const elsewhere = path.join(out, `_elsewhere-${path.basename(d)}`);
      fs.renameSync(path.join(d, 'shards'), elsewhere);
      fs.symlinkSync(elsewhere, path.join(d, 'shards'));
    },
  );
  // hostile names: control characters and markup end up shown as text (item 4)
  badField(
    'name-escape-seq',
    'shard name holds a terminal escape sequence (missing file).',
    { shard: 'shards/\u001b[2J\u001b]0;pwned\u0007.u32' },
    '⟨ESC⟩\\[2J⟨ESC⟩\\]0;pwned⟨BEL⟩.*does not exist',
  );
  badField(
    'name-csi-bidi',
    'shard name holds C1 CSI and a bidi override (missing file).',
    { shard: 'shards/\u009b31m\u202eevil.u32' },
    '⟨U\\+009B⟩31m⟨U\\+202E⟩evil.*does not exist',
  );
  badField(
    'name-markdown-link',
    'shard name is a command link (missing file).',
    { shard: '[click](command:workbench.action.terminal.new).u32' },
    'does not exist',
  );
  // structure of the list
  add('duplicate', 'Line 3 lists shard 1 again.', info(lineMsg(3) + '.*already listed on line 2'), null, {
    manifest: [line(entries[0]), line(entries[1]), line({ ...entries[1], start_token: 2000 })].join('\n') + '\n',
  });
  add('gap', 'Shard 1 is missing from the list: tokens 1,000–2,000 are in no shard.', info(lineMsg(2) + '.*gap of 1,000 tokens'), null, {
    manifest: [line(entries[0]), line(entries[2])].join('\n') + '\n',
  });
  add('overlap', 'Shard 2 starts inside shard 1.', info(lineMsg(3) + '.*inside'), null, {
    manifest: withLine(3, line({ ...entries[2], start_token: 1500 })),
  });
  add('not-from-zero', 'The first shard starts at token 5.', info(lineMsg(1) + '.*expected 0'), null, {
    manifest: entries.map((e) => line({ ...e, start_token: e.start_token + 5 })).join('\n') + '\n',
  });
  add('empty-manifest', 'shard_manifest.jsonl is empty.', info(`${M}: no shard lines`), null, { manifest: '' });
  add('blank-manifest', 'shard_manifest.jsonl holds only blank lines.', info(`${M}: no shard lines`), null, { manifest: '\n\n  \n' });
  // files on disk
  add('missing-file', 'Shard 1 is not on disk.', info(lineMsg(2) + '.*does not exist'), (d) => fs.rmSync(path.join(d, shardName(1))));
  add('truncated', 'Shard 1 is 400 bytes short.', info(`tokens_000001\\.u32: size 3,600 bytes.*${M} line 2`), (d) =>
    fs.truncateSync(path.join(d, shardName(1)), 3600),
  );
  add(
    'not-multiple-of-4',
    'Shard 1 has 3 trailing bytes.',
    info(`tokens_000001\\.u32 \\(${M} line 2\\): size 4,003 bytes is not a multiple of 4`),
    (d) => fs.appendFileSync(path.join(d, shardName(1)), Buffer.from([1, 2, 3])),
  );
  add('shard-is-folder', 'shards/tokens_000001.u32 is a folder.', info(lineMsg(2) + '.*cannot read shard file'), (d) => {
    fs.rmSync(path.join(d, shardName(1)));
    fs.mkdirSync(path.join(d, shardName(1)));
  });

  // ---- manifest.json (info exits 1 naming manifest.json; the value is ignored)
  const prov = (name, desc, text, what) => add(name, desc, info(`manifest\\.json${what}`), null, { prov: text });
  prov('prov-not-json', 'manifest.json is cut off.', '{"name": "x",\n"global_tokens_per_update": ', ' line 2: not valid JSON');
  prov(
    'prov-deep',
    'manifest.json nests 100,000 objects.',
    '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000),
    ' line 1: not valid JSON \\(nested deeper than',
  );
  prov(
    'prov-deep-line3',
    'manifest.json nests 100,000 arrays on line 3.',
    `{\n"name": "x",\n"x": ${nest(100_000)}\n}`,
    ' line 3: not valid JSON \\(nested deeper than',
  );
  prov('prov-array', 'manifest.json is an array.', '[1, 2]', ' line 1: not a JSON object');
  prov(
    'prov-g-float',
    'global_tokens_per_update is 1.5.',
    JSON.stringify({ global_tokens_per_update: 1.5 }),
    ': global_tokens_per_update = 1\\.5 is not a positive integer',
  );
  prov(
    'prov-g-negative',
    'global_tokens_per_update is -512.',
    JSON.stringify({ global_tokens_per_update: -512 }),
    ': global_tokens_per_update = -512 is not a positive integer',
  );
  prov(
    'prov-g-huge',
    'global_tokens_per_update is 2^40 (the 5.4 GB update).',
    JSON.stringify({ global_tokens_per_update: 2 ** 40, sequence_length: 1024 }),
    ': global_tokens_per_update = 1,099,511,627,776 is more than 16,777,216',
  );
  prov('prov-l-zero', 'sequence_length is 0.', JSON.stringify({ sequence_length: 0 }), ': sequence_length = 0 is not a positive integer');
  prov(
    'prov-g-not-multiple',
    'G = 1000 is not a multiple of L = 128.',
    JSON.stringify({ global_tokens_per_update: 1000, sequence_length: 128 }),
    ': tokens per update 1,000 .*not a multiple of the sequence length 128',
  );
  prov(
    'prov-eos-huge',
    'eos_token_id is 2^32.',
    JSON.stringify({ eos_token_id: 2 ** 32 }),
    ': eos_token_id = 4294967296 is not a token id',
  );
  prov(
    'prov-eos-string',
    'eos_token_id is a string.',
    JSON.stringify({ eos_token_id: '<|endoftext|>' }),
    ': eos_token_id = "<\\|endoftext\\|>" is not a token id',
  );
  // ---- verification.json
  const verif = (name, desc, text, what) =>
    add(name, desc, info(`verification\\.json${what}`), null, { files: { 'verification.json': text } });
  verif('verif-not-json', 'verification.json is not JSON.', 'sha256: all good\n', ': not valid JSON');
  verif(
    'verif-deep',
    'verification.json nests 100,000 arrays.',
    `{"checks": ${nest(100_000)}}`,
    ' line 1: not valid JSON \\(nested deeper than',
  );
  verif('verif-number', 'verification.json is a number.', '42\n', ' line 1: not a JSON object');

  // ---- tokenizer.json (decode/encode exit 1 naming the file and field)
  const T = 'tokenizer\\.json';
  const mini = miniTokenizer();
  const tokCase = (name, desc, tok, args, what) =>
    add(name, desc, { args, code: 1, expect: `${T}${what}`, core: 'tokenizer' }, null, { tokenizer: tok });
  const decodeArgs = ['decode', '{root}', '65', '66'];
  const encodeArgs = ['encode', '{root}', 'hi there'];
  tokCase('tok-not-json', 'tokenizer.json is cut off.', '{"model": {"type": "BPE",\n"vocab": {', decodeArgs, ' line 2: not valid JSON');
  tokCase(
    'tok-deep',
    'tokenizer.json nests 100,000 arrays.',
    `{"model": ${nest(100_000)}}`,
    decodeArgs,
    ' line 1: not valid JSON \\(nested deeper than',
  );
  tokCase('tok-no-vocab', 'model has no vocab.', { ...mini, model: { type: 'BPE', merges: [] } }, decodeArgs, ': no model\\.vocab');
  tokCase(
    'tok-huge-id',
    'a vocab id is 4e9 (would allocate gigabytes).',
    { ...mini, model: { ...mini.model, vocab: { ...mini.model.vocab, x: 4e9 } } },
    decodeArgs,
    ': model\\.vocab\\["x"\\] has id 4000000000',
  );
  tokCase(
    'tok-added-not-array',
    'added_tokens is an object.',
    { ...mini, added_tokens: { id: 256 } },
    decodeArgs,
    ': added_tokens is not an array',
  );
  tokCase('tok-decoder', 'decoder is WordPiece.', { ...mini, decoder: { type: 'WordPiece' } }, decodeArgs, ': decoder is WordPiece');
  tokCase(
    'tok-no-merges',
    'model.merges is missing (encoding needs it).',
    { ...mini, model: { ...mini.model, merges: undefined } },
    encodeArgs,
    ': field model\\.merges is missing',
  );
  tokCase(
    'tok-bad-merge',
    'a merge is a number.',
    { ...mini, model: { ...mini.model, merges: [42] } },
    encodeArgs,
    ': field model\\.merges\\[0\\] is 42',
  );
  tokCase(
    'tok-unknown-pretok',
    'the pre-tokenizer type is Frobnicate.',
    { ...mini, pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Frobnicate' }] } },
    encodeArgs,
    ': field pre_tokenizer\\.pretokenizers\\[0\\]\\.type is "Frobnicate", an unknown pre-tokenizer type',
  );
  tokCase(
    'tok-split-no-pattern',
    'a Split pre-tokenizer has no pattern.',
    { ...mini, pre_tokenizer: { type: 'Split', behavior: 'Isolated' } },
    encodeArgs,
    ': field pre_tokenizer\\.pattern is missing',
  );
  tokCase(
    'tok-catastrophic-regex',
    'the split regex (a+)+$ backtracks exponentially on "aaaa…ab".',
    {
      ...mini,
      pre_tokenizer: {
        type: 'Sequence',
        pretokenizers: [{ type: 'Split', pattern: { Regex: '(a+)+$' }, behavior: 'Isolated', invert: false }, mini.pre_tokenizer],
      },
    },
    ['encode', '{root}', 'a'.repeat(40) + 'b', '--time-limit', '2'],
    ': encoding 41 characters took longer than the 2 s time limit; the pattern pre_tokenizer\\.pretokenizers\\[0\\]\\.pattern\\.Regex = "\\(a\\+\\)\\+\\$"',
  );

  // ---- shard contents: dtype mix-ups (item 12) and reads that hit a fault (offsets)
  const narrow = Array.from(readTokens(sampleRoot, 0, 20 * SMALL))
    .filter((v) => v < 65536)
    .slice(0, 6 * SMALL);
  const as16 = Buffer.alloc(narrow.length * 2);
  narrow.forEach((v, i) => as16.writeUInt16LE(v, 2 * i));
  const wideIds = Array.from(tokens.subarray(0, 1500));
  const as32as16 = u32le(wideIds.flatMap((v) => [v & 0xffff, v >>> 16]));
  const dtypeManifest = (buf) =>
    [0, 1, 2]
      .map((i) =>
        line({ shard: shardName(i), start_token: i * SMALL, num_tokens: SMALL, sha256: sha(buf.subarray(i * 4000, (i + 1) * 4000)) }),
      )
      .join('\n') + '\n';
  const dtypeCase = (name, desc, buf, what) =>
    add(
      name,
      desc,
      { args: ['info', '{root}'], code: 1, expect: `tokens_000000\\.u32.*${what}` },
      (d) => {
        for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(d, shardName(i)), buf.subarray(i * 4000, (i + 1) * 4000));
      },
      { manifest: dtypeManifest(buf) },
    );
  dtypeCase(
    'dtype-uint16-as-uint32',
    'uint16 ids stored two per uint32 (reads as ids in the billions).',
    as16.subarray(0, 12000),
    'uint16 data read as uint32',
  );
  dtypeCase(
    'dtype-uint32-as-uint16',
    'uint32 ids written as uint16 pairs (every other id 0).',
    as32as16.subarray(0, 12000),
    'uint32 data read as uint16',
  );
  add(
    'read-truncated',
    'tokens across a truncated shard: the short read names the file and byte offset.',
    { args: ['tokens', '{root}', '--start', '1890', '--count', '20'], code: 1, expect: 'tokens_000001\\.u32: short read at byte 3,600' },
    (d) => fs.truncateSync(path.join(d, shardName(1)), 3600),
  );
  add(
    'read-gap',
    'tokens across a manifest gap: the message names the hole.',
    { args: ['tokens', '{root}', '--start', '990', '--count', '20'], code: 1, expect: 'token 1,000 is in no shard' },
    null,
    { manifest: [line(entries[0]), line(entries[2])].join('\n') + '\n' },
  );

  // ---- command lines (exit 2, naming the flag, folder or file)
  const usage = (name, desc, args, expect, mutate) => add(name, desc, { args, code: 2, expect }, mutate);
  usage(
    'usage-shards-subfolder',
    'info on the shards/ folder: no manifest there, the parent is suggested.',
    ['info', '{root}/shards'],
    'shards: no shard_manifest\\.jsonl here.*probably',
  );
  usage(
    'usage-verify-lone-u32',
    'verify on a lone .u32: needs a dataset folder.',
    ['verify', `{root}/${shardName(0)}`],
    'tokens_000000\\.u32 is a file; verify needs a dataset folder',
  );
  usage(
    'usage-g-too-large',
    '--tokens-per-update 20,000,000 on a lone shard.',
    ['info', `{root}/${shardName(0)}`, '--tokens-per-update', '20000000'],
    '--tokens-per-update: 20,000,000 is more than 16,777,216',
  );
  usage(
    'usage-l-not-divisor',
    '--tokens-per-update 1000 --sequence-length 128.',
    ['info', `{root}/${shardName(0)}`, '--tokens-per-update', '1000', '--sequence-length', '128'],
    '--tokens-per-update 1,000 is not a multiple of --sequence-length 128',
  );
  usage(
    'usage-g-zero',
    '--tokens-per-update 0.',
    ['info', '{root}', '--tokens-per-update', '0'],
    '--tokens-per-update: 0 is not a positive integer',
  );
  usage('usage-eos-huge', '--eos 99999999999.', ['info', '{root}', '--eos', '99999999999'], '--eos: 99999999999 is not a token id');
  usage('usage-update-negative', 'update -1.', ['update', '{root}', '-1'], 'update must be ≥ 0');
  usage('usage-update-1e309', 'update 1e309.', ['update', '{root}', '1e309'], 'update: 1e309 is too large');
  usage('usage-update-range', 'update 99 of 5.', ['update', '{root}', '99'], 'update 99 is outside 0\\.\\.4');
  usage(
    'usage-update-json-text',
    'update --json --text.',
    ['update', '{root}', '0', '--json', '--text'],
    '--json and --text exclude each other',
  );
  usage(
    'usage-tokens-json-text',
    'tokens --json --text.',
    ['tokens', '{root}', '--start', '0', '--count', '5', '--json', '--text'],
    '--json and --text exclude each other',
  );
  usage(
    'usage-tokens-start-word',
    'tokens --start abc.',
    ['tokens', '{root}', '--start', 'abc', '--count', '5'],
    '--start: "abc" is not a number',
  );
  usage(
    'usage-tokens-past-end',
    'tokens past the stream end.',
    ['tokens', '{root}', '--start', '2990', '--count', '20'],
    '--start 2,990 --count 20 runs past the stream end \\(3,000 tokens\\)',
  );
  usage(
    'usage-sequence-range',
    'update 0 --sequence 4 (L=128, G=512: 4 sequences).',
    ['update', '{root}', '0', '--sequence', '4'],
    '--sequence 4 is outside 0\\.\\.3',
  );
  usage('usage-no-such-root', 'info on a folder that does not exist.', ['info', '{root}/nope'], 'nope: no such file or folder');
  usage(
    'usage-encode-missing-file',
    'encode --file that does not exist.',
    ['encode', '{root}', '--file', '{root}/nope.txt'],
    '--file .*nope\\.txt: no such file',
  );
  usage('usage-decode-bad-id', 'decode 12x.', ['decode', '{root}', '12x'], 'id "12x": "12x" is not a number');

  // ==== Trusted without checking (merge parts, index entries, overlaps, longer shards): kept together at the end of the list.
  // ---- overlapping manifest entries: reads of the tokens two shards claim fail, naming both lines
  const overlapManifest = withLine(2, line({ ...entries[1], start_token: SMALL - 1 }));
  const claimed = `token ${(SMALL - 1).toLocaleString('en-US')} is claimed by two shards: tokens_000001\\.u32 \\(manifest line 2\\).*tokens_000000\\.u32 \\(manifest line 1\\)`;
  add(
    'overlap-tokens',
    "Line 2's start_token is one token inside shard 0: tokens across it.",
    { args: ['tokens', '{root}', '--start', String(SMALL - 5), '--count', '10'], code: 1, expect: claimed },
    null,
    { manifest: overlapManifest },
  );
  add(
    'overlap-update',
    "Line 2's start_token is one token inside shard 0: update 1 (G = 512) holds that token.",
    { args: ['update', '{root}', '1'], code: 1, expect: claimed },
    null,
    { manifest: overlapManifest },
  );
  // ---- a shard file longer than its entry: read, with a warning naming the shard and the bytes left out
  add(
    'shard-longer-than-entry',
    'shard 1 has one more token (the next token of the sample) than its manifest entry lists.',
    {
      args: ['tokens', '{root}', '--start', '0', '--count', '5'],
      code: 0,
      expect: `warning: shards/tokens_000001\\.u32 \\(${M} line 2\\) has 4,004 bytes, 4 more than its num_tokens 1,000 need`,
    },
    (d) => fs.appendFileSync(path.join(d, shardName(1)), u32le([tokens[2 * SMALL]])),
  );
  // ---- stream-index entries damaged on disk: one warning naming the shard and the entry, then rebuilt
  // (`before`: CLI runs that build the index first; `damageIndex`: what the test does to shard N's entry)
  // Exit 1 in both: the base's anomalies include faults (its ids are unknown to the corpus's small
  // tokenizer), exactly as `index` exits without the damage; the warning is what these cases check.
  add('index-entry-edited', "shard 1's stream-index entry has eosCount + 5 (its checksum no longer matches).", {
    args: ['index', '{root}'],
    code: 1,
    report: true,
    expect: 'tokens_000001\\.u32: stream index entry \\S+\\.json does not match its checksum',
    before: [['index', '{root}']],
    damageIndex: { shard: 1, how: 'eos-count-plus-5' },
  });
  add('index-entry-foreign', "shard 0's stream-index entry copied over shard 1's.", {
    args: ['index', '{root}'],
    code: 1,
    report: true,
    expect: 'tokens_000001\\.u32: stream index entry \\S+\\.json belongs to another file',
    before: [['index', '{root}']],
    damageIndex: { shard: 1, how: 'copy-of-shard-0' },
  });
  // ---- merge parts: counts of two ids of the base's real tokens per update (G = 512, 5 updates),
  // parts 0:1 and 1:3; the fingerprint is a stand-in (these cases fail before fingerprints are
  // compared, except merge-other-dataset, whose two parts carry different ones).
  const G = 512;
  const updates = Math.floor((3 * SMALL - 1) / G);
  const freq = new Map();
  for (const v of tokens) freq.set(v, (freq.get(v) ?? 0) + 1);
  const ids = [...freq]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, 2)
    .map(([id]) => id);
  const fingerprint = sha(goodManifest);
  const part = (A, B, fp = fingerprint) => {
    const buckets = [];
    for (let u = 0; u < updates; u++) {
      const lo = Math.max(u * G, A * SMALL),
        hi = Math.min((u + 1) * G, B * SMALL);
      const slice = hi > lo ? Array.from(tokens.subarray(lo, hi)) : [];
      buckets.push({
        first_update: u,
        last_update: u,
        tokens: slice.length,
        counts: ids.map((id) => slice.filter((v) => v === id).length),
      });
    }
    const totals = ids.map((_, t) => buckets.reduce((n, b) => n + b.counts[t], 0));
    return {
      terms: ids.map(String),
      options: { word: false, ignore_case: false, ids: true },
      per: 1,
      updates,
      buckets,
      totals,
      shards: [A, B],
      dataset: { fingerprint: fp, shards: 3 },
    };
  };
  const partFiles = (files) => (d) => {
    for (const [name, value] of Object.entries(files))
      fs.writeFileSync(path.join(d, name), typeof value === 'string' ? value : JSON.stringify(value));
  };
  const p1 = part(0, 1),
    p2 = part(1, 3);
  const withBucket0 = (edit) => {
    const p = JSON.parse(JSON.stringify(p1));
    edit(p.buckets[0]);
    return p;
  };
  const mergeCase = (name, desc, files, args, code, expect) =>
    add(name, desc, { args: ['merge', ...args.map((f) => `{root}/${f}`)], code, expect }, partFiles(files));
  mergeCase(
    'merge-counts-not-numbers',
    'a part whose first bucket counts are ["1", null] (merged to "01" before).',
    { 'p1.json': withBucket0((b) => (b.counts = ['1', null])), 'p2.json': p2 },
    ['p1.json', 'p2.json'],
    1,
    'p1\\.json: field buckets\\[0\\]\\.counts\\[0\\] is "1"; expected a whole number 0\\.\\.2\\^53−1',
  );
  mergeCase(
    'merge-count-negative',
    'a negative count.',
    { 'p1.json': withBucket0((b) => (b.counts[1] = -1)), 'p2.json': p2 },
    ['p1.json', 'p2.json'],
    1,
    'p1\\.json: field buckets\\[0\\]\\.counts\\[1\\] is -1',
  );
  mergeCase(
    'merge-count-past-2^53',
    'a count of 2^53+1 (not exact as a JSON number).',
    { 'p1.json': JSON.stringify(p1).replace(/"counts":\[\d+/, '"counts":[9007199254740993'), 'p2.json': p2 },
    ['p1.json', 'p2.json'],
    1,
    'p1\\.json: field buckets\\[0\\]\\.counts\\[0\\] is a number beyond 2\\^53−1',
  );
  mergeCase(
    'merge-tokens-negative',
    'negative tokens in a bucket.',
    { 'p1.json': withBucket0((b) => (b.tokens = -b.tokens)), 'p2.json': p2 },
    ['p1.json', 'p2.json'],
    1,
    'p1\\.json: field buckets\\[0\\]\\.tokens is -\\d+',
  );
  mergeCase(
    'merge-shards-1e308',
    'shards [5, 1e308] in a dataset of 3 shards.',
    { 'p1.json': { ...p1, shards: [5, 1e308] } },
    ['p1.json'],
    1,
    'p1\\.json: field shards\\[0\\] is 5; expected a whole number 0\\.\\.2',
  );
  mergeCase(
    'merge-other-dataset',
    'two parts of different datasets (fingerprints).',
    { 'p1.json': p1, 'p2.json': part(1, 3, sha(overlapManifest)) },
    ['p1.json', 'p2.json'],
    2,
    'p2\\.json counts another dataset than .*p1\\.json',
  );
  mergeCase(
    'merge-lone-part',
    'merge p2.json alone (shards 1:3 of 0:3): zeros where parts are missing, before.',
    { 'p2.json': p2 },
    ['p2.json'],
    2,
    "shards 0:1 of the dataset's 0:3 are in no part; count them too, or pass --allow-partial",
  );
  add(
    'merge-lone-part-allowed',
    'merge p2.json alone with --allow-partial: merged, the missing range named.',
    { args: ['merge', '{root}/p2.json', '--allow-partial'], code: 0, expect: "warning: shards 0:1 of the dataset's 0:3 are in no part" },
    partFiles({ 'p2.json': p2 }),
  );
  // ==== Nothing lost, nothing overwritten (writes, standard output, hangs, exit codes, messages, text) ====
  // Each case: a finding of the 738-case attack on the CLI, with its exit code and message.
  const scratchOf = (name) => path.join(out, '_scratch', name);
  /** A case whose run also uses a scratch folder outside the case folder. */
  const addOut = (name, description, check, mutate, base) => {
    fs.mkdirSync(scratchOf(name), { recursive: true });
    for (const [f, v] of Object.entries(check.scratch ?? {})) {
      const p = path.join(scratchOf(name), f);
      if (typeof v === 'string') fs.writeFileSync(p, v);
      else if (v.fifo) execFileSync('mkfifo', [p]);
      else fs.symlinkSync(v.link.replaceAll('{root}', path.join(out, name)), p);
    }
    add(name, description, { ...check, scratch: undefined }, mutate, base);
  };
  const fifo = (p) => {
    fs.rmSync(p, { force: true });
    execFileSync('mkfifo', [p]);
  };
  const exp = (outPath, extra = []) => ['export', '{root}', '0', '--format', 'jsonl', '--out', outPath, ...extra];
  // -- writes: export --out never inside the dataset, never over anything but a regular file
  const inside = 'is inside the dataset folder .*nothing is written there';
  add('write-into-shard', 'export --out onto a shard of the dataset.', {
    args: exp(`{root}/${shardName(0)}`),
    code: 2,
    expect: `--out .*tokens_000000\\.u32: ${inside}`,
  });
  add('write-into-manifest', 'export --out onto shard_manifest.jsonl.', {
    args: exp('{root}/shard_manifest.jsonl'),
    code: 2,
    expect: `--out .*shard_manifest\\.jsonl: ${inside}`,
  });
  add('write-into-verification', 'export --out onto verification.json.', {
    args: exp('{root}/verification.json', ['--force']),
    code: 2,
    expect: `--out .*verification\\.json: ${inside}`,
  });
  add('write-dotdot-into-dataset', 'export --out DS/../DS/./x.txt (a new file inside DS, reached through .. and .).', {
    args: exp('{root}/../write-dotdot-into-dataset/./x.txt'),
    code: 2,
    expect: `--out .*x\\.txt: ${inside}`,
  });
  addOut('write-symlink-into-dataset', 'export --out through a symbolic link (outside) to the shards folder.', {
    args: exp('{scratch}/link/x.jsonl'),
    code: 2,
    expect: `--out .*link/x\\.jsonl: ${inside}`,
    scratch: { link: { link: '{root}/shards' } },
  });
  addOut('write-symlink-to-shard', 'export --out a symbolic link (outside) that points at a shard, with --force.', {
    args: exp('{scratch}/alias.u32', ['--force']),
    code: 2,
    expect: `--out .*alias\\.u32: ${inside}`,
    scratch: { 'alias.u32': { link: `{root}/${shardName(1)}` } },
    scratchAfter: { present: ['alias.u32'] },
  });
  add('write-device', 'export --out /dev/null --force: a device is never replaced.', {
    args: exp('/dev/null', ['--force']),
    code: 2,
    expect: '--out /dev/null: is a device; only a regular file is ever replaced',
  });
  addOut('write-fifo', 'export --out a FIFO --force: never renamed over, never opened.', {
    args: exp('{scratch}/pipe', ['--force']),
    code: 2,
    expect: '--out .*pipe: is a FIFO \\(named pipe\\); only a regular file is ever replaced',
    scratch: { pipe: { fifo: true } },
  });
  addOut('write-folder', 'export --out an existing folder.', {
    args: exp('{scratch}/', ['--force']),
    code: 2,
    expect: '--out .*: names a folder; expected a file name',
  });
  addOut('write-exists', 'export --out an existing file without --force: refused, the file unchanged.', {
    args: exp('{scratch}/old.jsonl'),
    code: 2,
    expect: '--out .*old\\.jsonl: exists; pass --force to replace it',
    scratch: { 'old.jsonl': 'keep me\n' },
    scratchAfter: { unchanged: ['old.jsonl'] },
  });
  addOut(
    'write-partial-untouched',
    'export --out FILE while an unrelated FILE.partial exists: written under another name; FILE.partial unchanged.',
    {
      args: exp('{scratch}/new.jsonl'),
      code: 0,
      expect: 'wrote .*new\\.jsonl: 1 update',
      scratch: { 'new.jsonl.partial': 'not ours\n' },
      scratchAfter: { unchanged: ['new.jsonl.partial'], present: ['new.jsonl'] },
    },
  );
  add('write-out-empty', 'export --out "": a usage error (it went to stdout).', {
    args: exp(''),
    code: 2,
    expect: '--out "": expected a file name',
  });
  add('write-force-without-out', 'export --force without --out.', {
    args: ['export', '{root}', '0', '--format', 'jsonl', '--force'],
    code: 2,
    expect: '--force replaces the file of --out',
  });
  addOut('write-cache-in-dataset', 'verify with XDG_CACHE_HOME inside the dataset: no cache or index is written there.', {
    args: ['verify', '{root}'],
    code: 0,
    expect: 'cannot use the cache folder .*inside the dataset folder',
    env: { XDG_CACHE_HOME: '{root}/.cache' },
  });
  addOut('write-index-in-dataset', 'index with XDG_CACHE_HOME inside the dataset: refused, nothing written.', {
    args: ['index', '{root}'],
    code: 1,
    expect: 'cannot write the stream index in .*inside the dataset folder',
    env: { XDG_CACHE_HOME: '{root}' },
  });
  // -- standard output: a failed write is exit 1 naming it; EPIPE is a quiet 0
  const full = (name, args) =>
    add(`stdout-full-${name}`, `${args[0]} > /dev/full.`, {
      args,
      code: 1,
      expect: 'cannot write to standard output: no space left on device \\(ENOSPC\\)',
      stdout: '/dev/full',
    });
  full('info', ['info', '{root}']);
  full('tokens', ['tokens', '{root}', '--start', '0', '--count', '3000']);
  full('update', ['update', '{root}', '0']);
  full('decode', ['decode', '{root}', '72', '105']);
  full('stats', ['stats', '{root}', '0..4']);
  full('count', ['count', '{root}', 'the', '--jobs', '1']);
  full('find', ['find', '{root}', String(tokens[0]), '--ids', '--json']);
  full('verify', ['verify', '{root}', '--no-cache']);
  full('locate', ['locate', '{root}', '5']);
  full('export', ['export', '{root}', '0..1', '--format', 'jsonl']);
  add('stdout-epipe', 'tokens | head -c 1: the reader goes away; exit 0 and nothing on stderr.', {
    args: ['tokens', '{root}', '--start', '0', '--count', '3000'],
    code: 0,
    expect: '^$',
    spawn: 'head',
  });
  // -- hangs: FIFOs and endless devices are refused before they are opened; Ctrl-C ends the process
  add(
    'fifo-manifest',
    'shard_manifest.jsonl is a FIFO (blocked forever).',
    info(`${M}: is a FIFO \\(named pipe\\); expected the shard manifest`),
    (d) => fifo(path.join(d, 'shard_manifest.jsonl')),
  );
  add(
    'fifo-manifest-verify',
    'verify: shard_manifest.jsonl is a FIFO; a broken dataset is exit 1, as in info.',
    { args: ['verify', '{root}', '--no-cache'], code: 1, expect: `${M}: is a FIFO` },
    (d) => fifo(path.join(d, 'shard_manifest.jsonl')),
  );
  add('fifo-provenance', 'manifest.json is a FIFO.', info('manifest\\.json: is a FIFO \\(named pipe\\); expected manifest\\.json'), (d) =>
    fifo(path.join(d, 'manifest.json')),
  );
  add('fifo-verification', 'verification.json is a FIFO.', info('verification\\.json: is a FIFO \\(named pipe\\)'), (d) =>
    fifo(path.join(d, 'verification.json')),
  );
  add(
    'fifo-tokenizer',
    'tokenizer/tokenizer.json is a FIFO.',
    { args: ['decode', '{root}', '72'], code: 1, expect: `${T}: is a FIFO \\(named pipe\\); expected a tokenizer\\.json` },
    (d) => fifo(path.join(d, 'tokenizer', 'tokenizer.json')),
  );
  addOut('fifo-tokenizer-flag', '--tokenizer names a FIFO.', {
    args: ['--tokenizer', '{scratch}/tok', 'decode', '{root}', '72'],
    code: 2,
    expect: '--tokenizer .*tok: is a FIFO \\(named pipe\\); expected a tokenizer\\.json file',
    scratch: { tok: { fifo: true } },
  });
  addOut('fifo-merge-part', 'merge of a FIFO.', {
    args: ['merge', '{scratch}/part.json'],
    code: 1,
    expect: 'part\\.json: is a FIFO \\(named pipe\\); expected a part written with `--shards A:B --json` \\(a regular file\\)',
    scratch: { 'part.json': { fifo: true } },
  });
  add('merge-dev-zero', 'merge /dev/zero (never ends).', {
    args: ['merge', '/dev/zero'],
    code: 1,
    expect: '/dev/zero: is a device; expected a part written with `--shards A:B --json` \\(a regular file\\)',
  });
  add('merge-dev-urandom', 'merge /dev/urandom (never ends).', {
    args: ['merge', '/dev/urandom'],
    code: 1,
    expect: '/dev/urandom: is a device',
  });
  add('interrupt-stdin', 'encode waiting on a standard input that never ends: Ctrl-C ends it with 130.', {
    args: ['encode', '{root}'],
    code: 130,
    expect: '',
    spawn: 'interrupt',
  });
  // -- encode --file: what it is, and how big
  add('encode-file-folder', 'encode --file on a folder (was "no such file").', {
    args: ['encode', '{root}', '--file', '{root}/shards'],
    code: 2,
    expect: '--file .*shards: is a folder; expected a text file',
  });
  add('encode-file-dev-zero', 'encode --file /dev/zero.', {
    args: ['encode', '{root}', '--file', '/dev/zero'],
    code: 2,
    expect: '--file /dev/zero: is a device; expected a text file; to read standard input, pass --file -',
  });
  addOut('encode-file-fifo', 'encode --file on a FIFO.', {
    args: ['encode', '{root}', '--file', '{scratch}/text'],
    code: 2,
    expect: '--file .*text: is a FIFO \\(named pipe\\); expected a text file',
    scratch: { text: { fifo: true } },
  });
  addOut(
    'encode-file-too-big',
    'encode --file of a sparse 3 GB file: refused above the stated size, naming the file.',
    {
      args: ['encode', '{root}', '--file', '{scratch}/big.txt'],
      code: 2,
      expect: '--file .*big\\.txt: 3,000,000,000 bytes is more than the 67,108,864 bytes encode takes',
    },
    null,
  );
  fs.mkdirSync(scratchOf('encode-file-too-big'), { recursive: true });
  fs.closeSync(fs.openSync(path.join(scratchOf('encode-file-too-big'), 'big.txt'), 'w'));
  fs.truncateSync(path.join(scratchOf('encode-file-too-big'), 'big.txt'), 3_000_000_000);
  // -- exit codes: one rule (src/cli/exitCodes.ts)
  add(
    'exit-verify-empty-manifest',
    'verify on an empty manifest: 1, as info.',
    { args: ['verify', '{root}', '--no-cache'], code: 1, expect: `${M}: no readable shard line`, report: true },
    null,
    { manifest: '' },
  );
  add(
    'exit-verify-manifest-folder',
    'verify where shard_manifest.jsonl is a folder: 1, as info.',
    { args: ['verify', '{root}', '--no-cache'], code: 1, expect: `${M}: is a folder; expected the shard manifest` },
    (d) => {
      fs.rmSync(path.join(d, 'shard_manifest.jsonl'));
      fs.mkdirSync(path.join(d, 'shard_manifest.jsonl'));
    },
  );
  add('exit-decode-past-uint32', 'decode 4294967296: no uint32 holds it; usage.', {
    args: ['decode', '{root}', '4294967296'],
    code: 2,
    expect: 'id 4,294,967,296 is not a token id: ids are uint32',
  });
  add('exit-decode-unknown', 'decode of an id not in the vocabulary: 1.', {
    args: ['decode', '{root}', '5000'],
    code: 1,
    expect: "1 id not in the tokenizer's vocabulary",
    report: true,
  });
  add(
    'exit-tokens-unknown',
    'tokens --text meeting an id not in the vocabulary: 1, as decode.',
    {
      args: ['tokens', '{root}', '--start', '0', '--count', '10', '--text'],
      code: 1,
      expect: "not in the tokenizer's vocabulary",
      report: true,
    },
    (d) => {
      const b = fs.readFileSync(path.join(d, shardName(0)));
      b.writeUInt32LE(5000, 0);
      fs.writeFileSync(path.join(d, shardName(0)), b);
    },
  );
  // -- messages
  add('msg-help-nosuch', 'help nosuch: one line, not the whole usage.', {
    args: ['help', 'nosuch'],
    code: 2,
    expect: '^error: help "nosuch": no such command; the commands are info, ',
  });
  add('msg-stats-json-csv', 'stats --json --csv: they exclude each other.', {
    args: ['stats', '{root}', '0', '--json', '--csv'],
    code: 2,
    expect: '--json and --csv exclude each other',
  });
  add('msg-stats-dash-range', 'stats 3-6: ranges are written 3..6.', {
    args: ['stats', '{root}', '1-3'],
    code: 2,
    expect: 'ranges are written K1\\.\\.K2 \\(0-based, inclusive\\), e\\.g\\. 1\\.\\.3',
  });
  add('msg-count-jobs-cap', 'count --jobs 1000: capped at 256, as verify.', {
    args: ['count', '{root}', 'the', '--jobs', '1000'],
    code: 2,
    expect: '--jobs 1000: expected 1\\.\\.256',
  });
  add('msg-tokenizer-empty', '--tokenizer "": not ignored.', {
    args: ['--tokenizer', '', 'decode', '{root}', '72'],
    code: 2,
    expect: '--tokenizer "": expected the path of a tokenizer\\.json',
  });
  add('msg-tokenizer-missing', '--tokenizer naming no file: usage (a file named on the command line).', {
    args: ['--tokenizer', '{root}/nope.json', 'info', '{root}'],
    code: 2,
    expect: '--tokenizer .*nope\\.json: no such file',
  });
  add('msg-escape-raw', '--escape with --raw.', {
    args: ['--escape', '--raw', 'decode', '{root}', '72'],
    code: 2,
    expect: '--escape and --raw exclude each other',
  });
  add('msg-search-fffd', 'a search term with U+FFFD (what invalid UTF-8 in an argument becomes) is warned about.', {
    args: ['count', '{root}', 'a\ufffdb', '--jobs', '1'],
    code: 0,
    expect: 'warning: term 1 .* holds U\\+FFFD',
  });
  add(
    'msg-prov-g-update',
    'update with an invalid G in manifest.json says what it used instead (the flag here).',
    {
      args: ['--tokens-per-update', '512', 'update', '{root}', '0'],
      code: 0,
      expect: 'warning: manifest\\.json: global_tokens_per_update = 1\\.5 is not a positive integer',
    },
    null,
    { prov: JSON.stringify({ global_tokens_per_update: 1.5, sequence_length: 128 }) },
  );
  add(
    'msg-prov-eos-tokens',
    'tokens with an invalid EOS in manifest.json says so.',
    {
      args: ['tokens', '{root}', '--start', '0', '--count', '5'],
      code: 0,
      expect: 'warning: manifest\\.json: eos_token_id = "x" is not a token id',
    },
    null,
    { prov: JSON.stringify({ global_tokens_per_update: 512, sequence_length: 128, eos_token_id: 'x' }) },
  );
  add(
    'msg-tokenizer-bom',
    'tokenizer.json starting with a byte-order mark loads (no invisible character in an error).',
    { args: ['decode', '{root}', '72', '105'], code: 0, expect: '^$' },
    null,
    { tokenizer: '\ufeff' + JSON.stringify(baseTok) },
  );
  add(
    'msg-many-missing',
    'a 100,000-line manifest of missing files: the problems are summarised after 20 lines.',
    {
      args: ['verify', '{root}', '--no-cache'],
      code: 1,
      expect: '… and 99,980 more shards not ok \\(--json lists them all\\)',
      stream: 'stdout',
      report: true,
    },
    null,
    {
      manifest:
        Array.from({ length: 100_000 }, (_, i) =>
          line({ shard: `gone/s${i}.u32`, start_token: i * 10, num_tokens: 10, sha256: '0'.repeat(64) }),
        ).join('\n') + '\n',
    },
  );
  add(
    'msg-info-names-bad-shard',
    'info names the shard whose ids are out of the vocabulary, not a clean one.',
    { args: ['info', '{root}'], code: 0, expect: 'warning: shards/tokens_000002\\.u32 \\(first 1,000 ids\\): 100\\.0% of ids are ≥' },
    (d) => {
      const b = fs.readFileSync(path.join(d, shardName(2)));
      for (let i = 0; i < 1000; i++) b.writeUInt32LE(200_000 + i, 4 * i);
      fs.writeFileSync(path.join(d, shardName(2)), b);
    },
  );

  badField(
    'msg-shard-dot',
    '"shard": "." names the dataset folder (was called a symbolic link).',
    { shard: '.' },
    'shard "\\." names the dataset folder itself, not a shard file',
  );
  add(
    'msg-num-2p53-plus-1',
    'num_tokens is 2^53 + 1: shown as written, not rounded to 2^53.',
    info(lineMsg(2) + '.*num_tokens 9007199254740993 is past 2\\^53'),
    null,
    {
      manifest: withLine(2, line(entries[1]).replace(/"num_tokens":\d+/, '"num_tokens":9007199254740993')),
    },
  );
  tokCase(
    'msg-normalizer-regex',
    'a catastrophic normalizer.Replace regex next to a Split pre-tokenizer: not blamed on the pre-tokenizer alone.',
    {
      ...mini,
      normalizer: { type: 'Replace', pattern: { Regex: '(a+)+$' }, content: '' },
      pre_tokenizer: {
        type: 'Sequence',
        pretokenizers: [{ type: 'Split', pattern: { Regex: ' ' }, behavior: 'Isolated', invert: false }, mini.pre_tokenizer],
      },
    },
    ['encode', '{root}', 'a'.repeat(40) + 'b', '--time-limit', '2'],
    ': encoding 41 characters took longer than the 2 s time limit; one of its patterns probably backtracks catastrophically on this text \\(normalizer first, then pre-tokenizer\\): normalizer\\.pattern\\.Regex = "\\(a\\+\\)\\+\\$"',
  );

  fs.writeFileSync(path.join(out, 'cases.json'), JSON.stringify({ generated_by: CREATED_BY, sample: sampleRoot, cases }, null, 2) + '\n');
  if (!options.quiet) process.stderr.write(`${CREATED_BY}: ${cases.length} cases in ${out}\n`);
  return { out, cases };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, sample: { type: 'string' } } });
  await makeBadInputs({ out: values.out, sampleRoot: values.sample });
}
