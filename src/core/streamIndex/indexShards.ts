/**
 * Builds the stream index (`streamIndex.ts`) without hashing: "Index Stream" in the extension,
 * `token-shards index` in the CLI. Verify Shard Hashes builds it too, in the same read as the hash
 * (`verify.ts`, option `index`).
 *
 * Per shard: stat (identity); a valid entry in the store (its checksum, identity, parameters and
 * `.docs` content checked, `entryStore.ts`; a damaged one is one warning and rebuilt) → reused
 * (resumable: a cancelled run keeps every finished shard); another shard of this run with the same identity (a hard link) →
 * read once; else queued to the worker pool (`shardPool.ts`), which reads the file once in big
 * sequential chunks, scans it (`streamIndex/scan.ts`) and writes its entry into the store (the scan
 * never leaves the worker; `workers/verifyWorker.ts`). Stale entries are never used: the
 * identity is part of the entry's key; after a build that wrote entries, those no file can use
 * any more are deleted (`IndexStore.prune`).
 *
 * Progress (bytes read, rate, time left) uses the verify progress shape ({@link VerifyProgress}) so
 * one formatter serves both (`verify/format.ts`).
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { FileIdentity, identityKey, identityOfStats } from '../fileIdentity';
import { Dataset } from '../dataset';
import { ShardReadPool, ReadJob } from '../shardPool';
import { IndexStore, scanParamsKey } from './entryStore';
import { IndexSegment } from './queries';
import { openStreamIndex, StreamIndex } from './streamIndex';
import { indexKernelModule } from './kernel';
import { ScanParams } from './scan';
import { TokenizerVocab, CORRUPT_ID_FLOOR, loadTokenizerVocab } from '../tokenizer';
import { DEFAULT_CHUNK_BYTES, VerifyProgress, defaultJobs, resolveVerifyWorker } from '../verify/verify';
import { layoutEnd } from '../formats/types';
import { documentRuleOf } from '../documentRule';

/** Options of {@link indexShards}. */
export interface IndexShardsOptions {
  /** Worker threads (default: the number of CPU cores). */
  jobs?: number;
  signal?: AbortSignal;
  /** Rebuild entries even when valid ones exist. */
  force?: boolean;
  workerPath?: string;
  chunkBytes?: number;
  /** Called at the start, every `progressIntervalMs` (default 200), and at the end. */
  onProgress?(p: VerifyProgress): void;
  progressIntervalMs?: number;
  /** Called when a segment's entry is available (built or reused), by segment index. */
  onShard?(segment: number): void;
  /** Keep the read workers for the next run of this process (`VerifyOptions.keepWorkersWarm`). */
  keepWorkersWarm?: boolean;
}

/** What an index run did. */
export interface IndexReport {
  /** Segments whose entry was built in this run. */
  built: number;
  /** Segments whose valid entry was already stored. */
  reused: number;
  /** Segments that share a file (hard links) with another segment of the run: read once. */
  shared: number;
  /** Segments that could not be indexed, with one sentence each. */
  failed: { segment: number; message: string }[];
  cancelled: boolean;
  /** Segments not finished (cancelled). */
  unfinished: number[];
  /** Bytes read in this run. */
  bytesRead: number;
  elapsedMs: number;
  /** Worker threads used. */
  jobs: number;
  /** Entries deleted from the store after the build: no file can use them any more (`IndexStore.prune`). */
  pruned: number;
}

/**
 * The scan parameters of a dataset: EOS from its settings; vocabulary size, special ids and holes
 * from the tokenizer (without one: vocabulary size {@link CORRUPT_ID_FLOOR}, no special ids — the
 * index then cannot tell unknown or special ids, and says so through its parameters key).
 */
export function indexParamsFor(ds: Pick<Dataset, 'settings'>, tok?: TokenizerVocab): ScanParams {
  const eos = ds.settings.eosTokenId;
  if (!tok) return { eos, vocabSize: CORRUPT_ID_FLOOR, specialIds: [] };
  const specialIds: number[] = [];
  const holeIds: number[] = [];
  for (let id = 0; id < tok.vocabSize; id++) {
    if (!tok.isKnown(id)) holeIds.push(id);
    else if (id !== eos && tok.isSpecial(id)) specialIds.push(id);
  }
  // A special id is an added token: its name is its content (what a decoded piece shows too).
  const specialNames: Record<number, string> = {};
  for (const id of specialIds) specialNames[id] = tok.addedContent(id) ?? '';
  return { eos, vocabSize: tok.vocabSize, specialIds, holeIds, specialNames };
}

/**
 * {@link indexParamsFor} with the dataset's tokenizer `file`, remembered in the folder `dir` (a
 * cache folder of the caller's, e.g. the CLI's stream-index folder) as a small JSON file named by
 * a hash of the tokenizer's file identity (device, inode, size, mtime, ctime) and the EOS id: a
 * later run reads that file (about 1 kB) instead of the tokenizer.json (2.7 MB for dolma2, whose
 * parse takes 0.15–0.3 s of CPU before any shard can be read). A remembered file that cannot be
 * read or does not fit is ignored; one that cannot be written is not an error. `dir` undefined:
 * nothing is remembered (the tokenizer is read).
 * @throws DataError as `loadTokenizerVocab` when the tokenizer must be read and cannot be.
 */
