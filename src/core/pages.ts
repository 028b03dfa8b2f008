/**
 * Page serving for the shard editor, free of `vscode` so the CLI, benchmarks and unit tests can
 * drive it: a shard is cut into pages of {@link PAGE_TOKENS} tokens; a page is read with one
 * ranged read through the core {@link TokenStream} (never the whole file) and prepared for
 * display with the core tokenizer:
 *
 * - `texts`/`kinds`: one display piece per token (see {@link TokenPiece}: partial UTF-8 shown
 *   as `<XX XX>`, special/added tokens apart, unknown ids flagged);
 * - `joins`/`cont`: how the page's tokens group into runs whose bytes decode on their own, so
 *   that concatenating the per-group texts in order gives exactly the tokenizer's `decode` of
 *   the same ids (a multi-byte character split over tokens, or over a page edge, is one group).
 *
 * Also the background scan that documents need: EOS count, first and last EOS per page.
 *
 * Units: offsets and counts are in **tokens**, local to the shard file unless named `global`.
 */
import { TokenStream } from './stream';
import { LoadedTokenizer, PieceKind } from './tokenizer';
import { CancelledError, RangeRequestError } from './errors';
import { fmt } from './units';
import { countId, formatDocumentAt } from './documents';
import type { DelimiterRole, DocumentMetadata, FormatDocuments } from './formats/types';
import { boundaryOf } from './documentRule';
import type { Dataset } from './dataset';
import type { ShardEntry } from './manifest';
import { hasLossMask, readLossMask } from './formats/lossMask';

/** Tokens per page (128 KiB of ids): the unit the webview asks for and caches. */
export const PAGE_TOKENS = 32_768;

/** Tokens read before a page to learn the UTF-8 decoder state at its first token. */
const CONTEXT_BEFORE = 16;
/** Tokens read after a page to finish a character the page's last token begins. */
const CONTEXT_AFTER = 16;

/** One-letter codes of {@link PieceKind} used in {@link PagePayload.kinds}. */
export const KIND_CODES: Record<PieceKind, string> = { text: 't', partial: 'p', special: 's', added: 'a', unknown: 'u' };

/**
 * One page prepared for display. Plain JSON-serialisable data (it is posted to the webview).
 * Without a tokenizer only `ids` is set.
 */
export interface PagePayload {
  /** 0-based page index. */
  index: number;
  /** Local token offset of the page's first token (`index · PAGE_TOKENS`). */
  start: number;
  /** The page's token ids (`count` = `ids.length`, ≤ PAGE_TOKENS; shorter only for the last page). */
  ids: number[];
  /** Display text per token ({@link TokenPiece.text}). */
  texts?: string[];
  /** One character per token: t text, p partial UTF-8, s special, a added, u unknown id ({@link KIND_CODES}). */
  kinds?: string;
  /** Hex bytes of partial tokens, `[index in page, "F0 9F"]` (other tokens' bytes are the UTF-8 of their text). */
  partialHex?: [number, string][];
  /**
   * Decode groups that are not a single whole token: `[first index in page, token count, decoded text]`.
   * Tokens inside a group after its first have no text of their own. A group may run past the
   * page end (its text then includes the next page's first tokens).
   */
  joins?: [number, number, string][];
  /** Tokens at the page start that finish the previous page's last group (their text is in that group). */
  cont?: number;
  /**
   * True when the page's first token begins a line of decoded text: it is the shard's first
   * token, or the token before it is EOS or its bytes end with a newline (0x0A). False means the
   * text before the page edge continues on the same line (the Documents view marks the edge as a
   * soft break, not a newline). Set only with a tokenizer.
   */
  lineStart?: boolean;
  /**
   * Documents from the storage format's index (Megatron, datatrove, Dolma) that overlap the page;
   * absent where documents are EOS-separated. The webview then ends a document at the token before
   * each start instead of at an EOS id.
   */
  documents?: PageDocuments;
  /**
   * Set where the delimiter **opens** documents (llm.c; `documentRule.ts`) and the format has no
   * index: local token offsets in `(page start, page end]` where a document begins, i.e. each
   * delimiter's {@link boundaryOf} (the page end included when the shard's next token is a
   * delimiter). The webview then ends a document at the token before each of them; the delimiter
   * itself is the first token of the document it opens. Empty when the page has none.
   */
  opensAt?: number[];
  /**
   * Runs of tokens the model is not trained on (datatrove `.ds.loss` byte 0), `[first index in
   * page, end index)` ascending; absent when the format has no loss mask.
   */
  noLoss?: [number, number][];
}

