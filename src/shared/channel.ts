/**
 * The one message channel between the extension host and a webview, used by both sides (it
 * imports neither `vscode` nor the DOM): a typed envelope carrying
 * - **events** (fire and forget; the body is a `{ type, … }` message of the view's protocol),
 * - **requests** with an id, answered by exactly one **response** (a result or an error),
 *   and **cancellable** by the requester (the answering side's handler sees an `AbortSignal`),
 * - one **ready** handshake: the webview script sends `ready` once it listens; the host answers by
 *   sending the view's state (a webview reloaded after being hidden says `ready` again).
 *
 * The protocol of each view is one {@link ViewProtocol} in `src/protocol/<view>.ts`; the host wraps a
 * `vscode.Webview` with `src/editor/hostChannel.ts`, a webview script with `webview/channel.ts`.
 *
 * Naming scheme: event `type`s and request methods are camelCase verbs or nouns without a view
 * prefix (the protocol type scopes them): `init`, `rowsChanged`, `page`, `show`.
 */

/** A request map: method → its params and result (both JSON-serialisable). */
export type RequestMap = { [method: string]: { params: unknown; result: unknown } };

/** The messages and requests of one webview (see the file comment). */
export interface ViewProtocol {
  /** Events the host sends to the webview (a union of `{ type: … }` messages). */
  hostEvents: { type: string };
  /** Events the webview sends to the host. */
  webviewEvents: { type: string };
  /** Requests the webview makes and the host answers. */
  hostRequests: RequestMap;
  /** Requests the host makes and the webview answers. */
  webviewRequests: RequestMap;
}

/** Marks an envelope as ours (other `message` events on a page are ignored). */
export const CHANNEL_TAG = 'tsi';

/** What crosses `postMessage`, in either direction. */
export type Envelope =
  | { tag: typeof CHANNEL_TAG; kind: 'ready' }
  | { tag: typeof CHANNEL_TAG; kind: 'event'; body: { type: string } }
  | { tag: typeof CHANNEL_TAG; kind: 'request'; id: number; method: string; params: unknown }
  | { tag: typeof CHANNEL_TAG; kind: 'response'; id: number; result?: unknown; error?: ChannelErrorInfo }
  | { tag: typeof CHANNEL_TAG; kind: 'cancel'; id: number };

/** The error half of a response: a one-sentence message (naming the file/offset), and whether it was a cancellation. */
export interface ChannelErrorInfo {
  message: string;
  cancelled?: boolean;
}

/** Rejection of a request: the other side's handler threw (`message` is its message), or it was cancelled. */
export class ChannelError extends Error {
  constructor(
    message: string,
    readonly cancelled = false,
  ) {
    super(message);
    this.name = cancelled ? 'ChannelCancelled' : 'ChannelError';
  }
}

/** True when `x` is one of our envelopes. */
export function isEnvelope(x: unknown): x is Envelope {
  return (
    typeof x === 'object' &&
    x !== null &&
    (x as { tag?: unknown }).tag === CHANNEL_TAG &&
    typeof (x as { kind?: unknown }).kind === 'string'
  );
}

/** The handlers of one side: events of the other side, and the requests this side answers. */
export interface ChannelHandlers<InEvent extends { type: string }, InRequests extends RequestMap> {
  /** Called for every event from the other side. */
  onEvent(event: InEvent): void;
  /**
   * One function per request method; its result (or the promise's value) is the response, a
   * throw (or rejection) becomes a `ChannelError` on the requesting side with the same message.
   * `signal` aborts when the requester cancels or the channel is reset.
   */
  requests: {
    [M in keyof InRequests]: (
      params: InRequests[M]['params'],
      signal: AbortSignal,
    ) => InRequests[M]['result'] | Promise<InRequests[M]['result']>;
  };
  /** Called when the other side says `ready` (the host side only). */
  onReady?(): void;
}

/** Options of {@link Channel.request}. */
export interface RequestOptions {
  /** Aborting sends `cancel` to the other side and rejects with a cancelled {@link ChannelError}. */
  signal?: AbortSignal;
}

/**
 * One end of the channel. `post` sends an envelope (resolving false when it was not delivered);
 * feed every received message to {@link receive}.
 */
export class Channel<
  OutEvent extends { type: string },
  InEvent extends { type: string },
  OutRequests extends RequestMap,
  InRequests extends RequestMap,
> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private readonly serving = new Map<number, AbortController>();

  constructor(
    private readonly post: (env: Envelope) => boolean | PromiseLike<boolean>,
    private readonly handlers: ChannelHandlers<InEvent, InRequests>,
  ) {}

  /** Sends an event; resolves false when it was not delivered. */
  notify(event: OutEvent): Promise<boolean> {
    return this.send({ tag: CHANNEL_TAG, kind: 'event', body: event });
  }

  /** Sends `ready` (the webview side, once its listeners are in place). */
  ready(): Promise<boolean> {
    return this.send({ tag: CHANNEL_TAG, kind: 'ready' });
  }

  /**
   * Sends a request; resolves with the other side's result.
   * @throws ChannelError when the other side's handler failed, when the request was cancelled
   *   (`cancelled` true: `opts.signal` aborted, or {@link reset}), or when it could not be posted.
   */
  request<M extends keyof OutRequests & string>(
    method: M,
    params: OutRequests[M]['params'],
    opts: RequestOptions = {},
  ): Promise<OutRequests[M]['result']> {
    const id = this.nextId++;
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(new ChannelError(`${method} cancelled`, true));
    return new Promise<OutRequests[M]['result']>((resolve, reject) => {
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        void this.send({ tag: CHANNEL_TAG, kind: 'cancel', id });
        reject(new ChannelError(`${method} cancelled`, true));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve: (v) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(v as OutRequests[M]['result']);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      void this.send({ tag: CHANNEL_TAG, kind: 'request', id, method, params }).then((ok) => {
        if (ok) return;
        const p = this.pending.get(id);
        this.pending.delete(id);
        p?.reject(new ChannelError(`${method}: the other side is not listening`, true));
      });
    });
  }

  /** Handles one received message (anything that is not an envelope is ignored). */
  receive(msg: unknown): void {
    if (!isEnvelope(msg)) return;
    switch (msg.kind) {
      case 'ready':
        this.handlers.onReady?.();
        return;
      case 'event':
        this.handlers.onEvent(msg.body as InEvent);
        return;
      case 'request':
        void this.serve(msg.id, msg.method, msg.params);
        return;
      case 'response': {
        const p = this.pending.get(msg.id);
        if (!p) return; // cancelled meanwhile
        this.pending.delete(msg.id);
        if (msg.error) p.reject(new ChannelError(msg.error.message, msg.error.cancelled));
        else p.resolve(msg.result);
        return;
      }
      case 'cancel':
        this.serving.get(msg.id)?.abort();
        return;
    }
  }

  /**
   * Forgets everything in flight: requests this side made are rejected as cancelled, handlers
   * still serving the other side's requests see their signal abort (their answers are dropped).
   * Called when the other side went away (webview reloaded, panel closed).
   */
  reset(reason = 'the view was reloaded'): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(new ChannelError(reason, true));
    const serving = [...this.serving.values()];
    this.serving.clear();
    for (const ac of serving) ac.abort();
  }

  private async serve(id: number, method: string, params: unknown): Promise<void> {
    const handler = (this.handlers.requests as Record<string, ((p: unknown, s: AbortSignal) => unknown) | undefined>)[method];
    const ac = new AbortController();
    this.serving.set(id, ac);
    let response: Envelope;
    try {
      if (!handler) throw new Error(`unknown request ${method}`);
      const result = await handler(params, ac.signal);
      response = { tag: CHANNEL_TAG, kind: 'response', id, result };
    } catch (err) {
      const cancelled = ac.signal.aborted || (err instanceof ChannelError && err.cancelled);
      response = {
        tag: CHANNEL_TAG,
        kind: 'response',
        id,
        error: { message: (err as Error)?.message ?? String(err), ...(cancelled ? { cancelled } : {}) },
      };
    }
    // A cancelled or reset request gets no answer (the requester already gave up).
    if (this.serving.get(id) !== ac) return;
    this.serving.delete(id);
    if (ac.signal.aborted) return;
    void this.send(response);
  }

  private send(env: Envelope): Promise<boolean> {
    try {
      return Promise.resolve(this.post(env)).then(
        (ok) => ok !== false,
        () => false,
      );
    } catch {
      return Promise.resolve(false);
    }
  }
}
