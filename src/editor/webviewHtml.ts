/**
 * The HTML page of every webview: a strict Content-Security-Policy with a per-load nonce,
 * scripts and styles only from the extension's `dist/` and `media/` folders, nothing inline
 * without the nonce. Decoded text never goes through here: webview scripts insert it as text
 * nodes.
 */
import * as crypto from 'crypto';
import * as vscode from 'vscode';

/** Options for {@link webviewHtml}. */
export interface WebviewPageOptions {
  /** Bundle name in `dist/webview/` without `.js` (e.g. `shardEditor`). */
  script: string;
  /** Page title (for screen readers). */
  title: string;
  /** Extra stylesheet in `media/` (e.g. `shardEditor.css`); `media/common.css` is always included. */
  style?: string;
  /**
   * More stylesheets, in order after `style`: `media/<name>`, or a path under `dist/` when the
   * name starts with `dist/` (e.g. `dist/media/uPlot.min.css`, copied there by esbuild.js).
   */
  styles?: string[];
}

/** Webview options shared by all our webviews: scripts on, resources limited to `dist/` and `media/`. */
export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media')],
  };
}

/** A fresh random nonce (base64, 128 bits). */
export function makeNonce(): string {
  return crypto.randomBytes(16).toString('base64');
}

/** Builds the page for a webview (see {@link WebviewPageOptions}). */
export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, opts: WebviewPageOptions): string {
  const nonce = makeNonce();
  const uri = (...p: string[]) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...p)).toString();
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
    `style-src ${webview.cspSource} 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const styles = ['common.css', ...(opts.style ? [opts.style] : []), ...(opts.styles ?? [])]
    .map((s) => `<link rel="stylesheet" nonce="${nonce}" href="${s.startsWith('dist/') ? uri(...s.split('/')) : uri('media', s)}">`)
    .join('\n  ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${csp}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <title>${esc(opts.title)}</title>
  <link rel="stylesheet" nonce="${nonce}" href="${uri('dist', 'media', 'codicon.css')}" id="vscode-codicon-stylesheet">
  ${styles}
</head>
<body>
  <div id="app" role="application" aria-label="${esc(opts.title)}"></div>
  <script nonce="${nonce}" src="${uri('dist', 'webview', `${opts.script}.js`)}"></script>
</body>
</html>`;
}
