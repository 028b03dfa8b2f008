/**
 * The one helper for data-derived text (src/core/untrusted.ts): nothing from data becomes a
 * terminal control sequence, a notification link, a codicon or Markdown.
 */
import * as assert from 'assert';
import { iconSafe, markdownText, plainText, shortText, terminalSafe } from '../../src/core/untrusted';

describe('untrusted text', () => {
  it('terminalSafe marks every control character and keeps printable text', () => {
    assert.strictEqual(terminalSafe('a\x1b[31mred\x07'), 'a⟨ESC⟩[31mred⟨BEL⟩');
    assert.strictEqual(terminalSafe('x\r\ny\u009b2J\u202e'), 'x⟨CR⟩⟨LF⟩y⟨U+009B⟩2J⟨U+202E⟩');
    assert.strictEqual(terminalSafe('line1\n\tline2\x7f', { keepLayout: true }), 'line1\n\tline2⟨DEL⟩');
    const printable = 'Ishmael — 🐋 «ok» [a](b) $(x)';
    assert.strictEqual(terminalSafe(printable), printable);
    for (const s of [terminalSafe(String.fromCharCode(...Array.from({ length: 0xa0 }, (_, i) => i)))]) {
      assert.ok(!/[\u0000-\u001f\u007f-\u009f]/.test(s), s); // eslint-disable-line no-control-regex
    }
  });

  it('plainText breaks VS Code notification links, iconSafe escapes codicons', () => {
    const hostile = '[Run](command:workbench.action.terminal.new) [x](https://e.example) [f](file:///etc/passwd)';
    const safe = plainText(hostile);
    assert.ok(!/\[[^\]]+\]\((command:|https?:|file:)/.test(safe), safe);
    assert.strictEqual(safe.replace(/\u2060/g, ''), hostile); // the same characters for a reader
    assert.strictEqual(iconSafe('$(zap) name'), '\\$(zap) name');
    assert.ok(!plainText('a\nb').includes('\n'));
  });

  it('markdownText escapes Markdown, HTML and codicons', () => {
    const s = markdownText('[x](command:a) <img src=x onerror=alert(1)> **b** $(zap) `c`');
    assert.ok(!/\[[^\]]*\]\(/.test(s.replace(/\\./g, '')), s);
    assert.ok(!/(^|[^\\])</.test(s), s);
    assert.ok(!/(^|[^\\])\$\(/.test(s), s);
    assert.ok(!/(^|[^\\])\*\*/.test(s), s);
  });

  it('shortText keeps both ends', () => {
    const long = 'shards/' + 'a'.repeat(5000) + '/tokens_000001.u32';
    const s = shortText(long, 100);
    assert.strictEqual(s.length, 100);
    assert.ok(s.startsWith('shards/') && s.endsWith('tokens_000001.u32') && s.includes('…'));
  });
});
