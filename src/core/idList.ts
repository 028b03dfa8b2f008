/**
 * Finding token ids in free text (logs, JSON dumps, numpy/torch prints, bug reports): the
 * integer under a cursor and the id list around it, "update k" / "step k" phrases, and every
 * id in a selection. No `vscode` import; no tokenizer needed (the caller passes the vocabulary
 * size when it knows it).
 *
 * ## Rules (the hover documents these to users; tests in test/unit/idList.test.ts)
 *
 * A **number** is a maximal run of ASCII digits. It is an id candidate only when it stands on
 * its own; each rejection has a reason ({@link NumberRejection}):
 * - `identifier`: a letter, digit, `_`, `$`, `@`, `\` or `&` touches it (`x86`, `utf8`, `8px`,
 *   `0x1F`, `$1`, `uint32`);
 * - `decimal`: part of a float or a dotted version (`0.5`, `.5`, `1.2.3`, `1e-5`, `192.168.0.1`);
 * - `negative` / `signed`: a `-` / `+` sign before it (`-100`, `+3`);
 * - `joined`: glued by `-`, `/` or `:` to another word (dates `2024-01-15`, `15/01/2024`,
 *   times `12:30`, ports `localhost:8080`, ratios `3/4`, `step 5/10`'s `10`);
 * - `hex`: after `#` (`#123456`); `percent`: before `%`;
 * - `leading-zero`: more than one digit starting with 0 (`007`, `01`): nobody prints ids so;
 * - `too-long`: more than 15 digits (past any vocabulary, and not exact as a double);
 * - `formatted`: outside brackets, a group of a thousands-formatted number (`55,000`). Inside
 *   brackets `[1,234]` is two ids (compact JSON);
 * - `shape`: inside the brackets of a shape, `shape=(2000,)` (numpy 2 prints it), `torch.Size([128, 1024])`,
 *   `size: [4, 1024]`.
 *
 * A **bracketed list** is the innermost `[…]` around the number whose content is only numbers,
 * `...` (numpy's summarised print), commas and whitespace (newlines included: JSON arrays span
 * lines). With ≥ 2 numbers, all accepted, at least one of them with ≥ `minDigits` digits (so
 * attention masks `[1, 1, 0]` and `[0, 1]` stay quiet), it is an id list: every element counts
 * whatever its number of digits, ids ≥ the vocabulary are "unknown" — but when the vocabulary
 * is known, at least half the elements must be below it (so `[1700000000, 1700000042]`
 * timestamps stay quiet). Brackets of a list of lists give the row (`row 1 of 2`); the decoded list is the
 * innermost row. Anything else inside the brackets (a negative, a float, a string, a nested
 * list next to numbers) means it is not an id list.
 *
 * A **bare run** is a run, on one line, of ≥ 2 accepted numbers separated by spaces, tabs or
 * commas (`791 4062 14198`, the CLI's output), not touching a `[`/`]` (that is a bracketed list
 * that failed). It counts as a list when at least two of its numbers have ≥ `minDigits` digits
 * (so `page 3 4` or a table of small counts stays quiet); otherwise its numbers are lone. A
 * run next to a rejected number (`-1.5 791 4062`) is not trusted either: its numbers are lone.
 *
 * A **lone** number is an id when it has ≥ `minDigits` digits (setting
 * `tokenShards.hover.minDigits`, default 3: keeps line numbers, small counts quiet) and is below
 * the vocabulary size (years and ports are ids in a 100k vocabulary, which is why the
 * context rules above reject dates, times and `host:port`).
 *
 * An **update phrase** is `update` or `step` (any case; not preceded by a letter, so
 * `global_step` counts, `mystep` and `steps` do not), then optionally `"`, `=`/`:`, `#` and
 * spaces, then a number (`55000`, `55,000`), not followed by a letter, `_` or `.digit`
 * (`step 5/10` is fine). It wins over id readings.
 *
 * ## Cost
 * Everything is one linear pass over at most `maxScan` characters on each side of the cursor
 * (default 262,144: a 4,096-id list pretty-printed one id per line is ~45,000 characters).
 * The only regular expression runs on a ≤ 96-character slice, and has no nested quantifiers.
 */

