/**
 * The model the update view renders: update `k` exactly as the training loop saw it (the dataset
 * card's reader: `batch = tokens(G·k, G + 1)`, `x = batch[:-1].reshape(S, L)`,
 * `y = batch[1:].reshape(S, L)`), laid out as S rows of L input tokens with
 * - each row's index and global offset,
 * - decoded text split into segments at every EOS (a document boundary) and at every shard
 *   edge (an update may span two shards; the change is marked, the text flows on),
 * - document numbers when the number of the update's first document is known,
 * - a "continues from before" flag for the document a row starts inside,
 * - the row's (L+1)-th token: the target of its last position (for the last row, the
 *   look-ahead token: the first token of update k+1 or the stored extra token).
 *
 * vscode-free and synchronous once the ids are read: {@link readUpdateModel} does the I/O,
 * {@link buildUpdateModel} the rest. The same model feeds the webview ({@link toUpdateViewData})
 * and the CLI's text form ({@link formatUpdateModelText}).
 *
 * Units: offsets are global token offsets; `start`/`end` of a segment are columns (0..L) in its row.
 */
import { fmt } from './units';
import { shardName } from './navigation';
import { describeUpdate } from './schedule';
import { LoadedTokenizer, PieceKind, diagnoseIds, unknownIdMark } from './tokenizer';
import { UpdateBatch, readUpdate } from './update';
import type { Dataset } from './dataset';
import type { DocumentIndex } from './documents';
import type { DelimiterRole } from './formats/types';
import { documentCountOf, documentRuleOf } from './documentRule';

/** A shard the update's G + 1 tokens touch. */
export interface UpdateShard {
  /** Index in the sorted manifest. */
  index: number;
  /** The manifest's `shard` field (relative path). */
  shard: string;
  /** File name only (`tokens_000001.u32`). */
  name: string;
  /** Global offset of the shard's first token. */
  startToken: number;
  /** Tokens in the shard. */
  numTokens: number;
}

/** A run of tokens inside one row, all in one document and one shard. Columns `[start, end)`. */
export interface UpdateSegment {
  /** First column in the row (0-based). */
  start: number;
  /** One past the last column. */
  end: number;
  /** Global offset of the first token (`row.offset + start`). */
  offset: number;
  /**
   * Decoded text of the tokens before the EOS (the EOS itself is `eos`). Decoding streams across
   * the row, so a character split by a shard edge shows once, whole, in the later segment.
   * Ids when the tokenizer is missing: "[id id …]".
   */
  text: string;
  /** True when the segment's last token is the EOS (it closes the document). */
  eos: boolean;
  /** 0-based document number, when the update's first document number is known. */
  document?: number;
  /** Global offset of the document's first token, when it is inside (or right at the start of) the update. */
  documentStart?: number;
  /** True when the segment's document began before this segment (before the row, or before a shard edge). */
  continues: boolean;
  /** Index into {@link UpdateModel.shards} of the shard holding these tokens. */
  shard: number;
  /** True when this segment starts at a shard edge inside the update (the shard change mark). */
  shardChange: boolean;
  /** Ids with no token in the tokenizer (decoded as nothing): count in this segment. */
  unknownIds: number;
  /** A run's training order: true when the sample continues here from another place in the stream (a new piece, `orderedUpdate.ts`). */
  jump?: boolean;
}

/** The (L+1)-th token of a row: the target of its last input position. */
export interface NextToken {
  /** Global offset (`row.offset + L`). */
  offset: number;
  id: number;
  /** Display text (partial UTF-8 as `<XX>`, never "�"). */
  text: string;
  kind: PieceKind;
  /** Index into {@link UpdateModel.shards}. */
  shard: number;
  /** True when this token is in a later shard than the row's last input token. */
  shardChange: boolean;
}

