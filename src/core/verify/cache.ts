/**
 * The verification cache: the sha256 of each shard file that was read to the end, stored under the
 * file's absolute path and valid only while the file's identity (device, inode, size, mtime, ctime;
 * `fileIdentity.ts`) is unchanged. A second "Verify Shard Hashes" skips shards whose cached digest
 * still equals the manifest's, and says so ("not re-read (cached)"). Any write, `touch`, a restored
 * mtime (`touch -d`, `os.utime`: the kernel still moves ctime), a replacement by `mv` (new inode)
 * invalidates the entry.
 *
 * One JSON file for every dataset, at a location the caller chooses:
 * - the extension: `<context.globalStorageUri>/verify-cache.json`;
 * - the CLI: {@link defaultCliCacheFile} (`$XDG_CACHE_HOME/token-shard-inspector/verify-cache.json`,
 *   else `~/.cache/token-shard-inspector/verify-cache.json`).
 *
 * Format (version 2; version-1 files, keyed on path, size and mtime only, are ignored):
 * ```json
 * { "version": 2, "entries": { "/abs/shards/tokens_000000.u32":
 *     { "identity": { "dev": "2049", "ino": "1234", "size": 100000000, "mtimeNs": "1722300000123456789",
 *       "ctimeNs": "1722300000123456789" }, "sha256": "<64 hex>", "checkedAt": 1722400000000 } } }
 * ```
 * This version writes the header on the first line, one entry per line and `}}` on the last, and
 * reads such a file as a stream, line by line (100,000 entries never exist as one string); a file
 * laid out otherwise (still the same JSON) is parsed whole.
 * Writes are atomic (temporary file in the same folder, fsync, rename) and merge with what is on
 * disk, so the CLI and the extension can share one file: entries this process recorded win,
 * everything else on disk is kept. A missing file is an empty cache; an unreadable or corrupt
 * one is an empty cache with {@link VerifyCache.warning} set (it is rewritten on the next save).
 *
 * A documented limit: the cache guards against changes to the shards, not against whoever can
 * write the cache file. An entry forged with the digest the manifest expects and the identity the
 * shard has (a ctime can be forged too: set the clock, then write) makes "Verify Shard Hashes"
 * skip a shard whose bytes do not match; `verify --no-cache` (CLI) and the "ignoring the cache"
 * command re-read everything. The stream index's entries carry a checksum of their content
 * (`streamIndex/entryStore.ts`) against damage, with the same limit against forgery.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { FileIdentity, identityKey, identityOfKey, isFileIdentity, sameIdentity, statIdentity } from '../fileIdentity';
import { flatString } from '../flatString';

/** Cache format version; files with another version are ignored (treated as empty). */
export const VERIFY_CACHE_VERSION = 2;
/** File name of the cache inside the folder the caller chooses. */
export const VERIFY_CACHE_FILE = 'verify-cache.json';

/** What is known about one shard file. */
export interface VerifyCacheEntry {
  /** The file's identity when it was opened for hashing (size in bytes, times in ns). */
  identity: FileIdentity;
  /** Lower-case hex sha256 of the whole file (what the file hashed to, not what the manifest says). */
  sha256: string;
  /** When the hash was computed (ms since the epoch). */
  checkedAt: number;
}

interface CacheFileShape {
  version: number;
  entries: Record<string, VerifyCacheEntry>;
}

function isEntry(v: unknown): v is VerifyCacheEntry {
  const e = v as VerifyCacheEntry;
  return (
    typeof e === 'object' &&
    e !== null &&
    isFileIdentity(e.identity) &&
    typeof e.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(e.sha256) &&
    typeof e.checkedAt === 'number'
  );
}

/**
 * An entry as kept in memory: the identity as its one-string key (`identityKey`), so 100,000
 * entries are three fields each instead of two objects and six strings.
 */
interface CompactEntry {
  key: string;
  sha256: string;
  checkedAt: number;
}

function compact(e: VerifyCacheEntry): CompactEntry {
  return { key: flatString(identityKey(e.identity)), sha256: e.sha256, checkedAt: e.checkedAt };
}

function expand(c: CompactEntry): VerifyCacheEntry {
  return { identity: identityOfKey(c.key), sha256: c.sha256, checkedAt: c.checkedAt };
}

/** One entry as the text of the file (what `JSON.stringify(path)` + `:` + `JSON.stringify(entry)` gives). */
function entryText(file: string, c: CompactEntry): string {
  const [dev, ino, size, mtimeNs, ctimeNs] = c.key.split(':');
  return `${JSON.stringify(file)}:{"identity":{"dev":"${dev}","ino":"${ino}","size":${size},"mtimeNs":"${mtimeNs}","ctimeNs":"${ctimeNs}"},"sha256":"${c.sha256}","checkedAt":${JSON.stringify(c.checkedAt)}}`;
}

