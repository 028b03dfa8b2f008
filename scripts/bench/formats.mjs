/**
 * Reading and `count` over the field's formats against the same tokens as a `.u32` file (goal:
 * ≥ 0.95× the `.u32` speed) and against numpy memmap reads of the same file (goal: ≥ 1×). The
 * files are written here from the sample's real tokens (the dolma2 tokenizer), repeated up to
 * `TSI_BENCH_FORMAT_TOKENS` tokens (default 100,000,000 = 400 MB per uint32 file; the issue's
 * 2 GB is `5e8`):
 * - `tokens.u32` (the dataset card's layout, one lone shard);
 * - Megatron `corpus.bin` (int32, code 4) + `corpus.idx`, one sequence per document;
 * - llm.c `llama3.bin` (magic 20240801 v7, uint32);
 * - llm.c `gpt2.bin` (magic 20240520 v1, uint16, the ids mod 50,257) against `gpt2.u32` with the
 *   same ids: the cost of widening.
 *
 * Paired, alternating rounds (`TSI_BENCH_FORMAT_ROUNDS`, default 7; the noise of a shared
 * machine drifts over seconds, so each round reads the format's file and its `.u32` back to back
 * and the ratio is taken per round, the order swapped every round: A B, B A, …): reads are every file whole in 1M-token `TokenStream.read`s
 * of a stream opened as the CLI and the workers open it (`blockingReads`: the synchronous path,
 * `pread` on the calling thread) — a row per format also gives the extension host's asynchronous
 * path (the libuv thread pool) against it,
 * after one untimed read of each (page cache warm for both); numpy is one python process copying
 * `np.memmap` chunks of the same size into one reused uint32 array (as ours go into one reused
 * `into`), one BLAS thread, right after our read of the same file in each round;
 * `count` is the CLI counting the EOS id (`--ids`), the format's file and `.u32` alternately,
 * after one warming round. Every row gives the **median** of the per-round ratios of wall time
 * and, in its note, the median CPU seconds (user + system, all threads: `process.cpuUsage` for
 * our reads, `time.process_time` for numpy (equal to its `thread_time` with one BLAS thread),
 * the child's rusage for `count`), the median per-round
 * CPU ratio and the min–max of the wall ratios. `.u32` against a copy of itself gives the noise
 * floor of such a ratio on this machine. That floor is not only noise: two files with the same
 * bytes can be cached differently (ext4 with large folios, Linux 6.18: when measured, 1,370 MB of
 * `tokens.u32`'s 1,967 MB of cached pages were PMD-mappable folios, 37 MB of its copy's), and a
 * bare `readSync` loop over `llama3.bin` cost 0.155–0.164 CPU-s at offsets 0, 1,024 and 4,096
 * against 0.098–0.116 over `tokens.u32` at the same offsets: the file, not its header. So each
 * format also gets a row against a bare `FileHandle.read` loop over its own bytes, the same file.
 *
 * Bound rows (Node has no mmap: every reader here copies through read()): per format, a bare
 * `readSync` loop over the same bytes against numpy (the most a read()-based reader gets), and
 * each read split into two concurrent preads against our read (the idea of running the kernel's
 * copy on both cores); once, a user-space memcpy of cached bytes against the kernel's read()
 * copy of the same bytes.
 *
 * Run: `TSI_BENCH_FORMAT_TOKENS=500000000 npm run bench -- --only formats` (2 GB per uint32 file;
 * the files, ~9 GB, are written once into bench-data/formats-N/). `TSI_BENCH_FORMAT_COUNT=0`
 * leaves out the `count` rows.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const CHUNK = 1 << 20;

/** Paired rounds per comparison. */
const ROUNDS = Math.max(1, Number(process.env.TSI_BENCH_FORMAT_ROUNDS ?? 7));

