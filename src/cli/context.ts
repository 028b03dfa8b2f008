/**
 * What every `token-shards` subcommand shares: opening a dataset with the global schedule
 * overrides, loading a tokenizer, parsing numbers people type, writing output (with
 * back-pressure, and with terminal control characters from data made visible), and turning any
 * error into one stderr line with the right exit code.
 *
 * Exit codes: {@link EXIT}: 0 ok, 1 the data has a problem, 2 bad usage, 130 interrupted (Ctrl-C).
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Command } from 'commander';
import { Dataset, OpenDatasetOptions, findDatasetRoot, openDataset, openShardFileAsDataset } from '../core/dataset';
import { SHARD_MANIFEST } from '../core/manifest';
import { CancelledError, DataError, RangeRequestError } from '../core/errors';
import { parseNumberInput } from '../core/numbers';
import { ScheduleSettings, scheduleFaults } from '../core/schedule';
import { LoadedTokenizer, loadTokenizer } from '../core/tokenizer';
import { TerminalSafeOptions, jsonSafe, terminalSafe } from '../core/untrusted';

/** Exit codes of the CLI. */
export const EXIT = { ok: 0, data: 1, usage: 2, interrupted: 130 } as const;

/** Thrown for bad command lines (wrong arguments, missing files named on the command line); exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The global options, as commander hands them over (strings; parsed by {@link CliContext.scheduleFlags}). */
export interface GlobalOptions {
  tokensPerUpdate?: string;
  sequenceLength?: string;
  eos?: string;
  tokenizer?: string;
  /** `--allow-outside-root`: read manifest shards that lead outside the dataset folder. */
  allowOutsideRoot?: boolean;
  /** `--run FILE`: the run description naming the training order (else `<root>/run.json`). */
  run?: string;
}

/** A subcommand's action: gets the positional arguments, then commander's options object and the command. Returns the exit code. */
export type Action = (...args: any[]) => Promise<number>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Shared helpers handed to every subcommand's `register(program, ctx)`.
 */
export interface CliContext {
  /**
   * Wraps a subcommand action: runs it, records its exit code, and turns any thrown error into one
   * stderr line (`error: …`) and its exit code (UsageError/RangeRequestError 2, DataError 1,
   * CancelledError 130, EPIPE 0, anything else 1). Never rethrows.
   */
  run(action: Action): (...args: unknown[]) => Promise<void>;
  /** The global options (`--tokens-per-update`, `--sequence-length`, `--eos`, `--tokenizer`, …) as given to `cmd`. */
  globals(cmd: Command): GlobalOptions;
  /** The schedule overrides from the global options (UsageError naming the flag when one is not a number). */
  scheduleFlags(cmd: Command): Partial<ScheduleSettings>;
  /**
   * Opens a dataset folder (holding shard_manifest.jsonl), or a lone `.u32` file as a one-shard
   * dataset with local offsets, applying the global overrides. UsageError when `target` is
   * missing or does not exist.
   */
  open(target: string | undefined, cmd: Command): Promise<Dataset>;
  /** The dataset options from the global options (`--allow-outside-root`; messages name the CLI's flags). */
  openOptions(cmd: Command): OpenDatasetOptions;
  /**
   * Loads the tokenizer: `--tokenizer FILE` when given; else the dataset's (DataError when it
   * has none); else `target` as a tokenizer.json or a folder holding one.
   */
  tokenizerFor(target: string | undefined, cmd: Command, ds?: Dataset): Promise<LoadedTokenizer>;
  /**
   * Parses a non-negative integer typed on the command line (55_000, 5.5e4, 0x… forms).
   * @param what how the message names the value (e.g. `--start`, `update`).
   * @returns undefined when `text` is undefined. Throws UsageError ("update must be ≥ 0", "… too large").
   */
  int(text: string | undefined, what: string): number | undefined;
  /**
   * Writes a line (a newline is added when missing) to stdout. Control characters other than
   * newline and tab are written as marks (`⟨ESC⟩`, see `terminalSafe`): nothing a command prints
   * can act on the terminal, even data it forgot to pass through {@link CliContext.term}.
   */
  out(s: string): void;
  /** Writes to stdout (control characters marked as in {@link CliContext.out}), waiting for the pipe to drain when it is full (bounded memory for big outputs). */
  write(s: string): Promise<void>;
  /** Writes a line to stderr (control characters marked as in {@link CliContext.out}). */
  err(s: string): void;
  /** Writes `warning: …` to stderr. */
  warn(s: string): void;
  /** JSON text of `value` (control characters escaped; see `jsonSafe`) for --json outputs. */
  json(value: unknown, indent?: number): string;
  /** Makes text that came from data (names, decoded text, manifest values) safe to print on a terminal: see `terminalSafe`. */
  term(s: string, opts?: TerminalSafeOptions): string;
  /** Aborted on the first Ctrl-C when a command asked for it with {@link CliContext.cancellable}. */
  readonly signal: AbortSignal;
  /** Declares that the running command handles Ctrl-C through {@link CliContext.signal} (otherwise Ctrl-C exits 130 at once). */
  cancellable(): AbortSignal;
}