/** The documents of a storage format's index on one page (see {@link PagePayload.documents}). */
export interface PageDocuments {
  /**
   * Local token offsets (in the shard) where documents start, ascending: the document holding
   * the page's first token (its start may be before the page or in an earlier shard: negative),
   * then every start up to and including the page's end offset (a start there closes the page's
   * last document; on the stream's last page its end offset closes the last document).
   */
  starts: number[];
  /** Provenance of each of those documents (Dolma `.csv.gz` `id`, `src`, `loc`), null where none; absent when the format records none. */
  metadata?: (DocumentMetadata | null)[];
  /**
   * The id stored just before the page's first token, set only when a document starts at that
   * token and it is not the shard's first: tells the webview whether that boundary already has a
   * separator (the token before is the delimiter) or needs a boundary marker of its own.
   */
  prevId?: number;
}

/** What a shard's storage format adds to its pages (see {@link ShardPages}). */
export interface ShardFormatInfo {
  /** The format's document index over the whole stream (global offsets). */
  documents?: FormatDocuments;
  /** Global token offset of the shard's first token. */
  globalStart: number;
  /** Tokens in the whole stream (the last document's end). */
  streamTokens: number;
  /** What the delimiter id does where the format has no index (`documentRule.ts`); absent = `closes`. */
  delimiter?: DelimiterRole;
  /** Reads the loss mask of local tokens `[start, start + count)`: one byte per token, 0 = not trained on. */
  lossMask?: (start: number, count: number) => Promise<Uint8Array>;
}

/** Per-page document statistics of a whole shard (arrays indexed by page). */
export interface PageDocStats {
  /** EOS tokens in each page. */
  eosCount: number[];
  /** Index in the page of its first EOS, or -1. */
  firstEos: number[];
  /** Index in the page of its last EOS, or -1. */
  lastEos: number[];
}

/** Number of pages of a shard of `numTokens` tokens. */
export function pageCount(numTokens: number): number {
  return Math.ceil(numTokens / PAGE_TOKENS);
}

/**
 * Tracks the WHATWG UTF-8 decoder's state byte by byte, to know where a decoder would hold
 * no pending bytes (a run of bytes ending there decodes the same on its own as inside a longer
 * run: the decoder emits U+FFFD per maximal invalid subpart and never looks further back).
 */
export class Utf8State {
  private needed = 0;
  private seen = 0;
  private lower = 0x80;
  private upper = 0xbf;

  /** Feeds one byte. */
  push(b: number): void {
    if (this.needed !== 0) {
      if (b >= this.lower && b <= this.upper) {
        this.lower = 0x80;
        this.upper = 0xbf;
        if (++this.seen === this.needed) this.needed = this.seen = 0;
        return;
      }
      // Invalid continuation: the decoder emits U+FFFD and reprocesses this byte from a clean state.
      this.needed = this.seen = 0;
      this.lower = 0x80;
      this.upper = 0xbf;
    }
    if (b <= 0x7f) return;
    if (b >= 0xc2 && b <= 0xdf) this.needed = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      if (b === 0xe0) this.lower = 0xa0;
      if (b === 0xed) this.upper = 0x9f;
      this.needed = 2;
    } else if (b >= 0xf0 && b <= 0xf4) {
      if (b === 0xf0) this.lower = 0x90;
      if (b === 0xf4) this.upper = 0x8f;
      this.needed = 3;
    }
    // else: invalid lead byte, one U+FFFD, state stays clean
  }

  /** Feeds a byte string. */
  pushAll(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) this.push(bytes[i]);
  }

  /** True while the decoder holds the start of an unfinished character. */
  get pending(): boolean {
    return this.needed !== 0;
  }
}

/** Per-tokenizer cache of display pieces: id → text and one-letter kind (filled lazily). */
interface PieceCache {
  texts: string[];
  kinds: string[];
  hex: Map<number, string>;
}
const pieceCaches = new WeakMap<LoadedTokenizer, PieceCache>();

function pieceCache(tok: LoadedTokenizer): PieceCache {
  let c = pieceCaches.get(tok);
  if (!c) {
    c = { texts: new Array<string>(tok.vocabSize), kinds: new Array<string>(tok.vocabSize), hex: new Map() };
    pieceCaches.set(tok, c);
  }
  return c;
}

/** Kind code of one id, filling the cache ('u' for ids without a token). */
function kindOf(c: PieceCache, tok: LoadedTokenizer, id: number): string {
  if (id >= tok.vocabSize || id < 0) return 'u';
  let k = c.kinds[id];
  if (k === undefined) {
    const p = tok.pieces([id])[0];
    k = c.kinds[id] = KIND_CODES[p.kind];
    c.texts[id] = p.text;
    if (p.kind === 'partial') c.hex.set(id, p.hex);
  }
  return k;
}

