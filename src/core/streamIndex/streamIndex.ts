/**
 * The stream index: what one sequential pass per shard learns (`streamIndex/scan.ts`), kept on disk
 * per shard and combined into answers about the whole stream: global document numbers at any
 * offset, the valid document range, document-length statistics, the longest EOS-free run,
 * anomalies (long EOS-free runs, special ids inside documents, unknown ids, a dtype mix-up look)
 * with the global offsets and updates they touch, and an exact-duplicate-document summary.
 *
 * Storage ({@link IndexStore}): one folder chosen by the caller, never the dataset folder — the
 * extension's `globalStorageUri/stream-index/`, the CLI's `$XDG_CACHE_HOME/token-shard-inspector/
 * stream-index/` (else `~/.cache/…`). Per shard two files named by a hash of the shard's file
 * identity (device, inode, size, mtime, ctime; `fileIdentity.ts`) and of the scan parameters
 * (EOS, vocabulary size, special ids, holes): `<key>.json` (everything but the document hashes;
 * a few KiB) and `<key>.docs` (16 bytes per document, for the duplicate summary). A shard whose
 * identity changed (written, touched, replaced) has another key, so a stale entry is never found:
 * it is rebuilt. The JSON also holds the identity and parameters, checked again on load, and the
 * path it was built from. Hard links to one file share an identity and so one entry. Entries no
 * file can use any more (the shard was rewritten or replaced) are deleted after each build that
 * wrote entries ({@link IndexStore.prune}).
 *
 * Numbering convention (as `documents.ts`): document n (0-based) at global offset o = the number of
 * EOS ids in [0, o). A document's length is in tokens and **excludes** its closing EOS; the last
 * document of a stream that does not end with EOS has no EOS and runs to the end of the stream.
 *
 * Units: offsets and lengths in tokens; global unless the name says local.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { threadId } from 'worker_threads';
import { CancelledError, RangeRequestError, fmt } from '../errors';
import { count as countOf } from '../units';
import { mapLimit } from '../concurrency';
import { FileIdentity, identityKey, isFileIdentity, sameIdentity, statIdentity } from '../fileIdentity';
import { Schedule } from '../schedule';
import { terminalSafe } from '../untrusted';
import { TokenStream } from '../stream';
import { diagnoseIds } from '../tokenizer';
import {
  INDEX_BLOCK_TOKENS,
  IdOccurrences,
  LONG_RUN_FLOOR,
  LengthStats,
  RunHash,
  ScanParams,
  ShardScan,
  addLength,
  combineHash,
  emptyLengthStats,
  mergeLengthStats,
} from './scan';

/** Format version of the per-shard files; other versions are ignored (rebuilt). */
export const STREAM_INDEX_VERSION = 4;
/** Default threshold of the "EOS-free run" anomaly (tokens), the `tokenShards.index.eosFreeRunThreshold` setting's default. */
export const DEFAULT_EOS_FREE_RUN_THRESHOLD = 100_000;
/** Distinct documents the duplicate summary remembers at most (memory ≈ 32 bytes each); past it, the summary says where it stopped. */
export const DEFAULT_DUPLICATE_CAP = 1 << 21;
/** Pairs the duplicate summary lists. */
export const DUPLICATE_PAIRS_LISTED = 20;

/** The dtype look of a shard's first ids (`diagnoseIds` in `tokenizer.ts`). */
export interface ShardLook {
  kind: 'uint16-as-uint32' | 'uint32-as-uint16' | 'out-of-vocab';
  message: string;
}

/**
 * The dtype look of a shard's first ids (`diagnoseIds`), or undefined when they look normal.
 * @param maxId the largest id of the whole shard, when known (the scan's): below `vocabSize` no
 *   id of the sample is unknown or huge, so only the "every other id is 0" look is possible, and a
 *   sample with fewer zeros than that needs is answered from a native `indexOf` count.
 */
export function lookOf(sample: Uint32Array, vocabSize: number, maxId?: number): ShardLook | undefined {
  if (maxId !== undefined && maxId < vocabSize) {
    let zeros = 0;
    for (let i = sample.indexOf(0); i >= 0; i = sample.indexOf(0, i + 1)) zeros++;
    // diagnoseIds needs ≥ 90% of one parity's ids (half the sample) to be 0.
    if (zeros < 0.9 * Math.floor(sample.length / 2)) return undefined;
  }
  const a = diagnoseIds(sample, vocabSize);
  return a ? { kind: a.kind, message: a.message } : undefined;
}

/** What the index keeps about one shard (the on-disk JSON, with the block counts decoded). Local offsets. */
export interface ShardIndexRecord extends Omit<ShardScan, 'innerDocHashes' | 'lookSample'> {
  /** The file identity the scan read. */
  identity: FileIdentity;
  /** {@link scanParamsKey} of the parameters used. */
  params: string;
  /** When the scan finished (ms since the epoch). */
  builtAt: number;
  /** Documents in `<key>.docs`. */
  innerDocCount: number;
  look?: ShardLook;
}

interface RecordFile extends Omit<ShardIndexRecord, 'blockEos' | 'blockFirstEos' | 'blockLastEos'> {
  format: 'token-shard-inspector stream index';
  version: number;
  /** The shard file the entry was built from (absolute path): {@link IndexStore.prune} checks it. */
  path?: string;
  /** Base64 of the little-endian uint32 block counts. */
  blockEos: string;
  /** Base64 of the little-endian uint16 first/last EOS offsets inside each block. */
  blockFirstEos: string;
  blockLastEos: string;
}

/** A stable key of scan parameters (EOS, vocabulary size, special ids, holes). */
export function scanParamsKey(p: ScanParams): string {
  const specials = [...new Set(p.specialIds)].sort((a, b) => a - b);
  const holes = [...new Set(p.holeIds ?? [])].sort((a, b) => a - b);
  const h = crypto.createHash('sha256').update(JSON.stringify({ specials, holes })).digest('hex').slice(0, 16);
  return `eos=${p.eos};vocab=${p.vocabSize};ids=${h}`;
}

/**
 * Where the CLI keeps the stream index: `$XDG_CACHE_HOME/token-shard-inspector/stream-index` when
 * `XDG_CACHE_HOME` is absolute, else `~/.cache/token-shard-inspector/stream-index`.
 */
