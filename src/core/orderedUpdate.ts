/**
 * The update view's model of update k under a run's training order (Megatron, OLMo, llm.c;
 * `src/core/order/`): one row per sample of the batch, in batch order, each with the stream ranges
 * the trainer assembled it from (`OrderSample.pieces`), the documents those ranges lie in, and the
 * decoded text. The rows are {@link UpdateRow}s, so the update view renders them like the card's
 * sequences; what differs is said by {@link UpdateRow.sample}, {@link UpdateRow.pieces} and
 * {@link UpdateSegment.jump} (the sample continues elsewhere in the stream).
 *
 * Segments split at every EOS (a document ends), at every piece boundary (a jump) and at every
 * shard edge. A row's input columns are the sample's first `inputTokens` tokens; its
 * {@link UpdateRow.next} is the sample's extra target token when the order reads one (Megatron's
 * `add_extra_token_to_sequence`, llm.c's B·T+1) and absent otherwise (an OLMo instance predicts
 * inside itself).
 *
 * Units: offsets are global token offsets; columns are 0-based inside the sample.
 */
import { DataError } from './errors';
import { UpdateIndex, Validated, shardIndexAt, shardName } from './navigation';
import { parseNumberInput } from './numbers';
import { count, fmt } from './units';
import { LoadedTokenizer, PieceKind, diagnoseIds } from './tokenizer';
import type { Dataset } from './dataset';
import type { OrderSample, TokenRange } from './order/order';
import type { OrderFacts } from './order/orderClient';
import { orderName } from './order/orderText';
import type { UpdateModel, UpdateRow, UpdateSegment, UpdateShard } from './updateModel';

/** What {@link buildOrderedUpdateModel} needs besides the samples. */
export interface OrderedUpdateInputs {
  update: number;
  order: OrderFacts & { name: string };
  eos: number;
  /** The dataset's shards (manifest order), to name where each piece lies. */
  shards: readonly Pick<Dataset['shards'][number], 'index' | 'shard' | 'startToken' | 'numTokens'>[];
  /** Per sample (batch order), its tokens: the pieces' ids concatenated. */
  ids: Uint32Array[];
  /** Per sample, per piece: the stream token just before the piece (undefined at offset 0): does the piece start inside a document? */
  before: (number | undefined)[][];
  /** Per sample, per piece: the 0-based document number at the piece's first token, when known cheaply. */
  documents?: (number | undefined)[][];
}

/** The global offset of column `c` of a sample assembled from `pieces` (c < the pieces' total length). */
export function pieceOffset(pieces: readonly TokenRange[], c: number): number {
  for (const p of pieces) {
    const n = p.end - p.start;
    if (c < n) return p.start + c;
    c -= n;
  }
  throw new RangeError(`column ${c} is past the sample's tokens`);
}

/**
 * Builds the model (see the module comment). Pure and synchronous.
 * @param tok the tokenizer for the text; without one, segments show ids.
 */
export function buildOrderedUpdateModel(samples: OrderSample[], tok: LoadedTokenizer | undefined, o: OrderedUpdateInputs): UpdateModel {
  const L = o.order.inputTokens;
  const W = o.order.sampleTokens;
  const eos = o.eos;
  const vocab = tok ? tok.vocabSize : Infinity;
  const eosText = tok ? (tok.addedContent(eos) ?? tok.decode([eos])) : '<EOS>';
  // Shards any piece touches, in manifest order.
  const touched = new Set<number>();
  for (const s of samples)
    for (const p of s.pieces) {
      const a = shardIndexAt(o.shards, p.start),
        b = shardIndexAt(o.shards, p.end - 1);
      for (let i = a; i >= 0 && i <= b; i++) touched.add(i);
    }
  const order = [...touched].sort((a, b) => a - b);
  const shards: UpdateShard[] = order.map((i) => {
    const e = o.shards[i];
    return { index: e.index, shard: e.shard, name: shardName(e), startToken: e.startToken, numTokens: e.numTokens };
  });
  const shardOf = (offset: number) => order.indexOf(shardIndexAt(o.shards, offset));
  const tokens = new Uint32Array(samples.length * W);
  let lo = Infinity,
    hi = 0;
  const rows: UpdateRow[] = samples.map((s, r) => {
    const ids = o.ids[r];
    const n = ids.length;
    if (n !== s.pieces.reduce((a, p) => a + p.end - p.start, 0) || n > W)
      throw new DataError(`update ${o.update}, sample ${s.sample}: read ${n} tokens for its ranges`);
    const base = r * W;
    tokens.set(ids, base);
    const m = Math.min(n, L);
    const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
    const segments: UpdateSegment[] = [];
    let c = 0;
    s.pieces.forEach((p, pi) => {
      lo = Math.min(lo, p.start);
      hi = Math.max(hi, p.end);
      const pieceStartCol = c;
      const pieceEndCol = Math.min(m, c + p.end - p.start);
      let doc = o.documents?.[r][pi];
      let continues = o.before[r][pi] !== undefined && o.before[r][pi] !== eos;
      let docStart: number | undefined = continues ? undefined : p.start;
      let shard = shardOf(p.start);
      let segStart = c;
      let shardChange = false;
      const flush = (end: number, isEos: boolean) => {
        const body = ids.subarray(segStart, end - (isEos ? 1 : 0));
        let unknownIds = 0;
        for (let i = 0; i < body.length; i++) if (body[i] >= vocab) unknownIds++;
        // A character split by a shard edge comes out whole in the later segment; at an EOS, a
        // jump or the row end the decode flushes (an incomplete character shows as "�").
        const stream = !(isEos || end === pieceEndCol);
        const text = tok ? decoder.decode(tok.runBytes(body), { stream }) : body.length ? `[${Array.from(body).join(' ')}]` : '';
        const offset = p.start + (segStart - pieceStartCol);
        segments.push({
          start: segStart,
          end,
          offset,
          text,
          eos: isEos,
          document: doc,
          documentStart: docStart,
          continues,
          shard,
          shardChange,
          unknownIds,
          jump: segStart === pieceStartCol && pi > 0 ? true : undefined,
        });
        segStart = end;
        shardChange = false;
      };
      for (; c < pieceEndCol; c++) {
        const off = p.start + (c - pieceStartCol);
        const sh = shardOf(off);
        if (sh !== shard) {
          if (c > segStart) {
            flush(c, false);
            continues = true;
          }
          shard = sh;
          shardChange = true;
        }
        if (ids[c] === eos) {
          flush(c + 1, true);
          if (doc !== undefined) doc++;
          docStart = off + 1;
          continues = false;
        }
      }
      if (segStart < pieceEndCol) flush(pieceEndCol, false);
    });
    let next: UpdateRow['next'] = undefined;
    if (W > L && n > L) {
      const off = pieceOffset(s.pieces, L);
      const id = ids[L];
      const piece = tok ? tok.pieces([id])[0] : { text: String(id), kind: 'text' as PieceKind };
      const sh = shardOf(off);
      next = { offset: off, id, text: piece.text, kind: piece.kind, shard: sh, shardChange: sh !== segments[segments.length - 1]?.shard };
    }
    return {
      index: s.slot,
      offset: s.pieces[0]?.start ?? 0,
      x: tokens.subarray(base, base + m),
      y: tokens.subarray(base + 1, base + Math.min(n, W)),
      segments,
      next,
      continues: segments[0]?.continues ?? false,
      sample: s.sample,
      pieces: s.pieces,
    };
  });
  return {
    update: o.update,
    numUpdates: o.order.numUpdates,
    tokenRange: [lo === Infinity ? 0 : lo, hi],
    G: samples.length * L,
    seqLen: L,
    eos,
    eosText,
    shards,
    rows,
    decoded: !!tok,
    tokens,
    anomaly: tok ? diagnoseIds(tokens, tok.vocabSize)?.message : undefined,
    order: { kind: o.order.kind, name: o.order.name, description: o.order.description },
  };
}