/** First line of the file as this version writes it: the entries follow one per line, then `}}`. */
const HEADER = `{"version":${VERIFY_CACHE_VERSION},"entries":{`;
/** Bytes of text gathered before each write of a save. */
const WRITE_CHUNK_CHARS = 1 << 20;

/** Longest line accepted in a cache file (characters): one entry is a path (≤ 4,096 bytes) and a few numbers. */
const MAX_CACHE_LINE_CHARS = 1 << 16;
/** Largest cache file parsed whole (bytes; the older single-JSON layout): 100,000 entries take ~25 MB. */
const MAX_WHOLE_CACHE_BYTES = 256 << 20;

/** A line of a cache file longer than {@link MAX_CACHE_LINE_CHARS}. */
class LongLineError extends Error {}

/**
 * The lines of a UTF-8 text stream (without their `\n`; a `\r` before it is dropped), refusing
 * lines longer than `maxChars` with a {@link LongLineError} (readline would buffer a line of any
 * length and fail inside its own event handler, out of reach of the caller).
 */
async function* boundedLines(stream: AsyncIterable<string>, maxChars: number): AsyncGenerator<string> {
  let pending = '';
  for await (const chunk of stream) {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      const line = pending + chunk.slice(start, nl);
      pending = '';
      if (line.length > maxChars) throw new LongLineError();
      yield line.endsWith('\r') ? line.slice(0, -1) : line;
      start = nl + 1;
    }
    pending += chunk.slice(start);
    if (pending.length > maxChars) throw new LongLineError();
  }
  if (pending !== '') yield pending.endsWith('\r') ? pending.slice(0, -1) : pending;
}

/**
 * Reads a cache file, handing each valid entry to `onEntry`. Never throws: missing → nothing,
 * corrupt → a warning sentence (entries already handed over are then to be dropped by the caller).
 * A file in this version's layout (a header line, one entry per line, `}}`) is read line by line
 * from a stream; any other layout (valid JSON written otherwise) is parsed whole.
 */
async function readCacheFile(
  file: string,
  onEntry: (path: string, e: CompactEntry) => void,
): Promise<{ warning?: string; exact?: boolean }> {
  const invalid = (why: string) => ({ warning: `${file}: the verification cache is not valid JSON (${why}); starting empty.` });
  const stream = fs.createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 16 });
  const lines = boundedLines(stream, MAX_CACHE_LINE_CHARS);
  let n = 0;
  try {
    let ended = false;
    let prev: string | undefined; // the previous entry line (its comma is checked once the next line is seen)
    let exact = true; // every entry valid, so that rewriting the file would give it back
    for await (const raw of lines) {
      n++;
      if (n === 1) {
        if (raw !== HEADER) {
          stream.destroy();
          return readWholeCacheFile(file, onEntry);
        }
        continue;
      }
      if (ended) {
        if (raw.trim() === '') continue;
        return invalid(`unexpected text after the end, line ${n}`);
      }
      if (raw === '}}') {
        if (prev !== undefined && prev.endsWith(',')) return invalid(`a comma before the end, line ${n - 1}`);
        ended = true;
        continue;
      }
      if (prev !== undefined && !prev.endsWith(',')) return invalid(`no comma after line ${n - 1}`);
      prev = raw;
      let one: Record<string, unknown>;
      try {
        one = JSON.parse(`{${raw.endsWith(',') ? raw.slice(0, -1) : raw}}`) as Record<string, unknown>;
      } catch (err) {
        return invalid(`line ${n}: ${(err as Error).message}`);
      }
      for (const p in one) {
        if (isEntry(one[p])) onEntry(flatString(p), compact(one[p]));
        else exact = false;
      }
    }
    if (n === 0) return invalid('Unexpected end of JSON input');
    if (!ended) return invalid(`Unexpected end of JSON input after line ${n}`);
    return { exact };
  } catch (err) {
    if (err instanceof LongLineError)
      return invalid(`line ${n + 1} is longer than ${MAX_CACHE_LINE_CHARS.toLocaleString('en-US')} characters`);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    return { warning: `${file}: cannot read the verification cache (${(err as Error).message}); starting empty.` };
  } finally {
    void lines.return(undefined);
    stream.destroy();
  }
}

