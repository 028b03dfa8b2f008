/**
 * The training schedule, per the dataset card: training read the stream strictly in order,
 * `G = global_tokens_per_update` tokens per optimizer update, split into `G / L` sequences of
 * `L = sequence_length` tokens. Update `k` (**0-based**) trained on global tokens
 * `[G·k, G·(k+1))`; its sequence `r` is `[G·k + L·r, G·k + L·(r+1))`; the targets are the same
 * range shifted by one token, which is why one extra (look-ahead) token is stored. Hence the
 * stream holds `floor((storedTokens − 1) / G)` updates.
 *
 * "Step k" in training logs is ambiguous (a checkpoint after k updates has seen updates
 * 0..k−1); everything here says "update" and means the 0-based index.
 */
import { RangeRequestError } from './errors';
import { fmt } from './units';

/** Defaults from the dataset card. */
export const DEFAULT_SCHEDULE = {
  /** Tokens per update: 128 sequences × 1,024 tokens. */
  globalTokensPerUpdate: 131_072,
  /** Input tokens per sequence (without the target token). */
  sequenceLength: 1024,
  /** `<|endoftext|>` in dolma2. */
  eosTokenId: 100_257,
} as const;

/**
 * Largest G accepted (tokens per update): 16,777,216 = 2^24, 128× the dataset card's 131,072. One
 * update's ids then take at most 64 MiB, so every update-sized read stays far below the CLI's
 * 300 MB memory budget.
 */
export const MAX_TOKENS_PER_UPDATE = 16_777_216;
/**
 * Largest L accepted (tokens per sequence): 1,048,576 = 2^20. One sequence is the unit the update
 * view and the CLI's text form decode at once, so this bounds their memory (a row of 2^20 tokens
 * is ~4 MB of ids and a few MB of text).
 */
export const MAX_SEQUENCE_LENGTH = 1_048_576;
/** Largest EOS id: tokens are uint32. */
export const MAX_EOS_ID = 0xffff_ffff;

/**
 * Why one schedule value is not acceptable, or undefined when it is: G and L positive integers
 * with G ≤ {@link MAX_TOKENS_PER_UPDATE} and L ≤ {@link MAX_SEQUENCE_LENGTH}, the EOS id an
 * integer 0..2^32−1.
 */
export function scheduleValueFault(key: keyof ScheduleSettings, v: unknown): string | undefined {
  if (key === 'eosTokenId') {
    return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_EOS_ID
      ? undefined
      : `${show(v)} is not a token id (an integer 0..${fmt(MAX_EOS_ID)})`;
  }
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) return `${show(v)} is not a positive integer`;
  if (v > MAX_TOKENS_PER_UPDATE) return `${fmt(v)} is more than ${fmt(MAX_TOKENS_PER_UPDATE)} tokens (the largest update this tool reads)`;
  if (key === 'sequenceLength' && v > MAX_SEQUENCE_LENGTH)
    return `${fmt(v)} is more than ${fmt(MAX_SEQUENCE_LENGTH)} tokens (the longest sequence this tool reads)`;
  return undefined;
}

/**
 * Checks a set of schedule values (any subset), naming each by `name(key)` (a flag, a setting, a
 * file's key): each value per {@link scheduleValueFault}, and, when both G and L are given, that L
 * divides G. @returns one sentence per fault (empty when all is well).
 */
export function scheduleFaults(s: Partial<Record<keyof ScheduleSettings, unknown>>, name: (k: keyof ScheduleSettings) => string): string[] {
  const out: string[] = [];
  for (const k of ['globalTokensPerUpdate', 'sequenceLength', 'eosTokenId'] as const) {
    if (s[k] === undefined) continue;
    const f = scheduleValueFault(k, s[k]);
    if (f) out.push(`${name(k)}: ${f}`);
  }
  const G = s.globalTokensPerUpdate,
    L = s.sequenceLength;
  if (out.length === 0 && typeof G === 'number' && typeof L === 'number' && G % L !== 0) {
    out.push(`${name('globalTokensPerUpdate')} ${fmt(G)} is not a multiple of ${name('sequenceLength')} ${fmt(L)}`);
  }
  return out;
}

function show(v: unknown): string {
  const t = JSON.stringify(v) ?? String(v);
  return t.length > 40 ? `${t.slice(0, 37)}…` : t;
}

/** Schedule parameters (all in tokens, except the id). */
export interface ScheduleSettings {
  globalTokensPerUpdate: number;
  sequenceLength: number;
  eosTokenId: number;
}

/** A global token offset expressed in training terms. */
export interface SchedulePosition {
  /** 0-based update index; `undefined` for the look-ahead token(s) past the last update. */
  update?: number;
  /** 0-based sequence within the update. */
  sequence?: number;
  /** 0-based position within the sequence. */
  position?: number;
  /**
   * True for tokens after the last full update (the look-ahead token and any remainder); which of
   * the two a token is: {@link Schedule.pastLastUpdate}.
   */
  lookAhead: boolean;
}

/**
 * What a token after the last whole update is: `lookAhead` — the ONE look-ahead token at
 * `G · numUpdates`, the target of the last update's last position (the dataset card's
 * `tokens(root, G*k, G+1)` reads it); `untrained` — any token after it, which no update reads.
 */
