/**
 * The typed messages between the extension host and the webviews, shared by both sides: one
 * {@link ViewProtocol} per webview (events each way, requests each way), carried by the one
 * message channel of `src/shared/channel.ts` (envelope, request ids, responses, errors,
 * cancellation, the ready handshake). Every message is a plain JSON-serialisable object.
 * Units: `offset`/`start`/`count` fields are in tokens; "global" means a global token offset
 * in the dataset's stream (for a lone shard without a manifest, local offsets are used and
 * `global` flags say so).
 *
 * Naming: event `type`s and request methods are camelCase, without a view prefix (the protocol
 * type scopes them); `…ToWebview` types are sent by the host, `…FromWebview` by the webview.
 * How to add a message: CONTRIBUTING.md ("How to add a webview panel / a message").
 */
import type { PagePayload } from './core/pages';
import type { AnomalyMark } from './core/streamIndex/anomalies';
import type { TokenPiece } from './core/tokenizer';
import type { UpdateViewData } from './core/updateModel';
import type { ViewProtocol } from './shared/channel';

export type { AnomalyMark, PagePayload, TokenPiece, ViewProtocol };
export type { UpdateViewData, UpdateViewRow, UpdateViewSegment, NextToken } from './core/updateModel';

// ───────────────────────────── Shard editor ─────────────────────────────
// (owned by src/editor/shardEditor.ts and webview/shardEditor.ts)
// Offsets in these messages are LOCAL token offsets in the shard file; the webview adds
// `ShardInit.globalStart` (when the shard belongs to a dataset) to show global offsets.

/** The three views of the shard editor. */
export type ShardView = 'documents' | 'tokens' | 'ids';

