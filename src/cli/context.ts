/**
 * What every `token-shards` subcommand shares: opening a dataset with the global schedule
 * overrides, loading a tokenizer, parsing numbers people type, writing output (one
 * {@link OutputWriter}: back-pressure, write errors, EPIPE), showing text from data (control
 * characters marked on a terminal, written as they are to files and pipes), and turning any
 * error into one stderr line with the right exit code.
 *
 * Exit codes: {@link EXIT} and the table in `exitCodes.ts`: 0 ok, 1 the data has a problem, 2 bad
 * usage, 130 interrupted (Ctrl-C).
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Command } from 'commander';
import { Dataset, OpenDatasetOptions, findDatasetRoot, openDataset, openPath } from '../core/dataset';
import { isFormatName } from '../core/formats/registry';
import { FormatChoice, formatChoice, formatChoiceFault } from '../core/formats/choice';
import { SHARD_MANIFEST } from '../core/manifest';
import { CancelledError, DataError, RangeRequestError } from '../core/errors';
import { parseNumberInput } from '../core/numbers';
import { ScheduleSettings, scheduleFaults } from '../core/schedule';
import { LoadedTokenizer, loadTokenizer } from '../core/tokenizer';
import { TerminalSafeOptions, jsonSafe, terminalSafe } from '../core/untrusted';
import { READ_LIMITS, fileKind } from '../core/safeRead';
import { isInside, realPathOf } from '../core/safeWrite';
import { EXIT } from './exitCodes';
import { OutputClosed, OutputError, OutputStream, OutputWriter } from './output';
import { LISTS_PROBLEMS, readFaultWarnings } from './readWarnings';

export { EXIT };

/** Most worker threads `--jobs` takes (verify, index, count). */
export const MAX_JOBS = 256;

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
  /**
   * Every `--format` given, in order: storage format names (instead of sniffing) and, for
   * `export`, its output format (the program's option takes every `--format` on the line).
   */
  format?: string[];
  /** `--dtype uint16|uint32|int32`: the token dtype of headerless files. */
  dtype?: string;
  /** `--escape`: mark control characters of data on standard output even when it is not a terminal. */
  escape?: boolean;
  /** `--raw`: write text from data as it is, even to a terminal. */
  raw?: boolean;
}

/** A subcommand's action: gets the positional arguments, then commander's options object and the command. Returns the exit code. */
export type Action = (...args: any[]) => Promise<number>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Shared helpers handed to every subcommand's `register(program, ctx)`.
 */