export async function cachedIndexParams(ds: Pick<Dataset, 'settings'>, file: string, dir: string | undefined): Promise<ScanParams> {
  const eos = ds.settings.eosTokenId;
  const st = dir !== undefined ? await fs.promises.stat(file, { bigint: true }).catch(() => undefined) : undefined;
  // Nowhere to remember, or no identity (the file vanished: the loader gives the one-line error).
  if (dir === undefined || !st) return indexParamsFor(ds, await loadTokenizerVocab(file));
  const name = crypto
    .createHash('sha256')
    .update(`${path.resolve(file)}|${identityKey(identityOfStats(st))}|${eos}`)
    .digest('hex')
    .slice(0, 32);
  const remembered = path.join(dir, `tokenizer-params-${name}.json`);
  try {
    const p = JSON.parse(await fs.promises.readFile(remembered, 'utf8')) as ScanParams;
    if (p.eos === eos && Number.isInteger(p.vocabSize) && Array.isArray(p.specialIds)) return p;
  } catch {
    /* not remembered yet (or unreadable): read the tokenizer */
  }
  const params = indexParamsFor(ds, await loadTokenizerVocab(file));
  const tmp = path.join(dir, `.tokenizer-params-${name}-${process.pid}.tmp`);
  try {
    await fs.promises.mkdir(dir, { recursive: true });
    await fs.promises.writeFile(tmp, JSON.stringify(params));
    await fs.promises.rename(tmp, remembered);
  } catch {
    await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
  }
  return params;
}

/** The index segments of a dataset (manifest order, global offsets). */
export function indexSegmentsOf(ds: Pick<Dataset, 'shards'> & Partial<Pick<Dataset, 'format'>>): IndexSegment[] {
  return ds.shards.map((e, i) => {
    const layout = ds.format?.files[i]?.layout;
    return { path: e.path, startToken: e.startToken, numTokens: e.numTokens, line: e.line, shard: e.shard, ...(layout ? { layout } : {}) };
  });
}

/**
 * Opens the stream index of a dataset from a store (see `openStreamIndex`: every shard stat'ed
 * afresh); its document numbers follow the dataset's document rule (`documentRuleOf`).
 */
export function openDatasetIndex(ds: Dataset, store: IndexStore, params: ScanParams): Promise<StreamIndex> {
  return openStreamIndex(ds.stream, indexSegmentsOf(ds), store, params, documentRuleOf(ds).role);
}

/**
 * Builds (or completes) the index of `segments` into `store`.
 * @returns the report; cancellation resolves with `cancelled: true` (finished shards are kept).
 * @throws Error only when the worker script cannot be found.
 */
