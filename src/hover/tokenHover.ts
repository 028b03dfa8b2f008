/**
 * Token-id hovers in any text editor: hover an integer that is a token id, an element of an id
 * list (`[791, 4062, 14198]`, `791 4062 14198`, numpy/torch prints, JSON arrays across lines),
 * or `update k` / `step k` in a log. What counts as an id is decided by src/core/idList.ts
 * (rules in its module docs); this file only renders.
 *
 * - A lone id: its piece with whitespace and invisible characters made visible (`·` space, `↵`
 *   newline, `⇥` tab, `⟨CR⟩`, `⟨ZWSP⟩`…: src/core/invisibles.ts, shared with the webviews),
 *   its bytes in hex when it holds part of a UTF-8 character, special/added flags, the id.
 * - A list: the same for the hovered id, then the decoded text of the whole list (the innermost
 *   row of a 2-D print) with its length in tokens and how many ids are not in the vocabulary
 *   (shown inline as `⟨unknown 123456⟩`; the library would drop them silently).
 * - `update k` / `step k`: the update's token range and shards, with a link to open it
 *   (`tokenShards.goToUpdate`), and the step ambiguity said plainly.
 *
 * Registered for the languages of `tokenShards.hover.languages` (default `["*"]`: every language)
 * on `file`, `untitled` and notebook-cell documents; re-registered when that setting changes.
 * `tokenShards.hover.enabled` turns it off; `tokenShards.hover.minDigits` is the lone-number rule.
 *
 * The tokenizer: the workspace's dataset (the one holding the document, else the first found;
 * never a prompt) or `tokenShards.tokenizerPath`, loaded once through {@link Services.tokenizerFor}
 * and shared with the rest of the extension. A hover never waits on a file read: while the
 * tokenizer (or the dataset list) is loading, the hover says "Loading tokenizer…" and starts
 * the load; later hovers use it. With no tokenizer at all, a hover offers "Choose tokenizer…"
 * once per session, then stays quiet.
 *
 * Markdown safety: decoded text goes in fenced code blocks whose fence is longer than any
 * backtick run in the text; other text through `appendText` (escaped); `supportHtml` is off;
 * `isTrusted` lists only the commands a hover links to.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { Dataset } from '../core/dataset';
import { count, fmt } from '../core/units';
import { IdListHit, UpdateHit, findIdsAt } from '../core/idList';
import { describeUpdate } from '../core/schedule';
import { orderName } from '../core/order/orderText';
import { visibleText } from '../core/invisibles';
import { LoadedTokenizer, TokenPiece } from '../core/tokenizer';
import { Services } from '../services';
import { decodeForDisplay } from '../commands/decodeSelection';
import { markdownText } from '../core/untrusted';
import { parseStepConvention, stepReadings } from '../core/trainingLog/parse';
import { stepConvention } from '../panels/trainingLogPanel';

/** Characters of the document read on each side of the cursor (a 4,096-id JSON array one id per line is ~45,000). */
export const HOVER_WINDOW_CHARS = 131_072;
/** Decoded list text longer than this is cut in the hover (Decode Selection shows it all). */
export const HOVER_MAX_TEXT_CHARS = 4_000;

/**
 * A token piece for display: whitespace made visible in its text, but not inside the `<F0 9F>`
 * hex groups of a piece holding part of a UTF-8 character; added tokens as they are.
 */
export function visiblePiece(p: TokenPiece): string {
  if (p.kind === 'special' || p.kind === 'added') return p.text;
  if (p.kind !== 'partial') return visibleText(p.text);
  return p.text
    .split(/(<[0-9A-F]{2}(?: [0-9A-F]{2})*>)/)
    .map((part, i) => (i % 2 ? part : visibleText(part)))
    .join('');
}

/**
 * A fenced code block that shows `code` verbatim: the fence is one backtick longer than the
 * longest backtick run in the code (CommonMark), at least three.
 */
