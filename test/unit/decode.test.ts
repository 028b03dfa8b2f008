/**
 * Our table decoder against the tokenizer library (`@huggingface/tokenizers` decode with
 * clean_up_tokenization_spaces false) on every document of the sample, plus per-token pieces.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openDataset, Dataset } from '../../src/core/dataset';
import { DataError } from '../../src/core/errors';
import {
  CORRUPT_ID_FLOOR,
  byteLevelDecoderMap,
  loadTokenizer,
  loadTokenizerVocab,
  LoadedTokenizer,
  bytesToDisplay,
  diagnoseIds,
} from '../../src/core/tokenizer';
import { cachedIndexParams, indexParamsFor } from '../../src/core/streamIndex/indexShards';
import { MAX_JSON_DEPTH } from '../../src/core/safeJson';
import { scanBpeVocab } from '../../src/core/vocabScan';
import { runCli, sampleDir } from './fixtures';

describe('decoding equals the tokenizer library', function () {
  this.timeout(0);
  let ds: Dataset;
  let tok: LoadedTokenizer;
  let all: Uint32Array;
  before(async () => {
    ds = await openDataset(sampleDir());
    tok = await loadTokenizer(ds.tokenizerFile!);
    all = await ds.stream.read(0, ds.storedTokens);
  });
  after(() => ds?.stream.close());

  it('every document of the sample decodes identically', async () => {
    let from = 0,
      docs = 0;
    for (let i = 0; i <= all.length; i++) {
      if (i === all.length || all[i] === ds.settings.eosTokenId) {
        const ids = all.subarray(from, Math.min(i + 1, all.length));
        if (ids.length) {
          const expected = await tok.libraryDecode(Array.from(ids));
          assert.strictEqual(tok.decode(ids), expected, `document ${docs} at token ${from}`);
          docs++;
        }
        from = i + 1;
      }
    }
    assert.ok(docs > 100, `expected many documents, saw ${docs}`);
  });

  it('pieces concatenate to the token bytes and never show U+FFFD', () => {
    const ids = all.subarray(0, 200_000);
    const pieces = tok.pieces(ids);
    for (const p of pieces) {
      assert.ok(!p.text.includes('\uFFFD'), `piece of id ${p.id} shows U+FFFD`);
      const bytes = Buffer.from(tok.bytesOf(p.id));
      assert.strictEqual(p.hex, [...bytes].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' '));
    }
    // The library agrees on each piece that is complete text.
    for (const p of pieces.slice(0, 2000)) if (p.kind === 'text') assert.strictEqual(p.text, tok.decode([p.id]));
  });

  it('a multi-byte character split across tokens shows bytes per token and decodes whole as a run', async () => {
    const text = 'naïve café — “quoted” 🎉 東京';
    const ids = await tok.encode(text);
    assert.strictEqual(tok.decode(ids), text);
    assert.strictEqual(tok.decode(ids), await tok.libraryDecode(ids));
    const pieces = tok.pieces(ids);
    const split = pieces.filter((p) => p.kind === 'partial');
    assert.ok(split.length > 0, 'the emoji should be split across tokens by cl100k');
    for (const p of split) assert.match(p.text, /<[0-9A-F]{2}( [0-9A-F]{2})*>/);
  });

  it('bytesToDisplay shows incomplete UTF-8 as hex groups', () => {
    assert.deepStrictEqual(bytesToDisplay(new Uint8Array(Buffer.from('a'))), { text: 'a', complete: true });
    const euro = Buffer.from('€'); // E2 82 AC
    assert.deepStrictEqual(bytesToDisplay(euro.subarray(0, 2)), { text: '<E2 82>', complete: false });
    assert.deepStrictEqual(bytesToDisplay(Buffer.concat([Buffer.from(' '), euro.subarray(0, 1)])), { text: ' <E2>', complete: false });
  });

  it('flags ids the tokenizer does not know and special tokens', () => {
    const eos = ds.settings.eosTokenId;
    const [p, u] = tok.pieces([eos, tok.vocabSize + 5]);
    assert.strictEqual(p.kind, 'special');
    assert.strictEqual(p.text, '<|endoftext|>');
    assert.strictEqual(u.kind, 'unknown');
    assert.strictEqual(tok.decode([tok.vocabSize + 5]), '');
  });

  it('diagnoses dtype mix-ups', () => {
    const ids = all.subarray(1000, 5000);
    assert.strictEqual(diagnoseIds(ids, tok.vocabSize), undefined);
    // uint16 data read as uint32: two ids packed per element.
    const packed = new Uint32Array(ids.length / 2);
    for (let i = 0; i < packed.length; i++) packed[i] = (ids[2 * i] & 0xffff) | (((ids[2 * i + 1] & 0xffff) << 16) >>> 0);
    const small = Array.from(ids).filter((v) => v < 65536);
    const packedSmall = new Uint32Array(Math.floor(small.length / 2));
    for (let i = 0; i < packedSmall.length; i++) packedSmall[i] = (small[2 * i] | (small[2 * i + 1] << 16)) >>> 0;
    assert.strictEqual(diagnoseIds(packedSmall, tok.vocabSize)?.kind, 'uint16-as-uint32');
    // uint32 data read as uint16: every other value 0.
    const halves = new Uint32Array(ids.length * 2);
    for (let i = 0; i < ids.length; i++) {
      halves[2 * i] = ids[i] & 0xffff;
      halves[2 * i + 1] = ids[i] >>> 16;
    }
    assert.strictEqual(diagnoseIds(halves, tok.vocabSize)?.kind, 'uint32-as-uint16');
  });

  it("CLI decode prints the library's text and --pieces shows bytes", async () => {
    const ids = Array.from(all.subarray(0, 50));
    const r = runCli(['decode', ds.root, ...ids.map(String)]);
    assert.strictEqual(r.code, 0, r.stderr);
    const text = await tok.libraryDecode(ids);
    assert.ok(r.stdout === text || r.stdout === text + '\n', 'CLI decode differs from the library');
    const p = runCli(['decode', path.join(ds.root, 'tokenizer', 'tokenizer.json'), String(tok.vocabSize + 1), '--pieces']);
    assert.strictEqual(p.code, 1, 'unknown ids are a data problem');
    assert.match(p.stderr, /not in the tokenizer's vocabulary/);
  });
});

/**
 * tokenizer.json files that are not what the decoder needs, made from the real dolma2
 * tokenizer.json of the sample with one thing changed. Each must be a DataError naming the file
 * and the field: an id of 4e9 used to size the decode tables (the CLI hung, the extension host
 * would freeze), `null` gave "Cannot read properties of null", string or float ids gave "Invalid
 * array length", and a WordPiece model without a decoder was accepted as byte-level BPE.
 */
