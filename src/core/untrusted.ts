/**
 * Text that came from data — shard names, paths and values from a manifest, decoded token text,
 * parameters of a `vscode://` link — is never markup and never terminal control. This module is
 * the ONE place that makes such text safe for each place it is shown. It imports nothing from
 * `vscode` (only the invisible-character table, `core/invisibles.ts`, for the names of control
 * characters), so it runs in the CLI, the extension host and unit tests alike.
 *
 * - {@link terminalSafe}: for terminals (the CLI). Control characters (C0 except newline/tab when
 *   asked to keep them, DEL, C1 such as U+009B "CSI", bidi overrides/isolates) become visible marks
 *   such as `⟨ESC⟩`, `⟨CR⟩`, `⟨U+009B⟩`, so no byte from data can move the cursor, recolour,
 *   retitle the window or reorder what is shown.
 * - {@link plainText}: for notification and message text (`showInformationMessage` & co.). VS Code
 *   turns `[label](command:…)` / `(https:…)` / `(file:…)` inside those into clickable links; a word
 *   joiner between `]` and `(` stops that, and control characters are marked as above.
 * - {@link iconSafe}: for quick pick labels/descriptions/details and status bar text, where
 *   `$(name)` renders a codicon: escaped as `\$(name)` (VS Code's own escape), plus {@link plainText}.
 * - {@link markdownText}: for Markdown (hovers, MarkdownString): every Markdown punctuation
 *   character backslash-escaped (what `MarkdownString.appendText` does), `<`/`>`/`&` as entities,
 *   `$(` escaped, control characters marked.
 * - {@link jsonSafe}: for JSON printed on a terminal: `JSON.stringify`, with the control
 *   characters it leaves raw (DEL, C1, bidi, U+2028/9) written as `\uXXXX` escapes (same value).
 * - {@link shortText}: any of the above, cut to a length with `…` so a 4,096-character shard path
 *   cannot fill a notification.
 */

import { codePointLabel, invisibleMark } from './invisibles';

/**
 * Characters that are not shown as themselves: C0 controls, DEL, C1 controls, the bidi
 * embedding/override/isolate characters (U+202A–U+202E, U+2066–U+2069) and marks (ALM U+061C,
 * LRM U+200E, RLM U+200F: they too reorder neighbouring text), line/paragraph separators.
 */
// eslint-disable-next-line no-control-regex
const CONTROL_ALL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
/** Same without newline and tab (decoded text keeps its line structure). */
// eslint-disable-next-line no-control-regex
const CONTROL_KEEP_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** Marks of the two layout characters, which the invisible-character table leaves to whitespace display. */
const LAYOUT_MARKS: Record<number, string> = { 0x09: 'TAB', 0x0a: 'LF' };

/**
 * The visible mark for one control character: `⟨ESC⟩`, `⟨DEL⟩` (the short names of the one
 * invisible-character table, `core/invisibles.ts`; tab and newline as `⟨TAB⟩`, `⟨LF⟩`), and the
 * code point for everything above ASCII (`⟨U+009B⟩`, `⟨U+202E⟩`).
 */
export function controlMark(ch: string): string {
  const c = ch.codePointAt(0)!;
  if (c <= 0x7f) return `⟨${LAYOUT_MARKS[c] ?? invisibleMark(c)?.mark ?? codePointLabel(c)}⟩`;
  return `⟨${codePointLabel(c)}⟩`;
}

/** Options of {@link terminalSafe}. */
export interface TerminalSafeOptions {
  /** Keep newline and tab as they are (decoded text, multi-line listings). Default false: they are marked too. */
  keepLayout?: boolean;
}

/**
 * Makes text from data safe to print on a terminal: every control character becomes a visible
 * mark (`⟨ESC⟩`, `⟨CR⟩`, `⟨U+009B⟩`, `⟨U+202E⟩`). Printable text is unchanged.
 */
export function terminalSafe(s: string, opts: TerminalSafeOptions = {}): string {
  return s.replace(opts.keepLayout ? CONTROL_KEEP_LAYOUT : CONTROL_ALL, controlMark);
}

/** U+2060 WORD JOINER: invisible, breaks the `](` of a link without changing what is read. */
const WORD_JOINER = '\u2060';

/**
 * Text for a notification or message (`window.show*Message`, progress titles, modal details):
 * `[label](target)` can no longer become a link, and control characters (newlines included) are
 * marked. Use it on every piece of data-derived text inserted into such a message.
 */
export function plainText(s: string): string {
  return terminalSafe(s).replace(/\]\(/g, `]${WORD_JOINER}(`).replace(/\[/g, `[${WORD_JOINER}`);
}

/** Text for quick pick items, input box prompts and the status bar: `$(icon)` shown literally, plus {@link plainText}. */
export function iconSafe(s: string): string {
  return plainText(s).replace(/\$\(/g, '\\$(');
}

/** Options of {@link markdownText}. */
export interface MarkdownTextOptions {
  /** What a newline becomes: `space` (one-line contexts, the default) or a hard Markdown line break (`break`). */
  newlines?: 'space' | 'break';
}

/**
 * Text for Markdown (hovers, `MarkdownString`, tooltips): every ASCII punctuation character that
 * Markdown or HTML could act on is backslash-escaped (CommonMark: a backslash before ASCII
 * punctuation makes it literal; `$(` can no longer be a codicon, `[x](command:…)` no link,
 * `<img>` no HTML), control characters other than tab and newline are marked (`⟨ESC⟩`). The
 * result renders as exactly the input's characters.
 */
export function markdownText(s: string, opts: MarkdownTextOptions = {}): string {
  const nl = opts.newlines === 'break' ? '\\\n' : ' ';
  return terminalSafe(s.replace(/\r?\n/g, '\n'), { keepLayout: true })
    .replace(/[\\`*_{}[\]()#+\-.!|<>~&"':$=@^%;?,/]/g, '\\$&')
    .replace(/\n/g, nl);
}

/**
 * Cuts `s` to at most `max` characters (default 160), keeping the start and the end with `…`
 * between (a path's file name stays visible). Apply before escaping.
 */
export function shortText(s: string, max = 160): string {
  if (s.length <= max) return s;
  const tail = Math.floor((max - 1) / 3);
  return s.slice(0, max - 1 - tail) + '…' + s.slice(s.length - tail);
}

/** `JSON.stringify`-like quoting for messages: `"name"` with control characters marked; for showing an untrusted value. */
export function quoted(s: string, max = 80): string {
  return `"${terminalSafe(shortText(s, max))}"`;
}

/** Characters `JSON.stringify` leaves raw that a terminal or viewer may act on. */
const JSON_RAW_CONTROL = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/**
 * `JSON.stringify(value, null, indent)` with every control character escaped (`\u009b`): the same
 * JSON value, safe to print on a terminal. Such characters can only occur inside JSON strings, so
 * the escapes keep the text valid JSON.
 */
export function jsonSafe(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(JSON_RAW_CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
