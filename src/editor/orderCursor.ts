/**
 * The run's training order at a shard editor's cursor: what its webview's cursor line and the
 * status bar show when a run description (`run.json`, the `tokenShards.run` setting) names an
 * order other than the card's sequential one — the updates and samples that read the token, or
 * that the run never read it. One per shard editor session; the order itself is the dataset's one
 * {@link TrainingOrders} entry (opened in a worker), asked asynchronously: the answer comes later
 * and `changed` is called then.
 */
import type { Dataset } from '../core/dataset';
import type { OrderRead } from '../core/order/order';
import type { OrderView } from '../core/order/orderClient';
import { orderName } from '../core/order/orderText';
import type { TrainingOrders } from '../orderService';
import type { ShardRunOrder } from '../protocol/shard';

/** Name shown while the run's order is still opening (its size is not known yet). */
const OPENING = "the run's training order";

/** See the module comment. */
export class OrderCursor {
  /** The last answer: reads of global token `global`. */
  private known?: { order: OrderView; global: number; reads: OrderRead[] };
  /** The last question sent (not asked again while it is out). */
  private asked?: { order: OrderView; global: number };
  /** The opening of the order this cursor waits for (waited for once). */
  private waiting?: Promise<OrderView>;
  /** The opening that failed, with its one-line message. */
  private failure?: { opening: Promise<OrderView>; message: string };

  /**
   * @param orders the extension's training orders (undefined: the card's order only, e.g. in tests).
   * @param changed called when an answer arrived (the order opened or failed, reads came): ask {@link at} again.
   * @param warn logs a failed question (one line).
   */
  constructor(
    private readonly orders: TrainingOrders | undefined,
    private readonly changed: () => void,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * The run's order at local token `offset` of a shard starting at global token `globalStart` of
   * `ds`; undefined when the card's sequential order is in force (no run description, or a lone
   * shard with no global offsets). Without an answer yet, the result has no `reads` and the
   * question is sent (once); when it arrives `changed` is called.
   */
  at(ds: Dataset | undefined, globalStart: number | undefined, offset: number): ShardRunOrder | undefined {
    const orders = this.orders;
    if (!ds || globalStart === undefined || !orders || orders.runFileFor(ds) === undefined) return undefined;
    const global = globalStart + offset;
    const order = orders.peek(ds);
    if (!order) {
      const opening = orders.orderOf(ds);
      if (this.failure?.opening === opening) return { name: OPENING, offset, error: this.failure.message };
      if (this.waiting !== opening) {
        this.waiting = opening;
        opening.then(
          () => this.changed(),
          (err: Error) => {
            this.failure = { opening, message: err.message };
            this.changed();
          },
        );
      }
      return { name: OPENING, offset };
    }
    if (order.kind === 'sequential') return undefined;
    const name = orderName(order);
    if (this.known?.order === order && this.known.global === global) return { name, offset, reads: this.known.reads };
    if (this.asked?.order !== order || this.asked.global !== global) {
      const asked = { order, global };
      this.asked = asked;
      order.reads([global]).then(
        ([reads]) => {
          this.known = { order, global, reads };
          if (this.asked === asked) this.asked = undefined;
          this.changed();
        },
        (err: Error) => {
          if (this.asked === asked) this.asked = undefined;
          this.warn(`training order: reads of token ${global}: ${err.message}`);
        },
      );
    }
    return { name, offset };
  }
}
