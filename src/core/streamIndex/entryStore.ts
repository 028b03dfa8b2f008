/**
 * The entry store of the stream index: one entry per shard on disk, what one sequential pass over
 * the shard learned (`scan.ts`), saved after the scan and loaded (validated) by every reader.
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
 * Nothing read back is trusted unchecked: the JSON ends with a SHA-256 of everything before it
 * (format, version, the shard's identity, the parameters, the counts and the SHA-256 of the
 * `.docs` bytes), so an entry edited on disk (an `eosCount` plus 5), a truncated or foreign
 * `.docs` (another shard's copied in), or a JSON of another shard renamed into place is refused
 * with one warning line ({@link IndexStoreOptions.onWarning}) and the shard is indexed again by the
 * next build, never answered from. `load` checks the JSON and the `.docs` size (one `stat`); the
 * `.docs` content is checked where it is read (`loadDocHashes`, the duplicate summary) and by
 * every index build before it reuses an entry (`load` with `checkDocs`). The checksum guards
 * against damage, not against forgery: whoever can write the store can write a consistent entry
 * (as with a forged verify-cache entry and a forged ctime, `verify/cache.ts`).
 *
 * Units: offsets and lengths in tokens, local to the shard.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { threadId } from 'worker_threads';
import { mapLimit } from '../concurrency';
import { FileIdentity, identityKey, isFileIdentity, sameIdentity, statIdentity } from '../fileIdentity';
import { diagnoseIds } from '../tokenizer';
import { INDEX_BLOCK_TOKENS, ScanParams, ShardScan } from './scan';

/** Format version of the per-shard files; other versions are ignored (rebuilt). */
export const STREAM_INDEX_VERSION = 5;

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
  /** SHA-256 (hex) of the `<key>.docs` bytes; absent when `innerDocCount` is 0 (no file). */
  docsSha256?: string;
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

/** The end of an entry's JSON: `,"checksum":"<SHA-256 hex of the text before, closed by "}">"}`. */
const CHECKSUM_TAIL = /,"checksum":"([0-9a-f]{64})"\}$/;

