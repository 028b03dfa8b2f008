/**
 * Anomalies of the stream index: long EOS-free runs, special ids inside documents, unknown ids, a
 * dtype mix-up look, each with the global offsets and updates it touches; and the marks the views
 * show for them (manifest table rows, update-view sequences).
 *
 * Units: offsets in tokens, global; updates 0-based.
 */
import { count as countOf, fmt } from '../units';
import { Schedule } from '../schedule';
import { terminalSafe } from '../untrusted';
import { IdOccurrences, LONG_RUN_FLOOR } from './scan';
import { GlobalRun, IndexQueries } from './queries';

/** Default threshold of the "EOS-free run" anomaly (tokens), the `tokenShards.index.eosFreeRunThreshold` setting's default. */
export const DEFAULT_EOS_FREE_RUN_THRESHOLD = 100_000;

/** Kinds of anomalies. */
export type AnomalyKind = 'eos-free-run' | 'special-in-document' | 'unknown-ids' | 'dtype-look';

/** One anomaly, attributed to the shard where it starts. Offsets global; `updates` 0-based, inclusive. */
export interface Anomaly {
  kind: AnomalyKind;
  /** 'error' = a data fault (`info` exits 1); 'warning' = worth a look. */
  severity: 'error' | 'warning';
  /** Index of the segment (shard) it is attributed to: where it starts. */
  segment: number;
  /** For an anomaly that runs over several shards (an EOS-free run): the index of the last one it touches. */
  lastSegment?: number;
  /** Global offsets to show (the run's start, the first occurrences). */
  offsets: number[];
  /** Tokens involved: the run length, or the occurrence count. */
  count: number;
  /** For 'special-in-document': the id. */
  id?: number;
  /** Updates touched, first and last (absent when only look-ahead tokens are touched). */
  updates?: [number, number];
  /** One sentence naming the shard, the offsets and the updates. */
  message: string;
  /** The same sentence without the shard's name (for marks shown on the shard's own row). */
  text: string;
}

/**
 * A mark on a row of a view (manifest table row, update-view sequence): the worst severity of its
 * anomalies and a tooltip with one line per anomaly (kind, global offsets, updates touched).
 */
export interface AnomalyMark {
  severity: 'error' | 'warning';
  text: string;
}

function markOf(lines: { severity: 'error' | 'warning'; line: string }[]): AnomalyMark {
  const n = lines.length;
  return {
    severity: lines.some((l) => l.severity === 'error') ? 'error' : 'warning',
    text: [`Stream index: ${n} ${n === 1 ? 'anomaly' : 'anomalies'}`, ...lines.map((l) => `• ${l.line}`)].join('\n'),
  };
}

/**
 * One mark per segment (shard) that has anomalies, keyed by segment index (the manifest table's row
 * index). An anomaly over several shards (`lastSegment`) marks each of them, as the shard editor
 * shows its banner in each; rows after the first say where it starts (the whole message).
 */
export function anomalyMarksBySegment(anomalies: readonly Anomaly[]): Map<number, AnomalyMark> {
  const by = new Map<number, { severity: 'error' | 'warning'; line: string }[]>();
  for (const a of anomalies)
    for (let s = a.segment; s <= (a.lastSegment ?? a.segment); s++) {
      let l = by.get(s);
      if (!l) by.set(s, (l = []));
      l.push({ severity: a.severity, line: s === a.segment ? a.text : a.message });
    }
  return new Map([...by].map(([seg, lines]) => [seg, markOf(lines)]));
}

/**
 * Marks of the sequence rows of an update: row `r` covers global tokens `[start + r·seqLen,
 * start + (r+1)·seqLen)` (`rows` rows); a row gets a mark when one of an anomaly's offsets lies in
 * it (the run's start, the first occurrences, a dtype look's shard start). Keyed by row.
 */
export function anomalyMarksForRows(anomalies: readonly Anomaly[], start: number, seqLen: number, rows: number): Map<number, AnomalyMark> {
  const by = new Map<number, { severity: 'error' | 'warning'; line: string }[]>();
  const end = start + rows * seqLen;
  for (const a of anomalies)
    for (const o of new Set(a.offsets)) {
      if (o < start || o >= end) continue;
      const r = Math.floor((o - start) / seqLen);
      let l = by.get(r);
      if (!l) by.set(r, (l = []));
      l.push({ severity: a.severity, line: `token ${fmt(o)} (position ${fmt(o - start - r * seqLen)}): ${a.text}` });
    }
  return new Map([...by].map(([r, lines]) => [r, markOf(lines)]));
}

/** Updates touching the global range [start, end): inclusive pair, or undefined when none. */
export function updatesTouching(schedule: Schedule, start: number, end: number): [number, number] | undefined {
  if (schedule.numUpdates === 0 || end <= start) return undefined;
  const first = Math.floor(start / schedule.G);
  const last = Math.min(schedule.numUpdates - 1, Math.floor((end - 1) / schedule.G));
  return first <= last ? [first, last] : undefined;
}