/** Streams used by a context (tests may pass their own). */
export interface CliStreams {
  stdout: NodeJS.WritableStream & { write(s: string): boolean };
  stderr: NodeJS.WritableStream & { write(s: string): boolean };
}

/** The state behind a {@link CliContext}: the exit code of the last action. */
export interface CliRuntime {
  ctx: CliContext;
  /** Exit code of the action that ran (undefined when none ran, e.g. `--help`). */
  exitCode(): number | undefined;
  /** Called on SIGINT: aborts the signal of a cancellable command, or returns true when the process should exit 130 now. */
  interrupt(): boolean;
}

/** How CLI messages name the schedule values given as flags. */
export const FLAG_NAMES: Record<keyof ScheduleSettings, string> = {
  globalTokensPerUpdate: '--tokens-per-update',
  sequenceLength: '--sequence-length',
  eosTokenId: '--eos',
};

/**
 * Throws UsageError when `dir` holds no shard_manifest.jsonl, suggesting the folder above that
 * does (`info sample/shards` → "the dataset folder is probably sample").
 */
export async function requireDatasetFolder(dir: string): Promise<void> {
  if (fs.existsSync(path.join(dir, SHARD_MANIFEST))) return;
  const up = await findDatasetRoot(path.dirname(path.resolve(dir)), 3);
  const rel = up ? path.relative(process.cwd(), up) || '.' : undefined;
  throw new UsageError(
    `${terminalSafe(dir)}: no ${SHARD_MANIFEST} here, so it is not a dataset folder` +
      (rel ? `; the dataset folder is probably ${terminalSafe(rel)} (it holds one)` : '; pass the folder holding it (or one .u32 file)'),
  );
}

/** Maps an error to its exit code and one-line message. */
export function describeError(err: unknown): { code: number; message?: string } {
  if (err instanceof UsageError || err instanceof RangeRequestError) return { code: EXIT.usage, message: err.message };
  if (err instanceof DataError) return { code: EXIT.data, message: err.message };
  if (err instanceof CancelledError) return { code: EXIT.interrupted, message: 'interrupted' };
  const e = err as NodeJS.ErrnoException;
  if (e && e.code === 'EPIPE') return { code: EXIT.ok };
  const message = e && typeof e.message === 'string' ? e.message : String(err);
  return { code: EXIT.data, message };
}

/** Joins the lines of a message into one (errors are one line on stderr). */
function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').trim();
}

