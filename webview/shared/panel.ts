/**
 * The webview side of a panel (host side: src/panels/panelHost.ts), on the one message channel
 * (`webview/channel.ts`), typed by the panel's channel protocol in `src/protocol/`. One per page:
 * ```ts
 * const ch = panelChannel<SearchPanelProtocol, State>();
 * ch.onMessage((m) => …);                          // host → webview events
 * const r = await ch.request('occurrences', {...}); // a request; rejects with the host's error
 * ch.ready();                                       // once the listeners are set: the host flushes its queue
 * ```
 * State: `ch.state` / `ch.setState(patch)` wrap VS Code's `getState`/`setState` (kept while
 * the tab is hidden and across window reloads via the panel's serializer).
 */
import { vscodeApi } from '../common';
import { connect } from '../channel';
import type { ExportMessage, PanelExport } from '../../src/protocol/panel';
import { ChannelError, ViewProtocol } from '../../src/shared/channel';

/** Rejection reason of a request cancelled with its `AbortSignal`. */
export class RequestCancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'RequestCancelled';
  }
}

/** The channel of one panel page speaking protocol `P`. */
export interface PanelChannel<P extends ViewProtocol, State> {
  /** Says `ready` to the host (call once, after registering `onMessage`). */
  ready(): void;
  /** Sends an event to the host. */
  post(msg: P['webviewEvents']): void;
  /**
   * Sends a request and resolves with the host's result. Rejects with an Error carrying the host's
   * message, or with {@link RequestCancelled} when `signal` aborts (the host is told to stop).
   */
  request<M extends keyof P['hostRequests'] & string>(
    method: M,
    params: P['hostRequests'][M]['params'],
    signal?: AbortSignal,
  ): Promise<P['hostRequests'][M]['result']>;
  /** Registers the handler of host → webview events (one handler; a later call replaces it). */
  onMessage(handler: (msg: P['hostEvents']) => void): void;
  /** The state saved with {@link setState} (undefined on a fresh panel). */
  readonly state: State | undefined;
  /** Merges `patch` into the saved state. */
  setState(patch: Partial<State>): void;
  /** Hands an export (PNG data URL, CSV or JSON text) to the host, which asks where to save it. */
  exportFile(e: PanelExport): void;
}

/** Creates the page's channel (acquires the VS Code API: call once per page). */
export function panelChannel<P extends ViewProtocol, State>(): PanelChannel<P, State> {
  interface Page extends ViewProtocol {
    hostEvents: P['hostEvents'];
    webviewEvents: P['webviewEvents'] | ExportMessage;
    hostRequests: P['hostRequests'];
    webviewRequests: Record<never, never>;
  }
  const api = vscodeApi<unknown, State>();
  let state = api.getState();
  let handler: ((m: P['hostEvents']) => void) | undefined;
  const channel = connect<Page>(api, { onEvent: (m) => handler?.(m), requests: {} }, { ready: false });

  return {
    ready: () => channel.ready(),
    post: (msg) => channel.notify(msg),
    request: (method, params, signal) =>
      channel.request(method, params, { signal }).catch((err: unknown) => {
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
    exportFile: (e) => channel.notify({ type: 'export', export: e }),
  };
}
