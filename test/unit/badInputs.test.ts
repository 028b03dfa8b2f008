/**
 * The bad-input corpus (scripts/make-bad-inputs.mjs): for every case the CLI exits
 * with the expected code and a message naming the file and line, byte offset, field or flag;
 * the core reports the same (a problem, or a typed error); and nothing in the case folder changed
 * (every file hashed before and after). The CLI runs in-process through `main()` (the same code
 * as `dist/cli.js`), which also proves that nothing escapes as an untyped exception.
 */
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { openDataset } from '../../src/core/dataset';
import { DataError } from '../../src/core/errors';
import { loadTokenizer } from '../../src/core/tokenizer';
import { terminalSafe } from '../../src/core/untrusted';
import { runCliInProcess } from './cliInProcess';
import { IndexStore, defaultCliIndexDir, scanParamsKey } from '../../src/core/streamIndex/entryStore';
import { indexParamsFor } from '../../src/core/streamIndex/indexShards';
import { identityOfStats } from '../../src/core/fileIdentity';
import { cliPath, repoRoot, sampleDir } from './fixtures';

interface Case {
  name: string;
  dir: string;
  description: string;
  args: string[];
  code: number;
  expect: string;
  core?: 'dataset' | 'tokenizer';
  /** Match `expect` against stdout (default: stderr; `info`: both). */
  stream?: 'stdout';
  /** The exit code comes from a report (warnings, a listing), not from one `error:` line. */
  report?: boolean;
  /** Where standard output goes. */
  stdout?: '/dev/full';
  /** Environment for the run ({root}, {scratch} replaced). */
  env?: Record<string, string>;
  /** Checks of the scratch folder after the run (file names in it). */
  scratchAfter?: { unchanged?: string[]; absent?: string[]; present?: string[] };
  /** Run `dist/cli.js` as a process: `head` closes its stdout after the first chunk; `interrupt` sends SIGINT while it reads stdin. */
  spawn?: 'head' | 'interrupt';
  /** CLI runs made before the checked one (their results are not checked). */
  before?: string[][];
  /** Damage done to a shard's stream-index entry (in the CLI's cache folder) after `before`. */
  damageIndex?: { shard: number; how: 'eos-count-plus-5' | 'copy-of-shard-0' };
}

/** The files of shard `n`'s stream-index entry in the CLI's cache folder (`<base>.json`). */
async function indexEntryFile(root: string, n: number): Promise<string> {
  const ds = await openDataset(root);
  const tok = await loadTokenizer(ds.tokenizerFile!);
  const key = scanParamsKey(indexParamsFor(ds, tok));
  tok.dispose?.();
  const base = new IndexStore(defaultCliIndexDir()).baseName(identityOfStats(fs.statSync(ds.shards[n].path, { bigint: true })), key);
  return path.join(defaultCliIndexDir(), `${base}.json`);
}

/** Damages shard `n`'s stream-index entry as the case says. */
async function damageIndexEntry(root: string, d: NonNullable<Case['damageIndex']>): Promise<void> {
  const file = await indexEntryFile(root, d.shard);
  if (d.how === 'copy-of-shard-0') fs.copyFileSync(await indexEntryFile(root, 0), file);
  else
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replace(/"eosCount":(\d+)/, (_, n: string) => `"eosCount":${Number(n) + 5}`),
    );
}

/** sha256 of every file under `dir` (symbolic links by their target text), by relative path. */
export function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (e.isSymbolicLink()) out[rel] = `link:${fs.readlinkSync(p)}`;
      else if (e.isFIFO())
        out[rel] = 'fifo'; // never opened: it would block
      else if (fs.statSync(p).size > 1 << 26) {
        const st = fs.statSync(p); // a big sparse file: its size and times stand for it
        out[rel] = `big:${st.size}:${st.mtimeMs}:${st.ino}`;
      } else if (e.isDirectory()) {
        out[rel + '/'] = 'dir';
        walk(p);
      } else out[rel] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/** Runs the CLI in-process with standard output as a terminal (marks on), or to `/dev/full`. */
const cli = (args: string[], to?: '/dev/full') => runCliInProcess(args, { stdoutTo: to, tty: true });

/** Runs `dist/cli.js` as a process (see {@link Case.spawn}). */
function cliProcess(
  args: string[],
  mode: 'head' | 'interrupt',
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath(), ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let e = '';
    child.stderr.on('data', (d) => (e += d));
    if (mode === 'head') child.stdout.once('data', () => child.stdout.destroy());
    else {
      child.stdout.resume();
      // Standard input stays open (never ended): the command waits on it until Ctrl-C. Node
      // catches SIGINT from its start, so readiness is read from the pipe: once the child has
      // drained 1 MiB of it, it is in its read loop (its SIGINT handler was installed before).
      if (child.stdin.write(Buffer.alloc(1 << 20, 'a'))) child.kill('SIGINT');
      else child.stdin.once('drain', () => child.kill('SIGINT'));
    }
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? -1 : 0), stdout: '', stderr: e }));
  });
}

