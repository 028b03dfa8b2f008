/**
 * The batch one update trained on, exactly as the dataset card's reader builds it:
 * `batch = tokens(G·k, G + 1)`, `x = batch[:-1].reshape(S, L)`, `y = batch[1:].reshape(S, L)`
 * with `S = G / L` sequences. The last target of the last row is the look-ahead token (the
 * first token of update k+1, or the stored extra token after the last update).
 */
import { Dataset } from './dataset';
import { ShardEntry } from './manifest';

/** One update's batch. Offsets in tokens. */
export interface UpdateBatch {
  /** 0-based update index. */
  update: number;
  /** Global token range of the inputs, `[G·k, G·(k+1))`. */
  tokenRange: [number, number];
  /** The G + 1 tokens read (inputs plus the look-ahead token). */
  tokens: Uint32Array;
  /** Manifest entries of the shards the G + 1 tokens touch, in order. */
  shards: ShardEntry[];
  /** Sequences per update (rows). */
  rows: number;
  /** Tokens per sequence (columns). */
  seqLen: number;
}

/**
 * Reads update `k`'s batch (G + 1 tokens, crossing shard edges).
 * @throws RangeRequestError for an invalid k; DataError on a short read.
 */
export async function readUpdate(ds: Dataset, k: number): Promise<UpdateBatch> {
  const [start, end] = ds.schedule.updateRange(k);
  const tokens = await ds.stream.read(start, end - start + 1);
  const first = ds.stream.locate(start).segment;
  const last = ds.stream.locate(end).segment;
  return {
    update: k,
    tokenRange: [start, end],
    tokens,
    shards: ds.shards.slice(first, last + 1),
    rows: ds.schedule.sequencesPerUpdate,
    seqLen: ds.schedule.L,
  };
}

/** Input ids of row `r` (a view, no copy): `tokens[L·r, L·(r+1))`. */
export function inputRow(b: UpdateBatch, r: number): Uint32Array {
  return b.tokens.subarray(b.seqLen * r, b.seqLen * (r + 1));
}

/** Target ids of row `r` (a view): inputs shifted by one token, `tokens[L·r + 1, L·(r+1) + 1)`. */
export function targetRow(b: UpdateBatch, r: number): Uint32Array {
  return b.tokens.subarray(b.seqLen * r + 1, b.seqLen * (r + 1) + 1);
}

/** The look-ahead token: the target of the last position of the last row. */
export function lookAheadToken(b: UpdateBatch): number {
  return b.tokens[b.tokens.length - 1];
}
