/**
 * Per-update statistics for the loss-spike workbench. One {@link UpdateStats} record
 * per update `k` (0-based), computed over the update's **G input tokens** `t[0..G)` = global
 * tokens `[G·k, G·(k+1))` — the dataset card's `x` flattened row by row (the look-ahead token is
 * not part of the update's inputs and is never counted). Exact definitions (the README repeats them):
 *
 * | field | definition |
 * |---|---|
 * | `update` | k |
 * | `token_range` | `[G·k, G·(k+1))`, global token offsets, end exclusive |
 * | `eos` | positions i in [0, G) with `t[i] = EOS` |
 * | `documents_started` | positions i whose token is the first token of a document: global offset 0, or the token at global offset `G·k + i − 1` is EOS (for i = 0 that is the last token of update k − 1) |
 * | `distinct_tokens` | number of distinct ids among the G tokens |
 * | `max_id` | largest id among the G tokens |
 * | `unknown_ids` | positions whose id has no token in the tokenizer (id ≥ vocabulary size, or a hole); `null` without a tokenizer |
 * | `special_ids` | positions holding an added token marked special other than the EOS id (e.g. a pad or FIM token inside the text); `null` without a tokenizer |
 * | `longest_eos_free_run` | longest run of consecutive positions in [0, G) none of which is EOS (clipped to the update: a run does not continue into the neighbours) |
 * | `duplicate_sequences` | rows r of `x` (S = G/L rows of L ids) for which some r' < r has `x[r'] = x[r]` element for element |
 * | `top_token` | `{id, count}`: the id occurring most often among the G tokens, the lowest id on a tie |
 * | `repeated_13grams` | positions i with 12 ≤ i < G whose 13-gram `t[i−12..i]` equals `t[j−12..j]` for some 12 ≤ j < i (both n-grams lie inside the update; they may cross row edges, since the update is read as one run) |
 * | `repeat_13gram_share` | `repeated_13grams / (G − 12)`: the denominator counts every position that ends a 13-gram inside the update; `null` when G < 13 |
 * | `complete_documents` | documents that begin and end inside the update: a first token (as in `documents_started`) at i and the closing EOS at j ≥ i, both in [0, G) |
 * | `mean_complete_document_length` | mean of `j − i + 1` (tokens, EOS included) over those documents; `null` when there are none |
 *
 * Where the delimiter **opens** documents (llm.c, `documentRule.ts`), `EOS` above is that
 * delimiter and a document's first token is the delimiter itself (or global offset 0):
 * `documents_started` counts positions i with `t[i]` = the delimiter, plus i = 0 at global offset 0
 * when `t[0]` is not; `complete_documents` are a first token at i and the next document's
 * delimiter at j > i, both in [0, G), of length `j − i` (the opening delimiter included; the
 * document ending at G − 1 is not counted: the token after the update is not read).
 *
 * **Through a run's training order** (Megatron, OLMo, llm.c: {@link StatsCalculator.computeSamples},
 * {@link OrderedUpdateStats}; the README's "Statistics of a step through a run's order" repeats this):
 * update k is the run's step k and `t` is the **input tokens** of its B samples in batch order,
 * each sample's pieces (stream ranges) concatenated and cut to the order's `inputTokens` — the extra
 * target token Megatron (`add_extra_token_to_sequence`) and llm.c (`B·T+1`) read is not counted,
 * as the card's look-ahead token is not. Then:
 *
 * | field | definition through an order |
 * |---|---|
 * | `order`, `tokens`, `ranges` | replace `token_range`: the order's kind; the input tokens (B × inputTokens, less for a padded sample); the stream ranges read (pieces cut to the inputs; a piece starting where the previous one, in batch order, ended is merged into it) |
 * | `eos`, `distinct_tokens`, `max_id`, `unknown_ids`, `special_ids`, `top_token` | as above, over all the input tokens |
 * | `documents_started` | read positions whose token begins a document by the format's rule (`documentRule.ts`), judged on the stream: global offset 0, or (`closes`) the stream token just before it is EOS, or (`opens`) it is the delimiter; a token read twice counts twice |
 * | `complete_documents`, `mean_complete_document_length` | documents whose first token and closing EOS (`opens`: the next delimiter, not counted) lie inside one contiguous piece of one sample |
 * | `longest_eos_free_run` | longest EOS-free run inside one sample (a run does not continue into the next sample; it does across the pieces of one sample) |
 * | `duplicate_sequences` | samples whose inputs equal, id for id, an earlier sample's of the update |
 * | `repeated_13grams` | 13-grams lying inside one sample (they may cross its pieces, never a sample edge) equal to a 13-gram ending at an earlier position of the update |
 * | `repeat_13gram_share` | `repeated_13grams / Σ max(0, inputs − 12)` over the samples; `null` when no sample holds 13 tokens |
 *
 * Tokens the run never read are in no update's statistics. The card's sequential order (no run
 * description, or `"order": "sequential"`) keeps the definitions above unchanged ({@link computeUpdateStats}).
 *
 * Speed: one pass for counts, EOS, runs and documents over a reusable id-count array (ids below
 * {@link DENSE_ID_LIMIT} or the vocabulary size, a `Map` above: corrupt data can hold any uint32);
 * 13-grams through a rolling polynomial hash into an open-addressing table of positions, every
 * hash match verified id by id (collisions never count as repeats); rows hashed and verified the same way.
 *
 * Storage dtype knowledge stays in `TokenStream`: this module sees ids only.
 */
