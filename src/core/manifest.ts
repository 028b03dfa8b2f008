/**
 * Parsing and validation of a dataset root's metadata files, per `docs/format.md` and the
 * dataset card:
 * - `shard_manifest.jsonl`: one JSON object per line with at least `shard` (path relative to the
 *   root), `start_token`, `num_tokens`, `sha256`. Lines may come in any order; CRLF, a UTF-8 BOM,
 *   blank lines and extra fields are tolerated.
 * - `manifest.json`: free-form provenance; known keys may override the schedule settings.
 * - `verification.json`: optional record of the end-to-end check done after freezing.
 *
 * Nothing here throws on bad data: every fault becomes a {@link ManifestProblem} with a line
 * number, so one bad line never hides the rest.
 */
import * as fs from 'fs';
import * as path from 'path';
import { count, fmt } from './units';
import { lineColumnAt, parseJson } from './safeJson';
import { scheduleValueFault } from './schedule';
import { FileIdentity, identityKeyOfStats, identityOfKey } from './fileIdentity';
import { flatString } from './flatString';
import { READ_LIMITS, UnreadableInputError, readRegularTextFile } from './safeRead';

/** File name of the shard manifest inside a dataset root. */
export const SHARD_MANIFEST = 'shard_manifest.jsonl';
/** File name of the provenance manifest inside a dataset root. */
export const PROVENANCE_MANIFEST = 'manifest.json';
/** File name of the optional verification record inside a dataset root. */
export const VERIFICATION_FILE = 'verification.json';
/** Bytes per token: shards are raw little-endian uint32. */
export const BYTES_PER_TOKEN = 4;
/** Largest id a uint32 token can hold. */
export const MAX_TOKEN_ID = 0xffff_ffff;

/** One shard as listed in `shard_manifest.jsonl`. Offsets and counts are in tokens. */
export interface ShardEntry {
  /** Position in the manifest after sorting by `startToken` (0-based). */
  index: number;
  /** The `shard` field: path relative to the dataset root, as written. */
  shard: string;
  /** Absolute path of the shard file. */
  path: string;
  /** Global token offset of the shard's first token. */
  startToken: number;
  /** Number of tokens in the shard. */
  numTokens: number;
  /** Lower-case hex sha256 of the file, when the line has one. */
  sha256?: string;
  /** 1-based line number in `shard_manifest.jsonl`. */
  line: number;
  /** Fields beyond the known four, kept for display. */
  extra: Record<string, unknown>;
}

/** Kinds of manifest fault; stable identifiers used for diagnostics and tests. */
export type ProblemCode =
  | 'empty-manifest'
  | 'malformed-json'
  | 'not-an-object'
  | 'missing-field'
  | 'bad-field'
  | 'duplicate-shard'
  | 'gap'
  | 'overlap'
  | 'not-from-zero'
  | 'unsorted'
  | 'missing-file'
  | 'size-not-multiple-of-4'
  | 'size-mismatch'
  | 'unreadable'
  | 'bad-provenance'
  | 'bad-verification'
  | 'outside-root'
  /** The CLI's `info`: the tokenizer.json cannot be loaded; the ids do not look like this tokenizer's (uint16/uint32 mix-up). */
  | 'bad-tokenizer'
  | 'id-anomaly';

/** A fault found in a dataset's metadata or files. */
export interface ManifestProblem {
  code: ProblemCode;
  /** 'warning' for harmless oddities (lines out of order), 'error' for anything that changes what is read. */
  severity: 'error' | 'warning';
  /** One clear sentence naming the file, line or offset and what was expected. */
  message: string;
  /** Absolute path of the file the problem is in. */
  file: string;
  /** 1-based line in `file`, when the problem sits on a line. */
  line?: number;
}

/**
 * The manifest problem codes about a shard's file on disk rather than its manifest line (missing,
 * a size that disagrees with `num_tokens` or is not a multiple of 4 bytes, unreadable). A
 * verification of the shard reports the same fault per shard, so its result supersedes these in
 * Problems (src/diagnostics.ts) and `token-shards verify` does not print them twice.
 */
