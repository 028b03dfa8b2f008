/**
 * The shard webview's page cache: the pages the host sent (at most {@link MAX_PAGES}, least
 * recently used dropped first), the requests in flight (each abortable: a page scrolled past is
 * withdrawn), and the pages that failed. The only owner of page data in the webview; everything
 * else reads through {@link PageCache.get}.
 */
import type { ShardPageReply } from '../../src/protocol/shard';
import { PageData } from './model';

/** Pages kept in memory here (each up to 32,768 tokens). */
export const MAX_PAGES = 12;

/** How the cache talks to the host: one `page` request per page (the channel's request/response). */
export interface PageSource {
  /** Asks for page `index` of `generation`; rejects with `{ cancelled: true }` when `signal` aborted it. */
  fetch(generation: number, index: number, signal: AbortSignal): Promise<ShardPageReply>;
  /** A page arrived and is cached (not called for pages of an older generation). */
  loaded(page: PageData, reply: ShardPageReply): void;
  /** A page failed (its message is kept and shown in place of the page). */
  failed(index: number, message: string): void;
}

/** See the module comment. Page indexes count pages of `pageTokens` tokens from local offset 0. */
export class PageCache {
  private readonly pages = new Map<number, PageData>();
  private readonly pending = new Map<number, AbortController>();
  private readonly errors = new Map<number, string>();
  private generation = 0;
  private count = 0;
  private eos = 100257;

  constructor(
    private readonly source: PageSource,
    readonly max = MAX_PAGES,
  ) {}

  /** Forgets everything (a new file or a reload): requests carry `generation` from now on. */
  reset(generation: number, pageCount: number, eos: number): void {
    for (const ac of this.pending.values()) ac.abort();
    this.pages.clear();
    this.pending.clear();
    this.errors.clear();
    this.generation = generation;
    this.count = pageCount;
    this.eos = eos;
  }

  /** The page, marked as recently used; undefined when not loaded. */
  get(i: number): PageData | undefined {
    const p = this.pages.get(i);
    if (p) {
      this.pages.delete(i);
      this.pages.set(i, p);
    }
    return p;
  }

  /** The error the host reported for page `i`, if any. */
  error(i: number): string | undefined {
    return this.errors.get(i);
  }

  /** Stores a page the host sent without being asked (the first page comes with `init`). */
  put(reply: ShardPageReply): void {
    if (reply.generation !== this.generation || reply.index < 0 || reply.index >= this.count) return;
    this.pending.get(reply.index)?.abort();
    this.pending.delete(reply.index);
    const page = new PageData(reply, this.eos);
    this.pages.set(reply.index, page);
    this.source.loaded(page, reply);
  }

  /** Asks the host for page `i` unless it is loaded, in flight, failed or out of range. */
  request(i: number): void {
    if (i < 0 || i >= this.count || this.pages.has(i) || this.pending.has(i) || this.errors.has(i)) return;
    const ac = new AbortController();
    this.pending.set(i, ac);
    const generation = this.generation;
    this.source.fetch(generation, i, ac.signal).then(
      (reply) => {
        if (reply.generation !== this.generation || this.pending.get(i) !== ac) return;
        this.pending.delete(i);
        const page = new PageData(reply, this.eos);
        this.pages.set(i, page);
        this.source.loaded(page, reply);
      },
      (err: { cancelled?: boolean; message?: string }) => {
        if (err?.cancelled || generation !== this.generation || this.pending.get(i) !== ac) return;
        this.pending.delete(i);
        this.errors.set(i, err?.message ?? String(err));
        this.source.failed(i, err?.message ?? String(err));
      },
    );
  }

  /** Withdraws the requests for pages not in `needed` (a drag of the scrollbar passes many). */
  withdrawExcept(needed: Set<number>): void {
    for (const [p, ac] of [...this.pending]) {
      if (!needed.has(p)) {
        ac.abort();
        this.pending.delete(p);
      }
    }
  }

  /** Drops least recently used pages beyond the limit, never those in `keep`. */
  evict(keep: Set<number>): void {
    for (const k of this.pages.keys()) {
      if (this.pages.size <= this.max) break;
      if (!keep.has(k)) this.pages.delete(k);
    }
  }
}
