/**
 * Update view (browser side): renders one update as S rows of decoded text from the host's
 * `UpdateViewData` (src/core/updateModel.ts). Text goes in as text nodes only; every marker
 * (document starts, "continues", shard changes) is an empty element whose label is drawn by CSS
 * from a `data-label` attribute, so a row's text content (and a copy of it) is exactly the
 * decoded text of its inputs, EOS tokens included as `<|endoftext|>`.
 *
 * Rendering: the first rows synchronously, the rest in animation-frame chunks; rows use
 * `content-visibility: auto`, so off-screen rows cost no layout. The host's `show` request is
 * answered once every row is in the DOM (a `show` superseded by a newer one is cancelled).
 *
 * A sequence holding a stream-index anomaly offset (an EOS-free run's start, a special or unknown
 * id, a dtype look's shard start) gets a mark in its gutter (tooltip: the anomaly, as text).
 *
 * Keyboard: rows form a list with one tab stop (↑/↓, Page Up/Down, Home/End move; Enter opens
 * the row start in its shard editor; →/← step through the row's segments, Enter opens that
 * segment). Alt+←/Alt+→ go to the previous/next update.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import { codiconLinkFromInline, count, h, fmt, visibleNodes, vscodeApi } from './common';
import { connect } from './channel';
import type {
  AnomalyMark,
  UpdateViewData,
  UpdateViewFromWebview,
  UpdateViewProtocol,
  UpdateViewShow,
  UpdateViewShown,
  UpdateViewState,
  UpdateViewToWebview,
  UpdateViewSegment,
} from '../src/protocol/update';
import { ChannelError } from '../src/shared/channel';
import { ordinalSuffix } from '../src/core/units';

codiconLinkFromInline(); // before the first web component connects

interface State extends UpdateViewState {
  compact?: boolean;
}

const vscode = vscodeApi<UpdateViewFromWebview, State>();
let state: State | undefined = vscode.getState();

/** Rows rendered synchronously before yielding to the browser (about one screen). */
const FIRST_ROWS = 12;
/** Rows rendered per animation frame after the first screen. */
const ROWS_PER_FRAME = 24;

/** A document marker whose label depends on document numbers (set when they arrive). */
interface DocMarker {
  el: HTMLElement;
  kind: 'start' | 'cont';
  eosBefore: number;
  documentStart?: number;
  row: number;
  /** A run's sample: the document number the model gave the segment (the view does not count on from the update's first document). */
  document?: number;
}

let data: UpdateViewData | undefined;
let datasetName = '';
let renderSeq = 0;
let docMarkers: DocMarker[] = [];
/** Per row: the gutter element listing the documents the row touches. */
let rowDocs: { el: HTMLElement; eosBefore: number; count: number; docs?: number[] }[] = [];
let firstDocument: number | undefined;
/** Stream-index anomaly marks of update `update`'s rows (an `UpdateViewMarks` may arrive before or after the rows). */
let marks: { update: number; rows: Map<number, AnomalyMark> } = { update: -1, rows: new Map() };
/** Per row: its element and its anomaly mark (in the gutter). */
let rowMarkEls: { el: HTMLElement; mark: HTMLElement }[] = [];

// ───────────── static page ─────────────
const app = document.getElementById('app')!;
const prevBtn = h('vscode-button', { secondary: true, icon: 'arrow-left', title: 'Previous update (Alt+←)' }, 'Previous');
const nextBtn = h('vscode-button', { secondary: true, 'icon-after': 'arrow-right', title: 'Next update (Alt+→)' }, 'Next');
const kField = h('vscode-textfield', { 'aria-label': 'Update number (0-based)', placeholder: 'k', size: 10, class: 'k-field' });
const goBtn = h('vscode-button', { secondary: true, title: 'Show this update' }, 'Go');
const copyBtn = h('vscode-button', { secondary: true, icon: 'link', title: 'Copy a vscode:// link to this update' }, 'Copy link');
const compactBox = h(
  'vscode-checkbox',
  {
    title:
      'Shorten long document texts inside each sequence (every document boundary and EOS stays visible); the focused sequence shows in full',
  },
  'Compact rows',
);
const progress = h('vscode-progress-bar', { class: 'progress', 'aria-label': 'Reading update', hidden: true });
/** The legend's words for the next-token chip; its ordinal follows the rows' length (the card's L, a run's sample). */
const legendNext = h('span', {}, ' the token after the last input: target of the last position');