/** {@link readCacheFile} for a file in another layout: the whole text through `JSON.parse`. */
async function readWholeCacheFile(file: string, onEntry: (path: string, e: CompactEntry) => void): Promise<{ warning?: string }> {
  let text: string;
  try {
    const size = (await fs.promises.stat(file)).size;
    if (size > MAX_WHOLE_CACHE_BYTES)
      return {
        warning: `${file}: the verification cache is ${size.toLocaleString('en-US')} bytes, more than any cache this tool writes; starting empty.`,
      };
    text = await fs.promises.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    return { warning: `${file}: cannot read the verification cache (${(err as Error).message}); starting empty.` };
  }
  try {
    const data = JSON.parse(text) as CacheFileShape;
    if (typeof data !== 'object' || data === null || typeof data.entries !== 'object' || data.entries === null) {
      throw new Error(`expected {"version": ${VERIFY_CACHE_VERSION}, "entries": {...}}`);
    }
    // An older format (version 1: path, size and mtime only) is not trustworthy: start empty, quietly.
    if (typeof data.version === 'number' && data.version < VERIFY_CACHE_VERSION) return {};
    if (data.version !== VERIFY_CACHE_VERSION) {
      return { warning: `${file}: verification cache version ${data.version} is not ${VERIFY_CACHE_VERSION}; starting empty.` };
    }
    for (const [p, e] of Object.entries(data.entries)) if (isEntry(e)) onEntry(p, compact(e));
    return {};
  } catch (err) {
    return { warning: `${file}: the verification cache is not valid JSON (${(err as Error).message}); starting empty.` };
  }
}

/** Per-shard digests stored by absolute path, valid for one file identity; see the file header. */
export class VerifyCache {
  private readonly entries: Map<string, CompactEntry>;
  /** Paths recorded or deleted by this process since the last save (they win over the disk on merge). */
  private dirty = new Set<string>();
  private saving: Promise<void> = Promise.resolve();
  /** Identity of the cache file as last read or written by this process (undefined: merge on the next save). */
  private fileIdentity?: FileIdentity;
  /** The file (of {@link fileIdentity}) holds exactly these entries: a save with nothing dirty has nothing to write. */
  private inSync = false;

  private constructor(
    /** Absolute path of the JSON file. */
    readonly file: string,
    entries: Map<string, CompactEntry>,
    /** Set when the file existed but could not be used (one sentence naming the file). */
    readonly warning?: string,
  ) {
    this.entries = entries;
  }

  /**
   * Loads the cache stored in `file` (which need not exist yet; its folder is created on save),
   * reading it as a stream (no copy of the whole text in memory). Never throws.
   */
  static async load(file: string): Promise<VerifyCache> {
    const abs = path.resolve(file);
    const before = await statIdentity(abs).catch(() => undefined);
    const entries = new Map<string, CompactEntry>();
    const { warning, exact } = await readCacheFile(abs, (p, e) => entries.set(p, e));
    if (warning) entries.clear();
    const cache = new VerifyCache(abs, entries, warning);
    // What was read: the file as stat'ed before reading (a writer in between changes it, so the next save merges).
    cache.fileIdentity = warning ? undefined : before;
    cache.inSync = !!exact && !!before;
    return cache;
  }

  /** An empty cache that is never written (for `--no-cache`-like callers that still want the API). */
  static inMemory(): VerifyCache {
    return new VerifyCache('', new Map());
  }

  /** Number of entries. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The entry for `file` if it was recorded for a file of exactly this identity, else undefined.
   * @param file absolute path (as in `ShardEntry.path`).
   * @param identity the file's identity now (`statIdentity`).
   */
  lookup(file: string, identity: FileIdentity | undefined): VerifyCacheEntry | undefined {
    const e = this.entries.get(file);
    return e && identity && e.key === identityKey(identity) ? expand(e) : undefined;
  }

  /**
   * {@link lookup} by identity key (`identityKey`, `identityKeyOfStats`): the digest and when it
   * was computed, without building an entry (verification asks this for every shard).
   */
  lookupKey(file: string, key: string): { readonly sha256: string; readonly checkedAt: number } | undefined {
    const e = this.entries.get(file);
    return e && e.key === key ? e : undefined;
  }

  /** The entry for `file` whatever its validity (for display: "last checked"). */
  get(file: string): VerifyCacheEntry | undefined {
    const e = this.entries.get(file);
    return e ? expand(e) : undefined;
  }

  /** Records the digest of a file read to the end (in memory; {@link save} writes it). */
  record(file: string, entry: VerifyCacheEntry): void {
    this.entries.set(file, compact(entry));
    this.dirty.add(file);
  }

  /** Forgets a file (e.g. it is missing now). */
  delete(file: string): void {
    if (this.entries.delete(file)) this.dirty.add(file);
  }

