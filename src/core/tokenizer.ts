/**
 * Tokenizer support for byte-level BPE tokenizers in Hugging Face `tokenizer.json` format
 * (dolma2, cl100k-style). Decoding is ours and table-driven: every id maps to its byte string
 * (the byte-level alphabet inverted, added tokens as their UTF-8 content), so a run of ids
 * decodes by concatenating bytes and running one `TextDecoder`, which gives text identical to
 * `@huggingface/tokenizers`' `decode(ids, { clean_up_tokenization_spaces: false })` at several
 * times its speed. Encoding uses the library (loaded lazily on first use).
 *
 * Token-by-token display works on bytes too: a token holding part of a multi-byte UTF-8
 * character shows that part as hex bytes (`<E2 80>`), never as "�" (see docs/format.md).
 */
import * as fs from 'fs';
import * as path from 'path';
import { DataError } from './errors';
import { fmt } from './units';
import { MAX_JSON_DEPTH, lineColumnAt, parseJson } from './safeJson';
import { scanBpeVocab } from './vocabScan';
import { EncodeOptions, Encoder } from './encode';
import { READ_LIMITS, readRegularTextFile } from './safeRead';

/** What a single token is, for display. */
export type PieceKind =
  /** Ordinary token whose bytes are complete UTF-8. */
  | 'text'
  /** Ordinary token holding (part of) an incomplete UTF-8 character: `text` shows those bytes as `<XX XX>`. */
  | 'partial'
  /** Added token marked `special` (EOS, pad, FIM…). */
  | 'special'
  /** Added token not marked special (e.g. `|||EMAIL_ADDRESS|||`). */
  | 'added'
  /** Id with no token in this tokenizer (≥ vocabulary size, or a hole). Decodes to "". */
  | 'unknown';

/** One token prepared for display. Plain data: safe to post to a webview. */
export interface TokenPiece {
  id: number;
  /** Display text: the decoded text, with incomplete UTF-8 bytes written as `<XX XX>`. */
  text: string;
  kind: PieceKind;
  /** The token's bytes as upper-case hex pairs separated by spaces ("E2 80 99"). */
  hex: string;
}

/**
 * What a tokenizer says about ids, without decode tables: the stream index's scan parameters
 * (`indexParamsFor`) need only this. {@link loadTokenizerVocab} gives it for a fraction of
 * {@link loadTokenizer}'s time and memory (no byte table per id); every {@link LoadedTokenizer} is one.
 */
export interface TokenizerVocab {
  /** Absolute path of the `tokenizer.json`. */
  file: string;
  /** Number of ids with a token (max id + 1). Ids ≥ this are unknown. */
  vocabSize: number;
  /** True for added tokens marked special. */
  isSpecial(id: number): boolean;
  /** True when the id has a token. */
  isKnown(id: number): boolean;
  /** Content of an added token (`<|endoftext|>`), or undefined. */
  addedContent(id: number): string | undefined;
}

/** A loaded tokenizer: decode tables plus metadata. */
export interface LoadedTokenizer extends TokenizerVocab {
  /** Decodes ids to text, identical to the library's decode (unknown ids → ""). */
  decode(ids: ArrayLike<number>): string;
  /**
   * The concatenated bytes of a run of ids (unknown ids contribute none), for callers that
   * decode with their own (e.g. streaming) `TextDecoder`. The view is valid until the next
   * call of `runBytes` or `decode`: copy it to keep it.
   */
  runBytes(ids: ArrayLike<number>): Uint8Array;
  /** Per-token display pieces (see {@link TokenPiece}). */
  pieces(ids: ArrayLike<number>): TokenPiece[];
  /** The token's raw bytes (empty for unknown ids). */
  bytesOf(id: number): Uint8Array;
  /**
   * Encodes text to ids with the library, in a worker thread with a time limit (`encode.ts`).
   * @throws DataError naming the file and field (missing `merges`, unknown pre-tokenizer type) or,
   *   past the time limit, the file and the pattern; CancelledError when `opts.signal` aborts.
   */
  encode(text: string, opts?: EncodeOptions): Promise<number[]>;
  /** Closes the encoding worker, if one runs. */
  dispose?(): void;
  /** The library's own decode (for tests and benchmarks). */
  libraryDecode(ids: number[]): Promise<string>;
}

