/**
 * Verdicts of format-stream file checks (Verify Shard Hashes on a stream of any format but the
 * dataset card's: each token file with its sidecars against a `token-shards manifest` list or the
 * hashes the format carries), kept across sessions like the card's verify cache (`cache.ts`), in
 * one JSON file of the caller's choosing (the extension: `<globalStorage>/format-verify-cache.json`,
 * never in the dataset):
 *
 *     { "version": 1, "entries": { "<absolute token file path>": {
 *         "status": "ok", "detail": "…", "checkedAt": 1764633600000, "against": "/data/files.jsonl",
 *         "files": [ { "path": "/data/p.bin", "size": 202988, "mtimeMs": 1764633600123.4 }, … ] } } }
 *
 * An entry is trusted only while every file it was computed from (the token file, its sidecars,
 * the list checked against) has the size and mtime it had then. A cache file that cannot be read,
 * or an entry that does not have this shape, is ignored (the rows show "not checked").
 */
import * as fs from 'fs';
import { parseJson } from '../safeJson';
import { writeFileAtomic } from './cache';

/** Version of the file's layout; entries of another version are ignored. */
export const FORMAT_VERDICTS_VERSION = 1;

/** Name of the file in the extension's global storage. */
export const FORMAT_VERDICTS_FILE = 'format-verify-cache.json';

/** Largest file read, in bytes (a bigger one is ignored: it was not written by this module). */
const MAX_FILE_BYTES = 64 << 20;

/** One file a verdict was computed from, as it was then. */
export interface VerdictInput {
  path: string;
  /** Size in bytes. */
  size: number;
  /** Modification time in milliseconds (`fs.Stats.mtimeMs`). */
  mtimeMs: number;
}

/** The verdict of one stream file. */
export interface FormatVerdict {
  /** The row status (`FileVerdict.status`). */
  status: 'ok' | 'mismatch' | 'unreadable' | 'missing' | 'no-hash';
  /** One sentence: what matched, or each check that is not ok. */
  detail: string;
  /** When it was checked (ms since the epoch). */
  checkedAt: number;
  /** The list checked against (absolute path), or null: the hashes the format carries. */
  against: string | null;
  /** The token file, its sidecars and the list, as they were when checked. */
  files: VerdictInput[];
}

function isVerdict(v: unknown): v is FormatVerdict {
  const e = v as FormatVerdict;
  return (
    !!e &&
    typeof e === 'object' &&
    ['ok', 'mismatch', 'unreadable', 'missing', 'no-hash'].includes(e.status) &&
    typeof e.detail === 'string' &&
    typeof e.checkedAt === 'number' &&
    (e.against === null || typeof e.against === 'string') &&
    Array.isArray(e.files) &&
    e.files.every((f) => !!f && typeof f.path === 'string' && typeof f.size === 'number' && typeof f.mtimeMs === 'number')
  );
}

/**
 * The size and mtime of each of `paths` now (missing files are left out, so a verdict computed
 * from them is never trusted once they exist, and one recorded for a missing file stays untrusted).
 */
export async function verdictInputs(paths: readonly string[]): Promise<VerdictInput[]> {
  const out: VerdictInput[] = [];
  for (const p of paths) {
    try {
      const st = await fs.promises.stat(p);
      if (st.isFile()) out.push({ path: p, size: st.size, mtimeMs: st.mtimeMs });
    } catch {
      /* missing: left out */
    }
  }
  return out;
}

/** Format verdicts by token file path, loaded from and saved to one JSON file (see the file header). */
export class FormatVerdictCache {
  private constructor(
    readonly file: string,
    private readonly entries: Map<string, FormatVerdict>,
  ) {}

  /** Loads `file` (absolute); a missing, unreadable or foreign file gives an empty cache. */
  static async load(file: string): Promise<FormatVerdictCache> {
    const entries = new Map<string, FormatVerdict>();
    try {
      const st = await fs.promises.stat(file);
      if (st.isFile() && st.size <= MAX_FILE_BYTES) {
        const parsed = parseJson(await fs.promises.readFile(file, 'utf8'));
        const o = parsed.ok ? (parsed.value as { version?: unknown; entries?: Record<string, unknown> }) : undefined;
        if (o && o.version === FORMAT_VERDICTS_VERSION && o.entries && typeof o.entries === 'object') {
          for (const [p, e] of Object.entries(o.entries)) if (isVerdict(e)) entries.set(p, e);
        }
      }
    } catch {
      /* no cache yet */
    }
    return new FormatVerdictCache(file, entries);
  }

  /** Records the verdict of token file `tokenFile` (absolute path); {@link save} writes it. */
  set(tokenFile: string, verdict: FormatVerdict): void {
    this.entries.set(tokenFile, verdict);
  }

  /**
   * The last verdict of `tokenFile`, when every file it was computed from (the list checked
   * against among them) still has its size and mtime; else undefined.
   */
  async lookup(tokenFile: string): Promise<FormatVerdict | undefined> {
    const e = this.entries.get(tokenFile);
    if (!e || !e.files.some((f) => f.path === tokenFile)) return undefined;
    const now = await verdictInputs(e.files.map((f) => f.path));
    if (now.length !== e.files.length) return undefined;
    return now.every((f, i) => f.size === e.files[i].size && f.mtimeMs === e.files[i].mtimeMs) ? e : undefined;
  }

  /**
   * Writes the cache to its file (atomically; the folder is made when missing), merged with
   * entries another window saved since this one was loaded (this one's win for the same file).
   * @throws the file-system error.
   */
  async save(): Promise<void> {
    const onDisk = await FormatVerdictCache.load(this.file);
    const merged = new Map(onDisk.entries);
    for (const [p, e] of this.entries) merged.set(p, e);
    await writeFileAtomic(this.file, JSON.stringify({ version: FORMAT_VERDICTS_VERSION, entries: Object.fromEntries(merged) }));
  }
}