/** Half-open character range `[start, end)` in the scanned text (UTF-16 code units). */
export interface TextRange {
  start: number;
  end: number;
}

/** Why a run of digits is not an id candidate (see the module docs). */
export type NumberRejection =
  'identifier' | 'decimal' | 'negative' | 'signed' | 'joined' | 'hex' | 'percent' | 'leading-zero' | 'too-long' | 'formatted' | 'shape';

/** A lone integer under the cursor that passes the lone-id rule. */
export interface LoneIdHit {
  kind: 'id';
  /** The integer's value. */
  id: number;
  /** The digits. */
  range: TextRange;
}

/** The cursor is on an element of an id list. */
export interface IdListHit {
  kind: 'list';
  /** The hovered element's value. */
  id: number;
  /** The hovered element's digits. */
  range: TextRange;
  /** Index of the hovered element in {@link ids}. */
  index: number;
  /** Every element, in text order (for numpy's summarised prints, the visible ones only). */
  ids: number[];
  /** The list: from `[` to `]` inclusive, or first to last digit of a bare run. */
  listRange: TextRange;
  form: 'brackets' | 'bare';
  /** Indices `i` such that `...` (elided elements) stands just before `ids[i]`; `ids.length` for a trailing one. */
  gaps: number[];
  /** Set when the list is one row of a list of lists (2-D tensor prints, JSON batches). */
  row?: {
    /** 0-based index of this row among its siblings. */
    index: number;
    /** Number of rows (direct child lists) in the parent list. */
    count: number;
    /** The parent list, brackets included. */
    range: TextRange;
  };
}

/** The cursor is on `update k` / `step k`. */
export interface UpdateHit {
  kind: 'update';
  /** The word as matched, lower-cased. `step` may mean "after k updates" (then the last update done is k − 1). */
  keyword: 'update' | 'step';
  /** The number as written (k), not adjusted. */
  update: number;
  /** From the keyword's first letter to the number's last digit. */
  range: TextRange;
  /** The number (with its thousands separators, if any). */
  numberRange: TextRange;
}

/** What {@link findIdsAt} found. */
export type IdHit = LoneIdHit | IdListHit | UpdateHit;

/** Options of {@link findIdsAt}. */
export interface IdScanOptions {
  /** Lone integers need at least this many digits (default 3; setting `tokenShards.hover.minDigits`). */
  minDigits?: number;
  /** Ids at or above this are not in the vocabulary. Undefined (tokenizer not loaded): no vocabulary check. */
  vocabSize?: number;
  /** Characters scanned on each side of the cursor at most (default {@link DEFAULT_MAX_SCAN}). */
  maxScan?: number;
  /**
   * Set when `text` is a window cut out of a bigger document: `start` when text before it was
   * cut off, `end` when text after it was. Numbers and bare runs that reach a cut edge are not
   * judged (their context is unknown).
   */
  clipped?: { start: boolean; end: boolean };
}

/** Default scanning bound on each side of the cursor, in characters. */
export const DEFAULT_MAX_SCAN = 262_144;
/** Default for `minDigits` (setting `tokenShards.hover.minDigits`). */
export const DEFAULT_MIN_DIGITS = 3;
/** More digits than this are never an id (and not exact as a double). */
export const MAX_ID_DIGITS = 15;

// Character codes.
const C0 = 48,
  C9 = 57,
  DOT = 46,
  COMMA = 44,
  SPACE = 32,
  TAB = 9,
  LF = 10,
  CR = 13;
const LBRACK = 91,
  RBRACK = 93,
  LPAREN = 40;
const MINUS = 45,
  PLUS = 43,
  HASH = 35,
  SLASH = 47,
  COLON = 58,
  PERCENT = 37,
  UNDERSCORE = 95;