interface TokenizerJson {
  model?: { type?: string; vocab?: Record<string, number> };
  added_tokens?: { id: number; content: string; special?: boolean }[];
  decoder?: { type?: string } | null;
}

/**
 * GPT-2's byte-level alphabet: byte → printable char, inverted here to char code → byte (−1 for a
 * character outside it). A vocabulary token may hold only these characters.
 */
export function byteLevelDecoderMap(): Int16Array {
  const map = new Int16Array(0x200).fill(-1);
  const keep = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (keep(b)) map[b] = b;
    else map[256 + n++] = b;
  }
  return map;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));

/** Hex pairs separated by spaces: "E2 80 99". */
export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += (i ? ' ' : '') + HEX[bytes[i]];
  return s;
}

/**
 * Loads a `tokenizer.json` (byte-level BPE) and builds the id → bytes table.
 * @param file path of the `tokenizer.json`.
 * @throws DataError when the file is missing, not JSON, or not a byte-level BPE tokenizer.
 */
export async function loadTokenizer(file: string): Promise<LoadedTokenizer> {
  file = path.resolve(file);
  return buildTokenizer(await readTokenizerJson(file), file);
}

/**
 * Loads what a `tokenizer.json` says about ids (see {@link TokenizerVocab}), checked exactly as
 * {@link loadTokenizer} checks it (the same file is accepted or refused with the same message),
 * without building the decode tables.
 * @param file path of the `tokenizer.json`.
 * @throws DataError as {@link loadTokenizer}.
 */
export async function loadTokenizerVocab(file: string): Promise<TokenizerVocab> {
  file = path.resolve(file);
  const text = await readTokenizerText(file);
  // The fast path (`vocabScan.ts`): the vocabulary's ids read from the text, the rest parsed;
  // anything unusual is parsed whole, as loadTokenizer does (the same result or message).
  const scanned = scanBpeVocab(text, MAX_JSON_DEPTH, CORRUPT_ID_FLOOR, byteLevelDecoderMap());
  let json: TokenizerJson | undefined;
  if (scanned) {
    try {
      json = JSON.parse(scanned.blanked) as TokenizerJson;
    } catch {
      json = undefined;
    }
    // The blanked object is where the full parse would find the vocabulary (else: the slow way).
    const blank = json?.model?.vocab;
    if (!blank || typeof blank !== 'object' || Array.isArray(blank) || Object.keys(blank).length > 0) json = undefined;
  }
  const { vocabIds, added, vocabSize } = json
    ? checkedTokenizerJson(json, file, scanned)
    : checkedTokenizerJson(parseTokenizerText(text, file), file);
  const known = new Uint8Array(vocabSize);
  // The ids the checking pass collected: no second walk over the vocab object's 100,000 keys.
  for (let i = 0; i < vocabIds.length; i++) known[vocabIds[i]] = 1;
  const special = new Uint8Array(vocabSize);
  const addedContent = new Map<number, string>();
  for (const t of added) {
    known[t.id] = 1;
    addedContent.set(t.id, t.content);
    if (t.special) special[t.id] = 1;
  }
  const isKnown = (id: number) => id >= 0 && id < vocabSize && known[id] === 1;
  return {
    file,
    vocabSize,
    isKnown,
    isSpecial: (id) => isKnown(id) && special[id] === 1,
    addedContent: (id) => addedContent.get(id),
  };
}

/**
 * Reads and parses a `tokenizer.json` (a byte-order mark is read past).
 * @param file absolute path.
 * @throws DataError when the file is missing, unreadable, too big or not JSON (naming the line).
 */