/** A banner above the shard view (bad input, missing tokenizer…). */
export interface ShardBanner {
  /** Stable identifier (tests and de-duplication): 'size', 'empty', 'dtype', 'tokenizer', 'manifest', 'read'. */
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

/** Every event the shard editor host sends (the pages are answers to `page` requests). */
export type ShardToWebview =
  ShardInitToWebview | ShardNumberingToWebview | ShardRevealToWebview | ShardHighlightsToWebview | ShardSetViewToWebview;

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
 * moment the open was asked for (issue 14 item 7).
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

// ───────────────────────────── Manifest editor ──────────────────────────
// (owned by src/editor/manifestEditor.ts and webview/manifestEditor.ts)

/** One top-level key of `manifest.json` / `verification.json`, ready to show as text. */
export interface ManifestField {
  key: string;
  /** Scalars as text (integers with thousands separators unless the key names an id/seed/year/version); objects and arrays as 2-space JSON. */
  value: string;
  /** True when `value` is multi-line JSON (object or array). */
  nested: boolean;
}

/**
 * Verification status of a table row: `not-checked` (never verified, or the file changed since),
 * `queued` (waiting in a run), `checking` (being hashed now), else a `ShardStatus` of `src/core/verify/verify.ts`.
 */
export type ManifestRowStatus =
  'not-checked' | 'queued' | 'checking' | 'ok' | 'mismatch' | 'missing' | 'size-mismatch' | 'changed' | 'unreadable' | 'no-hash';

/** One shard of the manifest table. Offsets/counts in tokens, sizes in bytes, times in ms since the epoch. */
export interface ManifestRow {
  /** Index after sorting by start token (0-based). */
  index: number;
  /** The manifest's `shard` field (path relative to the dataset root, as written). */
  shard: string;
  /** 1-based line in `shard_manifest.jsonl`. */
  line: number;
  startToken: number;
  numTokens: number;
  /** First and last 0-based update whose input tokens lie in the shard; null when none (look-ahead only). */
  firstUpdate: number | null;
  lastUpdate: number | null;
  /** Size on disk (null: missing or unreadable). */
  sizeOnDisk: number | null;
  /** `4 × num_tokens`. */
  expectedSize: number;
  status: ManifestRowStatus;
  /** The manifest's `sha256` (64 lowercase hex digits as written), null when the line has none. */
  sha256: string | null;
  /** When it was last hashed (null: never). */
  checkedAt: number | null;
  /** One sentence about the status (tooltip). */
  detail: string | null;
}

/** Dataset totals for the header. */
export interface ManifestTotals {
  shards: number;
  /** Sum of `num_tokens` (look-ahead included). */
  storedTokens: number;
  /** `updates × G`. */
  trainingTokens: number;
  /** Number of updates (0-based indices `0 … updates−1`). */
  updates: number;
  /** G. */
  tokensPerUpdate: number;
  sequencesPerUpdate: number;
  /** L. */
  sequenceLength: number;
  /** Where G and L came from ('default' | 'setting' | 'manifest.json'). */
  tokensPerUpdateSource: string;
  sequenceLengthSource: string;
}

/** A problem of the dataset, for the banner (Problems has the full list). */
export interface ManifestProblemItem {
  severity: 'error' | 'warning';
  message: string;
  line: number | null;
  file: string;
}

/** Host → manifest table: everything to show (replaces what is shown). */
export interface ManifestInit {
  type: 'init';
  /** Dataset folder name (not the path). */
  name: string;
  /** `manifest.json` keys, null when the file is absent or invalid. */
  provenance: ManifestField[] | null;
  /** `verification.json` keys, null when absent or invalid. */
  verification: ManifestField[] | null;
  totals: ManifestTotals;
  rows: ManifestRow[];
  problems: ManifestProblemItem[];
  /** Progress line of a verification running now, else null. */
  verifying: string | null;
}
/** Host → manifest table: some rows changed (status, last checked, size). */
export interface ManifestRowsChanged {
  type: 'rowsChanged';
  rows: Pick<ManifestRow, 'index' | 'status' | 'checkedAt' | 'detail' | 'sizeOnDisk'>[];
}
/**
 * Host → manifest table: the stream-index anomaly marks of the rows (replaces all; rows not listed
 * have none). The mark's text is data-derived: the webview shows it as text (tooltip) only.
 */
export interface ManifestAnomalies {
  type: 'anomalies';
  rows: ({ index: number } & AnomalyMark)[];
}
/** Host → manifest table: a verification is running (progress line) or ended (null). */
export interface ManifestVerifying {
  type: 'verifying';
  text: string | null;
}
/** Host → manifest table: the dataset could not be opened; `message` names the file and what was expected. */
export interface ManifestLoadError {
  type: 'loadError';
  message: string;
}
/** Every message the host sends to the manifest table. */
export type ManifestToWebview = ManifestInit | ManifestRowsChanged | ManifestVerifying | ManifestLoadError | ManifestAnomalies;

/** Manifest table → host: open shard `index` in the shard editor. */
export interface ManifestOpenShard {
  type: 'openShard';
  index: number;
}
/** Manifest table → host: verify every shard (`ignoreCache`: re-hash shards known good). */
export interface ManifestVerify {
  type: 'verify';
  ignoreCache: boolean;
}
/** Manifest table → host: show the Problems panel. */
export interface ManifestShowProblems {
  type: 'showProblems';
}
/** Manifest table → host: show line `line` of `shard_manifest.jsonl` as text. */
export interface ManifestRevealLine {
  type: 'revealLine';
  line: number;
}
/** Manifest table → host: copy the full manifest sha256 of shard `index` to the clipboard (the sha256 column's copy button, Ctrl+C on a row). */
export interface ManifestCopyHash {
  type: 'copyHash';
  index: number;
}
/** Every message the manifest table sends to the host. */
export type ManifestFromWebview = ManifestOpenShard | ManifestVerify | ManifestShowProblems | ManifestRevealLine | ManifestCopyHash;

/** The manifest table's channel: events only; the host answers `ready` with `init`. */
export interface ManifestProtocol extends ViewProtocol {
  hostEvents: ManifestToWebview;
  webviewEvents: ManifestFromWebview;
  hostRequests: Record<never, never>;
  webviewRequests: Record<never, never>;
}

/** What the manifest table keeps with `setState`: scroll position, selected row, filter. */
export interface ManifestViewState {
  scrollTop: number;
  selected: number;
  problemsOnly: boolean;
  /** The header (totals, metadata) is collapsed to its title and toolbar (absent in older states: expanded). */
  headCollapsed?: boolean;
}

// ───────────────────────────── Update view ──────────────────────────────
// (owned by src/editor/updateView.ts and webview/updateView.ts)

/**
 * Host → update view, the `show` request: show update `data.update` (replaces what is shown);
 * scroll to `focusRow` when given. Answered once every row is in the DOM ({@link UpdateViewShown});
 * a `show` superseded by a newer one is answered with a cancelled error.
 */
export interface UpdateViewShow {
  /** Opaque dataset key for {@link UpdateViewState} (a hash, not a path). */
  key: string;
  /** Dataset folder name, for the header. */
  datasetName: string;
  data: UpdateViewData;
  focusRow?: number;
}
/**
 * Host → update view: document numbering for the update shown. `firstDocument` = number of the
 * document holding the first input token (the view counts on from there, one per EOS); when
 * undefined, `note` says why (too many shards to scan) and the view offers "Number documents".
 */
export interface UpdateViewDocuments {
  type: 'documents';
  update: number;
  firstDocument?: number;
  note?: string;
  busy?: boolean;
}
/** Host → update view: update `update` is being read (keep the old rows, show a progress bar). */
export interface UpdateViewLoading {
  type: 'loading';
  update: number;
}
/** Host → update view: reading or validating failed; `message` names the offset/file and the valid range. */
export interface UpdateViewError {
  type: 'error';
  message: string;
}
/** Host → update view: scroll to and focus row `row` of the update shown. */
export interface UpdateViewFocusRow {
  type: 'focusRow';
  row: number;
}
/** Host → update view: stream-index anomaly marks of update `update`'s sequence rows (replaces all; rows not listed have none). */
export interface UpdateViewMarks {
  type: 'marks';
  update: number;
  rows: ({ row: number } & AnomalyMark)[];
}
/** Every event the host sends to the update view (`show` is a request). */
export type UpdateViewToWebview = UpdateViewDocuments | UpdateViewLoading | UpdateViewError | UpdateViewFocusRow | UpdateViewMarks;

/** Update view → host: show update `update` (prev/next buttons, the k box). */
export interface UpdateViewGo {
  type: 'go';
  update: number;
}
/**
 * Update view → host: reveal a token in its shard editor. `segment` + `char` (character offset in
 * the segment's text) for a click in text; `next` for the row's (L+1)-th token; row only = row start.
 */
export interface UpdateViewReveal {
  type: 'reveal';
  update: number;
  row: number;
  segment?: number;
  char?: number;
  next?: boolean;
}
/** Update view → host: number the documents (count EOS tokens in every shard before the update, with progress). */
export interface UpdateViewCountDocuments {
  type: 'countDocuments';
}
/** Update view → host: copy a `vscode://…/update?k=…` link to this update. */
export interface UpdateViewCopyLink {
  type: 'copyLink';
}
/** Every event the update view sends to the host. */
export type UpdateViewFromWebview = UpdateViewGo | UpdateViewReveal | UpdateViewCountDocuments | UpdateViewCopyLink;

/** The update view's answer to `show`: `rows` row elements are in the DOM for `update`. */
export interface UpdateViewShown {
  update: number;
  rows: number;
  /** From the request's arrival to the last row in the DOM, in ms. */
  ms: number;
}

/** The update view's channel: the host answers `ready` by sending `show` again (when it shows an update). */
export interface UpdateViewProtocol extends ViewProtocol {
  hostEvents: UpdateViewToWebview;
  webviewEvents: UpdateViewFromWebview;
  hostRequests: Record<never, never>;
  webviewRequests: {
    show: { params: UpdateViewShow; result: UpdateViewShown };
  };
}

/**
 * What the update view keeps with `setState` (restored after reloads by the panel serializer):
 * an opaque dataset key (never a path) and the update shown.
 */
export interface UpdateViewState {
  key: string;
  update: number;
  row?: number;
}
