/**
 * The manifest table's messages (host: src/editor/manifestEditor.ts; webview: webview/manifestEditor.ts).
 * Units: `offset`/`start`/`count` fields are in tokens; "global" means a global token offset in the
 * dataset's stream. Every message is a plain JSON-serialisable object, carried by the one message
 * channel of `src/shared/channel.ts` (envelope, request ids, responses, errors, cancellation, the
 * ready handshake). Naming: event `type`s and request methods are camelCase, without a view prefix
 * (the protocol type scopes them); `…ToWebview` types are sent by the host, `…FromWebview` by the
 * webview. How to add a message: CONTRIBUTING.md ("How to add a webview panel / a message").
 */
import type { AnomalyMark } from '../core/streamIndex/anomalies';
import type { ViewProtocol } from '../shared/channel';

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
  /** How the file stores its tokens (`uint16`, `uint32`, `int32`; the dataset card's shards are `uint32`). */
  dtype: string;
  /** Documents starting in the file, from the format's index; null where EOS separates documents (not counted here). */
  documents: number | null;
  /**
   * A hash the format carries for the file other than the manifest's sha256 (MDS `index.json`
   * `hashes`: `sha1`, `xxh64`…), null when none; the `sha256` column shows it when the row has no sha256.
   */
  formatHash: { algorithm: string; hex: string } | null;
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
  /**
   * The storage format when the table lists the files of a stream that is not the dataset card's
   * layout (no `shard_manifest.jsonl`): its name, dtype and why it was chosen; null for the card's layout.
   */
  format: { name: string; dtype: string; reason: string } | null;
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