const DOLLAR = 36,
  AT = 64,
  BACKSLASH = 92,
  AMP = 38,
  LOWER_E = 101,
  UPPER_E = 69;

const isDigit = (c: number) => c >= C0 && c <= C9;
const isAsciiLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const LETTER = /\p{L}|\p{M}/u;
/** Letter in any script (ASCII fast path). */
function isLetter(c: number): boolean {
  if (c < 128) return isAsciiLetter(c);
  return c >= 0 && LETTER.test(String.fromCharCode(c));
}
const isAlnum = (c: number) => isDigit(c) || isLetter(c);
const isWs = (c: number) => c === SPACE || c === TAB || c === LF || c === CR;
/** Separators inside a list: whitespace and commas. */
const isSep = (c: number) => isWs(c) || c === COMMA;
/** Separators of a bare run: on one line. */
const isLineSep = (c: number) => c === SPACE || c === TAB || c === COMMA;

/**
 * Decides whether the digit run `text[s, e)` (maximal: no digit at `s−1` or `e`) can be an id.
 * @param inBrackets true inside `[…]`, where `1,234` is two ids rather than one formatted number.
 * @returns undefined when it can, else the reason it cannot.
 */
export function classifyNumber(text: string, s: number, e: number, inBrackets: boolean): NumberRejection | undefined {
  const len = text.length;
  const at = (i: number) => (i >= 0 && i < len ? text.charCodeAt(i) : -1);
  const p = at(s - 1),
    pp = at(s - 2),
    n = at(e),
    nn = at(e + 1);
  if (p === DOT) return 'decimal';
  if (n === DOT && isDigit(nn)) return 'decimal';
  if ((n === LOWER_E || n === UPPER_E) && (isDigit(nn) || ((nn === MINUS || nn === PLUS) && isDigit(at(e + 2))))) return 'decimal';
  if (isLetter(p) || isLetter(n) || p === UNDERSCORE || n === UNDERSCORE || p === DOLLAR || p === AT || p === BACKSLASH || p === AMP)
    return 'identifier';
  if (p === MINUS) return isAlnum(pp) ? 'joined' : 'negative';
  if (p === PLUS) return 'signed';
  if (p === HASH) return 'hex';
  if ((p === COLON || p === SLASH) && isAlnum(pp)) return 'joined';
  if ((n === COLON || n === SLASH || n === MINUS) && isAlnum(nn)) return 'joined';
  if (n === PERCENT) return 'percent';
  if (e - s > 1 && at(s) === C0) return 'leading-zero';
  if (e - s > MAX_ID_DIGITS) return 'too-long';
  if (!inBrackets) {
    // A group of 55,000 / 1,234,567: a comma glued to exactly three digits on the right.
    if (p === COMMA && isDigit(pp) && e - s === 3) return 'formatted';
    if (n === COMMA && e - s <= 3 && isDigit(nn) && isDigit(at(e + 2)) && isDigit(at(e + 3)) && !isDigit(at(e + 4))) return 'formatted';
  }
  return undefined;
}

/** Value of the digits `text[s, e)` (≤ 15 digits: exact). */
function valueOf(text: string, s: number, e: number): number {
  let v = 0;
  for (let i = s; i < e; i++) v = v * 10 + (text.charCodeAt(i) - C0);
  return v;
}

const SHAPE_WORD = /(?:shape|size)[ \t]*[=:]?[ \t]*$/i;

/**
 * True when the number starting at `s` sits inside the brackets of a shape: walking left over
 * digits, separators and opening brackets (≤ 64 characters) reaches `shape=(`, `Size([`, `size: [`….
 */
export function inShapeContext(text: string, s: number): boolean {
  let i = s - 1,
    opened = false;
  const stop = Math.max(0, s - 64);
  for (; i >= stop; i--) {
    const c = text.charCodeAt(i);
    if (c === LBRACK || c === LPAREN) opened = true;
    else if (!(isDigit(c) || isSep(c))) break;
  }
  if (!opened || i < 0) return false;
  return SHAPE_WORD.test(text.slice(Math.max(0, i - 16), i + 1));
}