/** One training sequence: x = inputs, y = targets. */
export interface UpdateRow {
  /** Sequence index r (0-based). */
  index: number;
  /** Global offset of the first input token: `G·k + L·r`. */
  offset: number;
  /** Inputs `x[r]` (a view into the batch; L ids). */
  x: Uint32Array;
  /** Targets `y[r]` (a view; L ids): x shifted by one, ending with {@link next}. */
  y: Uint32Array;
  /** Segments tiling columns `[0, L)` in order. */
  segments: UpdateSegment[];
  /**
   * The target of the last position (for the last row: the look-ahead token). Absent for a run's
   * sample that reads no extra target token (an OLMo instance predicts inside itself).
   */
  next?: NextToken;
  /** True when the row starts inside a document that began before the row. */
  continues: boolean;
  /** A run's training order: the order's number of the sample (Megatron's sample index, OLMo's instance); the row's `index` is its slot in the batch. */
  sample?: number;
  /** A run's training order: the stream ranges the sample was assembled from, in the trainer's order. */
  pieces?: { start: number; end: number }[];
}

/** Everything the update view shows for update `k`. */
export interface UpdateModel {
  /** 0-based update index. */
  update: number;
  /** Updates in the stream (valid k: 0..numUpdates−1). */
  numUpdates: number;
  /** Global token range of the inputs `[G·k, G·(k+1))`. */
  tokenRange: [number, number];
  /** Tokens per update (G). */
  G: number;
  /** Tokens per sequence (L). */
  seqLen: number;
  /** EOS id used to split documents. */
  eos: number;
  /** Text of the EOS token (`<|endoftext|>`), or `<EOS>` without a tokenizer. */
  eosText: string;
  /** Shards touched by the G + 1 tokens, in order. */
  shards: UpdateShard[];
  /** The S rows. */
  rows: UpdateRow[];
  /** 0-based number of the document holding the first input token, when known. */
  firstDocument?: number;
  /** Whether a tokenizer decoded the text. */
  decoded: boolean;
  /** A sentence when the ids do not look like this tokenizer's (wrong dtype, wrong tokenizer): `diagnoseIds`. */
  anomaly?: string;
  /** The G + 1 ids read (x rows and y rows are views into it). */
  tokens: Uint32Array;
  /**
   * Set when the rows are a run's samples (`orderedUpdate.ts`) rather than the card's sequences:
   * the order's kind, short name and one-line description. `tokenRange` then spans the lowest to
   * the highest offset read, not one contiguous range.
   */
  order?: { kind: string; name: string; description: string };
}

/** Inputs of {@link buildUpdateModel} besides the batch. */
export interface UpdateModelOptions {
  /** The id just before the update's first token (undefined at offset 0). Tells whether row 0 continues a document. */
  previousId?: number;
  /** 0-based document number at the update's first input token, when known. */
  firstDocument?: number;
  /** Updates in the stream (for the model's header). */
  numUpdates: number;
  /** EOS id. */
  eos: number;
  /**
   * What the EOS / delimiter id does (`documentRule.ts`; default `closes`: a segment ends with its
   * EOS). `opens` (llm.c): a segment ends before the delimiter, which is the first token of the
   * next document's segment (no segment is then marked `eos`).
   */
  delimiter?: DelimiterRole;
  /**
   * Index of the batch's first row within the update (default 0): the CLI builds the model a few
   * rows at a time from a batch holding only those rows (plus one token), so a huge update never
   * sits in memory whole. Row indices in the model are then `firstRow + r`.
   */
  firstRow?: number;
  /** Write unknown ids into segment text as `⟨unknown N⟩` (CLI text output; the update view counts them instead). */
  markUnknown?: boolean;
}

/**
 * Builds the model from a batch read by `readUpdate` (G + 1 tokens). Pure and synchronous:
 * about 25 ms for 131,072 tokens with a table tokenizer.
 * @param tok tokenizer for the text; without one, segments show ids.
 */
