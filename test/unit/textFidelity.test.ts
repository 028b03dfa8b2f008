/**
 * Text written to a file or pipe is the text: `decode … | cat` is byte for byte the tokenizer
 * library's decode (`@huggingface/tokenizers`, through `libraryDecode`), on text holding CRLF,
 * ESC sequences, DEL and bidi controls; `tokens --text` and `export --format txt` write the same
 * characters; `--escape` marks them (`⟨ESC⟩`, `⟨CR⟩`, `⟨U+202E⟩`) as a terminal gets them.
 * The ids come from encoding the text with the sample's real dolma2 tokenizer.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { LoadedTokenizer, loadTokenizer } from '../../src/core/tokenizer';
import { runCli, sampleDir } from './fixtures';

/** Every kind of character a terminal acts on or reorders, around ordinary words. */
const TEXT =
  'Line one\r\nLine two \u001b[31mred\u001b[0m and \u001b]0;title\u0007 done\r\n' +
  'bidi: abc\u202edef\u202c, \u2066isolate\u2069, RLM\u200f; DEL\u007f; C1 \u0085 tab\there\r\n';

describe('text fidelity: files and pipes get the text, terminals get marks', function () {
  this.timeout(0);
  let tok: LoadedTokenizer;
  let ids: number[];
  let tokenizerFile: string;
  let tmp: string;
  before(async () => {
    tokenizerFile = path.join(sampleDir(), 'tokenizer', 'tokenizer.json');
    tok = await loadTokenizer(tokenizerFile);
    ids = await tok.encode(TEXT);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-text-fidelity-'));
  });
  after(() => {
    tok.dispose?.();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("decode | cat is byte for byte the library's decode (CRLF, ESC, bidi, DEL, C1)", async () => {
    const expected = await tok.libraryDecode(ids);
    assert.strictEqual(expected, TEXT, 'the library decodes the ids back to the text');
    const r = runCli(['decode', tokenizerFile, ids.join(',')]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(Buffer.from(r.stdout, 'utf8').toString('hex'), Buffer.from(expected, 'utf8').toString('hex'));
    assert.strictEqual(runCli(['--raw', 'decode', tokenizerFile, ids.join(',')]).stdout, expected);
  });

  it('--escape marks every control character, as on a terminal; nothing raw is left', () => {
    const r = runCli(['--escape', 'decode', tokenizerFile, ids.join(',')]);
    assert.strictEqual(r.code, 0, r.stderr);
    for (const mark of ['⟨ESC⟩[31m', '⟨CR⟩', '⟨BEL⟩', '⟨U+202E⟩', '⟨U+2066⟩', '⟨U+200F⟩', '⟨DEL⟩', '⟨U+0085⟩'])
      assert.ok(r.stdout.includes(mark), `${mark} in ${JSON.stringify(r.stdout)}`);
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(r.stdout, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200f\u202a-\u202e\u2066-\u2069]/);
  });

  it('tokens --text and export --format txt write the text itself', () => {
    // A lone .u32 holding the ids four times: one update of 4 × 64 tokens with G = 256, L = 64.
    const copies = Math.ceil(257 / ids.length) + 1;
    const all = Uint32Array.from(Array.from({ length: copies }, () => ids).flat());
    const shard = path.join(tmp, 'text.u32');
    fs.writeFileSync(shard, Buffer.from(all.buffer));
    const flags = ['--tokens-per-update', '256', '--sequence-length', '64', '--tokenizer', tokenizerFile];
    const t = runCli([...flags, 'tokens', shard, '--start', '0', '--count', String(ids.length), '--text']);
    assert.strictEqual(t.code, 0, t.stderr);
    assert.strictEqual(t.stdout, TEXT + '\n');
    const out = path.join(tmp, 'update0.txt');
    const e = runCli([...flags, 'export', shard, '0', '--format', 'txt', '--out', out]);
    assert.strictEqual(e.code, 0, e.stderr);
    const written = fs.readFileSync(out, 'utf8');
    for (const raw of ['\u001b[31m', '\r\n', '\u202e', '\u007f'])
      assert.ok(written.includes(raw), `${JSON.stringify(raw)} in the txt export`);
    assert.ok(!written.includes('⟨ESC⟩') && !written.includes('⟨CR⟩'), 'no marks in the file');
  });
});
