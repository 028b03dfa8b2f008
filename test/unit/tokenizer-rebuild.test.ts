/**
 * The offline rebuild of the dolma2 tokenizer (scripts/lib/dolma2-tokenizer.mjs):
 * - always: shape (100,278 ids, 100,000 merges, 22 added tokens), the serialized bytes hash to
 *   the reference sha256 recorded in PROVENANCE.md, and the rebuilt tokenizer encodes like an
 *   independent cl100k_base implementation (gpt-tokenizer) and round-trips through
 *   @huggingface/tokenizers;
 * - when the reference copy `../shared/data/dolma2/tokenizer.json` is beside the repository:
 *   deep-equal to it as JSON (skipped with a reason when it is absent, e.g. in a fresh clone).
 */
import * as assert from 'assert';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { repoRoot } from './fixtures';

const REPO = repoRoot();
const REFERENCE = path.resolve(REPO, '..', 'shared', 'data', 'dolma2', 'tokenizer.json');

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the untyped .mjs script module under test
type Mod = any;
const importScript = (rel: string): Promise<Mod> => import(pathToFileURL(path.join(REPO, rel)).href);

describe('dolma2 tokenizer rebuild (scripts/lib/dolma2-tokenizer.mjs)', function () {
  this.timeout(120_000);
  let lib: Mod;
  let built: { json: Record<string, Mod>; vocabEntries: [string, number][]; stats: { ms: number; merges: number } };
  let text: string;
  let ms: number;

  before(async () => {
    lib = await importScript('scripts/lib/dolma2-tokenizer.mjs');
    const t0 = performance.now();
    built = lib.buildDolma2Tokenizer();
    ms = performance.now() - t0;
    text = lib.serializeTokenizerJson(built);
  });

  it('builds in seconds, not minutes', () => {
    assert.ok(ms < 30_000, `rebuild took ${(ms / 1000).toFixed(1)} s`);
  });

  it('has 100,278 contiguous ids, 100,000 merges, 22 added tokens, EOS 100257', () => {
    const vocab = built.json.model.vocab as Record<string, number>;
    const ids = Object.values(vocab).sort((a, b) => a - b);
    assert.strictEqual(ids.length, 100_278);
    ids.forEach((id, i) => assert.strictEqual(id, i));
    assert.strictEqual(built.json.model.merges.length, 100_000);
    assert.strictEqual(built.json.added_tokens.length, 22);
    assert.strictEqual(vocab['<|endoftext|>'], 100_257);
    assert.strictEqual(lib.DOLMA2_EOS_ID, 100_257);
    const special = built.json.added_tokens.filter((t: { special: boolean }) => t.special).map((t: { id: number }) => t.id);
    assert.deepStrictEqual(special, [100257, 100258, 100259, 100260, 100264, 100265, 100276, 100277]);
  });

  it('serializes byte for byte like the reference file (sha256 from PROVENANCE.md)', () => {
    const sha = crypto.createHash('sha256').update(text).digest('hex');
    assert.strictEqual(Buffer.byteLength(text), 2_733_190);
    assert.strictEqual(sha, '3ca996cca8afea58b34e95c353e859333592642a5e51d695d7a6dbbaf692dfe9');
    assert.deepStrictEqual(JSON.parse(text), built.json);
  });

  it('is deep-equal to ../shared/data/dolma2/tokenizer.json', function () {
    if (!fs.existsSync(REFERENCE)) {
      // The reference copy is optional (a fresh clone has no ../shared); the sha256 test above still pins the content.
      if (this.test) this.test.title += ` — skipped: no reference copy at ${REFERENCE}`;
      this.skip();
    }
    const reference = JSON.parse(fs.readFileSync(REFERENCE, 'utf8'));
    // Compare the large parts first for a readable failure, then everything.
    assert.deepStrictEqual(built.json.added_tokens, reference.added_tokens);
    assert.deepStrictEqual(built.json.pre_tokenizer, reference.pre_tokenizer);
    assert.deepStrictEqual(built.json.decoder, reference.decoder);
    const refMerges: string[] = reference.model.merges;
    const firstDiff = refMerges.findIndex((m, i) => m !== built.json.model.merges[i]);
    assert.strictEqual(firstDiff, -1, `merge ${firstDiff} differs: ${built.json.model.merges[firstDiff]} vs ${refMerges[firstDiff]}`);
    assert.deepStrictEqual(built.json, reference);
    assert.strictEqual(text, fs.readFileSync(REFERENCE, 'utf8'));
  });

  it('encodes like gpt-tokenizer cl100k_base and round-trips through @huggingface/tokenizers', async () => {
    const { Tokenizer } = await import('@huggingface/tokenizers');
    const cl100k: { encode(text: string): number[] } = await import('gpt-tokenizer/encoding/cl100k_base');
    const tok = new Tokenizer(built.json, {});
    const samples = [
      'Hello world',
      'Call me Ishmael. Some years ago—never mind how long precisely—having little or no money in my purse,',
      "  Mr. President, it's 1,234,567 dollars!\n\n\tThe Union's state: “sound”. 🐋 naïve café 東京",
      'line one\r\nline two\n\n\n   trailing   ',
    ];
    assert.deepStrictEqual(tok.encode('Hello world').ids, [9906, 1917]);
    for (const s of samples) {
      const ids = tok.encode(s).ids;
      assert.deepStrictEqual(ids, cl100k.encode(s), `encoding of ${JSON.stringify(s)}`);
      assert.strictEqual(tok.decode(ids, { clean_up_tokenization_spaces: false }), s);
    }
    assert.deepStrictEqual(tok.encode('a<|endoftext|>b').ids, [64, 100257, 65]);
  });
});
