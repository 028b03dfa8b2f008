/**
 * llm.c's order (karpathy/llm.c commit f1e2ace651495b74ae22d45d1723443fd00ecd3a, `llmc/dataloader.h`
 * lines 61–229, `train_gpt2.cu` lines 1602–1604 and 1828–1831).
 *
 * Each of P processes runs its own DataLoader over the same shards (glob order). A shard of n
 * tokens holds `floor((n − 1) / (P·B·T))` batches (line 95: one token kept back for the last
 * target); batch i of process r is the `B·T + 1` tokens at `i·P·B·T + r·B·T` of the shard
 * (`dataloader_load_batch`, lines 203–220), i.e. B rows of T inputs, row b reading tokens
 * `[b·T, b·T + T]` (its targets are the next token). When a shard's batches are used up the next
 * shard begins (`dataloader_advance_`), after the last one the loader starts a new epoch
 * (`dataloader_reset`). With shuffling on (the train loader, unless overfitting a single batch),
 * each process seeds its own MT19937 with `42 + rank` (line 172) and, per epoch, permutes the shard
 * order in place (it carries over from the previous epoch, line 115) and, per shard, the batch order
 * inside it (`prepare_intra_shard_indices_`, lines 99–108), all with `random_permutation`.
 *
 * An optimizer step runs `grad_accum_steps` micro-steps, each process fetching one batch per
 * micro-step. Slot numbering inside a step: micro-step a, process r, row b → `(a·P + r)·B + b`.
 */
import { DataError, RangeRequestError } from '../errors';
import { fmt } from '../units';
import { Mt19937, llmcRandomPermutation } from './rng';
import {
  InputSpan,
  OrderRead,
  OrderSample,
  StreamFile,
  TrainingOrder,
  checkOrderUpdate,
  fileAt,
  inputUpdates,
  lastAtOrBelow,
} from './order';

/** How an {@link LlmcOrder} is set up. */
export interface LlmcOrderOptions {
  /** The shards in glob order. */
  files: StreamFile[];
  /** Rows per process per micro-step. */
  B: number;
  /** Tokens per row (inputs). */
  T: number;
  /** Data-parallel processes. */
  processes: number;
  /** `permute_train_loader` (default true, as train_gpt2.cu's train loader). */
  shuffle?: boolean;
  /** Micro-steps per optimizer step (`total_batch_size / (B·T·P)`), default 1. */
  gradAccumSteps?: number;
  /** Optimizer steps trained; default: one epoch's worth of whole steps. */
  steps?: number;
}

/** One process's epoch: shard order, micro-step start per slot, batch per micro-step, and its inverse. */
interface EpochPlan {
  shardOrder: Uint32Array;
  slotStart: Float64Array;
  batch: Uint32Array;
  /** Micro-step inside the epoch of (shard f, batch i), at `fileBase[f] + i`. */
  inverse: Uint32Array;
}

/** {@link TrainingOrder} of an llm.c run (see the module comment). */
export class LlmcOrder implements TrainingOrder {
  readonly kind = 'llm.c' as const;
  readonly numUpdates: number;
  readonly samplesPerUpdate: number;
  readonly sampleTokens: number;
  readonly inputTokens: number;
  readonly description: string;
  /** Micro-steps in one epoch (the same for every process). */
  readonly epochMicroSteps: number;
  private readonly batches: number[];
  private readonly fileBase: number[];
  private readonly stride: number;
  private readonly A: number;
  private readonly shuffle: boolean;
  private readonly plans: EpochPlan[][] = [];
  private readonly rngs: Mt19937[] = [];
  private readonly shardIndices: Uint32Array[] = [];

  /** @throws DataError naming a shard too short for one batch (llm.c asserts it); RangeRequestError for bad B, T, P or steps. */
  constructor(private readonly o: LlmcOrderOptions) {
    const { B, T, processes: P } = o;
    for (const [k, v] of Object.entries({ B, T, processes: P, grad_accum_steps: o.gradAccumSteps ?? 1 })) {
      if (!(Number.isSafeInteger(v) && v >= 1)) throw new RangeRequestError(`${k} ${v} is not a positive integer`);
    }
    this.A = o.gradAccumSteps ?? 1;
    this.shuffle = o.shuffle ?? true;
    this.stride = P * B * T;
    this.batches = o.files.map((f) => {
      if (f.tokens < this.stride + 1) {
        throw new DataError(
          `${f.name}: ${fmt(f.tokens)} tokens, fewer than one batch of all processes needs (P·B·T + 1 = ${fmt(this.stride + 1)}); llm.c refuses such a shard`,
          f.name,
        );
      }
      return Math.floor((f.tokens - 1) / this.stride);
    });
    this.fileBase = [0];
    for (const n of this.batches) this.fileBase.push(this.fileBase[this.fileBase.length - 1] + n);
    this.epochMicroSteps = this.fileBase[this.batches.length];
    const oneEpoch = Math.floor(this.epochMicroSteps / this.A);
    if (o.steps !== undefined && !(Number.isSafeInteger(o.steps) && o.steps >= 0))
      throw new RangeRequestError(`steps ${o.steps} is not a non-negative integer`);
    this.numUpdates = o.steps ?? oneEpoch;
    this.samplesPerUpdate = this.A * P * B;
    this.inputTokens = T;
    this.sampleTokens = T + 1;
    this.description = `llm.c: ${P} process${P === 1 ? '' : 'es'} × B ${B} × T ${T}, ${this.A} micro-step${this.A === 1 ? '' : 's'} per step, shuffle ${this.shuffle ? 'on' : 'off'}, ${fmt(this.numUpdates)} steps (${fmt(oneEpoch)} per epoch)`;
  }