export function buildUpdateModel(batch: UpdateBatch, tok: LoadedTokenizer | undefined, opts: UpdateModelOptions): UpdateModel {
  const { rows: S, seqLen: L, tokens } = batch;
  const [start, end] = batch.tokenRange;
  const eos = opts.eos;
  const shards: UpdateShard[] = batch.shards.map((e) => ({
    index: e.index,
    shard: e.shard,
    name: shardName(e),
    startToken: e.startToken,
    numTokens: e.numTokens,
  }));
  const eosText = tok ? (tok.addedContent(eos) ?? tok.decode([eos])) : '<EOS>';
  const vocab = tok ? tok.vocabSize : Infinity;
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

  const opens = opts.delimiter === 'opens';
  let doc = opts.firstDocument;
  // Does the first input token begin a document? The stream start; else after a closing EOS, or at an opening delimiter.
  let prevWasEos = start === 0 || (opens ? tokens[0] === eos : opts.previousId === eos);
  let docStart: number | undefined = prevWasEos ? start : undefined;
  const rows: UpdateRow[] = new Array(S);
  let shardIdx = 0; // batch.shards[0] holds the first input token
  for (let r = 0; r < S; r++) {
    const base = r * L;
    const rowOffset = start + base;
    const segments: UpdateSegment[] = [];
    const rowContinues = !prevWasEos;
    let segStart = 0;
    let segShardChange = false;
    let segContinues = !prevWasEos;
    let segDoc = doc;
    let segDocStart = docStart;
    const flush = (segEnd: number, isEos: boolean) => {
      const body = tokens.subarray(base + segStart, base + segEnd - (isEos ? 1 : 0));
      let unknownIds = 0;
      for (let i = 0; i < body.length; i++) if (body[i] >= vocab) unknownIds++;
      let text: string;
      if (tok) {
        // Streaming inside a row: a character split by a shard edge comes out whole in the later
        // segment. The stream ends at an EOS and at the row end, so an incomplete character there
        // shows as "�", exactly as the library decodes the row.
        const stream = !(isEos || segEnd === L);
        if (unknownIds && opts.markUnknown) {
          text = '';
          let from = 0;
          for (let i = 0; i <= body.length; i++) {
            if (i < body.length && body[i] < vocab) continue;
            if (i > from) text += decoder.decode(tok.runBytes(body.subarray(from, i)), { stream: true });
            if (i < body.length) text += unknownIdMark(body[i]);
            from = i + 1;
          }
          if (!stream) text += decoder.decode();
        } else {
          text = decoder.decode(tok.runBytes(body), { stream });
        }
      } else {
        text = body.length ? `[${Array.from(body).join(' ')}]` : '';
      }
      segments.push({
        start: segStart,
        end: segEnd,
        offset: rowOffset + segStart,
        text,
        eos: isEos,
        document: segDoc,
        documentStart: segDocStart,
        continues: segContinues,
        shard: shardIdx,
        shardChange: segShardChange,
        unknownIds,
      });
      segStart = segEnd;
      segShardChange = false;
    };
    for (let c = 0; c < L; c++) {
      const i = base + c;
      // Shard edge inside the update at this token (not at column 0 of row 0).
      if (shardIdx + 1 < shards.length && start + i >= shards[shardIdx + 1].startToken) {
        if (c > segStart) {
          flush(c, false);
          segContinues = true;
        }
        shardIdx++;
        segShardChange = true;
      }
      if (opens) {
        // The delimiter opens the next document: end the segment before it. `firstDocument` already
        // counts a delimiter at the update's first token (the document it opens holds that token).
        if (tokens[i] === eos && i > 0) {
          if (c > segStart) flush(c, false);
          if (doc !== undefined) doc++;
          docStart = start + i;
          segDoc = doc;
          segDocStart = docStart;
          segContinues = false;
        }
        prevWasEos = tokens[i + 1] === eos;
      } else if (tokens[i] === eos) {
        flush(c + 1, true);
        if (doc !== undefined) doc++;
        docStart = start + i + 1;
        segDoc = doc;
        segDocStart = docStart;
        segContinues = false;
        prevWasEos = true;
      } else {
        prevWasEos = false;
      }
    }
    if (segStart < L) flush(L, false);
    const nextIdx = base + L;
    let nextShard = shardIdx;
    if (nextShard + 1 < shards.length && start + nextIdx >= shards[nextShard + 1].startToken) nextShard++;
    const nextId = tokens[nextIdx];
    const piece = tok ? tok.pieces([nextId])[0] : { text: String(nextId), kind: 'text' as PieceKind };
    rows[r] = {
      index: (opts.firstRow ?? 0) + r,
      offset: rowOffset,
      x: tokens.subarray(base, base + L),
      y: tokens.subarray(base + 1, base + L + 1),
      segments,
      continues: rowContinues,
      next: {
        offset: rowOffset + L,
        id: nextId,
        text: piece.text,
        kind: piece.kind,
        shard: nextShard,
        shardChange: nextShard !== shardIdx,
      },
    };
  }
  return {
    update: batch.update,
    numUpdates: opts.numUpdates,
    tokenRange: [start, end],
    G: end - start,
    seqLen: L,
    eos,
    eosText,
    shards,
    rows,
    firstDocument: opts.firstDocument,
    decoded: !!tok,
    tokens,
    anomaly: tok ? diagnoseIds(tokens, tok.vocabSize)?.message : undefined,
  };
}