const heading = h('h1', { id: 'heading' }, 'Update view');
const summary = h('div', { class: 'summary' });
const docsLine = h('div', { class: 'docs-line muted' });
const errorBox = h('p', { class: 'banner error', role: 'alert', hidden: true });
const warnBox = h('div', { class: 'banner', role: 'status', hidden: true });
const rowsEl = h('div', { class: 'rows', role: 'list', 'aria-labelledby': 'heading' });

app.append(
  h(
    'header',
    { class: 'toolbar', role: 'toolbar', 'aria-label': 'Update navigation' },
    prevBtn,
    h('span', { class: 'k-label' }, 'update', kField, goBtn),
    nextBtn,
    h('span', { class: 'spacer' }),
    compactBox,
    copyBtn,
  ),
  progress,
  h('section', { class: 'head' }, heading, summary, docsLine, legend()),
  warnBox,
  errorBox,
  rowsEl,
);

function legend(): HTMLElement {
  const item = (cls: string, label: string, text: string, desc: string) =>
    h(
      'span',
      { class: 'legend-item' },
      h('span', { class: `mark ${cls}`, 'data-label': label }),
      text ? h('span', { class: 'eos' }, text) : null,
      ' ',
      desc,
    );
  return h(
    'div',
    { class: 'legend muted', 'aria-label': 'Legend' },
    item('doc', 'doc N', '', 'a document starts'),
    item('cont', '↪ doc N', '', 'continues a document that began before the sequence'),
    h('span', { class: 'legend-item' }, h('span', { class: 'eos' }, '<|endoftext|>'), ' EOS: the document ends'),
    item('shard', '▾ shard', '', 'the stream moves to the next shard file'),
    h('span', { class: 'legend-item' }, h('span', { class: 'next' }, '→', h('span', { class: 'tok' }, 'x')), legendNext),
  );
}

function setCompact(on: boolean): void {
  rowsEl.classList.toggle('compact', on);
  (compactBox as unknown as { checked: boolean }).checked = on;
}
setCompact(state?.compact ?? false); // full rows by default; the choice is remembered in the webview state

function saveState(patch: Partial<State>): void {
  if (!state && !patch.key) return;
  state = { ...(state as State), ...patch };
  vscode.setState(state);
}

function go(k: number): void {
  if (!data || !Number.isInteger(k) || k < 0 || k >= data.numUpdates || k === data.update) return;
  post({ type: 'go', update: k });
}

prevBtn.addEventListener('click', () => data && go(data.update - 1));
nextBtn.addEventListener('click', () => data && go(data.update + 1));
const submitK = () => {
  const raw = (kField as unknown as { value: string }).value.trim().replace(/[_,]/g, '');
  const k = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (data && (!Number.isSafeInteger(k) || k >= data.numUpdates)) {
    showError(`Enter an update 0..${fmt(data.numUpdates - 1)} (updates are 0-based).`);
    return;
  }
  errorBox.hidden = true;
  go(k);
};
goBtn.addEventListener('click', submitK);
kField.addEventListener('keydown', (e) => {
  if ((e as KeyboardEvent).key === 'Enter') submitK();
});
copyBtn.addEventListener('click', () => post({ type: 'copyLink' }));
compactBox.addEventListener('change', () => {
  const on = (compactBox as unknown as { checked: boolean }).checked;
  setCompact(on);
  saveState({ compact: on });
});
document.addEventListener('keydown', (e) => {
  if (!e.altKey || !data) return;
  if (e.key === 'ArrowLeft') {
    e.preventDefault();
    go(data.update - 1);
  }
  if (e.key === 'ArrowRight') {
    e.preventDefault();
    go(data.update + 1);
  }
});

function showError(message: string): void {
  errorBox.textContent = message;
  errorBox.hidden = false;
}

// ───────────── rendering ─────────────

/** Sends an event to the host. */
function post(msg: UpdateViewFromWebview): void {
  channel.notify(msg);
}

/** The `show` request being rendered: answered when its last row is in the DOM, cancelled by the next one. */
let showing: { resolve(r: UpdateViewShown): void; reject(e: Error): void } | undefined;

