/**
 * Parsing and validation of what people type into the navigation boxes (Go to Update…, Go to
 * Token Offset…, Go to Document…, Go to Sequence…) and into `vscode://…/update?k=…` links.
 * Every function is synchronous and vscode-free: the same rules serve the live-validated input
 * boxes (called on every keystroke), the URI handler, command arguments and the unit tests.
 *
 * Rules (docs/format.md, "Updates, sequences, targets"):
 * - updates are 0-based: `0 ≤ k < numUpdates`, `numUpdates = floor((storedTokens − 1) / G)`;
 * - sequences: `0 ≤ r < G / L`;
 * - token offsets are global: `0 ≤ o < storedTokens` (the last stored token is the look-ahead);
 * - documents are 0-based and separated by EOS (see core/documents.ts).
 * Numbers are parsed by {@link parseNumberInput} (`55_000_000`, `55,000,000`, `5.5e7`, `0x…`).
 *
 * Units: offsets and counts in tokens.
 */
import { count, fmt, ordinalSuffix } from './units';
import { ShardEntry } from './manifest';
import { parseNumberInput } from './numbers';
import { PAST_LAST_UPDATE_TEXT, Schedule } from './schedule';

/** What the validators need from an opened dataset (a `Dataset` satisfies it). */
export interface NavigationTarget {
  schedule: Schedule;
  /** Shards sorted by start token. */
  shards: readonly ShardEntry[];
  /** Tokens stored, look-ahead token included. */
  storedTokens: number;
}

/**
 * Result of a validator: a value plus a one-line `detail` to show while typing (token range,
 * shards touched…), or an `error` sentence that names the valid range.
 */
export type Validated<T> = { ok: true; value: T; detail: string } | { ok: false; error: string };

/** A (update, sequence) pair. */
export interface SequenceRef {
  /** 0-based update. */
  update: number;
  /** 0-based sequence within the update. */
  sequence: number;
}

/** The file name part of a shard's manifest path (`shards/tokens_000001.u32` → `tokens_000001.u32`). */
export function shardName(e: Pick<ShardEntry, 'shard'>): string {
  const i = Math.max(e.shard.lastIndexOf('/'), e.shard.lastIndexOf('\\'));
  return i >= 0 ? e.shard.slice(i + 1) : e.shard;
}

/**
 * Index (into `shards`) of the shard holding global token `offset`, by binary search over the
 * sorted start tokens; -1 when the offset is before the first shard or past the last one.
 */
export function shardIndexAt(shards: readonly Pick<ShardEntry, 'startToken' | 'numTokens'>[], offset: number): number {
  let lo = 0,
    hi = shards.length - 1,
    found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (shards[mid].startToken <= offset) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (found < 0) return -1;
  const s = shards[found];
  return offset < s.startToken + s.numTokens ? found : -1;
}

/** The valid update range as words: "0..399,999 (updates are 0-based)". */
export function updateRangeText(t: NavigationTarget): string {
  return t.schedule.numUpdates === 0
    ? `no update (the stream holds ${count(t.storedTokens, 'token')}; one update needs ${fmt(t.schedule.G + 1)})`
    : `0..${fmt(t.schedule.numUpdates - 1)} (updates are 0-based)`;
}

/**
 * Describes update `k` for the input box while typing: its token range and the shards its
 * inputs touch (`⌊G·k / shard⌋ … ⌊(G·(k+1) − 1) / shard⌋`, found from the manifest, not by
 * division), noting when the look-ahead token lies in the next shard.
 * Assumes `k` is valid.
 */
export function describeUpdateRange(t: NavigationTarget, k: number): string {
  const [s, e] = t.schedule.updateRange(k);
  const a = shardIndexAt(t.shards, s),
    b = shardIndexAt(t.shards, e - 1),
    la = shardIndexAt(t.shards, e);
  let shards: string;
  if (a < 0 || b < 0) shards = 'shards unknown';
  else if (a === b) shards = `shard ${shardName(t.shards[a])}`;
  else shards = `spans ${b - a + 1} shards: ${shardName(t.shards[a])} → ${shardName(t.shards[b])}`;
  const look = la >= 0 && la !== b ? ` (look-ahead token in ${shardName(t.shards[la])})` : '';
  return `update ${fmt(k)} (0-based) · tokens [${fmt(s)}, ${fmt(e)}) · ${shards}${look}`;
}

/**
 * Validates an update index typed by a person (or a link / command argument as text).
 * Rejects empty text, words, negatives, fractions and `k ≥ numUpdates`, each with a message
 * naming the valid range.
 */