/**
 * Splits ids into decode groups: a group ends after a token when the UTF-8 decoder holds no
 * pending bytes there (unknown ids add no bytes). Groups also end before and after every `eos`
 * id, because documents are decoded without their closing EOS (a character cut off right before
 * an EOS then decodes as U+FFFD, as it does when the document is decoded alone).
 * @returns per id, 1 when a group ends after it.
 */
export function groupEnds(ids: ArrayLike<number>, tok: LoadedTokenizer, eos = -1): Uint8Array {
  const c = pieceCache(tok);
  const ends = new Uint8Array(ids.length);
  let st = new Utf8State();
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const k = kindOf(c, tok, id);
    // Fast path: a whole-character token from a clean state leaves the state clean.
    if (st.pending || k === 'p') st.pushAll(tok.bytesOf(id));
    const forced = id === eos || (i + 1 < ids.length && ids[i + 1] === eos);
    ends[i] = st.pending && !forced ? 0 : 1;
    if (forced && st.pending) st = new Utf8State();
  }
  return ends;
}

/**
 * Builds a page's display data from ids read with context.
 * @param ids ids `[ctxStart, ctxStart + ids.length)` (local offsets), covering the page plus up to
 *   {@link CONTEXT_BEFORE} tokens before and {@link CONTEXT_AFTER} after.
 * @param ctxStart local offset of `ids[0]`.
 * @param pageStart local offset of the page's first token; `pageLen` its length in tokens.
 * @param eos the EOS id (groups never span it; see {@link groupEnds}).
 */
export function buildPage(
  index: number,
  ids: Uint32Array,
  ctxStart: number,
  pageStart: number,
  pageLen: number,
  tok: LoadedTokenizer | undefined,
  eos = -1,
): PagePayload {
  const pre = pageStart - ctxStart;
  const pageIds = ids.subarray(pre, pre + pageLen);
  const payload: PagePayload = { index, start: pageStart, ids: Array.from(pageIds) };
  if (!tok) return payload;
  const c = pieceCache(tok);
  const texts = new Array<string>(pageLen);
  const kinds = new Array<string>(pageLen);
  const partialHex: [number, string][] = [];
  for (let i = 0; i < pageLen; i++) {
    const id = pageIds[i];
    const k = kindOf(c, tok, id);
    kinds[i] = k;
    texts[i] = k === 'u' ? '' : c.texts[id];
    if (k === 'p') partialHex.push([i, c.hex.get(id)!]);
  }
  payload.texts = texts;
  payload.kinds = kinds.join('');
  if (partialHex.length) payload.partialHex = partialHex;

  // Decode groups over the whole context; a group boundary "before token t" = ends[t-1].
  const ends = groupEnds(ids, tok, eos);
  let cont = 0;
  if (pre > 0) while (cont < pageLen && !ends[pre + cont - 1]) cont++;
  const joins: [number, number, string][] = [];
  let i = cont;
  while (i < pageLen) {
    let j = i; // last token of the group (context index pre + j)
    while (!ends[pre + j] && pre + j + 1 < ids.length) j++;
    const n = j - i + 1;
    if (n > 1 || kinds[i] === 'p') joins.push([i, n, tok.decode(ids.subarray(pre + i, pre + j + 1))]);
    i = j + 1;
  }
  if (cont) payload.cont = cont;
  if (joins.length) payload.joins = joins;
  payload.lineStart = lineStartsAt(ids, pre, tok, eos);
  return payload;
}

/**
 * True when the token at context index `i` begins a line: `i` is 0 (nothing before it was read,
 * i.e. the shard's first token), or the id before it is `eos`, or that id's bytes end with `\n`.
 */
export function lineStartsAt(ids: ArrayLike<number>, i: number, tok: LoadedTokenizer, eos = -1): boolean {
  if (i <= 0) return true;
  const prev = ids[i - 1];
  if (prev === eos) return true;
  if (prev < 0 || prev >= tok.vocabSize) return false;
  const b = tok.bytesOf(prev);
  return b.length > 0 && b[b.length - 1] === 0x0a;
}

/** Runs of 0 bytes in a loss mask, `[start, end)` indices. */
export function lossRuns(mask: Uint8Array): [number, number][] {
  const runs: [number, number][] = [];
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] !== 0) continue;
    let j = i + 1;
    while (j < mask.length && mask[j] === 0) j++;
    runs.push([i, j]);
    i = j;
  }
  return runs;
}