export async function indexShards(
  segments: readonly IndexSegment[],
  store: IndexStore,
  params: ScanParams,
  opts: IndexShardsOptions = {},
): Promise<IndexReport> {
  const t0 = Date.now();
  const key = scanParamsKey(params);
  const report: IndexReport = {
    built: 0,
    reused: 0,
    shared: 0,
    failed: [],
    cancelled: false,
    unfinished: [],
    bytesRead: 0,
    elapsedMs: 0,
    jobs: 0,
    pruned: 0,
  };
  /** Entries the segments' files use now (kept by the prune without reading them). */
  const live = new Set<string>();
  const done = new Set<number>();
  const jobs: ReadJob[] = [];
  /** Segments waiting for a job reading the same file (hard links), by the job's key. */
  const followers = new Map<number, number[]>();
  const byIdentity = new Map<string, number>();
  /** Scan requests by shard size (one object per size, not per shard); the worker writes into `store`. */
  const scans = new Map<number, ReadJob['scan']>();
  const scanFor = (numTokens: number) => {
    let scan = scans.get(numTokens);
    if (!scan) scans.set(numTokens, (scan = { ...params, numTokens, store: { dir: store.dir, paramsKey: key } }));
    return scan;
  };
  const BATCH = 256;
  for (let b = 0; b < segments.length && !opts.signal?.aborted; b += BATCH) {
    const batch = segments.slice(b, b + BATCH);
    const stats = await Promise.all(
      batch.map((s) =>
        fs.promises.stat(s.path, { bigint: true }).then(
          (st) => st,
          (err: Error) => err,
        ),
      ),
    );
    for (let i = 0; i < batch.length; i++) {
      const seg = b + i;
      const st = stats[i];
      if (st instanceof Error) {
        report.failed.push({ segment: seg, message: `${segments[seg].shard}: cannot stat ${segments[seg].path}: ${st.message}` });
        done.add(seg);
        continue;
      }
      if (!st.isFile()) {
        report.failed.push({ segment: seg, message: `${segments[seg].shard}: ${segments[seg].path} is not a regular file` });
        done.add(seg);
        continue;
      }
      const id: FileIdentity = identityOfStats(st);
      live.add(store.baseName(id, key));
      const layout = segments[seg].layout;
      if (layout ? id.size < layoutEnd(layout, segments[seg].numTokens) : Math.floor(id.size / 4) !== segments[seg].numTokens) {
        const need = layout ? layoutEnd(layout, segments[seg].numTokens) : segments[seg].numTokens * 4;
        report.failed.push({
          segment: seg,
          message: `${segments[seg].shard}: ${id.size} bytes on disk, but the ${layout ? "format's" : "manifest's"} ${segments[seg].numTokens} tokens need ${need}`,
        });
        done.add(seg);
        continue;
      }
      if (
        !opts.force &&
        (await store.load(id, key, {
          shard: segments[seg].shard,
          checkDocs: true,
          numTokens: layout ? segments[seg].numTokens : undefined,
        }))
      ) {
        report.reused++;
        done.add(seg);
        opts.onShard?.(seg);
        continue;
      }
      const k = identityKey(id);
      const leader = byIdentity.get(k);
      if (leader !== undefined) {
        followers.get(leader)!.push(seg);
        continue;
      }
      byIdentity.set(k, seg);
      followers.set(seg, []);
      jobs.push({
        key: seg,
        path: segments[seg].path,
        expectedSize: id.size,
        hash: false,
        scan: segments[seg].layout
          ? { ...scanFor(segments[seg].numTokens), layout: segments[seg].layout }
          : scanFor(segments[seg].numTokens),
      });
    }
  }
  const bytesTotal = jobs.reduce((n, j) => n + j.expectedSize, 0);
  let bytesFinished = 0;
  const hashStart = Date.now();
  let pool: ShardReadPool | undefined;
  const snapshot = (): VerifyProgress => {
    const bytesDone = Math.min(bytesTotal, bytesFinished + (pool?.bytesInFlight() ?? 0));
    const elapsed = Date.now() - hashStart;
    const rate = elapsed > 0 && bytesDone > 0 ? (bytesDone / elapsed) * 1000 : 0;
    return {
      shardsTotal: segments.length,
      shardsDone: done.size,
      shardsFromCache: report.reused,
      running: pool?.running() ?? [],
      bytesTotal,
      bytesDone,
      elapsedMs: Date.now() - t0,
      bytesPerSecond: rate,
      etaMs: rate > 0 ? ((bytesTotal - bytesDone) / rate) * 1000 : undefined,
    };
  };
  let cancelled = !!opts.signal?.aborted;
  if (jobs.length > 0 && !cancelled) {
    const n = Math.max(1, Math.min(opts.jobs && opts.jobs > 0 ? Math.floor(opts.jobs) : defaultJobs(), 64, jobs.length));
    pool = new ShardReadPool({
      jobs: n,
      workerFile: resolveVerifyWorker(opts.workerPath),
      chunkBytes: opts.chunkBytes ?? DEFAULT_CHUNK_BYTES,
      kernelModule: indexKernelModule(),
      signal: opts.signal,
      keepWarm: opts.keepWorkersWarm,
    });
    report.jobs = n;
    opts.onProgress?.(snapshot());
    const timer = opts.onProgress ? setInterval(() => opts.onProgress!(snapshot()), opts.progressIntervalMs ?? 200) : undefined;
    try {
      cancelled = (
        await pool.run(jobs, (job, outcome) => {
          bytesFinished += job.expectedSize;
          const group = [job.key, ...(followers.get(job.key) ?? [])];
          if (outcome.kind === 'read') report.bytesRead += outcome.size;
          if (outcome.kind === 'read' && outcome.indexed) {
            report.built++;
            report.shared += group.length - 1;
            for (const g of group) {
              done.add(g);
              opts.onShard?.(g);
            }
          } else {
            const why =
              outcome.kind === 'read'
                ? (outcome.indexError ?? 'nothing scanned')
                : outcome.kind === 'size-mismatch'
                  ? `size ${outcome.size} bytes changed`
                  : outcome.message;
            for (const g of group) {
              done.add(g);
              report.failed.push({ segment: g, message: `${segments[g].shard}: ${why}` });
            }
          }
        })
      ).cancelled;
    } finally {
      if (timer) clearInterval(timer);
    }
  }
  // Entries were written: delete those of files rewritten or replaced since (they are never used again).
  if (report.built > 0) report.pruned = (await store.prune(live)).removed;
  report.failed.sort((a, b) => a.segment - b.segment);
  report.unfinished = cancelled ? segments.map((_, i) => i).filter((i) => !done.has(i)) : [];
  report.cancelled = cancelled && report.unfinished.length > 0;
  opts.onProgress?.(snapshot());
  report.elapsedMs = Date.now() - t0;
  return report;
}
