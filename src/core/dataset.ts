/**
 * A dataset root opened for reading: its shard manifest (sorted, validated), provenance and
 * verification side files, the resolved schedule settings, the token stream and the tokenizer
 * path. Layout per docs/format.md:
 * ```
 * <root>/shards/tokens_NNNNNN.u32, shard_manifest.jsonl, manifest.json, verification.json?, tokenizer/tokenizer.json
 * ```
 * Also a lone `.u32` file with no manifest ({@link openLoneShard}): local offsets only.
 */
import * as fs from 'fs';
import * as path from 'path';
import {
  ManifestOptions,
  ManifestProblem,
  PROVENANCE_MANIFEST,
  SHARD_MANIFEST,
  ShardEntry,
  ShardFileState,
  SideFile,
  VERIFICATION_FILE,
  outsideRootProblem,
  parseShardManifest,
  readSideFile,
  scheduleOverrides,
  symlinksOutsideRoot,
  validateShardFiles,
} from './manifest';
import { DEFAULT_SCHEDULE, Schedule, ScheduleSettings, scheduleFaults } from './schedule';
import { TokenStream, TokenStreamOptions } from './stream';
import { findDatasetTokenizer, loadTokenizer } from './tokenizer';
import { identityOfStats } from './fileIdentity';
import { DataError, SettingError } from './errors';
import { count, fmt } from './units';
import { READ_LIMITS, readRegularTextFile } from './safeRead';
import { OpenFormatOptions, OpenedPath, openSniffed, sniffFormat, sniffInputOf } from './formats/registry';
import { DelimiterRole, FormatDocuments, FormatFile, FormatHash, FormatName, Provenance, TokenDtype } from './formats/types';
import { filesOfShardEntries } from './formats/tokenStream';

/** Where each schedule setting's value came from (`format`: the storage format implies it, e.g. llm.c's EOT 50256). */
export type SettingSource = 'default' | 'setting' | 'manifest.json' | 'format';

/** An opened dataset root. */
export interface Dataset {
  /** Absolute path of the root folder. */
  root: string;
  /** Absolute path of `shard_manifest.jsonl`. */
  manifestFile: string;
  /** Shards sorted by start token. */
  shards: ShardEntry[];
  /** Size and mtime per shard (same order as `shards`). */
  fileStates: ShardFileState[];
  /** `manifest.json`, when present and valid. */
  provenance?: SideFile;
  /** `verification.json`, when present and valid. */
  verification?: SideFile;
  /** Resolved G, L, EOS. */
  settings: ScheduleSettings;
  /** Source of each setting. */
  settingSources: Record<keyof ScheduleSettings, SettingSource>;
  /** Tokens stored (look-ahead included) = sum of `num_tokens`. */
  storedTokens: number;
  schedule: Schedule;
  stream: TokenStream;
  /** `tokenizer/tokenizer.json` (or `tokenizer.json`) of the root, when present. */
  tokenizerFile?: string;
  /** Every fault found, errors first. */
  problems: ManifestProblem[];
  /** True when this is one `.u32` file opened without a manifest ({@link openShardFileAsDataset}): offsets are local. */
  lone?: boolean;
  /**
   * The storage format, when the data is not the dataset card's layout (opened through the format
   * layer, {@link openFormatDataset}); absent: `token-stream`. Its files are {@link shards}, in order.
   */
  format?: DatasetFormat;
}

/** What the format layer says about a dataset opened through it (see `formats/types.ts`). */
export interface DatasetFormat {
  name: FormatName;
  dtype: TokenDtype;
  /** Where the dtype came from (`guessed`: see {@link notes} for why). */
  dtypeSource: Provenance;
  /** Why this format: the sniffer's reason, or that the format option forced it. */
  reason: string;
  /** The format's files, in stream order (same order and offsets as the dataset's shards). */
  files: FormatFile[];
  /** Document boundaries from the format's index; absent: documents are EOS-separated. */
  documents?: FormatDocuments;
  /** What the delimiter id does where documents are EOS-separated. */
  delimiter: DelimiterRole;
  /** Sentences for `info`: guesses and what was left out. */
  notes: string[];
}

/**
 * The files of a dataset in the format layer's terms: {@link DatasetFormat.files}, or for the
 * dataset card's layout its shards (raw uint32 from byte 0, the manifest's sha256 as their hash).
 */
export function formatFilesOf(ds: Pick<Dataset, 'format' | 'shards'>): FormatFile[] {
  return ds.format ? ds.format.files : filesOfShardEntries(ds.shards);
}