import type { Dataset } from './dataset';
import { CancelledError, RangeRequestError } from './errors';
import { fmt } from './units';
import { parseNumberInput } from './numbers';
import type { LoadedTokenizer } from './tokenizer';
import type { DelimiterRole } from './formats/types';
import { documentRuleOf } from './documentRule';
import { checkOrderUpdate, type OrderKind, type OrderSample, type TrainingOrder } from './order/order';

/** N of the repetition measure (13-grams, the usual contamination/dedup window). */
export const NGRAM = 13;

/** Ids below this are counted in a dense array even without a tokenizer (dolma2 has 100,278 ids). */
export const DENSE_ID_LIMIT = 1 << 17;

/** The statistics of an update, without what names the update (see the module doc for definitions). */
export interface StatFields {
  eos: number;
  documents_started: number;
  distinct_tokens: number;
  max_id: number;
  unknown_ids: number | null;
  special_ids: number | null;
  longest_eos_free_run: number;
  duplicate_sequences: number;
  top_token: { id: number; count: number };
  repeated_13grams: number;
  repeat_13gram_share: number | null;
  complete_documents: number;
  mean_complete_document_length: number | null;
}

/** One update's statistics in the dataset card's sequential order; field names are the JSON/CSV names (see the module doc for definitions). */
export interface UpdateStats extends StatFields {
  update: number;
  /** `[G·k, G·(k+1))`, global token offsets, end exclusive. */
  token_range: [number, number];
}

/**
 * One update's statistics through a run's training order (Megatron, OLMo, llm.c; see "Through a
 * run's training order" in the module doc): `token_range` is replaced by `order`, `tokens` and `ranges`.
 */
export interface OrderedUpdateStats extends StatFields {
  update: number;
  /** The order the update follows. */
  order: OrderKind;
  /** Input tokens the statistics are over: the update's samples' inputs (`B × inputTokens`, less for a padded Megatron sample). */
  tokens: number;
  /** Stream ranges those tokens were read from: the samples' pieces clipped to their inputs, touching consecutive ones merged. */
  ranges: number;
}

/** A record of either kind ({@link UpdateStats} or {@link OrderedUpdateStats}). */
export type AnyUpdateStats = UpdateStats | OrderedUpdateStats;

/** The numeric columns of {@link UpdateStats} in display order, with `top_token` split in two (CSV, the inspect table). */
export const STAT_COLUMNS = [
  'eos',
  'documents_started',
  'distinct_tokens',
  'max_id',
  'unknown_ids',
  'special_ids',
  'longest_eos_free_run',
  'duplicate_sequences',
  'top_token_id',
  'top_token_count',
  'repeated_13grams',
  'repeat_13gram_share',
  'complete_documents',
  'mean_complete_document_length',
] as const;

/** A numeric column name of {@link STAT_COLUMNS}. */
export type StatColumn = (typeof STAT_COLUMNS)[number];

/** The value of a column of a record (`top_token_id`/`top_token_count` from `top_token`). */
export function statValue(s: StatFields, c: StatColumn): number | null {
  if (c === 'top_token_id') return s.top_token.id;
  if (c === 'top_token_count') return s.top_token.count;
  return s[c];
}

/** What the calculator needs besides the ids. */
export interface StatsOptions {
  /** Tokens per update (G). */
  G: number;
  /** Tokens per sequence (L); G must be a multiple. */
  L: number;
  /** EOS id. */
  eos: number;
  /** What the EOS / delimiter id does (`documentRule.ts`); default `closes`. */
  delimiter?: DelimiterRole;
  /** For `unknown_ids` / `special_ids`; without one those fields are null. */
  tokenizer?: Pick<LoadedTokenizer, 'vocabSize' | 'isKnown' | 'isSpecial'>;
}

