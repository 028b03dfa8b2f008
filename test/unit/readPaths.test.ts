/**
 * The two read paths of `TokenStream` (src/core/stream.ts): the asynchronous one (libuv thread
 * pool, the extension host) and the synchronous one (`readSync`, and `read` on a stream opened
 * with `blockingReads`: the CLI and worker threads). Over every dataset of format-fixtures'
 * fixtures.json matrix (scripts/make-format-fixtures.mjs, written as each format's writer lays
 * it out), both return exactly the ids of the numpy reference (scripts/reference_formats.py) at
 * the first and last tokens, ranges across every file boundary, and seeded random ranges; a file
 * truncated after opening gives the same one-line error on both paths.
 */
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { Dataset, OpenPathOptions, openPath } from '../../src/core/dataset';
import { FormatName, TokenDtype } from '../../src/core/formats/types';
import { repoRoot } from './fixtures';
import { python3Cached } from './pyref';

const REPO = repoRoot();
const FIXTURES = path.join(REPO, 'format-fixtures');
const hasNumpy = spawnSync('python3', ['-c', 'import numpy, regex'], { stdio: 'ignore' }).status === 0;

/** The fields of a fixtures.json entry these tests read. */
interface FixtureEntry {
  name: string;
  format: string;
  dtype: string;
  path: string;
}

/** What `scripts/reference_formats.py --ranges` prints (the fields read here). */
interface Reference {
  files: { tokens: number }[];
  stored_tokens: number;
  ranges: number[][];
}

/** Runs the reference reader on `p` as `format` through the reference cache. */
function reference(p: string, format: string, dtype: string | undefined, ranges: [number, number][]): Reference {
  const args = [path.join(REPO, 'scripts', 'reference_formats.py'), p, '--format', format, '--ranges', JSON.stringify(ranges)];
  if (dtype) args.push('--dtype', dtype);
  const around = fs.statSync(p).isDirectory() ? p : path.dirname(p);
  return JSON.parse(python3Cached(args, [around], { maxBuffer: 1 << 28 })) as Reference;
}

/** The first differences of two id lists, as "offset: expected A, got B". */
function diffs(what: string, start: number, want: number[], got: ArrayLike<number>): string[] {
  if (want.length !== got.length) return [`${what} at ${start}: expected ${want.length} ids, got ${got.length}`];
  const out: string[] = [];
  for (let i = 0; i < want.length && out.length < 3; i++)
    if (want[i] !== got[i]) out.push(`${what}: offset ${start + i}: expected id ${want[i]}, got ${got[i]}`);
  return out;
}