async function readTokenizerJson(file: string): Promise<TokenizerJson> {
  return parseTokenizerText(await readTokenizerText(file), file);
}

/**
 * Reads a `tokenizer.json`'s text (a byte-order mark is read past).
 * @throws DataError when the file is missing, unreadable or too big.
 */
async function readTokenizerText(file: string): Promise<string> {
  let text: string;
  try {
    text = await readRegularTextFile(file, 'a tokenizer.json', READ_LIMITS.tokenizer);
  } catch (err) {
    if (err instanceof DataError) throw err;
    throw new DataError(`${file}: cannot read tokenizer: ${(err as Error).message}`, file);
  }
  // A byte-order mark is not JSON, but editors on Windows write one: read past it.
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Parses a `tokenizer.json`'s text.
 * @throws DataError when it is not JSON (naming the line).
 */
function parseTokenizerText(text: string, file: string): TokenizerJson {
  const parsed = parseJson(text);
  if (!parsed.ok) {
    const at = parsed.offset !== undefined ? lineColumnAt(text, parsed.offset) : undefined;
    throw new DataError(
      `${file}${at ? ` line ${at.line}` : ''}: not valid JSON (${parsed.error}); expected a Hugging Face tokenizer.json`,
      file,
      at?.line,
    );
  }
  return parsed.value as TokenizerJson;
}

/**
 * Checks a parsed `tokenizer.json` for what both loaders rely on: an object with a BPE model and
 * its vocab, a ByteLevel decoder (or none), added tokens with string content, every id an integer
 * in `[0, CORRUPT_ID_FLOOR)` (checked before anything is sized by them: one id of 4e9 would
 * otherwise ask for gigabytes), and every vocab token in the byte-level alphabet.
 * @returns the vocab, its ids in the vocab's key order (`vocabIds`, collected by the checking pass:
 *   enumerating 100,000 keys of a dictionary-mode object costs ~35 ms of CPU, so a caller that needs
 *   only the ids walks this array instead of the object again), the added tokens and the vocabulary
 *   size (max id + 1).
 * @param scanned the vocabulary as `scanBpeVocab` read it from the text (its ids and tokens
 *   checked there; `json.model.vocab` is then the blanked, empty object, and so is the returned `vocab`).
 * @throws DataError naming the file and the field.
 */
function checkedTokenizerJson(
  json: TokenizerJson,
  file: string,
  scanned?: { ids: Int32Array; maxId: number },
): { vocab: Record<string, number>; vocabIds: Int32Array; added: NonNullable<TokenizerJson['added_tokens']>; vocabSize: number } {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new DataError(
      `${file}: the top level is ${json === null ? 'null' : Array.isArray(json) ? 'an array' : typeof json}; expected a Hugging Face tokenizer.json object`,
      file,
    );
  }
  const modelType = json.model?.type;
  if (modelType !== undefined && modelType !== 'BPE') {
    throw new DataError(
      `${file}: model.type is ${JSON.stringify(modelType)}, expected "BPE" (a byte-level BPE tokenizer such as dolma2)`,
      file,
    );
  }
  const vocab = json.model?.vocab;
  if (!vocab || typeof vocab !== 'object' || Array.isArray(vocab)) {
    throw new DataError(`${file}: no model.vocab object; expected a byte-level BPE tokenizer.json`, file);
  }
  if (json.decoder && json.decoder.type !== 'ByteLevel') {
    throw new DataError(`${file}: decoder is ${json.decoder.type}, expected ByteLevel (byte-level BPE such as dolma2)`, file);
  }
  const added = json.added_tokens ?? [];
  if (!Array.isArray(added)) throw new DataError(`${file}: added_tokens is not an array`, file);
  const dec = byteLevelDecoderMap();
  let vocabSize = scanned ? scanned.maxId + 1 : 0;
  let ids = scanned ? scanned.ids : new Int32Array(1 << 17);
  let count = scanned ? scanned.ids.length : 0;
  // for…in, not Object.entries: no array of 100,000 pairs (a third of a big vocab's load time).
  // Read from the text already (scanned): nothing to walk.
  for (const tok in scanned ? {} : vocab) {
    const id = vocab[tok];
    vocabSize = Math.max(vocabSize, checkedId(id, () => `model.vocab[${JSON.stringify(tok)}]`, file) + 1);
    if (count === ids.length) {
      const grown = new Int32Array(ids.length * 2);
      grown.set(ids);
      ids = grown;
    }
    ids[count++] = id;
    for (let i = 0; i < tok.length; i++) {
      const c = tok.charCodeAt(i);
      if (c >= dec.length || dec[c] < 0)
        throw new DataError(`${file}: vocab token ${JSON.stringify(tok)} (id ${id}) has a character outside the byte-level alphabet`, file);
    }
  }
  added.forEach((t, i) => {
    if (typeof t !== 'object' || t === null || typeof t.content !== 'string') {
      throw new DataError(`${file}: added_tokens[${i}] has no string content; expected { "id": <int>, "content": "<text>" }`, file);
    }
    vocabSize = Math.max(vocabSize, checkedId(t.id, () => `added_tokens[${i}] (${JSON.stringify(t.content)})`, file) + 1);
  });
  return { vocab, vocabIds: ids.subarray(0, count), added, vocabSize };
}

