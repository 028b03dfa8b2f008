/**
 * The shard webview's state, in one place: what the host said about the file (`init`), the
 * chosen view, cursor, selection, highlights, IDs grid width and the invisible-characters toggle.
 * It is also the {@link ViewContext} the block renderers read, so nothing is mirrored. Only the
 * entry module (webview/shardEditor.ts) changes it, through these fields and methods.
 */
import type { ShardHighlight, ShardInitToWebview, ShardRunOrder, ShardView, ShardWebviewState } from '../../src/protocol/shard';
import { Schedule } from '../../src/core/schedule';
import { DocInfo, Numbering, PageData } from './model';
import type { PageCache } from './pageCache';
import type { ViewContext } from './views';

/** See the module comment. Offsets are local token offsets in the shard. */
export class ShardState implements ViewContext {
  init?: ShardInitToWebview;
  schedule?: Schedule;
  /**
   * The run's training order at the cursor (the host's `order` event), when a run description
   * names one other than the card's: update/sample come from its reads, never from {@link schedule}.
   */
  runOrder?: ShardRunOrder;
  /** The view the user chose (kept even while the effective view is forced to IDs). */
  preferredView: ShardView;
  /** The view drawn. */
  view: ShardView;
  /** Ids per row of the IDs view. */
  cols = 16;
  numbering = new Numbering(32768, 0);
  highlights: ShardHighlight[] = [];
  cursor = 0;
  /** True once the user (or the host) put the cursor somewhere; before that it follows the top of the view. */
  cursorExplicit = false;
  /** Selected range `[start, end)` as reported to the host (a painted token selection or a text selection). */
  selection?: [number, number];
  /** True when {@link selection} was made with shift+click/arrows and is drawn by the views. */
  selectionPainted = false;
  /** Largest id seen so far (width of the IDs grid cells). */
  maxIdSeen = 0;
  /** Draw invisible characters as boxed marks (the toolbar toggle). */
  invisibles: boolean;
  /** The state restored from `getState` (applied once, by the first init of the same file). */
  readonly saved?: ShardWebviewState;
  restored = false;
  /** Opens the next (true) or previous shard (the edge markers' buttons). */
  openNeighbour?: (next: boolean) => void;

  constructor(
    private readonly cache: PageCache,
    saved: ShardWebviewState | undefined,
  ) {
    this.saved = saved;
    this.preferredView = this.view = saved?.view ?? 'documents';
    this.invisibles = saved?.invisibles ?? true;
  }

  /** Page `i` from the cache (arrow function: the renderers pass it around unbound). */
  readonly page = (i: number): PageData | undefined => this.cache.get(i);

  get total(): number {
    return this.init?.numTokens ?? 0;
  }
  get pageTokens(): number {
    return this.init?.pageTokens ?? 32768;
  }
  get eos(): number {
    return this.init?.eosId ?? 100257;
  }
  get globalStart(): number | undefined {
    return this.init?.globalStart;
  }
  get streamTokens(): number | undefined {
    return this.init?.schedule?.storedTokens;
  }
  get prevShard(): string | undefined {
    return this.init?.prevShard;
  }
  get nextShard(): string | undefined {
    return this.init?.nextShard;
  }
  /** The selection the views paint (shift+click/arrows), not a text selection. */
  get paintedSelection(): [number, number] | undefined {
    return this.selectionPainted ? this.selection : undefined;
  }

  /** Pages in the shard. */
  get pageCount(): number {
    return this.init ? Math.ceil(this.init.numTokens / this.init.pageTokens) : 0;
  }

  /** Index of the page holding local offset `o`. */
  pageOf(o: number): number {
    return Math.floor(o / this.pageTokens);
  }

  /** Takes a new `init`: resets numbering and schedule. */
  setInit(m: ShardInitToWebview): void {
    this.init = m;
    this.numbering = new Numbering(m.pageTokens, m.globalStart ?? 0);
    this.schedule = m.schedule
      ? new Schedule(
          {
            globalTokensPerUpdate: m.schedule.globalTokensPerUpdate,
            sequenceLength: m.schedule.sequenceLength,
            eosTokenId: m.schedule.eosTokenId,
          },
          m.schedule.storedTokens,
        )
      : undefined;
  }

  /** The view drawn: IDs when there is no tokenizer, else the preferred one. */
  effectiveView(): ShardView {
    return this.init && !this.init.tokenizer ? 'ids' : this.preferredView;
  }

  /** The document holding local offset `o`, as far as the cached pages and the numbering tell. */
  docAt(o: number): DocInfo {
    return this.numbering.docAt(o, this.page(this.pageOf(o)), this.page);
  }
}
