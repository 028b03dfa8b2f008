/**
 * Test-side view of the running extension: the API `activate` returns (the composition root's
 * objects), snapshots of the open shard editors, and a recorder of the messages the host sends to
 * their webviews (through `tapMessages`, so product code keeps no recorder).
 */
import * as path from 'path';
import * as vscode from 'vscode';
import type { TokenShardsApi } from '../../src/extension';
import type {
  ShardHighlight,
  ShardInitToWebview,
  ShardNumberingToWebview,
  ShardPageReply,
  ShardToWebview,
  ShardView,
} from '../../src/protocol/shard';
import type { Envelope } from '../../src/shared/channel';

export const EXTENSION_ID = 'token-shards.token-shard-inspector';
const SHARD_VIEW = 'tokenShards.shardEditor';

/** A page the host sent (the answer to a `page` request, or the one inside `init`), tagged like an event for the tests. */
export interface ShardPageMessage extends ShardPageReply {
  type: 'page';
}
/** What the host sent to a shard editor: its events and its page answers. */
export type RecordedShardMessage = ShardToWebview | ShardPageMessage;

/** One open shard editor as the tests see it. */
export interface SessionSnapshot {
  uri: string;
  fileName: string;
  active: boolean;
  generation: number;
  cursor: number;
  selection?: [number, number];
  view: ShardView;
  highlights: ShardHighlight[];
  highlightedUpdate?: number;
  numbering: ShardNumberingToWebview;
  init: ShardInitToWebview;
  statusText?: string;
  messages: RecordedShardMessage[];
}

/** Argument of {@link snapshot}; every field optional. */
export interface SnapshotArg {
  /** Start/stop recording the messages sent to shard editors. */
  record?: boolean;
  /** Forget recorded messages. */
  clear?: boolean;
  /** Reveal first: `global` = offset is global in the file's dataset. */
  reveal?: { file: string; offset: number; global?: boolean; highlight?: { start: number; end: number; label?: string }[] };
  /** Switch the focused shard editor's view first. */
  setView?: ShardView;
}

/** Resolves after `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` every 100 ms until it returns a truthy value or `ms` pass; returns the last value. */
export async function waitFor<T>(check: () => T | Promise<T>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await check();
  while (!value && Date.now() < deadline) {
    await delay(100);
    value = await check();
  }
  return value;
}

/** The running extension's API (activates it). */
export async function api(): Promise<TokenShardsApi> {
  const ext = vscode.extensions.getExtension<TokenShardsApi>(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not installed`);
  return ext.activate();
}

/** Recorded messages per shard file URI (bounded: pages and numbering are dropped first). */
const recorded = new Map<string, RecordedShardMessage[]>();
/** Page request ids in flight per shard file URI → nothing (only `page` requests exist). */
let tap: vscode.Disposable | undefined;

function record(resource: string, m: RecordedShardMessage): void {
  let list = recorded.get(resource);
  if (!list) recorded.set(resource, (list = []));
  list.push(m);
  // Bounded (page messages are large); the others (reveal, highlights, init…) are few and kept.
  if (list.length > 200) {
    const drop = list.length - 200;
    let dropped = 0;
    for (let i = 0; i < list.length && dropped < drop;) {
      if (list[i].type === 'page' || list[i].type === 'numbering') {
        list.splice(i, 1);
        dropped++;
      } else i++;
    }
    if (list.length > 400) list.splice(0, list.length - 400);
  }
}

function onTapped(view: string, resource: string | undefined, direction: string, env: Envelope): void {
  if (view !== SHARD_VIEW || !resource || direction !== 'toWebview') return;
  if (env.kind === 'event') {
    const body = env.body as ShardToWebview;
    // The starting page travels with `init`: recorded as a page answer too.
    if (body.type === 'init' && body.page) record(resource, { type: 'page', ...body.page });
    record(resource, body);
  } else if (env.kind === 'response' && env.result) record(resource, { type: 'page', ...(env.result as ShardPageReply) });
}

/**
 * Snapshot of every open shard editor, after doing what `arg` asks (record, clear, reveal,
 * setView): the state the host keeps per session and the messages recorded for it.
 */
export async function snapshot(arg: SnapshotArg = {}): Promise<SessionSnapshot[]> {
  const a = await api();
  const p = a.shardEditors;
  if (arg.record === true && !tap) tap = a.tapMessages((m) => onTapped(m.view, m.resource, m.direction, m.envelope));
  if (arg.record === false) {
    tap?.dispose();
    tap = undefined;
  }
  if (arg.clear) recorded.clear();
  if (arg.reveal) {
    const file = vscode.Uri.file(arg.reveal.file);
    const dataset = arg.reveal.global ? await a.services.datasetForFile(file) : undefined;
    await p.reveal({ dataset, file: dataset ? undefined : file, offset: arg.reveal.offset, highlight: arg.reveal.highlight });
  }
  if (arg.setView) void p.commandTarget()?.post({ type: 'setView', view: arg.setView });
  return [...p.sessions].map((s) => ({
    uri: s.document.uri.toString(),
    fileName: path.basename(s.document.uri.fsPath),
    active: s === p.active,
    generation: s.document.generation,
    cursor: s.cursor,
    selection: s.selection,
    view: s.view,
    highlights: s.highlights,
    highlightedUpdate: s.highlightedUpdate,
    numbering: s.document.numbering,
    init: s.document.initMessage(),
    statusText: s === p.active ? p.statusBar.text : undefined,
    messages: [...(recorded.get(s.document.uri.toString()) ?? [])],
  }));
}