/** Answers the host's `show` request once every row is in the DOM. */
function show(m: UpdateViewShow): Promise<UpdateViewShown> {
  showing?.reject(new ChannelError('superseded by a newer show', true));
  return new Promise<UpdateViewShown>((resolve, reject) => {
    showing = { resolve, reject };
    datasetName = m.datasetName;
    saveState({ key: m.key });
    render(m.data, m.focusRow);
  });
}

function render(d: UpdateViewData, focusRow: number | undefined): void {
  const seq = ++renderSeq;
  const t0 = performance.now();
  data = d;
  firstDocument = d.firstDocument;
  docMarkers = [];
  rowDocs = [];
  rowMarkEls = [];
  errorBox.hidden = true;
  progress.hidden = true;
  (kField as unknown as { value: string }).value = String(d.update);
  (prevBtn as unknown as { disabled: boolean }).disabled = d.update <= 0;
  (nextBtn as unknown as { disabled: boolean }).disabled = d.update >= d.numUpdates - 1;
  const title = d.title[0].toUpperCase() + d.title.slice(1);
  heading.textContent = title;
  document.title = title;
  renderSummary(d);
  legendNext.textContent = ` the ${fmt(d.seqLen + 1)}${ordinalSuffix(d.seqLen + 1)} token: target of the last position`;
  renderDocsLine(undefined);
  const notes = [
    d.anomaly,
    d.decoded
      ? undefined
      : 'No tokenizer found (tokenizer/tokenizer.json in the dataset, or the tokenShards.tokenizerPath setting): rows show token ids.',
  ].filter((x): x is string => !!x);
  warnBox.replaceChildren(...notes.map((n) => h('div', {}, n)));
  warnBox.hidden = notes.length === 0;
  rowsEl.replaceChildren();
  // A new update starts at the top (header visible) unless a sequence was asked for (scrolled to below).
  if (focusRow === undefined) window.scrollTo(0, 0);
  rowsEl.setAttribute('aria-label', `${count(d.rows.length, 'sequence')} of ${title}`);

  let eosBefore = 0;
  const eosCounts: number[] = [];
  for (const row of d.rows) {
    eosCounts.push(eosBefore);
    for (const s of row.segments) if (s.eos) eosBefore++;
  }

  const build = (r: number) => rowsEl.append(renderRow(d, r, eosCounts[r], focusRow === undefined ? r === 0 : r === focusRow));
  const n = Math.min(FIRST_ROWS, d.rows.length);
  for (let r = 0; r < n; r++) build(r);
  let next = n;
  const finish = () => {
    applyDocumentNumbers();
    if (focusRow !== undefined) focusRowEl(focusRow, false, 'start');
    const done = showing;
    showing = undefined;
    done?.resolve({ update: d.update, rows: rowsEl.querySelectorAll(':scope > .row').length, ms: performance.now() - t0 });
  };
  const step = () => {
    if (seq !== renderSeq) return;
    const end = Math.min(d.rows.length, next + ROWS_PER_FRAME);
    for (; next < end; next++) build(next);
    if (next < d.rows.length) requestAnimationFrame(step);
    else finish();
  };
  if (next < d.rows.length) requestAnimationFrame(step);
  else finish();
  saveState({ key: state?.key, update: d.update, row: focusRow });
}

