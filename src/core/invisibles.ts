/**
 * The ONE place that decides how whitespace and invisible characters are shown, used by the
 * token hover (host, Markdown), the shard editor's Documents/Tokens/IDs views and the update
 * view (webviews). Pure string code: no DOM, no `vscode`.
 *
 * Two renderings of the same decisions:
 * - {@link visibleRuns} cuts text into plain runs and marks; the webviews draw a mark as a boxed
 *   label (`ZWSP`, `BEL`, `NBSP`, `VS16`, like VS Code's control-character rendering) with the
 *   code point in its tooltip, and keep the original character for copying.
 * - {@link visibleText} writes the same marks as plain text (`⟨ZWSP⟩`) for places that only take
 *   text (Markdown hovers, tooltips, the IDs view's preview column).
 *
 * Which characters count as invisible (source: the issue-14 review list, VS Code's
 * `editor.renderControlCharacters` / `unicodeHighlight.invisibleCharacters`): C0 controls except
 * tab and newline, DEL, C1 controls U+0080–U+009F, non-ASCII spaces (U+00A0, U+2000–U+200A,
 * U+202F, U+205F, U+3000), zero-width characters (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+00AD,
 * U+034F, U+180E), bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), line
 * and paragraph separators, Hangul fillers, variation selectors (U+FE00–U+FE0F,
 * U+E0100–U+E01EF), tag characters (U+E0000–U+E007F), and combining marks with no base
 * character (at the start of the text or after a newline, control or invisible character).
 * Space, newline and tab are "whitespace": shown as `·`, `↵`, `⇥` only where asked
 * (`whitespace: true`, the Tokens view and hovers), never in running text.
 */

/** One invisible character found in a text. */
export interface InvisibleMark {
  /** The original character (one code point; copy this). */
  char: string;
  /** Short label drawn in the box: `ZWSP`, `BEL`, `NBSP`, `VS16`, `U+E0041`… */
  mark: string;
  /** Tooltip: code point and name, e.g. `U+200B ZERO WIDTH SPACE`. */
  title: string;
}

/** A piece of text: plain text to show as is, or one invisible character. */
export type VisibleRun = { text: string } | InvisibleMark;

/** Options of {@link visibleRuns} and {@link visibleText}. */
export interface VisibleOptions {
  /** Also replace space, newline and tab by `·`, `↵`, `⇥` (token pieces); default false (running text). */
  whitespace?: boolean;
  /** Mark invisible characters (default true); false leaves them as they are (the views' toggle off). */
  marks?: boolean;
  /**
   * The character just before `s` in the text it was cut from (the previous token's text) can
   * carry a combining mark: a mark at the start of `s` then has that base and is not boxed (a
   * decomposed `é` split into the tokens " e" and U+0301). Default false: `s` starts a text (a
   * document start). See {@link endsWithBase} for chaining pieces.
   */
  baseBefore?: boolean;
}

const C0 = [
  'NUL',
  'SOH',
  'STX',
  'ETX',
  'EOT',
  'ENQ',
  'ACK',
  'BEL',
  'BS',
  'HT',
  'LF',
  'VT',
  'FF',
  'CR',
  'SO',
  'SI',
  'DLE',
  'DC1',
  'DC2',
  'DC3',
  'DC4',
  'NAK',
  'SYN',
  'ETB',
  'CAN',
  'EM',
  'SUB',
  'ESC',
  'FS',
  'GS',
  'RS',
  'US',
];
const C0_NAMES = [
  'NULL',
  'START OF HEADING',
  'START OF TEXT',
  'END OF TEXT',
  'END OF TRANSMISSION',
  'ENQUIRY',
  'ACKNOWLEDGE',
  'BELL',
  'BACKSPACE',
  'CHARACTER TABULATION',
  'LINE FEED',
  'LINE TABULATION',
  'FORM FEED',
  'CARRIAGE RETURN',
  'SHIFT OUT',
  'SHIFT IN',
  'DATA LINK ESCAPE',
  'DEVICE CONTROL ONE',
  'DEVICE CONTROL TWO',
  'DEVICE CONTROL THREE',
  'DEVICE CONTROL FOUR',
  'NEGATIVE ACKNOWLEDGE',
  'SYNCHRONOUS IDLE',
  'END OF TRANSMISSION BLOCK',
  'CANCEL',
  'END OF MEDIUM',
  'SUBSTITUTE',
  'ESCAPE',
  'INFORMATION SEPARATOR FOUR',
  'INFORMATION SEPARATOR THREE',
  'INFORMATION SEPARATOR TWO',
  'INFORMATION SEPARATOR ONE',
];
const C1 = [
  'PAD',
  'HOP',
  'BPH',
  'NBH',
  'IND',
  'NEL',
  'SSA',
  'ESA',
  'HTS',
  'HTJ',
  'VTS',
  'PLD',
  'PLU',
  'RI',
  'SS2',
  'SS3',
  'DCS',
  'PU1',
  'PU2',
  'STS',
  'CCH',
  'MW',
  'SPA',
  'EPA',
  'SOS',
  'SGCI',
  'SCI',
  'CSI',
  'ST',
  'OSC',
  'PM',
  'APC',
];