export const SHARD_FILE_PROBLEM_CODES: ReadonlySet<ProblemCode> = new Set<ProblemCode>([
  'missing-file',
  'size-mismatch',
  'size-not-multiple-of-4',
  'unreadable',
]);

/** Options of {@link parseShardManifest}. */
export interface ManifestOptions {
  /**
   * Allow `shard` paths that lead outside the dataset root (absolute, `..`). Off by default: such
   * a line is an error and its shard is not read (`--allow-outside-root`,
   * `tokenShards.allowShardsOutsideRoot` in trusted workspaces).
   */
  allowOutsideRoot?: boolean;
}

/** Result of {@link parseShardManifest}. */
export interface ParsedShardManifest {
  /** Entries sorted by `startToken` (then by line), indices assigned in that order. */
  entries: ShardEntry[];
  problems: ManifestProblem[];
}

const SHA256_RE = /^[0-9a-fA-F]{64}$/;

/**
 * True when the dataset at `root` has at least one of its manifest's shards on disk (a regular
 * file at the path the manifest gives): a folder holding only a manifest (the full-scale
 * layout's `source/`, shards elsewhere or not fetched) is not offered as a dataset to choose.
 * Reads the manifest (a missing or unreadable one: false) and stats shards until one exists.
 */
export async function hasShardsPresent(root: string, opts: ManifestOptions = {}): Promise<boolean> {
  const file = path.join(root, SHARD_MANIFEST);
  let text: string;
  try {
    text = await fs.promises.readFile(file, 'utf8');
  } catch {
    return false;
  }
  for (const e of parseShardManifest(text, file, opts).entries) {
    const st = await fs.promises.stat(e.path).catch(() => undefined);
    if (st?.isFile()) return true;
  }
  return false;
}

/**
 * Parses the text of a `shard_manifest.jsonl`.
 * @param text file contents (BOM and CRLF allowed).
 * @param file absolute path of the manifest; shard paths are resolved against its folder.
 * @returns entries sorted by `start_token` plus every fault found (malformed lines are skipped,
 *   the rest still parsed). Contiguity is checked here too; file checks are in {@link validateShardFiles}.
 */