/**
 * One numpy memmap read of a file (one python process; its figures exclude start-up). Each
 * 1M-token chunk is copied (and widened) into one reused uint32 array, as our reads go into one
 * reused `into` buffer. Run with one BLAS/OpenMP thread ({@link NUMPY_ENV}): numpy's import
 * starts OpenBLAS's worker threads, which spin for a while after start-up and added up to 0.06 CPU-s
 * to `process_time` in a read of 0.08–0.15 s, and on two shared cores they also compete with
 * numpy's own thread; CPU is reported as `process_time` (every thread) and `thread_time` (the
 * reading thread), which are then equal.
 */
const NUMPY = `
import json, sys, time, numpy as np
name, file, dtype, offset = sys.argv[1].split(':')
m = np.memmap(file, dtype=dtype, mode='r', offset=int(offset))
out = np.empty(${CHUNK}, dtype=np.uint32)
t = time.perf_counter(); c = time.process_time(); th = time.thread_time(); s = 0
for i in range(0, len(m), ${CHUNK}):
    k = min(${CHUNK}, len(m) - i)
    np.copyto(out[:k], m[i:i + k], casting='unsafe')  # a copy into uint32, as our read into a buffer
    s += int(out[k - 1])
print(json.dumps({'s': time.perf_counter() - t, 'cpu': time.process_time() - c, 'thread': time.thread_time() - th, 'check': s}))
`;