/**
 * Reads update k's samples from the stream (each piece, and the token before each piece) and
 * builds the model.
 * @param documentAt the document number at a global offset when cheap to know (the update view's `documentNumberIfCheap`).
 * @throws DataError on a short read.
 */
export async function readOrderedUpdateModel(
  ds: Pick<Dataset, 'stream' | 'shards' | 'settings'>,
  k: number,
  samples: OrderSample[],
  order: OrderedUpdateInputs['order'],
  tok: LoadedTokenizer | undefined,
  documentAt?: (offset: number) => Promise<number | undefined>,
): Promise<UpdateModel> {
  const ids = await Promise.all(
    samples.map(async (s) => {
      const parts = await Promise.all(s.pieces.map((p) => ds.stream.read(p.start, p.end - p.start)));
      const out = new Uint32Array(parts.reduce((a, x) => a + x.length, 0));
      let at = 0;
      for (const x of parts) {
        out.set(x, at);
        at += x.length;
      }
      return out;
    }),
  );
  const before = await Promise.all(
    samples.map((s) => Promise.all(s.pieces.map(async (p) => (p.start > 0 ? (await ds.stream.read(p.start - 1, 1))[0] : undefined)))),
  );
  const documents = documentAt ? await Promise.all(samples.map((s) => Promise.all(s.pieces.map((p) => documentAt(p.start))))) : undefined;
  return buildOrderedUpdateModel(samples, tok, {
    update: k,
    order,
    eos: ds.settings.eosTokenId,
    shards: ds.shards,
    ids,
    before,
    documents,
  });
}

/** An order's facts and short name, as the update view and Go to Update use them. */
export type NamedOrder = OrderedUpdateInputs['order'];

/** An order's facts with its short name ({@link orderName}). */
export function namedOrder(order: OrderFacts): NamedOrder {
  const { kind, numUpdates, samplesPerUpdate, sampleTokens, inputTokens, description } = order;
  return { kind, numUpdates, samplesPerUpdate, sampleTokens, inputTokens, description, name: orderName(order) };
}

/**
 * Range check of an update index against a run's order (Go to Update, the update view's box,
 * links): a whole number in `0..numUpdates−1`, else one message naming the run's valid range.
 */
export function checkRunUpdate(k: number, order: NamedOrder): Validated<UpdateIndex> {
  const range = order.numUpdates === 0 ? 'no complete update' : `updates 0..${fmt(order.numUpdates - 1)} (0-based)`;
  if (!Number.isSafeInteger(k) || k < 0 || k >= order.numUpdates)
    return { ok: false, error: `Update ${typeof k === 'number' ? fmt(k) : String(k)} is not in the run: the ${order.name} has ${range}.` };
  return {
    ok: true,
    value: k as UpdateIndex,
    detail: `update ${fmt(k)} (0-based) of the ${order.name}: ${count(order.samplesPerUpdate, 'sample')}`,
  };
}

/** {@link checkRunUpdate} of typed text (`55_000`, `5.5e4`). */
export function validateRunUpdateInput(text: string, order: NamedOrder): Validated<UpdateIndex> {
  const p = parseNumberInput(text);
  if (!p.ok) return { ok: false, error: `${p.error}. Enter an update 0..${fmt(Math.max(0, order.numUpdates - 1))} of the ${order.name}.` };
  return checkRunUpdate(p.value, order);
}
