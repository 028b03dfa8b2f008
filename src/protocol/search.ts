/**
 * The messages of the search panel (host: src/panels/searchPanel.ts, webview:
 * webview/searchPanel.ts), as one channel protocol ({@link SearchPanelProtocol}); `PanelHost` saves
 * its exports (src/protocol/panel.ts). No `vscode` import. Offsets are global token offsets;
 * updates are 0-based.
 */
import type { CountProgress, CountResult } from '../core/search';
import type { ViewProtocol } from '../shared/channel';

export type { CountResult };

/** What the user asked for, as typed in the form (the host parses and validates it). */
export interface SearchForm {
  /** Terms as typed: comma-separated (a literal comma as `\,`); with `ids`, terms separated by `;`, ids in a term by commas or spaces. */
  text: string;
  word: boolean;
  ignoreCase: boolean;
  ids: boolean;
  /** Updates per bucket; null = automatic (about 400 buckets). */
  per: number | null;
}

/** Schedule facts the chart needs. */
export interface SearchDatasetInfo {
  /** Opaque dataset key (a hash of the root, never a path), kept in the webview state for restore. */
  key: string;
  /** Dataset folder name (never a path). */
  name: string;
  /** Tokens per update (G). */
  G: number;
  /** Whole updates in the stream. */
  updates: number;
  /** The automatic bucket size for this dataset. */
  autoPer: number;
}

/** Progress of a running scan: the engine's progress report without its partial counts (those
 *  travel as the chart's data). Units as in {@link CountProgress}: tokens, bytes per second, ms. */
export type SearchProgressInfo = Omit<CountProgress, 'partial'>;

/** Host → webview: the dataset and the form to show (on ready, and when a command fills the form). */
export interface SearchInitToWebview {
  type: 'init';
  dataset: SearchDatasetInfo;
  form: SearchForm;
}
/** Host → webview: a scan `searchId` started (clears the chart; `terms` are the parsed terms). */
export interface SearchStartedToWebview {
  type: 'started';
  searchId: number;
  form: SearchForm;
  terms: string[];
  per: number;
}
/** Host → webview: partial counts while the scan runs. */
export interface SearchProgressToWebview {
  type: 'progress';
  searchId: number;
  progress: SearchProgressInfo;
  partial: CountResult;
}
/** Host → webview: the final counts (`cached`: from the result cache, with when it was saved). */
export interface SearchDoneToWebview {
  type: 'done';
  searchId: number;
  result: CountResult;
  ms: number;
  cached?: { savedAt: number; scanMs: number };
}
/** Host → webview: Cancel was pressed; the scan stops at its next check (then `cancelled`). */
export interface SearchCancellingToWebview {
  type: 'cancelling';
  searchId: number;
}
/** Host → webview: the scan was cancelled (partial counts stay on screen, marked as such). */
export interface SearchCancelledToWebview {
  type: 'cancelled';
  searchId: number;
}
/** Host → webview: bad input or a data fault (one sentence naming what is wrong). */
export interface SearchErrorToWebview {
  type: 'error';
  searchId: number | null;
  message: string;
}
/** Host → webview: select a bucket / term (tests, restore). */
export interface SearchSelectToWebview {
  type: 'select';
  bucket: number;
  termIndex: number;
}

/** Host → webview: terms read from a file ("Terms from file…"): fill the form with them (not run). */
export interface SearchTermsToWebview {
  type: 'terms';
  /** The form with `text` holding the file's terms (joined in the form's syntax). */
  form: SearchForm;
  /** The file's name (never its folder), for the status line. */
  fileName: string;
  /** Terms read. */
  count: number;
}

/** Everything the host sends. */
export type SearchToWebview =
  | SearchInitToWebview
  | SearchStartedToWebview
  | SearchProgressToWebview
  | SearchDoneToWebview
  | SearchCancellingToWebview
  | SearchCancelledToWebview
  | SearchErrorToWebview
  | SearchSelectToWebview
  | SearchTermsToWebview;

/** Webview → host: run this search (replaces a running one). */
export interface SearchRunFromWebview {
  type: 'run';
  form: SearchForm;
}
/** Webview → host: "Terms from file…": pick a terms file (`src/core/search/termsFile.ts`), parsed with the form's options. */
export interface SearchPickTermsFileFromWebview {
  type: 'pickTermsFile';
  form: SearchForm;
}
/** Webview → host: cancel the running scan. */
export interface SearchCancelFromWebview {
  type: 'cancel';
}
/** Webview → host: open update `update` in the update view (a bucket's updates). */
export interface SearchOpenUpdateFromWebview {
  type: 'openUpdate';
  update: number;
}
/** Webview → host: reveal occurrence `index` of the list for (termIndex, bucket) of `searchId` in the shard editor. */
export interface SearchRevealFromWebview {
  type: 'reveal';
  searchId: number;
  termIndex: number;
  bucket: number;
  index: number;
}
/** Webview → host: the chart drew the result of `searchId` with `points` points per series (tests wait on this). */
export interface SearchDrawnFromWebview {
  type: 'drawn';
  searchId: number;
  buckets: number;
  series: number;
  final: boolean;
}
/** Webview → host: the occurrence list shows rows (tests wait on this). */
export interface SearchListedFromWebview {
  type: 'listed';
  searchId: number;
  termIndex: number;
  bucket: number;
  rows: number;
}

/** Everything the webview sends as plain messages. */
export type SearchFromWebview =
  | SearchRunFromWebview
  | SearchPickTermsFileFromWebview
  | SearchCancelFromWebview
  | SearchOpenUpdateFromWebview
  | SearchRevealFromWebview
  | SearchDrawnFromWebview
  | SearchListedFromWebview;

/** One occurrence ready to show: the match and its context split so the webview inserts three text nodes. */
export interface OccurrenceRow {
  offset: number;
  update: number | null;
  sequence: number | null;
  position: number | null;
  before: string;
  match: string;
  after: string;
}

/** Request `occurrences`: rows `[start, start+count)` of the list of term `termIndex` in bucket `bucket`. */
export interface OccurrencesRequest {
  searchId: number;
  termIndex: number;
  bucket: number;
  start: number;
  count: number;
}
/** Reply: the rows found (fewer at the end), whether the list is complete, and how many are loadable at most. */
export interface OccurrencesReply {
  rows: OccurrenceRow[];
  done: boolean;
  loaded: number;
  cap: number;
}

/** The search panel's channel: the webview asks for occurrences; exports go through `PanelHost`. */
export interface SearchPanelProtocol extends ViewProtocol {
  hostEvents: SearchToWebview;
  webviewEvents: SearchFromWebview;
  hostRequests: {
    occurrences: { params: OccurrencesRequest; result: OccurrencesReply };
  };
  webviewRequests: Record<never, never>;
}

/** What the search webview keeps with `setState` (and the serializer revives from). */
export interface SearchPanelState {
  /** Opaque dataset key (a hash, not a path; the host maps it back). */
  key?: string;
  form?: SearchForm;
  /** Plot per million tokens (true, default) or raw counts. */
  perMillion?: boolean;
  bucket?: number | null;
  termIndex?: number;
  /** The search shown (to keep the selected bucket when the page reloads). */
  searchId?: number;
  /** Curves (default) or the terms × buckets heatmap. */
  view?: 'curves' | 'heatmap';
  /** Heatmap rows: by total occurrences (default) or by the bucket where each term peaks. */
  order?: 'total' | 'peak';
}
