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
 * Reads: every file whole in 1M-token `TokenStream.read`s, best of 3, page cache warm; numpy: one
 * python process summing `np.memmap` chunks of the same size. `count`: the CLI counting the EOS
 * id (`--ids`), best of 2 runs each. Every row's note gives CPU seconds (user + system, all
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

async function readAll(core, p) {
  const ds = await core.openPath(p);
  const n = ds.storedTokens;
  const into = new Uint32Array(CHUNK);
  let best = Infinity;
  let cpu = Infinity;
  let check = 0;
  for (let round = 0; round < 3; round++) {
    check = 0;
    const t = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    for (let at = 0; at < n; at += CHUNK) {
      const a = await ds.stream.read(at, Math.min(CHUNK, n - at), into);
      check += a[a.length - 1];
    }
    best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e9);
    cpu = Math.min(cpu, cpuSecs(c0));
  }
  await ds.stream.close();
  return { s: best, cpu, check, tokens: n };
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

/** `count` of the EOS id over `p`, best of 2: wall and CPU seconds. */
function countSeconds(repo, p) {
  let s = Infinity;
  let cpu = Infinity;
  for (let round = 0; round < 2; round++) {
    const t = process.hrtime.bigint();
    const out = execFileSync(
      'python3',
      ['-c', CHILD_CPU, process.execPath, path.join(repo, 'dist', 'cli.js'), 'count', p, '100257', '--ids', '--json', '--jobs', '2'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    s = Math.min(s, Number(process.hrtime.bigint() - t) / 1e9);
    cpu = Math.min(cpu, Number(out));
  }
  return { s, cpu };
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
  const ours = {};
  for (const [k, p] of Object.entries(files)) ours[k] = await readAll(core, p);
  const py = JSON.parse(
    execFileSync(
      'python3',
      [
        '-c',
        NUMPY,
        `u32:${files.u32}:<u4:0`,
        `megatron:${path.join(files.megatron, 'corpus.bin')}:<i4:0`,
        `llmc:${files.llmc}:<u4:1024`,
        `gpt2:${files.gpt2}:<u2:1024`,
      ],
      { encoding: 'utf8' },
    ),
  );
  for (const k of ['megatron', 'llmc', 'gpt2']) {
    const want = k === 'gpt2' ? ours.gpt2u32.check : ours.u32.check;
    if (ours[k].check !== want || py[k].check !== want)
      throw new Error(`${k}: read check ${ours[k].check} / numpy ${py[k].check}, expected ${want}`);
  }
  const rate = (r) => r.tokens / r.s / 1e6;
  const rows = [];
  for (const [k, base, label] of [
    ['megatron', 'u32', 'Megatron int32 .bin'],
    ['llmc', 'u32', 'llm.c uint32 .bin'],
    ['gpt2', 'gpt2u32', 'llm.c uint16 .bin (widened)'],
  ]) {
    ctx.log(
      `${label}: ${rate(ours[k]).toFixed(0)}M tokens/s, same tokens as .u32 ${rate(ours[base]).toFixed(0)}M tokens/s, numpy memmap ${(ours[k].tokens / py[k].s / 1e6).toFixed(0)}M tokens/s`,
    );
    rows.push({
      name: `read ${label} vs .u32`,
      ours: rate(ours[k]),
      reference: rate(ours[base]),
      unit: 'M tokens/s',
      ratio: rate(ours[k]) / rate(ours[base]),
      note: `goal ≥ 0.95×; ${total.toLocaleString('en-US')} tokens; ${cpuNote(ours[k].cpu, ours[base].cpu)}`,
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
  const cu32 = countSeconds(repo, files.u32);
  for (const [k, label] of [
    ['megatron', 'Megatron int32'],
    ['llmc', 'llm.c uint32'],
  ]) {
    const c = countSeconds(repo, files[k]);
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
