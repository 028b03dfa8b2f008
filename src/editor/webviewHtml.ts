/**
 * The HTML page of every webview: a strict Content-Security-Policy with a per-load nonce,
 * scripts and styles only from the extension's `dist/` and `media/` folders, nothing inline
 * without the nonce. Decoded text never goes through here: webview scripts insert it as text
 * nodes.
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
  /**
   * Put the script, the stylesheets and the codicon font into the page itself instead of loading
   * them (see {@link inlinePage}): the page then makes no resource request at all. Why: in
   * code-server (VS Code in a browser) every webview resource goes through one service worker
   * shared by all webviews; a request still in flight when its webview closes is answered only by
   * that worker's 30-s timeout, and until then no NEW webview can load (each one registers a new
   * worker version, which cannot take over while the old one has a request in flight). Closing
   * a shard editor while it loaded (a preview tab replaced, a quick Go to Token Offset) left every
   * webview opened in the next 30 s blank.
   */
  inline?: boolean;
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
  if (opts.inline) return inlinePage(webview, extensionUri, opts);
  const nonce = makeNonce();
  const uri = (...p: string[]) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...p)).toString();
  const styles = [
    `<link rel="stylesheet" nonce="${nonce}" href="${uri('dist', 'media', 'codicon.css')}" id="vscode-codicon-stylesheet">`,
    ...stylePaths(opts).map((p) => `<link rel="stylesheet" nonce="${nonce}" href="${uri(...p)}">`),
  ];
  const script = `<script nonce="${nonce}" src="${uri('dist', 'webview', `${opts.script}.js`)}"></script>`;
  return page(webview, nonce, opts.title, styles, script);
}

/**
 * The page around its stylesheet elements and script element; `inline` widens the CSP for an
 * inline page (fonts from `data:`, styles from `blob:`), scripts always need the nonce.
 */
function page(webview: vscode.Webview, nonce: string, title: string, styles: string[], script: string, inline = false): string {
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}${inline ? ' data:' : ''}`,
    `style-src ${webview.cspSource} 'nonce-${nonce}'${inline ? ' blob:' : ''}`,
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
 * The page of {@link webviewHtml} with everything inside it (`opts.inline`): the bundle in a
 * nonce'd `<script>`, the stylesheets in nonce'd `<style>`s, the codicon font as a `data:` URL
 * inside codicon.css. The web components (vscode-elements) copy the `#vscode-codicon-stylesheet`
 * link into their shadow roots: the page's script makes that link a `blob:` URL of the inline
 * codicon.css ({@link https://github.com/vscode-elements/elements | vscode-icon}), so it is no
 * request either. CSP: scripts still only with the nonce; styles also from `blob:` (made by the
 * page's own script), fonts also from `data:`.
 */
function inlinePage(webview: vscode.Webview, extensionUri: vscode.Uri, opts: WebviewPageOptions): string {
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
  return page(webview, nonce, opts.title, styles, script, true);
}
