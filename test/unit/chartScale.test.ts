/**
 * The shared chart's axis arithmetic (webview/shared/chartScale.ts): x tick labels of six-digit
 * updates never run together, and counts and rates start at 0.
 */
import * as assert from 'assert';
import { X_LABEL_GAP_PX, xTickSpace, zeroBasedRange } from '../../webview/shared/chartScale';
import { fmt } from '../../src/core/units';

describe('chart axes', () => {
  // A stand-in for canvas measureText: 7 CSS px per character (12 px UI fonts are 6–7.5 px wide).
  const width = (s: string) => 7 * s.length;

  it('x ticks of 400,000 updates are at least one label wide plus a gap apart', () => {
    const space = xTickSpace(0, 399_999, fmt, width);
    assert.strictEqual(space, Math.ceil(width('399,999') + X_LABEL_GAP_PX));
    // Ticks spaced so never overlap: neighbouring labels centred `space` apart leave the gap between them.
    for (const label of ['100,000', '150,000', '399,999']) assert.ok(space - width(label) >= X_LABEL_GAP_PX, label);
    assert.strictEqual(xTickSpace(0, 17, fmt, width), 50, 'short labels keep the default spacing');
  });

  it('counts and rates start at 0, even when the smallest value is far above it', () => {
    assert.deepStrictEqual(zeroBasedRange(200), [0, 210]);
    assert.deepStrictEqual(zeroBasedRange(0), [0, 1]);
    assert.deepStrictEqual(zeroBasedRange(null), [0, 1]);
  });
});