export function defaultCliIndexDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'token-shard-inspector', 'stream-index');
}

/** The bytes of an id array, little-endian (a view on little-endian hosts, a copy otherwise). */
function littleEndian(a: Uint32Array | Uint16Array): Buffer {
  if (os.endianness() === 'LE') return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const b = Buffer.alloc(a.byteLength);
  a.forEach((v, i) => (a.BYTES_PER_ELEMENT === 4 ? b.writeUInt32LE(v, 4 * i) : b.writeUInt16LE(v, 2 * i)));
  return b;
}

/** Numbers the temporary files of this process's index writes (unique with the pid). */
let tempCounter = 0;

/** The per-shard files of the index in one folder (see the file header). */
export class IndexStore {
  /** Records loaded in this process, by file base name (hard links share them). */
  private readonly memo = new Map<string, ShardIndexRecord>();
  /** The folder's creation, once per store. */
  private dirMade?: Promise<void>;
  /** The folder exists (made by this store). */
  private dirReady = false;

  /**
   * @param dir absolute folder (created on the first save).
   * @param opts `remember: false`: keep no record in memory (a writer that never reads them back,
   *   like `token-shards verify`: 100,000 tiny shards' records are ~300 MB; issue 10 item 9).
   */
  constructor(
    readonly dir: string,
    private readonly opts: { remember?: boolean } = {},
  ) {}

  /** File base name (no extension) of a shard's entry: a hash of its identity and the parameters. */
  baseName(identity: FileIdentity, params: string): string {
    return crypto
      .createHash('sha256')
      .update(`${identityKey(identity)}|${params}|v${STREAM_INDEX_VERSION}`)
      .digest('hex')
      .slice(0, 32);
  }

  /**
   * The record of the file with this identity, or undefined when none is stored (or it is
   * unreadable, of another version, or not for this identity and parameters: never trusted).
   */
  async load(identity: FileIdentity, params: string): Promise<ShardIndexRecord | undefined> {
    const base = this.baseName(identity, params);
    const memo = this.memo.get(base);
    if (memo) return memo;
    let data: RecordFile;
    try {
      data = JSON.parse(await fs.promises.readFile(path.join(this.dir, `${base}.json`), 'utf8')) as RecordFile;
    } catch {
      return undefined;
    }
    if (
      !data ||
      data.version !== STREAM_INDEX_VERSION ||
      data.params !== params ||
      !isFileIdentity(data.identity) ||
      !sameIdentity(data.identity, identity) ||
      typeof data.blockEos !== 'string' ||
      data.numTokens !== Math.floor(identity.size / 4)
    )
      return undefined;
    const bytes = Buffer.from(data.blockEos, 'base64');
    const first = Buffer.from(String(data.blockFirstEos), 'base64');
    const last = Buffer.from(String(data.blockLastEos), 'base64');
    const blocks = Math.ceil(data.numTokens / INDEX_BLOCK_TOKENS);
    if (bytes.length !== blocks * 4 || first.length !== blocks * 2 || last.length !== blocks * 2) return undefined;
    const blockEos = new Uint32Array(blocks);
    const blockFirstEos = new Uint16Array(blocks);
    const blockLastEos = new Uint16Array(blocks);
    for (let i = 0; i < blocks; i++) {
      blockEos[i] = bytes.readUInt32LE(4 * i);
      blockFirstEos[i] = first.readUInt16LE(2 * i);
      blockLastEos[i] = last.readUInt16LE(2 * i);
    }
    const { format: _f, version: _v, ...rest } = data;
    const rec: ShardIndexRecord = { ...rest, blockEos, blockFirstEos, blockLastEos };
    if (this.opts.remember !== false) this.memo.set(base, rec);
    return rec;
  }

  /**
   * Whether an entry for this identity and these parameters is on disk (or loaded in this
   * process): one synchronous `stat`, no read. For deciding whether a shard needs an index-only
   * read (verify's cache hits, 100,000 of them in a batch); it trusts nothing — {@link load} still
   * validates the entry, and one found unreadable there is rebuilt by the next Index Stream.
   */
  has(identity: FileIdentity, params: string): boolean {
    const base = this.baseName(identity, params);
    if (this.memo.has(base)) return true;
    try {
      return fs.statSync(path.join(this.dir, `${base}.json`)).size > 0;
    } catch {
      return false;
    }
  }

  /** The document hashes of a record (4 uint32 per document), or undefined when the `.docs` file is missing or short. */
  async loadDocHashes(rec: ShardIndexRecord): Promise<Uint32Array | undefined> {
    if (rec.innerDocCount === 0) return new Uint32Array(0);
    try {
      const buf = await fs.promises.readFile(path.join(this.dir, `${this.baseName(rec.identity, rec.params)}.docs`));
      if (buf.length !== rec.innerDocCount * 16) return undefined;
      const out = new Uint32Array(rec.innerDocCount * 4);
      for (let i = 0; i < out.length; i++) out[i] = buf.readUInt32LE(4 * i);
      return out;
    } catch {
      return undefined;
    }
  }

  /**
   * Stores a scan (atomically: `.docs` first, then the `.json` that makes the entry visible).
   * @returns the record as {@link load} would return it.
   * @throws the file-system error when the folder cannot be written.
   */
  async save(
    identity: FileIdentity,
    params: string,
    scan: ShardScan,
    look: ShardLook | undefined,
    file?: string,
  ): Promise<ShardIndexRecord> {
    const { base, rec, json, docs } = this.encode(identity, params, scan, look, file);
    await this.makeDir();
    if (docs) await this.writeAtomic(`${base}.docs`, docs);
    await this.writeAtomic(`${base}.json`, json);
    if (this.opts.remember !== false) this.memo.set(base, rec);
    return rec;
  }

  /**
   * {@link save} with blocking calls, for the verify/index worker thread (`workers/verifyWorker.ts`),
   * which writes each shard's entry right after its scan: the scan never crosses to the main
   * thread (100,000 tiny shards: issue 10 item 9). Same files, same atomic temporary file + rename.
   * @throws the file-system error when the folder cannot be written.
   */
  saveSync(identity: FileIdentity, params: string, scan: ShardScan, look: ShardLook | undefined, file?: string): ShardIndexRecord {
    const { base, rec, json, docs } = this.encode(identity, params, scan, look, file);
    const write = () => {
      if (!this.dirReady) {
        fs.mkdirSync(this.dir, { recursive: true });
        this.dirReady = true;
      }
      if (docs) this.writeAtomicSync(`${base}.docs`, docs);
      this.writeAtomicSync(`${base}.json`, json);
    };
    try {
      write();
    } catch (err) {
      // The folder was removed since this store made it (a long-lived worker): make it again, once.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !this.dirReady) throw err;
      this.dirReady = false;
      write();
    }
    if (this.opts.remember !== false) this.memo.set(base, rec);
    return rec;
  }