/** The numpy child's environment: one BLAS/OpenMP thread (see {@link NUMPY}). */
const NUMPY_ENV = { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' };

/** The median of numbers. */
function median(xs) {
  const a = [...xs].sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}

/**
 * Medians of paired rounds: `rounds` is `[a, b]` per round (`{ s, cpu }` each). Returns both
 * sides' median wall and CPU seconds, the median of the per-round ratios b.s / a.s (how many
 * times faster `a` is) and b.cpu / a.cpu, and the min and max of the wall ratios.
 */
function paired(rounds) {
  const wall = rounds.map(([a, b]) => b.s / a.s);
  return {
    a: { s: median(rounds.map(([a]) => a.s)), cpu: median(rounds.map(([a]) => a.cpu)) },
    b: { s: median(rounds.map(([, b]) => b.s)), cpu: median(rounds.map(([, b]) => b.cpu)) },
    ratio: median(wall),
    cpuRatio: median(rounds.map(([a, b]) => b.cpu / a.cpu)),
    min: Math.min(...wall),
    max: Math.max(...wall),
  };
}

function write(dir, sample, total) {
  const src = [];
  for (const line of fs.readFileSync(path.join(sample, 'shard_manifest.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    const b = fs.readFileSync(path.join(sample, JSON.parse(line).shard));
    src.push(new Uint32Array(b.buffer, b.byteOffset, b.length / 4));
  }
  const ids = new Uint32Array(total);
  for (let at = 0, i = 0; at < total; i = (i + 1) % src.length) {
    const n = Math.min(src[i].length, total - at);
    ids.set(src[i].subarray(0, n), at);
    at += n;
  }
  fs.mkdirSync(path.join(dir, 'meg'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'tokens.u32'), Buffer.from(ids.buffer));
  fs.writeFileSync(path.join(dir, 'meg', 'corpus.bin'), Buffer.from(ids.buffer));
  // Megatron .idx: one sequence per document (split after each EOS), document_indices 0..S.
  const lengths = [];
  let last = 0;
  for (let i = ids.indexOf(100257); i >= 0; i = ids.indexOf(100257, i + 1)) {
    lengths.push(i + 1 - last);
    last = i + 1;
  }
  if (last < total) lengths.push(total - last);
  const S = lengths.length;
  const idx = Buffer.alloc(34 + 12 * S + 8 * (S + 1));
  idx.write('MMIDIDX\x00\x00', 0, 'latin1');
  idx.writeBigUInt64LE(1n, 9);
  idx.writeUInt8(4, 17);
  idx.writeBigUInt64LE(BigInt(S), 18);
  idx.writeBigUInt64LE(BigInt(S + 1), 26);
  let ptr = 0;
  for (let i = 0; i < S; i++) {
    idx.writeInt32LE(lengths[i], 34 + 4 * i);
    idx.writeBigInt64LE(BigInt(ptr), 34 + 4 * S + 8 * i);
    idx.writeBigInt64LE(BigInt(i), 34 + 12 * S + 8 * i);
    ptr += 4 * lengths[i];
  }
  idx.writeBigInt64LE(BigInt(S), 34 + 12 * S + 8 * S);
  fs.writeFileSync(path.join(dir, 'meg', 'corpus.idx'), idx);
  const header = (magic, version) => {
    const h = Buffer.alloc(1024);
    h.writeInt32LE(magic, 0);
    h.writeInt32LE(version, 4);
    h.writeInt32LE(total, 8);
    return h;
  };
  fs.writeFileSync(path.join(dir, 'llama3.bin'), Buffer.concat([header(20240801, 7), Buffer.from(ids.buffer)]));
  const small = new Uint16Array(total);
  for (let i = 0; i < total; i++) small[i] = ids[i] % 50257;
  fs.writeFileSync(path.join(dir, 'gpt2.bin'), Buffer.concat([header(20240520, 1), Buffer.from(small.buffer)]));
  fs.writeFileSync(path.join(dir, 'gpt2.u32'), Buffer.from(Uint32Array.from(small).buffer));
  fs.copyFileSync(path.join(sample, 'tokenizer', 'tokenizer.json'), path.join(dir, 'tokenizer.json'));
}

/** One whole read of `ds` in {@link CHUNK}-token reads: wall and CPU seconds, and a check sum of the last id of each read. */
async function readOnce(ds, into) {
  const n = ds.storedTokens;
  let check = 0;
  const t = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  for (let at = 0; at < n; at += CHUNK) {
    const a = await ds.stream.read(at, Math.min(CHUNK, n - at), into);
    check += a[a.length - 1];
  }
  return { s: Number(process.hrtime.bigint() - t) / 1e9, cpu: cpuSecs(c0), check, tokens: n };
}

/**
 * The bounds of a reader built on read() (Node has no mmap), over the same bytes and in the same
 * {@link CHUNK}-token pieces into the same reused `into` as {@link readOnce}:
 * - `sync`: a bare `fs.readSync` loop: no stream layer, no thread-pool hop (the extension host
 *   may not block on a file, so this is a bound, not an option), uint16 read into a reused scratch
 *   and widened by one `TypedArray.set`, as `TokenStream` does;
 * - `pair`: each piece read as two concurrent `FileHandle.read`s of its halves (the kernel's copy
 *   on both cores, on the libuv pool), widened the same way.
 * `bare` is `{ file, header, width }`: the token bytes start at byte `header`, `width` bytes each.
 * @returns wall and CPU seconds, the same check sum as {@link readOnce}, and `widen`: the wall
 *   seconds of the widening `set`s alone (0 for 4-byte tokens).
 */
async function bareRead(mode, bare, n, into) {
  const { file, header, width } = bare;
  const scratch = Buffer.allocUnsafe(CHUNK * width);
  const dest = width === 4 ? Buffer.from(into.buffer, into.byteOffset, CHUNK * 4) : scratch;
  const wide = new Uint16Array(scratch.buffer, scratch.byteOffset, CHUNK);
  const fh = await fs.promises.open(file, 'r');
  let check = 0;
  let widen = 0n;
  const t = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  for (let at = 0; at < n; at += CHUNK) {
    const k = Math.min(CHUNK, n - at);
    const pos = header + at * width;
    if (mode === 'sync') {
      for (let done = 0; done < k * width;) done += fs.readSync(fh.fd, dest, done, k * width - done, pos + done);
    } else if (mode === 'async') {
      for (let done = 0; done < k * width;) done += (await fh.read(dest, done, k * width - done, pos + done)).bytesRead;
    } else {
      const h = (k >> 1) * width;
      const [r1, r2] = await Promise.all([fh.read(dest, 0, h, pos), fh.read(dest, h, k * width - h, pos + h)]);
      if (r1.bytesRead + r2.bytesRead !== k * width) throw new Error(`${file}: short read at byte ${pos}`);
    }
    if (width === 2) {
      const w0 = process.hrtime.bigint();
      into.set(wide.subarray(0, k));
      widen += process.hrtime.bigint() - w0;
    }
    check += into[k - 1];
  }
  const r = { s: Number(process.hrtime.bigint() - t) / 1e9, cpu: cpuSecs(c0), check, widen: Number(widen) / 1e9 };
  await fh.close();
  return r;
}

/**
 * Reads two paths alternately for {@link ROUNDS} rounds after one untimed read of each (so both
 * are in the page cache when timed: on a shared machine a file read minutes earlier may have been
 * evicted, and the ratio would measure the disk, not the reader). With `numpy` (a spec for
 * {@link NUMPY}), each round also reads `a`'s file with numpy right after our read of it, then
 * with the bare reads of {@link bareRead} (`bare`: where `a`'s tokens are).
 * @returns the rounds `[ours a, ours b, numpy?, bare readSync?, bare pair of preads?, bare FileHandle.read?, ours a async?]` and the check sums.
 */
async function readRounds(core, a, b, numpy, bare) {
  // Opened as the CLI opens them (the synchronous path); `dh`: `a` as the extension host opens it.
  const blocking = { blockingReads: true };
  const [da, db, dh] = [await core.openPath(a, {}, blocking), await core.openPath(b, {}, blocking), await core.openPath(a)];
  if (!da.stream.blocking || dh.stream.blocking) throw new Error('the CLI path is not the synchronous one');
  const into = new Uint32Array(CHUNK);
  await readOnce(da, into);
  await readOnce(db, into);
  await readOnce(dh, into);
  const rounds = [];
  let check;
  for (let round = 0; round < ROUNDS; round++) {
    // A B, then B A: the side read second in a round (warmer caches, or a drifting machine) changes every round.
    const first = round % 2 === 0;
    const rb0 = first ? undefined : await readOnce(db, into);
    // Our read and the bare FileHandle.read loop over the same bytes back to back, in swapped order every round.
    const ba0 = bare && !first ? await bareRead('async', bare, da.storedTokens, into) : undefined;
    const ra = await readOnce(da, into);
    const ba = ba0 ?? (bare ? await bareRead('async', bare, da.storedTokens, into) : undefined);
    // The extension host's path over the same file, right after the CLI's (order swapped per round with the bare loop above).
    const rh = bare ? await readOnce(dh, into) : undefined;
    const py = numpy ? JSON.parse(execFileSync('python3', ['-c', NUMPY, numpy], { encoding: 'utf8', env: NUMPY_ENV })) : undefined;
    const bs = bare ? await bareRead('sync', bare, da.storedTokens, into) : undefined;
    const bp = bare ? await bareRead('pair', bare, da.storedTokens, into) : undefined;
    const rb = rb0 ?? (await readOnce(db, into));
    rounds.push([ra, rb, py, bs, bp, ba, rh]);
    for (const [what, x] of [
      ['async (extension host) read', rh],
      ['numpy', py],
      ['bare readSync', bs],
      ['bare pair', bp],
      ['bare FileHandle.read', ba],
    ])
      if (x && x.check !== rb.check) throw new Error(`${a}: ${what} read check ${x.check}, expected ${rb.check}`);
    if (ra.check !== rb.check) throw new Error(`${a}: read check ${ra.check}, expected ${rb.check}`);
    check = ra.check;
  }
  await da.stream.close();
  await db.stream.close();
  await dh.stream.close();
  return { rounds, tokens: da.storedTokens, check };
}

/**
 * The copy rates behind the bounds: `bytes` of `file` (read into memory once) copied in
 * {@link CHUNK}-token pieces into a reused 4 MiB buffer by `Buffer.copy` (user-space memcpy, as
 * numpy copies out of mapped pages, before its page faults) against the same bytes read from the
 * cached file by a bare `readSync` loop (the kernel's copy, plus a system call per piece),
 * alternately for {@link ROUNDS} rounds.
 * @returns the rounds `[memcpy, readSync]`.
 */
function copyRounds(file, bytes) {
  const src = Buffer.allocUnsafe(bytes);
  const fd = fs.openSync(file, 'r');
  try {
    for (let done = 0; done < bytes;) done += fs.readSync(fd, src, done, bytes - done, done);
    const dest = Buffer.allocUnsafe(CHUNK * 4);
    const timed = (fn) => {
      const t = process.hrtime.bigint();
      const c0 = process.cpuUsage();
      for (let at = 0; at < bytes; at += dest.length) fn(at, Math.min(dest.length, bytes - at));
      return { s: Number(process.hrtime.bigint() - t) / 1e9, cpu: cpuSecs(c0) };
    };
    const mem = () => timed((at, k) => src.copy(dest, 0, at, at + k));
    const kernel = () =>
      timed((at, k) => {
        for (let done = 0; done < k;) done += fs.readSync(fd, dest, done, k - done, at + done);
      });
    mem();
    kernel();
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) rounds.push([mem(), kernel()]);
      else {
        const k = kernel();
        rounds.push([mem(), k]);
      }
    }
    return rounds;
  } finally {
    fs.closeSync(fd);
  }
}

/** Process CPU seconds (user + system, all threads) since `c0` (a `process.cpuUsage()` value). */
function cpuSecs(c0) {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e6;
}

/** Runs a command as a child of python3 and prints the child's CPU seconds (its rusage: user + system, every thread). */
const CHILD_CPU = `
import json, resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps(r.ru_utime + r.ru_stime))
`;

/** One `count` of the EOS id over `p`: wall and CPU seconds. */
function countOnce(repo, p) {
  const t = process.hrtime.bigint();
  const out = execFileSync(
    'python3',
    ['-c', CHILD_CPU, process.execPath, path.join(repo, 'dist', 'cli.js'), 'count', p, '100257', '--ids', '--json', '--jobs', '2'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return { s: Number(process.hrtime.bigint() - t) / 1e9, cpu: Number(out) };
}

/** `count` over two paths alternately, one warming round then {@link ROUNDS} paired rounds (A B, B A, …). */
function countRounds(repo, a, b) {
  countOnce(repo, a);
  countOnce(repo, b);
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) rounds.push([countOnce(repo, a), countOnce(repo, b)]);
    else {
      const rb = countOnce(repo, b);
      rounds.push([countOnce(repo, a), rb]);
    }
  }
  return rounds;
}

/** The note of a row: median CPU seconds of both sides, the median per-round CPU ratio, the wall ratios' spread. */
const pairNote = (p) =>
  `median of ${ROUNDS} paired rounds (wall ratio min ${p.min.toFixed(2)}, max ${p.max.toFixed(2)}); CPU ${p.a.cpu.toFixed(3)} s vs ${p.b.cpu.toFixed(3)} s, median CPU ratio ${p.cpuRatio.toFixed(2)}×`;

export async function run(ctx) {
  const { core, repo, sample } = ctx;
  const total = Number(process.env.TSI_BENCH_FORMAT_TOKENS ?? 100_000_000);
  const dir = path.join(repo, 'bench-data', `formats-${total}`);
  if (!fs.existsSync(path.join(dir, 'gpt2.u32'))) {
    ctx.log(`writing ${total.toLocaleString('en-US')}-token files in ${path.relative(repo, dir)} …`);
    write(dir, sample, total);
  }
  const files = {
    u32: path.join(dir, 'tokens.u32'),
    megatron: path.join(dir, 'meg'),
    llmc: path.join(dir, 'llama3.bin'),
    gpt2: path.join(dir, 'gpt2.bin'),
    gpt2u32: path.join(dir, 'gpt2.u32'),
  };
  const numpySpec = {
    megatron: `megatron:${path.join(files.megatron, 'corpus.bin')}:<i4:0`,
    llmc: `llmc:${files.llmc}:<u4:1024`,
    gpt2: `gpt2:${files.gpt2}:<u2:1024`,
  };
  /** Where each format's tokens are, for the bare reads ({@link bareRead}). */
  const bareSpec = {
    megatron: { file: path.join(files.megatron, 'corpus.bin'), header: 0, width: 4 },
    llmc: { file: files.llmc, header: 1024, width: 4 },
    gpt2: { file: files.gpt2, header: 1024, width: 2 },
  };
  const rate = (tokens, s) => tokens / s / 1e6;
  const rows = [];
  // The same layout on both sides: what a ratio of two identical readers looks like here.
  const copy = path.join(dir, 'tokens-copy.u32');
  if (!fs.existsSync(copy)) fs.copyFileSync(files.u32, copy);
  {
    const r = await readRounds(core, copy, files.u32);
    const p = paired(r.rounds.map(([a, b]) => [a, b]));
    ctx.log(`.u32 copy: ${rate(r.tokens, p.a.s).toFixed(0)}M tokens/s, .u32 ${rate(r.tokens, p.b.s).toFixed(0)}M tokens/s (medians)`);
    rows.push({
      name: 'read a copy of the .u32 vs the .u32 (noise floor)',
      ours: rate(r.tokens, p.a.s),
      reference: rate(r.tokens, p.b.s),
      unit: 'M tokens/s',
      ratio: p.ratio,
      note: `identical readers on byte-identical files: noise, and how the page cache holds each file (folio sizes differ per file); ${pairNote(p)}`,
    });
  }
  // Pair by pair: the format's file and the same tokens as .u32 read alternately while both are
  // cached, numpy over the format's file between them.
  for (const [k, b, label] of [
    ['megatron', 'u32', 'Megatron int32 .bin'],
    ['llmc', 'u32', 'llm.c uint32 .bin'],
    ['gpt2', 'gpt2u32', 'llm.c uint16 .bin (widened)'],
  ]) {
    const r = await readRounds(core, files[k], files[b], numpySpec[k], bareSpec[k]);
    const vsU32 = paired(r.rounds.map(([a, u]) => [a, u]));
    const vsNumpy = paired(r.rounds.map(([a, , py]) => [a, py]));
    const syncVsNumpy = paired(r.rounds.map(([, , py, bs]) => [bs, py]));
    const pairVsOurs = paired(r.rounds.map(([a, , , , bp]) => [bp, a]));
    const vsBare = paired(r.rounds.map(([a, , , , , ba]) => [a, ba]));
    const vsAsync = paired(r.rounds.map(([a, , , , , , rh]) => [a, rh]));
    const numpyThread = median(r.rounds.map(([, , py]) => py.thread));
    ctx.log(
      `${label}: ${rate(r.tokens, vsU32.a.s).toFixed(0)}M tokens/s, same tokens as .u32 ${rate(r.tokens, vsU32.b.s).toFixed(0)}M tokens/s, numpy memmap ${rate(r.tokens, vsNumpy.b.s).toFixed(0)}M tokens/s (medians)`,
    );
    rows.push({
      name: `read ${label} vs .u32`,
      ours: rate(r.tokens, vsU32.a.s),
      reference: rate(r.tokens, vsU32.b.s),
      unit: 'M tokens/s',
      ratio: vsU32.ratio,
      note: `goal ≥ 0.95×; ${total.toLocaleString('en-US')} tokens; ${pairNote(vsU32)}`,
    });
    rows.push({
      name: `read ${label} vs numpy memmap`,
      ours: rate(r.tokens, vsNumpy.a.s),
      reference: rate(r.tokens, vsNumpy.b.s),
      unit: 'M tokens/s',
      ratio: vsNumpy.ratio,
      note: `goal ≥ 1×; numpy with one BLAS thread, its reading thread ${numpyThread.toFixed(3)} CPU-s; ${pairNote(vsNumpy)}`,
    });
    rows.push({
      name: `read ${label} vs a bare FileHandle.read loop over the same bytes`,
      ours: rate(r.tokens, vsBare.a.s),
      reference: rate(r.tokens, vsBare.b.s),
      unit: 'M tokens/s',
      ratio: vsBare.ratio,
      note: `the cost of the stream and format layers alone, on the same file (the .u32 rows compare two files, whose cached pages can differ: see the noise floor); ${pairNote(vsBare)}`,
    });
    rows.push({
      name: `read ${label}: the CLI's synchronous path vs the extension host's asynchronous path`,
      ours: rate(r.tokens, vsAsync.a.s),
      reference: rate(r.tokens, vsAsync.b.s),
      unit: 'M tokens/s',
      ratio: vsAsync.ratio,
      note: `the same file, the same TokenStream; pread on the calling thread (blockingReads) vs a libuv thread-pool hop per read; ${pairNote(vsAsync)}`,
    });
    rows.push({
      name: `bound: bare readSync loop over ${label} vs numpy memmap`,
      ours: rate(r.tokens, syncVsNumpy.a.s),
      reference: rate(r.tokens, syncVsNumpy.b.s),
      unit: 'M tokens/s',
      ratio: syncVsNumpy.ratio,
      note: `the most a read()-based reader gets (no stream layer, no thread-pool hop${k === 'gpt2' ? `, widened by one TypedArray.set per read: ${median(r.rounds.map(([, , , bs]) => bs.widen)).toFixed(3)} s of it` : ''}); ${pairNote(syncVsNumpy)}`,
    });
    rows.push({
      name: `idea: two concurrent preads per read over ${label} vs our read`,
      ours: rate(r.tokens, pairVsOurs.a.s),
      reference: rate(r.tokens, pairVsOurs.b.s),
      unit: 'M tokens/s',
      ratio: pairVsOurs.ratio,
      note: `each 1M-token read as two FileHandle.reads of its halves at once (the kernel copy on both cores); worth adopting only if wall improves at equal CPU; ${pairNote(pairVsOurs)}`,
    });
  }
  {
    // What numpy's memmap copy runs at against read()'s kernel copy, over the same cached bytes.
    const bytes = Math.min(512 * 2 ** 20, fs.statSync(files.u32).size);
    const p = paired(copyRounds(files.u32, bytes));
    const gbs = (s) => bytes / s / 1e9;
    ctx.log(
      `copy ${(bytes / 2 ** 20).toFixed(0)} MiB: memcpy ${gbs(p.a.s).toFixed(1)} GB/s, readSync ${gbs(p.b.s).toFixed(1)} GB/s (medians)`,
    );
    rows.push({
      name: 'bound: memcpy (Buffer.copy from memory) vs readSync of the cached file',
      ours: gbs(p.a.s),
      reference: gbs(p.b.s),
      unit: 'GB/s',
      ratio: p.ratio,
      note: `${(bytes / 2 ** 20).toFixed(0)} MiB of tokens.u32 in 4 MiB pieces into one reused buffer: the user-space copy numpy's memmap does (before its page faults) against the kernel's page-cache copy read() does; ${pairNote(p)}`,
    });
  }
  // TSI_BENCH_FORMAT_COUNT=0 leaves the count rows out (iterating on the read rows).
  for (const [k, label] of process.env.TSI_BENCH_FORMAT_COUNT === '0'
    ? []
    : [
        ['megatron', 'Megatron int32'],
        ['llmc', 'llm.c uint32'],
      ]) {
    const p = paired(countRounds(repo, files[k], files.u32));
    ctx.log(
      `count EOS over ${label}: ${p.a.s.toFixed(2)} s (CPU ${p.a.cpu.toFixed(2)} s), .u32 ${p.b.s.toFixed(2)} s (CPU ${p.b.cpu.toFixed(2)} s) (medians)`,
    );
    rows.push({
      name: `count over ${label} vs .u32`,
      ours: p.a.s,
      reference: p.b.s,
      unit: 's',
      ratio: p.ratio,
      note: `goal ≥ 0.95×; 2 workers; ${pairNote(p)}`,
    });
  }
  return rows;
}