export function parseShardManifest(text: string, file: string, opts: ManifestOptions = {}): ParsedShardManifest {
  const root = path.dirname(file);
  const resolveShard = shardResolver(root);
  const problems: ManifestProblem[] = [];
  const entries: ShardEntry[] = [];
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let prevStart = -Infinity;
  let unsortedReported = false;
  // Line by line without splitting the whole text into an array first (100,000-line
  // manifests). A "\r" before the "\n" is white space to trim().
  for (let at = 0, line = 1; at <= text.length; line++) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl;
    const raw = text.slice(at, end).trim();
    at = end + 1;
    if (raw === '') continue;
    const parsedLine = parseJson(raw);
    if (!parsedLine.ok) {
      problems.push({
        code: 'malformed-json',
        severity: 'error',
        file,
        line,
        message: `${path.basename(file)} line ${line}: not valid JSON (${parsedLine.error}); expected one JSON object per line.`,
      });
      continue;
    }
    const obj = parsedLine.value;
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
      problems.push({
        code: 'not-an-object',
        severity: 'error',
        file,
        line,
        message: `${path.basename(file)} line ${line}: expected a JSON object with shard, start_token, num_tokens, sha256.`,
      });
      continue;
    }
    const o = obj as Record<string, unknown>;
    const missing = ['shard', 'start_token', 'num_tokens'].filter((k) => !(k in o));
    if (missing.length) {
      problems.push({
        code: 'missing-field',
        severity: 'error',
        file,
        line,
        message: `${path.basename(file)} line ${line}: missing field${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`,
      });
      continue;
    }
    const { shard, start_token, num_tokens, sha256 } = o;
    const bad: string[] = [];
    if (typeof shard !== 'string' || shard === '') bad.push('shard must be a non-empty string');
    else if (shard.length > MAX_SHARD_PATH_CHARS)
      bad.push(
        `shard is ${fmt(shard.length)} characters long (${shown(shard)}); expected a path relative to the root of at most ${fmt(MAX_SHARD_PATH_CHARS)}`,
      );
    if (!isCount(start_token)) bad.push(countFault('start_token', start_token, raw));
    if (!isCount(num_tokens)) bad.push(countFault('num_tokens', num_tokens, raw));
    else if (
      isCount(start_token) &&
      (!Number.isSafeInteger(start_token + num_tokens) || !Number.isSafeInteger(num_tokens * BYTES_PER_TOKEN))
    ) {
      bad.push(
        `start_token + num_tokens = ${fmt(start_token + num_tokens)} (or num_tokens × 4 bytes) is past 2^53, where token and byte offsets stop being exact`,
      );
    }
    if (sha256 !== undefined && (typeof sha256 !== 'string' || !SHA256_RE.test(sha256))) bad.push('sha256 must be 64 hex digits');
    if (bad.length) {
      problems.push({
        code: 'bad-field',
        severity: 'error',
        file,
        line,
        message: `${path.basename(file)} line ${line}: ${bad.join('; ')}.`,
      });
      continue;
    }
    if (sha256 === undefined) {
      problems.push({
        code: 'missing-field',
        severity: 'warning',
        file,
        line,
        message: `${path.basename(file)} line ${line}: no sha256; this shard cannot be verified.`,
      });
    }
    const outside = isPlainRelative(shard as string) ? undefined : outsideRoot(shard as string, root);
    if (outside) {
      problems.push(outsideRootProblem(file, line, shard as string, outside, !!opts.allowOutsideRoot));
      if (!opts.allowOutsideRoot) continue;
    }
    const st = start_token as number;
    if (st < prevStart && !unsortedReported) {
      unsortedReported = true;
      problems.push({
        code: 'unsorted',
        severity: 'warning',
        file,
        line,
        message: `${path.basename(file)} line ${line}: lines are not in start_token order; they are sorted before use (as the dataset card's reader does).`,
      });
    }
    prevStart = Math.max(prevStart, st);
    entries.push({
      index: -1,
      shard: shard as string,
      path: resolveShard(shard as string),
      startToken: st,
      numTokens: num_tokens as number,
      sha256: typeof sha256 === 'string' ? sha256.toLowerCase() : undefined,
      line,
      extra: extraFields(o),
    });
  }
  if (entries.length === 0 && problems.length === 0) {
    problems.push({
      code: 'empty-manifest',
      severity: 'error',
      file,
      message: `${path.basename(file)}: no shard lines; expected one JSON object per shard.`,
    });
  }
  entries.sort((a, b) => a.startToken - b.startToken || a.line - b.line);
  entries.forEach((e, i) => (e.index = i));
  problems.push(...checkContiguity(entries, file));
  return { entries, problems };
}

/**
 * The problem for a shard outside the dataset root: an error (the shard is not read) unless the
 * user allowed it, then a warning.
 * @param why "is an absolute path", "climbs out with ..", "is a symbolic link to /x".
 */
export function outsideRootProblem(file: string, line: number, shard: string, why: string, allowed: boolean): ManifestProblem {
  const root = path.dirname(file);
  return allowed
    ? {
        code: 'outside-root',
        severity: 'warning',
        file,
        line,
        message: `${path.basename(file)} line ${line}: shard ${shown(shard)} ${why}, outside the dataset folder ${root}; read anyway (allowed by --allow-outside-root / tokenShards.allowShardsOutsideRoot).`,
      }
    : {
        code: 'outside-root',
        severity: 'error',
        file,
        line,
        message: `${path.basename(file)} line ${line}: shard ${shown(shard)} ${why}, outside the dataset folder ${root}; not read (a manifest must not make the tool read other files; allow it with --allow-outside-root or the setting tokenShards.allowShardsOutsideRoot).`,
      };
}

/** The fields a manifest line has beyond the known four; one shared empty object when there are none. */
function extraFields(o: Record<string, unknown>): Record<string, unknown> {
  let extra: Record<string, unknown> | undefined;
  for (const k in o) {
    if (k === 'shard' || k === 'start_token' || k === 'num_tokens' || k === 'sha256') continue;
    (extra ??= {})[k] = o[k];
  }
  return extra ?? NO_EXTRA;
}

