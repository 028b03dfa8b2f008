/**
 * What every panel shares on top of the one message channel (`src/shared/channel.ts`): the
 * export message the host saves itself (`src/panels/panelHost.ts`, `PanelHost`), so no panel
 * handles it. No `vscode` import: the webview bundles import it too (`webview/shared/panel.ts`).
 * A panel declares its messages and requests as one channel `ViewProtocol` in its own file of
 * `src/protocol/`.
 */

/**
 * An export the webview hands to the host to save (the host shows a save dialog; the webview
 * never sees paths). `data` is a `data:image/png;base64,…` URL for PNG, else the text (UTF-8).
 */
export interface PanelExport {
  format: 'png' | 'csv' | 'json';
  /** Suggested file name (no folders), e.g. `search-Lily.csv`. */
  fileName: string;
  data: string;
}

/** Webview → host on every panel: save an export (answered by `PanelHost` itself, never by the panel). */
export interface ExportMessage {
  type: 'export';
  export: PanelExport;
}