function renderSummary(d: UpdateViewData): void {
  if (d.order) {
    summary.replaceChildren(
      h(
        'div',
        {},
        `${datasetName} · ${d.order.name} · ${count(d.rows.length, 'sample')} × ${count(d.seqLen, 'input token')} · updates of the run: 0..${fmt(d.numUpdates - 1)}`,
      ),
      h(
        'div',
        { class: 'muted' },
        `Rows are update ${fmt(d.update)}'s samples in the trainer's batch order (# slot, then the run's sample number and the stream ranges it was assembled from; ⤳ marks a jump to another place in the stream). ${d.order.description}`,
      ),
    );
    return;
  }
  const [s, e] = d.tokenRange;
  const rows = d.rows.length;
  const line1 = h(
    'div',
    {},
    `${datasetName} · tokens [${fmt(s)}, ${fmt(e)}) · ${count(rows, 'sequence')} × ${count(d.seqLen, 'token')} · updates in this dataset: 0..${fmt(d.numUpdates - 1)}`,
  );
  const line2 = h(
    'div',
    { class: 'muted' },
    `Targets are the inputs shifted by one token: a sequence's last target (→) is the next sequence's first token; `,
    `the last sequence's is the look-ahead token ${fmt(e)}${d.update + 1 < d.numUpdates ? ` (the first token of update ${fmt(d.update + 1)})` : ' (the extra stored token)'}.`,
  );
  const shardLine = h('div', { class: 'shards' });
  if (d.shards.length === 1) {
    shardLine.append('Shard ', h('code', {}, d.shards[0].name));
  } else {
    shardLine.append(`Spans ${d.shards.length} shards: `);
    d.shards.forEach((sh, i) => {
      if (i > 0) shardLine.append(' → ');
      shardLine.append(h('code', {}, sh.name));
    });
    const edges = d.shards.slice(1).map((sh) => {
      const at = sh.startToken;
      return at >= e
        ? `the look-ahead token ${fmt(at)} is in ${sh.name}`
        : `${sh.name} starts at token ${fmt(at)} (sequence ${Math.floor((at - s) / d.seqLen)}, position ${(at - s) % d.seqLen})`;
    });
    shardLine.append(
      h('span', { class: 'muted' }, ` — ${edges.join('; ')}, marked `),
      h('span', { class: 'mark shard', 'data-label': '▾ shard' }),
    );
  }
  summary.replaceChildren(line1, line2, shardLine);
}

function renderDocsLine(note: string | undefined, busy = false): void {
  docsLine.replaceChildren();
  if (!data) return;
  if (data.order) {
    docsLine.append('Document numbers (0-based) per sample, where known without a long count.');
    return;
  }
  if (firstDocument !== undefined) {
    const last = firstDocument + data.rows.reduce((n, r) => n + r.segments.filter((s) => s.eos).length, 0);
    docsLine.append(`Documents ${fmt(firstDocument)}..${fmt(last)} (0-based; numbered by EOS tokens before them).`);
    return;
  }
  docsLine.append(note ?? 'Document numbers: counting…');
  if (note && !busy) {
    const btn = h('vscode-button', { secondary: true, icon: 'list-ordered', class: 'count-docs' }, 'Number documents');
    btn.addEventListener('click', () => post({ type: 'countDocuments' }));
    docsLine.append(' ', btn);
  }
}

/** A run's sample's stream ranges as text: `[a, b) + [c, d)`. */
function rangesText(pieces: { start: number; end: number }[]): string {
  return pieces.map((p) => `[${fmt(p.start)}, ${fmt(p.end)})`).join(' + ');
}

function rowLabel(d: UpdateViewData, r: number): string {
  const row = d.rows[r];
  if (row.pieces) return `slot ${r}, sample ${fmt(row.sample ?? r)}, tokens ${rangesText(row.pieces)}`;
  return `sequence ${r}, tokens ${fmt(row.offset)} to ${fmt(row.offset + d.seqLen - 1)}`;
}