const NO_EXTRA: Record<string, unknown> = Object.freeze({});

/**
 * A `shard` path that cannot leave the root and needs no normalising: relative, no `.` or `..`
 * segment, no empty segment, no trailing slash (`shards/tokens_000000.u32`). Such a path is
 * joined to the root by concatenation instead of `path.resolve` (POSIX separators only).
 */
const NOT_PLAIN = /^\/|\/\/|\/$|(?:^|\/)\.{1,2}(?:\/|$)/;

function isPlainRelative(shard: string): boolean {
  return path.sep === '/' && shard !== '' && !NOT_PLAIN.test(shard);
}

/**
 * The absolute path of a `shard` field under `root`, as `path.resolve(root, shard)` gives it.
 * Plain relative paths ({@link isPlainRelative}) are concatenated; every result is flattened
 * ({@link flatString}): `path.resolve` builds its result piece by piece, and the ~20 pieces kept
 * per path cost ~470 bytes each on a 100,000-line manifest.
 */
function shardResolver(root: string): (shard: string) => string {
  const base = path.resolve(root);
  const prefix = base.endsWith(path.sep) ? base : base + path.sep;
  return (shard) => flatString(isPlainRelative(shard) ? prefix + shard : path.resolve(base, shard));
}

/**
 * Why a `shard` path, as written, leads out of the dataset root, or undefined when it stays
 * inside. Symbolic links are judged separately ({@link symlinkOutsideRoot}).
 */
function outsideRoot(shard: string, root: string): string | undefined {
  if (path.isAbsolute(shard)) return 'is an absolute path';
  const rel = path.relative(root, path.resolve(root, shard));
  if (rel === '..' || rel.startsWith('..' + path.sep) || path.isAbsolute(rel)) return 'climbs out with ..';
  return undefined;
}

/**
 * Why a shard file inside the root as written is really elsewhere (a symbolic link, or a linked
 * folder on its path, resolving outside the root's real path), or undefined. A missing file is
 * not judged here (it is reported as missing).
 * @param realRoot `fs.realpath` of the dataset root.
 */
export async function symlinkOutsideRoot(shardPath: string, realRoot: string): Promise<string | undefined> {
  let real: string;
  try {
    real = await fs.promises.realpath(shardPath);
  } catch {
    return undefined;
  }
  const rel = path.relative(realRoot, real);
  if (rel === '..' || rel.startsWith('..' + path.sep) || path.isAbsolute(rel))
    return `is a symbolic link (or under one) leading to ${shown(real)}`;
  return undefined;
}

/**
 * {@link symlinkOutsideRoot} for every shard of a manifest, with bounded memory and time linear in
 * the number of shards: synchronous calls in batches of {@link STAT_BATCH} with a yield to the
 * event loop between batches (an unbounded `Promise.all` of 100,000 `realpath` calls took ~300 MB
 * and 3 s). Each file gets one `lstat`; the real path of each folder is asked
 * once (a file that is not itself a link lies where its folder really is).
 * @returns why each path is outside the root (undefined: inside, or missing), same order as `paths`.
 */
export async function symlinksOutsideRoot(paths: readonly string[], realRoot: string): Promise<(string | undefined)[]> {
  const why: (string | undefined)[] = new Array(paths.length);
  /** Folder → its real path (null when it cannot be resolved) and whether that is outside the root. */
  const folders = new Map<string, { real: string; outside: boolean } | null>();
  const outside = (real: string) => {
    const rel = path.relative(realRoot, real);
    return rel === '..' || rel.startsWith('..' + path.sep) || path.isAbsolute(rel);
  };
  const judge = (p: string): string | undefined => {
    let real: string;
    try {
      const st = fs.lstatSync(p, { throwIfNoEntry: false });
      if (!st) return undefined;
      if (st.isSymbolicLink()) {
        real = fs.realpathSync.native(p);
        return outside(real) ? `is a symbolic link (or under one) leading to ${shown(real)}` : undefined;
      }
    } catch {
      return undefined;
    }
    const dir = path.dirname(p);
    let folder = folders.get(dir);
    if (folder === undefined) {
      try {
        const r = fs.realpathSync.native(dir);
        folder = { real: r, outside: outside(r) };
      } catch {
        folder = null;
      }
      folders.set(dir, folder);
    }
    if (!folder?.outside) return undefined;
    return `is a symbolic link (or under one) leading to ${shown(path.join(folder.real, path.basename(p)))}`;
  };
  for (let b = 0; b < paths.length; b += STAT_BATCH) {
    if (b > 0) await new Promise<void>((r) => setImmediate(r));
    for (let k = b; k < Math.min(paths.length, b + STAT_BATCH); k++) why[k] = judge(paths[k]);
  }
  return why;
}