/**
 * Builds a tokenizer from a parsed `tokenizer.json` object.
 * @throws DataError when it is not an object, its model is not BPE or has no vocab, an id is not an
 *   integer in `[0, CORRUPT_ID_FLOOR)`, an added token has no content, or a token uses characters
 *   outside the byte-level alphabet (the checks of `checkedTokenizerJson`).
 */
export function buildTokenizer(json: TokenizerJson, file: string): LoadedTokenizer {
  const { vocab, added, vocabSize } = checkedTokenizerJson(json, file);
  const dec = byteLevelDecoderMap();
  const lengths = new Int32Array(vocabSize).fill(-1);
  const tmp: (Uint8Array | undefined)[] = new Array(vocabSize);
  const addedContent = new Map<number, string>();
  const special = new Uint8Array(vocabSize);
  const utf8 = new TextEncoder();
  // for…in, not Object.entries (as the check above): no array of 100,000 pairs to build and collect.
  for (const tok in vocab) {
    const id = vocab[tok];
    // Every character is in the alphabet (checked above).
    const b = new Uint8Array(tok.length);
    for (let i = 0; i < tok.length; i++) b[i] = dec[tok.charCodeAt(i)];
    tmp[id] = b;
  }
  for (const t of added) {
    tmp[t.id] = utf8.encode(t.content);
    addedContent.set(t.id, t.content);
    if (t.special) special[t.id] = 1;
  }
  let total = 0;
  for (let id = 0; id < vocabSize; id++)
    if (tmp[id]) {
      lengths[id] = tmp[id]!.length;
      total += tmp[id]!.length;
    }
  // One flat byte table with offsets: the decode hot path touches only typed arrays.
  const table = new Uint8Array(total);
  const offsets = new Uint32Array(vocabSize + 1);
  let o = 0;
  for (let id = 0; id < vocabSize; id++) {
    offsets[id] = o;
    const b = tmp[id];
    if (b) {
      table.set(b, o);
      o += b.length;
    }
  }
  offsets[vocabSize] = o;
  const textDecoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  let scratch = new Uint8Array(1 << 16);

  const isKnown = (id: number) => id >= 0 && id < vocabSize && lengths[id] >= 0;
  const bytesOf = (id: number) => (isKnown(id) ? table.subarray(offsets[id], offsets[id + 1]) : new Uint8Array(0));

  function runBytes(ids: ArrayLike<number>): Uint8Array {
    let n = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (id < vocabSize) n += offsets[id + 1] - offsets[id];
    }
    if (scratch.length < n) scratch = new Uint8Array(Math.max(n, scratch.length * 2));
    let w = 0;
    // A plain byte loop: tokens average ~4 bytes, so per-token subarray/set calls cost more than they copy.
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (id >= vocabSize) continue;
      for (let j = offsets[id], e = offsets[id + 1]; j < e; j++) scratch[w++] = table[j];
    }
    return scratch.subarray(0, w);
  }

  function decode(ids: ArrayLike<number>): string {
    return textDecoder.decode(runBytes(ids));
  }

  function pieces(ids: ArrayLike<number>): TokenPiece[] {
    const out: TokenPiece[] = new Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!isKnown(id)) {
        out[i] = { id, text: '', kind: 'unknown', hex: '' };
        continue;
      }
      const bytes = bytesOf(id);
      const content = addedContent.get(id);
      if (content !== undefined) {
        out[i] = { id, text: content, kind: special[id] ? 'special' : 'added', hex: toHex(bytes) };
        continue;
      }
      const { text, complete } = bytesToDisplay(bytes);
      out[i] = { id, text, kind: complete ? 'text' : 'partial', hex: toHex(bytes) };
    }
    return out;
  }

  let library: Promise<LibraryTokenizer> | undefined;
  const lib = () => (library ??= loadLibrary(json, file));
  const encoder = new Encoder(file, json);

  return {
    file,
    vocabSize,
    decode,
    runBytes,
    pieces,
    bytesOf,
    isKnown,
    isSpecial: (id) => isKnown(id) && special[id] === 1,
    addedContent: (id) => addedContent.get(id),
    encode: (text: string, opts?: EncodeOptions) => encoder.encode(text, opts),
    dispose: () => encoder.dispose(),
    async libraryDecode(ids: number[]) {
      if (ids.length === 0) return '';
      return (await lib()).decode(ids, { clean_up_tokenization_spaces: false });
    },
  };
}