  /**
   * The files of an entry: the `.json` text and the `.docs` bytes (undefined for a shard with no
   * whole document inside; {@link loadDocHashes} knows from `innerDocCount` 0).
   */
  private encode(
    identity: FileIdentity,
    params: string,
    scan: ShardScan,
    look: ShardLook | undefined,
    file: string | undefined,
  ): { base: string; rec: ShardIndexRecord; json: string; docs?: Buffer } {
    const base = this.baseName(identity, params);
    const rec: ShardIndexRecord = {
      numTokens: scan.numTokens,
      eosCount: scan.eosCount,
      blockEos: scan.blockEos,
      blockFirstEos: scan.blockFirstEos,
      blockLastEos: scan.blockLastEos,
      firstEos: scan.firstEos,
      lastEos: scan.lastEos,
      innerDocs: scan.innerDocs,
      longestInner: scan.longestInner,
      longRuns: scan.longRuns,
      longRunCount: scan.longRunCount,
      specials: scan.specials,
      unknown: scan.unknown,
      maxId: scan.maxId,
      leadHash: scan.leadHash,
      trailHash: scan.trailHash,
      identity,
      params,
      builtAt: Date.now(),
      innerDocCount: scan.innerDocHashes.length / 4,
      look,
    };
    // Spelled out (no spreads): this runs once per shard, 100,000 times for a manifest of tiny shards.
    const entry: RecordFile = {
      format: 'token-shard-inspector stream index',
      version: STREAM_INDEX_VERSION,
      path: file,
      numTokens: rec.numTokens,
      eosCount: rec.eosCount,
      blockEos: littleEndian(scan.blockEos).toString('base64'),
      blockFirstEos: littleEndian(scan.blockFirstEos).toString('base64'),
      blockLastEos: littleEndian(scan.blockLastEos).toString('base64'),
      firstEos: rec.firstEos,
      lastEos: rec.lastEos,
      innerDocs: rec.innerDocs,
      longestInner: rec.longestInner,
      longRuns: rec.longRuns,
      longRunCount: rec.longRunCount,
      specials: rec.specials,
      unknown: rec.unknown,
      maxId: rec.maxId,
      leadHash: rec.leadHash,
      trailHash: rec.trailHash,
      identity,
      params,
      builtAt: rec.builtAt,
      innerDocCount: rec.innerDocCount,
      look,
    };
    const docs = scan.innerDocHashes.length > 0 ? littleEndian(scan.innerDocHashes) : undefined;
    // No fsync: an entry is a cache, validated on load (a torn file is rebuilt, never trusted).
    return { base, rec, json: JSON.stringify(entry), docs };
  }

  /** Creates the folder once per store (a save of 100,000 tiny shards' entries is mostly system calls). */
  private makeDir(): Promise<void> {
    return (this.dirMade ??= fs.promises.mkdir(this.dir, { recursive: true }).then(
      () => {
        this.dirReady = true;
      },
      (err: unknown) => {
        this.dirMade = undefined;
        throw err;
      },
    ));
  }

  /** A temporary name for `name` in the folder, unique across processes and their worker threads. */
  private tempName(name: string): string {
    return path.join(this.dir, `.${name}.${process.pid}-${threadId}.${++tempCounter}.tmp`);
  }

  /** Writes `name` in the folder through a temporary file and a rename (no fsync: a validated cache). */
  private async writeAtomic(name: string, data: string | Buffer): Promise<void> {
    const tmp = this.tempName(name);
    try {
      await fs.promises.writeFile(tmp, data);
      await fs.promises.rename(tmp, path.join(this.dir, name));
    } catch (err) {
      await fs.promises.rm(tmp, { force: true });
      throw err;
    }
  }

  /** {@link writeAtomic} with blocking calls. */
  private writeAtomicSync(name: string, data: string | Buffer): void {
    const tmp = this.tempName(name);
    try {
      fs.writeFileSync(tmp, data);
      fs.renameSync(tmp, path.join(this.dir, name));
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw err;
    }
  }

  /**
   * Deletes the entries no shard file can use any more, so the store does not grow with every
   * rewritten or replaced shard. Run after an index build or a verify run that wrote entries.
   * An entry (`<key>.json` + `<key>.docs`) is kept when its base name is in `keep` (the current
   * identities of the dataset just indexed: not even read), or when the file it was built from
   * still exists with the same identity (device, inode, size, mtime, ctime) — a hard link's other
   * names share that identity. It is deleted when that file is gone or has another identity
   * (rewritten, touched, replaced, or the dataset moved: such a shard would get another key and be
   * rebuilt anyway), when it is of another index version, unreadable, or names no file (entries
   * written before the file was recorded). Temporary files and `.docs` without their `.json` are
   * deleted once older than `graceMs` (default one hour: another process may be writing them).
   * A file that cannot be stat'ed for another reason than "does not exist" keeps its entry.
   * @returns how many entries were deleted and kept.
   */
  async prune(keep: ReadonlySet<string> = new Set(), opts: { graceMs?: number } = {}): Promise<{ removed: number; kept: number }> {
    const grace = opts.graceMs ?? 60 * 60 * 1000;
    let names: string[];
    try {
      names = await fs.promises.readdir(this.dir);
    } catch {
      return { removed: 0, kept: 0 };
    }
    const entries = new Set<string>();
    const others: string[] = [];
    /** Entries not in `keep`: their JSON is read to learn whether a file still uses them. */
    const check: string[] = [];
    let kept = 0;
    for (const n of names) {
      const m = /^([0-9a-f]{32})\.json$/.exec(n);
      if (m) {
        entries.add(m[1]);
        if (keep.has(m[1])) kept++;
        else check.push(m[1]);
      } else others.push(n);
    }
    const rm = (f: string) => fs.promises.rm(path.join(this.dir, f), { force: true }).catch(() => undefined);
    let removed = 0;
    await mapLimit(check, async (base) => {
      if (await this.stillUsable(base)) {
        kept++;
        return;
      }
      await rm(`${base}.json`);
      await rm(`${base}.docs`);
      this.memo.delete(base);
      removed++;
    });
    // Leftovers: temporary files of interrupted writes, `.docs` whose `.json` is gone.
    const now = Date.now();
    await mapLimit(others, async (n) => {
      const docs = /^([0-9a-f]{32})\.docs$/.exec(n);
      const temp = n.startsWith('.') && (n.endsWith('.tmp') || n.endsWith('.docs'));
      if (!(temp || (docs && !entries.has(docs[1])))) return;
      const st = await fs.promises.stat(path.join(this.dir, n)).catch(() => undefined);
      if (st && now - st.mtimeMs > grace) await rm(n);
    });
    return { removed, kept };
  }