function renderRow(d: UpdateViewData, r: number, eosBefore: number, tabStop: boolean): HTMLElement {
  const row = d.rows[r];
  const text = h('span', { class: 'text' });
  let eos = eosBefore;
  row.segments.forEach((s, i) => {
    if (s.jump) {
      text.append(
        h('span', {
          class: 'mark shard',
          'data-label': `⤳ ${fmt(s.offset)}`,
          title: `The sample continues at token ${fmt(s.offset)} of the stream (another document)`,
        }),
      );
    }
    if (s.shardChange) {
      text.append(
        h('span', {
          class: 'mark shard',
          'data-label': `▾ ${d.shards[s.shard].name}`,
          title: `Shard change: from token ${fmt(s.offset)} the stream is in ${d.shards[s.shard].name}`,
        }),
      );
    }
    if (i === 0 && s.continues) {
      const el = h('span', { class: 'mark cont', 'data-label': '↪' });
      docMarkers.push({ el, kind: 'cont', eosBefore: eos, documentStart: s.documentStart, row: r, document: s.document });
      text.append(el);
    } else if (!s.continues) {
      const el = h('span', { class: 'mark doc', 'data-label': 'doc' });
      docMarkers.push({ el, kind: 'start', eosBefore: eos, documentStart: s.documentStart, row: r, document: s.document });
      text.append(el);
    }
    text.append(segmentEl(d, r, i, s));
    if (s.eos) eos++;
  });
  const n = row.next;
  const last = r === d.rows.length - 1 && !d.order;
  const nextEl = !n
    ? null
    : h(
        'span',
        {
          class: `next${last ? ' lookahead' : ''}${n.shardChange ? ' shard-next' : ''}`,
          role: 'button',
          tabindex: -1,
          'data-next': 1,
          title: `${last ? 'Look-ahead token: target of the last position of the last sequence (first token of the next update)' : "Target of the last position (the next sequence's first token)"} · token ${fmt(n.offset)} · id ${n.id}${n.shardChange ? ` · in ${d.shards[n.shard].name}` : ''}`,
        },
        last ? 'look-ahead →' : '→',
        h('span', { class: `tok kind-${n.kind}` }, ...(n.text ? visibleNodes(n.text, { whitespace: true }) : ['∅'])),
      );
  const body = h('div', { class: 'body mono' }, text, nextEl);
  // Documents this row touches (its first document + one per EOS, unless the row ends on an EOS).
  const eosInRow = row.segments.filter((s) => s.eos).length;
  const docsEl = h('span', { class: 'docs' });
  rowDocs.push({
    el: docsEl,
    eosBefore,
    count: eosInRow + (row.segments[row.segments.length - 1].eos ? 0 : 1),
    docs: d.order ? [...new Set(row.segments.map((s) => s.document).filter((x): x is number => x !== undefined))] : undefined,
  });
  const shardChange = row.segments.some((s) => s.shardChange);
  const markEl = h('span', { class: 'anomaly codicon', hidden: true });
  const el = h(
    'div',
    {
      class: `row${shardChange ? ' has-shard-change' : ''}`,
      role: 'listitem',
      tabindex: tabStop ? 0 : -1,
      'data-row': r,
      'aria-label': rowLabel(d, r),
    },
    h(
      'div',
      { class: 'gutter', 'aria-hidden': 'true' },
      h('span', { class: 'idx' }, `#${r}`),
      h('span', { class: 'off' }, row.pieces ? `sample ${fmt(row.sample ?? r)} · ${rangesText(row.pieces)}` : fmt(row.offset)),
      docsEl,
      shardChange ? h('span', { class: 'edge' }, '▾ shard edge') : null,
      markEl,
    ),
    body,
  );
  rowMarkEls[r] = { el, mark: markEl };
  applyMark(d, r);
  return el;
}

/** Shows row `r`'s stream-index mark, if any (tooltip and the row's accessible name: the anomalies, as text). */
function applyMark(d: UpdateViewData, r: number): void {
  const slot = rowMarkEls[r];
  if (!slot) return;
  const mk = marks.update === d.update ? marks.rows.get(r) : undefined;
  slot.mark.hidden = !mk;
  if (mk) {
    slot.mark.className = `anomaly codicon codicon-${mk.severity === 'error' ? 'error' : 'warning'}`;
    slot.mark.title = mk.text;
    slot.el.dataset.anomaly = mk.severity;
    slot.el.setAttribute('aria-label', `${rowLabel(d, r)}; ${mk.text}`);
  } else {
    slot.mark.removeAttribute('title');
    delete slot.el.dataset.anomaly;
    slot.el.setAttribute('aria-label', rowLabel(d, r));
  }
}

function segmentEl(d: UpdateViewData, r: number, i: number, s: UpdateViewSegment): HTMLElement {
  const el = h(
    'span',
    {
      class: `seg${s.unknownIds ? ' has-unknown' : ''}`,
      'data-seg': i,
      tabindex: -1,
      title:
        `tokens [${fmt(s.offset)}, ${fmt(s.offset + s.end - s.start)}) · ${count(s.end - s.start, 'token')} · ${d.shards[s.shard].name}` +
        `${s.unknownIds ? ` · ${count(s.unknownIds, 'id')} not in the tokenizer (shown as nothing)` : ''} · click to open in the shard editor`,
    },
    ...segmentText(s.text),
  );
  if (s.eos) {
    el.append(
      h('span', { class: 'eos', title: `EOS (id ${d.eos}) at token ${fmt(s.offset + s.end - s.start - 1)}: the document ends` }, d.eosText),
    );
  }
  return el;
}

/** Compact rows keep this many characters at the start and at the end of a long segment. */
const ELIDE_HEAD = 140;
const ELIDE_TAIL = 60;

