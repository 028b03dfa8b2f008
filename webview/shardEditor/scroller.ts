/**
 * A virtual scroller over blocks of unknown height with its own scrollbar (browsers cap an
 * element's height near 33M px; 25M tokens overrun that). The position is a token offset plus
 * a pixel offset into the block holding it, so it survives re-blocking, view switches and pages
 * arriving late. Only the blocks that cover the viewport (plus one screen below) are in the DOM.
 *
 * Idea from vscode-hexeditor's virtual scroll container (scrollbar drawn by hand, wheel and drag
 * mapped to positions); the block walk for variable heights is ours.
 */

/** A block as the scroller sees it. Offsets are local tokens; `key` identifies the DOM element. */
export interface ScrollBlock {
  key: string;
  start: number;
  end: number;
}

/** What the scroller needs from the view. */
export interface ScrollSource {
  /** Tokens in the file. */
  total(): number;
  /** The block containing `offset` (a placeholder block when its page is not loaded yet). */
  blockAt(offset: number): ScrollBlock;
  /** Builds the DOM of a block. */
  render(block: ScrollBlock): HTMLElement;
  /** The element of token `offset` inside a rendered block, for reveal. */
  tokenElement(blockEl: HTMLElement, offset: number): HTMLElement | undefined;
  /** Called after every layout with the first and last visible blocks. */
  onLayout?(first: ScrollBlock, last: ScrollBlock, topOffset: number): void;
}

/** Where {@link VirtualScroller.reveal} puts a token (a number: pixels below the viewport's top). */
export type RevealWhere = 'top' | 'third' | 'ifHidden' | number;

/** Pixels drawn below the viewport once the first text is painted. */
export const OVERSCAN_PX = 600;
/** How long a reveal is re-applied when heights change under it (ms). */
const PIN_MS = 2000;
const MIN_THUMB = 24;

/** Virtual scroller; see the module comment. */
export class VirtualScroller {
  /** Local offset inside the top block (normalised to the block's start after a layout). */
  top = 0;
  /** Pixels of the top block hidden above the viewport. */
  px = 0;
  /**
   * Pixels drawn below the viewport (ready for scrolling). The page starts with none, so its first
   * text is laid out sooner (on a page of 1-character tokens a screen is ~6,000 token elements),
   * and sets {@link OVERSCAN_PX} once that text is painted.
   */
  overscanPx = 0;
  private live: { block: ScrollBlock; el: HTMLElement }[] = [];
  private heights = new Map<string, number>();
  private revealTarget?: { offset: number; where: RevealWhere };
  /**
   * The last reveal, re-applied for a short while when heights change under it (a new webview's
   * font arriving, a button inside a block upgrading, a page arriving, a width change): without it
   * cached heights go stale and the revealed token drifts out of view. Any scroll by the user ends it.
   */
  private pin?: { offset: number; where: RevealWhere; until: number };
  private readonly sizes: ResizeObserver;
  private stickToEnd = false;
  private frame = 0;
  private drag?: { offset: number };
  private visibleTokens = 1;
  private readonly content: HTMLElement;
  private readonly thumb: HTMLElement;

  constructor(
    readonly viewport: HTMLElement,
    readonly bar: HTMLElement,
    private readonly source: ScrollSource,
  ) {
    this.content = document.createElement('div');
    this.content.className = 'content';
    viewport.append(this.content);
    this.thumb = document.createElement('div');
    this.thumb.className = 'thumb';
    bar.append(this.thumb);
    viewport.addEventListener(
      'wheel',
      (e) => {
        e.preventDefault();
        const unit = e.deltaMode === 1 ? 20 : e.deltaMode === 2 ? this.viewport.clientHeight : 1;
        this.scrollBy(e.deltaY * unit);
      },
      { passive: false },
    );
    this.thumb.addEventListener('mousedown', (e) => {
      const r = this.thumb.getBoundingClientRect();
      this.drag = { offset: e.clientY - r.top };
      e.preventDefault();
      e.stopPropagation();
    });
    bar.addEventListener('mousedown', (e) => {
      this.drag = { offset: this.thumb.offsetHeight / 2 };
      this.dragTo(e.clientY);
      e.preventDefault();
    });
    window.addEventListener('mousemove', (e) => {
      if (!this.drag) return;
      if (!e.buttons) {
        this.drag = undefined;
        return;
      }
      this.dragTo(e.clientY);
    });
    window.addEventListener('mouseup', () => {
      this.drag = undefined;
    });
    new ResizeObserver(() => {
      this.invalidate();
    }).observe(viewport);
    // A live block whose height changed after it was measured: forget the stale height, lay out again.
    this.sizes = new ResizeObserver((entries) => {
      let changed = false;
      for (const e of entries) {
        const l = this.live.find((x) => x.el === e.target);
        if (!l) continue;
        const h = this.heights.get(l.block.key);
        if (h !== undefined && Math.abs(h - (e.target as HTMLElement).getBoundingClientRect().height) > 0.5) {
          this.heights.delete(l.block.key);
          changed = true;
        }
      }
      if (changed) {
        this.applyPin();
        this.schedule();
      }
    });
  }

