/**
 * The webview side of the panel channel (host side: src/panels/panelHost.ts; wire format:
 * src/panels/panelProtocol.ts). One per page:
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
import type {
  PanelEnvelopeFromWebview, PanelEnvelopeToWebview, PanelExport, PanelRequestMap, PanelResponse,
} from '../../src/panels/panelProtocol';

/** Rejection reason of a request cancelled with its `AbortSignal`. */
export class RequestCancelled extends Error {
  constructor() { super('cancelled'); this.name = 'RequestCancelled'; }
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
export interface ExportMessage { type: 'export'; export: PanelExport }

/** Creates the page's channel (acquires the VS Code API: call once per page). */
export function panelChannel<FromHost, ToHost, Requests extends PanelRequestMap, State>(): PanelChannel<FromHost, ToHost | ExportMessage, Requests, State> {
  const api = vscodeApi<PanelEnvelopeFromWebview<ToHost | ExportMessage>, State>();
  let state = api.getState();
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let handler: ((m: FromHost) => void) | undefined;

  window.addEventListener('message', (ev: MessageEvent) => {
    const m = ev.data as PanelEnvelopeToWebview<FromHost>;
    if (!m || typeof m !== 'object') return;
    if (m.kind === 'response') settle(m);
    else if (m.kind === 'msg') handler?.(m.msg);
  });

  function settle(r: PanelResponse): void {
    const p = pending.get(r.id);
    if (!p) return;
    pending.delete(r.id);
    if (r.cancelled) p.reject(new RequestCancelled());
    else if (r.error !== undefined) p.reject(new Error(r.error));
    else p.resolve(r.result);
  }

  return {
    ready: () => api.postMessage({ kind: 'ready' }),
    post: (msg) => api.postMessage({ kind: 'msg', msg }),
    request: (type, payload, signal) => new Promise((resolve, reject) => {
      if (signal?.aborted) { reject(new RequestCancelled()); return; }
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      api.postMessage({ kind: 'request', id, type, payload });
      signal?.addEventListener('abort', () => {
        if (!pending.has(id)) return;
        pending.delete(id);
        api.postMessage({ kind: 'cancel', id });
        reject(new RequestCancelled());
      }, { once: true });
    }),
    onMessage: (h) => { handler = h; },
    get state() { return state; },
    setState: (patch) => {
      state = { ...(state ?? {}), ...patch } as State;
      api.setState(state);
    },
    exportFile: (e) => api.postMessage({ kind: 'msg', msg: { type: 'export', export: e } }),
  };
}
