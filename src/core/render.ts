/**
 * Plain-text rendering of token windows for the CLI and for copies: decoded text with each
 * document boundary (EOS) drawn as a marker line. The webviews render the same structure
 * with DOM nodes (see webview/).
 */
import { fmt } from './errors';
import { LoadedTokenizer } from './tokenizer';

/**
 * Decodes `ids` (starting at global offset `start`) and marks every EOS as
 * `⟦EOS · next document starts at N⟧` on its own line.
 */
export function formatSequenceText(ids: Uint32Array, start: number, eos: number, tok: LoadedTokenizer): string {
  let s = '';
  let from = 0;
  for (let i = 0; i <= ids.length; i++) {
    if (i === ids.length || ids[i] === eos) {
      if (i > from) s += tok.decode(ids.subarray(from, i));
      if (i < ids.length) s += `\n⟦EOS · next document starts at token ${fmt(start + i + 1)}⟧\n`;
      from = i + 1;
    }
  }
  return s;
}
