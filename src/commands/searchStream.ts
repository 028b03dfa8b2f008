/**
 * Token Shards: Search Stream… (`tokenShards.searchStream`) and Search the Stream for the Selection
 * (`tokenShards.searchSelection`), both opening the dataset's search panel
 * (src/panels/searchPanel.ts).
 *
 * Arguments of `tokenShards.searchStream` (all optional; with `terms` the command does not prompt):
 * `{ terms: string[] | string, word?: boolean, ignoreCase?: boolean, ids?: boolean, per?: number, root?: string }`
 * — `terms` as an array is used as is (no splitting); as a string it is split like the input box
 * (commas; `;` with `ids`). An editor-title button passes the shard's or manifest's URI, whose
 * dataset is then used. Without `terms`: an input box for comma-separated terms with toggle
 * buttons for whole word, ignore case and token ids. Resolves with the {@link SearchOutcome}
 * (the counts, for tests and callers), or undefined when dismissed.
 *
 * Search the Stream for the Selection: the selected text of the active text editor (one term, commas
 * and all), or the decoded text of the tokens selected in the shard editor.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { count, fmt } from '../core/units';
import type { Dataset } from '../core/dataset';
import { SearchOutcome, SearchPanels } from '../panels/searchPanel';
import { joinTerms } from '../panels/searchModel';
import type { SearchForm } from '../protocol/search';
import { Services } from '../services';
import { commandArgs, reportError, resolveDataset } from '../inputs';

/** Arguments of `tokenShards.searchStream`. */
export interface SearchStreamArgs {
  terms: string[] | string;
  word: boolean;
  ignoreCase: boolean;
  ids: boolean;
  /** Updates per bucket (default: automatic, about 400 buckets). */
  per: number;
  /** Dataset root; default: the focused shard editor's dataset, the only one, or a pick. */
  root: string;
}

/** Longest selection searched (characters); a term may hold at most 1,000 UTF-8 bytes anyway. */
const MAX_SELECTION_CHARS = 1000;

/** Runs Search Stream… (see the file comment). */
export async function searchStream(services: Services, panels: SearchPanels, ...args: unknown[]): Promise<SearchOutcome | undefined> {
  const { opts, uri } = commandArgs<SearchStreamArgs>(args);
  try {
    const ds = await resolveDataset(services, vscode.l10n.t('Search Stream: choose a dataset'), opts.root, uri);
    if (!ds) return undefined;
    let form: SearchForm | undefined;
    if (opts.terms !== undefined) {
      const ids = !!opts.ids;
      const text = Array.isArray(opts.terms) ? joinTerms(opts.terms.map(String), ids) : String(opts.terms);
      form = { text, word: !!opts.word, ignoreCase: !!opts.ignoreCase, ids, per: typeof opts.per === 'number' ? opts.per : null };
    } else {
      form = await promptSearch(ds, { text: '', word: !!opts.word, ignoreCase: !!opts.ignoreCase, ids: !!opts.ids, per: null });
      if (!form) return undefined;
    }
    return await panels.show(ds, form);
  } catch (err) {
    return reportError(services, vscode.l10n.t('Search Stream'), err);
  }
}