/** Code point → [mark, name] for the named invisible characters outside C0/C1 and the ranges below. */
const NAMED: Record<number, [string, string]> = {
  0x7f: ['DEL', 'DELETE'],
  0xa0: ['NBSP', 'NO-BREAK SPACE'],
  0xad: ['SHY', 'SOFT HYPHEN'],
  0x34f: ['CGJ', 'COMBINING GRAPHEME JOINER'],
  0x61c: ['ALM', 'ARABIC LETTER MARK'],
  0x115f: ['HCF', 'HANGUL CHOSEONG FILLER'],
  0x1160: ['HJF', 'HANGUL JUNGSEONG FILLER'],
  0x180e: ['MVS', 'MONGOLIAN VOWEL SEPARATOR'],
  0x2000: ['NQSP', 'EN QUAD'],
  0x2001: ['MQSP', 'EM QUAD'],
  0x2002: ['ENSP', 'EN SPACE'],
  0x2003: ['EMSP', 'EM SPACE'],
  0x2004: ['3/MSP', 'THREE-PER-EM SPACE'],
  0x2005: ['4/MSP', 'FOUR-PER-EM SPACE'],
  0x2006: ['6/MSP', 'SIX-PER-EM SPACE'],
  0x2007: ['FSP', 'FIGURE SPACE'],
  0x2008: ['PSP', 'PUNCTUATION SPACE'],
  0x2009: ['THSP', 'THIN SPACE'],
  0x200a: ['HSP', 'HAIR SPACE'],
  0x200b: ['ZWSP', 'ZERO WIDTH SPACE'],
  0x200c: ['ZWNJ', 'ZERO WIDTH NON-JOINER'],
  0x200d: ['ZWJ', 'ZERO WIDTH JOINER'],
  0x200e: ['LRM', 'LEFT-TO-RIGHT MARK'],
  0x200f: ['RLM', 'RIGHT-TO-LEFT MARK'],
  0x2028: ['LSEP', 'LINE SEPARATOR'],
  0x2029: ['PSEP', 'PARAGRAPH SEPARATOR'],
  0x202a: ['LRE', 'LEFT-TO-RIGHT EMBEDDING'],
  0x202b: ['RLE', 'RIGHT-TO-LEFT EMBEDDING'],
  0x202c: ['PDF', 'POP DIRECTIONAL FORMATTING'],
  0x202d: ['LRO', 'LEFT-TO-RIGHT OVERRIDE'],
  0x202e: ['RLO', 'RIGHT-TO-LEFT OVERRIDE'],
  0x202f: ['NNBSP', 'NARROW NO-BREAK SPACE'],
  0x205f: ['MMSP', 'MEDIUM MATHEMATICAL SPACE'],
  0x2060: ['WJ', 'WORD JOINER'],
  0x2061: ['FA', 'FUNCTION APPLICATION'],
  0x2062: ['IT', 'INVISIBLE TIMES'],
  0x2063: ['IS', 'INVISIBLE SEPARATOR'],
  0x2064: ['IP', 'INVISIBLE PLUS'],
  0x2066: ['LRI', 'LEFT-TO-RIGHT ISOLATE'],
  0x2067: ['RLI', 'RIGHT-TO-LEFT ISOLATE'],
  0x2068: ['FSI', 'FIRST STRONG ISOLATE'],
  0x2069: ['PDI', 'POP DIRECTIONAL ISOLATE'],
  0x3000: ['IDSP', 'IDEOGRAPHIC SPACE'],
  0x3164: ['HF', 'HANGUL FILLER'],
  0xfeff: ['BOM', 'ZERO WIDTH NO-BREAK SPACE (byte order mark)'],
  0xffa0: ['HWHF', 'HALFWIDTH HANGUL FILLER'],
  0xfff9: ['IAA', 'INTERLINEAR ANNOTATION ANCHOR'],
  0xfffa: ['IAS', 'INTERLINEAR ANNOTATION SEPARATOR'],
  0xfffb: ['IAT', 'INTERLINEAR ANNOTATION TERMINATOR'],
};