/**
 * A segment's text as nodes. A long text is split into head, middle and tail; the middle is a
 * `.elided` span that compact rows hide behind a "…" marker (CSS), so a compact row elides text
 * between document boundaries but never a boundary: every segment ends at an EOS, a shard change
 * or the row end, and its EOS marker stays visible. Text content is unchanged either way.
 */
function segmentText(text: string): (string | HTMLElement)[] {
  if (text.length <= ELIDE_HEAD + ELIDE_TAIL + 40) return [text];
  let a = ELIDE_HEAD,
    b = text.length - ELIDE_TAIL;
  const low = (i: number) => {
    const c = text.charCodeAt(i);
    return c >= 0xdc00 && c <= 0xdfff;
  };
  if (low(a)) a++;
  if (low(b)) b++;
  const hidden = text.slice(a, b);
  return [
    text.slice(0, a),
    h('span', { class: 'elide-mark', 'data-label': `… ${fmt(hidden.length)} characters …`, 'aria-hidden': 'true' }),
    h('span', { class: 'elided' }, hidden),
    text.slice(b),
  ];
}

function applyDocumentNumbers(): void {
  for (const d of rowDocs) {
    if (d.docs) {
      d.el.textContent =
        d.docs.length === 0 ? count(d.count, 'doc') : `doc${d.docs.length > 1 ? 's' : ''} ${d.docs.map((x) => fmt(x)).join(', ')}`;
      continue;
    }
    const first = firstDocument === undefined ? undefined : firstDocument + d.eosBefore;
    d.el.textContent =
      first === undefined ? count(d.count, 'doc') : d.count === 1 ? `doc ${fmt(first)}` : `docs ${fmt(first)}–${fmt(first + d.count - 1)}`;
  }
  for (const m of docMarkers) {
    const n = data?.order ? m.document : firstDocument === undefined ? undefined : firstDocument + m.eosBefore;
    const name = n === undefined ? 'document' : `document ${fmt(n)}`;
    if (m.kind === 'start') {
      m.el.setAttribute('data-label', n === undefined ? 'doc' : `doc ${fmt(n)}`);
      m.el.title = `${name} starts${m.documentStart !== undefined ? ` at token ${fmt(m.documentStart)}` : ''}`;
    } else {
      m.el.setAttribute('data-label', n === undefined ? '↪' : `↪ doc ${fmt(n)}`);
      m.el.title = `Continues ${name}, which began ${m.documentStart !== undefined ? `at token ${fmt(m.documentStart)}` : 'before this update'} (before sequence ${m.row})`;
    }
  }
}

function focusRowEl(r: number, focus = true, block: ScrollLogicalPosition = 'nearest'): void {
  const el = rowsEl.querySelector<HTMLElement>(`:scope > .row[data-row="${r}"]`);
  if (!el) return;
  for (const other of rowsEl.querySelectorAll<HTMLElement>(':scope > .row[tabindex="0"]')) other.tabIndex = -1;
  el.tabIndex = 0;
  if (r === 0 && block === 'start')
    window.scrollTo(0, 0); // row 0: keep the header in view too
  else el.scrollIntoView({ block });
  if (focus) el.focus({ preventScroll: true });
}

// ───────────── interaction ─────────────

/** Character offset inside a segment's text at a point (caret hit-testing). */
function charAt(seg: HTMLElement, x: number, y: number): number | undefined {
  const doc = document as Document & { caretPositionFromPoint?(x: number, y: number): { offsetNode: Node; offset: number } | null };
  let node: Node | undefined,
    offset = 0;
  const pos = doc.caretPositionFromPoint?.(x, y);
  if (pos) {
    node = pos.offsetNode;
    offset = pos.offset;
  } else {
    const range = document.caretRangeFromPoint?.(x, y);
    if (range) {
      node = range.startContainer;
      offset = range.startOffset;
    }
  }
  if (!node || node.nodeType !== Node.TEXT_NODE || !seg.contains(node) || node.parentElement?.closest('.eos')) return undefined;
  // Characters of the segment's text before the point (its text may be split by a compact row's elision).
  const range = document.createRange();
  range.setStart(seg, 0);
  range.setEnd(node, offset);
  return range.toString().length;
}

