/**
 * `worker_threads` entry that holds a run's training order off the calling thread, built by
 * esbuild to `dist/workers/orderWorker.js` and driven by {@link OrderClient}
 * (`src/core/order/orderClient.ts`). It opens the order from an {@link OrderSpec} (`workerData`),
 * builds its inverse once (for a Megatron run of 25M samples that takes seconds: the reason this
 * runs in a worker; the inverse lands in the order cache), then answers `update` and `reads`
 * requests. Cancellation: the parent terminates the worker.
 */
import { parentPort, workerData } from 'worker_threads';
import { openOrderSpec, OrderSpec } from '../order/openOrder';
import type { OrderRead, OrderSample, TrainingOrder } from '../order/order';

/** The order's scalar facts, sent once it is open and its inverse is built. */
export interface OrderFacts {
  kind: TrainingOrder['kind'];
  numUpdates: number;
  samplesPerUpdate: number;
  sampleTokens: number;
  inputTokens: number;
  description: string;
}

/** One question to the order: update k's samples, or the reads of some offsets. */
export type OrderQuestion = { method: 'update'; k: number } | { method: 'reads'; offsets: number[] };
/** Parent → worker: a question and its id. */
export type OrderWorkerRequest = OrderQuestion & { id: number };

/** Worker → parent. */
export type OrderWorkerReply =
  | { type: 'open'; facts: OrderFacts }
  | { type: 'openError'; message: string; file?: string }
  | { type: 'update'; id: number; samples: OrderSample[] }
  | { type: 'reads'; id: number; reads: OrderRead[][] }
  | { type: 'error'; id: number; message: string; file?: string };

const post = (m: OrderWorkerReply) => parentPort!.postMessage(m);
const fileOf = (err: unknown): string | undefined => (err as { file?: unknown }).file as string | undefined;

async function main(): Promise<void> {
  let order: TrainingOrder;
  try {
    order = await openOrderSpec(workerData as OrderSpec);
    // Build (or load) the inverse now, while the parent shows progress: later reads are cheap.
    order.reads(0);
  } catch (err) {
    post({ type: 'openError', message: (err as Error).message, file: fileOf(err) });
    return;
  }
  const { kind, numUpdates, samplesPerUpdate, sampleTokens, inputTokens, description } = order;
  post({ type: 'open', facts: { kind, numUpdates, samplesPerUpdate, sampleTokens, inputTokens, description } });
  parentPort!.on('message', (m: OrderWorkerRequest) => {
    try {
      if (m.method === 'update') post({ type: 'update', id: m.id, samples: order.update(m.k) });
      else post({ type: 'reads', id: m.id, reads: m.offsets.map((o) => order.reads(o)) });
    } catch (err) {
      post({ type: 'error', id: m.id, message: (err as Error).message, file: fileOf(err) });
    }
  });
}

void main();
