/**
 * The shard webview's data model, free of the DOM (unit-tested in plain Node): pages as the host
 * sends them, the blocks each view is cut into, and document numbering from the host's
 * per-page EOS facts. Offsets are LOCAL token offsets in the shard unless named `global`.
 */
import type { PagePayload, ShardNumberingToWebview, ShardView } from '../../src/protocol/shard';

/** A run of tokens drawn as one unit of the virtual scroller (a paragraph, a separator, a row of ids). */
export interface Block {
  /** Local offsets `[start, end)`. */
  start: number;
  end: number;
  /** 'text': decoded text or chips; 'sep': one stored delimiter (document separator, {@link PageData.isSeparator}); 'row': a row of the IDs grid. */
  kind: 'text' | 'sep' | 'row';
  /**
   * True when the block continues a line of the previous block: no newline or EOS between them
   * (a soft break made for the virtual scroller, or a page edge inside a line). The Documents
   * view draws such a block on a new visual line but marks the break as NOT a newline.
   */
  midLine?: boolean;
}

/**
 * Soft/hard limits (tokens) for text blocks per view: blocks end after a newline, at an EOS, at
 * the soft size before a token that starts with a space, or at the hard size. The Documents view
 * uses limits above the length of nearly every real line (~4 KB of text), so that its blocks
 * nearly always end at a real newline (a block that must be cut inside a very long line is
 * flagged `midLine` and drawn as a marked soft break). Not larger: a block is drawn whole, one
 * element per token, and the first paint inside a long line draws two or three blocks (measured:
 * 6,144/8,192 cost ~1 s of layout for a page of one long line, 1,024/1,536 about a fifth).
 */
export const BLOCK_LIMITS: Record<'documents' | 'tokens', { soft: number; hard: number }> = {
  documents: { soft: 1024, hard: 1536 },
  tokens: { soft: 96, hard: 192 },
};

const utf8 = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));

/** One page as received from the host, with the look-ups the views need. */
export class PageData {
  readonly start: number;
  readonly end: number;
  readonly ids: number[];
  private readonly hex = new Map<number, string>();
  /** Doc-text overrides: index in page → text ('' for tokens inside a group). */
  private readonly doc = new Map<number, string>();
  /** Index in page → token count of the decode group starting there (only groups > 1 token). */
  private readonly groupLen = new Map<number, number>();
  private blockCache = new Map<string, Block[]>();
  /** Local offsets of the tokens that end a document by the format's index (absent: EOS ids end documents). */
  private readonly ends?: Set<number>;
  /** Index-in-page → true for tokens the model is not trained on (loss mask 0). */
  private readonly noLoss?: Uint8Array;
  /** Local offsets of this page's boundary markers ({@link boundaries}). */
  private readonly bounds: number[] = [];
  private readonly boundSet = new Set<number>();

  constructor(
    readonly payload: PagePayload,
    readonly eos: number,
  ) {
    this.start = payload.start;
    this.ids = payload.ids;
    this.end = payload.start + payload.ids.length;
    for (const [i, h] of payload.partialHex ?? []) this.hex.set(i, h);
    for (let i = 0; i < (payload.cont ?? 0); i++) this.doc.set(i, '');
    for (const [i, n, text] of payload.joins ?? []) {
      this.doc.set(i, text);
      if (n > 1) this.groupLen.set(i, n);
      for (let j = i + 1; j < i + n && j < this.ids.length; j++) this.doc.set(j, '');
    }
    const docs = payload.documents;
    const starts = docs?.starts ?? payload.opensAt;
    if (starts) this.ends = new Set(starts.filter((s) => s > this.start && s <= this.end).map((s) => s - 1));
    if (payload.noLoss) {
      this.noLoss = new Uint8Array(this.ids.length);
      for (const [a, b] of payload.noLoss) this.noLoss.fill(1, a, b);
    }
    if (docs) {
      for (const s of docs.starts) {
        if (s <= 0 || s < this.start || s >= this.end) continue;
        const before = s === this.start ? docs.prevId : this.ids[s - 1 - this.start];
        if (before !== this.eos) {
          this.bounds.push(s);
          this.boundSet.add(s);
        }
      }
    }
  }

  /**
   * Local offsets in the page where a document of the format's index starts right after a token
   * that is not the delimiter (an index entry stored without EOS: Megatron without
   * `--append-eod`): no separator is drawn there, so the view draws a boundary marker with the
   * same label before the token. Ascending; never the shard's first token.
   */
  boundaries(): readonly number[] {
    return this.bounds;
  }