export function validateUpdateInput(text: string, t: NavigationTarget): Validated<UpdateIndex> {
  const range = updateRangeText(t);
  if (t.schedule.numUpdates === 0) return { ok: false, error: `This dataset holds ${range}.` };
  const p = parseNumberInput(text);
  if (!p.ok) return { ok: false, error: `${capitalise(p.error)}. Enter an update ${range}.` };
  return checkUpdate(p.value, t);
}

/**
 * An update index checked against a dataset by {@link checkUpdate} (or {@link validateUpdateInput}):
 * the type says the check was done, so what receives one (the update view) does not check again.
 */
export type UpdateIndex = number & { readonly __checked: 'UpdateIndex' };

/** Range check of an already-parsed update index (command arguments, links, the update view's box). */
export function checkUpdate(k: number, t: NavigationTarget): Validated<UpdateIndex> {
  const range = updateRangeText(t);
  if (!Number.isSafeInteger(k) || k < 0)
    return { ok: false, error: `Update ${String(k)} is not a whole number ≥ 0. Enter an update ${range}.` };
  if (k >= t.schedule.numUpdates) {
    return {
      ok: false,
      error:
        t.schedule.numUpdates === 0
          ? `This dataset holds ${range}.`
          : `Update ${fmt(k)} is out of range: this dataset has ${count(t.schedule.numUpdates, 'update')}, ${range}.`,
    };
  }
  return { ok: true, value: k as UpdateIndex, detail: describeUpdateRange(t, k) };
}

/** Describes a global token offset: its shard and local offset, and its update/sequence/position or look-ahead role. */
export function describeOffset(t: NavigationTarget, o: number): string {
  const i = shardIndexAt(t.shards, o);
  const where = i >= 0 ? `${shardName(t.shards[i])} local ${fmt(o - t.shards[i].startToken)}` : 'no shard';
  const pos = t.schedule.position(o);
  const role = pos.lookAhead
    ? PAST_LAST_UPDATE_TEXT[t.schedule.pastLastUpdate(o)!]
    : `update ${fmt(pos.update!)} (0-based), sequence ${pos.sequence}, position ${pos.position}`;
  return `token ${fmt(o)} · ${where} · ${role}`;
}

/**
 * Validates a global token offset: `55_000_000`, `55,000,000`, `5.5e7` and `0x…` forms;
 * `0 ≤ o < storedTokens`.
 */
export function validateOffsetInput(text: string, t: NavigationTarget): Validated<number> {
  const p = parseNumberInput(text);
  const range = `0..${fmt(Math.max(0, t.storedTokens - 1))}`;
  if (!p.ok) return { ok: false, error: `${capitalise(p.error)}. Enter a global token offset ${range}.` };
  return checkOffset(p.value, t);
}

/** Range check of an already-parsed global token offset. */
export function checkOffset(o: number, t: NavigationTarget): Validated<number> {
  const range = `0..${fmt(Math.max(0, t.storedTokens - 1))}`;
  if (!Number.isSafeInteger(o) || o < 0)
    return { ok: false, error: `Token offset ${String(o)} is not a whole number ≥ 0. Enter a global token offset ${range}.` };
  if (o >= t.storedTokens) {
    return {
      ok: false,
      error: `Token offset ${fmt(o)} is past the end: the stream holds ${count(t.storedTokens, 'token')}, offsets ${range}.`,
    };
  }
  return { ok: true, value: o, detail: describeOffset(t, o) };
}

/**
 * Validates a local token offset in a lone `.u32` file opened without a manifest
 * (`0 ≤ o < tokens in the file`; no updates there: offsets are the file's own).
 */
export function validateLocalOffsetInput(text: string, fileTokens: number, fileName: string): Validated<number> {
  const range = `0..${fmt(Math.max(0, fileTokens - 1))}`;
  const p = parseNumberInput(text);
  if (!p.ok) return { ok: false, error: `${capitalise(p.error)}. Enter a token offset in ${fileName}, ${range}.` };
  if (p.value >= fileTokens)
    return {
      ok: false,
      error: `Token offset ${fmt(p.value)} is past the end of ${fileName}: it holds ${count(fileTokens, 'token')}, offsets ${range}.`,
    };
  return {
    ok: true,
    value: p.value,
    detail: `token ${fmt(p.value)} of ${fileName} (local offset: no manifest, so no global offset or update)`,
  };
}

/**
 * Validates a 0-based document number. Without a full document count only the form can be
 * checked (counting documents scans every shard's EOS tokens); pass `documentCount` when known
 * to check the range too. `counting` (with no count yet): the count is on its way (small data),
 * said in the detail; otherwise the detail says the range is known only after counting.
 */