/**
 * Reads update `k` and builds its model: the G + 1 tokens, plus the one token before the update
 * (to tell whether row 0 continues a document).
 * @param firstDocument the document number at `G·k` when the caller knows it.
 * @throws RangeRequestError for an invalid k; DataError on a short read.
 */
export async function readUpdateModel(
  ds: Pick<Dataset, 'schedule' | 'stream' | 'shards' | 'settings'> & Partial<Pick<Dataset, 'format'>>,
  k: number,
  tok: LoadedTokenizer | undefined,
  firstDocument?: number,
): Promise<UpdateModel> {
  const start = ds.schedule.G * k;
  const [batch, prev] = await Promise.all([
    readUpdate(ds as Dataset, k),
    start > 0 ? ds.stream.read(start - 1, 1) : Promise.resolve(undefined),
  ]);
  return buildUpdateModel(batch, tok, {
    previousId: prev?.[0],
    firstDocument,
    numUpdates: ds.schedule.numUpdates,
    eos: ds.settings.eosTokenId,
    delimiter: documentRuleOf(ds).role,
  });
}

/**
 * The document number at global token `offset` when it is cheap to know: every shard before
 * it already has a known EOS count, or the shards still to scan hold at most `budgetTokens`
 * tokens (the `tokenShards.documentScanLimit` setting; 25,000,000 by default). Otherwise
 * undefined (counting documents before offset 5e10 means reading 200 GB).
 * @throws CancelledError when `signal` fires.
 */
export async function documentNumberIfCheap(
  index: DocumentIndex,
  offset: number,
  budgetTokens: number,
  signal?: AbortSignal,
): Promise<number | undefined> {
  const { segment } = index.stream.locate(offset);
  const known = index.exportCounts();
  let unscanned = 0;
  for (let i = 0; i < segment; i++) if (known[i] === undefined) unscanned += index.stream.segments[i].numTokens;
  if (unscanned > budgetTokens) return undefined;
  return index.documentNumberAt(offset, signal);
}

/**
 * The number of documents in the whole stream when it is cheap to know: the shards whose EOS
 * count is not known yet hold at most `budgetTokens` tokens (the `tokenShards.documentScanLimit`
 * setting); otherwise undefined. Documents are separated by EOS, so the count is the number of
 * EOS tokens, plus one for a final document not closed by an EOS (the rule of
 * `DocumentIndex.documentStart`: a stream ending with an EOS has no empty document after it); where
 * the delimiter opens documents, plus one unless the stream begins with it (`documentCountOf`).
 * Counts are memoised in the index, so a second call is instant.
 * @throws CancelledError when `signal` fires.
 */
