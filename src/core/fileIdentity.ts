/**
 * File identity for caches: what a cached fact about a file (a shard's sha256, its stream index,
 * a search result) is keyed on, so that the fact is trusted only for the very same file content.
 *
 * The identity is (device, inode, size, mtime, ctime), all from one `stat` with nanosecond times
 * (`{ bigint: true }`). Path alone is not enough (a file replaced by `mv` keeps the path); size and
 * mtime are not enough either: `touch -d`/`os.utime` can restore an mtime after the content was
 * changed, but the kernel sets ctime to "now" on every write and on every `utime`, and user space
 * cannot set ctime. So a flipped byte with a restored mtime still changes the key.
 *
 * Used by the verify cache (`verify/cache.ts`), the stream index (`streamIndex/`) and the search
 * cache. One function to get it ({@link statIdentity} / {@link identityOfStats}); one key format
 * ({@link identityKey}); one comparison ({@link sameIdentity}).
 *
 * Limits worth knowing: on file systems without stable inodes (some FUSE/network mounts) the key
 * changes more often than needed (a rebuild, never a wrong answer); a writer that changes a file
 * within the same nanosecond tick of ctime and keeps the size is not detectable by any stat.
 */
import * as fs from 'fs';
import { flatString } from './flatString';

/**
 * The identity of one file at one moment. Numbers are decimal strings of the kernel's values so
 * that 64-bit inode/device numbers and nanosecond times keep every digit (JSON-safe as well).
 */
export interface FileIdentity {
  /** Device id (`st_dev`), decimal. */
  dev: string;
  /** Inode number (`st_ino`), decimal. */
  ino: string;
  /** Size in bytes (a plain number: sizes stay below 2^53). */
  size: number;
  /** Modification time in nanoseconds since the epoch (`st_mtim`), decimal. */
  mtimeNs: string;
  /** Status-change time in nanoseconds since the epoch (`st_ctim`), decimal. */
  ctimeNs: string;
}

/**
 * The identity of `st`, which must come from a `stat`/`fstat` called with `{ bigint: true }`
 * (nanosecond times and exact 64-bit numbers).
 */
export function identityOfStats(st: fs.BigIntStats): FileIdentity {
  return {
    dev: st.dev.toString(),
    ino: st.ino.toString(),
    size: Number(st.size),
    mtimeNs: st.mtimeNs.toString(),
    ctimeNs: st.ctimeNs.toString(),
  };
}

/**
 * Stats `file` (following symlinks) and returns its identity.
 * @throws the file-system error (`ENOENT` when it does not exist, …).
 */
export async function statIdentity(file: string): Promise<FileIdentity> {
  return identityOfStats(await fs.promises.stat(file, { bigint: true }));
}

/**
 * Identity of an open file descriptor (what a reader actually reads, even if the path is replaced).
 * @throws the file-system error.
 */
export function fstatIdentity(fd: number): Promise<FileIdentity> {
  return new Promise((resolve, reject) => fs.fstat(fd, { bigint: true }, (err, st) => (err ? reject(err) : resolve(identityOfStats(st)))));
}

/** The stable string key of an identity: `dev:ino:size:mtimeNs:ctimeNs` (decimal). */
export function identityKey(id: FileIdentity): string {
  return `${id.dev}:${id.ino}:${id.size}:${id.mtimeNs}:${id.ctimeNs}`;
}

/**
 * {@link identityKey} of `st` (from `stat` with `{ bigint: true }`) without building the identity
 * object first: one flat string, for caches that keep a key per shard (100,000 shards).
 */
export function identityKeyOfStats(st: fs.BigIntStats): string {
  return flatString(`${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`);
}

/** The identity an {@link identityKey} was made from. */
export function identityOfKey(key: string): FileIdentity {
  const [dev, ino, size, mtimeNs, ctimeNs] = key.split(':');
  return { dev, ino, size: Number(size), mtimeNs, ctimeNs };
}

/** True when both identities name the same file in the same state (every field equal). */
export function sameIdentity(a: FileIdentity | undefined, b: FileIdentity | undefined): boolean {
  return !!a && !!b && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/**
 * How a file changed between two identities, as the end of a sentence starting with its path:
 * "was replaced by another file", "grew from 4,000 to 4,004 bytes", "shrank from … to … bytes",
 * "was modified" (same size, another mtime or ctime); undefined when they are the same.
 */
export function describeIdentityChange(before: FileIdentity, after: FileIdentity): string | undefined {
  if (before.dev !== after.dev || before.ino !== after.ino) return 'was replaced by another file';
  if (before.size !== after.size)
    return `${after.size > before.size ? 'grew' : 'shrank'} from ${before.size.toLocaleString('en-US')} to ${after.size.toLocaleString('en-US')} bytes`;
  if (before.mtimeNs !== after.mtimeNs || before.ctimeNs !== after.ctimeNs) return 'was modified';
  return undefined;
}

/** True when `v` has the shape of a {@link FileIdentity} (for reading caches from disk). */
export function isFileIdentity(v: unknown): v is FileIdentity {
  const o = v as FileIdentity;
  const dec = (s: unknown) => typeof s === 'string' && /^\d{1,40}$/.test(s);
  return (
    typeof o === 'object' &&
    o !== null &&
    dec(o.dev) &&
    dec(o.ino) &&
    Number.isSafeInteger(o.size) &&
    o.size >= 0 &&
    dec(o.mtimeNs) &&
    dec(o.ctimeNs)
  );
}