function sha256Hex(data: string | Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** Options of an {@link IndexStore}. */
export interface IndexStoreOptions {
  /**
   * `false`: keep no record in memory (a writer that never reads them back, like `token-shards
   * verify`: 100,000 tiny shards' records are ~300 MB).
   */
  remember?: boolean;
  /**
   * Called once per entry found damaged on disk (checksum, identity, size or `.docs` mismatch)
   * with one line naming the shard, the entry file and what did not match. The entry is then
   * treated as absent (the next build rebuilds it).
   */
  onWarning?(message: string): void;
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
  /** Entries already warned about (one line per damaged entry, however often it is looked up). */
  private readonly warned = new Set<string>();

  /**
   * @param dir absolute folder (created on the first save).
   * @param opts see {@link IndexStoreOptions}.
   */
  constructor(
    readonly dir: string,
    private readonly opts: IndexStoreOptions = {},
  ) {}

  /** Reports a damaged entry once ({@link IndexStoreOptions.onWarning}); always returns undefined. */
  private damaged(base: string, file: string, shard: string | undefined, why: string): undefined {
    if (this.warned.has(base)) return undefined;
    this.warned.add(base);
    this.opts.onWarning?.(
      `${shard ?? 'a shard'}: stream index entry ${path.join(this.dir, file)} ${why}; not used (the next index build rebuilds it)`,
    );
    return undefined;
  }

  /** File base name (no extension) of a shard's entry: a hash of its identity and the parameters. */
  baseName(identity: FileIdentity, params: string): string {
    return crypto
      .createHash('sha256')
      .update(`${identityKey(identity)}|${params}|v${STREAM_INDEX_VERSION}`)
      .digest('hex')
      .slice(0, 32);
  }

  /**
   * The record of the file with this identity, or undefined when none is stored (missing, or of
   * another index version: silently) or it is damaged (see the file header: one warning, never
   * trusted): checksum, format, identity, parameters, token count, block arrays, `.docs` size.
   * @param opts.shard the shard's name for the warning; `checkDocs`: also read the `.docs` file
   *   and compare its SHA-256 (index builds, before they reuse an entry).
   */
  async load(
    identity: FileIdentity,
    params: string,
    opts: { shard?: string; checkDocs?: boolean; numTokens?: number } = {},
  ): Promise<ShardIndexRecord | undefined> {
    const base = this.baseName(identity, params);
    const memo = this.memo.get(base);
    if (memo && !opts.checkDocs) return memo;
    let text: string;
    try {
      text = await fs.promises.readFile(path.join(this.dir, `${base}.json`), 'utf8');
    } catch {
      return undefined;
    }
    const bad = (why: string) => this.damaged(base, `${base}.json`, opts.shard, why);
    const tail = CHECKSUM_TAIL.exec(text);
    if (!tail) return bad('has no checksum (written by another version, or cut short)');
    if (sha256Hex(text.slice(0, tail.index) + '}') !== tail[1]) return bad('does not match its checksum (changed on disk)');
    let data: RecordFile;
    try {
      data = JSON.parse(text) as RecordFile;
    } catch (err) {
      return bad(`is not JSON (${(err as Error).message})`);
    }
    if (!data || typeof data !== 'object' || data.format !== 'token-shard-inspector stream index' || data.version !== STREAM_INDEX_VERSION)
      return bad(`is not a version ${STREAM_INDEX_VERSION} stream index entry`);
    if (data.params !== params) return bad(`was built with other scan parameters (${String(data.params)}, expected ${params})`);
    if (!isFileIdentity(data.identity) || !sameIdentity(data.identity, identity))
      return bad(
        `belongs to another file (identity ${isFileIdentity(data.identity) ? identityKey(data.identity) : 'missing'}, expected ${identityKey(identity)})`,
      );
    const numTokens = opts.numTokens ?? Math.floor(identity.size / 4);
    if (data.numTokens !== numTokens) return bad(`counts ${String(data.numTokens)} tokens, the file has ${numTokens}`);
    if (typeof data.blockEos !== 'string' || typeof data.blockFirstEos !== 'string' || typeof data.blockLastEos !== 'string')
      return bad('has no block counts');
    const bytes = Buffer.from(data.blockEos, 'base64');
    const first = Buffer.from(data.blockFirstEos, 'base64');
    const last = Buffer.from(data.blockLastEos, 'base64');
    const blocks = Math.ceil(data.numTokens / INDEX_BLOCK_TOKENS);
    if (bytes.length !== blocks * 4 || first.length !== blocks * 2 || last.length !== blocks * 2)
      return bad(`has block counts of another length (expected ${blocks} blocks)`);
    if (!Number.isSafeInteger(data.innerDocCount) || data.innerDocCount < 0) return bad('has no valid document count');
    if (data.innerDocCount > 0) {
      const docsFile = path.join(this.dir, `${base}.docs`);
      const docsBad = (why: string) => this.damaged(base, `${base}.docs`, opts.shard, why);
      if (opts.checkDocs) {
        const docs = await fs.promises.readFile(docsFile).catch(() => undefined);
        if (!docs) return docsBad('is missing');
        if (docs.length !== data.innerDocCount * 16)
          return docsBad(`has ${docs.length} bytes, expected ${data.innerDocCount * 16} (16 per document)`);
        if (sha256Hex(docs) !== data.docsSha256) return docsBad('does not match the checksum in its entry (another file copied in?)');
      } else {
        const size = (await fs.promises.stat(docsFile).catch(() => undefined))?.size;
        if (size === undefined) return docsBad('is missing');
        if (size !== data.innerDocCount * 16) return docsBad(`has ${size} bytes, expected ${data.innerDocCount * 16} (16 per document)`);
      }
    }
    if (memo) return memo;
    const blockEos = new Uint32Array(blocks);
    const blockFirstEos = new Uint16Array(blocks);
    const blockLastEos = new Uint16Array(blocks);
    for (let i = 0; i < blocks; i++) {
      blockEos[i] = bytes.readUInt32LE(4 * i);
      blockFirstEos[i] = first.readUInt16LE(2 * i);
      blockLastEos[i] = last.readUInt16LE(2 * i);
    }
    const { format: _f, version: _v, checksum: _c, ...rest } = data as RecordFile & { checksum: string };
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

  /**
   * The document hashes of a record (4 uint32 per document), or undefined when the `.docs` file is
   * missing, of another size, or does not match the SHA-256 its entry holds (one warning, as
   * {@link load}).
   * @param shard the shard's name for the warning.
   */
  async loadDocHashes(rec: ShardIndexRecord, shard?: string): Promise<Uint32Array | undefined> {
    if (rec.innerDocCount === 0) return new Uint32Array(0);
    const base = this.baseName(rec.identity, rec.params);
    let buf: Buffer;
    try {
      buf = await fs.promises.readFile(path.join(this.dir, `${base}.docs`));
    } catch {
      return undefined;
    }
    const bad = (why: string) => this.damaged(base, `${base}.docs`, shard, why);
    if (buf.length !== rec.innerDocCount * 16) return bad(`has ${buf.length} bytes, expected ${rec.innerDocCount * 16} (16 per document)`);
    if (sha256Hex(buf) !== rec.docsSha256) return bad('does not match the checksum in its entry (another file copied in?)');
    const out = new Uint32Array(rec.innerDocCount * 4);
    for (let i = 0; i < out.length; i++) out[i] = buf.readUInt32LE(4 * i);
    return out;
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
   * thread (a manifest of 100,000 tiny shards would otherwise queue 100,000 writes). Same files, same atomic temporary file + rename.
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
    const docs = scan.innerDocHashes.length > 0 ? littleEndian(scan.innerDocHashes) : undefined;
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
      docsSha256: docs ? sha256Hex(docs) : undefined,
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
      docsSha256: rec.docsSha256,
      look,
    };
    // No fsync: an entry is a cache, validated on load (a torn file is rebuilt, never trusted).
    const body = JSON.stringify(entry);
    const json = `${body.slice(0, -1)},"checksum":"${sha256Hex(body)}"}`;
    return { base, rec, json, docs };
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
