/**
 * A fast path for reading what a `tokenizer.json`'s BPE vocabulary says about ids (`loadTokenizerVocab`,
 * the stream index's parameters) without building its object: `JSON.parse` makes a 100,000-key
 * object in dictionary mode (about 70 ms for dolma2's) and walking it costs as much again, when
 * all that is needed is which ids it lists. One linear pass over the text finds the
 * `model.vocab` object, reads its `"token": id` members with a strict JSON grammar (collecting
 * the ids, checking each token against the byte-level alphabet and each id against the id
 * range), and returns the text with that object blanked to `{` + spaces + `}` (same length, so
 * any `JSON.parse` error elsewhere keeps its position) for the caller to parse and check the rest.
 *
 * It only ever says "here is the same answer" or "don't know": anything that is not the common,
 * valid shape — nesting deeper than the limit, no or several `model`/`vocab` keys, a key written
 * with escapes at the top two levels, a value that is not an object, a duplicate token (JSON
 * keeps the last one: its first id becomes a hole), an id that is not an integer in range, a
 * token outside the alphabet, any grammar fault inside the vocabulary — returns undefined, and the
 * caller parses the whole text as before, which gives the same result or the same message.
 * No Node APIs: pure computation.
 */

/** What {@link scanBpeVocab} found. */
export interface ScannedVocab {
  /** The text with the `model.vocab` object replaced by an empty object of the same length. */
  blanked: string;
  /** The vocabulary's ids, in the order of its members (no duplicate tokens). */
  ids: Int32Array;
  /** The largest id, or -1 for an empty vocabulary. */
  maxId: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** JSON whitespace: space, tab, line feed, carriage return. */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/**
 * Index just past the string whose opening quote is at `i` (escapes skipped, not checked), or -1
 * when it does not end. `indexOf` finds the quotes (much faster than a loop over characters); a
 * quote preceded by an odd number of backslashes is escaped.
 */
function stringEnd(text: string, i: number): number {
  for (let q = text.indexOf('"', i + 1); q >= 0; q = text.indexOf('"', q + 1)) {
    let b = q - 1;
    while (b > i && text.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
  }
  return -1;
}

/** True when the string token [start, end) (quotes included) holds a backslash. */
function hasEscape(text: string, start: number, end: number): boolean {
  for (let k = start + 1; k < end - 1; k++) if (text.charCodeAt(k) === BACKSLASH) return true;
  return false;
}

/**
 * Finds and reads the `model.vocab` object of a tokenizer.json text (see the file header).
 * @param maxDepth deepest nesting accepted (the caller's JSON limit); deeper: undefined.
 * @param idFloor ids must be integers in `[0, idFloor)`.
 * @param alphabet char code → byte (≥ 0) for the characters a token may hold (the byte-level alphabet).
 * @returns the ids and the blanked text, or undefined: parse the whole text instead.
 */
export function scanBpeVocab(text: string, maxDepth: number, idFloor: number, alphabet: Int16Array): ScannedVocab | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_OBJECT) return undefined;
  let depth = 0;
  /** The depth of the `model` object while inside it (2), else 0. */
  let modelDepth = 0;
  let models = 0;
  let vocab: { start: number; end: number; ids: Int32Array; maxId: number } | undefined;
  let vocabs = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      // A key of the top level or of the model object: the string is followed by a colon.
      if (depth === 1 || (depth === 2 && modelDepth === 2)) {
        const colon = skipSpace(text, end);
        if (text.charCodeAt(colon) === COLON) {
          if (hasEscape(text, i, end)) return undefined;
          const key = text.slice(i + 1, end - 1);
          const v = skipSpace(text, colon + 1);
          if (depth === 1 && key === 'model') {
            models++;
            if (text.charCodeAt(v) === OPEN_OBJECT) {
              depth = 2;
              modelDepth = 2;
              i = v;
              continue;
            }
          } else if (depth === 2 && key === 'vocab') {
            vocabs++;
            if (text.charCodeAt(v) !== OPEN_OBJECT) return undefined;
            const read = readVocabObject(text, v, idFloor, alphabet);
            if (!read) return undefined;
            vocab = { start: v, ...read };
            i = read.end - 1;
            continue;
          }
        }
      }
      i = end - 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > maxDepth) return undefined;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      if (depth < 2) modelDepth = 0;
    }
  }
  if (models !== 1 || vocabs !== 1 || !vocab) return undefined;
  const blanked = `${text.slice(0, vocab.start)}{${' '.repeat(vocab.end - vocab.start - 2)}}${text.slice(vocab.end)}`;
  return { blanked, ids: vocab.ids, maxId: vocab.maxId };
}

/**
 * The tokens seen so far, as spans of the text (no string made per token): an open-addressing
 * table of their FNV-1a hashes over the decoded characters; equal hashes compare the tokens.
 */
class TokenSet {
  private slots = new Int32Array(1 << 18);
  private mask = (1 << 18) - 1;
  private hashes = new Int32Array(1 << 17);
  private starts = new Int32Array(1 << 17);
  private ends = new Int32Array(1 << 17);
  private count = 0;

  constructor(private readonly text: string) {}

  /** The decoded token of span [start, end) (no quotes): a slice, or JSON's reading of an escaped one. */
  private token(start: number, end: number): string {
    const raw = this.text.slice(start, end);
    return raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
  }