  /** True when a boundary marker ({@link boundaries}) goes before the token at local `offset`. */
  isBoundary(offset: number): boolean {
    return this.boundSet.has(offset);
  }

  /**
   * True when the token at local `offset` ends a document: it is an EOS id, or, where the format
   * has a document index, the token before the next document's start.
   */
  isEnd(offset: number): boolean {
    return this.ends ? this.ends.has(offset) : this.ids[offset - this.start] === this.eos;
  }

  /**
   * True when the stored delimiter at local `offset` is drawn as a document separator: an EOS
   * that ends its document, or, where the delimiter opens documents ({@link opensDocuments}),
   * any delimiter. A document end that is not the delimiter (an index entry stored without EOS)
   * stays in the text.
   */
  isSeparator(offset: number): boolean {
    if (this.ids[offset - this.start] !== this.eos) return false;
    return this.opensDocuments || this.isEnd(offset);
  }

  /** True when the delimiter opens the document after it (llm.c; the host's {@link PagePayload.opensAt}). */
  get opensDocuments(): boolean {
    return this.payload.opensAt !== undefined;
  }

  /** True when the model is not trained on the token at local `offset` (the format's loss mask says 0). */
  notTrained(offset: number): boolean {
    return this.noLoss?.[offset - this.start] === 1;
  }

  /** True when the page has a loss mask with tokens not trained on. */
  get hasNoLoss(): boolean {
    return this.noLoss !== undefined;
  }

  /**
   * Provenance of the document starting at local `offset` (or, with `holding`, of the document
   * holding it), where the format records one (Dolma `id`, `src`, `loc`).
   */
  metadataAt(offset: number, holding = false): { id?: string; src?: string; loc?: string } | undefined {
    const docs = this.payload.documents;
    if (!docs?.metadata) return undefined;
    let k = -1;
    for (let i = 0; i < docs.starts.length; i++) {
      if (holding ? docs.starts[i] <= offset : docs.starts[i] === offset) k = i;
      if (docs.starts[i] > offset) break;
    }
    return k >= 0 ? (docs.metadata[k] ?? undefined) : undefined;
  }

  /** True when the page has texts (a tokenizer decoded it). */
  get hasText(): boolean {
    return this.payload.texts !== undefined;
  }

  /** Id at local offset. */
  id(offset: number): number {
    return this.ids[offset - this.start];
  }

  /** Display text of one token (undefined without a tokenizer). */
  piece(offset: number): string | undefined {
    return this.payload.texts?.[offset - this.start];
  }

  /** Kind code of one token: t, p, s, a, u (undefined without a tokenizer). */
  kind(offset: number): string | undefined {
    return this.payload.kinds?.[offset - this.start];
  }

  /** Bytes of one token as hex pairs ('' for unknown ids or without a tokenizer). */
  hexOf(offset: number): string {
    const i = offset - this.start;
    const h = this.hex.get(i);
    if (h !== undefined) return h;
    const k = this.payload.kinds?.[i];
    if (!k || k === 'u') return '';
    const b = utf8.encode(this.payload.texts![i]);
    let s = '';
    for (let j = 0; j < b.length; j++) s += (j ? ' ' : '') + HEX[b[j]];
    return s;
  }

  /**
   * Text this token contributes to the decoded text: the tokenizer's decode of the page's tokens
   * equals these strings concatenated in order (groups carry their text on the first token).
   */
  docText(offset: number): string {
    const i = offset - this.start;
    const o = this.doc.get(i);
    if (o !== undefined) return o;
    const k = this.payload.kinds?.[i];
    if (!k || k === 'u') return '';
    return this.payload.texts![i];
  }

  /** Tokens in the decode group that starts at `offset` (1 for an ordinary token, 0 inside a group). */
  groupSize(offset: number): number {
    const i = offset - this.start;
    const n = this.groupLen.get(i);
    if (n !== undefined) return n;
    return this.doc.get(i) === '' && this.isInsideGroup(i) ? 0 : 1;
  }

  private isInsideGroup(i: number): boolean {
    if (i < (this.payload.cont ?? 0)) return true;
    for (const [s, n] of this.payload.joins ?? []) if (i > s && i < s + n) return true;
    return false;
  }

