/**
 * The webview end of the message channel (`src/shared/channel.ts`): one per page, typed by the
 * view's {@link ViewProtocol} in `src/protocol/`. {@link connect} listens for the host's
 * envelopes, then sends `ready` (the host answers with the view's state).
 */
import { Channel, ChannelHandlers, RequestOptions, ViewProtocol } from '../src/shared/channel';
import type { VsCodeApi } from './common';

/** The webview end of one view's channel. */
export interface WebviewChannel<P extends ViewProtocol> {
  /** Sends an event to the host. */
  notify(event: P['webviewEvents']): void;
  /**
   * Asks the host; resolves with its answer.
   * @throws ChannelError when the host's handler failed (its message) or the request was cancelled.
   */
  request<M extends keyof P['hostRequests'] & string>(
    method: M,
    params: P['hostRequests'][M]['params'],
    opts?: RequestOptions,
  ): Promise<P['hostRequests'][M]['result']>;
  /** Says `ready` (only needed with `{ ready: false }`; the host then sends the view's state). */
  ready(): void;
}

/**
 * Connects a page to its host: installs the `message` listener, routes the host's events to
 * `handlers.onEvent` and its requests to `handlers.requests`, then says `ready` (unless
 * `opts.ready` is false: then call `ready()` yourself). Call it once per page, after its DOM and
 * state are set up.
 */
export function connect<P extends ViewProtocol>(
  api: VsCodeApi<unknown, unknown>,
  handlers: ChannelHandlers<P['hostEvents'], P['webviewRequests']>,
  opts: { ready?: boolean } = {},
): WebviewChannel<P> {
  const channel = new Channel<P['webviewEvents'], P['hostEvents'], P['hostRequests'], P['webviewRequests']>((env) => {
    api.postMessage(env);
    return true;
  }, handlers);
  window.addEventListener('message', (e: MessageEvent<unknown>) => channel.receive(e.data));
  if (opts.ready !== false) void channel.ready();
  return {
    notify: (event) => {
      void channel.notify(event);
    },
    request: (method, params, o) => channel.request(method, params, o),
    ready: () => {
      void channel.ready();
    },
  };
}