/** fmix32 of MurmurHash3: spreads the rolling hash over the table's low bits. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const BASE = 0x01000193; // FNV prime: odd, so multiplication mod 2^32 is invertible

/**
 * Computes {@link UpdateStats} for one update at a time, reusing its buffers (create one per
 * thread, not per update). Synchronous and pure: the I/O is in {@link computeUpdateStats}.
 */
export class StatsCalculator {
  private readonly counts: Uint32Array;
  /** 0 unknown, 1 known, 2 special (not EOS); undefined without a tokenizer. */
  private readonly kinds?: Uint8Array;
  private readonly table: Int32Array;
  private readonly tableHash: Uint32Array;
  private readonly mask: number;
  private readonly basePow: number;

  constructor(readonly opts: StatsOptions) {
    const { G, L, tokenizer } = opts;
    if (!(G > 0 && L > 0 && G % L === 0)) throw new RangeError(`G (${G}) must be a positive multiple of L (${L})`);
    this.counts = new Uint32Array(Math.max(DENSE_ID_LIMIT, tokenizer?.vocabSize ?? 0));
    if (tokenizer) {
      this.kinds = new Uint8Array(tokenizer.vocabSize);
      for (let id = 0; id < tokenizer.vocabSize; id++) {
        this.kinds[id] = !tokenizer.isKnown(id) ? 0 : tokenizer.isSpecial(id) && id !== opts.eos ? 2 : 1;
      }
    }
    let size = 1;
    while (size < 2 * G) size <<= 1;
    this.table = new Int32Array(size);
    this.tableHash = new Uint32Array(size);
    this.mask = size - 1;
    let p = 1;
    for (let i = 0; i < NGRAM; i++) p = Math.imul(p, BASE);
    this.basePow = p >>> 0;
  }

  /**
   * Statistics of update `k` in the dataset card's sequential order.
   * @param t the update's G input ids (`x` flattened); a longer array is cut to G.
   * @param previousId the id at global offset `G·k − 1`; `undefined` only for k = 0 (the stream's first token starts a document).
   * @throws RangeError when `t` holds fewer than G ids.
   */
  compute(k: number, t: Uint32Array, previousId: number | undefined): UpdateStats {
    const { G, L } = this.opts;
    if (t.length < G) throw new RangeError(`update ${k}: ${t.length} ids, expected ${G}`);
    if (t.length > G) t = t.subarray(0, G);
    // The update is one run of the stream: one sequence for 13-grams and EOS-free runs, one
    // piece for documents, G/L rows for duplicates.
    this.sequentialRows ??= Array.from({ length: G / L }, (_, r) => r * L);
    const f = this.fields(t, { sequences: [0], pieces: [0], before: [previousId], rows: this.sequentialRows });
    return { update: k, token_range: [G * k, G * (k + 1)], ...f };
  }

  /**
   * Statistics of update `k` through a run's training order (definitions: "Through a run's
   * training order" in the module doc). The calculator's G must be at least the samples' input
   * tokens together (`B × inputTokens`, see {@link orderStatsCalculator}).
   * @param samples the update's samples in batch order, each its input ids and the stream pieces they came from.
   * @throws RangeError when the samples hold more than G ids, or a sample's pieces do not add up to its ids.
   */
  computeSamples(k: number, kind: OrderKind, samples: readonly SampleIds[]): OrderedUpdateStats {
    const total = samples.reduce((a, x) => a + x.ids.length, 0);
    if (total > this.opts.G) throw new RangeError(`update ${k}: ${total} input ids, more than the ${this.opts.G} this calculator holds`);
    const t = this.samplesBuffer.subarray(0, total);
    const layout: IdLayout = { sequences: [], pieces: [], before: [], rows: [] };
    let at = 0,
      ranges = 0,
      lastEnd = -1;
    for (const x of samples) {
      layout.sequences.push(at);
      t.set(x.ids, at);
      let within = 0;
      for (const p of x.pieces) {
        if (p.length <= 0) continue;
        layout.pieces.push(at + within);
        layout.before.push(p.before);
        if (p.start !== lastEnd) ranges++;
        lastEnd = p.start + p.length;
        within += p.length;
      }
      if (within !== x.ids.length) throw new RangeError(`update ${k}: a sample's pieces hold ${within} tokens, its ids ${x.ids.length}`);
      at += x.ids.length;
    }
    layout.rows = layout.sequences;
    const f = this.fields(t, layout);
    return { update: k, order: kind, tokens: total, ranges, ...f };
  }