export interface CliContext {
  /**
   * Wraps a subcommand action: runs it, records its exit code, and turns any thrown error into one
   * stderr line (`error: …`) and its exit code (the table in `exitCodes.ts`: UsageError and
   * RangeRequestError 2, DataError 1, a failed write to standard output 1 — whatever the action
   * threw after it —, CancelledError 130, EPIPE 0, anything else 1). Sets {@link CliContext.marks}
   * from `--escape`/`--raw` first, and waits for standard output to take everything last. Never rethrows.
   */
  run(action: Action): (...args: unknown[]) => Promise<void>;
  /** The global options (`--tokens-per-update`, `--sequence-length`, `--eos`, `--tokenizer`, …) as given to `cmd`. */
  globals(cmd: Command): GlobalOptions;
  /** The schedule overrides from the global options (UsageError naming the flag when one is not a number). */
  scheduleFlags(cmd: Command): Partial<ScheduleSettings>;
  /**
   * Opens a dataset folder (holding shard_manifest.jsonl), or a lone `.u32` file as a one-shard
   * dataset with local offsets, or a file or folder of any other storage format (`openPath`),
   * applying the global overrides (`--format`, `--dtype`, the schedule flags, `--tokenizer`).
   * UsageError when `target` is missing, does not exist, is a folder with no known format, or
   * `--format`/`--dtype` name nothing known. Prints the read-fault warnings of a manifest
   * (`readWarnings.ts`: shards longer than their entries, overlapping entries) unless the
   * command lists every problem itself.
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
   * The file {@link tokenizerFor} loads (not read: for callers that need less than the whole
   * tokenizer, such as the stream index's parameters).
   * @throws as {@link tokenizerFor}, except for the file's content.
   */
  tokenizerFileFor(target: string | undefined, cmd: Command, ds?: Dataset): Promise<string>;
  /**
   * Parses a non-negative integer typed on the command line (55_000, 5.5e4, 0x… forms).
   * @param what how the message names the value (e.g. `--start`, `update`).
   * @returns undefined when `text` is undefined. Throws UsageError ("update must be ≥ 0", "… too large").
   */
  int(text: string | undefined, what: string): number | undefined;
  /**
   * Writes a line (a newline is added when missing) to stdout, through {@link CliContext.output}.
   * When control characters are marked ({@link CliContext.marks}), every one other than newline
   * and tab is written as a mark (`⟨ESC⟩`, see `terminalSafe`): nothing a command prints can act
   * on the terminal, even data it forgot to pass through {@link CliContext.text}.
   */
  out(s: string): void;
  /** Writes to stdout as {@link CliContext.out} does (no newline added), waiting while the output's buffer is full (bounded memory for big outputs); throws OutputError when a write failed. */
  write(s: string): Promise<void>;
  /** The one writer of standard output (errors, EPIPE, back-pressure); `writable` for code that pipes into a stream. */
  readonly output: OutputWriter;
  /** Standard error as given to the context, for progress lines redrawn in place (`\r`); messages go through {@link CliContext.err}. */
  readonly stderr: CliStreams['stderr'];
  /**
   * True when text from data is shown with its control characters marked: `--escape`, or
   * standard output is a terminal and `--raw` was not given. Set when the command starts.
   */
  marks(): boolean;
  /**
   * Text that came from data (decoded text, names) for standard output: marked as
   * {@link CliContext.term} does when {@link CliContext.marks}, else unchanged (a file or a
   * pipe gets the text itself: `decode … | cat` is byte for byte the tokenizer's decode).
   */
  text(s: string, opts?: TerminalSafeOptions): string;
  /**
   * Parses `--jobs` (worker threads): 0 or absent = the number of CPU cores (returned as
   * undefined), at most {@link MAX_JOBS}. UsageError naming the flag otherwise.
   */
  jobs(text: string | undefined): number | undefined;
  /**
   * The command as the user invoked it, for hints: `token-shards`, `npx token-shards`, or
   * `node dist/cli.js` (the script path as typed).
   */
  readonly self: string;
  /** Writes a line to stderr (control characters always marked: messages are read on a terminal). */
  err(s: string): void;
  /** Writes `warning: …` to stderr. */
  warn(s: string): void;
  /**
   * Warns about every manifest.json problem of `ds` (a G, L or EOS there that is invalid and was
   * replaced, a manifest.json that is not JSON): commands whose output depends on the schedule
   * say which values they used instead of falling back without a word.
   */
  warnSchedule(ds: Dataset): void;
  /** JSON text of `value` (control characters escaped; see `jsonSafe`) for --json outputs. */
  json(value: unknown, indent?: number): string;
  /** Makes text that came from data (names, manifest values) safe to print on a terminal, always: see `terminalSafe`. For messages and listings; data text on stdout goes through {@link CliContext.text}. */
  term(s: string, opts?: TerminalSafeOptions): string;
  /** Aborted on the first Ctrl-C when a command asked for it with {@link CliContext.cancellable}. */
  readonly signal: AbortSignal;
  /** Declares that the running command handles Ctrl-C through {@link CliContext.signal} (otherwise Ctrl-C exits 130 at once). */
  cancellable(): AbortSignal;
}

