/**
 * The shard editor's messages (host: src/editor/shardEditor.ts; webview: webview/shardEditor.ts).
 * For a lone shard without a manifest, local offsets are used and `global` flags say so.
 * Units: `offset`/`start`/`count` fields are in tokens; "global" means a global token offset in the
 * dataset's stream. Every message is a plain JSON-serialisable object, carried by the one message
 * channel of `src/shared/channel.ts` (envelope, request ids, responses, errors, cancellation, the
 * ready handshake). Naming: event `type`s and request methods are camelCase, without a view prefix
 * (the protocol type scopes them); `…ToWebview` types are sent by the host, `…FromWebview` by the
 * webview. How to add a message: CONTRIBUTING.md ("How to add a webview panel / a message").
 */
import type { PagePayload } from '../core/pages';
import type { ReadWords } from '../core/order/orderText';
import type { ViewProtocol } from '../shared/channel';

export type { PagePayload };

// Offsets in these messages are LOCAL token offsets in the shard file; the webview adds
// `ShardInit.globalStart` (when the shard belongs to a dataset) to show global offsets.

/** The three views of the shard editor. */
export type ShardView = 'documents' | 'tokens' | 'ids';

/** A banner above the shard view (bad input, missing tokenizer…). */
export interface ShardBanner {
  /**
   * Stable identifier (tests and de-duplication): 'size', 'empty', 'dtype', 'tokenizer', 'manifest',
   * 'read'; for storage formats 'format' (the file cannot be opened as its format), 'storage' (the
   * format, dtype and where documents come from), 'loss' (the loss mask's legend).
   */
  id: string;
  severity: 'error' | 'warning' | 'info';
  /** One sentence naming the file/offset and the likely cause. */
  message: string;
  /** A button under the message: 'chooseTokenizer' runs `tokenShards.chooseTokenizer`. */
  action?: 'chooseTokenizer';
  /** Buttons that move the cursor to places in this shard (stream-index anomalies): local offset and the button's label. */
  places?: { offset: number; label: string }[];
}

/** Host → webview: everything the webview needs before asking for pages. Sent on `ready` and after every reload of the file. */
export interface ShardInitToWebview {
  type: 'init';
  /** Increments on every reload of the document; page requests and replies carry it. */
  generation: number;
  /** File name (no folders): the webview never sees paths. */
  fileName: string;
  /** Whole tokens shown (file size ÷ 4, rounded down). */
  numTokens: number;
  /** File size in bytes. */
  sizeBytes: number;
  /** Tokens per page (`PAGE_TOKENS`). */
  pageTokens: number;
  /** Global offset of the shard's first token; absent for a lone shard (local offsets only). */
  globalStart?: number;
  /** Name of the dataset root folder, when the shard belongs to one. */
  datasetName?: string;
  /** Schedule parameters and the stream length, for update/sequence/position (dataset only). */
  schedule?: { globalTokensPerUpdate: number; sequenceLength: number; eosTokenId: number; storedTokens: number };
  /** EOS id (documents are separated by it). */
  eosId: number;
  /** The tokenizer used to decode, when there is one (file name only). */
  tokenizer?: { name: string; vocabSize: number };
  banners: ShardBanner[];
  /** File name of the dataset's previous shard (absent for the first shard or a lone shard). */
  prevShard?: string;
  /** File name of the dataset's next shard (absent for the last shard: the stream ends here, or a lone shard). */
  nextShard?: string;
  /**
   * Where the view starts, when a reveal was asked for before the page was ready (e.g. Go to Token
   * Offset opening a shard): applied instead of the saved position, before anything is drawn.
   */
  reveal?: Omit<ShardRevealToWebview, 'type'>;
  /**
   * The page holding the starting position (the reveal's offset, else the cursor the host last
   * heard of), read while the page was loading: saves the first page request's round trip. Absent
   * when it could not be read in time (the webview then asks for it as for any page).
   */
  page?: ShardPageReply;
  /**
   * The run's training order at the cursor, as the `order` event gives it (absent: the card's
   * sequential order). Carried by `init` so that under a run's order the first cursor line says
   * `update …` while the order is asked, never the card's update for a moment.
   */
  run?: ShardRunOrder;
}

/**
 * Host's answer to the webview's `page` request: one page of tokens (see {@link PagePayload}) of
 * the document's `generation`. A page that cannot be read is an error response whose message
 * names the file and offset; a stale generation is answered with a cancelled error.
 */
export interface ShardPageReply extends PagePayload {
  generation: number;
}

/**
 * Host → webview: document numbering facts, sent as they become known (the EOS scan of this
 * shard, then the count of EOS tokens in earlier shards). All arrays are indexed by page.
 */
export interface ShardNumberingToWebview {
  type: 'numbering';
  generation: number;
  /** 'scanning': counting EOS in this shard; 'shard': per-page facts known, numbers local to the shard;
   *  'global': `docBase` known too (a lone shard is global from 0). */
  state: 'scanning' | 'shard' | 'global';
  /** Progress sentence while something is still being counted (e.g. "counting documents in earlier shards: 3 of 2,097"). */
  progress?: string;
  /** True when counting the earlier shards needs a user click (it would scan many GB). */
  canCountEarlier?: boolean;
  /** EOS tokens per page. */
  pageEos?: number[];
  /** First/last EOS index in each page, or -1. */
  pageFirstEos?: number[];
  pageLastEos?: number[];
  /** Number (0-based) of the document holding the shard's first token = EOS count before the shard. */
  docBase?: number;
  /** Global start of the document holding the shard's first token (when `headKnown`), else the scan bound. */
  headStart?: number;
  headKnown?: boolean;
  /** Global end (one past the EOS) of the document holding the shard's last token, when `tailKnown`. */
  tailEnd?: number;
  tailKnown?: boolean;
}

