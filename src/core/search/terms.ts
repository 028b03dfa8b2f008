/**
 * Search input: term validation, `--ids` parsing, shard ranges, and the character rules of a
 * match (Unicode simple case folding classes, word characters, UTF-8 decoding at a match's
 * edges). See `./index.ts` for the match definition.
 */
import { fmt } from '../units';
import { MAX_TERMS, MAX_TERM_BYTES, SearchInputError, SearchOptions } from './types';

const UTF8 = new TextEncoder();

/** A term shown in a message: quoted, control characters escaped, cut at 40 characters. */
function show(term: string): string {
  const t = term.length > 40 ? term.slice(0, 40) + '…' : term;
  return JSON.stringify(t);
}

/**
 * Parses one `--ids` term: uint32 ids separated by commas and/or spaces (`791,4062`,
 * `791 4062`, hex `0x317`).
 * @throws SearchInputError naming the value that is not a uint32.
 */
export function parseIdTerm(term: string): number[] {
  const parts = term.split(/[\s,]+/).filter((p) => p !== '');
  if (parts.length === 0)
    throw new SearchInputError(`--ids term ${show(term)} has no ids; expected ids separated by commas, e.g. 791,4062`);
  if (parts.length > MAX_TERM_BYTES)
    throw new SearchInputError(`--ids term has ${fmt(parts.length)} ids; at most ${fmt(MAX_TERM_BYTES)} per term`);
  return parts.map((p) => {
    const v = /^0x[0-9a-f]+$/i.test(p) ? Number.parseInt(p.slice(2), 16) : /^\d+$/.test(p) ? Number(p) : NaN;
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw new SearchInputError(`--ids term ${show(term)}: ${JSON.stringify(p)} is not a token id (an integer 0..4,294,967,295)`);
    }
    return v;
  });
}

/**
 * Validates and normalizes search terms.
 * - text terms: kept as given (no trimming); rejected when empty, only whitespace, over
 *   {@link MAX_TERM_BYTES} UTF-8 bytes, or holding a lone surrogate;
 * - `ids` terms: comma/space separated uint32 ids, normalized to `"791,4062"`; at most
 *   {@link MAX_TERM_BYTES} ids; `word`/`ignoreCase` with `ids` are rejected;
 * - at most {@link MAX_TERMS} terms; duplicates are kept (each counted in its own column).
 * Idempotent: parsing parsed terms returns them unchanged.
 * @throws SearchInputError with a one-line message naming the term.
 */
export function parseTerms(raw: string[], options: SearchOptions): string[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new SearchInputError('no search term given');
  if (raw.length > MAX_TERMS) throw new SearchInputError(`${fmt(raw.length)} terms given; at most ${fmt(MAX_TERMS)} per search`);
  if (options.ids && (options.word || options.ignoreCase)) {
    throw new SearchInputError('--word and --ignore-case do not apply to --ids terms (ids match exact runs of token ids)');
  }
  return raw.map((term, i) => {
    if (typeof term !== 'string') throw new SearchInputError(`term ${i + 1} is not a string`);
    if (term === '') throw new SearchInputError(`term ${i + 1} is empty`);
    if (options.ids) return parseIdTerm(term).join(',');
    if (term.trim() === '') throw new SearchInputError(`term ${i + 1} (${show(term)}) is only whitespace`);
    if (/\p{Cs}/u.test(term)) throw new SearchInputError(`term ${i + 1} (${show(term)}) holds a lone surrogate, which is not text`);
    const bytes = UTF8.encode(term).length;
    if (bytes > MAX_TERM_BYTES)
      throw new SearchInputError(`term ${i + 1} (${show(term)}) is ${fmt(bytes)} bytes of UTF-8; at most ${fmt(MAX_TERM_BYTES)}`);
    return term;
  });
}

/**
 * Parses `A:B` (manifest entries A..B−1, 0-based; `A:` to the end, `:B` from 0; one number `A`
 * = just entry A) against `numShards` entries.
 * @throws SearchInputError when malformed, empty or outside `[0, numShards]`.
 */
export function parseShardRange(spec: string, numShards: number): [number, number] {
  const m = /^\s*(\d*)\s*(?::\s*(\d*))?\s*$/.exec(spec);
  if (!m || (m[1] === '' && (m[2] ?? '') === ''))
    throw new SearchInputError(`--shards ${JSON.stringify(spec)}: expected A:B (manifest entries A..B−1, 0-based)`);
  const a = m[1] === '' ? 0 : Number(m[1]);
  const b = m[2] === undefined ? a + 1 : m[2] === '' ? numShards : Number(m[2]);
  if (!(a < b)) throw new SearchInputError(`--shards ${spec}: the range is empty (A must be less than B)`);
  if (b > numShards)
    throw new SearchInputError(
      `--shards ${spec}: the manifest has ${fmt(numShards)} entries (0..${fmt(numShards - 1)}); B must be at most ${fmt(numShards)}`,
    );
  return [a, b];
}

/** Escapes one code point for a `u`-mode regular expression. */
function reChar(cp: number): string {
  return `\\u{${cp.toString(16)}}`;
}

/**
 * Code points from here up have no simple case fold partner: every entry of Unicode's
 * `CaseFolding.txt` (C + S) lies below U+1E944 (Adlam, the highest cased script, as of Unicode
 * 16). test/unit/search.test.ts checks it against this runtime's `/iu` for all code points above.
 */
export const CASED_END = 0x20000;

