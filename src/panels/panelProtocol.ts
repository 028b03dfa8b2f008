/**
 * The wire format of the panel channel (src/panels/panelHost.ts ↔ webview/shared/panel.ts),
 * shared by both sides. No `vscode` import: the webview bundles import it too.
 *
 * Every message is wrapped in an envelope with a `kind`:
 * - webview → host: `ready` (once per page load; the host then flushes what it queued),
 *   `msg` (a plain message), `request` (with an id; answered by one `response`), `cancel`
 *   (aborts the request with that id; its response then carries `cancelled: true`);
 * - host → webview: `msg`, `response`.
 */

/** Webview → host: the page script is running and listening. */
export interface PanelReady { kind: 'ready' }
/** Webview → host: a request `type` with `payload`; `id` is unique per page load. */
export interface PanelRequest { kind: 'request'; id: number; type: string; payload: unknown }
/** Webview → host: stop working on request `id` (the response still comes, with `cancelled`). */
export interface PanelCancel { kind: 'cancel'; id: number }
/** A plain message in either direction. */
export interface PanelMsg<M> { kind: 'msg'; msg: M }
/** Host → webview: the answer to request `id`: `result`, or `error` (one sentence) when it failed. */
export interface PanelResponse { kind: 'response'; id: number; result?: unknown; error?: string; cancelled?: boolean }

/** Everything a panel webview sends. */
export type PanelEnvelopeFromWebview<M> = PanelReady | PanelRequest | PanelCancel | PanelMsg<M>;
/** Everything a panel host sends. */
export type PanelEnvelopeToWebview<M> = PanelMsg<M> | PanelResponse;

/** Request type → its payload (`req`) and result (`res`) types, declared per panel. */
export type PanelRequestMap = Record<string, { req: unknown; res: unknown }>;

/**
 * An export the webview hands to the host to save (the host shows a save dialog; the webview
 * never sees paths). `data` is a `data:image/png;base64,…` URL for PNG, else the text.
 */
export interface PanelExport {
  format: 'png' | 'csv' | 'json';
  /** Suggested file name (no folders), e.g. `search-Lily.csv`. */
  fileName: string;
  data: string;
}