export function validateDocumentInput(text: string, documentCount?: number, counting = false): Validated<number> {
  const p = parseNumberInput(text);
  const range =
    documentCount === undefined
      ? 'a document number ≥ 0 (documents are 0-based)'
      : `a document 0..${fmt(documentCount - 1)} (documents are 0-based)`;
  if (!p.ok) return { ok: false, error: `${capitalise(p.error)}. Enter ${range}.` };
  if (documentCount !== undefined && p.value >= documentCount) {
    return {
      ok: false,
      error: `Document ${fmt(p.value)} is out of range: the stream has ${count(documentCount, 'document')}, 0..${fmt(documentCount - 1)} (documents are 0-based).`,
    };
  }
  return {
    ok: true,
    value: p.value,
    detail:
      `document ${fmt(p.value)} (0-based: ${p.value === 0 ? 'the first document, at token 0' : `the one after the ${fmt(p.value)}${ordinalSuffix(p.value)} EOS`})` +
      (documentCount !== undefined
        ? ` · of ${count(documentCount, 'document')}`
        : p.value === 0
          ? ''
          : counting
            ? ' · counting documents… (range checked when done)'
            : ' · range known after counting (finding it counts EOS tokens shard by shard)'),
  };
}

/**
 * Splits "k r", "k/r", "k:r", "k, r" (also "k,r" when that is not one number like "55,000") into two
 * parts; undefined when the text is not two parts.
 */
export function splitSequenceInput(text: string): [string, string] | undefined {
  const t = text.trim();
  let parts = t.split(/\s*[/:]\s*|\s*,\s+|\s+/).filter((s) => s !== '');
  if (parts.length === 1 && /^[^,]+,[^,]+$/.test(t) && !/^\d{1,3},\d{3}$/.test(t)) parts = t.split(',');
  return parts.length === 2 ? [parts[0], parts[1]] : undefined;
}

/**
 * Validates "k r" / "k/r" / "k:r" / "k, r": update k (0-based) and sequence r (0 ≤ r < S = G / L);
 * or "#N", a global sequence index (0-based, counted from the stream start): N = k·S + r.
 */
export function validateSequenceInput(text: string, t: NavigationTarget): Validated<SequenceRef> {
  const rows = t.schedule.sequencesPerUpdate;
  const trimmed = text.trim();
  if (trimmed.startsWith('#')) {
    const total = t.schedule.numUpdates * rows;
    const p = parseNumberInput(trimmed.slice(1));
    if (!p.ok)
      return {
        ok: false,
        error: `Global sequence index: ${p.error}. Enter #N with N 0..${fmt(Math.max(0, total - 1))} (N = k·${rows} + r).`,
      };
    if (p.value >= total) {
      return {
        ok: false,
        error: `Sequence #${fmt(p.value)} is out of range: the stream has ${count(total, 'sequence')}, #0..#${fmt(Math.max(0, total - 1))} (${rows} per update; 0-based).`,
      };
    }
    const v = checkSequence({ update: Math.floor(p.value / rows), sequence: p.value % rows }, t);
    return v.ok ? { ...v, detail: `#${fmt(p.value)} = ${v.detail}` } : v;
  }
  const parts = splitSequenceInput(text);
  if (!parts) {
    const p = parseNumberInput(text);
    return {
      ok: false,
      error: p.ok
        ? `${trimmed} is one number: enter the update and the sequence, e.g. "${Math.min(p.value, Math.max(0, t.schedule.numUpdates - 1))} 0", "k:r", or a global sequence index "#${trimmed}" (update ${updateRangeText(t)}, sequence 0..${rows - 1}).`
        : `Enter an update and a sequence as "k r", "k:r", "k/r" or "k, r", or a global sequence index "#N" (update ${updateRangeText(t)}, sequence 0..${rows - 1}).`,
    };
  }
  const k = validateUpdateInput(parts[0], t);
  if (!k.ok) return { ok: false, error: k.error };
  const r = parseNumberInput(parts[1]);
  if (!r.ok) return { ok: false, error: `Sequence: ${r.error}. Enter a sequence 0..${rows - 1} (sequences are 0-based).` };
  return checkSequence({ update: k.value, sequence: r.value }, t);
}

/** Range check of an already-parsed (update, sequence) pair. */
export function checkSequence(ref: SequenceRef, t: NavigationTarget): Validated<SequenceRef> {
  const k = checkUpdate(ref.update, t);
  if (!k.ok) return k;
  const rows = t.schedule.sequencesPerUpdate;
  const r = ref.sequence;
  if (!Number.isSafeInteger(r) || r < 0 || r >= rows) {
    return {
      ok: false,
      error: `Sequence ${Number.isFinite(r) ? fmt(r) : String(r)} is out of range: each update has ${count(rows, 'sequence')}, 0..${rows - 1} (sequences are 0-based).`,
    };
  }
  const [s, e] = t.schedule.sequenceRange(ref.update, r);
  const a = shardIndexAt(t.shards, s),
    b = shardIndexAt(t.shards, e - 1);
  const shards = a < 0 ? '' : a === b ? ` · ${shardName(t.shards[a])}` : ` · spans ${shardName(t.shards[a])} → ${shardName(t.shards[b])}`;
  return {
    ok: true,
    value: { update: ref.update, sequence: r },
    detail: `update ${fmt(ref.update)} (0-based), sequence ${r} · tokens [${fmt(s)}, ${fmt(e)}), targets to ${fmt(e)} inclusive${shards}`,
  };
}