/**
 * Returns `id` when it is a usable token id (an integer in `[0, CORRUPT_ID_FLOOR)`).
 * @param where the field, for the message (`model.vocab["Ġthe"]`); called only for a bad id (100,000
 *   names built for nothing were a sixth of a big vocab's load time).
 * @throws DataError naming the file, the field and the value.
 */
function checkedId(id: unknown, where: () => string, file: string): number {
  if (typeof id === 'number' && Number.isInteger(id) && id >= 0 && id < CORRUPT_ID_FLOOR) return id;
  throw new DataError(`${file}: ${where()} has id ${JSON.stringify(id)}; expected an integer 0..${fmt(CORRUPT_ID_FLOOR - 1)}`, file);
}

interface LibraryTokenizer {
  encode(text: string): { ids: number[] };
  decode(ids: number[], options: { clean_up_tokenization_spaces: boolean }): string;
}

async function loadLibrary(json: unknown, file: string): Promise<LibraryTokenizer> {
  const { Tokenizer } = await import('@huggingface/tokenizers');
  let config: Record<string, unknown> = {};
  try {
    config = JSON.parse(
      await readRegularTextFile(path.join(path.dirname(file), 'tokenizer_config.json'), 'a tokenizer_config.json', READ_LIMITS.sideFile),
    );
  } catch {
    /* optional: the library only needs an object */
  }
  return new Tokenizer(json as never, config as never) as unknown as LibraryTokenizer;
}

/**
 * Turns one token's bytes into display text: complete UTF-8 characters as text, any byte that
 * is not part of a complete character inside this token as `<XX>` groups.
 * @returns the text and whether every byte formed complete characters.
 */