/** Page reads and document scans over one shard file. */
export class ShardPages {
  /** Number of pages. */
  readonly pageCount: number;

  /**
   * @param stream the shard file as a stream of local offsets (`TokenStream.fromFile`), or any
   *   stream whose offsets `[base, base + numTokens)` are the shard (see `base`).
   * @param numTokens tokens shown.
   * @param tokenizer for texts; without one pages carry ids only.
   * @param eos the EOS id (document separator).
   * @param base stream offset of the shard's first token (0 for a file stream).
   * @param format the storage format's document index and loss mask, when it has them: pages
   *   carry {@link PagePayload.documents} and {@link PagePayload.noLoss}, and
   *   {@link scanDocuments} counts the index's document ends instead of EOS ids.
   */
  constructor(
    readonly stream: TokenStream,
    readonly numTokens: number,
    readonly tokenizer: LoadedTokenizer | undefined,
    readonly eos: number,
    readonly base = 0,
    readonly format?: ShardFormatInfo,
  ) {
    this.pageCount = pageCount(numTokens);
  }

  /** Local range `[start, end)` of page `index`. */
  pageRange(index: number): [number, number] {
    const start = index * PAGE_TOKENS;
    return [start, Math.min(this.numTokens, start + PAGE_TOKENS)];
  }

  /**
   * Reads and prepares page `index` (one ranged read of the page plus a few tokens of context).
   * @throws RangeRequestError for a page outside `[0, pageCount)`; DataError on a short read.
   */
  async page(index: number): Promise<PagePayload> {
    if (!Number.isInteger(index) || index < 0 || index >= this.pageCount) {
      throw new RangeRequestError(
        `page ${index} is outside 0..${this.pageCount - 1} (${fmt(this.numTokens)} tokens, ${fmt(PAGE_TOKENS)} per page)`,
      );
    }
    const [start, end] = this.pageRange(index);
    const ctxStart = this.tokenizer ? Math.max(0, start - CONTEXT_BEFORE) : start;
    const ctxEnd = this.tokenizer ? Math.min(this.numTokens, end + CONTEXT_AFTER) : end;
    const ids = await this.stream.read(this.base + ctxStart, ctxEnd - ctxStart);
    const payload = buildPage(index, ids, ctxStart, start, end - start, this.tokenizer, this.eos);
    const docs = this.format?.documents;
    if (docs && end > start) {
      payload.documents = this.pageDocuments(docs, start, end);
      if (start > 0 && payload.documents.starts[0] === start) payload.documents.prevId = (await this.read(start - 1, 1))[0];
    } else if (this.opens) payload.opensAt = await this.opensIn(start, end);
    if (this.format?.lossMask && end > start) {
      const noLoss = lossRuns(await this.format.lossMask(start, end - start));
      if (noLoss.length) payload.noLoss = noLoss;
    }
    return payload;
  }

  /** True when the delimiter opens documents and no index gives them ({@link PagePayload.opensAt}). */
  private get opens(): boolean {
    return !this.format?.documents && this.format?.delimiter === 'opens';
  }