/** The format name of a dataset: {@link Dataset.format}'s, or `token-stream`. */
export function formatNameOf(ds: Pick<Dataset, 'format'>): FormatName {
  return ds.format?.name ?? 'token-stream';
}

/**
 * Opens a dataset root.
 * @param root folder holding `shard_manifest.jsonl`.
 * @param userSettings schedule settings from the user (VS Code settings or CLI flags); keys left
 *   undefined use the dataset card's defaults. `manifest.json` keys override both.
 * @throws DataError when `shard_manifest.jsonl` cannot be read at all (bad lines do not throw).
 */
export async function openDataset(
  root: string,
  userSettings: Partial<ScheduleSettings> = {},
  opts: OpenDatasetOptions = {},
): Promise<Dataset> {
  root = path.resolve(root);
  checkUserSettings(userSettings, opts);
  const manifestFile = path.join(root, SHARD_MANIFEST);
  let text: string;
  try {
    text = await readRegularTextFile(manifestFile, 'the shard manifest', READ_LIMITS.manifest);
  } catch (err) {
    if (err instanceof DataError) throw err;
    throw new DataError(`${manifestFile}: cannot read the shard manifest: ${(err as Error).message}`, manifestFile);
  }
  const parsed = parseShardManifest(text, manifestFile, opts);
  if (!opts.allowOutsideRoot) await dropSymlinksOutsideRoot(root, manifestFile, parsed);
  const [files, prov, verif, tokenizerFile] = await Promise.all([
    validateShardFiles(parsed.entries, manifestFile),
    readSideFile(path.join(root, PROVENANCE_MANIFEST), 'bad-provenance'),
    readSideFile(path.join(root, VERIFICATION_FILE), 'bad-verification'),
    findDatasetTokenizer(root),
  ]);
  const { overrides, problems: overrideProblems } = scheduleOverrides(prov.side);
  const settings = {} as ScheduleSettings;
  const settingSources = {} as Record<keyof ScheduleSettings, SettingSource>;
  for (const key of Object.keys(DEFAULT_SCHEDULE) as (keyof ScheduleSettings)[]) {
    if (overrides[key] !== undefined) {
      settings[key] = overrides[key]!;
      settingSources[key] = 'manifest.json';
    } else if (userSettings[key] !== undefined) {
      settings[key] = userSettings[key]!;
      settingSources[key] = 'setting';
    } else {
      settings[key] = DEFAULT_SCHEDULE[key];
      settingSources[key] = 'default';
    }
  }
  const scheduleProblems = dropInconsistentOverrides(settings, settingSources, userSettings, prov.side?.file);
  checkMultiple(settings, opts);
  const storedTokens = parsed.entries.reduce((s, e) => s + e.numTokens, 0);
  const problems = [
    ...parsed.problems,
    ...files.problems,
    ...prov.problems,
    ...verif.problems,
    ...overrideProblems,
    ...scheduleProblems,
  ].sort((a, b) => (a.severity === b.severity ? (a.line ?? 0) - (b.line ?? 0) : a.severity === 'error' ? -1 : 1));
  return {
    root,
    manifestFile,
    shards: parsed.entries,
    fileStates: files.states,
    provenance: prov.side,
    verification: verif.side,
    settings,
    settingSources,
    storedTokens,
    schedule: new Schedule(settings, storedTokens),
    stream: new TokenStream(
      parsed.entries.map((e) => ({ path: e.path, startToken: e.startToken, numTokens: e.numTokens, line: e.line })),
      { blocking: opts.blockingReads },
    ),
    tokenizerFile,
    problems,
  };
}

/** Options of {@link openDataset}. */
export interface OpenDatasetOptions extends ManifestOptions {
  /**
   * How messages name the user's schedule values: the VS Code setting ids by default
   * (`tokenShards.globalTokensPerUpdate`); the CLI passes its flags (`--tokens-per-update`).
   */
  settingNames?: Partial<Record<keyof ScheduleSettings, string>>;
  /**
   * The caller owns a thread that may block (the CLI process, a worker thread; never the
   * extension host): the dataset's stream reads synchronously ({@link TokenStreamOptions.blocking}).
   */
  blockingReads?: boolean;
}

/**
 * Throws when G is not a multiple of L (the schedule cannot be built).
 * @throws SettingError naming both settings (or flags) and values.
 */
