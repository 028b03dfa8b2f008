/**
 * Helpers shared by every webview bundle: the typed VS Code API handle and DOM builders that
 * only ever insert text as text (decoded token text comes from the open web).
 */

/** The subset of the webview API we use, typed by the message and state types of one view. */
export interface VsCodeApi<ToHost, State> {
  postMessage(msg: ToHost): void;
  getState(): State | undefined;
  setState(state: State): void;
}

import { hasInvisibles, visibleRuns, VisibleOptions } from '../src/core/invisibles';

declare function acquireVsCodeApi(): unknown;

/** Acquires the VS Code API once (it may only be called once per page). */
export function vscodeApi<ToHost, State>(): VsCodeApi<ToHost, State> {
  return acquireVsCodeApi() as VsCodeApi<ToHost, State>;
}

/**
 * On our pages (built by `webviewHtml` with everything inline): makes the
 * `#vscode-codicon-stylesheet` link the web components copy into their shadow roots point to a
 * `blob:` URL of the page's inline codicon.css, so no icon ever loads a stylesheet through the
 * webview's service worker. Call before the first web component is put into the page. No-op on
 * other pages.
 */
export function codiconLinkFromInline(): void {
  const inline = document.getElementById('vscode-codicon-inline');
  if (!inline || document.getElementById('vscode-codicon-stylesheet')) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.id = 'vscode-codicon-stylesheet';
  link.href = URL.createObjectURL(new Blob([inline.textContent ?? ''], { type: 'text/css' }));
  document.head.append(link);
}

type Child = Node | string | null | undefined | false;

/**
 * Creates an element. Strings among `children` become text nodes; attributes are set with
 * `setAttribute` (never `on*` handlers, never HTML).
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (/^on/i.test(k)) throw new Error(`h(): refusing event-handler attribute ${k}`);
    el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

/**
 * `fmt` formats a count with thousands separators; `count` gives a count with its noun (`1 token`,
 * `2 tokens`): the host's and CLI's helpers of src/core/units.ts, one formatter for all.
 */
export { count, fmt } from '../src/core/units';

/**
 * Text with its invisible characters drawn as boxed marks (src/core/invisibles.ts decides which):
 * plain runs become strings (text nodes), each invisible character a `span.inv` whose label
 * (`ZWSP`, `BEL`, `NBSP`, `VS16`) is a CSS pseudo-element fed by `data-mark` (never text, never
 * copied) with the code point in its `title`, holding the original character hidden (so a text
 * selection still covers it; the shard editor's copy handler copies the decoded text anyway).
 * `unicode-bidi: isolate` on the span keeps a bidi control from reordering the text around it.
 */
export function visibleNodes(text: string, opts: VisibleOptions = {}): (Node | string)[] {
  if (!opts.whitespace && (opts.marks === false || !hasInvisibles(text))) return [text];
  return visibleRuns(text, opts).map((r) =>
    'text' in r ? r.text : h('span', { class: 'inv', 'data-mark': r.mark, title: r.title }, h('span', { class: 'inv-ch' }, r.char)),
  );
}