  /** Whether entry `base` can still be used by some file (see {@link prune}). */
  private async stillUsable(base: string): Promise<boolean> {
    let data: Partial<RecordFile>;
    try {
      data = JSON.parse(await fs.promises.readFile(path.join(this.dir, `${base}.json`), 'utf8')) as Partial<RecordFile>;
    } catch {
      return false;
    }
    if (!data || data.version !== STREAM_INDEX_VERSION || typeof data.path !== 'string' || !isFileIdentity(data.identity)) return false;
    try {
      return sameIdentity(await statIdentity(data.path), data.identity);
    } catch (err) {
      return (err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ENOTDIR';
    }
  }

  /** Bytes of a shard's entry on disk (`.json`, `.docs`), for size reports. */
  async entrySize(rec: ShardIndexRecord): Promise<{ json: number; docs: number }> {
    const base = path.join(this.dir, this.baseName(rec.identity, rec.params));
    const size = async (f: string) => (await fs.promises.stat(f).catch(() => undefined))?.size ?? 0;
    return { json: await size(`${base}.json`), docs: await size(`${base}.docs`) };
  }
}

/** One segment of the stream as the index needs it. */
export interface IndexSegment {
  path: string;
  startToken: number;
  numTokens: number;
  /** Manifest line (1-based), 0 for a lone file. */
  line: number;
  /** The manifest's `shard` field (relative path) or the file name. */
  shard: string;
}

/** An EOS-free run in the stream: `start` global offset, `length` tokens. */
export interface GlobalRun {
  start: number;
  length: number;
  /** True when an EOS ends it; false when it runs to the end of the stream. */
  closed: boolean;
}

/** Kinds of anomalies. */
export type AnomalyKind = 'eos-free-run' | 'special-in-document' | 'unknown-ids' | 'dtype-look';

/** One anomaly, attributed to the shard where it starts. Offsets global; `updates` 0-based, inclusive. */
export interface Anomaly {
  kind: AnomalyKind;
  /** 'error' = a data fault (`info` exits 1); 'warning' = worth a look. */
  severity: 'error' | 'warning';
  /** Index of the segment (shard) it is attributed to. */
  segment: number;
  /** Global offsets to show (the run's start, the first occurrences). */
  offsets: number[];
  /** Tokens involved: the run length, or the occurrence count. */
  count: number;
  /** For 'special-in-document': the id. */
  id?: number;
  /** Updates touched, first and last (absent when only look-ahead tokens are touched). */
  updates?: [number, number];
  /** One sentence naming the shard, the offsets and the updates. */
  message: string;
  /** The same sentence without the shard's name (for marks shown on the shard's own row). */
  text: string;
}

/**
 * A mark on a row of a view (manifest table row, update-view sequence): the worst severity of its
 * anomalies and a tooltip with one line per anomaly (kind, global offsets, updates touched).
 */
export interface AnomalyMark {
  severity: 'error' | 'warning';
  text: string;
}

function markOf(lines: { severity: 'error' | 'warning'; line: string }[]): AnomalyMark {
  const n = lines.length;
  return {
    severity: lines.some((l) => l.severity === 'error') ? 'error' : 'warning',
    text: [`Stream index: ${n} ${n === 1 ? 'anomaly' : 'anomalies'}`, ...lines.map((l) => `• ${l.line}`)].join('\n'),
  };
}

/** One mark per segment (shard) that has anomalies, keyed by segment index (the manifest table's row index). */
export function anomalyMarksBySegment(anomalies: readonly Anomaly[]): Map<number, AnomalyMark> {
  const by = new Map<number, { severity: 'error' | 'warning'; line: string }[]>();
  for (const a of anomalies) {
    let l = by.get(a.segment);
    if (!l) by.set(a.segment, (l = []));
    l.push({ severity: a.severity, line: a.text });
  }
  return new Map([...by].map(([seg, lines]) => [seg, markOf(lines)]));
}

/**
 * Marks of the sequence rows of an update: row `r` covers global tokens `[start + r·seqLen,
 * start + (r+1)·seqLen)` (`rows` rows); a row gets a mark when one of an anomaly's offsets lies in
 * it (the run's start, the first occurrences, a dtype look's shard start). Keyed by row.
 */
export function anomalyMarksForRows(anomalies: readonly Anomaly[], start: number, seqLen: number, rows: number): Map<number, AnomalyMark> {
  const by = new Map<number, { severity: 'error' | 'warning'; line: string }[]>();
  const end = start + rows * seqLen;
  for (const a of anomalies)
    for (const o of new Set(a.offsets)) {
      if (o < start || o >= end) continue;
      const r = Math.floor((o - start) / seqLen);
      let l = by.get(r);
      if (!l) by.set(r, (l = []));
      l.push({ severity: a.severity, line: `token ${fmt(o)} (position ${fmt(o - start - r * seqLen)}): ${a.text}` });
    }
  return new Map([...by].map(([r, lines]) => [r, markOf(lines)]));
}

/** The duplicate-document summary. */
export interface DuplicateSummary {
  /** Documents compared (every non-empty document of the covered range). */
  documents: number;
  /** Documents whose content (64-bit hash and length) equals an earlier document's. */
  duplicates: number;
  /** The first pairs: a document and the earlier one it repeats. */
  pairs: { document: number; start: number; length: number; earlierDocument: number; earlierStart: number }[];
  /** When the memory cap stopped it: the global offset up to which documents were compared. */
  stoppedAt?: number;
  /** Segments whose `.docs` file was missing (not compared). */
  missingSegments: number;
}

/** Where a document lies: number (0-based), global start, length (tokens, EOS excluded), whether an EOS closes it. */
export interface DocumentInfo {
  document: number;
  start: number;
  /** Tokens, EOS excluded; absent when the index ends before the document does (incomplete index). */
  length?: number;
  /** True when an EOS ends it; false for the last document of a stream that does not end with EOS. */
  closed: boolean;
}

/** Updates touching the global range [start, end): inclusive pair, or undefined when none. */
export function updatesTouching(schedule: Schedule, start: number, end: number): [number, number] | undefined {
  if (schedule.numUpdates === 0 || end <= start) return undefined;
  const first = Math.floor(start / schedule.G);
  const last = Math.min(schedule.numUpdates - 1, Math.floor((end - 1) / schedule.G));
  return first <= last ? [first, last] : undefined;
}

/** "update 12", "updates 12–40 (29 updates)", or "no update (look-ahead tokens only)". */
export function describeUpdates(u: [number, number] | undefined): string {
  if (!u) return 'no update (look-ahead tokens only)';
  return u[0] === u[1] ? `update ${fmt(u[0])}` : `updates ${fmt(u[0])}–${fmt(u[1])} (${fmt(u[1] - u[0] + 1)} updates)`;
}

/**
 * The index of a whole stream, built from per-shard records (some may be missing: numbering then
 * works up to the first missing shard, see {@link readyUpTo}).
 */
export class StreamIndex {
  /** EOS before each segment (valid for segments ≤ readyUpTo). */
  private readonly eosBefore: number[];
  /** Number of leading segments that are indexed: offsets in them have instant document numbers. */
  readonly readyUpTo: number;
  /** Block prefix sums per record (shared by hard links). */
  private readonly prefixes = new WeakMap<ShardIndexRecord, Float64Array>();
  private summaryMemo?: StreamSummary;

