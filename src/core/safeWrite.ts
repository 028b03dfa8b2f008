/**
 * Writing an output file without losing anything: the rules of every file the CLI or the core
 * writes where a user pointed it (`export --out`).
 *
 * 1. Never inside a dataset folder, nor onto any file the dataset is read from (shards, manifest,
 *    tokenizer) wherever it lies: both sides are compared as real paths (symbolic links and
 *    `..`/`.` resolved), so `DS/../DS/./x.txt` and a link into the dataset are refused.
 * 2. An existing output is replaced only when asked (`force`), and only when it is a regular
 *    file: never a folder, FIFO, device (`/dev/null` as root) or socket.
 * 3. The data goes to a temporary file in the output's folder under a unique name, created with
 *    `O_EXCL` (an unrelated `FILE.partial`, or anything else, is never opened), and only a
 *    complete file takes the output's name: without `force` by a hard link, which fails if the
 *    name was taken meanwhile; with `force` by a rename, after checking again that what it
 *    replaces is a regular file.
 *
 * Refusals are {@link OutputPathError} (a RangeRequestError: the CLI exits 2); nothing is
 * written before the checks pass.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { RangeRequestError } from './errors';
import { fileKind } from './safeRead';
import type { Dataset } from './dataset';

/** An output path that is refused (inside the dataset, exists without force, not a regular file). Exit 2 in the CLI. */
export class OutputPathError extends RangeRequestError {
  constructor(message: string) {
    super(message);
    this.name = 'OutputPathError';
  }
}

/** What an output must not touch: folders (with everything below) and single files, as given (resolved here). */
export interface ProtectedPaths {
  /** Dataset folders: nothing may be written at or below them. */
  folders: string[];
  /** Files read by the dataset that may lie outside its folder (shards with --allow-outside-root, a --tokenizer). */
  files: string[];
}

/**
 * What a dataset reads, as {@link ProtectedPaths}: its folder (unless it is one `.u32` file opened
 * alone: then only that file), its manifest, side files, tokenizer and every shard file.
 */
export function protectedPathsOf(
  ds: Pick<Dataset, 'root' | 'lone' | 'shards' | 'manifestFile' | 'tokenizerFile' | 'provenance' | 'verification'>,
): ProtectedPaths {
  const files = ds.shards.map((s) => s.path);
  for (const f of [ds.manifestFile, ds.tokenizerFile, ds.provenance?.file, ds.verification?.file]) if (f) files.push(f);
  return { folders: ds.lone ? [] : [ds.root], files };
}

/** The real path of `p`, or of its nearest existing ancestor joined with the rest (for paths that do not exist yet). */
export function realPathOf(p: string): string {
  const abs = path.resolve(p);
  const rest: string[] = [];
  let at = abs;
  for (;;) {
    try {
      const real = fs.realpathSync(at);
      return rest.length ? path.join(real, ...rest.reverse()) : real;
    } catch {
      const up = path.dirname(at);
      if (up === at) return abs;
      rest.push(path.basename(at));
      at = up;
    }
  }
}

/** True when `p` is `folder` or below it (both real paths). */
export function isInside(p: string, folder: string): boolean {
  const rel = path.relative(folder, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Checks an output path against the rules (module comment, 1 and 2) before anything is written.
 * @param flag how messages name the option (`--out`).
 * @returns the absolute path to write (the link itself when `file` is a symbolic link to a
 *   regular file outside the dataset; the rename then replaces the link, never its target).
 * @throws OutputPathError naming the path and the rule.
 */
export function checkOutputPath(file: string, protect: ProtectedPaths, force: boolean, flag = '--out'): string {
  if (file.trim() === '') throw new OutputPathError(`${flag} "": expected a file name`);
  const abs = path.resolve(file);
  const base = path.basename(abs);
  if (file.endsWith('/') || base === '.' || base === '..' || abs === path.parse(abs).root)
    throw new OutputPathError(`${flag} ${file}: names a folder; expected a file name`);
  const dir = path.dirname(abs);
  let dirSt: fs.Stats;
  try {
    dirSt = fs.statSync(dir);
  } catch {
    throw new OutputPathError(`${flag} ${file}: the folder ${dir} does not exist`);
  }
  if (!dirSt.isDirectory()) throw new OutputPathError(`${flag} ${file}: ${dir} is not a folder`);
  // The output as it will be reached: the real folder plus the name, and, when the name is a
  // link, where the link leads (both must stay out of the dataset).
  const places = [path.join(fs.realpathSync(dir), base)];
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(abs);
  } catch {
    /* does not exist yet */
  }
  if (st?.isSymbolicLink()) places.push(realPathOf(abs));
  const folders = protect.folders.map(realPathOf);
  const files = new Set(protect.files.map(realPathOf));
  for (const p of places) {
    const inFolder = folders.find((f) => isInside(p, f));
    if (inFolder !== undefined)
      throw new OutputPathError(
        `${flag} ${file}: is inside the dataset folder ${inFolder}; nothing is written there (choose a file elsewhere)`,
      );
    if (files.has(p)) throw new OutputPathError(`${flag} ${file}: is a file the dataset is read from (${p}); choose another file`);
  }
  if (st) {
    const target = st.isSymbolicLink() ? statOrUndefined(abs) : st;
    if (target && !target.isFile())
      throw new OutputPathError(`${flag} ${file}: is ${fileKind(target)}; only a regular file is ever replaced`);
    if (!force) throw new OutputPathError(`${flag} ${file}: exists; pass --force to replace it`);
  }
  return abs;
}

function statOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}

/** A new temporary file next to `file`, created with O_EXCL under a unique name: `.NAME.PID.RANDOM.partial`. */
export async function createPartialFile(file: string): Promise<{ path: string; handle: fs.promises.FileHandle }> {
  const p = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.partial`);
  const handle = await fs.promises.open(p, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o644);
  return { path: p, handle };
}

/**
 * Gives the complete temporary file `partial` the name `file` (module comment, rule 3).
 * @throws OutputPathError when `file` appeared meanwhile (without force) or is no longer a
 *   regular file; the file-system error otherwise. `partial` is left for the caller to remove.
 */
export async function publishPartialFile(partial: string, file: string, force: boolean, flag = '--out'): Promise<void> {
  if (!force) {
    try {
      await fs.promises.link(partial, file);
      await fs.promises.rm(partial, { force: true });
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new OutputPathError(`${flag} ${file}: was created while the export ran; pass --force to replace it`);
      // File systems without hard links: check, then rename (the window between is the check's).
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw err;
      if (statOrUndefined(file) || fs.existsSync(file))
        throw new OutputPathError(`${flag} ${file}: was created while the export ran; pass --force to replace it`);
    }
  } else {
    let st: fs.Stats | undefined;
    try {
      st = await fs.promises.lstat(file);
    } catch {
      /* gone: nothing to replace */
    }
    if (st && !st.isFile() && !st.isSymbolicLink())
      throw new OutputPathError(`${flag} ${file}: is ${fileKind(st)}; only a regular file is ever replaced`);
  }
  await fs.promises.rename(partial, file);
}
