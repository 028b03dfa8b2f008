/**
 * Hashes of a stream's files, for formats other than the dataset card's (whose
 * `shard_manifest.jsonl` is checked by `../verify/`): `token-shards manifest PATH` writes a
 * `shard_manifest.jsonl`-style list of every token file with its sha256 (and its sidecars'),
 * which `token-shards verify PATH --manifest FILE` checks after a transfer; formats that carry
 * hashes (MDS `raw_data.hashes`) are checked against them.
 *
 * Files are streamed (1 MiB reads) through Node's `crypto` hashes, asynchronously: no whole file in
 * memory, no long synchronous work. The xxHash family MDS may name (mosaicml/streaming
 * `streaming/base/hashing.py`, commit 89e7bb90: every `hashlib` algorithm plus python-xxhash's
 * `xxh32`, `xxh64`, `xxh3_64`, `xxh3_128`, `xxh128`, each `hexdigest()` with seed 0) is computed by
 * the `hash-wasm` package (WebAssembly builds of the xxHash reference code), whose `digest('hex')`
 * is the same canonical big-endian hex as python-xxhash's `hexdigest()`.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { IHasher, createXXHash128, createXXHash3, createXXHash32, createXXHash64 } from 'hash-wasm';
import { CancelledError, DataError } from '../errors';
import { fmt } from '../units';
import { parseJson } from '../safeJson';
import { FormatFile, FormatHash } from './types';

/** The xxHash algorithms by python-xxhash's names (seed 0; `xxh3_128` is `xxh128`). */
const XXHASH: ReadonlyMap<string, () => Promise<IHasher>> = new Map([
  ['xxh32', () => createXXHash32(0)],
  ['xxh64', () => createXXHash64(0, 0)],
  ['xxh3_64', () => createXXHash3(0, 0)],
  ['xxh128', () => createXXHash128(0, 0)],
  ['xxh3_128', () => createXXHash128(0, 0)],
]);

/** A running digest: Node's `crypto.Hash` or a `hash-wasm` hasher. */
interface Digester {
  update(chunk: Buffer): unknown;
  digest(encoding: 'hex'): string;
}

/** A fresh {@link Digester} for `algorithm` (lower case). */
async function digesterFor(algorithm: string): Promise<Digester> {
  const xx = XXHASH.get(algorithm);
  if (!xx) return crypto.createHash(algorithm);
  const h = await xx();
  h.init();
  return h;
}

/**
 * Hex digests of a file for each algorithm asked (names as `crypto.createHash` takes them, or an
 * xxHash name of python-xxhash: `xxh32`, `xxh64`, `xxh3_64`, `xxh3_128`, `xxh128`).
 * @throws DataError when the file cannot be read; CancelledError on abort.
 */
export async function hashFile(file: string, algorithms: readonly string[], signal?: AbortSignal): Promise<Record<string, string>> {
  const hashes = await Promise.all(algorithms.map(digesterFor));
  await new Promise<void>((resolve, reject) => {
    const rs = fs.createReadStream(file, { highWaterMark: 1 << 20 });
    const onAbort = () => rs.destroy(new CancelledError());
    signal?.addEventListener('abort', onAbort, { once: true });
    rs.on('data', (chunk) => {
      for (const h of hashes) h.update(chunk as Buffer);
    });
    rs.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(err instanceof CancelledError ? err : new DataError(`${file}: cannot read: ${err.message}`, file));
    });
    rs.on('end', () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
  });
  return Object.fromEntries(algorithms.map((a, i) => [a, hashes[i].digest('hex')]));
}

/** True when {@link hashFile} computes `algorithm`: Node's crypto has it, or it is an xxHash name (MDS may name others, e.g. `blake2b`'s variants Node lacks). */
export function hashSupported(algorithm: string): boolean {
  const a = algorithm.toLowerCase();
  return XXHASH.has(a) || crypto.getHashes().includes(a);
}

/**
 * The folder a stream file lies in, in the dataset: its own, or for a copy decompressed into the
 * cache its compressed file's ({@link FormatFile.storedAs}). Sidecar names are relative to it.
 */
export function storedFolder(f: FormatFile): string {
  return path.dirname(f.storedAs ?? f.path);
}