export function bytesToDisplay(bytes: Uint8Array): { text: string; complete: boolean } {
  let text = '';
  let hexRun: string[] = [];
  let complete = true;
  const flush = () => {
    if (hexRun.length) {
      text += `<${hexRun.join(' ')}>`;
      hexRun = [];
    }
  };
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    let ok = len > 0 && i + len <= bytes.length;
    for (let j = 1; ok && j < len; j++) ok = (bytes[i + j] & 0xc0) === 0x80;
    if (ok && len === 3) ok = !(b === 0xe0 && bytes[i + 1] < 0xa0) && !(b === 0xed && bytes[i + 1] >= 0xa0);
    if (ok && len === 4) ok = !(b === 0xf0 && bytes[i + 1] < 0x90) && !(b === 0xf4 && bytes[i + 1] >= 0x90);
    if (ok) {
      flush();
      text += len === 1 ? String.fromCharCode(b) : Buffer.from(bytes.subarray(i, i + len)).toString('utf8');
      i += len;
    } else {
      complete = false;
      hexRun.push(HEX[b]);
      i++;
    }
  }
  flush();
  return { text, complete };
}

/**
 * Where a dataset keeps its tokenizer: `<root>/tokenizer/tokenizer.json`, else
 * `<root>/tokenizer.json`. Returns the first that exists, or undefined.
 */
export async function findDatasetTokenizer(root: string): Promise<string | undefined> {
  for (const p of [path.join(root, 'tokenizer', 'tokenizer.json'), path.join(root, 'tokenizer.json')]) {
    try {
      if ((await fs.promises.stat(p)).isFile()) return p;
    } catch {
      /* try next */
    }
  }
  return undefined;
}

/** How text output shows an id with no token (the library would drop it silently): `⟨unknown 200000⟩`. */
export function unknownIdMark(id: number): string {
  return `⟨unknown ${id}⟩`;
}

/**
 * Decoded text of ids for display: ids decoded in runs (each run identical to the tokenizer's
 * decode), unknown ids written {@link unknownIdMark} (the library would drop them silently),
 * elided stretches of a summarised print `⟨…⟩`. One rule for hovers, Decode Selection and the CLI.
 * @param gaps indices `i` where elided elements stand before `ids[i]` (see `IdListHit.gaps`).
 * @returns the text and the number of unknown ids.
 */
export function decodeForDisplay(
  tok: LoadedTokenizer,
  ids: ArrayLike<number>,
  gaps: readonly number[] = [],
  markSpecial = false,
): { text: string; unknown: number; special: number } {
  let text = '';
  let unknown = 0;
  let special = 0;
  let from = 0;
  const gapSet = new Set(gaps);
  const all = Array.from(ids);
  for (let i = 0; i <= all.length; i++) {
    const isGap = gapSet.has(i);
    const isUnknown = i < all.length && !tok.isKnown(all[i]);
    // With `markSpecial` a real special token (EOS…) reads `⟨special <|endoftext|>⟩`, apart from text that spells it.
    const sp = markSpecial && i < all.length && !isUnknown ? tok.pieces([all[i]])[0] : undefined;
    const isSpecial = sp?.kind === 'special';
    if (i === all.length || isGap || isUnknown || isSpecial) {
      if (i > from) text += tok.decode(all.slice(from, i));
      if (isGap) text += '⟨…⟩';
      if (isUnknown) {
        text += unknownIdMark(all[i]);
        unknown++;
        from = i + 1;
      } else if (isSpecial) {
        text += `⟨special ${sp!.text}⟩`;
        special++;
        from = i + 1;
      } else from = i;
    }
  }
  return { text, unknown, special };
}

/**
 * A streaming form of {@link decodeForDisplay} for long ranges read in chunks: a character split
 * between two chunks comes out whole; unknown ids are written {@link unknownIdMark} and counted.
 */