/** Streams used by a context (tests may pass their own; `isTTY` true makes stdout a terminal). */
export interface CliStreams {
  stdout: OutputStream;
  stderr: NodeJS.WritableStream & { write(s: string): boolean; isTTY?: boolean };
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

/** Most lines of one kind (manifest problems, failed shards) a text output lists; `--json` lists all. */
export const MAX_LISTED = 20;

/**
 * The first {@link MAX_LISTED} of `lines`, then one line counting the rest: a 100,000-line
 * manifest of missing files prints 21 lines, not 100,000.
 * @param rest the last line for `n` more: e.g. (n) => `… and ${n} more problems (--json lists them all)`.
 */
export function listed(lines: readonly string[], rest: (n: string) => string): string[] {
  if (lines.length <= MAX_LISTED) return [...lines];
  return [...lines.slice(0, MAX_LISTED), rest((lines.length - MAX_LISTED).toLocaleString('en-US'))];
}

/**
 * Why the CLI's cache folder (verify cache, stream index) must not be used for a dataset: it
 * lies inside the dataset folder (`XDG_CACHE_HOME=DS`), where nothing is written. Compared as
 * real paths. Undefined when it may be used.
 */
export function cacheInsideDataset(cacheDir: string, datasetRoot: string): string | undefined {
  const root = realPathOf(datasetRoot);
  return isInside(realPathOf(cacheDir), root) ? `it is inside the dataset folder ${root}, where nothing is written` : undefined;
}

/** Maps an error to its exit code (the table of `exitCodes.ts`) and one-line message. */
export function describeError(err: unknown): { code: number; message?: string } {
  if (err instanceof UsageError || err instanceof RangeRequestError) return { code: EXIT.usage, message: err.message };
  if (err instanceof DataError || err instanceof OutputError) return { code: EXIT.data, message: err.message };
  if (err instanceof CancelledError) return { code: EXIT.interrupted, message: 'interrupted' };
  const e = err as NodeJS.ErrnoException;
  if (err instanceof OutputClosed || (e && e.code === 'EPIPE')) return { code: EXIT.ok };
  const message = e && typeof e.message === 'string' ? e.message : String(err);
  return { code: EXIT.data, message };
}

/** Joins the lines of a message into one (errors are one line on stderr). */
function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * How the user invoked the CLI, for hints that name a command: `npx token-shards` under npx
 * (`npm_command=exec`, the script in a `.bin` folder), `node dist/cli.js` when the script was run by node (the path relative
 * to the current folder when it is below it), else the script's name (`token-shards` from
 * `npm link` or a global install).
 */
export function invokedAs(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const script = argv[1];
  if (!script) return 'token-shards';
  // npx runs the package's bin link (node_modules/.bin/token-shards); a process started by one run
  // through npx inherits npm_command, so the script is checked too.
  if (env.npm_command === 'exec' && script.includes(`${path.sep}.bin${path.sep}`)) return 'npx token-shards';
  if (path.basename(script) === 'cli.js') {
    const rel = path.relative(cwd, script);
    return `node ${rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : script}`;
  }
  return path.basename(script);
}

/** Options of {@link createContext}. */
export interface ContextOptions {
  /** The command as invoked, for hints (default `token-shards`; the entry point passes {@link invokedAs}). */
  self?: string;
}

