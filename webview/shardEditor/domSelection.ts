/**
 * Token ranges from the page's text selection, and the decoded text of a token range: the one
 * place that maps DOM selection ends to token offsets (`data-o`/`data-n`), used by both the
 * selection tracking and the copy handler.
 */
import type { ShardState } from './state';

/** The token element (`.tok`) holding `n`, inside `root`. */
export function tokOf(n: Node, root: HTMLElement): HTMLElement | undefined {
  const el = (n.nodeType === Node.ELEMENT_NODE ? (n as HTMLElement) : n.parentElement)?.closest?.('.tok') as HTMLElement | null;
  return el && root.contains(el) ? el : undefined;
}

/** Local token range `[start, end)` covered by the page's text selection inside `root`, if any. */
export function domSelectionRange(root: HTMLElement): [number, number] | undefined {
  const s = document.getSelection();
  if (!s || s.isCollapsed || !s.anchorNode || !s.focusNode) return undefined;
  const a = tokOf(s.anchorNode, root),
    f = tokOf(s.focusNode, root);
  if (!a || !f) return undefined;
  const ao = Number(a.dataset.o),
    fo = Number(f.dataset.o);
  return [Math.min(ao, fo), Math.max(ao + Number(a.dataset.n || 1), fo + Number(f.dataset.n || 1))];
}

/**
 * Decoded text of local tokens `[s, e)` from cached pages (the original characters, never the
 * marks drawn for them), ids separated by spaces without a tokenizer; undefined if a page is missing.
 */
export function textOf(st: ShardState, s: number, e: number): string | undefined {
  let out = '';
  for (let o = s; o < e; o++) {
    const p = st.page(st.pageOf(o));
    if (!p) return undefined;
    out += p.hasText ? p.docText(o) : (o > s ? ' ' : '') + p.id(o);
  }
  return out;
}