describe('read paths: the synchronous read (CLI, workers) equals the asynchronous one and numpy, for every format fixture', function () {
  this.timeout(0);
  if (!hasNumpy) {
    it('every read-path test — skipped: python3 with numpy is not available', function () {
      this.skip();
    });
    return;
  }
  execFileSync(process.execPath, [path.join(REPO, 'scripts', 'make-format-fixtures.mjs'), '--bad', '--quiet', '--out', FIXTURES], {
    stdio: 'inherit',
  });
  const { fixtures } = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fixtures.json'), 'utf8')) as { fixtures: FixtureEntry[] };
  let mulberry32: (seed: number) => () => number;
  before(async () => {
    ({ mulberry32 } = (await import(pathToFileURL(path.join(REPO, 'scripts', 'lib', 'mulberry32.mjs')).href)) as {
      mulberry32(seed: number): () => number;
    });
  });

  /** Opening options of a fixture: a headerless file does not say its dtype, so the writer's is given (as the reference takes it). */
  const optsOf = (fx: FixtureEntry, blocking: boolean): OpenPathOptions => {
    const headerless = fx.format === 'raw' && !fx.path.endsWith('.npy');
    return { format: fx.format as FormatName, dtype: headerless ? (fx.dtype as TokenDtype) : undefined, blockingReads: blocking };
  };

  it('covers every format of the matrix', () => {
    assert.deepStrictEqual([...new Set(fixtures.map((f) => f.format))].sort(), [
      'datatrove',
      'dolma',
      'litdata',
      'llm.c',
      'mds',
      'megatron',
      'raw',
    ]);
  });

  fixtures.forEach((fx, index) => {
    it(`${fx.name} (${fx.format}, ${fx.dtype}): read, blocking read and readSync equal numpy at file edges and 24 seeded ranges`, async () => {
      const abs = path.join(FIXTURES, fx.path);
      const headerless = fx.format === 'raw' && !fx.path.endsWith('.npy');
      const refDtype = headerless ? fx.dtype : undefined;
      const shape = reference(abs, fx.format, refDtype, [[0, 1]]);
      const n = shape.stored_tokens;
      const ranges: [number, number][] = [
        [0, Math.min(n, 97)],
        [n - 1, 1],
        [0, n],
      ];
      // Every file boundary: ranges ending at it, starting at it, and crossing it (odd lengths, so uint16 pairs split).
      for (let i = 0, at = 0; i < shape.files.length - 1; i++) {
        at += shape.files[i].tokens;
        for (const [s, e] of [
          [at - 3, at],
          [at, at + 5],
          [at - 7, at + 9],
          [at - 1, at + 1],
        ])
          if (s >= 0 && e <= n && e > s) ranges.push([s, e - s]);
      }
      const rand = mulberry32(20261203 + index);
      for (let i = 0; i < 24; i++) {
        const c = 1 + Math.floor(rand() * Math.min(n, 4099));
        ranges.push([Math.floor(rand() * (n - c + 1)), c]);
      }
      const want = reference(abs, fx.format, refDtype, ranges).ranges;
      const pool = (await openPath(abs, {}, optsOf(fx, false)))!;
      const blocking = (await openPath(abs, {}, optsOf(fx, true)))!;
      assert.deepStrictEqual(
        [pool.stream.blocking, blocking.stream.blocking, pool.storedTokens, blocking.storedTokens],
        [false, true, n, n],
      );
      const into = new Uint32Array(4099);
      const bad: string[] = [];
      for (const [k, [s, c]] of ranges.entries()) {
        bad.push(...diffs(`read(${s}, ${c})`, s, want[k], await pool.stream.read(s, c)));
        bad.push(...diffs(`readSync(${s}, ${c})`, s, want[k], pool.stream.readSync(s, c)));
        bad.push(...diffs(`blocking read(${s}, ${c})`, s, want[k], await blocking.stream.read(s, c)));
        // Into a reused buffer, as scans read.
        if (c <= into.length) bad.push(...diffs(`readSync(${s}, ${c}, into)`, s, want[k], blocking.stream.readSync(s, c, into)));
      }
      await pool.stream.close();
      await blocking.stream.close();
      assert.strictEqual(blocking.stream.openHandles, 0, 'close() closes the descriptors of the synchronous path');
      assert.deepStrictEqual(bad, []);
    });
  });

  it('a file truncated after opening gives the same one-line error on both paths (every dtype width)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-read-paths-'));
    try {
      for (const name of ['llmc-gpt2', 'llmc-llama3-v7', 'megatron-int32-eod']) {
        const fx = fixtures.find((f) => f.name === name)!;
        const copy = path.join(dir, name);
        fs.cpSync(path.join(FIXTURES, fx.path), copy, { recursive: true });
        const open = async (blocking: boolean): Promise<Dataset> => (await openPath(copy, {}, optsOf(fx, blocking)))!;
        const [a, b] = [await open(false), await open(true)];
        const last = a.format!.files[a.format!.files.length - 1];
        fs.truncateSync(last.path, fs.statSync(last.path).size - 10);
        const n = a.storedTokens;
        const messages = async (read: () => Promise<Uint32Array> | Uint32Array): Promise<string> => {
          try {
            await read();
          } catch (e) {
            return (e as Error).message;
          }
          return 'no error';
        };
        const got = [
          await messages(() => a.stream.read(n - 64, 64)),
          await messages(() => a.stream.readSync(n - 64, 64)),
          await messages(() => b.stream.read(n - 64, 64)),
        ];
        assert.match(
          got[0],
          new RegExp(`^${last.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: short read at byte [0-9,]+: the file ends before`),
          name,
        );
        assert.ok(!got[0].includes('\n'), 'one line');
        assert.deepStrictEqual(got, [got[0], got[0], got[0]], `${name}: the paths' errors differ`);
        await a.stream.close();
        await b.stream.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