  private applyPin(): void {
    if (this.pin && performance.now() < this.pin.until) this.revealTarget = { offset: this.pin.offset, where: this.pin.where };
    else this.pin = undefined;
  }

  /** Scrolls by `dy` pixels (positive = down). */
  scrollBy(dy: number): void {
    if (dy < 0) this.stickToEnd = false;
    this.pin = undefined;
    this.px += dy;
    this.revealTarget = undefined;
    this.schedule();
  }

  /** Jumps so that token `offset` is at the top. */
  jumpTo(offset: number): void {
    this.top = Math.max(0, Math.min(offset, this.source.total() - 1));
    this.px = 0;
    this.stickToEnd = false;
    this.revealTarget = undefined;
    this.pin = undefined;
    this.schedule();
  }

  /**
   * Scrolls so `offset` is visible: on the first line ('top'), a third down the viewport, only
   * if it is hidden ('ifHidden'), or with its top `where` pixels below the viewport's top (a
   * number: keeps a token at the same height across a view switch; clamped to the viewport).
   */
  reveal(offset: number, where: RevealWhere = 'third'): void {
    offset = Math.max(0, Math.min(offset, this.source.total() - 1));
    if (where === 'ifHidden' && this.isVisible(offset)) return;
    this.stickToEnd = false;
    this.revealTarget = { offset, where };
    this.pin = where === 'ifHidden' ? undefined : { offset, where, until: performance.now() + PIN_MS };
    if (!this.live.some((l) => l.block.start <= offset && offset < l.block.end)) {
      this.top = offset;
      this.px = 0;
    }
    this.schedule();
  }

  /** Scrolls to the end of the file (last token at the bottom). */
  scrollToEnd(): void {
    this.top = Math.max(0, this.source.total() - 1);
    this.px = Number.MAX_SAFE_INTEGER;
    this.stickToEnd = true;
    this.revealTarget = undefined;
    this.pin = undefined;
    this.schedule();
  }

  /** Forgets measured heights and DOM (width, view or data changed) and lays out again. */
  invalidate(): void {
    this.heights.clear();
    for (const l of this.live) {
      this.sizes.unobserve(l.el);
      l.el.remove();
    }
    this.live = [];
    this.applyPin();
    this.schedule();
  }

  /** Re-renders the blocks whose range intersects `[start, end)` (their data or decorations changed). */
  refresh(start = 0, end = Number.MAX_SAFE_INTEGER): void {
    for (const l of this.live) {
      if (l.block.end > start && l.block.start < end) {
        const el = this.source.render(l.block);
        this.sizes.unobserve(l.el);
        l.el.replaceWith(el);
        l.el = el;
        this.sizes.observe(el);
      }
    }
    this.schedule();
  }

  /** The rendered elements with their blocks, top to bottom. */
  get rendered(): readonly { block: ScrollBlock; el: HTMLElement }[] {
    return this.live;
  }

  /** True when token `offset` is rendered inside the viewport. */
  isVisible(offset: number): boolean {
    const l = this.live.find((x) => x.block.start <= offset && offset < x.block.end);
    if (!l) return false;
    const tok = this.source.tokenElement(l.el, offset) ?? l.el;
    const vr = this.viewport.getBoundingClientRect();
    const r = tok.getBoundingClientRect();
    return r.bottom > vr.top && r.top < vr.bottom;
  }

