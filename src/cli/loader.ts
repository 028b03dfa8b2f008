/**
 * `dist/cli.js`, the `token-shards` executable: a small loader that runs the CLI bundle
 * (`dist/cli-main.js`, built from `main.ts`) with V8's code cache, so a command does not compile
 * the 1.1 MB bundle again on every start (Node 20 has no `module.enableCompileCache`). Measured
 * whole-process: compiling the bundle costs ~20 ms of the ~75 ms the CLI takes before a command
 * runs; with the cache ~5 ms.
 *
 * The cache: `$XDG_CACHE_HOME/token-shard-inspector/code-cache/cli-<key>.bin` (else
 * `~/.cache/…`; never next to the data), `<key>` a hash of the bundle's text, the Node version and
 * the architecture. The file is a header line, the sha256 of the payload and V8's cached data; it
 * is used only when that hash matches (a damaged file is ignored) and V8 accepts the data (V8
 * checks its own version, flags and the source; it rejects a mismatch). A run that found no usable
 * cache writes one as the process exits (after the command ran, so the functions it compiled are
 * in it), through a temporary file and a rename, and deletes the caches of other bundles; it
 * writes nothing when the command line says `--no-cache` (write no cache at all), or when the
 * cache folder lies inside a folder named on the command line (or the folder of a file named
 * there): nothing is ever written into a dataset. Any failure to read or
 * write the cache only costs the compile: the CLI runs the same either way.
 *
 * Imports Node's modules only (this file is bundled alone and must stay small).
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vm from 'vm';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- `module` is a CommonJS export= (the Module class)
import Module = require('module');

/** First line of a cache file (the format's name and version). */
export const CODE_CACHE_MAGIC = 'token-shard-inspector V8 code cache 1\n';

/** The folder of the CLI's code cache (see the file header). */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'token-shard-inspector', 'code-cache');
}

/** The cache file's name for a bundle's text (`cli-<32 hex>.bin`). */
export function codeCacheName(source: string): string {
  const key = crypto.createHash('sha256').update(source).update(`\0${process.version}\0${process.arch}`).digest('hex').slice(0, 32);
  return `cli-${key}.bin`;
}

/** V8's cached data from a cache file, or undefined when it is missing, damaged or of another format. */
export function readCodeCache(file: string): Buffer | undefined {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return undefined;
  }
  const head = CODE_CACHE_MAGIC.length;
  if (buf.length < head + 65 || buf.toString('latin1', 0, head) !== CODE_CACHE_MAGIC || buf[head + 64] !== 0x0a) return undefined;
  const payload = buf.subarray(head + 65);
  const sum = crypto.createHash('sha256').update(payload).digest('hex');
  return sum === buf.toString('latin1', head, head + 64) ? payload : undefined;
}

/** Writes a cache file (header, checksum, data) through a temporary file; removes other bundles' caches. Never throws. */
export function writeCodeCache(file: string, data: Buffer): void {
  const dir = path.dirname(file);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(dir, { recursive: true });
    const sum = crypto.createHash('sha256').update(data).digest('hex');
    fs.writeFileSync(tmp, Buffer.concat([Buffer.from(`${CODE_CACHE_MAGIC}${sum}\n`, 'latin1'), data]));
    fs.renameSync(tmp, file);
    for (const name of fs.readdirSync(dir))
      if (/^cli-[0-9a-f]{32}\.bin$/.test(name) && name !== path.basename(file)) fs.rmSync(path.join(dir, name), { force: true });
  } catch {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      /* nothing to clean */
    }
  }
}

/** `p` with symbolic links resolved, for a path that may not exist yet (its nearest existing folder is resolved). */
function realPath(p: string): string {
  const abs = path.resolve(p);
  try {
    return fs.realpathSync(abs);
  } catch {
    const up = path.dirname(abs);
    return up === abs ? abs : path.join(realPath(up), path.basename(abs));
  }
}

/**
 * True when `dir` lies inside a folder named in `args` or the folder of a file named there (a
 * dataset the command reads; see the file header).
 */
export function insideArgumentFolder(dir: string, args: readonly string[]): boolean {
  const real = realPath(dir);
  for (const a of args) {
    let st: fs.Stats;
    try {
      st = fs.statSync(a);
    } catch {
      continue;
    }
    const folder = realPath(st.isDirectory() ? a : path.dirname(a));
    const rel = path.relative(folder, real);
    if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) return true;
  }
  return false;
}

/** Runs `dist/cli-main.js` as the main module, compiled from the code cache when one is usable. */
function run(): void {
  const file = path.join(__dirname, 'cli-main.js');
  const source = fs.readFileSync(file, 'utf8');
  const cacheFile = path.join(codeCacheDir(), codeCacheName(source));
  const cached = readCodeCache(cacheFile);
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData: cached });
  if (!cached || script.cachedDataRejected)
    process.once('exit', () => {
      const args = process.argv.slice(2);
      if (!args.includes('--no-cache') && !insideArgumentFolder(path.dirname(cacheFile), args))
        writeCodeCache(cacheFile, script.createCachedData());
    });
  const m = new Module(file, module);
  m.filename = file;
  const req = Module.createRequire(file);
  // The bundle runs its command when it is the main module (`require.main === module`).
  req.main = m;
  const fn = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: Module,
    filename: string,
    dirname: string,
  ) => void;
  fn.call(m.exports, m.exports, req, m, file, path.dirname(file));
}

if (require.main === module) run();