/** One line of a stream manifest: a token file and its sidecars with their sha256 and size. */
export interface StreamManifestLine {
  /** The file's name in the stream (relative to the opened folder, `/`-separated). */
  shard: string;
  /** Global token offset of the file's first token. */
  start_token: number;
  /** Tokens of the stream in the file. */
  num_tokens: number;
  sha256: string;
  /** File size in bytes. */
  bytes: number;
  /** The format the file was read as. */
  format: string;
  /** Files belonging to it (Megatron `.idx`, Dolma `.csv.gz`…), named relative to the token file's folder in the dataset ({@link storedFolder}). */
  sidecars: { file: string; sha256: string; bytes: number }[];
}

/**
 * The manifest lines of a stream's files, in stream order (sha256 of every file and sidecar).
 * @param onFile called after each file with (files done, files in all).
 * @throws DataError naming a file that cannot be read; CancelledError on abort.
 */
export async function streamManifest(
  files: readonly FormatFile[],
  format: string,
  opts: { signal?: AbortSignal; onFile?: (done: number, total: number) => void } = {},
): Promise<StreamManifestLine[]> {
  const out: StreamManifestLine[] = [];
  let start = 0;
  for (const [i, f] of files.entries()) {
    const sidecars = [];
    for (const s of f.sidecars ?? []) {
      sidecars.push({
        file: path.relative(storedFolder(f), s).split(path.sep).join('/'),
        sha256: (await hashFile(s, ['sha256'], opts.signal)).sha256,
        bytes: await sizeOf(s),
      });
    }
    out.push({
      shard: f.name,
      start_token: start,
      num_tokens: f.numTokens,
      sha256: (await hashFile(f.path, ['sha256'], opts.signal)).sha256,
      bytes: await sizeOf(f.path),
      format,
      sidecars,
    });
    start += f.numTokens;
    opts.onFile?.(i + 1, files.length);
  }
  return out;
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await fs.promises.stat(file)).size;
  } catch (err) {
    throw new DataError(`${file}: cannot stat: ${(err as Error).message}`, file);
  }
}

/** One file to check: its path, its name for messages and the digests expected. */
export interface HashCheck {
  name: string;
  path: string;
  expected: FormatHash[];
  /**
   * The stream file ({@link FormatFile.name}) the check belongs to: the file itself or one of its
   * sidecars (a manifest line's `sidecars`); what a per-file status ({@link fileVerdicts}) groups by.
   */
  file?: string;
}

/** The outcome of one {@link HashCheck}. */
export interface HashCheckResult {
  name: string;
  path: string;
  /** `ok` every digest equal; `mismatch` one differs; `missing` no such file; `unreadable`; `unchecked` no algorithm {@link hashFile} computes. */
  status: 'ok' | 'mismatch' | 'missing' | 'unreadable' | 'unchecked';
  /** One sentence for anything not ok. */
  message?: string;
  /** The digests compared: algorithm, expected, actual. */
  digests: { algorithm: string; expected: string; actual?: string }[];
  /** The check's {@link HashCheck.file}. */
  file?: string;
}

/**
 * Checks each file's digests (every algorithm {@link hashFile} computes; others are reported as unchecked).
 * Never throws for a file's fault: it becomes its result.
 * @throws CancelledError on abort.
 */
export async function checkHashes(checks: readonly HashCheck[], signal?: AbortSignal): Promise<HashCheckResult[]> {
  const results: HashCheckResult[] = [];
  for (const c of checks) {
    if (signal?.aborted) throw new CancelledError();
    const usable = c.expected.filter((h) => hashSupported(h.algorithm));
    const digests: HashCheckResult['digests'] = c.expected.map((h) => ({ algorithm: h.algorithm, expected: h.hex.toLowerCase() }));
    if (!usable.length) {
      results.push({
        ...c,
        status: 'unchecked',
        message: `${c.name}: no hash this tool computes (${c.expected.map((h) => h.algorithm).join(', ') || 'none'})`,
        digests,
      });
      continue;
    }
    if (!fs.existsSync(c.path)) {
      results.push({ ...c, status: 'missing', message: `${c.name}: ${c.path} does not exist`, digests });
      continue;
    }
    let actual: Record<string, string>;
    try {
      actual = await hashFile(
        c.path,
        usable.map((h) => h.algorithm.toLowerCase()),
        signal,
      );
    } catch (err) {
      if (err instanceof CancelledError) throw err;
      results.push({ ...c, status: 'unreadable', message: (err as Error).message, digests });
      continue;
    }
    for (const d of digests) d.actual = actual[d.algorithm.toLowerCase()];
    const bad = digests.find((d) => d.actual !== undefined && d.actual !== d.expected);
    results.push({
      name: c.name,
      path: c.path,
      file: c.file,
      status: bad ? 'mismatch' : 'ok',
      message: bad ? `${c.name}: ${bad.algorithm} ${bad.actual} differs from the expected ${bad.expected}` : undefined,
      digests,
    });
  }
  return results;
}

