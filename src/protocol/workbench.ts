/**
 * Messages of the loss-spike workbench panels, shared by the hosts (src/panels/inspectUpdates.ts,
 * src/panels/trainingLogPanel.ts) and the webviews (webview/inspectUpdates.ts,
 * webview/trainingLog.ts): {@link InspectProtocol} and {@link TrainingLogProtocol}. Plain JSON
 * only: no paths, no typed arrays. `PanelHost` saves their exports (src/protocol/panel.ts).
 */
import type { AnyUpdateStats, StatColumn } from '../core/stats';
import type { StepConvention } from '../core/trainingLog/parse';
import type { Spike } from '../core/trainingLog/spikes';
import type { ViewProtocol } from '../shared/channel';

/** A statistic column as the panels show it. */
export interface StatColumnInfo {
  key: StatColumn;
  /** Short header. */
  label: string;
  /** The exact definition (tooltip). */
  definition: string;
}

// ───────────── Inspect Updates Around… ─────────────

/** Host → webview: the window being computed. */
export interface InspectInit {
  type: 'init';
  /** Dataset folder name (display only). */
  dataset: string;
  /** Opaque key of the dataset (kept in the webview's state; the host maps it back to the root). */
  datasetKey: string;
  numUpdates: number;
  center: number;
  radius: number;
  /** First and last update of the window (clipped to the stream). */
  first: number;
  last: number;
  columns: StatColumnInfo[];
  /** False when there is no tokenizer (unknown_ids / special_ids are empty). */
  tokenizer: boolean;
  /**
   * The run's order the updates follow (its short name, e.g. `Megatron order, B=512 samples of
   * 2,049 tokens`), absent for the card's sequential order; rows are then statistics of the run's steps.
   */
  order?: string;
}
/** Host → webview: records computed so far (appended in update order). */
export interface InspectRows {
  type: 'rows';
  rows: AnyUpdateStats[];
  done: number;
  total: number;
}
/** Host → webview: the computation failed (one sentence). */
export interface InspectError {
  type: 'error';
  message: string;
}
/** Everything the inspect host sends. */
export type InspectToWebview = InspectInit | InspectRows | InspectError;

/** Webview → host: open update k in the update view. */
export interface InspectOpenUpdate {
  type: 'openUpdate';
  update: number;
}
/** Webview → host: inspect another window. */
export interface InspectRecenter {
  type: 'recenter';
  center: number;
  radius: number;
}
/** Webview → host: export the window's updates (Export Updates… with the range filled in). */
export interface InspectExportUpdates {
  type: 'exportUpdates';
  first: number;
  last: number;
}
/** Everything the inspect webview sends (besides the export `PanelHost` saves). */
export type InspectFromWebview = InspectOpenUpdate | InspectRecenter | InspectExportUpdates;

/** The Inspect Updates panel's channel (events only). */
export interface InspectProtocol extends ViewProtocol {
  hostEvents: InspectToWebview;
  webviewEvents: InspectFromWebview;
  hostRequests: Record<never, never>;
  webviewRequests: Record<never, never>;
}

/** State the inspect webview keeps (redraw after reload; the serializer reopens the window). */
export interface InspectState {
  /** Opaque dataset key (the host maps it to a root). */
  datasetKey?: string;
  center?: number;
  radius?: number;
  sort?: { key: string; descending: boolean };
}

// ───────────── Open Training Log… ─────────────

/** Host → webview: a parsed log. */
export interface LogLoaded {
  type: 'log';
  /** File name (display only). */
  fileName: string;
  stepColumn: string;
  lossColumn: string;
  convention: StepConvention;
  /** Plain words for the axis: "logged step s = loss of update s − 1 (…)". */
  conventionText: string;
  /** Sentences about what was read (restarts, NaN, out of range, decimation, ambiguity). */
  summary: string[];
  /** The loss for drawing (min/max decimated): x = update under the convention, null = non-finite. */
  x: number[];
  y: (number | null)[];
  /** Updates in the dataset (valid 0..numUpdates−1), or 0 without a dataset. */
  numUpdates: number;
  threshold: number;
  window: number;
  columns: StatColumnInfo[];
}
/** Host → webview: the spikes for the current threshold/window. */
export interface LogSpikes {
  type: 'spikes';
  spikes: Spike[];
  threshold: number;
  window: number;
}
/** Host → webview: one statistic for the second axis, sampled at `updates` (null = cleared). */
export interface LogOverlay {
  type: 'overlay';
  column: StatColumn | null;
  label: string;
  updates: number[];
  values: (number | null)[];
  sampled: boolean;
}
/** Host → webview: a message to show in the panel (bad input, progress). */
export interface LogNotice {
  type: 'notice';
  message: string;
  level: 'info' | 'error';
}
/** Everything the training-log host sends. */
export type LogToWebview = LogLoaded | LogSpikes | LogOverlay | LogNotice;

/** Webview → host: recompute spikes. */
export interface LogSetThreshold {
  type: 'threshold';
  threshold: number;
  window: number;
}
/** Webview → host: Inspect Updates Around `update`. */
export interface LogInspect {
  type: 'inspect';
  update: number;
}
/** Webview → host: draw a statistic on the second axis (null clears it). */
export interface LogSetOverlay {
  type: 'overlay';
  column: StatColumn | null;
}
/** Everything the training-log webview sends (besides the export `PanelHost` saves). */
export type LogFromWebview = LogSetThreshold | LogInspect | LogSetOverlay;

/** The training-log panel's channel (events only). */
export interface TrainingLogProtocol extends ViewProtocol {
  hostEvents: LogToWebview;
  webviewEvents: LogFromWebview;
  hostRequests: Record<never, never>;
  webviewRequests: Record<never, never>;
}

/** State the training-log webview keeps. */
export interface LogState {
  threshold?: number;
  window?: number;
  overlay?: StatColumn | null;
}