  /** Adds the token; false when it was there already. */
  add(hash: number, start: number, end: number): boolean {
    if (this.count * 2 >= this.slots.length) this.grow();
    let s = hash & this.mask;
    for (let e = this.slots[s]; e !== 0; s = (s + 1) & this.mask, e = this.slots[s]) {
      if (this.hashes[e - 1] === hash && this.token(this.starts[e - 1], this.ends[e - 1]) === this.token(start, end)) return false;
    }
    if (this.count === this.hashes.length) {
      for (const k of ['hashes', 'starts', 'ends'] as const) {
        const grown = new Int32Array(this[k].length * 2);
        grown.set(this[k]);
        this[k] = grown;
      }
    }
    this.hashes[this.count] = hash;
    this.starts[this.count] = start;
    this.ends[this.count] = end;
    this.slots[s] = ++this.count;
    return true;
  }

  private grow(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    this.mask = this.slots.length - 1;
    for (let e = 1; e <= this.count; e++) {
      let s = this.hashes[e - 1] & this.mask;
      while (this.slots[s] !== 0) s = (s + 1) & this.mask;
      this.slots[s] = e;
    }
  }
}

/** FNV-1a over a string's UTF-16 code units. */
function fnv(s: string): number {
  let h = 0x811c9dc5 | 0;
  for (let k = 0; k < s.length; k++) h = Math.imul(h ^ s.charCodeAt(k), 0x01000193);
  return h;
}

/**
 * Reads the object `{ "token": id, … }` whose `{` is at `open` with JSON's grammar; every token in
 * `alphabet`, every id an integer in `[0, idFloor)`, no token twice.
 * @returns the index just past its `}`, the ids and the largest one; undefined for anything else.
 */
function readVocabObject(
  text: string,
  open: number,
  idFloor: number,
  alphabet: Int16Array,
): { end: number; ids: Int32Array; maxId: number } | undefined {
  let ids = new Int32Array(1 << 17);
  let count = 0;
  let maxId = -1;
  const seen = new TokenSet(text);
  let i = skipSpace(text, open + 1);
  if (text.charCodeAt(i) === CLOSE_OBJECT) return { end: i + 1, ids: ids.subarray(0, 0), maxId };
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    // The token: every character in the alphabet (a control character is not); escapes (`\"`,
    // `\\` are byte-level tokens too) decoded by JSON.parse and checked again.
    const start = i + 1;
    let j = start;
    let escaped = false;
    let hash = 0x811c9dc5 | 0;
    for (; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        escaped = true;
        j++;
      } else if (c >= alphabet.length || alphabet[c] < 0) return undefined;
      hash = Math.imul(hash ^ c, 0x01000193);
    }
    if (j >= text.length) return undefined;
    if (escaped) {
      let token: string;
      try {
        token = JSON.parse(text.slice(start - 1, j + 1)) as string;
      } catch {
        return undefined;
      }
      for (let k = 0; k < token.length; k++) {
        const c = token.charCodeAt(k);
        if (c >= alphabet.length || alphabet[c] < 0) return undefined;
      }
      hash = fnv(token);
    }
    // JSON keeps the last of two equal keys (the first one's id would be a hole): the slow way.
    if (!seen.add(hash, start, j)) return undefined;
    i = skipSpace(text, j + 1);
    if (text.charCodeAt(i) !== COLON) return undefined;
    i = skipSpace(text, i + 1);
    // The id: JSON's number grammar, then an integer in range (1.0 and 1e2 are integers, as JSON.parse reads them).
    const numStart = i;
    if (text.charCodeAt(i) === 0x2d /* - */) i++;
    const intStart = i;
    let whole = 0;
    for (let c = text.charCodeAt(i); c >= 0x30 && c <= 0x39; c = text.charCodeAt(++i)) whole = whole * 10 + (c - 0x30);
    if (i === intStart || (text.charCodeAt(intStart) === 0x30 && i - intStart > 1)) return undefined;
    const plain = numStart === intStart && i - intStart <= 9 && text.charCodeAt(i) !== 0x2e && (text.charCodeAt(i) | 0x20) !== 0x65;
    if (text.charCodeAt(i) === 0x2e /* . */) {
      const f = ++i;
      while (i < text.length && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
      if (i === f) return undefined;
    }
    if ((text.charCodeAt(i) | 0x20) === 0x65 /* e, E */) {
      i++;
      if (text.charCodeAt(i) === 0x2b || text.charCodeAt(i) === 0x2d) i++;
      const e = i;
      while (i < text.length && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
      if (i === e) return undefined;
    }
    // A plain run of digits is its value; anything else is what Number() reads (as JSON.parse does).
    const id = plain ? whole : Number(text.slice(numStart, i));
    if (!Number.isInteger(id) || id < 0 || id >= idFloor) return undefined;
    if (count === ids.length) {
      const grown = new Int32Array(ids.length * 2);
      grown.set(ids);
      ids = grown;
    }
    ids[count++] = id;
    if (id > maxId) maxId = id;
    i = skipSpace(text, i);
    const c = text.charCodeAt(i);
    if (c === CLOSE_OBJECT) return { end: i + 1, ids: ids.subarray(0, count), maxId };
    if (c !== COMMA) return undefined;
    i = skipSpace(text, i + 1);
  }
}
