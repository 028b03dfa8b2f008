/**
 * The dataset card's order (`schedule.ts`): training read the stream strictly in order, update k
 * is tokens `[G·k, G·(k+1))`, its sequence r is `[G·k + L·r, G·k + L·(r+1))` and its targets the
 * same range shifted by one, so the trainer read `L + 1` tokens per sequence (the last one a
 * target only, also the next sequence's first input).
 */
import { Schedule } from '../schedule';
import { fmt } from '../units';
import { OrderRead, OrderSample, TrainingOrder, checkOrderUpdate } from './order';

/** {@link TrainingOrder} of the card's schedule (the default when a dataset has no run description). */
export class SequentialOrder implements TrainingOrder {
  readonly kind = 'sequential' as const;
  readonly numUpdates: number;
  readonly samplesPerUpdate: number;
  readonly sampleTokens: number;
  readonly inputTokens: number;
  readonly description: string;

  constructor(readonly schedule: Schedule) {
    this.numUpdates = schedule.numUpdates;
    this.samplesPerUpdate = schedule.sequencesPerUpdate;
    this.inputTokens = schedule.L;
    this.sampleTokens = schedule.L + 1;
    this.description = `sequential (the dataset card's order): ${fmt(schedule.G)} tokens per update, ${fmt(schedule.L)} per sequence`;
  }

  update(k: number): OrderSample[] {
    checkOrderUpdate(this, k);
    const out: OrderSample[] = [];
    for (let r = 0; r < this.samplesPerUpdate; r++) {
      const [start, end] = this.schedule.sequenceRange(k, r);
      out.push({ slot: r, sample: r, pieces: [{ start, end: end + 1 }] });
    }
    return out;
  }

  reads(offset: number): OrderRead[] {
    const out: OrderRead[] = [];
    const p = this.schedule.position(offset);
    if (p.update !== undefined && p.sequence !== undefined && p.position !== undefined) {
      out.push({ update: p.update, slot: p.sequence, sample: p.sequence, position: p.position, target: false });
    }
    // The last token of the previous sequence's read: its target only.
    if (offset >= 1) {
      const q = this.schedule.position(offset - 1);
      if (q.update !== undefined && q.sequence !== undefined && q.position === this.inputTokens - 1) {
        out.unshift({ update: q.update, slot: q.sequence, sample: q.sequence, position: this.inputTokens, target: true });
      }
    }
    return out;
  }

  close(): void {}
}