/** Longest `shard` path accepted, in characters (Linux's PATH_MAX); longer ones are reported, not opened. */
export const MAX_SHARD_PATH_CHARS = 4096;

/** A value from the file as JSON for a message, cut to 80 characters so one huge field cannot flood the output. */
function shown(v: unknown): string {
  const t = JSON.stringify(v) ?? String(v);
  return t.length > 80 ? `${t.slice(0, 77)}…` : t;
}

/**
 * Why `v` is not a usable token count or offset, as a phrase for a manifest message. A number
 * past 2^53 is shown as written in `line` (its parsed value is already rounded: 2^53 + 1 reads
 * as 9007199254740992).
 */
function countFault(name: string, v: unknown, line?: string): string {
  if (typeof v === 'number' && Number.isInteger(v) && v > 0) {
    const written = line && new RegExp(`"${name}"\\s*:\\s*(-?[0-9][0-9.eE+-]*)`).exec(line)?.[1];
    return `${name} ${written ? shown(written).slice(1, -1) : shown(v)} is past 2^53, where token offsets stop being exact (JSON numbers that large are rounded when read)`;
  }
  return `${name} must be a non-negative integer (got ${shown(v)})`;
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** Checks that sorted entries tile `[0, total)` with no gap, overlap or duplicate file. */
function checkContiguity(entries: ShardEntry[], file: string): ManifestProblem[] {
  const problems: ManifestProblem[] = [];
  const base = path.basename(file);
  const seen = new Map<string, ShardEntry>();
  for (const e of entries) {
    const prev = seen.get(e.path);
    if (prev) {
      problems.push({
        code: 'duplicate-shard',
        severity: 'error',
        file,
        line: e.line,
        message: `${base} line ${e.line}: shard ${e.shard} is already listed on line ${prev.line}.`,
      });
    } else seen.set(e.path, e);
  }
  if (entries.length && entries[0].startToken !== 0) {
    const e = entries[0];
    problems.push({
      code: 'not-from-zero',
      severity: 'error',
      file,
      line: e.line,
      message: `${base} line ${e.line}: the first shard (${e.shard}) starts at token ${fmt(e.startToken)}; expected 0.`,
    });
  }
  for (let i = 1; i < entries.length; i++) {
    const a = entries[i - 1],
      b = entries[i];
    const end = a.startToken + a.numTokens;
    if (b.startToken > end) {
      problems.push({
        code: 'gap',
        severity: 'error',
        file,
        line: b.line,
        message: `${base} line ${b.line}: gap of ${fmt(b.startToken - end)} tokens: ${a.shard} (line ${a.line}) ends at token ${fmt(end)} but ${b.shard} starts at ${fmt(b.startToken)}.`,
      });
    } else if (b.startToken < end) {
      problems.push({
        code: 'overlap',
        severity: 'error',
        file,
        line: b.line,
        message: `${base} line ${b.line}: ${b.shard} starts at token ${fmt(b.startToken)}, inside ${a.shard} (line ${a.line}, tokens ${fmt(a.startToken)}–${fmt(end - 1)}); expected ${fmt(end)}.`,
      });
    }
  }
  return problems;
}

/** Shard files stat'ed per batch (synchronous calls) between two yields to the event loop. */
const STAT_BATCH = 256;

/** On-disk facts about one shard file, as found by {@link validateShardFiles}. */
export interface ShardFileState {
  /** Size in bytes, or undefined when the file is missing/unreadable. */
  size?: number;
  /** Modification time in ms since the epoch. */
  mtimeMs?: number;
  /** The file's identity (device, inode, size, mtime, ctime) from the same stat, for caches. */
  identity?: FileIdentity;
}

/**
 * A {@link ShardFileState} of a file that could be stat'ed, holding the identity as its one-string
 * key (`identityKey`) and building the object when asked: 100,000 states take ~10 MB, not ~26 MB.
 */
class StatState implements ShardFileState {
  constructor(
    readonly size: number,
    readonly mtimeMs: number,
    private readonly key: string,
  ) {}

  get identity(): FileIdentity {
    return identityOfKey(this.key);
  }
}

/**
 * Stats every listed shard file and reports missing files, paths that are not regular files or
 * that this process may not read, sizes that are not a multiple of 4 bytes, and sizes that
 * disagree with `4 × num_tokens`.
 * @returns one state per entry (same order) plus the problems found, attributed to the manifest line.
 */
export async function validateShardFiles(
  entries: ShardEntry[],
  manifestFile: string,
): Promise<{ states: ShardFileState[]; problems: ManifestProblem[] }> {
  const base = path.basename(manifestFile);
  const problems: ManifestProblem[] = [];
  // Stats in batches of STAT_BATCH synchronous calls with a yield between batches: flat memory and
  // linear time for 100,000 lines (an unbounded Promise.all of 100,000 stats took ~600 MB and was
  // slower), and never more than a few ms of blocking at a time.
  const states: ShardFileState[] = new Array(entries.length);
  for (let b = 0; b < entries.length; b += STAT_BATCH) {
    if (b > 0) await new Promise<void>((r) => setImmediate(r));
    for (let k = b; k < Math.min(entries.length, b + STAT_BATCH); k++) states[k] = statShardFile(entries[k]);
  }
  function statShardFile(e: ShardEntry): ShardFileState {
    try {
      const st = fs.statSync(e.path, { bigint: true });
      if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' });
      // stat works on a file we may not read (chmod 000, another owner): ask, so it is reported
      // here and not first when a view reads it. (Root passes every permission check.)
      fs.accessSync(e.path, fs.constants.R_OK);
      return new StatState(Number(st.size), Number(st.mtimeNs) / 1e6, identityKeyOfStats(st));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      problems.push(
        code === 'ENOENT'
          ? {
              code: 'missing-file',
              severity: 'error',
              file: manifestFile,
              line: e.line,
              message: `${base} line ${e.line}: shard file ${e.shard} does not exist (expected ${fmt(e.numTokens * BYTES_PER_TOKEN)} bytes at ${e.path}).`,
            }
          : {
              code: 'unreadable',
              severity: 'error',
              file: manifestFile,
              line: e.line,
              message: `${base} line ${e.line}: cannot read shard file ${e.shard}: ${(err as Error).message}.`,
            },
      );
      return {};
    }
  }
  entries.forEach((e, i) => {
    const size = states[i].size;
    if (size === undefined) return;
    if (size % BYTES_PER_TOKEN !== 0) {
      problems.push({
        code: 'size-not-multiple-of-4',
        severity: 'error',
        file: manifestFile,
        line: e.line,
        message: `${e.shard} (${base} line ${e.line}): size ${fmt(size)} bytes is not a multiple of 4 (${count(size % BYTES_PER_TOKEN, 'trailing byte')}); uint32 shards must be whole tokens.`,
      });
    } else if (size !== e.numTokens * BYTES_PER_TOKEN) {
      problems.push({
        code: 'size-mismatch',
        severity: 'error',
        file: manifestFile,
        line: e.line,
        message: `${e.shard}: size ${fmt(size)} bytes (${fmt(size / BYTES_PER_TOKEN)} tokens) disagrees with ${base} line ${e.line}: num_tokens ${fmt(e.numTokens)} = ${fmt(e.numTokens * BYTES_PER_TOKEN)} bytes.`,
      });
    }
  });
  return { states, problems };
}

/** Schedule keys that `manifest.json` may set, and the names they are accepted under. */
export const SCHEDULE_KEYS = {
  globalTokensPerUpdate: ['global_tokens_per_update', 'tokens_per_update', 'global_batch_tokens'],
  sequenceLength: ['sequence_length', 'seq_len', 'max_sequence_length', 'context_length'],
  eosTokenId: ['eos_token_id', 'eos_id', 'eos'],
} as const;

/** Schedule settings found in `manifest.json` (only the keys present). */
export interface ScheduleOverrides {
  globalTokensPerUpdate?: number;
  sequenceLength?: number;
  eosTokenId?: number;
}

/** A parsed JSON side file (`manifest.json` or `verification.json`). */
export interface SideFile {
  file: string;
  /** The parsed object (every key, for display). */
  data: Record<string, unknown>;
}

/**
 * Reads an optional JSON object file. Missing → `undefined`; unparsable → a problem.
 * @param code problem code to use when the file is malformed.
 */
export async function readSideFile(
  file: string,
  code: 'bad-provenance' | 'bad-verification',
): Promise<{ side?: SideFile; problems: ManifestProblem[] }> {
  let text: string;
  try {
    text = await readRegularTextFile(file, `${path.basename(file)}, a JSON object`, READ_LIMITS.sideFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { problems: [] };
    if (err instanceof UnreadableInputError) return { problems: [{ code, severity: 'error', file, message: `${err.message}; ignored.` }] };
    return { problems: [{ code, severity: 'error', file, message: `${path.basename(file)}: cannot read: ${(err as Error).message}.` }] };
  }
  return parseSideFile(text, file, code);
}

/**
 * Parses the text of an optional JSON object file (`manifest.json`, `verification.json`). Never
 * throws: a fault becomes a problem naming the file (and the line, when known).
 */
export function parseSideFile(
  text: string,
  file: string,
  code: 'bad-provenance' | 'bad-verification',
): { side?: SideFile; problems: ManifestProblem[] } {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const r = parseJson(text);
  if (!r.ok) {
    const at = r.offset !== undefined ? lineColumnAt(text, r.offset) : undefined;
    return {
      problems: [
        {
          code,
          severity: 'error',
          file,
          line: at?.line,
          message: `${path.basename(file)}${at ? ` line ${at.line}` : ''}: not valid JSON (${r.error}); expected one JSON object.`,
        },
      ],
    };
  }
  const data = r.value;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return {
      problems: [
        {
          code,
          severity: 'error',
          file,
          line: 1,
          message: `${path.basename(file)} line 1: not a JSON object (the top level is ${data === null ? 'null' : Array.isArray(data) ? 'an array' : typeof data}).`,
        },
      ],
    };
  }
  return { side: { file, data: data as Record<string, unknown> }, problems: [] };
}

/**
 * Finds schedule overrides in a `manifest.json` object: top-level keys, or inside a nested
 * object such as `training`, `schedule` or `settings` (first match wins, top level first).
 * A key with a value that is not a positive integer is ignored and reported.
 */
export function scheduleOverrides(side: SideFile | undefined): { overrides: ScheduleOverrides; problems: ManifestProblem[] } {
  const overrides: ScheduleOverrides = {};
  const problems: ManifestProblem[] = [];
  if (!side) return { overrides, problems };
  const scopes: Record<string, unknown>[] = [side.data];
  for (const v of Object.values(side.data)) {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) scopes.push(v as Record<string, unknown>);
  }
  for (const [name, keys] of Object.entries(SCHEDULE_KEYS) as [keyof ScheduleOverrides, readonly string[]][]) {
    outer: for (const scope of scopes) {
      for (const k of keys) {
        if (!(k in scope)) continue;
        const v = scope[k];
        // G and L: positive integers, G ≤ 16,777,216; EOS: a uint32 id (schedule.ts, one rule for flags, settings and files).
        const fault = scheduleValueFault(name, v);
        if (!fault) {
          overrides[name] = v as number;
        } else {
          problems.push({
            code: 'bad-provenance',
            severity: 'error',
            file: side.file,
            message: `${path.basename(side.file)}: ${k} = ${fault}; using the setting instead.`,
          });
        }
        break outer;
      }
    }
  }
  return { overrides, problems };
}