function checkMultiple(settings: ScheduleSettings, opts: OpenDatasetOptions): void {
  if (settings.globalTokensPerUpdate % settings.sequenceLength === 0) return;
  const name = settingName(opts);
  throw new SettingError(
    `${name('globalTokensPerUpdate')} ${fmt(settings.globalTokensPerUpdate)} is not a multiple of ${name('sequenceLength')} ${fmt(settings.sequenceLength)}`,
  );
}

/** The VS Code settings holding the schedule (how messages name user values by default). */
export const SETTING_NAMES: Record<keyof ScheduleSettings, string> = {
  globalTokensPerUpdate: 'tokenShards.globalTokensPerUpdate',
  sequenceLength: 'tokenShards.sequenceLength',
  eosTokenId: 'tokenShards.eosTokenId',
};

function settingName(opts: OpenDatasetOptions): (k: keyof ScheduleSettings) => string {
  return (k) => opts.settingNames?.[k] ?? SETTING_NAMES[k];
}

/**
 * Checks the user's schedule values (settings or flags): G, L positive integers, G ≤ 16,777,216,
 * EOS a uint32 id, L dividing G when both are set.
 * @throws SettingError naming the setting (or flag) and the value.
 */
export function checkUserSettings(userSettings: Partial<ScheduleSettings>, opts: OpenDatasetOptions = {}): void {
  const faults = scheduleFaults(userSettings, settingName(opts));
  if (faults.length) throw new SettingError(faults.join('; '));
}

/**
 * Drops entries whose file, inside the root as written, is a symbolic link (or under one) that
 * leads outside the root's real path: an error on their line, not read. Mutates `parsed`.
 */
async function dropSymlinksOutsideRoot(
  root: string,
  manifestFile: string,
  parsed: { entries: ShardEntry[]; problems: ManifestProblem[] },
): Promise<void> {
  let realRoot: string;
  try {
    realRoot = await fs.promises.realpath(root);
  } catch {
    return;
  }
  // "shard": "." (or "shards/..") names the dataset folder itself: not a file, and no link either.
  const isRoot = parsed.entries.map((e) => path.resolve(e.path) === path.resolve(root));
  if (isRoot.some(Boolean)) {
    parsed.entries.forEach((e, i) => {
      if (isRoot[i])
        parsed.problems.push({
          code: 'bad-field',
          severity: 'error',
          file: manifestFile,
          line: e.line,
          message: `${path.basename(manifestFile)} line ${e.line}: shard ${JSON.stringify(e.shard)} names the dataset folder itself, not a shard file; not read.`,
        });
    });
    parsed.entries = parsed.entries.filter((_, i) => !isRoot[i]);
    parsed.entries.forEach((e, i) => (e.index = i));
  }
  const why = await symlinksOutsideRoot(
    parsed.entries.map((e) => e.path),
    realRoot,
  );
  if (!why.some(Boolean)) return;
  parsed.entries.forEach((e, i) => {
    if (why[i]) parsed.problems.push(outsideRootProblem(manifestFile, e.line, e.shard, why[i]!, false));
  });
  parsed.entries = parsed.entries.filter((_, i) => !why[i]);
  parsed.entries.forEach((e, i) => (e.index = i));
}

/**
 * When `manifest.json` sets G and/or L so that G is not a multiple of L (each key valid on its
 * own, e.g. `global_tokens_per_update: 1000` with the default L of 1,024), the schedule cannot
 * be built. Rather than refusing the whole dataset, the `manifest.json` values of G and L are
 * dropped (back to the user's settings or the dataset card's defaults, in place in `settings`
 * and `sources`) and an error names the file and both numbers. An inconsistency that comes from
 * the user's settings alone is left for {@link Schedule} to reject.
 * @returns the problem to report, if any.
 */
function dropInconsistentOverrides(
  settings: ScheduleSettings,
  sources: Record<keyof ScheduleSettings, SettingSource>,
  userSettings: Partial<ScheduleSettings>,
  provenanceFile: string | undefined,
): ManifestProblem[] {
  const { globalTokensPerUpdate: G, sequenceLength: L } = settings;
  const keys = ['globalTokensPerUpdate', 'sequenceLength'] as const;
  if (G % L === 0 || !provenanceFile || !keys.some((k) => sources[k] === 'manifest.json')) return [];
  const origin = (k: keyof ScheduleSettings) =>
    sources[k] === 'manifest.json' ? 'from manifest.json' : sources[k] === 'setting' ? 'from the settings' : 'the dataset card default';
  const was = `tokens per update ${fmt(G)} (${origin('globalTokensPerUpdate')}) is not a multiple of the sequence length ${fmt(L)} (${origin('sequenceLength')})`;
  for (const k of keys) {
    if (sources[k] !== 'manifest.json') continue;
    if (userSettings[k] !== undefined) {
      settings[k] = userSettings[k]!;
      sources[k] = 'setting';
    } else {
      settings[k] = DEFAULT_SCHEDULE[k];
      sources[k] = 'default';
    }
  }
  return [
    {
      code: 'bad-provenance',
      severity: 'error',
      file: provenanceFile,
      message: `${path.basename(provenanceFile)}: ${was}; using ${fmt(settings.globalTokensPerUpdate)} tokens per update and sequence length ${fmt(settings.sequenceLength)} instead.`,
    },
  ];
}