/** Builds the shared helpers. */
export function createContext(
  streams: CliStreams = { stdout: process.stdout, stderr: process.stderr },
  options: ContextOptions = {},
): CliRuntime {
  let exitCode: number | undefined;
  const ac = new AbortController();
  let wantsSignal = false;
  const output = new OutputWriter(streams.stdout);
  let marks = output.isTTY;

  // Last line of defence: on a terminal, whatever a command writes goes through terminalSafe
  // (newline and tab kept), so a shard name or decoded text that a command forgot to escape
  // still cannot reach the terminal as control. Marks contain no control characters, so text
  // escaped before is unchanged. Files and pipes get the text as it is.
  const safe = (s: string) => terminalSafe(s, { keepLayout: true });
  const shown = (s: string) => (marks ? safe(s) : s);
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
    // The CLI owns its process: reads block it instead of hopping to the libuv thread pool.
    blockingReads: true,
  });
  /** `--tokenizer FILE` checked as a file named on the command line: missing or not a regular file is a usage error. */
  const tokenizerFlag = (file: string): string => {
    if (file.trim() === '') throw new UsageError('--tokenizer "": expected the path of a tokenizer.json');
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
    } catch {
      throw new UsageError(`--tokenizer ${terminalSafe(file)}: no such file`);
    }
    if (!st.isFile()) throw new UsageError(`--tokenizer ${terminalSafe(file)}: is ${fileKind(st)}; expected a tokenizer.json file`);
    if (st.size > READ_LIMITS.tokenizer)
      throw new UsageError(`--tokenizer ${terminalSafe(file)}: ${st.size.toLocaleString('en-US')} bytes is too large for a tokenizer.json`);
    return file;
  };

  /**
   * The tokenizer file a command uses: `--tokenizer FILE` when given; else the dataset's
   * (DataError when it has none); else `target` as a tokenizer.json or a folder holding one.
   * @throws UsageError for a `target` that is neither.
   */
  async function tokenizerFileFor(target: string | undefined, cmd: Command, ds?: Dataset): Promise<string> {
    const g = globals(cmd);
    if (g.tokenizer !== undefined) return tokenizerFlag(g.tokenizer);
    if (ds) {
      if (!ds.tokenizerFile) throw new DataError(`${ds.root}: no tokenizer/tokenizer.json; pass --tokenizer FILE`);
      return ds.tokenizerFile;
    }
    if (!target) throw new UsageError('missing <root|tokenizer.json>');
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(target);
    } catch {
      throw new UsageError(`${terminalSafe(target)}: no such file or folder`);
    }
    if (st.isFile()) return target;
    if (!st.isDirectory())
      throw new UsageError(`${terminalSafe(target)}: is ${fileKind(st)}; expected a tokenizer.json or a folder holding one`);
    for (const p of [path.join(target, 'tokenizer', 'tokenizer.json'), path.join(target, 'tokenizer.json')]) {
      if (fs.existsSync(p)) return p;
    }
    throw new UsageError(`${terminalSafe(target)}: neither a tokenizer.json nor a folder holding tokenizer/tokenizer.json`);
  }
  const ctx: CliContext = {
    run:
      (action) =>
      async (...args: unknown[]) => {
        try {
          const cmd = args[args.length - 1] as Command;
          const g = globals(cmd);
          if (g.escape && g.raw) throw new UsageError('--escape and --raw exclude each other');
          marks = g.escape ? true : g.raw ? false : output.isTTY;
          exitCode = await action(...args);
          await output.finish();
        } catch (e) {
          // A failed standard output is the cause of whatever the command threw after it (its error
          // event may come a tick after the write that failed).
          await output.settle();
          const d = describeError(output.error() ?? e);
          if (d.message !== undefined) err(`error: ${oneLine(d.message)}`);
          exitCode = d.code;
        }
      },
    globals,
    scheduleFlags,
    openOptions,
    int,
    jobs(text) {
      const n = int(text, '--jobs');
      if (n !== undefined && n > MAX_JOBS) throw new UsageError(`--jobs ${n}: expected 1..${MAX_JOBS} (0 = number of cores)`);
      return n || undefined;
    },
    self: options.self ?? 'token-shards',
    async open(target, cmd) {
      if (!target) throw new UsageError('missing <root>: the dataset folder holding shard_manifest.jsonl (or one .u32 file)');
      if (!fs.existsSync(target)) throw new UsageError(`${terminalSafe(target)}: no such file or folder`);
      const flags = scheduleFlags(cmd);
      const g = globals(cmd);
      const tokenizerFile = g.tokenizer !== undefined ? path.resolve(tokenizerFlag(g.tokenizer)) : undefined;
      const st = fs.statSync(target);
      if (!st.isFile() && !st.isDirectory())
        throw new UsageError(`${terminalSafe(target)}: is ${fileKind(st)}; expected a dataset folder (or one .u32 file)`);
      const values = g.format ?? [];
      const storage = values.filter(isFormatName);
      const other = values.find((v) => !isFormatName(v));
      if (other !== undefined && cmd.name() !== 'export') throw new UsageError(formatChoiceFault(other)!);
      if (new Set(storage).size > 1) throw new UsageError(`--format is given as ${storage.join(' and ')}; expected one storage format`);
      let choice: FormatChoice;
      try {
        choice = formatChoice(storage[0], g.dtype);
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      const opened = await openPath(target, flags, { ...openOptions(cmd), ...choice, tokenizerFile });
      if (opened) {
        if (opened.manifestFile && !LISTS_PROBLEMS.has(cmd.name())) for (const w of readFaultWarnings(opened)) err(`warning: ${w}`);
        return opened;
      }
      await requireDatasetFolder(target);
      const ds = await openDataset(target, flags, openOptions(cmd));
      if (!LISTS_PROBLEMS.has(cmd.name())) for (const w of readFaultWarnings(ds)) err(`warning: ${w}`);
      return ds;
    },
    async tokenizerFor(target, cmd, ds) {
      return loadTokenizer(await tokenizerFileFor(target, cmd, ds));
    },
    tokenizerFileFor,
    out(s) {
      s = shown(s);
      output.put(s.endsWith('\n') ? s : s + '\n');
    },
    async write(s) {
      await output.write(shown(s));
    },
    output,
    stderr: streams.stderr,
    marks: () => marks,
    text: (s, opts) => (marks ? terminalSafe(s, opts) : s),
    err,
    warn(s) {
      err(`warning: ${s}`);
    },
    warnSchedule(ds) {
      for (const p of ds.problems) if (p.code === 'bad-provenance') err(`warning: ${terminalSafe(p.message)}`);
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
