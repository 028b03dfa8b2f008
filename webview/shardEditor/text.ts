/**
 * Text for people in the shard webview: the cursor line, the "Top: document …" header, the
 * toolbar's file line and the token tooltip's rows. Pure functions of the {@link ShardState};
 * the block renderers' own sentences (separators, edge markers) live in views.ts beside them.
 */
import { count, fmt } from '../common';
import type { ShardInitToWebview } from '../../src/protocol/shard';
import { visibleText } from '../../src/core/invisibles';
import { PAST_LAST_UPDATE_TEXT } from '../../src/core/schedule';
import { describeReads, readsLine } from '../../src/core/order/orderText';
import type { ShardState } from './state';
import { documentLabel, indexLengthText, lengthText, showOffset } from './views';
import type { TipRow } from './tooltip';

/**
 * The run's order's words for local offset `o` (see {@link ShardState.runOrder}): the reads'
 * {@link readsLine} when they are of `o`, `update …` while asked, or why there are none.
 */
function runOrderText(st: ShardState, o: number): string {
  const run = st.runOrder!;
  if (run.error) return 'no update: the run description cannot be used';
  return run.offset === o && run.reads ? readsLine(run.reads) : 'update …';
}

/**
 * The cursor line: `Token 1,234 (shard offset 34) · update 0 · seq 1 · pos 210 · doc 5`; through a
 * run's order `Token 1,234 (shard offset 34) · update 3 · sample 17 · pos 100 · +1 reads · doc 5`.
 */
export function positionText(st: ShardState, o: number): string {
  const init = st.init;
  if (!init) return '';
  const parts: string[] = [];
  if (init.globalStart !== undefined) {
    const g = init.globalStart + o;
    parts.push(`Token ${fmt(g)} (shard offset ${fmt(o)})`);
    const pos = st.runOrder ? undefined : st.schedule?.position(g);
    if (st.runOrder) parts.push(runOrderText(st, o));
    if (pos?.lookAhead) parts.push(PAST_LAST_UPDATE_TEXT[st.schedule!.pastLastUpdate(g)!]);
    else if (pos) parts.push(`update ${fmt(pos.update!)} · seq ${fmt(pos.sequence!)} · pos ${fmt(pos.position!)}`);
  } else {
    parts.push(`Token ${fmt(o)}`);
  }
  const doc = st.docAt(o);
  if (doc.number !== undefined) parts.push(doc.scope === 'shard' ? `doc +${fmt(doc.number)} in this shard` : `doc ${fmt(doc.number)}`);
  else if (!st.numbering.scanned) parts.push('doc …'); // still counting: the same words as the status bar
  return parts.join(' · ');
}

/** Most reads spelled out in the cursor line's tooltip. */
const TITLE_READS = 20;

/** Tooltip of the cursor line (through a run's order: the order and every read of the cursor's token, up to {@link TITLE_READS}). */
export function positionTitle(st: ShardState): string {
  const run = st.runOrder;
  if (st.init?.globalStart !== undefined && run) {
    const head = `Token: global token offset in the dataset stream. Updates follow the run's order: ${run.name}.`;
    if (run.error) return `${head}\n${run.error}`;
    if (run.offset !== st.cursor || !run.reads) return `${head}\nAsking the order which updates read this token…`;
    const list = run.reads.length === 0 ? describeReads(run.reads) : describeReads(run.reads, TITLE_READS).split('; ').join('\n');
    return `${head} update, sample, slot (the sample's place in the batch) and pos are 0-based; "+N reads": the run read this token N more times (later epochs, or as a sample's last target).\nReads of this token (${fmt(run.reads.length)}):\n${list}`;
  }
  return st.init?.globalStart !== undefined
    ? 'Token: global token offset in the dataset stream. update: optimizer step, 0-based. seq: sequence within the update, 0-based. pos: position within the sequence, 0-based. doc: document number (EOS count before the token).'
    : 'Token: offset in this file (no shard manifest lists it).';
}

/** The header line about the document at the top of the view ('' while its page is not loaded). */
export function docHeaderText(st: ShardState, top: number): string {
  const init = st.init;
  if (!init || init.numTokens === 0 || !st.page(st.pageOf(top))) return '';
  const doc = st.docAt(top);
  const where = init.globalStart === undefined ? 'offset' : 'global offset';
  const parts: string[] = [];
  parts.push(doc.number !== undefined ? `Top: ${documentLabel(doc)}` : 'Top: document');
  if (doc.start === undefined) parts.push(`starts before ${where} ${showOffset(st, top)} (finding its start…)`);
  else if (doc.startIsBound) parts.push(`starts before global offset ${showOffset(st, doc.start)} (beyond the scan limit)`);
  else if (doc.start === top) parts.push(`starts at ${where} ${showOffset(st, doc.start)}`);
  else if (doc.start < 0)
    parts.push(`began in the previous shard at global offset ${showOffset(st, doc.start)} (${count(top - doc.start, 'token')} above)`);
  else parts.push(`began at ${where} ${showOffset(st, doc.start)} (${count(top - doc.start, 'token')} above)`);
  if (doc.end !== undefined && doc.start !== undefined && !doc.startIsBound) {
    const indexed = st.page(st.pageOf(top))!.payload.documents !== undefined;
    parts.push(indexed ? indexLengthText(doc, st) : lengthText(doc.end - doc.start));
  }
  return parts.join(' · ');
}

