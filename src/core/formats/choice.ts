/**
 * The user's choice of storage format and token dtype, as the CLI (`--format NAME`, `--dtype
 * NAME`) and VS Code (`tokenShards.format`, `tokenShards.dtype`) take it: one check and one
 * message for both front ends, turned into the format layer's options ({@link FormatChoice}).
 */
import { SettingError } from '../errors';
import { terminalSafe } from '../untrusted';
import { FORMAT_NAMES, FormatName, TOKEN_DTYPES, TokenDtype } from './types';

/** The setting value that leaves the choice to sniffing (VS Code's default for both settings). */
export const AUTO_CHOICE = 'auto';

/** What the user forced: absent keys are sniffed (format) or read from the header or guessed (dtype). */
export interface FormatChoice {
  format?: FormatName;
  dtype?: TokenDtype;
}

/** How a front end names the two options in messages, and whether it takes {@link AUTO_CHOICE}. */
export interface ChoiceNames {
  /** `--format` or `tokenShards.format`. */
  format: string;
  /** `--dtype` or `tokenShards.dtype`. */
  dtype: string;
  /** True when `auto` is a value of the option (the settings), so messages list it. */
  auto?: boolean;
}

/** How the CLI names them. */
export const CLI_CHOICE_NAMES: ChoiceNames = { format: '--format', dtype: '--dtype' };

/** How VS Code names them (package.json `tokenShards.format`, `tokenShards.dtype`). */
export const SETTING_CHOICE_NAMES: ChoiceNames = { format: 'tokenShards.format', dtype: 'tokenShards.dtype', auto: true };

const expected = (values: readonly string[], auto?: boolean) => (auto ? [AUTO_CHOICE, ...values] : values).join(', ');

/** The one-line fault of a format value that names no format (undefined when it names one). */
export function formatChoiceFault(value: string, names: ChoiceNames = CLI_CHOICE_NAMES): string | undefined {
  if ((FORMAT_NAMES as readonly string[]).includes(value) || (names.auto && value === AUTO_CHOICE)) return undefined;
  return `${names.format} ${terminalSafe(value)} is not a known format (expected one of ${expected(FORMAT_NAMES, names.auto)})`;
}

/** The one-line fault of a dtype value that names no token dtype (undefined when it names one). */
export function dtypeChoiceFault(value: string, names: ChoiceNames = CLI_CHOICE_NAMES): string | undefined {
  if ((TOKEN_DTYPES as readonly string[]).includes(value) || (names.auto && value === AUTO_CHOICE)) return undefined;
  return `${names.dtype} ${terminalSafe(value)} is not a token dtype (expected one of ${expected(TOKEN_DTYPES, names.auto)})`;
}

/**
 * The format-layer options of a format and a dtype value (undefined, `''` or `auto` = not forced).
 * @throws SettingError with the one-line fault of the first value that names nothing known.
 */
export function formatChoice(format: string | undefined, dtype: string | undefined, names: ChoiceNames = CLI_CHOICE_NAMES): FormatChoice {
  const given = (v: string | undefined) => (v === undefined || v === '' || (names.auto && v === AUTO_CHOICE) ? undefined : v);
  const f = given(format);
  const d = given(dtype);
  const fault = (f !== undefined ? formatChoiceFault(f, names) : undefined) ?? (d !== undefined ? dtypeChoiceFault(d, names) : undefined);
  if (fault) throw new SettingError(fault);
  return { ...(f !== undefined ? { format: f as FormatName } : {}), ...(d !== undefined ? { dtype: d as TokenDtype } : {}) };
}