/** A lone `.u32` file opened without a manifest. Offsets are local to the file. */
export interface LoneShard {
  file: string;
  stream: TokenStream;
  sizeBytes: number;
  /** Bytes after the last whole token (size mod 4); they are not shown as tokens. */
  trailingBytes: number;
}

/**
 * Opens one `.u32` file on its own.
 * @param opts whether the caller's thread may block on reads ({@link TokenStreamOptions}).
 * @throws DataError when the file cannot be stat'ed.
 */
export async function openLoneShard(file: string, opts: TokenStreamOptions = {}): Promise<LoneShard> {
  const { stream, sizeBytes, trailingBytes } = await TokenStream.fromFile(file, opts);
  return { file: path.resolve(file), stream, sizeBytes, trailingBytes };
}

/**
 * Opens one `.u32` file as a one-shard dataset with **local** offsets (no manifest, no sha256):
 * for the CLI's commands on a lone shard. Schedule settings are the user's or the card's
 * defaults; the tokenizer is looked for in the file's folder and up to two folders above
 * (`<root>/shards/x.u32` → `<root>/tokenizer/tokenizer.json`). Trailing bytes (size mod 4)
 * are reported as a problem and left out of the stream.
 * @throws DataError when the file cannot be stat'ed.
 */
export async function openShardFileAsDataset(
  file: string,
  userSettings: Partial<ScheduleSettings> = {},
  opts: OpenDatasetOptions = {},
): Promise<Dataset> {
  checkUserSettings(userSettings, opts);
  const lone = await openLoneShard(file, { blocking: opts.blockingReads });
  const numTokens = lone.stream.totalTokens;
  const st = await fs.promises.stat(lone.file, { bigint: true });
  const problems: ManifestProblem[] = [];
  if (lone.trailingBytes) {
    problems.push({
      code: 'size-not-multiple-of-4',
      severity: 'error',
      file: lone.file,
      message: `${path.basename(lone.file)}: size ${lone.sizeBytes} bytes is not a multiple of 4; the last ${count(lone.trailingBytes, 'byte')} after token ${numTokens} are not shown as tokens.`,
    });
  }
  let tokenizerFile: string | undefined;
  for (let dir = path.dirname(lone.file), i = 0; i < 3 && !tokenizerFile; i++, dir = path.dirname(dir)) {
    tokenizerFile = await findDatasetTokenizer(dir);
  }
  const settings = {} as ScheduleSettings;
  const settingSources = {} as Record<keyof ScheduleSettings, SettingSource>;
  for (const key of Object.keys(DEFAULT_SCHEDULE) as (keyof ScheduleSettings)[]) {
    settings[key] = userSettings[key] ?? DEFAULT_SCHEDULE[key];
    settingSources[key] = userSettings[key] !== undefined ? 'setting' : 'default';
  }
  checkMultiple(settings, opts);
  const entry: ShardEntry = { index: 0, shard: path.basename(lone.file), path: lone.file, startToken: 0, numTokens, line: 0, extra: {} };
  return {
    root: path.dirname(lone.file),
    manifestFile: '',
    shards: [entry],
    fileStates: [{ size: Number(st.size), mtimeMs: Number(st.mtimeNs) / 1e6, identity: identityOfStats(st) }],
    settings,
    settingSources,
    storedTokens: numTokens,
    schedule: new Schedule(settings, numTokens),
    stream: lone.stream,
    tokenizerFile,
    problems,
    lone: true,
  };
}

/**
 * Walks up from a file or folder looking for a `shard_manifest.jsonl` (at most `maxLevels`
 * folders up). Returns the root folder or undefined.
 */
