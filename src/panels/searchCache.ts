/**
 * The search result cache: finished {@link CountResult}s kept as JSON files in the extension's
 * global storage (never in the dataset folder), keyed by (terms, options, bucket size, dataset
 * fingerprint). A result is reused only while every shard (and the tokenizer, whose byte table
 * decides what matches) keeps its file identity — (device, inode, size, mtime, ctime) from
 * `src/core/fileIdentity.ts` — so a changed or replaced shard invalidates it. Only finished
 * scans are stored: a cancelled or failed scan caches nothing.
 *
 * No `vscode` import (unit-tested in plain Node). At most {@link MAX_CACHE_ENTRIES} files are
 * kept; the least recently used go first.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { Dataset } from '../core/dataset';
import type { CountResult, SearchOptions } from '../core/search';
import { identityKey, statIdentity } from '../core/fileIdentity';

/** Files kept in the cache folder before the least recently used are removed. */
export const MAX_CACHE_ENTRIES = 200;
/** Format version of the cache files (a different version is a miss). */
const CACHE_VERSION = 1;

/** What identifies a search (the key is a sha256 over this and the dataset fingerprint). */
export interface SearchQuery {
  /** Parsed terms (`parseTerms`), in order. */
  terms: string[];
  options: SearchOptions;
  /** Updates per bucket. */
  per: number;
}

/** One cache file. */
interface CacheFile {
  version: number;
  key: string;
  /** Dataset root (for humans reading the folder; the key decides). */
  root: string;
  savedAt: number;
  /** Milliseconds the scan took. */
  scanMs: number;
  result: CountResult;
}

/** A cache hit. */
export interface CachedSearch {
  result: CountResult;
  /** When it was stored (ms since the epoch). */
  savedAt: number;
  /** How long the original scan took (ms). */
  scanMs: number;
}

/**
 * The dataset's fingerprint: sha256 over the root, the schedule settings (G, L, EOS), every
 * shard's manifest path, start, length and file identity, and the tokenizer's file identity.
 * Stats every shard (2,098 stats take a few ms).
 * @throws the file-system error when a shard cannot be stat'ed (nothing to cache then).
 */
export async function datasetFingerprint(ds: Dataset, tokenizerFile: string | undefined): Promise<string> {
  const h = crypto.createHash('sha256');
  h.update(JSON.stringify({ root: ds.root, settings: ds.settings }));
  const ids = await Promise.all(ds.shards.map((s) => statIdentity(s.path)));
  ds.shards.forEach((s, i) => h.update(`\n${s.shard}\t${s.startToken}\t${s.numTokens}\t${identityKey(ids[i])}`));
  h.update(`\ntokenizer\t${tokenizerFile ?? ''}\t${tokenizerFile ? identityKey(await statIdentity(tokenizerFile)) : ''}`);
  return h.digest('hex');
}

/** The cache key (64 hex digits) of a search on a dataset with fingerprint `fingerprint`. */
export function searchKey(query: SearchQuery, fingerprint: string): string {
  return crypto
    .createHash('sha256')
    .update(
      JSON.stringify({
        v: CACHE_VERSION,
        terms: query.terms,
        word: !!query.options.word,
        ignoreCase: !!query.options.ignoreCase,
        ids: !!query.options.ids,
        per: query.per,
        fingerprint,
      }),
    )
    .digest('hex');
}

/** Search results on disk under one folder (see the file comment). */
export class SearchCache {
  /** @param dir folder for the cache files (created on first write), e.g. `<globalStorage>/search-cache`. */
  constructor(
    readonly dir: string,
    private readonly maxEntries = MAX_CACHE_ENTRIES,
  ) {}

  private file(key: string): string {
    if (!/^[0-9a-f]{64}$/.test(key)) throw new Error(`not a search cache key: ${key}`);
    return path.join(this.dir, `${key}.json`);
  }

  /** The stored result for `key`, or undefined (missing, unreadable, another version). Touches the file (LRU). */
  async get(key: string): Promise<CachedSearch | undefined> {
    let text: string;
    try {
      text = await fs.promises.readFile(this.file(key), 'utf8');
    } catch {
      return undefined;
    }
    try {
      const f = JSON.parse(text) as CacheFile;
      if (f.version !== CACHE_VERSION || f.key !== key || !f.result || !Array.isArray(f.result.buckets) || !Array.isArray(f.result.terms))
        return undefined;
      const now = new Date();
      await fs.promises.utimes(this.file(key), now, now).catch(() => undefined);
      return { result: f.result, savedAt: f.savedAt, scanMs: f.scanMs };
    } catch {
      return undefined;
    }
  }

  /** Stores a finished result (atomically: a temporary file renamed into place), then prunes. */
  async put(key: string, root: string, result: CountResult, scanMs: number): Promise<void> {
    await fs.promises.mkdir(this.dir, { recursive: true });
    const body: CacheFile = { version: CACHE_VERSION, key, root, savedAt: Date.now(), scanMs, result };
    const target = this.file(key);
    const tmp = `${target}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    await fs.promises.writeFile(tmp, JSON.stringify(body));
    await fs.promises.rename(tmp, target);
    await this.prune();
  }

  /** Removes the least recently used files beyond the limit. */
  async prune(): Promise<void> {
    let names: string[];
    try {
      names = (await fs.promises.readdir(this.dir)).filter((n) => /^[0-9a-f]{64}\.json$/.test(n));
    } catch {
      return;
    }
    if (names.length <= this.maxEntries) return;
    const stats = await Promise.all(
      names.map(async (n) => ({ n, t: (await fs.promises.stat(path.join(this.dir, n)).catch(() => undefined))?.mtimeMs ?? 0 })),
    );
    stats.sort((a, b) => a.t - b.t);
    for (const { n } of stats.slice(0, stats.length - this.maxEntries)) await fs.promises.rm(path.join(this.dir, n), { force: true });
  }

  /** Removes every cached result. */
  async clear(): Promise<void> {
    await fs.promises.rm(this.dir, { recursive: true, force: true });
  }
}