/** The toolbar's file line: name, size, global range, dataset, tokenizer. */
export function infoText(m: ShardInitToWebview): string {
  const parts = [m.fileName, count(m.numTokens, 'token')];
  if (m.globalStart !== undefined && m.numTokens > 0) parts.push(`global ${fmt(m.globalStart)} – ${fmt(m.globalStart + m.numTokens - 1)}`);
  if (m.datasetName) parts.push(`dataset ${m.datasetName}`);
  else parts.push('no manifest: local offsets');
  if (m.tokenizer) parts.push(m.tokenizer.name);
  return parts.join(' · ');
}

/** Hex pairs in lines of 8 bytes (long tokens such as `<|endoftext|>` wrap instead of overflowing). */
export function wrapHex(hex: string): string {
  const pairs = hex.split(' ').filter(Boolean);
  const lines: string[] = [];
  for (let i = 0; i < pairs.length; i += 8) lines.push(pairs.slice(i, i + 8).join(' '));
  return lines.join('\n');
}

/** Code points of the invisible characters in `s`, for the tooltip (`U+200B ZERO WIDTH SPACE`). */
function invisibleRows(s: string): TipRow[] {
  const seen = new Set<string>();
  const rows: TipRow[] = [];
  for (const ch of s) {
    if (seen.has(ch)) continue;
    const t = visibleText(ch, { whitespace: false });
    if (t !== ch && t.startsWith('⟨')) {
      seen.add(ch);
      rows.push(['character', `${t} ${'U+' + ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`]);
    }
  }
  return rows;
}

/**
 * Rows of the tooltip of the token element covering local tokens `[o, o + n)` (`seq`: the
 * sequence or sample that starts there, as "sequence 61", when marked).
 */
export function tipRows(st: ShardState, o: number, n: number, seq?: string): TipRow[] {
  const init = st.init;
  const page = st.page(st.pageOf(o));
  if (!page || !init) return [];
  const rows: TipRow[] = [];
  for (let t = o; t < o + Math.min(n, 4); t++) {
    const id = page.id(t);
    const k = page.kind(t);
    const kind =
      id === init.eosId
        ? ' (EOS: end of document)'
        : k === 's'
          ? ' (special)'
          : k === 'a'
            ? ' (added token)'
            : k === 'p'
              ? ' (part of a UTF-8 character)'
              : k === 'u'
                ? ` (unknown: ≥ vocabulary size ${fmt(init.tokenizer?.vocabSize ?? 0)})`
                : '';
    rows.push(['id', `${id}${kind}`]);
    if (k !== undefined && k !== 'u') {
      const piece = page.piece(t) ?? '';
      rows.push(['piece', JSON.stringify(piece)]);
      if (k !== 'p') rows.push(...invisibleRows(piece));
      rows.push(['bytes', wrapHex(page.hexOf(t)) || '—']);
    }
  }
  if (n > 4) rows.push(['', `… ${count(n - 4, 'more token', 'more tokens')} in this character`]);
  if (n > 1) rows.push(['decodes to', JSON.stringify(page.docText(o))]);
  if (init.globalStart !== undefined) rows.push(['global offset', fmt(init.globalStart + o)]);
  rows.push([init.globalStart !== undefined ? 'shard offset' : 'offset', fmt(o)]);
  if (st.runOrder && init.globalStart !== undefined) {
    const run = st.runOrder;
    rows.push(['update', run.offset === o && run.reads ? describeReads(run.reads, 3) : "through the run's order: put the cursor here"]);
  } else if (st.schedule && init.globalStart !== undefined) {
    const pos = st.schedule.position(init.globalStart + o);
    if (pos.lookAhead) rows.push(['update', `none: ${PAST_LAST_UPDATE_TEXT[st.schedule.pastLastUpdate(init.globalStart + o)!]}`]);
    else {
      rows.push(['update', `${fmt(pos.update!)} (0-based)`]);
      rows.push(['sequence', fmt(pos.sequence!)]);
      rows.push(['position', fmt(pos.position!)]);
    }
  }
  const doc = st.docAt(o);
  if (doc.number !== undefined) rows.push(['document', doc.scope === 'shard' ? `+${fmt(doc.number)} in this shard` : fmt(doc.number)]);
  if (page.isBoundary(o)) rows.push(['boundary', 'a document starts here (from the format’s index; no EOS before it)']);
  const meta = page.metadataAt(o, true);
  for (const k of ['id', 'src', 'loc'] as const) if (meta?.[k]) rows.push([`document ${k}`, meta[k]!]);
  if (page.notTrained(o)) rows.push(['loss', 'not trained on (the loss mask is 0 here)']);
  if (seq) rows.push(['', `${seq} starts here`]);
  for (const hl of st.highlights) if (o >= hl.start && o < hl.end && hl.label) rows.push(['highlight', hl.label]);
  return rows;
}