/**
 * Simple case folding classes: for each code point given, every code point with the same
 * simple case fold (JavaScript's `/iu` canonicalization, i.e. `CaseFolding.txt` C + S), itself
 * included, ascending. One pass over the code points below {@link CASED_END} (≈ 15 ms; one from
 * there up is alone in its class), only for `--ignore-case`.
 */
export function caseFoldClasses(cps: Iterable<number>): Map<number, number[]> {
  const uniq = [...new Set(cps)];
  const out = new Map<number, number[]>(uniq.map((c) => [c, c >= CASED_END ? [c] : []]));
  const low = uniq.filter((c) => c < CASED_END);
  if (low.length === 0) return out;
  const any = new RegExp(`^[${low.map(reChar).join('')}]$`, 'iu');
  const each = low.map((c) => new RegExp(`^${reChar(c)}$`, 'iu'));
  for (let x = 0; x < CASED_END; x++) {
    if (x === 0xd800) x = 0xe000;
    const s = String.fromCodePoint(x);
    if (!any.test(s)) continue;
    for (let i = 0; i < low.length; i++) if (each[i].test(s)) out.get(low[i])!.push(x);
  }
  return out;
}

const WORD_RE = /^[\p{L}\p{N}_]$/u;
const ASCII_WORD = new Uint8Array(128).map((_, c) => (WORD_RE.test(String.fromCharCode(c)) ? 1 : 0));
const wordCache = new Map<number, boolean>();

/** True for a word character: Unicode `\p{L}`, `\p{N}` or `_`. */
export function isWordCodePoint(cp: number): boolean {
  if (cp < 128) return ASCII_WORD[cp] === 1;
  let w = wordCache.get(cp);
  if (w === undefined) {
    w = WORD_RE.test(String.fromCodePoint(cp));
    if (wordCache.size < 100_000) wordCache.set(cp, w);
  }
  return w;
}

/** Length of the UTF-8 sequence a lead byte starts (0 for a byte that cannot start one). */
export function utf8LeadLength(b: number): number {
  return b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
}

/**
 * The classes of a token's first and last character for a whole-word search's edges, as the
 * scanner decides them (`edgeAfter` and `edgeBefore` in `./scan.ts`) from the token's bytes
 * alone: bits 0–1 the class of its first character (the one after a match that ends just before
 * the token), bits 2–3 of its last (the one before a match that starts just after it). 0: not a
 * word character, or bytes a decoder shows as U+FFFD; 1: a word character; 2: the token alone
 * does not settle it (no bytes, or a character cut at the token's edge, which the scanner reads
 * across tokens). Used by the search kernel (`./scanKernel.wat`) to count whole words without a step.
 * @param start the token's first byte in `bytes` (default 0).
 * @param end the end of the token's bytes in `bytes` (exclusive; default its length).
 */
export function edgeClasses(bytes: Uint8Array, start = 0, end = bytes.length): number {
  const n = end - start;
  if (n === 0) return 10;
  const cls = (cp: number) => (cp < 0 || !isWordCodePoint(cp) ? 0 : 1);
  // first: a continuation byte may belong to a character that starts in the token before
  let first = 2;
  const b0 = bytes[start];
  if (b0 < 0x80) first = ASCII_WORD[b0];
  else if ((b0 & 0xc0) !== 0x80) {
    const want = Math.max(1, utf8LeadLength(b0));
    if (want <= n) first = cls(decodeOneChar(bytes.subarray(start, start + want)));
  }
  // last: the bytes back to the nearest lead (at most 4), settled inside the token when it holds
  // 4 bytes or its first byte is not a continuation byte
  let last = 2;
  const bz = bytes[end - 1];
  if (bz < 0x80) last = ASCII_WORD[bz];
  else if (n >= 4 || (b0 & 0xc0) !== 0x80) {
    last = 0; // only continuation bytes: U+FFFD
    for (let k = end - 1; k >= Math.max(start, end - 4); k--) {
      if ((bytes[k] & 0xc0) !== 0x80) {
        last = cls(decodeOneChar(bytes.subarray(k, end)));
        break;
      }
    }
  }
  return first | (last << 2);
}

/**
 * Decodes one complete UTF-8 character from `bytes` (exactly its bytes), or -1 when they are
 * not one valid character (which a decoder shows as U+FFFD, a non-word character).
 */
export function decodeOneChar(bytes: ArrayLike<number>): number {
  const n = bytes.length;
  if (n === 0) return -1;
  const b0 = bytes[0];
  if (utf8LeadLength(b0) !== n) return -1;
  if (n === 1) return b0;
  for (let i = 1; i < n; i++) if ((bytes[i] & 0xc0) !== 0x80) return -1;
  const b1 = bytes[1];
  if (n === 3 && ((b0 === 0xe0 && b1 < 0xa0) || (b0 === 0xed && b1 >= 0xa0))) return -1;
  if (n === 4 && ((b0 === 0xf0 && b1 < 0x90) || (b0 === 0xf4 && b1 >= 0x90))) return -1;
  if (n === 2) return ((b0 & 0x1f) << 6) | (b1 & 0x3f);
  if (n === 3) return ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (bytes[2] & 0x3f);
  return ((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((bytes[2] & 0x3f) << 6) | (bytes[3] & 0x3f);
}

/** Code points of a string (surrogate pairs joined). */
export function codePoints(s: string): number[] {
  return Array.from(s, (c) => c.codePointAt(0)!);
}

/** UTF-8 bytes of one code point. */
export function utf8Of(cp: number): number[] {
  return Array.from(UTF8.encode(String.fromCodePoint(cp)));
}