/** Runs Search the Stream for the Selection (see the file comment). */
export async function searchSelection(services: Services, panels: SearchPanels, ...args: unknown[]): Promise<SearchOutcome | undefined> {
  const { opts } = commandArgs<{ webview?: string }>(args);
  try {
    let text: string | undefined;
    let ds: Dataset | undefined;
    const shard = services.activeShard;
    const editor = vscode.window.activeTextEditor;
    if (shard && (opts.webview || !editor)) {
      if (!shard.dataset) {
        void vscode.window.showWarningMessage(vscode.l10n.t('Search needs a dataset: this shard is not listed in a shard_manifest.jsonl.'));
        return undefined;
      }
      ds = shard.dataset;
      const sel = shard.selection;
      if (!sel || sel[1] <= sel[0]) {
        void vscode.window.showInformationMessage(vscode.l10n.t('Select some tokens in the shard editor first.'));
        return undefined;
      }
      if (sel[1] - sel[0] > MAX_SELECTION_CHARS) {
        void vscode.window.showWarningMessage(
          vscode.l10n.t('The selection holds {0} tokens; search terms hold at most 1,000 bytes.', fmt(sel[1] - sel[0])),
        );
        return undefined;
      }
      const tok = await services.tokenizerFor(ds);
      if (!tok) {
        void vscode.window.showWarningMessage(
          vscode.l10n.t('Search needs the tokenizer (tokenizer/tokenizer.json or the tokenShards.tokenizerPath setting).'),
        );
        return undefined;
      }
      text = tok.decode(await ds.stream.read(sel[0], sel[1] - sel[0]));
    } else if (editor) {
      text = editor.document.getText(editor.selection);
      if (!text) {
        const range = editor.document.getWordRangeAtPosition(editor.selection.active);
        text = range ? editor.document.getText(range) : '';
      }
      ds = await resolveDataset(services, vscode.l10n.t('Search Stream: choose a dataset'), undefined, editor.document.uri);
      if (!ds) return undefined;
    }
    if (!text || !ds) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Select the text to search for first.'));
      return undefined;
    }
    if (text.length > MAX_SELECTION_CHARS) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t('The selection holds {0} characters; search terms hold at most 1,000 bytes.', fmt(text.length)),
      );
      return undefined;
    }
    return await panels.show(ds, { text: joinTerms([text], false), word: false, ignoreCase: false, ids: false, per: null });
  } catch (err) {
    return reportError(services, vscode.l10n.t('Search the Stream for the Selection'), err);
  }
}

/**
 * The input flow: one input box for the terms, with toggle buttons (whole word, ignore case,
 * token ids) in its title bar; their state is spelled out in the prompt. Resolves undefined when
 * dismissed.
 */
function promptSearch(ds: Dataset, initial: SearchForm): Promise<SearchForm | undefined> {
  return new Promise((resolve) => {
    const form = { ...initial };
    const box = vscode.window.createInputBox();
    const on = (b: boolean) => (b ? vscode.l10n.t('on') : vscode.l10n.t('off'));
    const mk = (icon: string, label: string, state: boolean) => ({
      iconPath: new vscode.ThemeIcon(state ? 'pass-filled' : icon),
      tooltip: `${label} (${on(state)})`,
    });
    const refresh = () => {
      const bw = mk('whole-word', vscode.l10n.t('Whole word'), form.word);
      const bc = mk('case-sensitive', vscode.l10n.t('Ignore case'), form.ignoreCase);
      const bi = mk('symbol-numeric', vscode.l10n.t('Terms are token ids'), form.ids);
      buttons = [bw, bc, bi];
      box.buttons = buttons;
      box.prompt = vscode.l10n.t(
        'Whole word: {0} · Ignore case: {1} · Token ids: {2}. {3}',
        on(form.word),
        on(form.ignoreCase),
        on(form.ids),
        form.ids
          ? vscode.l10n.t('Terms separated by ";", ids by commas (e.g. 791,4062; 100257).')
          : vscode.l10n.t('Terms separated by commas (\\, for a literal comma).'),
      );
      box.placeholder = form.ids ? '791,4062; 100257' : vscode.l10n.t('e.g. whale, Ahab, the sea');
    };
    let buttons: vscode.QuickInputButton[] = [];
    box.title = vscode.l10n.t('Search Stream · {0} ({1})', path.basename(ds.root), count(ds.schedule.numUpdates, 'update'));
    box.value = initial.text;
    refresh();
    let done = false;
    const finish = (v: SearchForm | undefined) => {
      if (done) return;
      done = true;
      resolve(v);
      box.dispose();
    };
    box.onDidTriggerButton((b) => {
      const i = buttons.indexOf(b);
      if (i === 0) form.word = !form.word;
      if (i === 1) form.ignoreCase = !form.ignoreCase;
      if (i === 2) form.ids = !form.ids;
      if (form.ids) {
        form.word = false;
        form.ignoreCase = false;
      }
      refresh();
    });
    box.onDidChangeValue(() => {
      box.validationMessage = undefined;
    });
    box.onDidAccept(() => {
      if (!box.value.trim()) {
        box.validationMessage = vscode.l10n.t('Type at least one term.');
        return;
      }
      finish({ ...form, text: box.value });
    });
    box.onDidHide(() => finish(undefined));
    box.show();
  });
}