describe('tokenizer.json that cannot be used', function () {
  this.timeout(0);
  let dir: string;
  let real: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- tokenizer.json as parsed JSON
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-badtok-'));
    real = JSON.parse(fs.readFileSync(path.join(sampleDir(), 'tokenizer', 'tokenizer.json'), 'utf8'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /**
   * Writes `json` as `<name>/tokenizer.json` and loads it; returns the DataError's message, after
   * checking that the vocabulary-only loader refuses it with the very same message.
   */
  async function loadError(name: string, json: unknown): Promise<string> {
    const file = path.join(dir, name, 'tokenizer.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(json));
    const messages: string[] = [];
    for (const load of [loadTokenizer, loadTokenizerVocab]) {
      try {
        await load(file);
        assert.fail(`${name}: ${load.name} loaded without an error`);
      } catch (err) {
        assert.ok(err instanceof DataError, `${name}: ${(err as Error).stack}`);
        assert.ok(err.message.startsWith(file + ': '), `${name}: names the file: ${err.message}`);
        messages.push(err.message);
      }
    }
    assert.strictEqual(messages[1], messages[0], `${name}: both loaders say the same`);
    return messages[0];
  }
  const firstToken = () => Object.keys(real.model.vocab)[0];
  const withVocabId = (id: unknown) => ({ ...real, model: { ...real.model, vocab: { ...real.model.vocab, [firstToken()]: id } } });

  it('an id past any vocabulary is refused before any table is built', async () => {
    const huge = CORRUPT_ID_FLOOR * 4096; // ~4e9: a uint32-range id
    assert.match(
      await loadError('vocab-huge', withVocabId(huge)),
      new RegExp(`model\\.vocab\\[.*\\] has id ${huge}; expected an integer 0\\.\\.`),
    );
    const added = real.added_tokens.map((t: { id: number }, i: number) => (i === 0 ? { ...t, id: huge } : t));
    assert.match(
      await loadError('added-huge', { ...real, added_tokens: added }),
      new RegExp(`added_tokens\\[0\\] \\(".+"\\) has id ${huge}`),
    );
  });

  it('negative, fractional and string ids, and added tokens without content, name the field', async () => {
    for (const [name, id] of [
      ['negative', -1],
      ['float', 1.5],
      ['string', '0'],
    ] as const) {
      assert.match(
        await loadError(`vocab-${name}`, withVocabId(id)),
        new RegExp(`has id ${JSON.stringify(id).replace('.', '\\.')};`),
        name,
      );
    }
    assert.match(await loadError('added-no-content', { ...real, added_tokens: [{ id: 0 }] }), /added_tokens\[0\] has no string content/);
  });

  it('not an object, or a model that is not BPE (WordPiece, Unigram), is named as such', async () => {
    assert.match(await loadError('null', null), /the top level is null/);
    assert.match(await loadError('array', [real]), /the top level is an array/);
    // A WordPiece model (as BERT's tokenizer.json has it) with no decoder section still is not byte-level BPE.
    const wordPiece = {
      ...real,
      decoder: null,
      model: {
        type: 'WordPiece',
        unk_token: '[UNK]',
        continuing_subword_prefix: '##',
        max_input_chars_per_word: 100,
        vocab: real.model.vocab,
      },
    };
    assert.match(await loadError('wordpiece', wordPiece), /model\.type is "WordPiece", expected "BPE"/);
    const unigram = {
      ...real,
      model: {
        type: 'Unigram',
        vocab: Object.keys(real.model.vocab)
          .slice(0, 10)
          .map((t) => [t, -1]),
      },
    };
    assert.match(await loadError('unigram', unigram), /model\.type is "Unigram"/);
  });

  it('a token outside the byte-level alphabet is refused by both loaders alike', async () => {
    assert.match(
      await loadError('alphabet', { ...real, model: { ...real.model, vocab: { ...real.model.vocab, 'a\u4e00': 7 } } }),
      /has a character outside the byte-level alphabet/,
    );
  });

  it('the vocabulary alone says what the full tokenizer says about every id (real tokenizer, and one with holes)', async () => {
    // Holes: the sample's tokenizer with ids 5 and 1000 taken out of the vocab.
    const vocab = { ...real.model.vocab };
    for (const [tok, id] of Object.entries(vocab)) if (id === 5 || id === 1000) delete vocab[tok];
    const holed = { ...real, model: { ...real.model, vocab } };
    const ds = { settings: { eosTokenId: real.added_tokens.find((t: { content: string }) => t.content === '<|endoftext|>').id } };
    for (const [name, json] of [
      ['real', real],
      ['holes', holed],
    ] as const) {
      const file = path.join(dir, `same-${name}`, 'tokenizer.json');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify(json));
      const tok = await loadTokenizer(file);
      const v = await loadTokenizerVocab(file);
      assert.strictEqual(v.vocabSize, tok.vocabSize, name);
      assert.strictEqual(v.file, tok.file, name);
      for (let id = -1; id < tok.vocabSize + 4; id++) {
        assert.strictEqual(v.isKnown(id), tok.isKnown(id), `${name}: isKnown(${id})`);
        assert.strictEqual(v.isSpecial(id), tok.isSpecial(id), `${name}: isSpecial(${id})`);
        assert.strictEqual(v.addedContent(id), tok.addedContent(id), `${name}: addedContent(${id})`);
      }
      const params = indexParamsFor(ds as Pick<Dataset, 'settings'>, v);
      assert.deepStrictEqual(params, indexParamsFor(ds as Pick<Dataset, 'settings'>, tok), name);
      if (name === 'holes') assert.deepStrictEqual(params.holeIds, [5, 1000]);
      // Remembered: the first call reads the tokenizer and writes one small file, the second reads that file.
      const memo = path.join(dir, `memo-${name}`);
      assert.deepStrictEqual(await cachedIndexParams(ds as Pick<Dataset, 'settings'>, file, memo), params, `${name}: first`);
      const files = fs.readdirSync(memo);
      assert.strictEqual(files.length, 1, files.join());
      assert.deepStrictEqual(await cachedIndexParams(ds as Pick<Dataset, 'settings'>, file, memo), params, `${name}: remembered`);
      assert.deepStrictEqual(fs.readdirSync(memo), files);
      // The special ids' names are the decoded pieces.
      for (const id of params.specialIds) assert.strictEqual(params.specialNames?.[id], tok.pieces([id])[0].text);
    }
    // A tokenizer file rewritten in place (another identity) is read again, not taken from memory.
    const file = path.join(dir, 'same-real', 'tokenizer.json');
    fs.writeFileSync(file, JSON.stringify(holed));
    const again = await cachedIndexParams(ds as Pick<Dataset, 'settings'>, file, path.join(dir, 'memo-real'));
    assert.deepStrictEqual(again.holeIds, [5, 1000]);
    assert.strictEqual(fs.readdirSync(path.join(dir, 'memo-real')).length, 2);
  });

  it('the vocabulary read from the text (the fast path) accepts and refuses what the whole parse does, with the same result or message', async () => {
    const entries = Object.entries(real.model.vocab as Record<string, number>);
    const [[firstTok, firstId], [secondTok]] = entries;
    const member = ([t, id]: [string, number | string]) => `${JSON.stringify(t)}: ${id}`;
    /** The real tokenizer.json with its vocab object written as `vocab` (raw JSON text). */
    const withVocab = (vocab: string, space?: number) =>
      JSON.stringify({ ...real, model: { ...real.model, vocab: '@VOCAB@' } }, null, space).replace('"@VOCAB@"', () => vocab);
    const vocabOf = (list: [string, number | string][], sep = ',') => `{${list.map(member).join(sep)}}`;
    const plain = vocabOf(entries);
    const rest = entries.slice(1);
    const escapedA = '"\\u0041"'; // "A", spelled with an escape
    const cases: [string, string, boolean][] = [
      // [name, text, the fast path takes it]
      ['compact', withVocab(plain), true],
      ['pretty-printed, tabs and CRLF', withVocab(vocabOf(entries, ',\r\n\t'), 2), true],
      ['byte-order mark', '\ufeff' + withVocab(plain), true],
      ['ids written 5.0, 5e0 and -0', withVocab(vocabOf([[firstTok, `${firstId}.0`], [secondTok, '-0'], ...rest.slice(1)])), true],
      ['escaped tokens', withVocab(`{${escapedA}: ${real.model.vocab.A}, ${vocabOf(entries.filter(([t]) => t !== 'A')).slice(1)}`), true],
      ['a duplicate token: JSON keeps the last id', withVocab(`{${member([firstTok, 7])}, ${plain.slice(1)}`), false],
      ['a duplicate spelled with an escape', withVocab(`{${escapedA}: 7, ${plain.slice(1)}`), false],
      [
        'a vocab key elsewhere, and model keys in other objects',
        withVocab(plain).replace('{', '{"normalizer2": {"model": {"vocab": {"x": 1}}}, '),
        true,
      ],
      ['two model keys', withVocab(plain).replace('{', '{"model": {"type": "BPE", "vocab": {}}, '), false],
      ['two vocab keys', withVocab(plain).replace('"type":"BPE"', '"type":"BPE","vocab":{"a":1}'), false],
      ['an id written 05 (not JSON)', withVocab(vocabOf([[firstTok, '05'], ...rest])), false],
      ['a missing comma in the vocab', withVocab(plain.replace(',', ' ')), false],
      ['a raw tab inside a token', withVocab(`{"a\tb": 1, ${plain.slice(1)}`), false],
      ['garbage after the top level', withVocab(plain) + ' x', true],
      [
        'nested deeper than the limit',
        withVocab(plain).replace('"added_tokens":', `"deep": ${'['.repeat(300)}${']'.repeat(300)}, "added_tokens":`),
        false,
      ],
      ['an empty vocab', withVocab('{}'), true],
    ];
    const ds = { settings: { eosTokenId: real.added_tokens.find((t: { content: string }) => t.content === '<|endoftext|>').id } };
    for (const [name, text, fast] of cases) {
      const file = path.join(dir, `scan-${name.replace(/\W+/g, '-')}`, 'tokenizer.json');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      const outcome = async <T>(load: (f: string) => Promise<T>) =>
        load(file).then(
          (v) => ({ ok: v }),
          (err: Error) => ({ error: `${err.constructor.name}: ${err.message}` }),
        );
      const full = await outcome(loadTokenizer);
      const vocab = await outcome(loadTokenizerVocab);
      if ('error' in full) assert.deepStrictEqual(vocab, full, name);
      else {
        assert.ok('ok' in vocab, `${name}: ${JSON.stringify(vocab)}`);
        assert.deepStrictEqual(
          indexParamsFor(ds as Pick<Dataset, 'settings'>, vocab.ok),
          indexParamsFor(ds as Pick<Dataset, 'settings'>, full.ok),
          name,
        );
        assert.strictEqual(vocab.ok.vocabSize, full.ok.vocabSize, name);
      }
      // Which way it went: the fast path takes the common shapes and leaves the rest to the whole parse.
      const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
      assert.strictEqual(
        scanBpeVocab(body, MAX_JSON_DEPTH, CORRUPT_ID_FLOOR, byteLevelDecoderMap()) !== undefined,
        fast,
        `${name}: fast path`,
      );
    }
  });

  it('the real tokenizer still loads and decodes like the library', async () => {
    const file = path.join(dir, 'real', 'tokenizer.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(real));
    const tok = await loadTokenizer(file);
    const ids = await tok.encode('Call me Ishmael.');
    assert.strictEqual(tok.decode(ids), await tok.libraryDecode(ids));
  });
});