/** A highlighted local range in the shard editor. */
export interface ShardHighlight {
  /** Local token range `[start, end)`, clipped to the shard. */
  start: number;
  end: number;
  /** Label shown in the tooltip and the legend (e.g. "update 419 (0-based)"). */
  label?: string;
  /** Marks a boundary every `every` tokens counting from `first` (local) — sequence starts of an update. */
  boundaries?: { first: number; every: number; firstIndex: number; labelPrefix: string };
}

/** Host → webview: scroll so `offset` (local) is visible, put the cursor there and set highlights. */
export interface ShardRevealToWebview {
  type: 'reveal';
  offset: number;
  /** Replaces the current highlights when given. */
  highlights?: ShardHighlight[];
  /** Where the offset lands: 'top' = first visible line (a document's or sequence's start), 'third' (default) = a third down, with context above. */
  align?: 'top' | 'third';
}

/** Host → webview: replace the highlights (empty = none). */
export interface ShardHighlightsToWebview {
  type: 'highlights';
  highlights: ShardHighlight[];
}

/** Host → webview: switch to a view (command or test). */
export interface ShardSetViewToWebview {
  type: 'setView';
  view: ShardView;
}

/**
 * The run's training order at the cursor, when a run description (`run.json`, the
 * `tokenShards.run` setting) names an order other than the card's sequential one: the webview then
 * shows these reads instead of computing update/seq/pos from the card's schedule.
 */
export interface ShardRunOrder {
  /** Short name of the order (`Megatron order, B=8 samples of 513 tokens`). */
  name: string;
  /** Local offset (tokens) of the token the reads are of: the cursor when they were asked. */
  offset: number;
  /**
   * Every reading of that token by the run (`TrainingOrder.reads`: update, batch slot, the order's
   * sample number, position in the sample, `target` when only the last target), sorted by update;
   * empty = the run never read it; absent while the order is opening or being asked.
   */
  reads?: ReadWords[];
  /** The run description cannot be used: its one-line message (no update is shown, not the card's either). */
  error?: string;
}

/** Host → webview: the run's order at the cursor (see {@link ShardRunOrder}); `run` absent = the card's sequential order. */
export interface ShardOrderToWebview {
  type: 'order';
  run?: ShardRunOrder;
}

/** Every event the shard editor host sends (the pages are answers to `page` requests). */
export type ShardToWebview =
  | ShardInitToWebview
  | ShardNumberingToWebview
  | ShardRevealToWebview
  | ShardHighlightsToWebview
  | ShardSetViewToWebview
  | ShardOrderToWebview;

/** Webview → host: the cursor moved (local offset), with the document number the webview computed. */
export interface ShardCursorFromWebview {
  type: 'cursor';
  offset: number;
  /** Document number at the cursor, when known; `documentScope` says whether it is global or counts from this shard's first document. */
  document?: number;
  documentScope?: 'global' | 'shard';
  /** True while the shard's document numbering is still being counted (the number follows). */
  documentPending?: boolean;
  view: ShardView;
}
/** Webview → host: the selected local range `[start, end)`, or none. */
export interface ShardSelectionFromWebview {
  type: 'selection';
  range?: [number, number];
}
/** Webview → host: run one of our commands (buttons in the webview; 'copyText' = copy the selection's decoded text when the webview lacks pages). */
export interface ShardRunFromWebview {
  type: 'run';
  command: 'chooseTokenizer' | 'copyIds' | 'highlightUpdate' | 'countEarlierDocuments' | 'copyText' | 'openNextShard' | 'openPrevShard';
}

/**
 * Webview → host, once per page load: when each step of the load happened (epoch ms, this
 * machine's clock), sent after the first decoded text was drawn. The host logs it against the
 * moment the open was asked for (docs/benchmarks.md, "Opening a shard in code-server").
 */
export interface ShardTimingFromWebview {
  type: 'timing';
  /** `navigationStart` (the page began loading), `scriptStart`, `ready`, `init`, `pageRequested`, `pageArrived`, `firstText`. */
  marks: Record<string, number>;
  /** The page's resources (styles, script, fonts): start (epoch ms), duration (ms) and size (bytes, 0 when not known). */
  resources: { name: string; start: number; durationMs: number; bytes: number }[];
}

/** Every event the shard editor webview sends. */
export type ShardFromWebview = ShardCursorFromWebview | ShardSelectionFromWebview | ShardRunFromWebview | ShardTimingFromWebview;

/**
 * The shard editor's channel. The webview asks for pages with the `page` request (newest requests
 * are served first; cancel a request when the page scrolled away before it arrived); the host
 * answers `ready` with `init` (carrying any pending reveal), `numbering` and the highlights.
 */
export interface ShardEditorProtocol extends ViewProtocol {
  hostEvents: ShardToWebview;
  webviewEvents: ShardFromWebview;
  hostRequests: {
    /** Page `index` of the document's `generation`. */
    page: { params: { generation: number; index: number }; result: ShardPageReply };
  };
  webviewRequests: Record<never, never>;
}

/** What the shard webview keeps with `setState` (restored when the tab comes back). */
export interface ShardWebviewState {
  view: ShardView;
  /** Local offset of the token at the top of the view. */
  top: number;
  /** Pixels of the top block above the viewport. */
  px: number;
  /** Local offset of the cursor. */
  cursor: number;
  /** File size when saved: a different size (file replaced) resets the position. */
  sizeBytes: number;
  /** Invisible characters drawn as boxed marks (the toolbar toggle; default on). */
  invisibles?: boolean;
}
