/**
 * What commands and panels ask people and how they answer, below both `src/commands/` and
 * `src/panels/` (it imports neither):
 * - the live-validated input box ({@link promptValidated}) of Go to Update / Token Offset /
 *   Document / Sequence, Inspect Updates and Export Updates. Validation itself is vscode-free
 *   (src/core/navigation.ts): on every keystroke the box shows the validator's `detail` (token
 *   range, shards touched…) as an info message, or its `error` (naming the valid range) as an
 *   error that blocks Enter;
 * - {@link argOrPrompt}: a number given as a command argument (checked, or a one-line error
 *   message) or else asked for;
 * - the dataset a command acts on ({@link resolveDataset}): an explicit `root` argument, a
 *   `vscode.Uri` passed by an editor-title button, or {@link Services.pickDataset} (the focused
 *   shard editor's dataset, the only one in the workspace, or a quick pick; with none, a message
 *   saying how to open one);
 * - {@link commandArgs} and {@link reportError}, the shape of every command's arguments and errors.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Dataset } from './core/dataset';
import { Validated, numberArg } from './core/navigation';
import { Services } from './services';
import { plainText, shortText } from './core/untrusted';

/** Options of {@link promptValidated}. */
export interface ValidatedInputOptions<T> {
  title: string;
  /** Shown under the box while the text is empty. */
  prompt: string;
  placeholder?: string;
  /** Initial text (selected, unless `cursorAtEnd`). */
  value?: string;
  /** Put the cursor after the initial text instead of selecting it. */
  cursorAtEnd?: boolean;
  /** Called on every change; must be fast (synchronous). */
  validate(text: string): Validated<T>;
  /** When this settles, the current text is validated again (e.g. a count the validator uses arrived). */
  revalidateWhen?: Promise<unknown>;
  /** Called with the accepted text just before the promise resolves (e.g. to see how it was written). */
  onAccept?(text: string): void;
}

/**
 * Shows an input box validated while typing. Resolves with the accepted value, or undefined when
 * the box is dismissed. Enter on invalid text keeps the box open with the error.
 */
export function promptValidated<T>(opts: ValidatedInputOptions<T>): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve) => {
    const box = vscode.window.createInputBox();
    box.title = opts.title;
    box.prompt = opts.prompt;
    box.placeholder = opts.placeholder;
    box.ignoreFocusOut = false;
    let done = false;
    const check = (text: string): Validated<T> | undefined => {
      if (text.trim() === '') {
        box.validationMessage = undefined;
        return undefined;
      }
      const v = opts.validate(text);
      box.validationMessage = v.ok
        ? { message: v.detail, severity: vscode.InputBoxValidationSeverity.Info }
        : { message: v.error, severity: vscode.InputBoxValidationSeverity.Error };
      return v;
    };
    const subs = [
      box.onDidChangeValue((t) => {
        check(t);
      }),
      box.onDidAccept(() => {
        const v = check(box.value);
        if (!v) {
          box.validationMessage = { message: opts.prompt, severity: vscode.InputBoxValidationSeverity.Error };
          return;
        }
        if (!v.ok) return;
        done = true;
        opts.onAccept?.(box.value);
        resolve(v.value);
        box.hide();
      }),
      box.onDidHide(() => {
        for (const s of subs) s.dispose();
        box.dispose();
        if (!done) resolve(undefined);
      }),
    ];
    if (opts.value !== undefined) {
      box.value = opts.value;
      box.valueSelection = opts.cursorAtEnd ? [opts.value.length, opts.value.length] : [0, opts.value.length];
      // The initial text shows its detail when valid; an error waits until the user types.
      const v = opts.value.trim() === '' ? undefined : opts.validate(opts.value);
      if (v?.ok) box.validationMessage = { message: v.detail, severity: vscode.InputBoxValidationSeverity.Info };
    }
    opts.revalidateWhen?.then(
      () => {
        if (!done && box.value.trim() !== '') check(box.value);
      },
      () => undefined,
    );
    box.show();
  });
}

/** The `root` a command argument or link names, when it is a folder holding a dataset. */
export function existingRoot(root: unknown): string | undefined {
  if (typeof root !== 'string' || root === '') return undefined;
  const abs = path.resolve(root);
  return fs.existsSync(path.join(abs, 'shard_manifest.jsonl')) ? abs : undefined;
}