export type PastLastUpdate = 'lookAhead' | 'untrained';

/** Words for {@link PastLastUpdate} in running text (cursor line, hover, tooltip, messages). */
export const PAST_LAST_UPDATE_TEXT: Record<PastLastUpdate, string> = {
  lookAhead: "look-ahead token (the target of the last update's last position)",
  untrained: 'after the last update (not trained)',
};

/** Short words for {@link PastLastUpdate} (status bar). */
export const PAST_LAST_UPDATE_SHORT: Record<PastLastUpdate, string> = {
  lookAhead: 'look-ahead',
  untrained: 'not trained',
};

/** Maps between updates, sequences and global token ranges for a stream of a given length. */
export class Schedule {
  /** Sequences per update: `G / L`. */
  readonly sequencesPerUpdate: number;
  /** Number of updates the stream holds: `floor((storedTokens − 1) / G)` (needs one look-ahead token). */
  readonly numUpdates: number;

  /**
   * @param settings G, L, EOS (G must be a multiple of L).
   * @param storedTokens tokens in the whole stream, look-ahead token included.
   * @throws RangeRequestError when G is not a positive multiple of L.
   */
  constructor(
    readonly settings: ScheduleSettings,
    readonly storedTokens: number,
  ) {
    const { globalTokensPerUpdate: G, sequenceLength: L } = settings;
    if (!(G > 0 && L > 0 && G % L === 0)) {
      throw new RangeRequestError(`tokens per update (${fmt(G)}) must be a positive multiple of the sequence length (${fmt(L)})`);
    }
    if (!Number.isSafeInteger(G) || G > MAX_TOKENS_PER_UPDATE) {
      throw new RangeRequestError(`tokens per update (${fmt(G)}) is more than ${fmt(MAX_TOKENS_PER_UPDATE)}`);
    }
    if (L > MAX_SEQUENCE_LENGTH) {
      throw new RangeRequestError(`the sequence length (${fmt(L)}) is more than ${fmt(MAX_SEQUENCE_LENGTH)}`);
    }
    this.sequencesPerUpdate = G / L;
    this.numUpdates = storedTokens > 0 ? Math.max(0, Math.floor((storedTokens - 1) / G)) : 0;
  }

  /** Tokens per update (G). */
  get G(): number {
    return this.settings.globalTokensPerUpdate;
  }
  /** Tokens per sequence (L). */
  get L(): number {
    return this.settings.sequenceLength;
  }

  /**
   * Global token range of update `k`: `[G·k, G·(k+1))` (end exclusive, targets need `end + 1`).
   * @throws RangeRequestError unless `0 ≤ k < numUpdates` and k is an integer.
   */
  updateRange(k: number): [number, number] {
    this.checkUpdate(k);
    return [this.G * k, this.G * (k + 1)];
  }

  /**
   * Global token range of sequence `r` of update `k`: `[G·k + L·r, G·k + L·(r+1))`.
   * @throws RangeRequestError for an invalid k or r.
   */
  sequenceRange(k: number, r: number): [number, number] {
    this.checkUpdate(k);
    if (!Number.isInteger(r) || r < 0 || r >= this.sequencesPerUpdate) {
      throw new RangeRequestError(`sequence ${r} is outside 0..${this.sequencesPerUpdate - 1}`);
    }
    const s = this.G * k + this.L * r;
    return [s, s + this.L];
  }

  /** Update, sequence and position of a global token offset (no range check beyond ≥ 0). */
  position(offset: number): SchedulePosition {
    const update = Math.floor(offset / this.G);
    if (update >= this.numUpdates) return { lookAhead: true };
    const within = offset - update * this.G;
    return { update, sequence: Math.floor(within / this.L), position: within % this.L, lookAhead: false };
  }

  /**
   * For a global token offset after the last whole update: whether it is the look-ahead token
   * (offset `G · numUpdates`, read as the last target when there is at least one update) or an
   * untrained token after it. Undefined for offsets inside an update.
   */
  pastLastUpdate(offset: number): PastLastUpdate | undefined {
    if (!this.position(offset).lookAhead) return undefined;
    return this.numUpdates > 0 && offset === this.numUpdates * this.G ? 'lookAhead' : 'untrained';
  }

  /**
   * Validates an update index.
   * @throws RangeRequestError naming the valid range.
   */
  checkUpdate(k: number): void {
    if (!Number.isInteger(k) || k < 0 || k >= this.numUpdates) {
      throw new RangeRequestError(
        this.numUpdates === 0
          ? `the stream holds no complete update: it has ${fmt(this.storedTokens)} tokens and one update needs ${fmt(this.G + 1)} (${fmt(this.G)} tokens per update plus the look-ahead token)`
          : `update ${k} is outside 0..${fmt(this.numUpdates - 1)} (updates are 0-based)`,
      );
    }
  }
}

/** Describes "update k" unambiguously for UI text: "update 55,000 (0-based; the 55,001st update)". */
export function describeUpdate(k: number): string {
  const n = k + 1;
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `update ${fmt(k)} (0-based; the ${fmt(n)}${suffix} update)`;
}