/** Builds the shared helpers. */
export function createContext(streams: CliStreams = { stdout: process.stdout, stderr: process.stderr }): CliRuntime {
  let exitCode: number | undefined;
  const ac = new AbortController();
  let wantsSignal = false;

  // Last line of defence: whatever a command writes goes through terminalSafe (newline and tab kept),
  // so a shard name or decoded text that a command forgot to escape still cannot reach the terminal
  // as control. Marks contain no control characters, so text escaped before is unchanged.
  const safe = (s: string) => terminalSafe(s, { keepLayout: true });
  const err = (s: string) => {
    s = safe(s);
    streams.stderr.write(s.endsWith('\n') ? s : s + '\n');
  };
  const globals = (cmd: Command): GlobalOptions => cmd.optsWithGlobals() as GlobalOptions;
  const int = (text: string | undefined, what: string): number | undefined => {
    if (text === undefined) return undefined;
    const t = text.trim();
    if (/^-\s*[\d.]/.test(t)) {
      // "-0" is zero (what a user means by it), any other negative number is refused.
      const z = parseNumberInput(t.replace(/^-\s*/, ''));
      if (z.ok && z.value === 0) return 0;
      throw new UsageError(`${what} must be ≥ 0 (got ${t})`);
    }
    const r = parseNumberInput(t);
    if (!r.ok) throw new UsageError(`${what}: ${r.error}`);
    return r.value;
  };
  const scheduleFlags = (cmd: Command): Partial<ScheduleSettings> => {
    const g = globals(cmd);
    const s: Partial<ScheduleSettings> = {};
    const G = int(g.tokensPerUpdate, '--tokens-per-update');
    const L = int(g.sequenceLength, '--sequence-length');
    const eos = int(g.eos, '--eos');
    if (G !== undefined) s.globalTokensPerUpdate = G;
    if (L !== undefined) s.sequenceLength = L;
    if (eos !== undefined) s.eosTokenId = eos;
    const faults = scheduleFaults(s, (k) => FLAG_NAMES[k]);
    if (faults.length) throw new UsageError(faults.join('; '));
    return s;
  };
  const openOptions = (cmd: Command): OpenDatasetOptions => ({
    allowOutsideRoot: !!globals(cmd).allowOutsideRoot,
    settingNames: FLAG_NAMES,
  });

  const ctx: CliContext = {
    run:
      (action) =>
      async (...args: unknown[]) => {
        try {
          exitCode = await action(...args);
        } catch (e) {
          const d = describeError(e);
          if (d.message !== undefined) err(`error: ${oneLine(d.message)}`);
          exitCode = d.code;
        }
      },
    globals,
    scheduleFlags,
    openOptions,
    int,
    async open(target, cmd) {
      if (!target) throw new UsageError('missing <root>: the dataset folder holding shard_manifest.jsonl (or one .u32 file)');
      if (!fs.existsSync(target)) throw new UsageError(`${terminalSafe(target)}: no such file or folder`);
      const flags = scheduleFlags(cmd);
      if (fs.statSync(target).isFile()) return openShardFileAsDataset(target, flags, openOptions(cmd));
      await requireDatasetFolder(target);
      return openDataset(target, flags, openOptions(cmd));
    },
    async tokenizerFor(target, cmd, ds) {
      const g = globals(cmd);
      if (g.tokenizer) return loadTokenizer(g.tokenizer);
      if (ds) {
        if (!ds.tokenizerFile) throw new DataError(`${ds.root}: no tokenizer/tokenizer.json; pass --tokenizer FILE`);
        return loadTokenizer(ds.tokenizerFile);
      }
      if (!target) throw new UsageError('missing <root|tokenizer.json>');
      if (fs.existsSync(target) && fs.statSync(target).isFile()) return loadTokenizer(target);
      for (const p of [path.join(target, 'tokenizer', 'tokenizer.json'), path.join(target, 'tokenizer.json')]) {
        if (fs.existsSync(p)) return loadTokenizer(p);
      }
      throw new UsageError(`${terminalSafe(target)}: neither a tokenizer.json nor a folder holding tokenizer/tokenizer.json`);
    },
    out(s) {
      s = safe(s);
      streams.stdout.write(s.endsWith('\n') ? s : s + '\n');
    },
    async write(s) {
      if (!streams.stdout.write(safe(s))) await new Promise<void>((resolve) => streams.stdout.once('drain', resolve));
    },
    err,
    warn(s) {
      err(`warning: ${s}`);
    },
    term: terminalSafe,
    json: jsonSafe,
    signal: ac.signal,
    cancellable() {
      wantsSignal = true;
      return ac.signal;
    },
  };

  return {
    ctx,
    exitCode: () => exitCode,
    interrupt() {
      if (wantsSignal && !ac.signal.aborted) {
        ac.abort();
        return false;
      }
      return true;
    },
  };
}
