/**
 * The panel-level types shared by src/panels/panelHost.ts and webview/shared/panel.ts (no `vscode`
 * import: the webview bundles import it too). The envelope, ids, responses, cancellation and the
 * ready handshake are the one message channel's (`src/shared/channel.ts`); a panel declares its
 * messages as a union per direction and its requests as a {@link PanelRequestMap}.
 */
import type { ViewProtocol } from '../shared/channel';

/** Request type → its payload (`req`) and result (`res`) types, declared per panel. */
export type PanelRequestMap = Record<string, { req: unknown; res: unknown }>;

/** A panel's messages and requests as the channel's {@link ViewProtocol} (requests are made by the webview only). */
export interface PanelViewProtocol<
  ToWebview extends { type: string },
  FromWebview extends { type: string },
  Requests extends PanelRequestMap,
> extends ViewProtocol {
  hostEvents: ToWebview;
  webviewEvents: FromWebview;
  hostRequests: { [K in keyof Requests]: { params: Requests[K]['req']; result: Requests[K]['res'] } };
  webviewRequests: Record<never, never>;
}

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
