/**
 * Token-id hovers and the token-id commands inside a real VS Code (code-server's extension host,
 * or desktop VS Code), with the sample dataset as the workspace. Documents are untitled, made
 * with content; hovers come from `vscode.executeHoverProvider`. Expected text is computed here
 * with the core tokenizer (`decode`, checked against the library's `libraryDecode`) on real ids
 * read from the sample's shards; expected update ranges with the core schedule.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Dataset, openDataset } from '../../src/core/dataset';
import { fmt } from '../../src/core/units';
import { LoadedTokenizer, loadTokenizer } from '../../src/core/tokenizer';
import { codeBlock, visiblePiece } from '../../src/hover/tokenHover';
import { visibleText as visibleWhitespace } from '../../src/core/invisibles';
import { formatIds } from '../../src/commands/encodeSelection';

const EXTENSION_ID = 'token-shards.token-shard-inspector';

/** Whether the workspace had a settings file before these tests wrote settings (checked at load). */
const hadSettingsFile = (() => {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return !folder || fs.existsSync(path.join(folder.uri.fsPath, '.vscode', 'settings.json'));
})();

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Undoes Markdown backslash escapes (for checking prose; code blocks are checked raw). */
const unescape = (s: string) => s.replace(/\\([!-/:-@[-`{-~])/g, '$1');

/** Every hover's Markdown at a position, joined. */
async function hoverText(doc: vscode.TextDocument, pos: vscode.Position): Promise<string> {
  const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, pos)) ?? [];
  return hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : (c as vscode.MarkdownString).value))).join('\n');
}

/**
 * The hover once the tokenizer is loaded: a hover never waits on a file read, so the first ones
 * may say "Loading tokenizer…"; every such one is recorded.
 */
async function settledHover(doc: vscode.TextDocument, pos: vscode.Position, seen: string[] = []): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const t = await hoverText(doc, pos);
    if (!t.includes('Loading tokenizer')) return t;
    seen.push(t);
    await delay(50);
  }
  throw new Error('the hover kept saying "Loading tokenizer…"');
}

/** Opens an untitled document with content. */
async function untitled(content: string, language = 'plaintext'): Promise<vscode.TextDocument> {
  const doc = await vscode.workspace.openTextDocument({ content, language });
  await vscode.window.showTextDocument(doc);
  return doc;
}

/** Position of the first character of `needle` (after `from`) in the document. */
function posOf(doc: vscode.TextDocument, needle: string, from = 0): vscode.Position {
  const at = doc.getText().indexOf(needle, from);
  assert.ok(at >= 0, `${JSON.stringify(needle)} not in the document`);
  return doc.positionAt(at);
}

async function setSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration('tokenShards').update(key, value, vscode.ConfigurationTarget.Workspace);
}

describe('token-id hover', function () {
  this.timeout(120_000);
  let ds: Dataset;
  let tok: LoadedTokenizer;
  let stream: number[];
  let eosAt: number;

  before(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
    const root = vscode.workspace.workspaceFolders![0].uri.fsPath;
    ds = await openDataset(root);
    tok = await loadTokenizer(path.join(root, 'tokenizer', 'tokenizer.json'));
    stream = Array.from(await ds.stream.read(0, 50_000));
    eosAt = stream.indexOf(ds.settings.eosTokenId);
    assert.ok(eosAt > 20, 'the sample has an EOS after its first tokens');
  });
  after(async () => {
    await ds?.stream.close();
    for (const k of ['hover.enabled', 'hover.languages', 'hover.minDigits', 'tokenizerPath']) await setSetting(k, undefined);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('bidi controls in a decoded list are marks and reorder nothing (abc, U+202E, " def", U+200F, abc)', async () => {
    const ids = await tok.encode('abc\u202e def\u200fabc');
    assert.strictEqual(tok.decode(ids), 'abc\u202e def\u200fabc');
    const doc = await untitled(`${JSON.stringify(ids)}\n`);
    const md = await settledHover(doc, posOf(doc, String(ids[1]), 1));
    assert.ok(!/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(md), `a bidi control reached the hover: ${JSON.stringify(md)}`);
    assert.ok(md.includes(codeBlock('abc⟨RLO⟩ def⟨RLM⟩abc')), md);
  });

  it('decodes a JSON array of real ids spanning lines (the first hovers may say "Loading tokenizer…")', async () => {
    const ids = stream.slice(eosAt + 1, eosAt + 41);
    const doc = await untitled(JSON.stringify({ input_ids: ids }, null, 2), 'json');
    const seen: string[] = [];
    const md = await settledHover(doc, posOf(doc, String(ids[5]), doc.getText().indexOf('[')), seen);
    for (const s of seen) assert.match(s, /Loading tokenizer…/);
    const expected = tok.decode(ids);
    assert.strictEqual(expected, await tok.libraryDecode(ids));
    assert.ok(md.includes(codeBlock(visibleWhitespace(expected, { whitespace: false }))), `decoded list missing:\n${md}`);
    assert.ok(unescape(md).includes(`${ids.length} tokens`), md);
    assert.ok(unescape(md).includes(`**Token ${ids[5]}**`), md);
    assert.ok(md.includes(codeBlock(visiblePiece(tok.pieces([ids[5]])[0]))), md);
    assert.ok(!unescape(md).includes('unknown id'), 'no unknown ids in real data');
  });

  it('decodes a numpy-style 2-D print row by row, and a bare run of ids', async () => {
    const a = stream.slice(100, 108),
      b = stream.slice(108, 116);
    const pad = (r: number[]) => r.map((x) => String(x).padStart(6)).join('');
    const doc = await untitled(`array([[${pad(a)}],\n       [${pad(b)}]], dtype=uint32)\nids: ${a.join(' ')}\n`);
    const md = await settledHover(doc, posOf(doc, String(b[3]), doc.getText().indexOf('],')));
    assert.ok(md.includes(codeBlock(tok.decode(b))), md);
    assert.ok(unescape(md).includes('row 1 (0-based) of 2'), md);
    const bare = await settledHover(doc, posOf(doc, String(a[1]), doc.getText().indexOf('ids: ')));
    assert.ok(bare.includes(codeBlock(tok.decode(a))), bare);
  });

  it('a lone id shows its piece with whitespace made visible; a special token says so', async () => {
    const withSpace = stream.find((id) => tok.isKnown(id) && String(id).length >= 3 && tok.pieces([id])[0].text.startsWith(' '))!;
    const doc = await untitled(`first ${withSpace} then ${ds.settings.eosTokenId}.\n`);
    const md = await settledHover(doc, posOf(doc, String(withSpace)));
    const piece = tok.pieces([withSpace])[0].text;
    assert.ok(md.includes(codeBlock(visibleWhitespace(piece))), md);
    assert.ok(visibleWhitespace(piece).startsWith('·'));
    const eos = await settledHover(doc, posOf(doc, String(ds.settings.eosTokenId)));
    assert.ok(eos.includes(codeBlock(tok.addedContent(ds.settings.eosTokenId)!)), eos);
    assert.ok(unescape(eos).includes('special token'), eos);
  });

  it('a real EOS in a decoded list is marked, text that only spells it is not', async () => {
    const eosId = ds.settings.eosTokenId;
    const eosText = tok.addedContent(eosId)!;
    // The text "<|endoftext|>" from ordinary tokens (encoded in parts, so the tokenizer does not match the special token).
    const spelled = [
      ...(await tok.encode(eosText.slice(0, 2))),
      ...(await tok.encode(eosText.slice(2, -2))),
      ...(await tok.encode(eosText.slice(-2))),
    ];
    assert.ok(!spelled.includes(eosId));
    assert.strictEqual(tok.decode(spelled), eosText);
    const ids = [...spelled, eosId];
    const doc = await untitled(`${formatIds(ids)}\n`);
    const md = await settledHover(doc, posOf(doc, String(ids[1])));
    assert.ok(md.includes(codeBlock(`${eosText}⟨special ${eosText}⟩`)), md);
    assert.ok(unescape(md).includes('is a real special token'), md);
  });

  it('a token holding part of a UTF-8 character shows its bytes in hex', async () => {
    const ids = await tok.encode('party 🎉 time');
    const partial = ids.find((id) => tok.pieces([id])[0].kind === 'partial' && String(id).length >= 3)!;
    assert.ok(partial !== undefined, 'cl100k splits the emoji');
    const doc = await untitled(`id ${partial}\n`);
    const raw = await settledHover(doc, posOf(doc, String(partial)));
    const group = /<[0-9A-F]{2}( [0-9A-F]{2})*>/.exec(tok.pieces([partial])[0].text)![0];
    assert.ok(raw.includes(group), `the hex group ${group} is shown as is:\n${raw}`);
    const md = unescape(raw);
    assert.ok(md.includes(`Bytes: ${tok.pieces([partial])[0].hex}`), md);
    assert.ok(md.includes('part of a UTF-8 character'), md);
    assert.ok(!md.includes('\uFFFD'), 'never shows U+FFFD');
  });

  it('counts unknown ids in a list and marks them in the text', async () => {
    const ids = [...stream.slice(10, 14), tok.vocabSize + 22];
    const doc = await untitled(`${formatIds(ids)}\n`);
    const md = await settledHover(doc, posOf(doc, String(ids[1])));
    assert.ok(unescape(md).includes('1 unknown id'), md);
    assert.ok(md.includes(codeBlock(tok.decode(ids.slice(0, 4)) + `⟨unknown ${tok.vocabSize + 22}⟩`)), md);
  });

  it('a summarised numpy print marks the elided ids; a long list is cut in the hover with a pointer to Decode Selection', async () => {
    const head = stream.slice(200, 203),
      tail = stream.slice(5000, 5003);
    const doc = await untitled(`array([${[...head, '...', ...tail].map((x) => String(x).padStart(6)).join(',')}], dtype=uint32)\n`);
    const md = await settledHover(doc, posOf(doc, String(tail[1]), doc.getText().indexOf('...')));
    assert.ok(md.includes(codeBlock(tok.decode(head) + '⟨…⟩' + tok.decode(tail))), md);
    assert.ok(unescape(md).includes('6 tokens · the print elides ids at ⟨…⟩'), md);
    const long = stream.slice(0, 4096);
    const text = tok.decode(long);
    assert.ok(text.length > 4000);
    const doc2 = await untitled(`${formatIds(long)}\n`);
    const md2 = await settledHover(doc2, posOf(doc2, String(long[2000]), formatIds(long.slice(0, 2000)).length - 1));
    const cut = /[\uD800-\uDBFF]/.test(text[3999]) ? 3999 : 4000; // the hover never splits a surrogate pair
    assert.ok(md2.includes(codeBlock(text.slice(0, cut))), 'the first 4,000 characters');
    assert.ok(unescape(md2).includes(`${fmt(text.length - cut)} more characters`), md2.slice(-300));
    assert.ok(unescape(md2).includes('4,096 tokens'));
  });

  it('stays quiet on negatives, floats, versions, identifiers, dates and short numbers', async () => {
    const doc = await untitled('loss -1234 at 0.1234 v1.2.3 x86 utf8 2024-01-15 #123456 localhost:8080 line 12\n');
    for (const needle of ['1234', '0.1234', '1.2.3', '86', '8 ', '2024', '123456', '8080', '12\n']) {
      const t = await hoverText(doc, posOf(doc, needle, doc.getText().indexOf(needle)));
      assert.strictEqual(t, '', `hover on ${JSON.stringify(needle)}: ${t}`);
    }
  });

  it('minDigits decides lone numbers; hover.enabled turns hovers off', async () => {
    const short = stream.find((id) => String(id).length === 2)!;
    const doc = await untitled(`id ${short} here\n`);
    assert.strictEqual(await hoverText(doc, posOf(doc, String(short))), '');
    await setSetting('hover.minDigits', 2);
    assert.ok((await settledHover(doc, posOf(doc, String(short)))).includes(`Token ${short}`));
    await setSetting('hover.minDigits', undefined);
    const long = stream.find((id) => String(id).length >= 4)!;
    const doc2 = await untitled(`id ${long} here\n`);
    assert.ok((await settledHover(doc2, posOf(doc2, String(long)))).includes(`Token ${long}`));
    await setSetting('hover.enabled', false);
    assert.strictEqual(await hoverText(doc2, posOf(doc2, String(long))), '');
    await setSetting('hover.enabled', undefined);
  });

  it('hover.languages narrows the languages and re-registers on change', async () => {
    const id = stream.find((x) => String(x).length >= 4)!;
    const txt = await untitled(`id ${id}\n`, 'plaintext');
    const py = await untitled(`x = ${id}\n`, 'python');
    await setSetting('hover.languages', ['python']);
    try {
      // Re-registration follows the configuration event: give it a few turns.
      let t = await hoverText(txt, posOf(txt, String(id)));
      for (let i = 0; i < 100 && t !== ''; i++) {
        await delay(20);
        t = await hoverText(txt, posOf(txt, String(id)));
      }
      assert.strictEqual(t, '');
      assert.ok((await settledHover(py, posOf(py, String(id)))).includes(`Token ${id}`));
    } finally {
      await setSetting('hover.languages', undefined);
    }
    assert.ok((await settledHover(txt, posOf(txt, String(id)))).includes(`Token ${id}`));
  });

  it('update k / step k show the token range, shards and links to open the update', async () => {
    const k = ds.schedule.numUpdates - 2;
    const doc = await untitled(`2025-01-01 12:00:00 INFO update=${k} loss=2.5\n[Step ${k}/${ds.schedule.numUpdates}]\n`);
    const md = await settledHover(doc, posOf(doc, String(k), doc.getText().indexOf('update=')));
    const [start, end] = ds.schedule.updateRange(k);
    const u = unescape(md);
    assert.ok(u.includes(`Global tokens [${fmt(start)}, ${fmt(end)})`), u);
    const shard = ds.shards[ds.stream.locate(start).segment].shard;
    assert.ok(u.includes(shard), u);
    if (ds.stream.locate(end - 1).segment !== ds.stream.locate(start).segment) assert.ok(u.includes('Crosses a shard edge'), u);
    assert.ok(
      md.includes(
        `command:tokenShards.goToUpdate?${encodeURIComponent(JSON.stringify([{ update: k, root: ds.root }]))
          .replace(/\(/g, '%28')
          .replace(/\)/g, '%29')}`,
      ),
      md,
    );
    // "Step k" under the default setting (stepConvention 'after', as the training log reads it):
    // the headline is update k − 1, whose range is the dataset card's [G·(k−1), G·k); update k is offered second.
    const step = unescape(await settledHover(doc, posOf(doc, 'Step')));
    const [before] = ds.schedule.updateRange(k - 1);
    const headline = step.indexOf(`Global tokens [${fmt(before)}, ${fmt(start)})`);
    assert.ok(headline >= 0, step);
    assert.ok(step.includes(`after ${fmt(k)} updates`), step);
    assert.ok(step.indexOf(`Open update ${fmt(k - 1)}`) < step.indexOf(`Open update ${fmt(k)}`), step);
    assert.ok(step.indexOf('Other reading') > headline, step);
    const out = unescape(await settledHover(await untitled(`update ${ds.schedule.numUpdates + 5}\n`), new vscode.Position(0, 8)));
    assert.ok(out.includes(`holds updates 0..${fmt(ds.schedule.numUpdates - 1)}`), out);
  });
});

describe('token-id commands', function () {
  this.timeout(300_000);
  let tok: LoadedTokenizer;
  let root: string;
  before(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
    root = vscode.workspace.workspaceFolders![0].uri.fsPath;
    tok = await loadTokenizer(path.join(root, 'tokenizer', 'tokenizer.json'));
  });
  after(async () => {
    await setSetting('tokenizerPath', undefined);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // Leave the sample folder as it was: no empty settings file written by these tests.
    const file = path.join(root, '.vscode', 'settings.json');
    if (!hadSettingsFile && fs.existsSync(file) && Object.keys(JSON.parse(fs.readFileSync(file, 'utf8') || '{}')).length === 0) {
      fs.rmSync(file);
      if (fs.readdirSync(path.dirname(file)).length === 0) fs.rmdirSync(path.dirname(file));
    }
  });

  it('Decode Selection decodes each row of a selected tensor print into a new document', async () => {
    const ds = await openDataset(root);
    const ids = Array.from(await ds.stream.read(2_000, 24));
    await ds.stream.close();
    const rows = [ids.slice(0, 12), ids.slice(12)];
    const text = `tensor([${rows.map((r) => `[${r.join(', ')}]`).join(',\n        ')}], device='cuda:0')\nlabels [-100, ${ids[3]}]`;
    const doc = await untitled(text);
    const ed = vscode.window.activeTextEditor!;
    ed.selection = new vscode.Selection(0, 0, 1, doc.lineAt(1).text.length);
    const out = await vscode.commands.executeCommand<vscode.TextDocument>('tokenShards.decodeSelection');
    assert.ok(out, 'a document was opened');
    const body = out.getText();
    assert.match(body.split('\n')[0], /^Decoded 24 tokens · 0 unknown ids · 2 rows · tokenizer /);
    assert.ok(body.includes(`── row 0 · 12 tokens ──\n${tok.decode(rows[0])}`), body);
    assert.ok(body.includes(`── row 1 · 12 tokens ──\n${tok.decode(rows[1])}`), body);
    // Negatives are named as skipped, not decoded.
    const lab = await vscode.commands.executeCommand<vscode.TextDocument>('tokenShards.decodeSelection', {
      text: `labels [-100, -100, ${ids[3]}, ${ids[4]}]`,
    });
    assert.match(lab!.getText(), /^Decoded 2 tokens · 0 unknown ids · tokenizer .* · not ids: 2 negative \(-100\)\n\n/);
    assert.ok(lab!.getText().endsWith(tok.decode([ids[3], ids[4]])));
  });

  it('Encode Selection replaces or inserts the ids the library encodes', async () => {
    const text = 'Call me Ishmael. Some years ago — never mind how long precisely —';
    const doc = await untitled(text);
    const ed = vscode.window.activeTextEditor!;
    ed.selection = new vscode.Selection(0, 0, 0, text.length);
    const res = await vscode.commands.executeCommand<{ action: string; ids: number[][] }>('tokenShards.encodeSelection', {
      action: 'insert',
    });
    const expected = await tok.encode(text);
    assert.deepStrictEqual(res.ids, [expected]);
    assert.strictEqual(doc.getText(), `${text}\n${formatIds(expected)}`);
    ed.selection = new vscode.Selection(0, 0, 0, text.length);
    await vscode.commands.executeCommand('tokenShards.encodeSelection', { action: 'replace' });
    assert.strictEqual(doc.getText(), `${formatIds(expected)}\n${formatIds(expected)}`);
  });

  it('Encode Selection of a long text (encoded in pieces) gives the ids of the whole text', async () => {
    // Real long text: the decoded sample stream (several documents, > 64K characters).
    const ds = await openDataset(root);
    const ids = Array.from(await ds.stream.read(0, 60_000)).filter((id) => !tok.isSpecial(id));
    await ds.stream.close();
    const text = tok.decode(ids);
    assert.ok(text.length > 65_536 * 2, `long enough: ${text.length}`);
    const doc = await untitled(text);
    const ed = vscode.window.activeTextEditor!;
    ed.selection = new vscode.Selection(doc.positionAt(0), doc.positionAt(text.length));
    const res = await vscode.commands.executeCommand<{ ids: number[][] }>('tokenShards.encodeSelection', { action: 'copy' });
    assert.deepStrictEqual(res.ids[0], await tok.encode(text));
  });

  it('Choose Tokenizer validates the file and saves the setting', async () => {
    const bad = path.join(root, 'manifest.json');
    assert.strictEqual(await vscode.commands.executeCommand('tokenShards.chooseTokenizer', { file: bad }), undefined);
    assert.strictEqual(vscode.workspace.getConfiguration('tokenShards').get('tokenizerPath'), '');
    const good = path.join(root, 'tokenizer', 'tokenizer.json');
    assert.strictEqual(await vscode.commands.executeCommand('tokenShards.chooseTokenizer', { file: good }), good);
    assert.strictEqual(vscode.workspace.getConfiguration('tokenShards').get('tokenizerPath'), path.join('tokenizer', 'tokenizer.json'));
  });
});