/**
 * Reads a number from a link or command argument that may be a number or a string
 * (`"55_000"`, `"5.5e7"`). Returns undefined when absent, an error sentence when malformed.
 */
export function numberArg(v: unknown, name: string): { value?: number; error?: string } {
  if (v === undefined || v === null || v === '') return {};
  if (typeof v === 'number') {
    return Number.isSafeInteger(v) && v >= 0 ? { value: v } : { error: `${name} ${v} is not a whole number ≥ 0` };
  }
  if (typeof v === 'string') {
    const p = parseNumberInput(v);
    return p.ok ? { value: p.value } : { error: `${name}: ${p.error}` };
  }
  return { error: `${name} must be a number, got ${typeof v}` };
}

function capitalise(s: string): string {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

/**
 * Why a link parameter is not a number, without repeating the value (a link is untrusted text:
 * it is never echoed into a message).
 */
function linkFault(raw: string): string {
  const p = parseNumberInput(raw);
  if (p.ok) return 'fine';
  if (/^\s*-/.test(raw)) return 'negative (expected a whole number ≥ 0)';
  if (/too large/.test(p.error)) return 'too large (at most 2^53 − 1)';
  return 'not a whole number ≥ 0 (examples: 55000, 55_000, 5.5e4, 0xD6D8)';
}

/** A navigation link, parsed: `…/update?k=55000[&sequence=r][&root=…]` or `…/offset?o=…[&root=…]`. */
export type NavigationLink =
  { kind: 'update'; update: number; sequence?: number; root?: string } | { kind: 'offset'; offset: number; root?: string };

/**
 * Parses the path and query of a `vscode://token-shards.token-shard-inspector/…` link.
 * Accepted: `/update?k=…` (also `update=`, `u=`; optional `sequence=`/`r=`), `/offset?o=…`
 * (also `offset=`), each with an optional `root=` (a dataset folder, URL-encoded). Numbers take
 * the forms of {@link parseNumberInput}. Range checks against a dataset happen later.
 * @returns the link, or an error sentence naming what was expected.
 */
export function parseNavigationLink(path: string, query: string): NavigationLink | { error: string } {
  const q = new URLSearchParams(query);
  const get = (...names: string[]) => {
    for (const n of names) {
      const v = q.get(n);
      if (v !== null) return v;
    }
    return undefined;
  };
  const root = get('root') || undefined;
  const what = path.replace(/^\/+|\/+$/g, '').toLowerCase();
  const usage = 'expected /update?k=<update>[&sequence=<r>][&root=<folder>] or /offset?o=<global token offset>[&root=<folder>]';
  if (what === 'update') {
    const raw = get('k', 'update', 'u');
    if (raw === undefined) return { error: `the link has no update number (k=…); ${usage}` };
    const k = parseNumberInput(raw);
    if (!k.ok) return { error: `k is ${linkFault(raw)}; ${usage}` };
    const rawR = get('sequence', 'r', 'seq');
    if (rawR !== undefined) {
      const r = parseNumberInput(rawR);
      if (!r.ok) return { error: `sequence is ${linkFault(rawR)}; ${usage}` };
      return { kind: 'update', update: k.value, sequence: r.value, root };
    }
    return { kind: 'update', update: k.value, root };
  }
  if (what === 'offset') {
    const raw = get('o', 'offset');
    if (raw === undefined) return { error: `the link has no offset (o=…); ${usage}` };
    const o = parseNumberInput(raw);
    if (!o.ok) return { error: `o is ${linkFault(raw)}; ${usage}` };
    return { kind: 'offset', offset: o.value, root };
  }
  return { error: `unknown link path (neither /update nor /offset); ${usage}` };
}

/** Path and query of a link to a navigation target (the inverse of {@link parseNavigationLink}). */
export function formatNavigationLink(link: NavigationLink): string {
  const q = new URLSearchParams();
  if (link.kind === 'update') {
    q.set('k', String(link.update));
    if (link.sequence !== undefined) q.set('sequence', String(link.sequence));
  } else {
    q.set('o', String(link.offset));
  }
  if (link.root) q.set('root', link.root);
  return `/${link.kind}?${q.toString()}`;
}