export async function findDatasetRoot(from: string, maxLevels = 4): Promise<string | undefined> {
  let dir = path.resolve(from);
  try {
    if (!(await fs.promises.stat(dir)).isDirectory()) dir = path.dirname(dir);
  } catch {
    dir = path.dirname(dir);
  }
  for (let i = 0; i <= maxLevels; i++) {
    try {
      await fs.promises.access(path.join(dir, SHARD_MANIFEST));
      return dir;
    } catch {
      /* keep walking */
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

/** The manifest entry of a shard file within a dataset, matched by absolute path. */
export function shardOfFile(ds: Dataset, file: string): ShardEntry | undefined {
  const abs = path.resolve(file);
  return ds.shards.find((s) => s.path === abs);
}

/**
 * Index (in {@link Dataset.shards}) of the format file that `file` is, or that it belongs to as
 * a sidecar (Megatron's `.idx` → its `.bin`; datatrove's `.ds.index`, Dolma's `.csv.gz`); matched
 * by absolute path. Undefined for a dataset without a storage format or a file not in it.
 */
export function formatFileIndex(ds: Pick<Dataset, 'format'>, file: string): number | undefined {
  const abs = path.resolve(file);
  const i = ds.format?.files.findIndex((f) => f.path === abs || f.sidecars?.includes(abs) || f.lossMask?.path === abs) ?? -1;
  return i >= 0 ? i : undefined;
}

/** Formats whose folder holds one file that opens the whole stream: their `index.json` (litdata `writer.py`, MDS `index.json`). */
const STREAM_INDEX_FILE: Partial<Record<FormatName, string>> = { litdata: 'index.json', mds: 'index.json' };

/**
 * The file that opens the whole stream of a format dataset, for its manifest table to list every
 * file: the folder's `index.json` for litdata and MDS (one chunk or shard opened alone is a stream
 * of one file, and a compressed stream's first file is a decompressed copy outside the folder).
 * Undefined for the other formats (a token file opens its own unit) and the dataset card's layout
 * (its table is `shard_manifest.jsonl`).
 */
export function tableFileOf(ds: Pick<Dataset, 'format' | 'root'>): string | undefined {
  const index = ds.format && STREAM_INDEX_FILE[ds.format.name];
  return index && path.join(ds.root, index);
}

/**
 * The manifest table's dtype, documents and format-hash cells of file `i` of a dataset: the format's dtype (`uint32` for
 * the dataset card's shards), the documents starting in the file by the format's index (binary
 * search over its starts; null where EOS separates documents), the first hash the format carries.
 */
export function formatColumns(
  ds: Pick<Dataset, 'format' | 'shards'>,
  i: number,
): { dtype: TokenDtype; documents: number | null; formatHash: FormatHash | null } {
  const f = ds.format;
  if (!f) return { dtype: 'uint32', documents: null, formatHash: null };
  const e = ds.shards[i];
  const starts = f.documents?.starts;
  const hash = f.files[i].hashes?.[0];
  return {
    dtype: f.dtype,
    documents: starts ? lowerBound(starts, e.startToken + e.numTokens) - lowerBound(starts, e.startToken) : null,
    formatHash: hash ? { algorithm: hash.algorithm, hex: hash.hex } : null,
  };
}

/** Index of the first element of ascending `a` that is ≥ `x`. */
function lowerBound(a: Float64Array, x: number): number {
  let lo = 0,
    hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Options of {@link openPath}: the dataset options plus the format layer's (`--format`, `--dtype`). */
export interface OpenPathOptions extends OpenDatasetOptions, Omit<OpenFormatOptions, 'vocabSize'> {
  /** The tokenizer the user chose (`--tokenizer`, the setting): used before one next to the data. */
  tokenizerFile?: string;
  /** Vocabulary size of a tokenizer file, for the dtype guess of headerless files (default: loads it). */
  vocabSizeOf?: (tokenizerFile: string) => Promise<number>;
}

/**
 * Opens any PATH the product reads: a dataset folder with `shard_manifest.jsonl` or a lone `.u32`
 * file as today ({@link openDataset}, {@link openShardFileAsDataset}), or a file or folder of any
 * other storage format through the format layer ({@link openFormatDataset}). A file no format
 * recognises opens as a lone uint32 shard, as it always did.
 * @returns undefined for a folder that holds no format at all (the caller says what it expected).
 * @throws DataError / SettingError as the openers do.
 */
export async function openPath(
  target: string,
  userSettings: Partial<ScheduleSettings> = {},
  opts: OpenPathOptions = {},
): Promise<Dataset | undefined> {
  const input = await sniffInputOf(target);
  const format = opts.format ?? sniffFormat(input, opts.adapters)?.format;
  if (format === undefined && input.isDirectory) return undefined;
  if (format === undefined || format === 'token-stream') {
    return input.isDirectory ? openDataset(input.path, userSettings, opts) : openShardFileAsDataset(input.path, userSettings, opts);
  }
  checkUserSettings(userSettings, opts);
  const near = opts.tokenizerFile ?? (await findTokenizerAbove(input.isDirectory ? input.path : path.dirname(input.path)));
  const vocabSize = async () => {
    if (!near) return undefined;
    if (opts.vocabSizeOf) return opts.vocabSizeOf(near);
    return (await loadTokenizer(near)).vocabSize;
  };
  const opened = await openSniffed(input, { ...opts, vocabSize });
  return openFormatDataset(input.isDirectory ? input.path : path.dirname(input.path), opened, userSettings, opts);
}

/** Folders above a data path searched for a tokenizer (`tokenizer.json` or `tokenizer/tokenizer.json`). */
export const TOKENIZER_SEARCH_LEVELS = 3;

/** The first `tokenizer.json` (or `tokenizer/tokenizer.json`) in `dir` or up to {@link TOKENIZER_SEARCH_LEVELS} folders above. */
export async function findTokenizerAbove(dir: string): Promise<string | undefined> {
  for (let d = path.resolve(dir), i = 0; i <= TOKENIZER_SEARCH_LEVELS; i++) {
    const found = await findDatasetTokenizer(d);
    if (found) return found;
    const up = path.dirname(d);
    if (up === d) break;
    d = up;
  }
  return undefined;
}

/**
 * A dataset over a path the format layer opened: its files become the shards (global offsets
 * from 0, in the format's stream order), each read through its token layout; the schedule is the
 * user's settings or the card's defaults, with the format's delimiter as EOS unless the user set
 * one; documents come from the format's index when it has one.
 * @param root the folder the path is in (the folder itself when a folder was opened).
 * @throws SettingError when the user's G is not a multiple of L.
 */
export async function openFormatDataset(
  root: string,
  { opened, formatReason }: OpenedPath,
  userSettings: Partial<ScheduleSettings> = {},
  opts: OpenDatasetOptions & { tokenizerFile?: string } = {},
): Promise<Dataset> {
  const settings = {} as ScheduleSettings;
  const settingSources = {} as Record<keyof ScheduleSettings, SettingSource>;
  for (const key of Object.keys(DEFAULT_SCHEDULE) as (keyof ScheduleSettings)[]) {
    if (userSettings[key] !== undefined) {
      settings[key] = userSettings[key]!;
      settingSources[key] = 'setting';
    } else if (key === 'eosTokenId' && opened.eosTokenId !== undefined) {
      settings[key] = opened.eosTokenId;
      settingSources[key] = 'format';
    } else {
      settings[key] = DEFAULT_SCHEDULE[key];
      settingSources[key] = 'default';
    }
  }
  checkMultiple(settings, opts);
  const shards: ShardEntry[] = [];
  let start = 0;
  opened.files.forEach((f, index) => {
    const sha256 = f.hashes?.find((h) => h.algorithm === 'sha256')?.hex;
    shards.push({ index, shard: f.name, path: f.path, startToken: start, numTokens: f.numTokens, sha256, line: 0, extra: {} });
    start += f.numTokens;
  });
  const fileStates = await Promise.all(
    opened.files.map(async (f): Promise<ShardFileState> => {
      try {
        const st = await fs.promises.stat(f.path, { bigint: true });
        return { size: Number(st.size), mtimeMs: Number(st.mtimeNs) / 1e6, identity: identityOfStats(st) };
      } catch {
        return {};
      }
    }),
  );
  return {
    root,
    manifestFile: '',
    shards,
    fileStates,
    settings,
    settingSources,
    storedTokens: start,
    schedule: new Schedule(settings, start),
    stream: new TokenStream(
      shards.map((e, i) => ({ path: e.path, startToken: e.startToken, numTokens: e.numTokens, layout: opened.files[i].layout })),
      { blocking: opts.blockingReads },
    ),
    tokenizerFile: opts.tokenizerFile ?? (await findTokenizerAbove(root)),
    problems: [],
    format: {
      name: opened.format,
      dtype: opened.dtype,
      dtypeSource: opened.dtypeSource,
      reason: formatReason,
      files: opened.files,
      documents: opened.documents,
      delimiter: opened.delimiter ?? 'closes',
      notes: opened.notes,
    },
  };
}
