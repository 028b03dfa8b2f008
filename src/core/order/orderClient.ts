/**
 * A training order asked asynchronously: the one interface the extension's views use for
 * "update k" ({@link OrderView}). The card's sequential order answers in the calling thread
 * ({@link LocalOrderView}: it is arithmetic); a run's order (Megatron, OLMo, llm.c) lives in a
 * worker thread ({@link OrderClient}, `src/core/workers/orderWorker.ts`), because opening it can
 * build an inverse permutation of millions of samples, which must not block the extension host.
 *
 * Units as in `order.ts`: global token offsets, 0-based updates and samples.
 */
import { Worker } from 'worker_threads';
import { CancelledError, DataError } from '../errors';
import { resolveWorkerScript } from '../shardPool';
import type { OrderFacts, OrderQuestion, OrderWorkerReply, OrderWorkerRequest } from '../workers/orderWorker';
import type { OrderSpec } from './openOrder';
import type { OrderRead, OrderSample, TrainingOrder } from './order';

export type { OrderFacts };

/** A training order whose questions are answered asynchronously (see the module comment). */
export interface OrderView extends OrderFacts {
  /** What reopens the order in another thread (search workers), or undefined for the card's sequential order. */
  readonly spec?: OrderSpec;
  /**
   * Update k's samples in batch order (`TrainingOrder.update`).
   * @throws RangeRequestError/DataError (for a worker: a DataError carrying the worker's message).
   */
  update(k: number): Promise<OrderSample[]>;
  /** For each offset, every reading by the run (`TrainingOrder.reads`), sorted by update. */
  reads(offsets: number[]): Promise<OrderRead[][]>;
  /** Ends the worker (or closes the order's files). */
  close(): void;
}

/** The facts of an order. */
export function factsOf(o: TrainingOrder): OrderFacts {
  return {
    kind: o.kind,
    numUpdates: o.numUpdates,
    samplesPerUpdate: o.samplesPerUpdate,
    sampleTokens: o.sampleTokens,
    inputTokens: o.inputTokens,
    description: o.description,
  };
}

/** An order answered in the calling thread (the card's sequential order: no files, no inverse). */
export class LocalOrderView implements OrderView {
  readonly kind: OrderFacts['kind'];
  readonly numUpdates: number;
  readonly samplesPerUpdate: number;
  readonly sampleTokens: number;
  readonly inputTokens: number;
  readonly description: string;
  constructor(
    private readonly order: TrainingOrder,
    readonly spec?: OrderSpec,
  ) {
    ({
      kind: this.kind,
      numUpdates: this.numUpdates,
      samplesPerUpdate: this.samplesPerUpdate,
      sampleTokens: this.sampleTokens,
      inputTokens: this.inputTokens,
      description: this.description,
    } = factsOf(order));
  }
  update(k: number): Promise<OrderSample[]> {
    return Promise.resolve().then(() => this.order.update(k));
  }
  reads(offsets: number[]): Promise<OrderRead[][]> {
    return Promise.resolve(offsets.map((o) => this.order.reads(o)));
  }
  close(): void {
    this.order.close();
  }
}

/** Name of the worker script in `dist/workers/`. */
const ORDER_WORKER_FILE = 'orderWorker.js';

/** An order held by a worker thread (see the module comment). */
export class OrderClient implements OrderView {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve(r: OrderWorkerReply): void; reject(e: Error): void }>();
  private failure?: Error;

  private constructor(
    private readonly worker: Worker,
    readonly spec: OrderSpec,
    private readonly facts: OrderFacts,
  ) {
    worker.on('message', (m: OrderWorkerReply) => {
      if (!('id' in m)) return;
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.type === 'error') p?.reject(new DataError(m.message, m.file));
      else p?.resolve(m);
    });
    const fail = (err: Error) => {
      this.failure = err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.on('error', (err) => fail(new Error(`training-order worker failed: ${err.message}`)));
    worker.on('exit', (code) => fail(new Error(`training-order worker exited (code ${code})`)));
  }

  get kind(): OrderFacts['kind'] {
    return this.facts.kind;
  }
  get numUpdates(): number {
    return this.facts.numUpdates;
  }
  get samplesPerUpdate(): number {
    return this.facts.samplesPerUpdate;
  }
  get sampleTokens(): number {
    return this.facts.sampleTokens;
  }
  get inputTokens(): number {
    return this.facts.inputTokens;
  }
  get description(): string {
    return this.facts.description;
  }

  /**
   * Opens `spec` in a new worker and waits until its inverse is built.
   * @param workerFile the worker script (default: found like the other workers, `dist/workers/orderWorker.js`).
   * @throws DataError with the order's one-line message (naming the run file and field, or an
   *   index file); CancelledError when `signal` fires (the worker is terminated).
   */
  static async open(spec: OrderSpec, opts: { signal?: AbortSignal; workerFile?: string } = {}): Promise<OrderClient> {
    const file = resolveWorkerScript(ORDER_WORKER_FILE, 'the training-order worker', opts.workerFile, __dirname);
    if (opts.signal?.aborted) throw new CancelledError();
    const worker = new Worker(file, { workerData: spec });
    let onMessage = (_m: OrderWorkerReply): void => undefined;
    let onError = (_err: Error): void => undefined;
    let onExit = (_code: number): void => undefined;
    let onAbort = (): void => undefined;
    try {
      const facts = await new Promise<OrderFacts>((resolve, reject) => {
        onAbort = () => reject(new CancelledError());
        onMessage = (m) => {
          if (m.type === 'open') resolve(m.facts);
          else if (m.type === 'openError') reject(new DataError(m.message, m.file));
          else reject(new Error(`training-order worker: unexpected first message ${m.type}`));
        };
        onError = (err) => reject(new Error(`training-order worker failed: ${err.message}`));
        onExit = (code) => reject(new Error(`training-order worker exited (code ${code}) while opening the order`));
        opts.signal?.addEventListener('abort', onAbort, { once: true });
        worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      }).finally(() => {
        // Only this function's listeners: the Worker keeps its own ('newListener') to start its port.
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        opts.signal?.removeEventListener('abort', onAbort);
      });
      return new OrderClient(worker, spec, facts);
    } catch (err) {
      void worker.terminate();
      throw err;
    }
  }

  private ask(req: OrderQuestion): Promise<OrderWorkerReply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const msg: OrderWorkerRequest = { ...req, id };
      this.worker.postMessage(msg);
    });
  }

  async update(k: number): Promise<OrderSample[]> {
    const r = await this.ask({ method: 'update', k });
    return r.type === 'update' ? r.samples : [];
  }

  async reads(offsets: number[]): Promise<OrderRead[][]> {
    const r = await this.ask({ method: 'reads', offsets });
    return r.type === 'reads' ? r.reads : [];
  }

  close(): void {
    void this.worker.terminate();
  }
}