/**
 * The checks a manifest written by `token-shards manifest` asks for: every file and sidecar it
 * lists, resolved against the folder of the stream's files by name. A list written for a whole
 * folder also checks one unit or file of it opened alone (a Megatron `.idx`): a line naming a
 * file that is in the folder but not in this stream is left out.
 * @param text the manifest's text (JSON lines). @param file its path, for messages.
 * @param files the stream's files, to resolve names to paths.
 * @throws DataError naming the manifest line that is not JSON or lacks `shard`/`sha256`, a line
 *   naming a file that is neither in the stream nor in its folder, or a stream file the manifest
 *   does not list.
 */
export function manifestChecks(text: string, file: string, files: readonly FormatFile[]): HashCheck[] {
  const byName = new Map(files.map((f) => [f.name, f]));
  const checks: HashCheck[] = [];
  const listed = new Set<string>();
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, i) => {
    if (!raw.trim()) return;
    const line = i + 1;
    const parsed = parseJson(raw);
    const v = parsed.ok ? (parsed.value as Partial<StreamManifestLine>) : undefined;
    if (!v || typeof v !== 'object' || typeof v.shard !== 'string' || typeof v.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(v.sha256)) {
      throw new DataError(
        `${file} line ${line}: expected a JSON object with "shard" and a 64-hex "sha256" (as token-shards manifest writes)`,
        file,
        line,
      );
    }
    const f = byName.get(v.shard);
    // Another file of the same folder: the list covers the folder, this stream is one unit of it.
    if (!f && files.length && !listed.has(v.shard) && isFileIn(storedFolder(files[0]), v.shard)) return;
    if (!f)
      throw new DataError(
        `${file} line ${line}: ${v.shard} is not a file of this stream (its files: ${fmt(files.length)}, first ${files[0]?.name ?? 'none'})`,
        file,
        line,
      );
    listed.add(v.shard);
    checks.push({ name: v.shard, path: f.path, expected: [{ algorithm: 'sha256', hex: v.sha256 }], file: f.name });
    for (const s of Array.isArray(v.sidecars) ? v.sidecars : []) {
      if (!s || typeof s.file !== 'string' || typeof s.sha256 !== 'string') {
        throw new DataError(`${file} line ${line}: a sidecar of ${v.shard} lacks "file" or "sha256"`, file, line);
      }
      checks.push({
        name: s.file,
        path: path.resolve(storedFolder(f), s.file),
        expected: [{ algorithm: 'sha256', hex: s.sha256 }],
        file: f.name,
      });
    }
  });
  const unlisted = files.find((f) => !listed.has(f.name));
  if (unlisted) throw new DataError(`${file}: lists no line for ${unlisted.name}; expected one line per file of the stream`, file);
  return checks;
}

/** True when `name` (a `/`-separated name relative to `dir`, without `..`) is a regular file in `dir`. */
function isFileIn(dir: string, name: string): boolean {
  if (name.split('/').includes('..') || path.isAbsolute(name)) return false;
  try {
    return fs.statSync(path.join(dir, name)).isFile();
  } catch {
    return false;
  }
}

/**
 * Names a list written by `token-shards manifest PATH > FILE` may have next to a stream's files,
 * looked for in this order: the README's `files.jsonl`, then `shard_manifest.jsonl` (the dataset
 * card's name, as the command's output is "`shard_manifest.jsonl`-style").
 */
export const STREAM_MANIFEST_NAMES = ['files.jsonl', 'shard_manifest.jsonl'] as const;

/**
 * The checks `verify` runs on the files of a format stream, in the CLI (`verify PATH [--manifest
 * FILE]`) and in VS Code (Verify Shard Hashes): against the list `manifest` when one is given
 * ({@link manifestChecks}), else against the hashes the format carries (MDS `raw_data.hashes`).
 * @returns the checks and the hash kinds they compare (algorithm names, e.g. `["sha256"]`, in the
 *   order first met); no checks when no manifest is given and the format carries no hashes.
 * @throws DataError from {@link manifestChecks} for a list that cannot be used.
 */
