/**
 * The verification results of this session per dataset root, the shards being hashed right now,
 * and the cache of past runs: what the manifest table and the Problems diagnostics show. Written
 * by verification runs (`src/commands/verifyShards.ts`); built once by the composition root.
 */
import * as vscode from 'vscode';
import type { Dataset } from './core/dataset';
import type { ShardEntry } from './core/manifest';
import type { ShardStatus, ShardVerifyResult } from './core/verify/verify';
import { VerifyCache, VerifyCacheEntry } from './core/verify/cache';
import type { FileIdentity } from './core/fileIdentity';
import { FormatVerdictCache } from './core/verify/formatVerdicts';

/**
 * The key a dataset's verification state is kept under: its root for the dataset card's layout
 * (what Problems and the update view look up); for a stream of another format, its root plus its
 * files, since one folder holds several streams (a Megatron folder: each `PREFIX.idx` opened alone,
 * and the folder as a whole) whose row indices differ.
 */
export function verificationKey(ds: Pick<Dataset, 'root' | 'format' | 'shards'>): string {
  if (!ds.format) return ds.root;
  const n = ds.shards.length;
  return [ds.root, n, ds.shards[0]?.path ?? '', ds.shards[n - 1]?.path ?? ''].join('\0');
}

/** Per-root verification state shown by the table and Problems. */
interface RootState {
  results: Map<number, ShardVerifyResult>;
  /** Shards of the run in progress that have not finished (queued or being hashed). */
  pending: Set<number>;
  /** Of those, the ones a worker is hashing right now. */
  hashing: Set<number>;
  running: boolean;
  progressText?: string;
}

/** Row state of one shard for display (table status column). */
export interface ShardDisplayState {
  status: ShardStatus | 'not-checked' | 'queued' | 'checking';
  checkedAt?: number;
  detail?: string;
  actualSize?: number;
}

/** A change in the store: which root, and which shard indices (all when undefined). */
export interface VerificationChange {
  root: string;
  indices?: number[];
  /** True when only the progress text/running flag changed. */
  progressOnly?: boolean;
}

/**
 * Results of this session's verification runs per dataset root, plus the shards being hashed
 * right now, and the cache of past runs (for "last checked" of shards not verified this session).
 */
export class VerificationStore implements vscode.Disposable {
  private readonly roots = new Map<string, RootState>();
  private readonly changed = new vscode.EventEmitter<VerificationChange>();
  private cachePromise?: Promise<VerifyCache>;
  private verdictsPromise?: Promise<FormatVerdictCache>;
  /** Fires when results, the checking set or the progress text of a root change. */
  readonly onDidChange = this.changed.event;

  /**
   * @param cacheFile absolute path of the cache JSON file (the extension: `<globalStorage>/verify-cache.json`).
   * @param verdictsFile absolute path of the format verdicts' JSON file (the extension:
   *   `<globalStorage>/format-verify-cache.json`; see `core/verify/formatVerdicts.ts`).
   */
  constructor(
    readonly cacheFile: string,
    readonly verdictsFile?: string,
  ) {}

  /**
   * Format-stream verdicts of past sessions (undefined without a {@link verdictsFile}), loaded
   * once; Verify Shard Hashes records into it and saves it.
   */
  formatVerdicts(): Promise<FormatVerdictCache> | undefined {
    if (!this.verdictsFile) return undefined;
    this.verdictsPromise ??= FormatVerdictCache.load(this.verdictsFile);
    return this.verdictsPromise;
  }

  /**
   * What to show for the rows of a format stream not checked this session: each file's verdict of
   * a past session while the files it was computed from are unchanged (size and mtime), else undefined.
   */
  async pastFormatStates(ds: { shards: readonly (Pick<ShardEntry, 'path'> | undefined)[] }): Promise<(ShardDisplayState | undefined)[]> {
    const verdicts = await this.formatVerdicts();
    return Promise.all(
      ds.shards.map(async (e) => {
        const v = e && (await verdicts?.lookup(e.path));
        return v && { status: v.status, checkedAt: v.checkedAt, detail: v.detail };
      }),
    );
  }

  private state(root: string): RootState {
    let s = this.roots.get(root);
    if (!s) {
      s = { results: new Map(), pending: new Set(), hashing: new Set(), running: false };
      this.roots.set(root, s);
    }
    return s;
  }