  /** Reusable buffer of G ids for {@link computeSamples}. */
  private get samplesBuffer(): Uint32Array {
    return (this.samplesIds ??= new Uint32Array(this.opts.G));
  }
  private samplesIds?: Uint32Array;
  private sequentialRows?: number[];

  /** The statistics of ids `t` laid out as `layout` says (the one computation behind both kinds of record). */
  private fields(t: Uint32Array, layout: IdLayout): StatFields {
    const { eos } = this.opts;
    const n = t.length;
    const counts = this.counts,
      dense = counts.length,
      kinds = this.kinds;
    const sparse = new Map<number, number>();
    let nEos = 0,
      started = 0,
      distinct = 0,
      maxId = 0,
      unknown = 0,
      special = 0;
    let run = 0,
      longest = 0,
      topId = 0,
      topCount = 0;
    let completeDocs = 0,
      completeLen = 0;
    let docStart = -1; // position of the first token of a document begun inside the current piece, or −1
    const opens = this.opts.delimiter === 'opens';
    let afterEos = false;
    let nextPiece = 0,
      nextSeq = 0;
    for (let i = 0; i < n; i++) {
      if (nextSeq < layout.sequences.length && layout.sequences[nextSeq] === i) {
        // A new sequence: an EOS-free run does not continue into it (empty sequences before it are skipped).
        while (nextSeq < layout.sequences.length && layout.sequences[nextSeq] === i) nextSeq++;
        if (run > longest) longest = run;
        run = 0;
      }
      if (nextPiece < layout.pieces.length && layout.pieces[nextPiece] === i) {
        // A new stream range: its first token starts a document by the token before it.
        const before = layout.before[nextPiece++];
        afterEos = before === undefined || (!opens && before === eos);
        docStart = -1;
      }
      const id = t[i];
      if (opens && id === eos) {
        // The delimiter begins a document and ends the one before it.
        if (docStart >= 0 && !afterEos) {
          completeDocs++;
          completeLen += i - docStart;
        }
        afterEos = true;
      }
      if (afterEos) {
        started++;
        docStart = i;
      }
      let c: number;
      if (id < dense) {
        c = ++counts[id];
      } else {
        c = (sparse.get(id) ?? 0) + 1;
        sparse.set(id, c);
      }
      if (c === 1) distinct++;
      if (c > topCount || (c === topCount && id < topId)) {
        topCount = c;
        topId = id;
      }
      if (id > maxId) maxId = id;
      if (kinds) {
        const kind = id < kinds.length ? kinds[id] : 0;
        if (kind === 0) unknown++;
        else if (kind === 2) special++;
      }
      if (id === eos) {
        nEos++;
        if (run > longest) longest = run;
        run = 0;
        if (opens) {
          afterEos = false;
        } else {
          if (docStart >= 0) {
            completeDocs++;
            completeLen += i - docStart + 1;
          }
          docStart = -1;
          afterEos = true;
        }
      } else {
        run++;
        afterEos = false;
      }
    }
    if (run > longest) longest = run;
    for (let i = 0; i < n; i++) {
      const id = t[i];
      if (id < dense) counts[id] = 0;
    }

    const { repeats, windows } = this.repeatedNgrams(t, layout.sequences);
    return {
      eos: nEos,
      documents_started: started,
      distinct_tokens: distinct,
      max_id: maxId,
      unknown_ids: kinds ? unknown : null,
      special_ids: kinds ? special : null,
      longest_eos_free_run: longest,
      duplicate_sequences: duplicateRows(t, layout.rows),
      top_token: { id: topId, count: topCount },
      repeated_13grams: repeats,
      repeat_13gram_share: windows > 0 ? repeats / windows : null,
      complete_documents: completeDocs,
      mean_complete_document_length: completeDocs ? completeLen / completeDocs : null,
    };
  }

