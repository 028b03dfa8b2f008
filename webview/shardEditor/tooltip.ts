/**
 * The hover card of a token: a fixed-position box of label/value rows, all text nodes. Shown
 * after a short delay when the mouse rests on a token, hidden on leave, scroll or Escape.
 */
import { h } from '../common';

/** One row of the card: a label and its value. */
export type TipRow = [label: string, value: string];

/** The hover card (one per page). */
export class TokenTooltip {
  readonly el: HTMLElement;
  private timer = 0;
  private target?: Element;

  constructor(parent: HTMLElement) {
    this.el = h('div', { id: 'tip', role: 'tooltip', class: 'tip hidden' });
    parent.append(this.el);
  }

  /** Shows the rows for `anchor` after `delay` ms (immediately with 0). */
  showSoon(anchor: Element, rows: () => TipRow[], delay = 250): void {
    if (this.target === anchor && !this.el.classList.contains('hidden')) return;
    this.target = anchor;
    clearTimeout(this.timer);
    this.timer = window.setTimeout(() => this.show(anchor, rows()), delay);
  }

  /** Shows the rows now, below (or above) `anchor`. */
  show(anchor: Element, rows: TipRow[]): void {
    this.el.replaceChildren(
      ...rows.map(([k, v]) => h('div', { class: 'tip-row' }, h('span', { class: 'tip-k' }, k), h('span', { class: 'tip-v' }, v))),
    );
    this.el.classList.remove('hidden');
    // Measure at the left edge so the width is not squeezed by the previous position.
    this.el.style.left = '0px';
    this.el.style.top = '0px';
    const r = anchor.getBoundingClientRect();
    const w = this.el.offsetWidth,
      ht = this.el.offsetHeight;
    let x = Math.min(r.left, window.innerWidth - w - 8);
    let y = r.bottom + 4;
    if (y + ht > window.innerHeight - 4) y = Math.max(4, r.top - ht - 4);
    x = Math.max(4, x);
    this.el.style.left = `${x}px`;
    this.el.style.top = `${y}px`;
  }

  /** Hides the card and cancels a pending show. */
  hide(): void {
    clearTimeout(this.timer);
    this.target = undefined;
    this.el.classList.add('hidden');
  }

  /** The element the card is for (or is about to be). */
  get anchor(): Element | undefined {
    return this.target;
  }
}
