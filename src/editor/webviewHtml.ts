/**
 * The HTML page of every webview: a strict Content-Security-Policy with a per-load nonce; the
 * script, the stylesheets and the codicon font are put into the page itself (from the extension's
 * `dist/` and `media/` folders), so a page makes no resource request (see {@link webviewHtml}).
 * Decoded text never goes through here: webview scripts insert it as text nodes.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
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

/** Webview options shared by all our webviews: scripts on, no local resource at all (every page is self-contained, see {@link webviewHtml}). */
export function webviewOptions(): vscode.WebviewOptions {
  return { enableScripts: true, localResourceRoots: [] };
}

/** A fresh random nonce (base64, 128 bits). */
export function makeNonce(): string {
  return crypto.randomBytes(16).toString('base64');
}

/**
 * The page around its stylesheet elements and script element. CSP: scripts only with the nonce;
 * styles with the nonce or from `blob:` (made by the page's own script, see
 * `codiconLinkFromInline` in webview/common.ts); fonts and images from `data:`; nothing else.
 */
function page(nonce: string, title: string, styles: string[], script: string): string {
  const csp = [
    "default-src 'none'",
    'img-src data:',
    'font-src data:',
    `style-src 'nonce-${nonce}' blob:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${csp}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <title>${esc(title)}</title>
  ${styles.join('\n  ')}
</head>
<body>
  <div id="app" role="application" aria-label="${esc(title)}"></div>
  ${script}
</body>
</html>`;
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page's stylesheets after codicon.css, as paths under the extension: `media/common.css`, `opts.style`, `opts.styles`. */
function stylePaths(opts: WebviewPageOptions): string[][] {
  return ['common.css', ...(opts.style ? [opts.style] : []), ...(opts.styles ?? [])].map((s) =>
    s.startsWith('dist/') ? s.split('/') : ['media', s],
  );
}

/** Id of the inline codicon.css `<style>` of an inline page (webview/common.ts `codiconLinkFromInline` reads it). */
const INLINE_CODICON_STYLE_ID = 'vscode-codicon-inline';

/** File texts by path, read once per process (and again when the file changed: a rebuilt bundle). */
const fileCache = new Map<string, { mtimeMs: number; text: string }>();

function readCached(file: string, encoding: 'utf8' | 'base64'): string {
  const mtimeMs = fs.statSync(file).mtimeMs;
  const key = `${encoding}:${file}`;
  const hit = fileCache.get(key);
  if (hit && hit.mtimeMs === mtimeMs) return hit.text;
  const text = fs.readFileSync(file, encoding);
  fileCache.set(key, { mtimeMs, text });
  return text;
}

/**
 * Builds the page for a webview (see {@link WebviewPageOptions}) with everything inside it: the
 * bundle in a nonce'd `<script>`, the stylesheets in nonce'd `<style>`s, the codicon font as a
 * `data:` URL inside codicon.css. The web components (vscode-elements) copy the
 * `#vscode-codicon-stylesheet` link into their shadow roots: the page's script makes that link a
 * `blob:` URL of the inline codicon.css (`codiconLinkFromInline`), so it is no request either.
 *
 * Why no resource is loaded: in code-server (VS Code in a browser) every webview resource goes
 * through one service worker shared by all webviews; a request still in flight when its webview
 * closes is answered only by that worker's 30-s timeout, and until then no NEW webview can load
 * (each one registers a new worker version, which cannot take over while the old one has a
 * request in flight). Closing any webview while it loaded (a preview tab replaced, a quick Go to
 * Token Offset, a panel closed at once) left every webview opened in the next 30 s blank.
 * Files are read once per process (again when their mtime changes: a rebuilt bundle).
 * @throws the file-system error when a bundle or stylesheet is missing (a broken install).
 */
export function webviewHtml(extensionUri: vscode.Uri, opts: WebviewPageOptions): string {
  const nonce = makeNonce();
  const file = (...p: string[]) => vscode.Uri.joinPath(extensionUri, ...p).fsPath;
  // Text inside <style>/<script> must not close the element early.
  const safe = (text: string, tag: string) => text.replace(new RegExp(`</${tag}`, 'gi'), `<\\/${tag}`);
  const font = `url("data:font/ttf;base64,${readCached(file('dist', 'media', 'codicon.ttf'), 'base64')}")`;
  const codicons = readCached(file('dist', 'media', 'codicon.css'), 'utf8').replace(/url\(["']?\.\/codicon\.ttf[^)"']*["']?\)/g, font);
  const styles = [
    `<style nonce="${nonce}" id="${INLINE_CODICON_STYLE_ID}">\n${safe(codicons, 'style')}\n</style>`,
    ...stylePaths(opts).map((p) => `<style nonce="${nonce}">\n${safe(readCached(file(...p), 'utf8'), 'style')}\n</style>`),
  ];
  const script = `<script nonce="${nonce}">\n${safe(readCached(file('dist', 'webview', `${opts.script}.js`), 'utf8'), 'script')}\n</script>`;
  return page(nonce, opts.title, styles, script);
}
