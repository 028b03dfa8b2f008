/**
 * The one whitespace/invisible-character display helper (src/core/invisibles.ts): every character
 * of the issue-14 list gets a distinct mark whose tooltip names it as Python's `unicodedata` does
 * (the reference for names; C0/C1 controls have no Unicode name and are checked for distinct
 * labels), runs give back the original text exactly, and visible text passes through untouched.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { openDataset } from '../../src/core/dataset';
import { codePointLabel, endsWithBase, hasInvisibles, invisibleMark, visibleRuns, visibleText } from '../../src/core/invisibles';
import { loadTokenizer } from '../../src/core/tokenizer';
import { repoRoot, sampleDir } from './fixtures';

/**
 * The invisible and control characters the shard editor must show, as code points: the edge-document script's list (the one the
 * e2e documents carry) plus every other C0 control but tab and newline, which the list names
 * by example ("C0/C1 controls (BEL, VT, FF, ESC, DEL, …)").
 */
async function issueList(): Promise<number[]> {
  const edge = (await import(pathToFileURL(path.join(repoRoot(), 'scripts', 'make-edge-docs.mjs')).href)) as {
    issueCharacters(): number[];
  };
  const c0 = Array.from({ length: 0x20 }, (_, c) => c).filter((c) => c !== 0x09 && c !== 0x0a);
  return [...new Set([...edge.issueCharacters(), ...c0])].sort((x, y) => x - y);
}

/** Unicode names from Python's unicodedata ('' when the character has none, as for controls). */
function pythonNames(cps: number[]): Map<number, string> {
  const script = 'import sys, unicodedata\nfor l in sys.stdin:\n  c = int(l)\n  print(c, unicodedata.name(chr(c), ""))';
  const out = execFileSync('python3', ['-c', script], { input: cps.join('\n') + '\n', encoding: 'utf8' });
  const m = new Map<number, string>();
  for (const line of out.trim().split('\n')) {
    const i = line.indexOf(' ');
    m.set(Number(line.slice(0, i)), line.slice(i + 1));
  }
  return m;
}

describe('invisible characters: one display helper', () => {
  let cps: number[] = [];
  before(async () => {
    cps = await issueList();
    assert.ok(cps.length > 60, `${cps.length} characters`);
  });

  it('marks every character of the issue list, with a distinct label and its code point in the tooltip', () => {
    const names = pythonNames(cps);
    const labels = new Map<string, number>();
    for (const cp of cps) {
      const m = invisibleMark(cp);
      assert.ok(m, `${codePointLabel(cp)} has no mark`);
      assert.ok(m.title.startsWith(codePointLabel(cp) + ' '), m.title);
      const name = names.get(cp);
      if (name) assert.ok(m.title.startsWith(`${codePointLabel(cp)} ${name}`), `${m.title} vs unicodedata ${name}`);
      if (labels.has(m.mark)) assert.fail(`${m.mark} used for ${codePointLabel(labels.get(m.mark)!)} and ${codePointLabel(cp)}`);
      labels.set(m.mark, cp);
      assert.ok(hasInvisibles(`a${String.fromCodePoint(cp)}b`), codePointLabel(cp));
    }
  });

  it('cuts text into runs that give back the original exactly', () => {
    const text = 'Hello\u200bworld\u202eevil\u202c \u00a0x\u0007\ufe0f\u3000end\r\n\u0301';
    const runs = visibleRuns(text);
    assert.strictEqual(runs.map((r) => ('text' in r ? r.text : r.char)).join(''), text);
    const marks = runs.filter((r) => !('text' in r)).map((r) => ('mark' in r ? r.mark : ''));
    assert.deepStrictEqual(marks, ['ZWSP', 'RLO', 'PDF', 'NBSP', 'BEL', 'VS16', 'IDSP', 'CR', '\u25cc\u0301']);
  });

  it('leaves visible text, tabs and newlines alone, and combining marks that have a base', () => {
    const text = 'naïve café e\u0301 \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627\n\tx';
    assert.deepStrictEqual(visibleRuns(text), [{ text }]);
    assert.strictEqual(hasInvisibles('plain ascii text\n\tok'), false);
  });

  it('plain-text form: whitespace as · ↵ ⇥ and marks in ⟨⟩ (no ␍ glyph)', () => {
    assert.strictEqual(visibleText(' a\tb\r\n\u200b'), '·a⇥b⟨CR⟩↵⟨ZWSP⟩');
    assert.strictEqual(visibleText(' a', { whitespace: false }), ' a');
    assert.strictEqual(visibleText('\u200b', { marks: false }), '\u200b');
    assert.ok(!visibleText('\r').includes('\u240d'));
  });
});

describe('a combining mark split from its base by the tokenizer', function () {
  this.timeout(60_000);

  it('" e" + U+0301 from the real dolma2 tokenizer: the mark has its base; at a document start or after a control it has none', async () => {
    const ds = await openDataset(sampleDir());
    const tok = await loadTokenizer(ds.tokenizerFile!);
    const text = 'caf e\u0301 and cafe\u0301s';
    const ids = await tok.encode(text);
    const pieces = tok.pieces(ids).map((p) => p.text);
    assert.strictEqual(pieces.join(''), text, 'the pieces decode to the text');
    assert.ok(
      pieces.some((p) => /^\p{M}/u.test(p)),
      `the tokenizer splits a mark from its base (pieces ${JSON.stringify(pieces)})`,
    );
    // Drawn token by token as the Documents view does, each piece knowing what came before it.
    let base = false;
    const marks: string[] = [];
    for (const p of pieces) {
      for (const r of visibleRuns(p, { baseBefore: base })) if (!('text' in r)) marks.push(r.title);
      base = endsWithBase(p, base);
    }
    assert.deepStrictEqual(marks, [], 'no mark is boxed');
    // Without a base: the start of a text, after a newline, after a control character.
    for (const s of ['\u0301x', 'a\n\u0301', 'a\u0007\u0301', 'a\u200b\u0301']) {
      const lone = visibleRuns(s, { baseBefore: true }).filter((r) => !('text' in r) && /no base/.test(r.title));
      assert.strictEqual(lone.length, s.startsWith('\u0301') ? 0 : 1, JSON.stringify(s));
    }
    assert.strictEqual(visibleRuns('\u0301').length, 1);
    assert.ok(!('text' in visibleRuns('\u0301')[0]), 'a text starting with a mark (a document start): boxed');
    assert.strictEqual(endsWithBase('a\n'), false);
    assert.strictEqual(endsWithBase('', true), true);
    assert.strictEqual(endsWithBase('\u0301'), false, 'a boxed mark is no base');
  });
});