/** "update 12", "updates 12–40 (29 updates)", or "no update (look-ahead tokens only)". */
export function describeUpdates(u: [number, number] | undefined): string {
  if (!u) return 'no update (look-ahead tokens only)';
  return u[0] === u[1] ? `update ${fmt(u[0])}` : `updates ${fmt(u[0])}–${fmt(u[1])} (${fmt(u[1] - u[0] + 1)} updates)`;
}

/**
 * The anomalies of the indexed segments (see {@link AnomalyKind}).
 * @param longRuns the whole stream's EOS-free runs (`StreamIndex.summary().longRuns`).
 * @param threshold EOS-free runs longer than this many tokens are reported (at least {@link LONG_RUN_FLOOR}).
 * @param specialNames the text of special token ids (`<|pad|>`), named in the special-token anomaly.
 */
export function findAnomalies(
  index: IndexQueries,
  longRuns: readonly GlobalRun[],
  schedule: Schedule,
  threshold: number = DEFAULT_EOS_FREE_RUN_THRESHOLD,
  specialNames: Readonly<Record<number, string>> = {},
): Anomaly[] {
  const t = Math.max(LONG_RUN_FLOOR, threshold);
  const out: Anomaly[] = [];
  const where = (s: number) => `${index.segments[s].shard}${index.segments[s].line ? ` (manifest line ${index.segments[s].line})` : ''}`;
  const said = (s: number, text: string) => ({ text, message: `${where(s)}: ${text}` });
  for (const r of longRuns) {
    if (r.length <= t) continue;
    const s = index.segmentOf(r.start);
    const e = index.segmentOf(r.start + r.length - 1);
    const updates = updatesTouching(schedule, r.start, r.start + r.length);
    const span = e > s ? `, spanning ${fmt(e - s + 1)} shards to ${index.segments[e].shard}` : '';
    out.push({
      kind: 'eos-free-run',
      severity: 'warning',
      segment: s,
      ...(e > s ? { lastSegment: e } : {}),
      offsets: [r.start],
      count: r.length,
      updates,
      ...said(
        s,
        `${fmt(r.length)} tokens without EOS from global offset ${fmt(r.start)} to ${fmt(r.start + r.length - 1)}${span}${r.closed ? '' : ' (to the end of the stream)'} — longer than ${fmt(t)}; documents glued by a lost EOS? Touches ${describeUpdates(updates)}.`,
      ),
    });
  }
  for (let s = 0; s < index.segments.length; s++) {
    const rec = index.records[s];
    if (!rec) continue;
    const g = index.segments[s].startToken;
    const occ = (o: IdOccurrences) => o.first.map((x) => g + x);
    const touched = (offs: number[]) => {
      const us = offs.map((o) => schedule.position(o).update).filter((u): u is number => u !== undefined);
      return us.length ? ([Math.min(...us), Math.max(...us)] as [number, number]) : undefined;
    };
    const firstText = (offs: number[], count: number) =>
      `first at global offset${offs.length > 1 ? 's' : ''} ${offs.map(fmt).join(', ')}${count > offs.length ? ', …' : ''}`;
    for (const [idText, o] of Object.entries(rec.specials)) {
      const offs = occ(o);
      const updates = touched(offs);
      const name = specialNames[Number(idText)];
      out.push({
        kind: 'special-in-document',
        severity: 'warning',
        segment: s,
        offsets: offs,
        count: o.count,
        id: Number(idText),
        updates,
        ...said(
          s,
          `special token ${name === undefined ? `id ${idText}` : `${terminalSafe(name)} (id ${idText})`} inside documents ${countOf(o.count, 'time')}, ${firstText(offs, o.count)}; ${o.count > offs.length ? 'the first touch' : 'touches'} ${describeUpdates(updates)}.`,
        ),
      });
    }
    // A dtype look explains the unknown ids of its shard: one line, not two.
    if (rec.unknown.count > 0 && !rec.look) {
      const offs = occ(rec.unknown);
      const updates = touched(offs);
      out.push({
        kind: 'unknown-ids',
        severity: 'error',
        segment: s,
        offsets: offs,
        count: rec.unknown.count,
        updates,
        ...said(
          s,
          `${countOf(rec.unknown.count, 'unknown id')} (≥ the vocabulary size or in a vocabulary hole; max id ${fmt(rec.maxId)}), ${firstText(offs, rec.unknown.count)}; ${rec.unknown.count > offs.length ? 'the first touch' : 'touches'} ${describeUpdates(updates)}.`,
        ),
      });
    }
    if (rec.look) {
      const updates = updatesTouching(schedule, g, g + rec.numTokens);
      out.push({
        kind: 'dtype-look',
        severity: 'error',
        segment: s,
        offsets: [g],
        count: rec.numTokens,
        updates,
        ...said(
          s,
          `${rec.look.message} ${fmt(rec.unknown.count)} ids are unknown, the first at global offset ${fmt(g + (rec.unknown.first[0] ?? 0))}; the shard (from global offset ${fmt(g)}) feeds ${describeUpdates(updates)}.`,
        ),
      });
    }
  }
  return out.sort((a, b) => a.segment - b.segment || a.offsets[0] - b.offsets[0]);
}