  /** Lays out on the next animation frame. */
  schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.layout();
    });
  }

  /** Lays out now (tests and reveal call this through `schedule`). */
  layout(): void {
    const total = this.source.total();
    const H = this.viewport.clientHeight;
    if (total === 0 || H === 0) {
      for (const l of this.live) this.drop(l);
      this.live = [];
      this.updateBar(0, 0, 0);
      return;
    }
    if (this.stickToEnd) {
      this.top = total - 1;
      this.px = Number.MAX_SAFE_INTEGER;
    }
    this.top = Math.max(0, Math.min(this.top, total - 1));
    let first = this.source.blockAt(this.top);
    for (let pass = 0; pass < 6; pass++) {
      // Keep the live list contiguous and starting at `first` (or reset it after a jump).
      this.anchorAt(first);
      // Walk up while the top is above the first block.
      while (this.px < 0 && first.start > 0) {
        first = this.source.blockAt(first.start - 1);
        this.prepend(first);
        this.px += this.height(0);
      }
      if (this.px < 0) this.px = 0;
      // Walk down past blocks scrolled out above.
      while (this.px >= this.height(0) && first.end < total) {
        this.px -= this.height(0);
        first = this.source.blockAt(first.end);
        this.drop(this.live.shift()!);
        if (this.live.length === 0 || this.live[0].block.key !== first.key) this.anchorAt(first);
      }
      // Reveal a token once its block is real (not a placeholder).
      if (this.revealTarget) {
        const t = this.revealTarget;
        const idx = this.ensureCovering(t.offset);
        const l = idx >= 0 ? this.live[idx] : undefined;
        const tokEl = l ? this.source.tokenElement(l.el, t.offset) : undefined;
        if (l && tokEl) {
          let y = 0;
          for (let i = 0; i < idx; i++) y += this.height(i);
          const tokTop = y + relativeTop(tokEl, l.el);
          const at =
            typeof t.where === 'number'
              ? Math.max(0, Math.min(t.where, H - tokEl.getBoundingClientRect().height))
              : t.where === 'top'
                ? 0
                : Math.round(H / 3);
          this.px = tokTop - at;
          this.revealTarget = undefined;
          continue; // re-normalise
        }
      }
      // Fill the viewport and one screen more.
      let y = this.height(0) - this.px;
      let i = 1;
      let last = first;
      while (y < H + this.overscanPx && last.end < total) {
        const next = this.source.blockAt(last.end);
        if (i < this.live.length && this.live[i].block.key === next.key) {
          /* reuse */
        } else {
          this.truncate(i);
          this.append(next);
        }
        y += this.height(i);
        last = next;
        i++;
      }
      this.truncate(i);
      // At the end of the file: no empty space below the last block.
      if (last.end >= total && y < H && (first.start > 0 || this.px > 0)) {
        this.px -= H - y;
        if (this.px < 0 && first.start === 0) {
          this.px = 0;
        } else continue;
      }
      if (this.stickToEnd && last.end >= total && y > H) {
        this.px += y - H;
        continue;
      }
      break;
    }
    this.top = first.start;
    this.content.style.transform = `translateY(${-Math.round(this.px)}px)`;
    const lastBlock = this.live[this.live.length - 1]?.block ?? first;
    // Tokens in view, estimated from the rendered blocks' sizes.
    let shown = 0,
      hsum = 0;
    for (let i = 0; i < this.live.length; i++) {
      shown += this.live[i].block.end - this.live[i].block.start;
      hsum += this.height(i);
    }
    this.visibleTokens = Math.max(1, Math.round(hsum > 0 ? shown * Math.min(1, H / hsum) : shown));
    const topToken = first.start + (this.height(0) > 0 ? (this.px / this.height(0)) * (first.end - first.start) : 0);
    this.updateBar(topToken, total, H);
    this.source.onLayout?.(first, lastBlock, topToken);
  }

  /** The reveal still waiting for its block (its page not loaded yet), if any. */
  get pendingReveal(): { offset: number; where: RevealWhere } | undefined {
    return this.revealTarget ? { ...this.revealTarget } : undefined;
  }

  /** Pixels from the viewport's top to the top of token `offset`, when it is rendered inside the viewport. */
  tokenY(offset: number): number | undefined {
    const l = this.live.find((x) => x.block.start <= offset && offset < x.block.end);
    if (!l || l.block.key.startsWith('ph:')) return undefined;
    const tok = this.source.tokenElement(l.el, offset);
    if (!tok) return undefined;
    const vr = this.viewport.getBoundingClientRect();
    const r = tok.getBoundingClientRect();
    if (r.bottom <= vr.top || r.top >= vr.bottom) return undefined;
    return r.top - vr.top;
  }

  /** Offset of the first token visible at the top (fractional blocks rounded down). */
  get topToken(): number {
    const f = this.live[0];
    if (!f) return this.top;
    const h = this.height(0);
    return Math.min(f.block.end - 1, f.block.start + Math.floor(h > 0 ? (this.px / h) * (f.block.end - f.block.start) : 0));
  }

  private anchorAt(first: ScrollBlock): void {
    if (this.live.length && this.live[0].block.key === first.key) return;
    const idx = this.live.findIndex((l) => l.block.key === first.key);
    if (idx > 0) {
      for (const l of this.live.splice(0, idx)) this.drop(l);
      return;
    }
    for (const l of this.live) this.drop(l);
    this.live = [];
    this.append(first);
  }

  /** Index of the live block covering `offset`, rendering forward from the last live block if needed (-1 if a placeholder). */
  private ensureCovering(offset: number): number {
    let idx = this.live.findIndex((l) => l.block.start <= offset && offset < l.block.end);
    const total = this.source.total();
    let guard = 0;
    while (idx < 0 && guard++ < 400) {
      const last = this.live[this.live.length - 1];
      if (!last || last.block.end >= total || last.block.start > offset) return -1;
      this.append(this.source.blockAt(last.block.end));
      if (this.live[this.live.length - 1].block.key.startsWith('ph:') && this.live[this.live.length - 1].block.start <= offset) return -1;
      idx = this.live.findIndex((l) => l.block.start <= offset && offset < l.block.end);
    }
    return idx >= 0 && !this.live[idx].block.key.startsWith('ph:') ? idx : -1;
  }

  private prepend(block: ScrollBlock): void {
    const el = this.source.render(block);
    this.content.prepend(el);
    this.live.unshift({ block, el });
    this.sizes.observe(el);
  }

  private append(block: ScrollBlock): void {
    const el = this.source.render(block);
    this.content.append(el);
    this.live.push({ block, el });
    this.sizes.observe(el);
  }

  private drop(l: { el: HTMLElement }): void {
    this.sizes.unobserve(l.el);
    l.el.remove();
  }

  private truncate(n: number): void {
    while (this.live.length > n) this.drop(this.live.pop()!);
  }

  private height(i: number): number {
    const l = this.live[i];
    if (!l) return 0;
    let h = this.heights.get(l.block.key);
    if (h === undefined || l.block.key.startsWith('ph:')) {
      h = l.el.getBoundingClientRect().height;
      this.heights.set(l.block.key, h);
    }
    return h;
  }

  private updateBar(topToken: number, total: number, H: number): void {
    const span = Math.max(1, total - this.visibleTokens);
    const visible = total > this.visibleTokens;
    this.bar.classList.toggle('hidden', !visible);
    if (!visible) return;
    const trackH = this.bar.clientHeight;
    const thumbH = Math.max(MIN_THUMB, Math.round((trackH * this.visibleTokens) / total));
    const frac = Math.max(0, Math.min(1, topToken / span));
    this.thumb.style.height = `${thumbH}px`;
    this.thumb.style.transform = `translateY(${Math.round(frac * (trackH - thumbH))}px)`;
    this.bar.setAttribute('aria-valuenow', String(Math.round(frac * 100)));
    void H;
  }

  private dragTo(clientY: number): void {
    const r = this.bar.getBoundingClientRect();
    const thumbH = this.thumb.offsetHeight;
    const frac = Math.max(0, Math.min(1, (clientY - r.top - (this.drag?.offset ?? 0)) / Math.max(1, r.height - thumbH)));
    const total = this.source.total();
    if (frac >= 1) {
      this.scrollToEnd();
      return;
    }
    this.jumpTo(Math.floor(frac * Math.max(0, total - this.visibleTokens)));
  }
}

/** Top of `el` relative to its ancestor `block` (offsetTop chains through positioned parents). */
function relativeTop(el: HTMLElement, block: HTMLElement): number {
  return el.getBoundingClientRect().top - block.getBoundingClientRect().top;
}