describe('bad-input corpus: exit code, a message naming file/line/offset, nothing changed', function () {
  this.timeout(0);
  let out: string;
  let cases: Case[];
  const savedCache = process.env.XDG_CACHE_HOME;
  before(async () => {
    const sample = sampleDir();
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-bad-inputs-'));
    process.env.XDG_CACHE_HOME = path.join(out, '.cache'); // verify/index caches stay out of ~ and out of the cases
    const m = await import(pathToFileURL(path.join(repoRoot(), 'scripts', 'make-bad-inputs.mjs')).href);
    cases = (await m.makeBadInputs({ out: path.join(out, 'corpus'), sampleRoot: sample, quiet: true })).cases;
  });
  after(() => {
    if (savedCache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = savedCache;
    if (out) fs.rmSync(out, { recursive: true, force: true });
  });

  it('has at least 60 cases', () => {
    assert.ok(cases.length >= 60, `${cases.length} cases`);
  });

  it('the CLI: every case exits as expected with one message naming the place; the folder is unchanged', async () => {
    const failures: string[] = [];
    for (const c of cases) {
      const root = path.join(out, 'corpus', c.dir);
      const scratch = path.join(out, 'corpus', '_scratch', c.dir);
      const fill = (a: string) => a.replaceAll('{root}', root).replaceAll('{scratch}', scratch);
      for (const b of c.before ?? []) await cli(b.map(fill));
      if (c.damageIndex) await damageIndexEntry(root, c.damageIndex);
      const before = hashTree(root);
      const scratchBefore = fs.existsSync(scratch) ? hashTree(scratch) : {};
      const saved = { ...process.env };
      for (const [k, v] of Object.entries(c.env ?? {})) process.env[k] = fill(v);
      let r: { code: number; stdout: string; stderr: string };
      try {
        r = c.spawn ? await cliProcess(c.args.map(fill), c.spawn, { ...process.env }) : await cli(c.args.map(fill), c.stdout);
      } finally {
        for (const k of Object.keys(c.env ?? {})) {
          if (saved[k] === undefined) delete process.env[k];
          else process.env[k] = saved[k];
        }
      }
      const text = c.stream === 'stdout' ? r.stdout : c.args[0] === 'info' ? r.stdout + r.stderr : r.stderr;
      if (r.code !== c.code) failures.push(`${c.name}: exit ${r.code}, expected ${c.code}: ${text.slice(0, 400)}`);
      else if (!new RegExp(c.expect).test(text)) failures.push(`${c.name}: output does not match /${c.expect}/: ${text.slice(0, 400)}`);
      if (
        c.code !== 0 &&
        c.code !== 130 &&
        !c.report &&
        c.args[0] !== 'info' &&
        r.stderr.split('\n').filter((l) => l.startsWith('error:')).length !== 1
      ) {
        failures.push(`${c.name}: expected exactly one "error:" line on stderr: ${r.stderr.slice(0, 400)}`);
      }
      const after = fs.existsSync(scratch) ? hashTree(scratch) : {};
      for (const f of c.scratchAfter?.unchanged ?? [])
        if (after[f] === undefined || after[f] !== scratchBefore[f]) failures.push(`${c.name}: ${f} in the scratch folder changed`);
      for (const f of c.scratchAfter?.present ?? [])
        if (after[f] === undefined) failures.push(`${c.name}: ${f} is missing from the scratch folder`);
      for (const f of c.scratchAfter?.absent ?? []) if (after[f] !== undefined) failures.push(`${c.name}: ${f} should not exist`);
      // Nothing is left behind: no temporary file of an export in the scratch folder.
      for (const f of Object.keys(after)) if (/\.partial$/.test(f) && scratchBefore[f] === undefined) failures.push(`${c.name}: left ${f}`);
      // eslint-disable-next-line no-control-regex
      if (/\u001b|\u009b/.test(r.stdout + r.stderr)) failures.push(`${c.name}: a raw control character reached the terminal`);
      assert.deepStrictEqual(hashTree(root), before, `${c.name}: the case folder changed`);
    }
    assert.deepStrictEqual(failures, []);
  });

  it('the core: the same faults come back as problems or typed errors (DataError), never anything else', async () => {
    const failures: string[] = [];
    for (const c of cases.filter((x) => x.core)) {
      const root = path.join(out, 'corpus', c.dir);
      const before = hashTree(root);
      const re = new RegExp(c.expect);
      try {
        if (c.core === 'dataset') {
          const ds = await openDataset(root);
          // The core keeps names as they are; display code makes them safe (as the CLI does here).
          const shown = ds.problems.map((p) => terminalSafe(p.message)).join('\n');
          // The dtype diagnosis is the CLI's (sampling reads); everything else is in the core's problems.
          if (!re.test(shown)) failures.push(`${c.name}: no problem matches /${c.expect}/: ${shown.slice(0, 300)}`);
          if (!ds.problems.every((p) => p.file && (p.line !== undefined || !/ line \d/.test(p.message))))
            failures.push(`${c.name}: a problem names a line but has none`);
        } else {
          const tok = await loadTokenizer(path.join(root, 'tokenizer', 'tokenizer.json'));
          try {
            if (c.args[0] === 'encode') {
              const limit = c.args.indexOf('--time-limit');
              await tok.encode(c.args[2], { timeLimitMs: limit > 0 ? Number(c.args[limit + 1]) * 1000 : undefined });
            }
          } finally {
            tok.dispose?.();
          }
          failures.push(`${c.name}: the tokenizer loaded and encoded`);
        }
      } catch (e) {
        if (!(e instanceof DataError)) failures.push(`${c.name}: untyped ${(e as Error).name}: ${(e as Error).message}`);
        else if (!re.test(e.message)) failures.push(`${c.name}: ${e.message} does not match /${c.expect}/`);
        else if (!e.file) failures.push(`${c.name}: the DataError does not carry the file`);
      }
      assert.deepStrictEqual(hashTree(root), before, `${c.name}: the case folder changed`);
    }
    assert.deepStrictEqual(failures, []);
  });
});