/**
 * The character under the pointer, taken at pointerdown: focusing a segment expands a compact
 * row, so by the time of the click the text under the pointer has moved.
 */
let pressed: { seg: HTMLElement; char: number | undefined } | undefined;
rowsEl.addEventListener('pointerdown', (e) => {
  const seg = (e.target as HTMLElement).closest<HTMLElement>('.seg');
  pressed = seg ? { seg, char: charAt(seg, e.clientX, e.clientY) } : undefined;
});

rowsEl.addEventListener('click', (e) => {
  if (!data) return;
  const sel = window.getSelection();
  if (sel && !sel.isCollapsed) return; // selecting text to copy, not clicking a token
  const target = e.target as HTMLElement;
  const rowEl = target.closest<HTMLElement>('.row');
  if (!rowEl) return;
  const row = Number(rowEl.dataset.row);
  // A click on the gutter or between segments focuses the row (keyboard continues from there);
  // a click on a segment or the next token focuses that element (the browser does).
  focusRowEl(row, !target.closest('.seg, [data-next]'));
  saveState({ row });
  if (target.closest('[data-next]')) {
    post({ type: 'reveal', update: data.update, row, next: true });
    return;
  }
  const seg = target.closest<HTMLElement>('.seg');
  if (!seg) return;
  const segment = Number(seg.dataset.seg);
  const char = target.classList.contains('eos')
    ? data.rows[row].segments[segment].text.length
    : pressed?.seg === seg
      ? pressed.char
      : charAt(seg, e.clientX, e.clientY);
  pressed = undefined;
  post({ type: 'reveal', update: data.update, row, segment, char });
});

rowsEl.addEventListener('keydown', (e) => {
  if (!data) return;
  const target = e.target as HTMLElement;
  const rowEl = target.closest<HTMLElement>('.row');
  if (!rowEl) return;
  const row = Number(rowEl.dataset.row);
  const stops = () => [...rowEl.querySelectorAll<HTMLElement>('.seg, [data-next]')];
  const move = (r: number) => {
    e.preventDefault();
    focusRowEl(Math.max(0, Math.min(data!.rows.length - 1, r)));
  };
  switch (e.key) {
    case 'ArrowDown':
      move(row + 1);
      break;
    case 'ArrowUp':
      move(row - 1);
      break;
    case 'PageDown':
      move(row + 8);
      break;
    case 'PageUp':
      move(row - 8);
      break;
    case 'Home':
      if (target === rowEl) move(0);
      break;
    case 'End':
      if (target === rowEl) move(data.rows.length - 1);
      break;
    case 'ArrowRight':
    case 'ArrowLeft': {
      if (e.altKey) break;
      e.preventDefault();
      const list = stops();
      const i = list.indexOf(target);
      const j = e.key === 'ArrowRight' ? (i < 0 ? 0 : Math.min(list.length - 1, i + 1)) : i - 1;
      if (j < 0) rowEl.focus();
      else list[j].focus();
      break;
    }
    case 'Enter':
    case ' ': {
      e.preventDefault();
      if (target.hasAttribute('data-next')) post({ type: 'reveal', update: data.update, row, next: true });
      else if (target.classList.contains('seg')) post({ type: 'reveal', update: data.update, row, segment: Number(target.dataset.seg) });
      else post({ type: 'reveal', update: data.update, row });
      saveState({ row });
      break;
    }
  }
});

function onEvent(m: UpdateViewToWebview): void {
  switch (m.type) {
    case 'documents':
      if (!data || m.update !== data.update) break;
      firstDocument = m.firstDocument;
      applyDocumentNumbers();
      renderDocsLine(m.note, m.busy);
      break;
    case 'loading':
      progress.hidden = false;
      break;
    case 'error':
      progress.hidden = true;
      showError(m.message);
      break;
    case 'focusRow':
      focusRowEl(m.row, true, 'start');
      break;
    case 'marks': {
      const before = marks.update === m.update ? [...marks.rows.keys()] : [];
      marks = { update: m.update, rows: new Map(m.rows.map((x) => [x.row, { severity: x.severity, text: x.text }])) };
      if (data && data.update === m.update) for (const r of new Set([...before, ...marks.rows.keys()])) applyMark(data, r);
      break;
    }
  }
}

const channel = connect<UpdateViewProtocol>(vscode, { onEvent, requests: { show } });