  /**
   * @param records one per segment, undefined where not indexed (or stale).
   * @param specialNames the text of special token ids (`<|pad|>`), named in anomaly messages.
   */
  constructor(
    readonly stream: TokenStream,
    readonly segments: readonly IndexSegment[],
    readonly records: readonly (ShardIndexRecord | undefined)[],
    readonly eos: number,
    private readonly specialNames: Readonly<Record<number, string>> = {},
  ) {
    let ready = 0;
    while (ready < records.length && records[ready]) ready++;
    this.readyUpTo = ready;
    this.eosBefore = new Array(ready + 1);
    let n = 0;
    for (let i = 0; i <= ready; i++) {
      this.eosBefore[i] = n;
      if (i < ready) n += records[i]!.eosCount;
    }
  }

  /** True when every segment is indexed. */
  get complete(): boolean {
    return this.readyUpTo === this.segments.length;
  }

  /** Segments indexed (anywhere). */
  get indexedCount(): number {
    return this.records.filter((r) => r).length;
  }

  /** EOS ids in the whole stream (complete index only). */
  get totalEos(): number | undefined {
    return this.complete ? this.eosBefore[this.readyUpTo] : undefined;
  }

  /**
   * Documents in the stream: EOS count, plus one when the stream does not end with EOS (complete index only).
   * Valid document numbers are 0..documentCount−1.
   */
  get documentCount(): number | undefined {
    if (!this.complete) return undefined;
    const total = this.eosBefore[this.readyUpTo];
    const last = this.records[this.records.length - 1];
    if (!last) return total > 0 ? total : 1;
    const endsWithEos = last.numTokens > 0 && last.lastEos === last.numTokens - 1;
    return total + (endsWithEos ? 0 : 1);
  }

  /** True when document numbers at `offset` are instant (its segment and all before it are indexed). */
  covers(offset: number): boolean {
    if (offset < 0 || offset >= this.stream.totalTokens) return false;
    return this.segmentOf(offset) < this.readyUpTo;
  }