export function formatVerifyChecks(
  files: readonly FormatFile[],
  manifest?: { text: string; file: string },
): { checks: HashCheck[]; kinds: string[] } {
  const checks = manifest
    ? manifestChecks(manifest.text, manifest.file, files)
    : files.filter((f) => f.hashes?.length).map((f) => ({ name: f.name, path: f.path, expected: f.hashes!, file: f.name }));
  const kinds = [...new Set(checks.flatMap((c) => c.expected.map((h) => h.algorithm)))];
  return { checks, kinds };
}

/**
 * The first of {@link STREAM_MANIFEST_NAMES} that exists in the folder of a stream's first file
 * ({@link storedFolder}: a decompressed copy's compressed file's), or undefined. A `shard_manifest.jsonl` that is the dataset card's own manifest is not one: the
 * caller only asks for format streams.
 */
export async function streamManifestNextTo(files: readonly FormatFile[]): Promise<string | undefined> {
  if (!files.length) return undefined;
  const dir = storedFolder(files[0]);
  for (const name of STREAM_MANIFEST_NAMES) {
    const p = path.join(dir, name);
    try {
      if ((await fs.promises.stat(p)).isFile()) return p;
    } catch {
      // absent: try the next name
    }
  }
  return undefined;
}

/** The verify verdict of one stream file from the checks of it and its sidecars ({@link fileVerdicts}). */
export interface FileVerdict {
  /** Position of the file in the stream (index into the files given). */
  index: number;
  /**
   * `ok` every check ok; else the worst: `mismatch` (a digest differs), `unreadable`, `missing`,
   * `no-hash` (only digests this tool does not compute) — the statuses of the dataset card's shards
   * (`ShardStatus`), so the manifest table shows both alike.
   */
  status: 'ok' | 'mismatch' | 'unreadable' | 'missing' | 'no-hash';
  /** One sentence: what matched, or each check that is not ok. */
  detail: string;
  /** The results grouped here, in check order. */
  results: HashCheckResult[];
}

/** Worst first: which status a file gets when its checks disagree. */
const VERDICT_ORDER: readonly FileVerdict['status'][] = ['mismatch', 'unreadable', 'missing', 'no-hash', 'ok'];

/**
 * Groups check results by the stream file they belong to ({@link HashCheck.file}, else the file
 * whose path or sidecar the result's path is) into one verdict per file that was checked, in
 * stream order. Results belonging to no file of `files` are left out.
 */
export function fileVerdicts(files: readonly FormatFile[], results: readonly HashCheckResult[]): FileVerdict[] {
  const byName = new Map(files.map((f, i) => [f.name, i]));
  const byPath = new Map<string, number>();
  files.forEach((f, i) => {
    byPath.set(path.resolve(f.path), i);
    for (const s of f.sidecars ?? []) if (!byPath.has(path.resolve(s))) byPath.set(path.resolve(s), i);
  });
  const groups = new Map<number, HashCheckResult[]>();
  for (const r of results) {
    const i = r.file !== undefined ? byName.get(r.file) : byPath.get(path.resolve(r.path));
    if (i === undefined) continue;
    const g = groups.get(i) ?? [];
    g.push(r);
    groups.set(i, g);
  }
  return [...groups.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, rs]) => {
      const st = (r: HashCheckResult): FileVerdict['status'] => (r.status === 'unchecked' ? 'no-hash' : r.status);
      const status = VERDICT_ORDER.find((v) => rs.some((r) => st(r) === v))!;
      const kinds = [...new Set(rs.flatMap((r) => r.digests.map((d) => d.algorithm)))].join(', ');
      const detail =
        status === 'ok'
          ? `${files[index].name}: ${kinds} matched${rs.length > 1 ? ` (the file and ${rs.length - 1 === 1 ? 'its sidecar' : `its ${rs.length - 1} sidecars`})` : ''}.`
          : rs
              .filter((r) => r.status !== 'ok')
              .map((r) => r.message ?? `${r.name}: ${r.status}`)
              .join(' ');
      return { index, status, detail, results: rs };
    });
}
