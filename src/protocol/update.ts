/**
 * The update view's messages (host: src/panels/updateView.ts; webview: webview/updateView.ts).
 * Units: `offset`/`start`/`count` fields are in tokens; "global" means a global token offset in the
 * dataset's stream. Every message is a plain JSON-serialisable object, carried by the one message
 * channel of `src/shared/channel.ts` (envelope, request ids, responses, errors, cancellation, the
 * ready handshake). Naming: event `type`s and request methods are camelCase, without a view prefix
 * (the protocol type scopes them); `…ToWebview` types are sent by the host, `…FromWebview` by the
 * webview. How to add a message: CONTRIBUTING.md ("How to add a webview panel / a message").
 */
import type { AnomalyMark } from '../core/streamIndex/anomalies';
import type { UpdateViewData } from '../core/updateModel';
import type { ViewProtocol } from '../shared/channel';

export type { AnomalyMark };
export type { UpdateViewData, UpdateViewRow, UpdateViewSegment, NextToken } from '../core/updateModel';

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