  /**
   * 13-grams lying inside one sequence (`sequences`: where each begins) whose ids occurred as a
   * 13-gram ending at an earlier position (hash table of first positions, verified); `windows`:
   * the 13-grams there are.
   */
  private repeatedNgrams(t: Uint32Array, sequences: readonly number[]): { repeats: number; windows: number } {
    const n = t.length;
    const table = this.table,
      hashes = this.tableHash,
      mask = this.mask,
      pow = this.basePow;
    table.fill(0);
    let repeats = 0,
      windows = 0;
    for (let q = 0; q < sequences.length; q++) {
      const a = sequences[q],
        b = q + 1 < sequences.length ? sequences[q + 1] : n;
      if (b - a < NGRAM) continue;
      windows += b - a - (NGRAM - 1);
      let h = 0;
      for (let i = a; i < a + NGRAM - 1; i++) h = (Math.imul(h, BASE) + t[i]) | 0;
      for (let i = a + NGRAM - 1; i < b; i++) {
        // h = Σ t[i−12+m]·BASE^(12−m) mod 2^32 over the window ending at i.
        h = (Math.imul(h, BASE) + t[i]) | 0;
        if (i >= a + NGRAM) h = (h - Math.imul(t[i - NGRAM], pow)) | 0;
        const hu = h >>> 0;
        let slot = fmix32(hu) & mask;
        for (;;) {
          const stored = table[slot];
          if (stored === 0) {
            table[slot] = i + 1;
            hashes[slot] = hu;
            break;
          }
          if (hashes[slot] === hu && sameNgram(t, stored - 1, i)) {
            repeats++;
            break;
          }
          slot = (slot + 1) & mask;
        }
      }
    }
    return { repeats, windows };
  }
}

/** How the calculator's ids are laid out: what is one sequence, one stream range, one row. */
interface IdLayout {
  /** Positions (ascending, the first 0) where a sequence begins: 13-grams and EOS-free runs stay inside one. */
  sequences: number[];
  /** Positions (ascending, the first 0) where a contiguous stream range begins… */
  pieces: number[];
  /** …and the stream token just before each (undefined at global offset 0). */
  before: (number | undefined)[];
  /** Positions (ascending, the first 0) where the rows `duplicate_sequences` compares begin. */
  rows: number[];
}

/** One sample of an update through an order, as {@link StatsCalculator.computeSamples} takes it. */
export interface SampleIds {
  /** The sample's input ids: its pieces' ids concatenated, cut to the order's input tokens. */
  ids: Uint32Array;
  /** The pieces those ids came from, in order: global offset of the first token, tokens, and the stream token before it (undefined at offset 0). */
  pieces: { start: number; length: number; before: number | undefined }[];
}

/** True when the 13-grams ending at a and b are equal id for id. */
function sameNgram(t: Uint32Array, a: number, b: number): boolean {
  for (let m = 0; m < NGRAM; m++) if (t[a - m] !== t[b - m]) return false;
  return true;
}

/** Rows (beginning at `rows`, the last ending at the end of `t`) equal to some earlier row, verified element by element. */
function duplicateRows(t: Uint32Array, rows: readonly number[]): number {
  const seen = new Map<number, number[]>();
  let dup = 0;
  const rowAt = (r: number) => t.subarray(rows[r], r + 1 < rows.length ? rows[r + 1] : t.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rowAt(r);
    let h = 0x811c9dc5;
    for (let i = 0; i < row.length; i++) h = Math.imul(h ^ row[i], BASE);
    h = Math.imul(h ^ row.length, BASE);
    const list = seen.get(h);
    if (!list) {
      seen.set(h, [r]);
      continue;
    }
    if (list.some((q) => equalRows(rowAt(q), row))) dup++;
    else list.push(r);
  }
  return dup;
}

