/**
 * The shard webview's page cache: the pages the host sent (at most {@link MAX_PAGES}, least
 * recently used dropped first), the requests in flight, and the pages that failed. The only
 * owner of page data in the webview; everything else reads through {@link PageCache.get}.
 */
import type { ShardFromWebview, ShardPageToWebview } from '../../src/protocol';
import { PageData } from './model';

/** Pages kept in memory here (each up to 32,768 tokens). */
export const MAX_PAGES = 12;

/** See the module comment. Page indexes count pages of `pageTokens` tokens from local offset 0. */
export class PageCache {
  private readonly pages = new Map<number, PageData>();
  private readonly pending = new Set<number>();
  private readonly errors = new Map<number, string>();
  private generation = 0;
  private count = 0;

  /** `send` posts a message to the host (page requests and cancellations). */
  constructor(private readonly send: (msg: ShardFromWebview) => void, readonly max = MAX_PAGES) {}

  /** Forgets everything (a new file or a reload): requests carry `generation` from now on. */
  reset(generation: number, pageCount: number): void {
    this.pages.clear(); this.pending.clear(); this.errors.clear();
    this.generation = generation;
    this.count = pageCount;
  }

  /** The page, marked as recently used; undefined when not loaded. */
  get(i: number): PageData | undefined {
    const p = this.pages.get(i);
    if (p) { this.pages.delete(i); this.pages.set(i, p); }
    return p;
  }

  /** The error the host reported for page `i`, if any. */
  error(i: number): string | undefined {
    return this.errors.get(i);
  }

  /** Asks the host for page `i` unless it is loaded, in flight, failed or out of range. */
  request(i: number): void {
    if (i < 0 || i >= this.count || this.pages.has(i) || this.pending.has(i) || this.errors.has(i)) return;
    this.pending.add(i);
    this.send({ type: 'requestPage', generation: this.generation, index: i });
  }

  /** Withdraws the requests for pages not in `needed` (a drag of the scrollbar passes many). */
  withdrawExcept(needed: Set<number>): void {
    for (const p of [...this.pending]) {
      if (!needed.has(p)) { this.pending.delete(p); this.send({ type: 'cancelPage', index: p }); }
    }
  }

  /** Drops least recently used pages beyond the limit, never those in `keep`. */
  evict(keep: Set<number>): void {
    for (const k of this.pages.keys()) {
      if (this.pages.size <= this.max) break;
      if (!keep.has(k)) this.pages.delete(k);
    }
  }

  /** Stores a page the host sent; undefined when it belongs to an older generation. */
  received(m: ShardPageToWebview, eos: number): PageData | undefined {
    if (m.generation !== this.generation) return undefined;
    this.pending.delete(m.index);
    const page = new PageData(m, eos);
    this.pages.set(m.index, page);
    return page;
  }

  /** Records a failed page; false when the message belongs to an older generation. */
  failed(generation: number, index: number, message: string): boolean {
    if (generation !== this.generation) return false;
    this.pending.delete(index);
    this.errors.set(index, message);
    return true;
  }
}