  /**
   * Local offsets in `(start, end]` where a document begins by the delimiter-opens rule
   * ({@link boundaryOf} of each delimiter at `[start, end]` inside the shard; one ranged read).
   */
  private async opensIn(start: number, end: number): Promise<number[]> {
    const ids = await this.read(start, end + 1 - start);
    const out: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      if (ids[i] !== this.eos) continue;
      const b = boundaryOf('opens', start + i);
      if (b > start && b <= end) out.push(b);
    }
    return out;
  }

  /** The index's documents overlapping local `[start, end)` (see {@link PageDocuments}). */
  private pageDocuments(docs: FormatDocuments, start: number, end: number): PageDocuments {
    const g = this.format!.globalStart;
    const first = formatDocumentAt(docs, g + start, this.format!.streamTokens).document;
    const starts: number[] = [];
    const metadata: (DocumentMetadata | null)[] = [];
    for (let n = first; n < docs.starts.length && docs.starts[n] <= g + end; n++) {
      starts.push(docs.starts[n] - g);
      if (docs.metadata) metadata.push(docs.metadata(n) ?? null);
    }
    // The stream's end closes its last document, as a next start would (see indexDocStats).
    if (g + end === this.format!.streamTokens && starts[starts.length - 1] < end) {
      starts.push(end);
      if (docs.metadata) metadata.push(null);
    }
    return docs.metadata ? { starts, metadata } : { starts };
  }

  /**
   * Per-page document ends from the format's index (a document ends at the token before the next
   * one's start, the stream's last document at the stream end): what {@link scanDocuments}
   * counts as EOS facts when the format has an index. No I/O.
   */
  private indexDocStats(docs: FormatDocuments): PageDocStats {
    const n = this.pageCount;
    const stats: PageDocStats = { eosCount: new Array(n).fill(0), firstEos: new Array(n).fill(-1), lastEos: new Array(n).fill(-1) };
    const g = this.format!.globalStart;
    const ends: number[] = [];
    for (let k = 1; k < docs.starts.length; k++) ends.push(docs.starts[k] - 1 - g);
    if (g + this.numTokens === this.format!.streamTokens) ends.push(this.numTokens - 1);
    for (const e of ends) {
      if (e < 0 || e >= this.numTokens) continue;
      const p = Math.floor(e / PAGE_TOKENS);
      const i = e - p * PAGE_TOKENS;
      stats.eosCount[p]++;
      if (stats.firstEos[p] < 0) stats.firstEos[p] = i;
      stats.lastEos[p] = i;
    }
    return stats;
  }

  /** Reads local tokens `[start, start + count)` (clipped to the shard). */
  async read(start: number, count: number): Promise<Uint32Array> {
    const s = Math.max(0, Math.min(start, this.numTokens));
    const e = Math.max(s, Math.min(start + count, this.numTokens));
    return this.stream.read(this.base + s, e - s);
  }

  /**
   * Scans the whole shard for EOS tokens, one chunk of {@link PAGE_TOKENS}·32 tokens at a time
   * (async between chunks; never more than one chunk of synchronous work). Where the delimiter
   * opens documents (llm.c), the facts are of the tokens that end a document: the token before each
   * delimiter (`documentRule.ts`), so the webview numbers documents as `locate` does.
   * @param onProgress called with tokens scanned so far.
   * @throws CancelledError when `signal` fires; DataError on a short read.
   */
  async scanDocuments(signal?: AbortSignal, onProgress?: (done: number) => void): Promise<PageDocStats> {
    if (this.format?.documents) return this.indexDocStats(this.format.documents);
    const n = this.pageCount;
    const stats: PageDocStats = { eosCount: new Array(n).fill(0), firstEos: new Array(n).fill(-1), lastEos: new Array(n).fill(-1) };
    const chunk = PAGE_TOKENS * 32;
    for (let lo = 0; lo < this.numTokens; lo += chunk) {
      if (signal?.aborted) throw new CancelledError();
      if (this.opens) {
        // A document ends at the token before each delimiter's boundary (the next token may be the shard's last+1: not read).
        const ids = await this.read(lo, chunk + 1);
        for (let i = 0; i < ids.length; i++) {
          if (ids[i] !== this.eos) continue;
          const e = boundaryOf('opens', lo + i) - 1;
          if (e < lo || e >= Math.min(this.numTokens, lo + chunk)) continue;
          const page = Math.floor(e / PAGE_TOKENS);
          const k = e - page * PAGE_TOKENS;
          stats.eosCount[page]++;
          if (stats.firstEos[page] < 0) stats.firstEos[page] = k;
          stats.lastEos[page] = k;
        }
      } else {
        const ids = await this.read(lo, chunk);
        for (let p = 0; p * PAGE_TOKENS < ids.length; p++) {
          const sub = ids.subarray(p * PAGE_TOKENS, (p + 1) * PAGE_TOKENS);
          const page = lo / PAGE_TOKENS + p;
          const c = countId(sub, this.eos);
          stats.eosCount[page] = c;
          if (c > 0) {
            stats.firstEos[page] = sub.indexOf(this.eos);
            stats.lastEos[page] = sub.lastIndexOf(this.eos);
          }
        }
      }
      onProgress?.(Math.min(this.numTokens, lo + chunk));
      await new Promise<void>((r) => setImmediate(r));
    }
    return stats;
  }
}

/**
 * What a shard's storage format adds to its pages: the format's document index and, where every
 * file has one, the loss mask (datatrove `.ds.loss`); undefined for the dataset card's layout.
 */
export function shardFormatInfo(
  ds: Pick<Dataset, 'format' | 'storedTokens'>,
  entry: Pick<ShardEntry, 'startToken'>,
): ShardFormatInfo | undefined {
  const format = ds.format;
  if (!format) return undefined;
  const files = format.files;
  return {
    documents: format.documents,
    globalStart: entry.startToken,
    streamTokens: ds.storedTokens,
    delimiter: format.delimiter,
    lossMask: hasLossMask(files) ? (start, n) => readLossMask(files, entry.startToken + start, n) : undefined,
  };
}