export function codeBlock(code: string, lang = 'text'): string {
  let longest = 0;
  for (const m of code.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const fence = '`'.repeat(Math.max(3, longest + 1));
  // A fence line must not be followed by more backticks on the info line; lang is ours.
  return `\n${fence}${lang}\n${code}\n${fence}\n`;
}

/** A `command:` link target with JSON arguments; parentheses encoded too (Markdown link syntax). */
export function commandUri(command: string, args?: unknown[]): string {
  const q = args ? `?${encodeURIComponent(JSON.stringify(args))}` : '';
  return `command:${command}${q.replace(/\(/g, '%28').replace(/\)/g, '%29')}`;
}

/**
 * Escapes text for Markdown: every ASCII punctuation character that Markdown could read as
 * syntax gets a backslash (CommonMark allows escaping any of them). Unlike
 * `MarkdownString.appendText`, spaces stay spaces (it writes `&nbsp;`, which stops line wrapping).
 */
export function escapeMarkdown(s: string): string {
  return markdownText(s);
}

/** Appends plain text, escaped. */
function appendPlain(md: vscode.MarkdownString, s: string): void {
  md.appendMarkdown(escapeMarkdown(s));
}

/** Escapes the few characters that matter inside a Markdown link label. */
function linkLabel(s: string): string {
  return s.replace(/[\\[\]*_`<>]/g, (c) => `\\${c}`);
}

/** What a token piece is, in words. */
function kindLabel(p: TokenPiece): string {
  switch (p.kind) {
    case 'special':
      return vscode.l10n.t('special token');
    case 'added':
      return vscode.l10n.t('added token (not special)');
    case 'partial':
      return vscode.l10n.t('part of a UTF-8 character');
    case 'unknown':
      return vscode.l10n.t('not in the vocabulary');
    default:
      return vscode.l10n.t('token');
  }
}

/** Appends the hovered token's block: id, kind, visible piece, bytes when partial. */
function appendPiece(md: vscode.MarkdownString, tok: LoadedTokenizer, id: number, suffix = ''): void {
  const p = tok.pieces([id])[0];
  md.appendMarkdown(`**${vscode.l10n.t('Token {0}', String(id))}**`);
  const facts = [p.kind === 'text' ? '' : kindLabel(p), suffix].filter(Boolean);
  if (facts.length) appendPlain(md, ' · ' + facts.join(' · '));
  md.appendMarkdown('\n');
  if (p.kind === 'unknown') {
    md.appendMarkdown('\n');
    appendPlain(md, vscode.l10n.t('Id {0} is ≥ the vocabulary size ({1}): no token.', String(id), fmt(tok.vocabSize)));
    md.appendMarkdown('\n');
    return;
  }
  md.appendMarkdown(codeBlock(visiblePiece(p)));
  if (p.kind === 'partial') {
    md.appendMarkdown('\n');
    appendPlain(md, vscode.l10n.t('Bytes: {0}', p.hex));
    md.appendMarkdown('\n');
  }
}

/** Hover content for a lone id. */
export function renderIdHover(tok: LoadedTokenizer, id: number): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  appendPiece(md, tok, id);
  appendFooter(md, tok);
  return md;
}

/** Hover content for an element of an id list. */
export function renderListHover(tok: LoadedTokenizer, hit: IdListHit): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  appendPiece(md, tok, hit.id, vscode.l10n.t('index {0} in a list of {1}', String(hit.index), fmt(hit.ids.length)));
  md.appendMarkdown('\n---\n\n');
  const { text, unknown, special } = decodeForDisplay(tok, hit.ids, hit.gaps, true);
  const facts = [count(hit.ids.length, 'token')];
  if (unknown) facts.push(count(unknown, 'unknown id'));
  if (hit.gaps.length) facts.push(vscode.l10n.t('the print elides ids at ⟨…⟩'));
  if (special) facts.push(vscode.l10n.t('⟨special …⟩ is a real special token (such as EOS); text that only spells one is shown as is'));
  if (hit.row) facts.push(vscode.l10n.t('row {0} (0-based) of {1}', String(hit.row.index), fmt(hit.row.count)));
  md.appendMarkdown(`**${vscode.l10n.t('Decoded list')}** · `);
  appendPlain(md, facts.join(' · '));
  md.appendMarkdown('\n');
  let shown = text;
  let cut = 0;
  if (shown.length > HOVER_MAX_TEXT_CHARS) {
    let end = HOVER_MAX_TEXT_CHARS;
    if (/[\uD800-\uDBFF]/.test(shown[end - 1])) end--; // do not split a surrogate pair
    cut = shown.length - end;
    shown = shown.slice(0, end);
  }
  // Invisible and bidi characters as marks (⟨RLO⟩): a U+202E in the data must not reorder the hover.
  md.appendMarkdown(codeBlock(visibleText(shown, { whitespace: false })));
  if (cut) {
    md.appendMarkdown('\n');
    appendPlain(md, vscode.l10n.t('… {0} more characters. Select the list and run Decode Selection to see all of it.', fmt(cut)));
    md.appendMarkdown('\n');
  }
  appendFooter(md, tok);
  return md;
}

/** Which tokenizer decoded this (small print). */
function appendFooter(md: vscode.MarkdownString, tok: LoadedTokenizer): void {
  md.appendMarkdown('\n\n');
  appendPlain(md, vscode.l10n.t('Tokenizer: {0} ({1} ids)', shortPath(tok.file), fmt(tok.vocabSize)));
}

/** `…/parent/tokenizer/tokenizer.json` style: the last three path parts. */
function shortPath(file: string): string {
  const parts = file.split(path.sep);
  return parts.length > 3 ? `…${path.sep}${parts.slice(-3).join(path.sep)}` : file;
}

/**
 * Hover content for `update k` / `step k` against a dataset. "step k" is read as the setting
 * `tokenShards.trainingLog.stepConvention` reads it (default 'after': update k − 1), the same
 * reading as the training log and Go to Update; the other reading is offered second.
 */
export function renderUpdateHover(ds: Dataset, hit: UpdateHit, services?: Services): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.isTrusted = { enabledCommands: ['tokenShards.goToUpdate', 'tokenShards.inspectUpdates'] };
  const k = hit.update;
  const inspect = (u: number) =>
    `[${linkLabel(vscode.l10n.t('Inspect updates around {0}', fmt(u)))}](${commandUri('tokenShards.inspectUpdates', [{ update: u, root: ds.root }])})`;
  const name = path.basename(ds.root);
  const link = (u: number) =>
    `[${linkLabel(vscode.l10n.t('Open update {0}', fmt(u)))}](${commandUri('tokenShards.goToUpdate', [{ update: u, root: ds.root }])})`;
  const conv = services ? stepConvention(services) : parseStepConvention(undefined);
  // With a run description in force, update k is the run's (never the card's in its place).
  const orders = services?.orders;
  if (orders && orders.runFileFor(ds) !== undefined) {
    const run = orders.peek(ds);
    if (!run) {
      appendPlain(
        md,
        vscode.l10n.t(
          'Update {0} follows the run description {1}, which is not open yet (or cannot be used): ',
          fmt(k),
          orders.runFileFor(ds)!,
        ),
      );
      md.appendMarkdown(link(k));
      return md;
    }
    if (run.kind !== 'sequential') {
      const u = hit.keyword === 'step' ? stepReadings(k, conv, run.numUpdates)[0] : k >= 0 && k < run.numUpdates ? k : undefined;
      md.appendMarkdown(`**${vscode.l10n.t('{0} {1}', hit.keyword === 'step' ? 'Step' : 'Update', fmt(k))}** · `);
      if (u === undefined) {
        appendPlain(md, vscode.l10n.t('outside the run: the {0} has updates 0..{1} (0-based).', orderName(run), fmt(run.numUpdates - 1)));
        return md;
      }
      appendPlain(
        md,
        vscode.l10n.t(
          'update {0} (0-based) of the {1}: {2} in batch order · dataset {3}',
          fmt(u),
          orderName(run),
          count(run.samplesPerUpdate, 'sample'),
          name,
        ),
      );
      md.appendMarkdown(`\n\n${link(u)}`);
      return md;
    }
  }
  const readings =
    hit.keyword === 'step' ? stepReadings(k, conv, ds.schedule.numUpdates) : [k].filter((u) => u >= 0 && u < ds.schedule.numUpdates);
  // What "step k" means, in words, for each reading.
  const stepMeaning = (u: number) =>
    u === k
      ? vscode.l10n.t('"Step {0}" read as the 0-based index of the update: update {0}.', fmt(k))
      : vscode.l10n.t(
          '"Step {0}" read as "after {1}" (a checkpoint saved at step k has trained on updates 0..k−1): its last update is update {2}.',
          fmt(k),
          count(k, 'update'),
          fmt(k - 1),
        );
  if (readings.length === 0) {
    md.appendMarkdown(`**${vscode.l10n.t('{0} {1}', hit.keyword === 'step' ? 'Step' : 'Update', fmt(k))}** · `);
    appendPlain(
      md,
      ds.schedule.numUpdates === 0
        ? vscode.l10n.t('the dataset {0} holds no complete update.', name)
        : vscode.l10n.t('outside the dataset {0}: it holds updates 0..{1} (0-based).', name, fmt(ds.schedule.numUpdates - 1)),
    );
    return md;
  }
  const [shown, other] = readings;
  appendUpdateFacts(md, ds, shown, services);
  md.appendMarkdown(`\n\n${link(shown)} · ${inspect(shown)}`);
  if (hit.keyword === 'step') {
    md.appendMarkdown('\n\n---\n\n');
    appendPlain(md, `${stepMeaning(shown)} ${vscode.l10n.t('(setting tokenShards.trainingLog.stepConvention: {0})', conv)}`);
    if (other !== undefined) {
      md.appendMarkdown('\n\n');
      appendPlain(md, vscode.l10n.t('Other reading: {0}', stepMeaning(other)));
      md.appendMarkdown(` ${link(other)}`);
    }
  }
  return md;
}

/** Token range, sequences and shards of update k (in range). */
function appendUpdateFacts(md: vscode.MarkdownString, ds: Dataset, k: number, services?: Services): void {
  const [start, end] = ds.schedule.updateRange(k);
  const first = ds.stream.locate(start).segment;
  const last = ds.stream.locate(end - 1).segment;
  const desc = describeUpdate(k);
  md.appendMarkdown(`**${escapeMarkdown(desc.charAt(0).toUpperCase() + desc.slice(1))}**`);
  appendPlain(md, ' · ' + vscode.l10n.t('dataset {0}', path.basename(ds.root)));
  md.appendMarkdown('\n\n');
  appendPlain(
    md,
    vscode.l10n.t(
      'Global tokens [{0}, {1}) · {2} × {3}',
      fmt(start),
      fmt(end),
      count(ds.schedule.sequencesPerUpdate, 'sequence'),
      count(ds.schedule.L, 'token'),
    ),
  );
  md.appendMarkdown('\n\n');
  const shards: string[] = [];
  for (let i = first; i <= last; i++) {
    const s = ds.shards[i];
    const a = Math.max(start, s.startToken) - s.startToken;
    const b = Math.min(end, s.startToken + s.numTokens) - s.startToken;
    shards.push(vscode.l10n.t('{0}, its tokens [{1}, {2})', s.shard, fmt(a), fmt(b)));
  }
  // A shard this update reads that failed verification (this session).
  const failed = (services?.failedShards?.(ds.root) ?? []).filter(
    (f) => f.index >= first && f.index <= Math.min(ds.shards.length - 1, end < ds.storedTokens ? ds.stream.locate(end).segment : last),
  );
  for (const f of failed) {
    appendPlain(
      md,
      '⚠ ' + vscode.l10n.t("Reads {0}, which failed verification ({1}): its tokens are not the dataset's.", f.shard, f.status),
    );
    md.appendMarkdown('\n\n');
  }
  if (last === first) appendPlain(md, vscode.l10n.t('Shard: {0}', shards[0]));
  else {
    appendPlain(md, vscode.l10n.t('Crosses a shard edge:'));
    md.appendMarkdown('\n' + shards.map((x) => `- ${escapeMarkdown(x)}`).join('\n') + '\n');
  }
  // The targets need one more token; say so when it lives in the next shard.
  if (end < ds.storedTokens) {
    const la = ds.stream.locate(end).segment;
    if (la !== last) {
      md.appendMarkdown('\n\n');
      appendPlain(md, vscode.l10n.t('Its last target token (global {0}) is the first token of {1}.', fmt(end), ds.shards[la].shard));
    }
  }
}

/** A hover saying the tokenizer is on its way. */
function loadingHover(): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  appendPlain(md, vscode.l10n.t('Loading tokenizer…'));
  return md;
}

/** The one-time offer to choose a tokenizer (or the reason loading failed). */
function chooseTokenizerHover(error?: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.isTrusted = { enabledCommands: ['tokenShards.chooseTokenizer'] };
  appendPlain(
    md,
    error
      ? vscode.l10n.t('Token ids: the tokenizer could not be loaded ({0}).', error)
      : vscode.l10n.t('Token ids: no tokenizer. Open a dataset folder (with tokenizer/tokenizer.json) or choose a tokenizer.json.'),
  );
  md.appendMarkdown(` [${linkLabel(vscode.l10n.t('Choose tokenizer…'))}](${commandUri('tokenShards.chooseTokenizer')})`);
  return md;
}

/** Where the tokenizer for hovers stands. Updated asynchronously; read synchronously by hovers. */
type TokState =
  { status: 'loading' } | { status: 'ready'; tok: LoadedTokenizer } | { status: 'none' } | { status: 'failed'; error: string };

/** How long the first hover of a session waits for the datasets and tokenizer to load (ms). */
export const HOVER_LOAD_WAIT_MS = 3000;

/** The hover provider. See the file comment. */
export class TokenHoverProvider implements vscode.HoverProvider, vscode.Disposable {
  private datasets?: Dataset[];
  /** The dataset list is out of date; it is still used until the new one arrives. */
  private stale = false;
  private datasetsLoading?: Promise<void>;
  private readonly toks = new Map<string, TokState>();
  private offeredChoice = false;
  private generation = 0;
  private readonly subs: vscode.Disposable[] = [];

  constructor(private readonly services: Services) {
    // Datasets: re-listed after any change, the old list serving hovers meanwhile. Tokenizers:
    // forgotten when a dataset's files changed (its tokenizer.json may have) or the setting did.
    const relist = () => {
      this.generation++;
      this.stale = true;
      this.datasetsLoading = undefined;
    };
    this.subs.push(
      services.onDidChangeDataset((root) => {
        relist();
        if (root !== '*') this.toks.clear();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(relist),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('tokenShards.tokenizerPath')) {
          relist();
          this.toks.clear();
        }
      }),
    );
  }

  /**
   * The datasets of the workspace, if known; starts finding them otherwise. Never waits.
   * (`workspaceDatasetRoots` searches the workspace; `openRoot` reads each manifest once.)
   * When the list arrives, the tokenizer for `doc` (the document hovered) starts loading at
   * once, so the next hover does not find it still to be loaded.
   */
  private datasetsNow(doc: vscode.TextDocument): Dataset[] | undefined {
    if (this.datasets && !this.stale) return this.datasets;
    if (!this.datasetsLoading) {
      const gen = this.generation;
      this.services.log.info('token hover: looking for datasets in the workspace');
      this.datasetsLoading = (async () => {
        const roots = await this.services.workspaceDatasetRoots();
        const opened: Dataset[] = [];
        for (const root of roots) {
          try {
            opened.push(await this.services.openRoot(root));
          } catch {
            /* reported in the log by openRoot */
          }
        }
        if (gen === this.generation) {
          this.datasets = opened;
          this.stale = false;
        }
        this.services.log.info(
          `token hover: ${count(opened.length, 'dataset')} in the workspace${opened.length ? ` (${opened.map((d) => d.root).join(', ')})` : ''}; tokenizer setting: ${this.services.configuredTokenizerPath() ?? '(none)'}`,
        );
      })()
        .catch((err) => {
          this.services.log.warn(`token hover: cannot list datasets: ${(err as Error).message}`);
          if (gen === this.generation) {
            this.datasets = [];
            this.stale = false;
          }
        })
        .then(() => {
          if (gen === this.generation && this.datasets) this.tokenizerNow(this.datasetFor(doc, this.datasets));
        });
    }
    return this.datasets;
  }

  /** The dataset a document belongs to (its root is a parent folder), else the first one. */
  private datasetFor(doc: vscode.TextDocument, all: Dataset[]): Dataset | undefined {
    if (doc.uri.scheme === 'file') {
      const f = doc.uri.fsPath;
      const own = all.find((d) => f === d.root || f.startsWith(d.root + path.sep));
      if (own) return own;
    }
    return all[0];
  }

  /** Tokenizer state for a dataset (or the setting); starts loading on first ask. Never waits. */
  private tokenizerNow(ds: Dataset | undefined): TokState {
    const file = ds?.tokenizerFile ?? this.services.configuredTokenizerPath();
    if (!file) return { status: 'none' };
    const known = this.toks.get(file);
    if (known) return known;
    const state: TokState = { status: 'loading' };
    this.toks.set(file, state);
    this.services.tokenizerFor(ds).then(
      (tok) => {
        if (this.toks.get(file) === state) this.toks.set(file, tok ? { status: 'ready', tok } : { status: 'none' });
      },
      (err) => {
        if (this.toks.get(file) === state) this.toks.set(file, { status: 'failed', error: (err as Error).message });
      },
    );
    return state;
  }

  /**
   * The hover. Normally answered at once from the loaded tokenizer. Only while the workspace's
   * datasets or the tokenizer are still being loaded (once per session) it waits for that load,
   * at most {@link HOVER_LOAD_WAIT_MS} and never past cancellation, so the first hover shows
   * the token instead of a "Loading tokenizer…" that VS Code would never refresh.
   */
  async provideHover(doc: vscode.TextDocument, pos: vscode.Position, token?: vscode.CancellationToken): Promise<vscode.Hover | undefined> {
    const first = this.hoverNow(doc, pos);
    if (!first.loading) return first.hover;
    const loaded = (async () => {
      await this.datasetsLoading;
      const ds = this.datasets ? this.datasetFor(doc, this.datasets) : undefined;
      await this.services.tokenizerFor(ds).catch(() => undefined);
      await Promise.resolve(); // let tokenizerNow's own .then record the state first
    })();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      loaded,
      new Promise<void>((r) => {
        timer = setTimeout(r, HOVER_LOAD_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (token?.isCancellationRequested) return undefined;
    return this.hoverNow(doc, pos).hover;
  }

  /**
   * Synchronous (never waits on a file read): reads a window of {@link HOVER_WINDOW_CHARS}
   * characters on each side of the cursor, asks the core parser what is there, and renders it
   * with whatever tokenizer is loaded. `loading` says the answer would change once the datasets
   * or the tokenizer finish loading.
   */
  private hoverNow(doc: vscode.TextDocument, pos: vscode.Position): { hover?: vscode.Hover; loading: boolean } {
    const done = (hover?: vscode.Hover) => ({ hover, loading: false });
    const cfg = vscode.workspace.getConfiguration('tokenShards', doc);
    if (!cfg.get<boolean>('hover.enabled', true)) return done();
    // Cheap early exits: only digits, and the words update/step, can start a hover.
    const line = doc.lineAt(pos.line).text;
    const c = line.charCodeAt(pos.character);
    const isDigit = c >= 48 && c <= 57;
    if (!isDigit) {
      const word = doc.getWordRangeAtPosition(pos, /[A-Za-z]+/);
      const w = word ? doc.getText(word).toLowerCase() : '';
      if (w !== 'update' && w !== 'step') return done();
    }
    const offset = doc.offsetAt(pos);
    const winStart = Math.max(0, offset - HOVER_WINDOW_CHARS);
    const text = doc.getText(new vscode.Range(doc.positionAt(winStart), doc.positionAt(offset + HOVER_WINDOW_CHARS)));
    const lastLine = doc.lineAt(doc.lineCount - 1);
    const docEnd = doc.offsetAt(lastLine.range.end);
    const clipped = { start: winStart > 0, end: winStart + text.length < docEnd };

    const all = this.datasetsNow(doc);
    const ds = all ? this.datasetFor(doc, all) : undefined;
    const tokState: TokState = all ? this.tokenizerNow(ds) : { status: 'loading' };
    const tok = tokState.status === 'ready' ? tokState.tok : undefined;
    const minDigits = Math.max(1, cfg.get<number>('hover.minDigits', 3));
    const hit = findIdsAt(text, offset - winStart, { minDigits, vocabSize: tok?.vocabSize, clipped });
    if (!hit) return done();
    const range = new vscode.Range(doc.positionAt(winStart + hit.range.start), doc.positionAt(winStart + hit.range.end));

    if (hit.kind === 'update') {
      if (!all) return { loading: true }; // datasets still being found: an update hover needs one
      return done(ds ? new vscode.Hover(renderUpdateHover(ds, hit, this.services), range) : undefined);
    }
    if (tok) return done(new vscode.Hover(hit.kind === 'list' ? renderListHover(tok, hit) : renderIdHover(tok, hit.id), range));
    if (tokState.status === 'loading') return { hover: new vscode.Hover(loadingHover(), range), loading: true };
    if (this.offeredChoice) return done();
    this.offeredChoice = true;
    return done(new vscode.Hover(chooseTokenizerHover(tokState.status === 'failed' ? tokState.error : undefined), range));
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
  }
}

/**
 * The document selector for `tokenShards.hover.languages`: `*` = every language; an empty list
 * registers nothing. Schemes: `file`, `untitled` and `vscode-notebook-cell` (notebook cells).
 */
export function hoverSelector(languages: readonly string[] | undefined): vscode.DocumentFilter[] {
  const schemes = ['file', 'untitled', 'vscode-notebook-cell'];
  const langs = Array.isArray(languages) ? languages.filter((l) => typeof l === 'string' && l.trim() !== '') : ['*'];
  if (langs.includes('*')) return schemes.map((scheme) => ({ scheme }));
  return langs.flatMap((language) => schemes.map((scheme) => ({ language, scheme })));
}

/**
 * Registers `provider` for the languages in `tokenShards.hover.languages`, again whenever that
 * setting changes. Dispose the result to unregister.
 */
export function registerTokenHover(provider: TokenHoverProvider): vscode.Disposable {
  let registration: vscode.Disposable | undefined;
  const register = () => {
    registration?.dispose();
    const langs = vscode.workspace.getConfiguration('tokenShards').get<string[]>('hover.languages', ['*']);
    const selector = hoverSelector(langs);
    registration = selector.length ? vscode.languages.registerHoverProvider(selector, provider) : undefined;
  };
  register();
  return vscode.Disposable.from(
    { dispose: () => registration?.dispose() },
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('tokenShards.hover.languages')) register();
    }),
  );
}