function equalRows(a: Uint32Array, b: Uint32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Progress of a multi-update computation. */
export interface StatsProgress {
  /** Updates done so far. */
  done: number;
  /** Updates asked for. */
  total: number;
}

/** Updates read per `TokenStream.read` in {@link computeUpdateStats} (8 × 512 KiB). */
const UPDATES_PER_READ = 8;

/**
 * Statistics for updates `first..last` (inclusive, 0-based), in order. Reads a few updates per
 * read (plus the one token before), computes synchronously per update and yields to the event
 * loop between updates, so a caller on the extension host stays responsive.
 * @param onRecord called with each record as soon as it is ready (streaming output).
 * @throws RangeRequestError for updates outside the stream; DataError on a short read;
 *   CancelledError when `signal` fires.
 */
export async function computeUpdateStats(
  ds: Pick<Dataset, 'schedule' | 'stream' | 'settings'> & Partial<Pick<Dataset, 'format'>>,
  first: number,
  last: number,
  opts: {
    tokenizer?: StatsOptions['tokenizer'];
    signal?: AbortSignal;
    onProgress?: (p: StatsProgress) => void;
    onRecord?: (s: UpdateStats) => void;
    calculator?: StatsCalculator;
  } = {},
): Promise<UpdateStats[]> {
  ds.schedule.checkUpdate(first);
  ds.schedule.checkUpdate(last);
  const { G, L } = ds.schedule;
  const calc =
    opts.calculator ??
    new StatsCalculator({ G, L, eos: ds.settings.eosTokenId, delimiter: documentRuleOf(ds).role, tokenizer: opts.tokenizer });
  const out: UpdateStats[] = [];
  const total = Math.max(0, last - first + 1);
  for (let k0 = first; k0 <= last; k0 += UPDATES_PER_READ) {
    if (opts.signal?.aborted) throw new CancelledError();
    const n = Math.min(UPDATES_PER_READ, last - k0 + 1);
    const from = G * k0 - (k0 > 0 ? 1 : 0);
    const ids = await ds.stream.read(from, G * n + (k0 > 0 ? 1 : 0));
    const base = k0 > 0 ? 1 : 0;
    for (let j = 0; j < n; j++) {
      const k = k0 + j;
      const at = base + j * G;
      const s = calc.compute(k, ids.subarray(at, at + G), at > 0 ? ids[at - 1] : undefined);
      out.push(s);
      opts.onRecord?.(s);
      opts.onProgress?.({ done: k - first + 1, total });
      if (opts.signal?.aborted) throw new CancelledError();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return out;
}

/**
 * What statistics ask of a run's training order: its shape and update k's samples in batch order
 * (the CLI's `TrainingOrder`, the extension's `OrderView`).
 */
export interface StatsOrder extends Pick<TrainingOrder, 'kind' | 'numUpdates' | 'samplesPerUpdate' | 'inputTokens'> {
  update(k: number): OrderSample[] | Promise<OrderSample[]>;
}

/** True when `order` is a run's order (not absent, not the card's sequential one): statistics then follow it. */
export function isRunOrder(order: StatsOrder | undefined): order is StatsOrder {
  return order !== undefined && order.kind !== 'sequential';
}

/**
 * A calculator for updates through `order`: G = `samplesPerUpdate × inputTokens`, L = `inputTokens`,
 * the dataset's EOS and document rule.
 */
export function orderStatsCalculator(
  ds: Pick<Dataset, 'settings'> & Partial<Pick<Dataset, 'format'>>,
  order: Pick<StatsOrder, 'samplesPerUpdate' | 'inputTokens'>,
  tokenizer?: StatsOptions['tokenizer'],
): StatsCalculator {
  return new StatsCalculator({
    G: order.samplesPerUpdate * order.inputTokens,
    L: order.inputTokens,
    eos: ds.settings.eosTokenId,
    delimiter: documentRuleOf(ds).role,
    tokenizer,
  });
}

/**
 * Reads what {@link StatsCalculator.computeSamples} needs of update k's samples: each sample's
 * pieces cut to its first `inputTokens` tokens (the extra target token Megatron and llm.c read is
 * not an input), their ids, and the stream token before each piece (one read per piece, all of
 * the update's reads issued together).
 * @throws DataError on a short read.
 */
export async function readSampleIds(
  ds: Pick<Dataset, 'stream'>,
  samples: readonly OrderSample[],
  inputTokens: number,
): Promise<SampleIds[]> {
  const plans = samples.map((s) => {
    const pieces: SampleIds['pieces'] = [];
    let left = inputTokens;
    for (const p of s.pieces) {
      const length = Math.min(p.end - p.start, left);
      if (length <= 0) break;
      pieces.push({ start: p.start, length, before: undefined });
      left -= length;
    }
    return { pieces, tokens: inputTokens - left };
  });
  const reads = await Promise.all(
    plans.map((plan) =>
      Promise.all(
        plan.pieces.map((p) => {
          const lead = p.start > 0 ? 1 : 0;
          return ds.stream.read(p.start - lead, p.length + lead);
        }),
      ),
    ),
  );
  return plans.map((plan, i) => {
    const ids = new Uint32Array(plan.tokens);
    let at = 0;
    plan.pieces.forEach((p, j) => {
      const got = reads[i][j];
      const lead = p.start > 0 ? 1 : 0;
      if (lead) p.before = got[0];
      ids.set(got.subarray(lead), at);
      at += p.length;
    });
    return { ids, pieces: plan.pieces };
  });
}

/** What statistics read of a dataset: its schedule, stream, EOS setting and format (document rule). */
export type StatsDataset = Pick<Dataset, 'schedule' | 'stream' | 'settings'> & Partial<Pick<Dataset, 'format'>>;

/** Options of {@link statsOfUpdates} and {@link computeRunUpdateStats}. */
export interface RunStatsOptions {
  /** The run's training order; absent or the card's sequential order: the card's statistics. */
  order?: StatsOrder;
  /** For `unknown_ids` / `special_ids`. */
  tokenizer?: StatsOptions['tokenizer'];
  signal?: AbortSignal;
  /** Each record as soon as it is computed. */
  onRecord?: (s: AnyUpdateStats) => void;
  onProgress?: (p: StatsProgress) => void;
}

/**
 * Statistics of the given updates (any list, in the order given), through `order` when it is a
 * run's order ({@link OrderedUpdateStats}), else in the card's sequential order ({@link
 * UpdateStats}, the same values as {@link computeUpdateStats}). One update per read round; yields
 * to the event loop between updates (the training-log overlay asks for updates spread over a run).
 * @throws RangeRequestError for an update outside the run (or the stream); DataError on a short
 *   read or an inconsistent order; CancelledError when `signal` fires.
 */
export async function statsOfUpdates(ds: StatsDataset, updates: readonly number[], opts: RunStatsOptions = {}): Promise<AnyUpdateStats[]> {
  const order = isRunOrder(opts.order) ? opts.order : undefined;
  for (const k of updates) {
    if (order) checkOrderUpdate(order, k);
    else ds.schedule.checkUpdate(k);
  }
  const calc = order
    ? orderStatsCalculator(ds, order, opts.tokenizer)
    : new StatsCalculator({
        G: ds.schedule.G,
        L: ds.schedule.L,
        eos: ds.settings.eosTokenId,
        delimiter: documentRuleOf(ds).role,
        tokenizer: opts.tokenizer,
      });
  const out: AnyUpdateStats[] = [];
  for (const k of updates) {
    if (opts.signal?.aborted) throw new CancelledError();
    let s: AnyUpdateStats;
    if (order) {
      const samples = await readSampleIds(ds, await order.update(k), order.inputTokens);
      s = calc.computeSamples(k, order.kind, samples);
    } else {
      const G = ds.schedule.G;
      const ids = await ds.stream.read(k > 0 ? G * k - 1 : 0, G + (k > 0 ? 1 : 0));
      s = k > 0 ? calc.compute(k, ids.subarray(1), ids[0]) : calc.compute(k, ids, undefined);
    }
    out.push(s);
    opts.onRecord?.(s);
    opts.onProgress?.({ done: out.length, total: updates.length });
    if (opts.signal?.aborted) throw new CancelledError();
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return out;
}

/**
 * Statistics for updates `first..last` (inclusive) of the run in force: through `order` when it
 * is a run's order, else {@link computeUpdateStats} (the card's sequential order, its numbers unchanged).
 * @throws as {@link computeUpdateStats} / {@link statsOfUpdates}.
 */
export function computeRunUpdateStats(
  ds: StatsDataset,
  first: number,
  last: number,
  opts: RunStatsOptions = {},
): Promise<AnyUpdateStats[]> {
  if (!isRunOrder(opts.order)) return computeUpdateStats(ds, first, last, opts);
  checkOrderUpdate(opts.order, first);
  checkOrderUpdate(opts.order, last);
  const updates = Array.from({ length: Math.max(0, last - first + 1) }, (_, i) => first + i);
  return statsOfUpdates(ds, updates, opts);
}

/** CSV header of {@link statsToCsvRow} through a run's order: `update,tokens,ranges,` then {@link STAT_COLUMNS}. */
export const ORDERED_STATS_CSV_HEADER = ['update', 'tokens', 'ranges', ...STAT_COLUMNS].join(',');

/** CSV header of {@link statsToCsvRow}: `update,token_start,token_end,` then {@link STAT_COLUMNS}. */
export const STATS_CSV_HEADER = ['update', 'token_start', 'token_end', ...STAT_COLUMNS].join(',');

/**
 * One CSV row (no newline): numbers as JavaScript prints them, null as an empty field; under
 * {@link STATS_CSV_HEADER}, or {@link ORDERED_STATS_CSV_HEADER} for a record through a run's order.
 */
export function statsToCsvRow(s: AnyUpdateStats): string {
  const lead = 'token_range' in s ? [s.token_range[0], s.token_range[1]] : [s.tokens, s.ranges];
  return [s.update, ...lead, ...STAT_COLUMNS.map((c) => statValue(s, c) ?? '')].join(',');
}

/** Median of finite values (NaN for none). */
export function median(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/**
 * Robust z-scores of a column: `(x − median) / (1.4826 · MAD)`, MAD = median of `|x − median|`
 * (1.4826 makes MAD estimate σ for normal data). When MAD is 0 (most values equal), values equal
 * to the median score 0 and others ±Infinity. Nulls stay null.
 */
export function robustZ(values: (number | null)[]): (number | null)[] {
  const xs = values.filter((x): x is number => x !== null);
  const med = median(xs);
  const mad = median(xs.map((x) => Math.abs(x - med))) * 1.4826;
  return values.map((x) => {
    if (x === null) return null;
    if (x === med) return 0;
    return mad > 0 ? (x - med) / mad : x > med ? Infinity : -Infinity;
  });
}

/** A range of updates typed as `K` or `K1..K2` (inclusive, 0-based). */
export interface UpdateRangeArg {
  first: number;
  last: number;
}

/**
 * Parses `K` or `K1..K2` (numbers in the CLI's forms: 55_000, 5.5e4, 0x…).
 * @throws RangeRequestError naming the text when it is not such a range or K2 < K1.
 */
export function parseUpdateRange(text: string | undefined): UpdateRangeArg {
  if (text === undefined) throw new RangeRequestError('missing the updates: K or K1..K2 (0-based, inclusive)');
  const parts = text.split('..');
  if (parts.length > 2 || parts.some((p) => p.trim() === ''))
    throw new RangeRequestError(`${JSON.stringify(text)} is not an update range; expected K or K1..K2 (0-based, inclusive)`);
  // "3-6", "3:6", "3–6": a range written another way; say how ranges are written.
  const other = parts.length === 1 ? /^\s*(\d[\d_]*)\s*(-|:|–|—|\.\.\.)\s*(\d[\d_]*)\s*$/.exec(text) : null;
  if (other)
    throw new RangeRequestError(
      `${JSON.stringify(text)} is not an update range: ranges are written K1..K2 (0-based, inclusive), e.g. ${other[1]}..${other[3]}`,
    );
  const nums = parts.map((p) => {
    const r = parseNumberInput(p.trim());
    if (!r.ok)
      throw new RangeRequestError(
        parts.length === 1
          ? `${JSON.stringify(text)}: ${r.error}; expected K or K1..K2 (0-based, inclusive)`
          : `${JSON.stringify(p)} in ${JSON.stringify(text)}: ${r.error}`,
      );
    return r.value;
  });
  const first = nums[0],
    last = nums[nums.length - 1];
  if (last < first)
    throw new RangeRequestError(`${JSON.stringify(text)}: the last update (${fmt(last)}) comes before the first (${fmt(first)})`);
  return { first, last };
}

/** Short header and exact definition of each column (the panels' headers and tooltips; the README repeats them). */
export const STAT_DEFINITIONS: Record<StatColumn, { label: string; definition: string }> = {
  eos: { label: 'EOS', definition: "EOS ids among the update's G input tokens" },
  documents_started: {
    label: 'docs started',
    definition:
      "tokens that are the first token of a document: the stream's first token, or a token right after an EOS (the token before the update counts for its first token)",
  },
  distinct_tokens: { label: 'distinct ids', definition: 'distinct ids among the G tokens' },
  max_id: { label: 'max id', definition: 'largest id among the G tokens' },
  unknown_ids: {
    label: 'unknown ids',
    definition: 'tokens whose id has no token in the tokenizer (≥ vocabulary size, or a hole); empty without a tokenizer',
  },
  special_ids: {
    label: 'special ids',
    definition: 'tokens holding an added token marked special other than EOS (pad, FIM, …); empty without a tokenizer',
  },
  longest_eos_free_run: { label: 'longest EOS-free run', definition: 'longest run of consecutive non-EOS tokens inside the G tokens' },
  duplicate_sequences: { label: 'duplicate seqs', definition: 'rows of x (S × L) equal to an earlier row of the same update' },
  top_token_id: { label: 'top id', definition: 'the most frequent id among the G tokens (lowest id on a tie)' },
  top_token_count: { label: 'top count', definition: 'how often the most frequent id occurs' },
  repeated_13grams: {
    label: 'repeated 13-grams',
    definition: 'positions i ≥ 12 whose 13-gram of ids ending at i already occurred ending at an earlier position of the same update',
  },
  repeat_13gram_share: {
    label: '13-gram repeat share',
    definition: 'repeated 13-grams / (G − 12): the share of positions that end a 13-gram inside the update',
  },
  complete_documents: { label: 'complete docs', definition: 'documents that start and end (EOS) inside the update' },
  mean_complete_document_length: {
    label: 'mean doc length',
    definition: 'mean length in tokens (EOS included) of the complete documents; empty when none',
  },
};