  private segmentOf(offset: number): number {
    const segs = this.segments;
    let lo = 0,
      hi = segs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (segs[mid].startToken <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private prefix(rec: ShardIndexRecord): Float64Array {
    let p = this.prefixes.get(rec);
    if (!p) {
      p = new Float64Array(rec.blockEos.length + 1);
      for (let i = 0; i < rec.blockEos.length; i++) p[i + 1] = p[i] + rec.blockEos[i];
      this.prefixes.set(rec, p);
    }
    return p;
  }

  /**
   * The 0-based document number at `offset` (= EOS ids before it), reading at most one block
   * ({@link INDEX_BLOCK_TOKENS} tokens).
   * @returns undefined when the offset's segment (or one before it) is not indexed.
   * @throws RangeRequestError for an offset outside the stream.
   */
  async documentNumberAt(offset: number): Promise<number | undefined> {
    this.stream.locate(offset);
    const s = this.segmentOf(offset);
    if (s >= this.readyUpTo) return undefined;
    const rec = this.records[s]!;
    const local = offset - this.segments[s].startToken;
    const blk = Math.floor(local / INDEX_BLOCK_TOKENS);
    const blockStart = blk * INDEX_BLOCK_TOKENS;
    let n = this.eosBefore[s] + this.prefix(rec)[blk];
    if (local > blockStart && rec.blockEos[blk] > 0) {
      const ids = await this.stream.read(this.segments[s].startToken + blockStart, local - blockStart);
      for (let i = 0; i < ids.length; i++) if (ids[i] === this.eos) n++;
    }
    return n;
  }

  /**
   * Global offset of the k-th EOS of the stream (1-based), or undefined when there are fewer than
   * k in the indexed segments.
   */
  async nthEos(k: number): Promise<number | undefined> {
    if (k < 1 || k > this.eosBefore[this.readyUpTo]) return undefined;
    let lo = 0,
      hi = this.readyUpTo - 1;
    while (lo < hi) {
      // last segment with eosBefore < k
      const mid = (lo + hi + 1) >> 1;
      if (this.eosBefore[mid] < k) lo = mid;
      else hi = mid - 1;
    }
    const s = lo;
    const rec = this.records[s]!;
    let need = k - this.eosBefore[s];
    const p = this.prefix(rec);
    let blo = 0,
      bhi = rec.blockEos.length - 1;
    while (blo < bhi) {
      // last block with prefix < need
      const mid = (blo + bhi + 1) >> 1;
      if (p[mid] < need) blo = mid;
      else bhi = mid - 1;
    }
    need -= p[blo];
    const start = this.segments[s].startToken + blo * INDEX_BLOCK_TOKENS;
    const ids = await this.stream.read(start, Math.min(INDEX_BLOCK_TOKENS, rec.numTokens - blo * INDEX_BLOCK_TOKENS));
    for (let i = 0; i < ids.length; i++) if (ids[i] === this.eos && --need === 0) return start + i;
    throw new Error(`stream index out of date: block ${blo} of ${this.segments[s].shard} holds fewer EOS than indexed; rebuild the index`);
  }

  /**
   * Start, length and closing of document `n`.
   * @returns undefined when the index does not reach it (fewer EOS indexed than needed).
   * @throws RangeRequestError when `n` is not a valid document number of a completely indexed stream.
   */
  async documentInfo(n: number): Promise<DocumentInfo | undefined> {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeRequestError(`document ${n} is not a non-negative integer`);
    const count = this.documentCount;
    if (count !== undefined && n >= count)
      throw new RangeRequestError(`document ${fmt(n)} does not exist: the stream has ${countOf(count, 'document')} (0..${fmt(count - 1)})`);
    let start = 0;
    if (n > 0) {
      const e = await this.nthEos(n);
      if (e === undefined) return undefined;
      start = e + 1;
    }
    const end = await this.nthEos(n + 1);
    if (end !== undefined) return { document: n, start, length: end - start, closed: true };
    if (!this.complete) return undefined;
    return { document: n, start, length: this.stream.totalTokens - start, closed: false };
  }

  /**
   * The document containing `offset`.
   * @returns undefined when the index does not cover it.
   * @throws RangeRequestError for an offset outside the stream.
   */
  async documentAt(offset: number): Promise<DocumentInfo | undefined> {
    const n = await this.documentNumberAt(offset);
    if (n === undefined) return undefined;
    const start = n === 0 ? 0 : (await this.nthEos(n))! + 1;
    const end = await this.nthEos(n + 1);
    if (end !== undefined) return { document: n, start, length: end - start, closed: true };
    // No EOS after it in the indexed segments: it ends at the stream end (complete) or beyond the index.
    if (!this.complete) return { document: n, start, closed: false };
    return { document: n, start, length: this.stream.totalTokens - start, closed: false };
  }

  /**
   * EOS facts per page of `pageTokens` tokens (a multiple of {@link INDEX_BLOCK_TOKENS}) of one
   * indexed segment, from the block summary without reading the file: EOS count, first and last
   * EOS offset inside each page (-1 when none). Undefined when the segment is not indexed.
   */
  pageStats(segment: number, pageTokens: number): { eosCount: number[]; firstEos: number[]; lastEos: number[] } | undefined {
    const rec = this.records[segment];
    if (!rec || pageTokens % INDEX_BLOCK_TOKENS !== 0) return undefined;
    const per = pageTokens / INDEX_BLOCK_TOKENS;
    const pages = Math.ceil(rec.numTokens / pageTokens);
    const out = {
      eosCount: new Array<number>(pages).fill(0),
      firstEos: new Array<number>(pages).fill(-1),
      lastEos: new Array<number>(pages).fill(-1),
    };
    for (let b = 0; b < rec.blockEos.length; b++) {
      if (rec.blockEos[b] === 0) continue;
      const p = Math.floor(b / per);
      const at = (b - p * per) * INDEX_BLOCK_TOKENS;
      out.eosCount[p] += rec.blockEos[b];
      if (out.firstEos[p] < 0) out.firstEos[p] = at + rec.blockFirstEos[b];
      out.lastEos[p] = at + rec.blockLastEos[b];
    }
    return out;
  }

  /**
   * Global document numbering facts of one segment, instant (at most two block reads):
   * `docBase` = EOS before it; `headStart` = start of the document holding its first token;
   * `tailEnd` = one past the EOS closing the document that starts after the segment's last EOS
   * (`tailKnown` false when that document runs to the stream end or past the indexed shards).
   * Undefined when the segment (or one before it) is not indexed.
   */
  async segmentNumbering(
    segment: number,
  ): Promise<{ docBase: number; headStart: number; tailEnd: number; tailKnown: boolean } | undefined> {
    if (segment >= this.readyUpTo) return undefined;
    const seg = this.segments[segment];
    const rec = this.records[segment]!;
    const docBase = this.eosBefore[segment];
    const headStart = docBase === 0 ? 0 : (await this.nthEos(docBase))! + 1;
    // As the shard editor defines it: the document that starts after the segment's last EOS (or at its start).
    const tailFrom = rec.lastEos >= 0 ? seg.startToken + rec.lastEos + 1 : seg.startToken;
    if (tailFrom >= this.stream.totalTokens) return { docBase, headStart, tailEnd: this.stream.totalTokens, tailKnown: false };
    const closing = await this.nthEos(docBase + rec.eosCount + 1);
    if (closing !== undefined) return { docBase, headStart, tailEnd: closing + 1, tailKnown: true };
    return { docBase, headStart, tailEnd: this.complete ? this.stream.totalTokens : seg.startToken + seg.numTokens, tailKnown: false };
  }

  /** Whole-stream facts (complete or not: covers the indexed prefix, `coveredTokens`). */
  summary(): StreamSummary {
    if (!this.summaryMemo) this.summaryMemo = this.computeSummary();
    return this.summaryMemo;
  }

  private computeSummary(): StreamSummary {
    const docs = emptyLengthStats();
    const longRuns: GlobalRun[] = [];
    let longest: GlobalRun = { start: 0, length: 0, closed: true };
    let longRunCount = 0;
    let open = { start: 0, length: 0 };
    const consider = (r: GlobalRun, keep: boolean) => {
      if (r.length > longest.length) longest = r;
      if (keep && r.length >= LONG_RUN_FLOOR) {
        longRunCount++;
        longRuns.push(r);
      }
    };
    const n = this.readyUpTo;
    for (let s = 0; s < n; s++) {
      const rec = this.records[s]!;
      const g = this.segments[s].startToken;
      if (rec.eosCount === 0) {
        open.length += rec.numTokens;
        continue;
      }
      const lead: GlobalRun = { start: open.start, length: open.length + rec.firstEos, closed: true };
      consider(lead, true);
      addLength(docs, lead.length);
      mergeLengthStats(docs, rec.innerDocs);
      if (rec.longestInner.length > longest.length)
        longest = { start: g + rec.longestInner.start, length: rec.longestInner.length, closed: true };
      for (const r of rec.longRuns) longRuns.push({ start: g + r.start, length: r.length, closed: true });
      longRunCount += rec.longRunCount;
      open = { start: g + rec.lastEos + 1, length: rec.numTokens - rec.lastEos - 1 };
    }
    const coveredTokens = n > 0 ? this.segments[n - 1].startToken + this.segments[n - 1].numTokens : 0;
    if (this.complete && open.length > 0) {
      const last: GlobalRun = { start: open.start, length: open.length, closed: false };
      consider(last, true);
      addLength(docs, last.length);
    }
    longRuns.sort((a, b) => a.start - b.start);
    return {
      documents: docs,
      longestRun: longest,
      longRuns,
      longRunCount,
      coveredTokens,
      complete: this.complete,
      openRunAtEnd: this.complete ? undefined : open,
    };
  }

  /**
   * The anomalies of the indexed segments (see {@link AnomalyKind}).
   * @param threshold EOS-free runs longer than this many tokens are reported (at least {@link LONG_RUN_FLOOR}).
   */
  anomalies(schedule: Schedule, threshold: number = DEFAULT_EOS_FREE_RUN_THRESHOLD): Anomaly[] {
    const t = Math.max(LONG_RUN_FLOOR, threshold);
    const out: Anomaly[] = [];
    const where = (s: number) => `${this.segments[s].shard}${this.segments[s].line ? ` (manifest line ${this.segments[s].line})` : ''}`;
    const said = (s: number, text: string) => ({ text, message: `${where(s)}: ${text}` });
    for (const r of this.summary().longRuns) {
      if (r.length <= t) continue;
      const s = this.segmentOf(r.start);
      const e = this.segmentOf(r.start + r.length - 1);
      const updates = updatesTouching(schedule, r.start, r.start + r.length);
      const span = e > s ? `, spanning ${fmt(e - s + 1)} shards to ${this.segments[e].shard}` : '';
      out.push({
        kind: 'eos-free-run',
        severity: 'warning',
        segment: s,
        offsets: [r.start],
        count: r.length,
        updates,
        ...said(
          s,
          `${fmt(r.length)} tokens without EOS from global offset ${fmt(r.start)} to ${fmt(r.start + r.length - 1)}${span}${r.closed ? '' : ' (to the end of the stream)'} — longer than ${fmt(t)}; documents glued by a lost EOS? Touches ${describeUpdates(updates)}.`,
        ),
      });
    }
    for (let s = 0; s < this.segments.length; s++) {
      const rec = this.records[s];
      if (!rec) continue;
      const g = this.segments[s].startToken;
      const occ = (o: IdOccurrences) => o.first.map((x) => g + x);
      const touched = (offs: number[]) => {
        const us = offs.map((o) => schedule.position(o).update).filter((u): u is number => u !== undefined);
        return us.length ? ([Math.min(...us), Math.max(...us)] as [number, number]) : undefined;
      };
      const firstText = (offs: number[], count: number) =>
        `first at global offset${offs.length > 1 ? 's' : ''} ${offs.map(fmt).join(', ')}${count > offs.length ? ', …' : ''}`;
      for (const [idText, o] of Object.entries(rec.specials)) {
        const offs = occ(o);
        const updates = touched(offs);
        const name = this.specialNames[Number(idText)];
        out.push({
          kind: 'special-in-document',
          severity: 'warning',
          segment: s,
          offsets: offs,
          count: o.count,
          id: Number(idText),
          updates,
          ...said(
            s,
            `special token ${name === undefined ? `id ${idText}` : `${terminalSafe(name)} (id ${idText})`} inside documents ${countOf(o.count, 'time')}, ${firstText(offs, o.count)}; ${o.count > offs.length ? 'the first touch' : 'touches'} ${describeUpdates(updates)}.`,
          ),
        });
      }
      // A dtype look explains the unknown ids of its shard: one line, not two.
      if (rec.unknown.count > 0 && !rec.look) {
        const offs = occ(rec.unknown);
        const updates = touched(offs);
        out.push({
          kind: 'unknown-ids',
          severity: 'error',
          segment: s,
          offsets: offs,
          count: rec.unknown.count,
          updates,
          ...said(
            s,
            `${countOf(rec.unknown.count, 'unknown id')} (≥ the vocabulary size or in a vocabulary hole; max id ${fmt(rec.maxId)}), ${firstText(offs, rec.unknown.count)}; ${rec.unknown.count > offs.length ? 'the first touch' : 'touches'} ${describeUpdates(updates)}.`,
          ),
        });
      }
      if (rec.look) {
        const updates = updatesTouching(schedule, g, g + rec.numTokens);
        out.push({
          kind: 'dtype-look',
          severity: 'error',
          segment: s,
          offsets: [g],
          count: rec.numTokens,
          updates,
          ...said(
            s,
            `${rec.look.message} ${fmt(rec.unknown.count)} ids are unknown, the first at global offset ${fmt(g + (rec.unknown.first[0] ?? 0))}; the shard (from global offset ${fmt(g)}) feeds ${describeUpdates(updates)}.`,
          ),
        });
      }
    }
    return out.sort((a, b) => a.segment - b.segment || a.offsets[0] - b.offsets[0]);
  }

  /**
   * The exact-duplicate summary over the indexed prefix: documents whose (64-bit content hash,
   * length) equals an earlier document's. Reads every `.docs` file once (16 bytes per document)
   * and keeps one table entry per distinct document (≈ 32 bytes), up to `cap` distinct documents.
   * @param opts.onProgress called after each shard: documents numbered so far (compared or
   *   empty) of `total` (the documents of the covered range), and ms since the start.
   * @throws CancelledError when `signal` fires (checked between shards).
   */
  async duplicates(
    store: IndexStore,
    opts: { cap?: number; signal?: AbortSignal; onProgress?(done: number, total: number, elapsedMs: number): void } = {},
  ): Promise<DuplicateSummary> {
    const t0 = Date.now();
    const total = this.summary().documents.count;
    const cap = opts.cap ?? DEFAULT_DUPLICATE_CAP;
    const table = new DocTable(cap);
    const out: DuplicateSummary = { documents: 0, duplicates: 0, pairs: [], missingSegments: 0 };
    let docNo = 0;
    let openHash: RunHash = { h1: 0, h2: 0, length: 0 };
    let openStart = 0;
    const add = (h: RunHash, start: number): boolean => {
      // Empty documents (EOS right after EOS) are not compared: they would all "repeat" each other.
      if (h.length === 0) {
        docNo++;
        return true;
      }
      const prev = table.insert(h.h1, h.h2, h.length, docNo, start);
      if (prev === FULL) {
        out.stoppedAt = start;
        return false;
      }
      out.documents++;
      if (prev) {
        out.duplicates++;
        if (out.pairs.length < DUPLICATE_PAIRS_LISTED)
          out.pairs.push({ document: docNo, start, length: h.length, earlierDocument: prev.doc, earlierStart: prev.start });
      }
      docNo++;
      return true;
    };
    outer: for (let s = 0; s < this.readyUpTo; s++) {
      if (opts.signal?.aborted) throw new CancelledError();
      const rec = this.records[s]!;
      const g = this.segments[s].startToken;
      if (rec.eosCount === 0) {
        openHash = combineHash(openHash, rec.leadHash);
        continue;
      }
      if (!add(combineHash(openHash, rec.leadHash), openStart)) break;
      const docs = await store.loadDocHashes(rec);
      if (!docs) {
        out.missingSegments++;
        docNo += rec.eosCount - 1;
      } else {
        for (let i = 0; i < docs.length; i += 4) {
          if (!add({ h1: docs[i], h2: docs[i + 1], length: docs[i + 3] }, g + docs[i + 2])) break outer;
        }
      }
      openHash = rec.trailHash;
      openStart = g + rec.lastEos + 1;
      opts.onProgress?.(docNo, total, Date.now() - t0);
      await new Promise((r) => setImmediate(r));
    }
    if (out.stoppedAt === undefined && this.complete && openHash.length > 0) add(openHash, openStart);
    return out;
  }
}

/** Whole-stream facts from {@link StreamIndex.summary}. */
export interface StreamSummary {
  /** Lengths of every document in the covered range (tokens, EOS excluded). */
  documents: LengthStats;
  longestRun: GlobalRun;
  /** Runs of at least {@link LONG_RUN_FLOOR} tokens (per shard only the longest 256 are kept), by start. */
  longRuns: GlobalRun[];
  /** How many runs reached {@link LONG_RUN_FLOOR}. */
  longRunCount: number;
  /** Tokens covered (the indexed prefix of the stream). */
  coveredTokens: number;
  complete: boolean;
  /** Incomplete index: the run still open at the end of the covered range. */
  openRunAtEnd?: { start: number; length: number };
}

const FULL = Symbol('full');

/** Open-addressing table of document keys (hash lanes + length) → first (document, start). */
class DocTable {
  private keys: Uint32Array;
  private vals: Float64Array;
  private mask: number;
  private size = 0;
  constructor(private readonly cap: number) {
    const slots = 1 << 12;
    this.keys = new Uint32Array(slots * 3);
    this.vals = new Float64Array(slots * 2);
    this.mask = slots - 1;
  }

  /** Inserts a key; returns the earlier entry when present, FULL when the cap is reached, else undefined. */
  insert(h1: number, h2: number, len: number, doc: number, start: number): { doc: number; start: number } | undefined | typeof FULL {
    let i = (Math.imul(h1 ^ (h2 >>> 7) ^ len, 0x9e3779b1) >>> 0) & this.mask;
    for (;;) {
      const k = i * 3;
      if (this.vals[2 * i] === 0) break;
      if (this.keys[k] === h1 && this.keys[k + 1] === h2 && this.keys[k + 2] === len)
        return { doc: this.vals[2 * i] - 1, start: this.vals[2 * i + 1] };
      i = (i + 1) & this.mask;
    }
    if (this.size >= this.cap) return FULL;
    const k = i * 3;
    this.keys[k] = h1;
    this.keys[k + 1] = h2;
    this.keys[k + 2] = len;
    this.vals[2 * i] = doc + 1;
    this.vals[2 * i + 1] = start;
    this.size++;
    if (this.size * 2 > this.mask + 1) this.grow();
    return undefined;
  }

  private grow(): void {
    const oldK = this.keys,
      oldV = this.vals,
      oldSlots = this.mask + 1;
    const slots = oldSlots * 2;
    this.keys = new Uint32Array(slots * 3);
    this.vals = new Float64Array(slots * 2);
    this.mask = slots - 1;
    this.size = 0;
    for (let j = 0; j < oldSlots; j++) {
      if (oldV[2 * j] === 0) continue;
      const h1 = oldK[3 * j],
        h2 = oldK[3 * j + 1],
        len = oldK[3 * j + 2];
      let i = (Math.imul(h1 ^ (h2 >>> 7) ^ len, 0x9e3779b1) >>> 0) & this.mask;
      while (this.vals[2 * i] !== 0) i = (i + 1) & this.mask;
      this.keys[3 * i] = h1;
      this.keys[3 * i + 1] = h2;
      this.keys[3 * i + 2] = len;
      this.vals[2 * i] = oldV[2 * j];
      this.vals[2 * i + 1] = oldV[2 * j + 1];
      this.size++;
    }
  }
}

/**
 * Loads the records of every segment from the store (stat + one small JSON read each; records of
 * hard links are shared) and returns the stream index.
 * @param identities optional known identities per segment (e.g. `Dataset.fileStates[i].identity`),
 *   re-stat'ed when absent. A file that cannot be stat'ed has no record.
 */
export async function openStreamIndex(
  stream: TokenStream,
  segments: readonly IndexSegment[],
  store: IndexStore,
  params: ScanParams,
  identities?: readonly (FileIdentity | undefined)[],
): Promise<StreamIndex> {
  const key = scanParamsKey(params);
  const records = await mapLimit(segments, async (seg, i) => {
    const id = identities?.[i] ?? (await statIdentity(seg.path).catch(() => undefined));
    if (!id || Math.floor(id.size / 4) !== seg.numTokens) return undefined;
    return store.load(id, key);
  });
  return new StreamIndex(stream, segments, records, params.eos, params.specialNames);
}
