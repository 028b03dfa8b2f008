/**
 * Error types shared by the core. Every message names the file (and line or offset) and what
 * was expected, so a user can act on it without reading code.
 */

/** The data (a shard, a manifest line, a tokenizer file) is not what the format promises. */
export class DataError extends Error {
  /** @param file absolute path of the offending file, when there is one. */
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
  ) {
    super(message);
    this.name = 'DataError';
  }
}

/** The caller asked for something outside the valid range (e.g. update k ≥ number of updates). */
export class RangeRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RangeRequestError';
  }
}

/**
 * A schedule value the user gave (a VS Code setting or a CLI flag) is not acceptable; the message
 * names the setting or flag. A RangeRequestError: the CLI exits 2 (usage).
 */
export class SettingError extends RangeRequestError {
  constructor(message: string) {
    super(message);
    this.name = 'SettingError';
  }
}

/** Thrown by long operations when their `AbortSignal` fires. */
export class CancelledError extends Error {
  constructor(message = 'cancelled') {
    super(message);
    this.name = 'CancelledError';
  }
}