  /** Process r's plan for epoch e (epochs before it are drawn first: the RNG runs on). */
  private plan(r: number, e: number): EpochPlan {
    if (!this.shuffle) {
      this.plans[0] ??= [this.makePlan(Uint32Array.from(this.batches.keys()), undefined)];
      return this.plans[0][0];
    }
    const plans = (this.plans[r] ??= []);
    if (!this.rngs[r]) {
      this.rngs[r] = new Mt19937(42 + r);
      this.shardIndices[r] = Uint32Array.from(this.batches.keys());
    }
    while (plans.length <= e) {
      llmcRandomPermutation(this.rngs[r], this.shardIndices[r]);
      plans.push(this.makePlan(this.shardIndices[r].slice(), this.rngs[r]));
    }
    return plans[e];
  }

  private makePlan(shardOrder: Uint32Array, rng: Mt19937 | undefined): EpochPlan {
    const F = shardOrder.length;
    const slotStart = new Float64Array(F + 1);
    const batch = new Uint32Array(this.epochMicroSteps);
    const inverse = new Uint32Array(this.epochMicroSteps);
    let m = 0;
    for (let s = 0; s < F; s++) {
      slotStart[s] = m;
      const f = shardOrder[s];
      const n = this.batches[f];
      const intra = batch.subarray(m, m + n);
      for (let i = 0; i < n; i++) intra[i] = i;
      if (rng) llmcRandomPermutation(rng, intra);
      for (let j = 0; j < n; j++) inverse[this.fileBase[f] + intra[j]] = m + j;
      m += n;
    }
    slotStart[F] = m;
    return { shardOrder, slotStart, batch, inverse };
  }

  /** The shard and batch process r reads at micro-step m (0-based over the whole run). */
  private batchAt(r: number, m: number): { file: number; batch: number } {
    const e = Math.floor(m / this.epochMicroSteps);
    const w = m - e * this.epochMicroSteps;
    const p = this.plan(r, e);
    let lo = lastAtOrBelow(p.shardOrder.length, (s) => p.slotStart[s], w);
    while (p.slotStart[lo + 1] <= w) lo++;
    return { file: p.shardOrder[lo], batch: p.batch[w] };
  }

  update(k: number): OrderSample[] {
    checkOrderUpdate(this, k);
    const { B, T, processes: P } = this.o;
    const out: OrderSample[] = [];
    for (let a = 0; a < this.A; a++) {
      for (let r = 0; r < P; r++) {
        const { file, batch } = this.batchAt(r, k * this.A + a);
        const at = this.o.files[file].start + batch * this.stride + r * B * T;
        for (let b = 0; b < B; b++) {
          const start = at + b * T;
          out.push({ slot: (a * P + r) * B + b, sample: batch, process: r, row: b, file, pieces: [{ start, end: start + T + 1 }] });
        }
      }
    }
    return out;
  }

  reads(offset: number): OrderRead[] {
    const f = fileAt(this.o.files, offset);
    if (f < 0) return [];
    const { B, T, processes: P } = this.o;
    const BT = B * T;
    const local = offset - this.o.files[f].start;
    const totalMicro = this.numUpdates * this.A;
    const epochs = Math.ceil(totalMicro / this.epochMicroSteps);
    const out: OrderRead[] = [];
    for (let r = 0; r < P; r++) {
      const rel = local - r * BT;
      if (rel < 0) continue;
      const i0 = Math.floor(rel / this.stride);
      for (const i of [i0 - 1, i0]) {
        const pos = rel - i * this.stride;
        if (i < 0 || i >= this.batches[f] || pos > BT) continue;
        const rows: [number, number][] = [];
        if (pos % T === 0 && pos > 0) rows.push([pos / T - 1, T]);
        if (pos < BT) rows.push([Math.floor(pos / T), pos % T]);
        for (let e = 0; e < epochs; e++) {
          const m = e * this.epochMicroSteps + this.plan(r, e).inverse[this.fileBase[f] + i];
          if (m >= totalMicro) continue;
          const update = Math.floor(m / this.A);
          const a = m - update * this.A;
          for (const [row, position] of rows) {
            out.push({ update, slot: (a * P + r) * B + row, sample: i, position, target: position === T, process: r, row });
          }
        }
      }
    }
    return out.sort((x, y) => x.update - y.update || x.slot - y.slot);
  }

  /**
   * The updates reading token `offset` as an input (as {@link inputUpdates}) and for how many
   * tokens they stay the same: every row of every process starts at a multiple of T in its file
   * (`batch·B·T·P + r·B·T + b·T`), so the rows holding a token as an input are the same up to the
   * next multiple of T (or the file's end).
   */
  inputSpan(offset: number): InputSpan {
    const f = fileAt(this.o.files, offset);
    if (f < 0) return { updates: [], tokens: 1 };
    const T = this.o.T;
    const local = offset - this.o.files[f].start;
    return { updates: inputUpdates(this, offset), tokens: Math.min(T - (local % T), this.o.files[f].tokens - local) };
  }

  close(): void {}
}
