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
 * Reads: every file whole in 1M-token `TokenStream.read`s, each format's file and its `.u32`
 * alternately, best of 5 after one untimed read of each (page cache warm for both), and `.u32`
 * against a copy of itself (the noise floor of such a ratio on this machine); numpy right
 * after: one python process summing `np.memmap` chunks of the same size, best of 3. `count`: the
 * CLI counting the EOS id (`--ids`), the format's file and `.u32` alternately, best of 2 after a
 * warming round. Every row's note gives CPU seconds (user + system, all
 * threads: `process.cpuUsage` for our reads, `time.process_time` for numpy, the child's rusage for
 * `count`) beside the wall-clock ratio: on a loaded machine CPU time is the steadier figure.
 *
 * Run: `TSI_BENCH_FORMAT_TOKENS=500000000 npm run bench -- --only formats` (2 GB per uint32 file;
 * the files, ~9 GB, are written once into bench-data/formats-N/).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const CHUNK = 1 << 20;

const NUMPY = `
import json, sys, time, numpy as np
out = {}
for spec in sys.argv[1:]:
    name, file, dtype, offset = spec.split(':')
    m = np.memmap(file, dtype=dtype, mode='r', offset=int(offset))
    best = float('inf'); cpu = float('inf')
    for rnd in range(3):
        t = time.perf_counter(); c = time.process_time(); s = 0
        for i in range(0, len(m), ${CHUNK}):
            s += int(np.array(m[i:i + ${CHUNK}], dtype=np.uint32)[-1])  # a copy into uint32, as our read into a buffer
        best = min(best, time.perf_counter() - t); cpu = min(cpu, time.process_time() - c)
    out[name] = {'s': best, 'cpu': cpu, 'check': s}
print(json.dumps(out))
`;

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
 * Reads two paths alternately, best of 5 each, after one untimed read of each (so both are in
 * the page cache when timed: on a shared machine a file read minutes earlier may have been
 * evicted, and the ratio would measure the disk, not the reader).
 */
async function readPair(core, a, b) {
  const [da, db] = [await core.openPath(a), await core.openPath(b)];
  const into = new Uint32Array(CHUNK);
  await readOnce(da, into);
  await readOnce(db, into);
  const best = [
    { s: Infinity, cpu: Infinity, check: 0, tokens: 0 },
    { s: Infinity, cpu: Infinity, check: 0, tokens: 0 },
  ];
  for (let round = 0; round < 5; round++) {
    for (const [k, ds] of [da, db].entries()) {
      const r = await readOnce(ds, into);
      best[k] = { s: Math.min(best[k].s, r.s), cpu: Math.min(best[k].cpu, r.cpu), check: r.check, tokens: r.tokens };
    }
  }
  await da.stream.close();
  await db.stream.close();
  return best;
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

/** `count` over two paths alternately, 3 rounds, the first untimed (it brings both into the page cache): best wall and CPU of each. */
function countPair(repo, a, b) {
  const best = [
    { s: Infinity, cpu: Infinity },
    { s: Infinity, cpu: Infinity },
  ];
  for (let round = 0; round < 3; round++) {
    for (const [k, p] of [a, b].entries()) {
      const r = countOnce(repo, p);
      if (round > 0) best[k] = { s: Math.min(best[k].s, r.s), cpu: Math.min(best[k].cpu, r.cpu) };
    }
  }
  return best;
}

const cpuNote = (ours, ref) => `CPU ${ours.toFixed(2)} s vs ${ref.toFixed(2)} s (${(ref / ours).toFixed(2)}×)`;

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
  // Pair by pair: the format's file and the same tokens as .u32 read alternately while both are
  // cached, then numpy over the format's file (still cached).
  const ours = {};
  const base = {};
  const py = {};
  for (const [k, b] of [
    ['megatron', 'u32'],
    ['llmc', 'u32'],
    ['gpt2', 'gpt2u32'],
  ]) {
    [ours[k], base[k]] = await readPair(core, files[k], files[b]);
    py[k] = JSON.parse(execFileSync('python3', ['-c', NUMPY, numpySpec[k]], { encoding: 'utf8' }))[k];
    if (ours[k].check !== base[k].check || py[k].check !== base[k].check)
      throw new Error(`${k}: read check ${ours[k].check} / numpy ${py[k].check}, expected ${base[k].check}`);
  }
  const rate = (r) => r.tokens / r.s / 1e6;
  const rows = [];
  // The same layout on both sides: what a ratio of two identical readers looks like here.
  const copy = path.join(dir, 'tokens-copy.u32');
  if (!fs.existsSync(copy)) fs.copyFileSync(files.u32, copy);
  const [same, orig] = await readPair(core, copy, files.u32);
  ctx.log(`.u32 copy: ${rate(same).toFixed(0)}M tokens/s, .u32 ${rate(orig).toFixed(0)}M tokens/s`);
  rows.push({
    name: 'read a copy of the .u32 vs the .u32 (noise floor)',
    ours: rate(same),
    reference: rate(orig),
    unit: 'M tokens/s',
    ratio: rate(same) / rate(orig),
    note: `identical readers: how far from 1× noise alone goes; ${cpuNote(same.cpu, orig.cpu)}`,
  });
  for (const [k, label] of [
    ['megatron', 'Megatron int32 .bin'],
    ['llmc', 'llm.c uint32 .bin'],
    ['gpt2', 'llm.c uint16 .bin (widened)'],
  ]) {
    ctx.log(
      `${label}: ${rate(ours[k]).toFixed(0)}M tokens/s, same tokens as .u32 ${rate(base[k]).toFixed(0)}M tokens/s, numpy memmap ${(ours[k].tokens / py[k].s / 1e6).toFixed(0)}M tokens/s`,
    );
    rows.push({
      name: `read ${label} vs .u32`,
      ours: rate(ours[k]),
      reference: rate(base[k]),
      unit: 'M tokens/s',
      ratio: rate(ours[k]) / rate(base[k]),
      note: `goal ≥ 0.95×; ${total.toLocaleString('en-US')} tokens; ${cpuNote(ours[k].cpu, base[k].cpu)}`,
    });
    rows.push({
      name: `read ${label} vs numpy memmap`,
      ours: rate(ours[k]),
      reference: ours[k].tokens / py[k].s / 1e6,
      unit: 'M tokens/s',
      ratio: py[k].s / ours[k].s,
      note: `goal ≥ 1×; ${cpuNote(ours[k].cpu, py[k].cpu)}`,
    });
  }
  for (const [k, label] of [
    ['megatron', 'Megatron int32'],
    ['llmc', 'llm.c uint32'],
  ]) {
    const [c, cu32] = countPair(repo, files[k], files.u32);
    ctx.log(
      `count EOS over ${label}: ${c.s.toFixed(2)} s (CPU ${c.cpu.toFixed(2)} s), .u32 ${cu32.s.toFixed(2)} s (CPU ${cu32.cpu.toFixed(2)} s)`,
    );
    rows.push({
      name: `count over ${label} vs .u32`,
      ours: c.s,
      reference: cu32.s,
      unit: 's',
      ratio: cu32.s / c.s,
      note: `goal ≥ 0.95×; 2 workers; ${cpuNote(c.cpu, cu32.cpu)}`,
    });
  }
  return rows;
}