  /** The cache as last loaded (re-read from disk after every run, since the CLI may share it). */
  cache(): Promise<VerifyCache> {
    if (!this.cachePromise) this.cachePromise = VerifyCache.load(this.cacheFile);
    return this.cachePromise;
  }

  /** Forgets the loaded cache so the next {@link cache} call re-reads the file. */
  reloadCache(): void {
    this.cachePromise = undefined;
  }

  /** True while a run on `root` is in progress. */
  isRunning(root: string): boolean {
    return this.roots.get(root)?.running ?? false;
  }

  /** The progress line of the run on `root`, while one runs. */
  progressText(root: string): string | undefined {
    const s = this.roots.get(root);
    return s?.running ? s.progressText : undefined;
  }

  /** Results of this session for `root` (finished shards only). */
  results(root: string): ShardVerifyResult[] {
    return [...(this.roots.get(root)?.results.values() ?? [])].sort((a, b) => a.index - b.index);
  }

  /**
   * What to show for each shard of a dataset: "checking…" while a worker hashes it, "queued" while
   * it waits in a run, else this session's result, else the
   * cache's verdict when the file's identity (device, inode, size, mtime, ctime) still matches it, else "not checked".
   */
  async displayStates(ds: Dataset): Promise<ShardDisplayState[]> {
    const cache = await this.cache();
    const s = this.roots.get(ds.root);
    return ds.shards.map((e, i) => this.displayState(ds.root, e, cache, ds.fileStates[i], s));
  }

  /** Display state of one shard (see {@link displayStates}). */
  displayState(
    root: string,
    e: ShardEntry,
    cache: VerifyCache | undefined,
    file?: { identity?: FileIdentity },
    s: RootState | undefined = this.roots.get(root),
  ): ShardDisplayState {
    if (s?.hashing.has(e.index)) return { status: 'checking' };
    if (s?.pending.has(e.index)) return { status: 'queued' };
    const r = s?.results.get(e.index);
    if (r) return { status: r.status, checkedAt: r.checkedAt, detail: r.message, actualSize: r.actualSize };
    const c: VerifyCacheEntry | undefined = cache && file?.identity ? cache.lookup(e.path, file.identity) : undefined;
    if (c && e.sha256) {
      return c.sha256 === e.sha256
        ? { status: 'ok', checkedAt: c.checkedAt, detail: `${e.shard}: sha256 matched when last checked (file unchanged since).` }
        : {
            status: 'mismatch',
            checkedAt: c.checkedAt,
            detail: `${e.shard}: sha256 ${c.sha256} ≠ manifest ${e.sha256} when last checked (file unchanged since).`,
          };
    }
    return { status: 'not-checked' };
  }

  /** Drops this session's results of a root (its manifest changed, so indices may have moved). */
  clear(root: string): void {
    const s = this.roots.get(root);
    if (s && !s.running) {
      this.roots.delete(root);
      this.changed.fire({ root });
    }
  }

  /** @internal run bookkeeping */
  begin(root: string, indices: number[]): boolean {
    const s = this.state(root);
    if (s.running) return false;
    s.running = true;
    s.progressText = undefined;
    for (const i of indices) s.pending.add(i);
    s.hashing.clear();
    this.changed.fire({ root, indices });
    return true;
  }

  /** @internal a shard finished */
  record(root: string, r: ShardVerifyResult): void {
    const s = this.state(root);
    s.pending.delete(r.index);
    s.hashing.delete(r.index);
    s.results.set(r.index, r);
    this.changed.fire({ root, indices: [r.index] });
  }

  /** @internal progress text of the run and the shards being hashed now */
  progress(root: string, text: string, hashing: readonly number[] = []): void {
    const s = this.state(root);
    s.progressText = text;
    const now = new Set(hashing.filter((i) => s.pending.has(i)));
    const changed = [...now].filter((i) => !s.hashing.has(i)).concat([...s.hashing].filter((i) => !now.has(i)));
    s.hashing = now;
    this.changed.fire(changed.length ? { root, indices: changed } : { root, progressOnly: true });
  }

  /** @internal the run ended; shards still marked checking (cancelled) go back to their previous state */
  end(root: string): void {
    const s = this.state(root);
    const left = [...s.pending];
    s.pending.clear();
    s.hashing.clear();
    s.running = false;
    s.progressText = undefined;
    this.reloadCache();
    this.changed.fire({ root, indices: left });
  }

  dispose(): void {
    this.changed.dispose();
  }
}
