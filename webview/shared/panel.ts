/**
 * The webview side of a panel (host side: src/panels/panelHost.ts; types:
 * src/panels/panelProtocol.ts), on the one message channel (`webview/channel.ts`). One per page:
 * ```ts
 * const ch = panelChannel<FromHost, ToHost, Requests, State>();
 * ch.onMessage((m) => …);                     // host → webview messages
 * const r = await ch.request('find', {...});  // request/response with ids; rejects with the host's error
 * ch.ready();                                  // once the listeners are set: the host flushes its queue
 * ```
 * State: `ch.state` / `ch.setState(patch)` wrap VS Code's `getState`/`setState` (kept while
 * the tab is hidden and across window reloads via the panel's serializer).
 */
import { vscodeApi } from '../common';
import { connect } from '../channel';
import type { PanelExport, PanelRequestMap, PanelViewProtocol } from '../../src/panels/panelProtocol';
import { ChannelError } from '../../src/shared/channel';

/** Rejection reason of a request cancelled with its `AbortSignal`. */
export class RequestCancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'RequestCancelled';
  }
}

/** The channel of one panel page. */
export interface PanelChannel<FromHost, ToHost, Requests extends PanelRequestMap, State> {
  /** Says `ready` to the host (call once, after registering `onMessage`). */
  ready(): void;
  /** Sends a plain message. */
  post(msg: ToHost): void;
  /**
   * Sends a request and resolves with the host's result. Rejects with an Error carrying the host's
   * message, or with {@link RequestCancelled} when `signal` aborts (the host is told to stop).
   */
  request<K extends keyof Requests & string>(type: K, payload: Requests[K]['req'], signal?: AbortSignal): Promise<Requests[K]['res']>;
  /** Registers the handler of host → webview messages (one handler; a later call replaces it). */
  onMessage(handler: (msg: FromHost) => void): void;
  /** The state saved with {@link setState} (undefined on a fresh panel). */
  readonly state: State | undefined;
  /** Merges `patch` into the saved state. */
  setState(patch: Partial<State>): void;
  /** Hands an export (PNG data URL, CSV or JSON text) to the host, which asks where to save it. */
  exportFile(e: PanelExport): void;
}

/** Message a panel sends to save an export (handled by the host's `saveExport`). */
export interface ExportMessage {
  type: 'export';
  export: PanelExport;
}

/** Creates the page's channel (acquires the VS Code API: call once per page). */
export function panelChannel<FromHost, ToHost, Requests extends PanelRequestMap, State>(): PanelChannel<
  FromHost,
  ToHost | ExportMessage,
  Requests,
  State
> {
  type P = PanelViewProtocol<FromHost & { type: string }, (ToHost | ExportMessage) & { type: string }, Requests>;
  const api = vscodeApi<unknown, State>();
  let state = api.getState();
  let handler: ((m: FromHost) => void) | undefined;
  const channel = connect<P>(api, { onEvent: (m) => handler?.(m), requests: {} }, { ready: false });

  return {
    ready: () => channel.ready(),
    post: (msg) => channel.notify(msg as P['webviewEvents']),
    request: (type, payload, signal) =>
      channel.request(type, payload, { signal }).catch((err: unknown) => {
        throw err instanceof ChannelError && err.cancelled ? new RequestCancelled() : err;
      }),
    onMessage: (h) => {
      handler = h;
    },
    get state() {
      return state;
    },
    setState: (patch) => {
      state = { ...(state ?? {}), ...patch } as State;
      api.setState(state);
    },
    exportFile: (e) => channel.notify({ type: 'export', export: e } as P['webviewEvents']),
  };
}