/** `U+200B` style code point (at least 4 hex digits). */
export function codePointLabel(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * The mark for one code point when it is invisible, else undefined. Tab (U+0009) and newline
 * (U+000A) are whitespace, not marks (see {@link VisibleOptions.whitespace}).
 */
export function invisibleMark(cp: number): InvisibleMark | undefined {
  const char = String.fromCodePoint(cp);
  const make = (mark: string, name: string): InvisibleMark => ({ char, mark, title: `${codePointLabel(cp)} ${name}` });
  if (cp < 0x20) return cp === 0x09 || cp === 0x0a ? undefined : make(C0[cp], C0_NAMES[cp]);
  if (cp >= 0x80 && cp <= 0x9f) return make(C1[cp - 0x80], `${C1[cp - 0x80]} (C1 control)`);
  const named = NAMED[cp];
  if (named) return make(named[0], named[1]);
  if (cp >= 0xfe00 && cp <= 0xfe0f) return make(`VS${cp - 0xfe00 + 1}`, `VARIATION SELECTOR-${cp - 0xfe00 + 1}`);
  if (cp >= 0xe0100 && cp <= 0xe01ef) return make(`VS${cp - 0xe0100 + 17}`, `VARIATION SELECTOR-${cp - 0xe0100 + 17}`);
  if (cp >= 0xe0000 && cp <= 0xe007f)
    return make(cp >= 0xe0020 && cp <= 0xe007e ? `TAG ${String.fromCharCode(cp - 0xe0000)}` : 'TAG', `TAG CHARACTER`);
  return undefined;
}

const COMBINING = /^\p{M}$/u;

/** A combining mark drawn on a dotted circle (U+25CC), the usual way to show a mark without a base. */
function loneMark(char: string): InvisibleMark {
  return { char, mark: `\u25cc${char}`, title: `${codePointLabel(char.codePointAt(0)!)} combining mark with no base character` };
}

const WS: Record<string, string> = { ' ': '·', '\n': '↵', '\t': '⇥' };

/**
 * Cuts `s` into plain runs and invisible-character marks (see the module comment for the list).
 * Concatenating every run's `text` / `char` gives `s` back exactly. With `whitespace`, spaces,
 * newlines and tabs come back as plain runs of `·`, `↵`, `⇥` (so the concatenation then differs
 * from `s` in those characters only).
 */
export function visibleRuns(s: string, opts: VisibleOptions = {}): VisibleRun[] {
  const out: VisibleRun[] = [];
  let plain = '';
  // A combining mark has a base when the previous code point is a visible character.
  let hasBase = opts.baseBefore ?? false;
  const marks = opts.marks ?? true;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const m = !marks ? undefined : (invisibleMark(cp) ?? (!hasBase && COMBINING.test(ch) ? loneMark(ch) : undefined));
    if (m) {
      if (plain) {
        out.push({ text: plain });
        plain = '';
      }
      out.push(m);
      hasBase = false;
      continue;
    }
    plain += opts.whitespace ? (WS[ch] ?? ch) : ch;
    hasBase = canCarryMark(ch);
  }
  if (plain) out.push({ text: plain });
  return out;
}

/** After a shown (unmarked) character: can a combining mark that follows use it as its base? Not after newline or tab. */
function canCarryMark(ch: string): boolean {
  return ch !== '\n' && ch !== '\t';
}

/**
 * Whether the last character of `s` can carry a combining mark that follows it (the value of
 * {@link VisibleOptions.baseBefore} for the next piece): false after a newline, a tab or a marked
 * (control, invisible or baseless) character; for an empty `s`, `baseBefore` passed on.
 */
export function endsWithBase(s: string, baseBefore = false): boolean {
  let hasBase = baseBefore;
  for (const ch of s) {
    const marked = invisibleMark(ch.codePointAt(0)!) ?? (!hasBase && COMBINING.test(ch));
    hasBase = !marked && canCarryMark(ch);
  }
  return hasBase;
}

/** True when `s` holds a character {@link visibleRuns} would mark (fast path for the views). */
export function hasInvisibles(s: string): boolean {
  // The class lists single invisible code points on purpose, controls and combining ones included.
  // eslint-disable-next-line no-control-regex, no-misleading-character-class
  return /[\x00-\x08\x0b-\x1f\x7f-\x9f\xa0\xad\u034f\u061c\u115f\u1160\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u2069\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u{E0000}-\u{E01EF}\p{M}]/u.test(
    s,
  );
}

/**
 * Plain-text rendering for places that take only text (Markdown code blocks, tooltips, the IDs
 * preview): marks as `⟨ZWSP⟩`, and with `whitespace` (default true here) space `·`, newline
 * `↵`, tab `⇥`. A carriage return is `⟨CR⟩` (the `␍` glyph is missing from common fonts).
 */
export function visibleText(s: string, opts: VisibleOptions = {}): string {
  let out = '';
  for (const r of visibleRuns(s, { whitespace: true, ...opts })) out += 'text' in r ? r.text : `⟨${r.mark}⟩`;
  return out;
}