export async function documentCountIfCheap(index: DocumentIndex, budgetTokens: number, signal?: AbortSignal): Promise<number | undefined> {
  const segs = index.stream.segments;
  const known = index.exportCounts();
  let unscanned = 0;
  for (let i = 0; i < segs.length; i++) if (known[i] === undefined) unscanned += segs[i].numTokens;
  if (unscanned > budgetTokens) return undefined;
  let eos = 0;
  for (let i = 0; i < segs.length; i++) eos += await index.segmentCount(i, signal);
  const total = index.stream.totalTokens;
  if (total === 0) return 0;
  const [first, last] = await Promise.all([index.stream.read(0, 1), index.stream.read(total - 1, 1)]);
  return documentCountOf(index.rule, eos, first[0], last[0]);
}

/** Per row, the characters of its segment's text produced up to and including each column (see {@link columnAtChar}). */
const rowCharEnds = new WeakMap<UpdateRow, Int32Array>();

/**
 * For each column of row `row`, how many characters of its segment's text the tokens up to and
 * including it produce: one streaming decode of the row, flushed where the model's text is
 * (after an EOS and at the row end), so the counts match `UpdateSegment.text` exactly (a
 * character split by a shard edge counts in the later segment). Computed once per row, on the
 * first click in it.
 */
function charEndsOf(model: UpdateModel, row: UpdateRow, tok: LoadedTokenizer): Int32Array {
  let ends = rowCharEnds.get(row);
  if (ends) return ends;
  ends = new Int32Array(model.seqLen);
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  for (const seg of row.segments) {
    const lastBody = seg.end - (seg.eos ? 1 : 0);
    let produced = 0;
    for (let c = seg.start; c < lastBody; c++) {
      produced += decoder.decode(tok.bytesOf(row.x[c]), { stream: true }).length;
      ends[c] = produced;
    }
    // Where the model's decode flushes, an incomplete character ("�") belongs to the last body token.
    if (seg.eos || seg.end === model.seqLen) {
      produced += decoder.decode().length;
      if (lastBody > seg.start) ends[lastBody - 1] = produced;
    }
    for (let c = lastBody; c < seg.end; c++) ends[c] = produced;
  }
  rowCharEnds.set(row, ends);
  return ends;
}

/**
 * The column of the token that produced character `charOffset` of a segment's text (for click →
 * reveal): the first token of the segment whose output reaches past `charOffset` (per-token
 * character counts of the row are computed once, {@link charEndsOf}). Clamped to the segment.
 */
export function columnAtChar(
  model: UpdateModel,
  row: number,
  segment: number,
  charOffset: number,
  tok: LoadedTokenizer | undefined,
): number {
  const r = model.rows[row];
  const seg = r?.segments[segment];
  if (!seg) return 0;
  const lastBody = seg.end - (seg.eos ? 1 : 0);
  if (!tok || charOffset < 0) return seg.start;
  if (charOffset >= seg.text.length) return Math.max(seg.start, seg.end - 1);
  const ends = charEndsOf(model, r, tok);
  // Binary search: the first column in [seg.start, lastBody) with ends[c] > charOffset.
  let lo = seg.start,
    hi = lastBody;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ends[mid] > charOffset) hi = mid;
    else lo = mid + 1;
  }
  return lo < lastBody ? lo : Math.max(seg.start, lastBody - 1);
}

// ───────────── the webview's copy (no ids: the view only needs text) ─────────────

/** A segment as sent to the webview (see {@link UpdateSegment}). */
export type UpdateViewSegment = Omit<UpdateSegment, never>;

/** A row as sent to the webview: no id arrays. */
export interface UpdateViewRow {
  index: number;
  offset: number;
  continues: boolean;
  segments: UpdateViewSegment[];
  next?: NextToken;
  sample?: number;
  pieces?: { start: number; end: number }[];
}

/**
 * The model as sent to the webview: plain JSON, no paths, no typed arrays (the scalar fields are
 * {@link UpdateModel}'s).
 */
export interface UpdateViewData extends Pick<
  UpdateModel,
  'update' | 'numUpdates' | 'tokenRange' | 'G' | 'seqLen' | 'eos' | 'eosText' | 'firstDocument' | 'decoded' | 'anomaly' | 'order'
> {
  shards: { name: string; startToken: number; numTokens: number }[];
  rows: UpdateViewRow[];
  /** One line: "update 55,000 (0-based; the 55,001st update)". */
  title: string;
}

