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
 * Writes are atomic (temporary file in the same folder, fsync, rename) and merge with what is on
 * disk, so the CLI and the extension can share one file: entries this process recorded win,
 * everything else on disk is kept. A missing file is an empty cache; an unreadable or corrupt
 * one is an empty cache with {@link VerifyCache.warning} set (it is rewritten on the next save).
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { FileIdentity, isFileIdentity, sameIdentity, statIdentity } from './fileIdentity';

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
 * Reads a cache file. Never throws: missing → empty, corrupt → empty plus a warning sentence.
 */
async function readCacheFile(file: string): Promise<{ entries: Map<string, VerifyCacheEntry>; warning?: string }> {
  let text: string;
  try {
    text = await fs.promises.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { entries: new Map() };
    return { entries: new Map(), warning: `${file}: cannot read the verification cache (${(err as Error).message}); starting empty.` };
  }
  try {
    const data = JSON.parse(text) as CacheFileShape;
    if (typeof data !== 'object' || data === null || typeof data.entries !== 'object' || data.entries === null) {
      throw new Error(`expected {"version": ${VERIFY_CACHE_VERSION}, "entries": {...}}`);
    }
    // An older format (version 1: path, size and mtime only) is not trustworthy: start empty, quietly.
    if (typeof data.version === 'number' && data.version < VERIFY_CACHE_VERSION) return { entries: new Map() };
    if (data.version !== VERIFY_CACHE_VERSION) {
      return {
        entries: new Map(),
        warning: `${file}: verification cache version ${data.version} is not ${VERIFY_CACHE_VERSION}; starting empty.`,
      };
    }
    const entries = new Map<string, VerifyCacheEntry>();
    for (const [p, e] of Object.entries(data.entries)) if (isEntry(e)) entries.set(p, e);
    return { entries };
  } catch (err) {
    return {
      entries: new Map(),
      warning: `${file}: the verification cache is not valid JSON (${(err as Error).message}); starting empty.`,
    };
  }
}

/** Per-shard digests stored by absolute path, valid for one file identity; see the file header. */
export class VerifyCache {
  private readonly entries: Map<string, VerifyCacheEntry>;
  /** Paths recorded or deleted by this process since the last save (they win over the disk on merge). */
  private readonly dirty = new Set<string>();
  private saving: Promise<void> = Promise.resolve();
  /** Identity of the cache file as last read or written by this process (undefined: merge on the next save). */
  private fileIdentity?: FileIdentity;

  private constructor(
    /** Absolute path of the JSON file. */
    readonly file: string,
    entries: Map<string, VerifyCacheEntry>,
    /** Set when the file existed but could not be used (one sentence naming the file). */
    readonly warning?: string,
  ) {
    this.entries = entries;
  }

  /**
   * Loads the cache stored in `file` (which need not exist yet; its folder is created on save).
   * Never throws.
   */
  static async load(file: string): Promise<VerifyCache> {
    const abs = path.resolve(file);
    const before = await statIdentity(abs).catch(() => undefined);
    const { entries, warning } = await readCacheFile(abs);
    const cache = new VerifyCache(abs, entries, warning);
    // What was read: the file as stat'ed before reading (a writer in between changes it, so the next save merges).
    cache.fileIdentity = warning ? undefined : before;
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
    return e && sameIdentity(e.identity, identity) ? e : undefined;
  }

  /** The entry for `file` whatever its validity (for display: "last checked"). */
  get(file: string): VerifyCacheEntry | undefined {
    return this.entries.get(file);
  }

  /** Records the digest of a file read to the end (in memory; {@link save} writes it). */
  record(file: string, entry: VerifyCacheEntry): void {
    this.entries.set(file, { ...entry, identity: { ...entry.identity } });
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
    if (!now || !sameIdentity(now, this.fileIdentity)) {
      const onDisk = await readCacheFile(this.file);
      for (const [p, e] of onDisk.entries) if (!this.dirty.has(p)) this.entries.set(p, e);
    }
    // One entry at a time into the text (no intermediate object of every entry).
    const parts: string[] = [];
    for (const [p, e] of this.entries) parts.push(`${JSON.stringify(p)}:${JSON.stringify(e)}`);
    await writeFileAtomic(this.file, `{"version":${VERIFY_CACHE_VERSION},"entries":{${parts.join(',')}}}`);
    this.fileIdentity = await statIdentity(this.file).catch(() => undefined);
    this.dirty.clear();
  }
}

/**
 * Writes `text` to `file` atomically: a temporary file in the same folder (created if needed),
 * fsync'ed (unless `durable` is false), then renamed over `file`. Readers see the old or the new
 * content, never a mix. Without the fsync a crash may leave an empty or short file behind the
 * new name: fine for entries that are checked on load and rebuilt (the stream index), and it
 * saves a disk flush per write (measured 10–250 ms each while shards stream from the same disk).
 * @throws the file-system error (the temporary file is removed).
 */
export async function writeFileAtomic(file: string, text: string, durable = true): Promise<void> {
  const dir = path.dirname(file);
  await fs.promises.mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  const fh = await fs.promises.open(tmp, 'w');
  try {
    await fh.writeFile(text, 'utf8');
    if (durable) await fh.sync();
  } finally {
    await fh.close();
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