const UPDATE_RE = /(?<![A-Za-z])(update|step)["']?[ \t]{0,8}[=:]?[ \t]{0,8}#?(\d{1,3}(?:,\d{3})+(?!\d)|\d{1,15})/gi;

/**
 * Looks for an update phrase whose keyword or number covers `offset`, in the line slice
 * around it (≤ 64 characters each side; a phrase is at most 44).
 */
function findUpdateAt(text: string, offset: number): UpdateHit | undefined {
  let lo = Math.max(0, offset - 64),
    hi = Math.min(text.length, offset + 64);
  const nl = text.lastIndexOf('\n', offset - 1);
  if (nl >= lo) lo = nl + 1;
  const nr = text.indexOf('\n', offset);
  if (nr >= 0 && nr < hi) hi = nr;
  const slice = text.slice(lo, hi);
  UPDATE_RE.lastIndex = 0;
  for (let m = UPDATE_RE.exec(slice); m; m = UPDATE_RE.exec(slice)) {
    const start = lo + m.index;
    const end = start + m[0].length;
    if (offset < start || offset >= end) continue;
    // Rejected when the number goes on as a word, float or identifier ("step 5.5", "step 100ms").
    const n = end < text.length ? text.charCodeAt(end) : -1;
    const nn = end + 1 < text.length ? text.charCodeAt(end + 1) : -1;
    if (isLetter(n) || n === UNDERSCORE || isDigit(n) || (n === DOT && isDigit(nn))) continue;
    // The number must not be cut off by the slice end.
    if (end === hi && hi < text.length && isDigit(text.charCodeAt(hi))) continue;
    const digits = m[2];
    const value = Number(digits.replace(/,/g, ''));
    if (!Number.isSafeInteger(value)) continue;
    return {
      kind: 'update',
      keyword: m[1].toLowerCase() as 'update' | 'step',
      update: value,
      range: { start, end },
      numberRange: { start: end - digits.length, end },
    };
  }
  return undefined;
}

/** Result of scanning the innermost `[…]` around a number. */
interface BracketScan {
  open: number;
  close: number;
  /** Every element was an accepted number or `...`. */
  valid: boolean;
  ids: number[];
  gaps: number[];
  /** Index of the element starting at the hovered number. */
  index: number;
  /** Digits of the longest element. */
  longest: number;
}

/**
 * Finds the innermost `[`…`]` around `text[s, e)` whose content is only digits, dots, commas
 * and whitespace, within `[lo, hi)`. Returns undefined when another character comes first.
 */
function scanBrackets(text: string, s: number, e: number, lo: number, hi: number): BracketScan | undefined {
  let open = -1;
  for (let i = s - 1; i >= lo; i--) {
    const c = text.charCodeAt(i);
    if (c === LBRACK) {
      open = i;
      break;
    }
    if (!(isDigit(c) || isSep(c) || c === DOT)) return undefined;
  }
  if (open < 0) return undefined;
  // One forward pass: parse the elements and find the closing bracket.
  const ids: number[] = [];
  const gaps: number[] = [];
  let index = -1,
    longest = 0,
    close = -1;
  let valid = true;
  for (let i = open + 1; i < hi;) {
    const c = text.charCodeAt(i);
    if (c === RBRACK) {
      close = i;
      break;
    }
    if (isSep(c)) {
      i++;
      continue;
    }
    if (c === DOT) {
      // Only a whole "..." element (numpy's summarised print) is allowed.
      if (
        text.startsWith('...', i) &&
        (isSep(text.charCodeAt(i + 3)) || text.charCodeAt(i + 3) === RBRACK) &&
        (i === open + 1 || isSep(text.charCodeAt(i - 1)))
      ) {
        gaps.push(ids.length);
        i += 3;
      } else {
        valid = false;
        i++;
      }
      continue;
    }
    if (!isDigit(c)) return undefined;
    let j = i + 1;
    while (j < hi && isDigit(text.charCodeAt(j))) j++;
    if (valid) {
      const n = text.charCodeAt(j);
      const plain = (isSep(n) || n === RBRACK) && (isSep(text.charCodeAt(i - 1)) || i === open + 1);
      const ok = plain ? !(j - i > 1 && c === C0) && j - i <= MAX_ID_DIGITS : classifyNumber(text, i, j, true) === undefined;
      if (!ok) valid = false;
      else {
        if (i === s) index = ids.length;
        if (j - i > longest) longest = j - i;
        ids.push(valueOf(text, i, j));
      }
    }
    i = j;
  }
  if (close < 0) return undefined;
  return { open, close, valid: valid && index >= 0, ids, gaps, index, longest };
}

/**
 * When the list `[open, close]` is a direct child of a list of lists, its row index and the
 * number of rows. Scans within `[lo, hi)`; undefined when the parent is not a pure list of
 * lists of numbers or is not closed within the bound.
 */
function scanRow(text: string, open: number, close: number, lo: number, hi: number): IdListHit['row'] {
  // Left: count direct child lists before ours until the parent's '['.
  let depth = 0,
    before = 0,
    parentOpen = -1;
  for (let i = open - 1; i >= lo; i--) {
    const c = text.charCodeAt(i);
    if (c === RBRACK) depth++;
    else if (c === LBRACK) {
      if (depth === 0) {
        parentOpen = i;
        break;
      }
      depth--;
      if (depth === 0) before++;
    } else if (isSep(c)) continue;
    else if (isDigit(c) || c === DOT) {
      if (depth === 0 && c !== DOT) return undefined;
    } else return undefined;
  }
  if (parentOpen < 0) return undefined;
  depth = 0;
  let after = 0,
    parentClose = -1;
  for (let i = close + 1; i < hi; i++) {
    const c = text.charCodeAt(i);
    if (c === LBRACK) depth++;
    else if (c === RBRACK) {
      if (depth === 0) {
        parentClose = i;
        break;
      }
      depth--;
      if (depth === 0) after++;
    } else if (isSep(c)) continue;
    else if (isDigit(c) || c === DOT) {
      if (depth === 0 && c !== DOT) return undefined;
    } else return undefined;
  }
  if (parentClose < 0) return undefined;
  return { index: before, count: before + 1 + after, range: { start: parentOpen, end: parentClose + 1 } };
}

/** A number of a bare run: its range and value. */
interface RunItem {
  s: number;
  e: number;
  v: number;
}

/**
 * The run of accepted numbers on the line around `text[s, e)`, separated by spaces, tabs or
 * commas. Undefined when the run touches a `[` or `]`, a number that is not an id (`-1.5 791
 * 4062`, or `,315,` read as a thousands group inside a compact list), or the edge of the
 * scanning window (it may be a bracketed list too long to see whole).
 */
function scanBareRun(
  text: string,
  s: number,
  e: number,
  lo: number,
  hi: number,
  loCut: boolean,
  hiCut: boolean,
): { items: RunItem[]; index: number } | undefined {
  const left: RunItem[] = [];
  let i = s - 1;
  for (;;) {
    while (i >= lo && isLineSep(text.charCodeAt(i))) i--;
    if (i < lo) {
      if (loCut) return undefined;
      break;
    } // cut by the window: unknown context
    const c = text.charCodeAt(i);
    if (c === LBRACK || c === RBRACK) return undefined;
    if (!isDigit(c)) break;
    let j = i;
    while (j - 1 >= lo && isDigit(text.charCodeAt(j - 1))) j--;
    if (j === lo && loCut) return undefined;
    if (classifyNumber(text, j, i + 1, false) !== undefined) return undefined; // a rejected number next door: context unclear
    left.push({ s: j, e: i + 1, v: valueOf(text, j, i + 1) });
    i = j - 1;
  }
  const right: RunItem[] = [];
  i = e;
  for (;;) {
    while (i < hi && isLineSep(text.charCodeAt(i))) i++;
    if (i >= hi) {
      if (hiCut) return undefined;
      break;
    }
    const c = text.charCodeAt(i);
    if (c === LBRACK || c === RBRACK) return undefined;
    if (!isDigit(c)) break;
    let j = i;
    while (j < hi && isDigit(text.charCodeAt(j))) j++;
    if (j === hi && hiCut) return undefined;
    if (classifyNumber(text, i, j, false) !== undefined) return undefined;
    right.push({ s: i, e: j, v: valueOf(text, i, j) });
    i = j;
  }
  // A bracket right after the separators that ended the run means a failed bracket list.
  const items = [...left.reverse(), { s, e, v: valueOf(text, s, e) }, ...right];
  return { items, index: left.length };
}

/**
 * Finds what is under the cursor: an update phrase, an element of an id list, or a lone id.
 * @param text the text to scan (a whole document or a window of it; offsets are relative to it).
 * @param offset the cursor (the character under the mouse), 0 ≤ offset < text.length.
 * @returns undefined when the character at `offset` is not part of any of them, or the number
 *   there fails the rules in the module docs.
 */
export function findIdsAt(text: string, offset: number, options: IdScanOptions = {}): IdHit | undefined {
  if (!(offset >= 0 && offset < text.length)) return undefined;
  const minDigits = Math.max(1, options.minDigits ?? DEFAULT_MIN_DIGITS);
  const vocab = options.vocabSize;
  const maxScan = Math.max(64, options.maxScan ?? DEFAULT_MAX_SCAN);
  const lo = Math.max(0, offset - maxScan),
    hi = Math.min(text.length, offset + maxScan);
  const loCut = lo > 0 || !!options.clipped?.start,
    hiCut = hi < text.length || !!options.clipped?.end;
  const c = text.charCodeAt(offset);
  if (isAsciiLetter(c)) return findUpdateAt(text, offset);
  if (!isDigit(c)) return undefined;
  let s = offset,
    e = offset + 1;
  while (s > lo && isDigit(text.charCodeAt(s - 1))) s--;
  while (e < hi && isDigit(text.charCodeAt(e))) e++;
  if (e - s > MAX_ID_DIGITS + 1) return undefined;
  // The number is cut by the scanning window: it cannot be judged.
  if ((s === lo && loCut) || (e === hi && hiCut)) return undefined;

  const upd = findUpdateAt(text, offset);
  if (upd) return upd;

  if (inShapeContext(text, s)) return undefined;
  const br = scanBrackets(text, s, e, lo, hi);
  if (br?.valid && br.ids.length >= 2 && br.longest >= minDigits && enoughKnown(br.ids, vocab)) {
    return {
      kind: 'list',
      id: br.ids[br.index],
      range: { start: s, end: e },
      index: br.index,
      ids: br.ids,
      listRange: { start: br.open, end: br.close + 1 },
      form: 'brackets',
      gaps: br.gaps,
      row: scanRow(text, br.open, br.close, lo, hi),
    };
  }
  const inBrackets = br !== undefined;
  if (classifyNumber(text, s, e, inBrackets) !== undefined) return undefined;
  if (!inBrackets) {
    const run = scanBareRun(text, s, e, lo, hi, loCut, hiCut);
    if (run && run.items.length >= 2) {
      const long = run.items.filter((it) => it.e - it.s >= minDigits).length;
      const ids = run.items.map((it) => it.v);
      if (long >= 2 && enoughKnown(ids, vocab)) {
        return {
          kind: 'list',
          id: ids[run.index],
          range: { start: s, end: e },
          index: run.index,
          ids,
          listRange: { start: run.items[0].s, end: run.items[run.items.length - 1].e },
          form: 'bare',
          gaps: [],
        };
      }
    }
  }
  const id = valueOf(text, s, e);
  if (e - s < minDigits) return undefined;
  if (vocab !== undefined && id >= vocab) return undefined;
  return { kind: 'id', id, range: { start: s, end: e } };
}

/** With a known vocabulary, at least half the elements must be in it. */
function enoughKnown(ids: readonly number[], vocab: number | undefined): boolean {
  if (vocab === undefined) return true;
  let known = 0;
  for (const id of ids) if (id < vocab) known++;
  return known * 2 >= ids.length;
}

/** A number in a selection that was not taken as an id. */
export interface SkippedNumber {
  /** The text of the number with its sign or fraction (`-100`, `0.5`, `55,000`). */
  text: string;
  /** Where it starts in the scanned text. */
  start: number;
  reason: NumberRejection;
}

const NUMBERISH = /[0-9.:/+\-eE#%]/;
const GROUPED = /[0-9,]/;

/** Every id in a selection, for Decode Selection. */
export interface ExtractedIds {
  /** All ids, in text order. */
  ids: number[];
  /**
   * The same ids grouped: one group per innermost `[…]` (a row of a tensor print), and one
   * per stretch of ids outside brackets.
   */
  rows: number[][];
  /** Numbers that were not ids (negatives, decimals, formatted, dates…), excluding digits inside identifiers (`uint32`). */
  skipped: SkippedNumber[];
}

/**
 * Extracts every id from a piece of text (a selection), in one linear pass, with the same
 * per-number rules as {@link findIdsAt} ({@link classifyNumber}). No digit-count or
 * vocabulary rule: the user chose the text.
 */
export function extractIds(text: string): ExtractedIds {
  const ids: number[] = [];
  const rows: number[][] = [];
  const skipped: SkippedNumber[] = [];
  let row: number[] = [];
  let depth = 0;
  /** End of the text already reported as a skipped number (or joined to one); see below. */
  let floor = 0;
  const flush = () => {
    if (row.length) {
      rows.push(row);
      row = [];
    }
  };
  const len = text.length;
  for (let i = 0; i < len;) {
    const c = text.charCodeAt(i);
    if (c === LBRACK) {
      depth++;
      flush();
      i++;
      continue;
    }
    if (c === RBRACK) {
      depth = Math.max(0, depth - 1);
      flush();
      i++;
      continue;
    }
    if (!isDigit(c)) {
      i++;
      continue;
    }
    let j = i;
    while (j < len && isDigit(text.charCodeAt(j))) j++;
    const why = classifyNumber(text, i, j, depth > 0) ?? (inShapeContext(text, i) ? 'shape' : undefined);
    if (why === undefined) {
      const v = valueOf(text, i, j);
      ids.push(v);
      row.push(v);
    } else if (why !== 'identifier') {
      // Report the number as a person wrote it: sign, fraction, exponent, groups, date parts.
      // A number inside (or whose written form runs into) the previous report is part of it. The
      // walks never go left of `floor`, the end of what was already reported or joined to a report,
      // so each character is walked over a bounded number of times: a selection of
      // `791,4062,14198,…` or `1.1.1.…` stays linear instead of re-walking the whole run per number.
      if (i < floor) {
        i = j;
        continue;
      }
      const set = why === 'formatted' ? GROUPED : NUMBERISH;
      let a = i,
        b = j;
      while (a > floor && set.test(text[a - 1])) a--;
      if (a === floor && floor > 0 && set.test(text[floor - 1])) {
        floor = j;
        i = j;
        continue;
      }
      while (b < len && set.test(text[b])) b++;
      while (a < i && /[,.:/eE%]/.test(text[a])) a++;
      while (b > j && /[,.:/+\-eE#]/.test(text[b - 1])) b--;
      skipped.push({ text: text.slice(a, b), start: a, reason: why });
      floor = b;
    }
    i = j;
  }
  flush();
  return { ids, rows, skipped };
}