  /** Count of document ends (EOS ids, or the index's ends: {@link isEnd}) in `[this.start, offset)`. */
  eosBefore(offset: number): number {
    let n = 0;
    for (let i = 0, e = Math.min(offset, this.end) - this.start; i < e; i++) if (this.isEnd(this.start + i)) n++;
    return n;
  }

  /** Index (local offset) of the last document end ({@link isEnd}) before `offset` in this page, or -1. */
  lastEosBefore(offset: number): number {
    for (let i = Math.min(offset, this.end) - this.start - 1; i >= 0; i--) if (this.isEnd(this.start + i)) return this.start + i;
    return -1;
  }

  /** Local offset of the first document end ({@link isEnd}) at or after `offset` in this page, or -1. */
  firstEosFrom(offset: number): number {
    for (let i = Math.max(offset, this.start) - this.start; i < this.ids.length; i++) if (this.isEnd(this.start + i)) return this.start + i;
    return -1;
  }

  /** Blocks of this page for a view (cached). `cols` is the IDs grid width. */
  blocks(view: ShardView, cols: number): Block[] {
    const key = view === 'ids' ? `ids:${cols}` : view;
    let b = this.blockCache.get(key);
    if (!b) {
      b = view === 'ids' ? rowBlocks(this.start, this.end, cols) : textBlocks(this, BLOCK_LIMITS[view]);
      this.blockCache.set(key, b);
    }
    return b;
  }
}

/** Rows of `cols` tokens aligned to multiples of `cols`. */
export function rowBlocks(start: number, end: number, cols: number): Block[] {
  const out: Block[] = [];
  for (let s = start; s < end; s = Math.min(end, (Math.floor(s / cols) + 1) * cols)) {
    out.push({ start: s, end: Math.min(end, (Math.floor(s / cols) + 1) * cols), kind: 'row' });
  }
  return out;
}

/**
 * Cuts a page into text blocks: every separator ({@link PageData.isSeparator}: a stored delimiter
 * that ends or opens a document) is a block of its own ('sep'); a block also ends after a
 * document's last token that is not the delimiter; other blocks end after
 * a token whose text ends with a newline, or once `soft` tokens are reached at a token that
 * starts with a space (a break there looks like a line wrap), or at `hard` tokens. A block never
 * splits a decode group.
 */
export function textBlocks(page: PageData, { soft, hard }: { soft: number; hard: number }): Block[] {
  const out: Block[] = [];
  let s = page.start;
  // The page's first block continues a line unless the host says a line starts there.
  let midLine = page.hasText && page.payload.lineStart === false;
  const push = (e: number, kind: Block['kind']) => {
    if (e > s) {
      out.push(midLine && kind === 'text' ? { start: s, end: e, kind, midLine } : { start: s, end: e, kind });
      // A document's last token ends the line too (an index entry stored without EOS).
      midLine = kind === 'text' && !page.isEnd(e - 1) && !(page.hasText && page.docText(lastGroupStart(page, s, e)).endsWith('\n'));
    }
    s = e;
  };
  let o = page.start;
  while (o < page.end) {
    if (page.isSeparator(o)) {
      push(o, 'text');
      push(o + 1, 'sep');
      o++;
      continue;
    }
    let n = page.groupSize(o);
    if (n === 0) n = 1; // continuation tokens at the page start
    const next = Math.min(page.end, o + n);
    const text = page.hasText ? page.docText(o) : '';
    const len = next - s;
    if (text.endsWith('\n') || len >= hard || page.isEnd(next - 1)) {
      push(next, 'text');
      o = next;
      continue;
    }
    if (len >= soft && next < page.end && !page.isEnd(next)) {
      const t = page.hasText ? page.docText(next) : ' ';
      if (t.startsWith(' ')) {
        push(next, 'text');
        o = next;
        continue;
      }
    }
    o = next;
  }
  push(page.end, 'text');
  return out;
}

/** Offset of the last decode group that starts in `[s, e)` (its text is on that token). */
function lastGroupStart(page: PageData, s: number, e: number): number {
  for (let o = e - 1; o > s; o--) if (page.groupSize(o) > 0) return o;
  return s;
}