/**
 * The dataset a navigation command acts on.
 * @param root explicit dataset root (command argument, link); a root that does not hold a
 *   `shard_manifest.jsonl` is reported and the user picks instead.
 * @param uri a resource passed by an editor-title button (its dataset is used).
 * @param focused the dataset of a focused view of ours (the update view), used before asking.
 * @returns undefined when there is none (a message has said how to open one) or the pick was dismissed.
 */
export async function resolveDataset(
  services: Services,
  purpose: string,
  root?: unknown,
  uri?: vscode.Uri,
  focused?: Dataset,
): Promise<Dataset | undefined> {
  if (root !== undefined && root !== null && root !== '') {
    const abs = existingRoot(root);
    if (abs) {
      if (!(await mayOpenRoot(abs))) return undefined;
      return services.openRoot(abs);
    }
    // The raw value is never echoed (it may come from a link): only what was wrong with it.
    void vscode.window.showWarningMessage(
      vscode.l10n.t('The dataset folder given (root) does not hold a shard_manifest.jsonl; choose a dataset instead.'),
    );
  }
  if (uri) {
    const ds = await services.datasetForFile(uri);
    if (ds) return ds;
  }
  if (focused) return focused;
  return services.pickDataset(purpose);
}

/** True when `folder` is one of the open workspace folders or inside one (symbolic links resolved). */
export function insideWorkspace(folder: string): boolean {
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const f = real(folder);
  return (vscode.workspace.workspaceFolders ?? []).some((w) => {
    if (w.uri.scheme !== 'file') return false;
    const rel = path.relative(real(w.uri.fsPath), f);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  });
}

/**
 * A dataset named by a link or command argument opens without asking only when it is inside the
 * open workspace; otherwise a modal dialog names the folder and asks first (a link from a log or
 * a web page must not make VS Code read arbitrary folders unasked).
 */
export async function mayOpenRoot(abs: string): Promise<boolean> {
  if (insideWorkspace(abs)) return true;
  const open = vscode.l10n.t('Open Dataset');
  const pick = await vscode.window.showWarningMessage(
    vscode.l10n.t('Open the dataset in {0}? It is outside the open workspace.', plainText(shortText(abs, 200))),
    {
      modal: true,
      detail: vscode.l10n.t('A link or command asked to open this folder. Open it only if you trust where the link came from.'),
    },
    open,
  );
  return pick === open;
}

/** Shows an error from a command without throwing into VS Code (which would show a generic failure). */
export function reportError(services: Services, what: string, err: unknown): undefined {
  const msg = err instanceof Error ? err.message : String(err);
  services.log.error(`${what}: ${msg}`);
  void vscode.window.showErrorMessage(`${what}: ${plainText(msg)}`);
  return undefined;
}

/** Splits a command's arguments into an options object and/or a resource URI (editor-title buttons pass the URI). */
export function commandArgs<T extends object>(args: unknown[]): { opts: Partial<T>; uri?: vscode.Uri } {
  let opts: Partial<T> = {};
  let uri: vscode.Uri | undefined;
  for (const a of args) {
    if (a instanceof vscode.Uri) uri ??= a;
    else if (a && typeof a === 'object' && !Array.isArray(a) && !('groupId' in a)) opts = { ...opts, ...(a as Partial<T>) };
  }
  return { opts, uri };
}

/**
 * A number a command takes as an argument or else asks for. With `arg` given (a number, or text
 * such as `"55_000"` from a link), it is parsed ({@link numberArg}) and checked; a bad one is
 * said in one error message naming `name` and what was expected (the check's error), and the
 * result is undefined. Without it (`undefined`, `null` or `""`), resolves with `prompt()` (which
 * resolves undefined when dismissed), or undefined when there is no prompt.
 * @param name the argument's name in messages (`update`, `offset`…).
 * @param check the rule the number must meet (a range, a dataset's updates); its `value` is the result.
 */
export async function argOrPrompt<T>(
  arg: unknown,
  name: string,
  check: (n: number) => { ok: true; value: T } | { ok: false; error: string },
  prompt?: () => Promise<T | undefined>,
): Promise<T | undefined> {
  const n = numberArg(arg, name);
  if (n.value === undefined && n.error === undefined) return prompt?.();
  const v = n.error !== undefined ? { ok: false as const, error: n.error } : check(n.value!);
  if (!v.ok) {
    void vscode.window.showErrorMessage(plainText(v.error));
    return undefined;
  }
  return v.value;
}