/** Strips the id arrays and absolute data from a model for the webview. */
export function toUpdateViewData(m: UpdateModel): UpdateViewData {
  return {
    update: m.update,
    numUpdates: m.numUpdates,
    tokenRange: m.tokenRange,
    G: m.G,
    seqLen: m.seqLen,
    eos: m.eos,
    eosText: m.eosText,
    shards: m.shards.map((s) => ({ name: s.name, startToken: s.startToken, numTokens: s.numTokens })),
    rows: m.rows.map((r) => ({
      index: r.index,
      offset: r.offset,
      continues: r.continues,
      segments: r.segments,
      next: r.next,
      sample: r.sample,
      pieces: r.pieces,
    })),
    firstDocument: m.firstDocument,
    decoded: m.decoded,
    anomaly: m.anomaly,
    order: m.order,
    title: describeUpdate(m.update),
  };
}

/**
 * Plain-text form of the model for the CLI: a header, then each row with its index and offset,
 * document boundaries `⟦EOS · next document starts at token O (document N)⟧` (the same marker as
 * the CLI's text form), continuing documents `⟦… continues document N …⟧`,
 * shard changes `⟦shard → tokens_000001.u32⟧`, and the row's target token.
 * @param rows which rows to print (default all).
 */
export function formatUpdateModelText(m: UpdateModel, rows?: number[]): string {
  return [
    formatUpdateHeaderText(
      m.update,
      m.tokenRange,
      m.rows.length,
      m.seqLen,
      m.shards.map((s) => s.shard),
    ),
    formatUpdateRowsText(m, rows, m.rows.length - 1),
  ].join('\n');
}

/** The first line of the text form: update, token range, S × L, shards. */
export function formatUpdateHeaderText(
  update: number,
  tokenRange: [number, number],
  sequences: number,
  seqLen: number,
  shards: string[],
): string {
  return `${describeUpdate(update)} · tokens [${fmt(tokenRange[0])}, ${fmt(tokenRange[1])}) · ${sequences} sequences × ${fmt(seqLen)} · shards ${shards.join(', ')}`;
}

/**
 * The text form of some rows of a model (each preceded by a blank line).
 * @param rows positions in `m.rows` (default all).
 * @param lastRowIndex the update's last sequence index (its next token is the look-ahead token).
 */
export function formatUpdateRowsText(m: UpdateModel, rows: number[] | undefined, lastRowIndex: number): string {
  const doc = (n?: number) => (n === undefined ? 'document' : `document ${fmt(n)}`);
  const lines: string[] = [];
  for (const pos of rows ?? m.rows.map((_, i) => i)) {
    const row = m.rows[pos];
    const r = row.index;
    lines.push(
      '',
      `── sequence ${r} · tokens [${fmt(row.offset)}, ${fmt(row.offset + m.seqLen)}) · shard ${m.shards[row.segments[0].shard].name} ──`,
    );
    let s = '';
    row.segments.forEach((g, i) => {
      if (g.shardChange) s += `⟦shard → ${m.shards[g.shard].name} at token ${fmt(g.offset)}⟧`;
      if (i === 0 && g.continues)
        s += `⟦… continues ${doc(g.document)}${g.documentStart !== undefined ? ` from token ${fmt(g.documentStart)}` : ' from before this sequence'}⟧`;
      s += g.text;
      if (g.eos)
        s += `\n⟦EOS · next document starts at token ${fmt(g.offset + g.end - g.start)}${g.document !== undefined ? ` (document ${fmt(g.document + 1)})` : ''}⟧\n`;
    });
    lines.push(s);
    const n = row.next;
    if (!n) continue;
    const label =
      r === lastRowIndex ? 'look-ahead token (target of the last position; first token of the next update)' : 'target of the last position';
    lines.push(
      `→ ${label} at ${fmt(n.offset)}${n.shardChange ? ` (in ${m.shards[n.shard].name})` : ''}: id ${n.id} ${JSON.stringify(n.text)}`,
    );
  }
  return lines.join('\n');
}