/** Finds the block containing `offset` (binary search). */
export function blockIndexOf(blocks: Block[], offset: number): number {
  let lo = 0,
    hi = blocks.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (blocks[mid].start <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** What is known about a document for display. */
export interface DocInfo {
  /** 0-based document number, when known. */
  number?: number;
  /** 'global': counted from the stream start; 'shard': counted from this shard's first document (0). */
  scope?: 'global' | 'shard';
  /** Local start offset (may be negative: the document began in an earlier shard), when known. */
  start?: number;
  /** True when `start` is a bound ("starts before"), not the real start. */
  startIsBound?: boolean;
  /** Local end offset, one past the closing EOS, when known. */
  end?: number;
}

/**
 * Document numbering from the host's per-page EOS facts plus pages in the cache. Numbers are
 * EOS counts: document n is the tokens after the n-th EOS up to and including the (n+1)-th.
 */
export class Numbering {
  private msg?: ShardNumberingToWebview;
  private prefix: number[] = [];

  constructor(
    readonly pageTokens: number,
    readonly globalStart: number,
  ) {}

  /** Takes a numbering message from the host. */
  update(msg: ShardNumberingToWebview): void {
    this.msg = msg;
    this.prefix = [0];
    for (const c of msg.pageEos ?? []) this.prefix.push(this.prefix[this.prefix.length - 1] + c);
  }

  /** The last message (state, progress). */
  get state(): ShardNumberingToWebview | undefined {
    return this.msg;
  }

  /** True once per-page EOS facts of the shard are known. */
  get scanned(): boolean {
    return !!this.msg?.pageEos;
  }

  /**
   * Document holding local `offset`: number (when the shard scan is done), start and end when
   * they can be derived from `page` (which must contain `offset`) and the per-page facts.
   */
  docAt(offset: number, page: PageData | undefined, pageAt: (i: number) => PageData | undefined): DocInfo {
    const info: DocInfo = {};
    const p = Math.floor(offset / this.pageTokens);
    const m = this.msg;
    if (m?.pageEos && page) {
      const local = this.prefix[p] + page.eosBefore(offset);
      if (m.docBase !== undefined) {
        info.number = m.docBase + local;
        info.scope = 'global';
      } else {
        info.number = local;
        info.scope = 'shard';
      }
    }
    // start
    const before = page ? page.lastEosBefore(offset) : -1;
    if (before >= 0) info.start = before + 1;
    else if (m?.pageLastEos) {
      let q = p - 1;
      while (q >= 0 && m.pageLastEos[q] < 0) q--;
      if (q >= 0) info.start = q * this.pageTokens + m.pageLastEos[q] + 1;
      else if (m.headStart !== undefined) {
        info.start = m.headStart - this.globalStart;
        info.startIsBound = !m.headKnown;
      }
    } else {
      // Without the scan only the previous cached page can tell.
      const prev = pageAt(p - 1);
      const e = prev ? prev.lastEosBefore(prev.end) : -1;
      if (e >= 0) info.start = e + 1;
    }
    // end
    const after = page ? page.firstEosFrom(offset) : -1;
    if (after >= 0) info.end = after + 1;
    else info.end = this.endAfterPage(p, pageAt);
    return info;
  }

  /** Local end (one past the EOS) of the document that continues past the end of page `p`, when known. */
  endAfterPage(p: number, pageAt: (i: number) => PageData | undefined): number | undefined {
    const m = this.msg;
    if (m?.pageFirstEos) {
      for (let q = p + 1; q < m.pageFirstEos.length; q++) {
        if (m.pageFirstEos[q] >= 0) return q * this.pageTokens + m.pageFirstEos[q] + 1;
      }
      return m.tailKnown && m.tailEnd !== undefined ? m.tailEnd - this.globalStart : undefined;
    }
    const next = pageAt(p + 1);
    const e = next ? next.firstEosFrom(next.start) : -1;
    return e >= 0 ? e + 1 : undefined;
  }

  /**
   * The document a separator ({@link PageData.isSeparator}) at local `eosOffset` begins (page must
   * contain it): the one right after an EOS that closes its document, or, where the delimiter
   * opens documents, the one the delimiter is the first token of.
   */
  docAfterEos(eosOffset: number, page: PageData, pageAt: (i: number) => PageData | undefined): DocInfo {
    const info = this.docAt(eosOffset, page, pageAt);
    const opens = page.opensDocuments;
    const out: DocInfo = { start: opens ? eosOffset : eosOffset + 1 };
    if (info.number !== undefined) {
      out.number = opens ? info.number : info.number + 1;
      out.scope = info.scope;
    }
    const nextEos = page.firstEosFrom(opens ? eosOffset : eosOffset + 1);
    if (nextEos >= 0) out.end = nextEos + 1;
    else out.end = this.endAfterPage(Math.floor(eosOffset / this.pageTokens), pageAt);
    return out;
  }
}