  /**
   * Writes the cache atomically, merged with the file's current contents (see the file header).
   * Saves are serialised; concurrent calls each wait for the previous one.
   * @throws the file-system error when the folder cannot be created or the file written.
   */
  save(): Promise<void> {
    const run = this.saving.then(() => this.saveNow());
    this.saving = run.catch(() => undefined);
    return run;
  }

  private async saveNow(): Promise<void> {
    if (!this.file) return;
    // Merge with the file only when someone else wrote it since we last read or wrote it (its
    // identity changed): a long run saving every 30 s does not re-parse its own 100,000 entries.
    const now = await statIdentity(this.file).catch(() => undefined);
    // Nothing recorded or forgotten since the file was read or written, and nobody else wrote it:
    // it already says all this cache knows (a run answered wholly from the cache writes nothing).
    if (this.inSync && this.dirty.size === 0 && now && sameIdentity(now, this.fileIdentity)) return;
    if (!now || !sameIdentity(now, this.fileIdentity)) {
      const onDisk = new Map<string, CompactEntry>();
      const { warning } = await readCacheFile(this.file, (p, e) => {
        if (!this.dirty.has(p)) onDisk.set(p, e);
      });
      if (!warning) for (const [p, e] of onDisk) if (!this.dirty.has(p)) this.entries.set(p, e);
    }
    // Paths recorded from here on stay dirty for the next save (they may or may not make this one).
    const dirty = this.dirty;
    this.dirty = new Set();
    try {
      await writeFileAtomic(this.file, this.lines());
    } catch (err) {
      for (const p of dirty) this.dirty.add(p);
      throw err;
    }
    this.fileIdentity = await statIdentity(this.file).catch(() => undefined);
    this.inSync = this.dirty.size === 0 && !!this.fileIdentity;
  }

  /** The file's text in pieces of about {@link WRITE_CHUNK_CHARS}: a header line, one entry per line, `}}`. */
  private *lines(): Generator<string> {
    let buf = HEADER;
    let first = true;
    for (const [p, e] of this.entries) {
      buf += `${first ? '' : ','}\n${entryText(p, e)}`;
      first = false;
      if (buf.length >= WRITE_CHUNK_CHARS) {
        yield buf;
        buf = '';
      }
    }
    yield `${buf}\n}}\n`;
  }
}

/**
 * Writes `text` (one string, or pieces written one after the other) to `file` atomically: a
 * temporary file in the same folder (created if needed), fsync'ed (unless `durable` is false),
 * then renamed over `file`. Readers see the old or the new content, never a mix. Without the
 * fsync a crash may leave an empty or short file behind the new name: fine for entries that are
 * checked on load and rebuilt (the stream index), and it saves a disk flush per write (measured
 * 10–250 ms each while shards stream from the same disk).
 * @throws the file-system error (the temporary file is removed).
 */
export async function writeFileAtomic(file: string, text: string | Iterable<string>, durable = true): Promise<void> {
  const dir = path.dirname(file);
  await fs.promises.mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  // O_EXCL: the name is unique, and a file that is somehow there already is never opened.
  const fh = await fs.promises.open(tmp, 'wx');
  let written = false;
  try {
    if (typeof text === 'string') await fh.writeFile(text, 'utf8');
    else for (const piece of text) await fh.write(piece, null, 'utf8');
    if (durable) await fh.sync();
    written = true;
  } finally {
    await fh.close();
    if (!written) await fs.promises.rm(tmp, { force: true });
  }
  try {
    await fs.promises.rename(tmp, file);
  } catch (err) {
    await fs.promises.rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Where the CLI keeps its cache: `$XDG_CACHE_HOME/token-shard-inspector/verify-cache.json` when
 * `XDG_CACHE_HOME` is set to an absolute path (per the XDG Base Directory spec), else
 * `~/.cache/token-shard-inspector/verify-cache.json`.
 */
export function defaultCliCacheFile(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'token-shard-inspector', VERIFY_CACHE_FILE);
}

/**
 * Whether the CLI can keep files in `dir` (its cache folders: the verify cache's, the stream
 * index's): the folder is made when missing, then checked for writing. A command checks once,
 * before it starts, so an unusable folder is one sentence instead of a warning from every part
 * that would have written there.
 * @returns undefined when usable, else the reason ("ENOTDIR: not a directory, mkdir '…'").
 */
export function folderUnwritable(dir: string): string | undefined {
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
    return undefined;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const message = String(e.message ?? err);
    return e.code && !message.startsWith(e.code) ? `${e.code}: ${message}` : message;
  }
}