export class DisplayDecoder {
  /** Unknown ids seen so far. */
  unknown = 0;
  private readonly decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  constructor(private readonly tok: LoadedTokenizer) {}
  /** Text of the next ids (may hold back the bytes of an incomplete character until the next call). */
  push(ids: ArrayLike<number>): string {
    let text = '';
    let from = 0;
    const n = ids.length;
    const view = ids instanceof Uint32Array ? ids : Uint32Array.from(ids as ArrayLike<number>);
    for (let i = 0; i <= n; i++) {
      if (i < n && this.tok.isKnown(view[i])) continue;
      if (i > from) text += this.decoder.decode(this.tok.runBytes(view.subarray(from, i)), { stream: true });
      if (i < n) {
        text += unknownIdMark(view[i]);
        this.unknown++;
      }
      from = i + 1;
    }
    return text;
  }
  /** Whatever is held back ("�" for an incomplete character at the very end). */
  end(): string {
    return this.decoder.decode();
  }
}

/** Ids at or above this are certainly not token ids of any real vocabulary (uint16/uint32 mix-ups give billions). */
export const CORRUPT_ID_FLOOR = 1 << 20;

/** Diagnosis of a window of ids that do not look like this tokenizer's ids. */
export interface IdAnomaly {
  /** 'uint16-as-uint32': ids in the billions (two uint16 ids packed per uint32);
   *  'uint32-as-uint16': every other id 0 (uint32 data written/read as uint16 pairs);
   *  'out-of-vocab': many ids ≥ vocab size for another reason. */
  kind: 'uint16-as-uint32' | 'uint32-as-uint16' | 'out-of-vocab';
  /** Share of ids ≥ vocab size, 0..1. */
  unknownShare: number;
  /** A sentence for a banner. */
  message: string;
}

/**
 * Looks at a sample of ids and names the likely cause when they do not fit the vocabulary
 * (docs/format.md, "token dtype mix-ups"). Returns undefined when the sample looks normal
 * (fewer than 1% unknown ids and no zero-every-other-id pattern).
 */
export function diagnoseIds(ids: ArrayLike<number>, vocabSize: number): IdAnomaly | undefined {
  const n = ids.length;
  if (n === 0) return undefined;
  let unknown = 0,
    huge = 0,
    packable = 0,
    zeroOdd = 0,
    zeroEven = 0;
  // The common case (a nonzero id below both floors) takes two comparisons; this runs on every
  // shard's first 65,536 ids while the stream index is built.
  const plain = Math.min(vocabSize, CORRUPT_ID_FLOOR);
  for (let i = 0; i < n; i++) {
    const v = ids[i];
    if (v !== 0 && v < plain) continue;
    if (v >= vocabSize) unknown++;
    if (v >= CORRUPT_ID_FLOOR) {
      huge++;
      if ((v & 0xffff) < vocabSize && v >>> 16 < vocabSize) packable++;
    }
    if (v === 0) {
      if (i & 1) zeroOdd++;
      else zeroEven++;
    }
  }
  const unknownShare = unknown / n;
  const half = Math.floor(n / 2);
  if (half >= 8 && (zeroOdd >= 0.9 * half || zeroEven >= 0.9 * half)) {
    return {
      kind: 'uint32-as-uint16',
      unknownShare,
      message: `Every other id is 0 (${fmt(Math.max(zeroOdd, zeroEven))} of ${fmt(half)}): this looks like uint32 data read as uint16, or uint16 ids widened with zero padding. Check the dtype the shard was written with.`,
    };
  }
  if (huge >= 0.5 * n && packable >= 0.8 * huge) {
    return {
      kind: 'uint16-as-uint32',
      unknownShare,
      message: `${Math.round((100 * huge) / n)}% of ids are in the billions and each splits into two valid 16-bit ids: this looks like uint16 data read as uint32.`,
    };
  }
  if (unknownShare > 0.01) {
    return {
      kind: 'out-of-vocab',
      unknownShare,
      message: `${(100 * unknownShare).toFixed(1)}% of ids are ≥ the tokenizer's vocabulary size (${fmt(vocabSize)}): wrong tokenizer, wrong dtype, or corrupt data.`,
    };
  }
  return undefined;
}
