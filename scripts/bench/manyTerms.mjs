/**
 * Many terms in one pass: the CPU time of `count` with 10 terms, and with 200 names from a file,
 * each side by side with 1 term in the same run, plain and `--word --ignore-case`; the tokens per
 * CPU-second of 1 term's scan (4 shards more against 4 fewer, so the workers' start does not
 * count), extrapolated to the 52.4B-token stream on 2 cores; and 2 workers against
 * 1 (wall time); the time to the first partial counts of a full-scale count. The shards: the first 8 entries (200M tokens) of the full-scale stand-in
 * (scripts/make-full-scale.mjs, made on first run), page cache warm. The 200 names are the
 * sample's most frequent capitalised words (scripts/reference_search.py --mode names, real text:
 * `The`, `It`, `In` … a stress list, whose folded forms are a third of all tokens), and the 200
 * proper names its most frequent capitalised words whose lower-case form is rare (--mode
 * proper-names: `Congress`, `Ahab`, `Lincoln` …, what a study of names over training would list),
 * each written to a names file and read back with `readTermsFile`, as `count --terms-file` does.
 *
 * CPU-seconds (user + system of this process and its worker threads) are the figure that counts
 * on a shared machine; each row's note gives the multiple and the goal, and the log the load.
 * Every CPU figure is the median of TSI_BENCH_MANY_ROUNDS rounds (default 5) that run the rows in
 * alternating order; each multiple is the median of the rounds' own multiples.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { timed } from '../lib/timed.mjs';

const ONE = ['Lily'];
const TEN = ['Lily', 'Ben', 'Tom', 'Sue', 'whale', 'Ahab', 'the sea', 'Queequeg', 'Ishmael', 'Moby'];
const PLAIN = { word: false, ignoreCase: false, ids: false };
const WORD_IC = { word: true, ignoreCase: true, ids: false };
/** Tokens of the full-scale stream (400,000 updates × 131,072 + 1). */
const FULL_TOKENS = 52_428_800_001;

export async function run(ctx) {
  const { core } = ctx;
  const root = path.join(ctx.repo, 'bench-data-full');
  if (!fs.existsSync(path.join(root, 'shard_manifest.jsonl')))
    execFileSync(process.execPath, [path.join(ctx.repo, 'scripts', 'make-full-scale.mjs')], { stdio: 'inherit' });
  const namesFile = path.join(os.tmpdir(), `tsi-bench-names-${process.pid}.txt`);
  const namesOf = (mode) =>
    JSON.parse(
      execFileSync('python3', [path.join(ctx.repo, 'scripts', 'reference_search.py'), ctx.sample, '--mode', mode, '--top', '200'], {
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      }),
    );
  const readNames = async (mode) => {
    fs.writeFileSync(namesFile, `# the sample's 200 most frequent ${mode}\n${namesOf(mode).join('\n')}\n`);
    const lists = [await core.readTermsFile(namesFile, PLAIN), await core.readTermsFile(namesFile, WORD_IC)];
    fs.rmSync(namesFile);
    return lists;
  };
  const [TWO_HUNDRED, TWO_HUNDRED_WI] = await readNames('names');
  const [PROPER, PROPER_WI] = await readNames('proper-names');

  const K = 8;
  const ds = await core.openDataset(root);
  const tok = await core.loadTokenizer(ds.tokenizerFile);
  const shards = [0, K];
  const N = ds.shards.slice(0, K).reduce((s, e) => s + e.numTokens, 0);
  const count = (terms, o, jobs = 1) => timed(() => core.countTerms(ds, tok, terms, o, { jobs, shards }));
  const load = () => os.loadavg()[0].toFixed(1);

  await count(ONE, PLAIN); // warm the page cache and the JIT
  // Rounds of every row, in alternating order (A B … then … B A): each figure is the median over
  // the rounds, each ratio the median of the rounds' own ratios (a shared machine's load drifts
  // between runs; within a round it mostly does not).
  const ROUNDS = Math.max(1, Number(process.env.TSI_BENCH_MANY_ROUNDS ?? 5));
  const half = ds.shards.slice(0, K / 2).reduce((s, e) => s + e.numTokens, 0);
  const rows = [
    ['one', ONE, PLAIN],
    ['ten', TEN, PLAIN],
    ['tenWi', TEN, WORD_IC],
    ['names', TWO_HUNDRED, PLAIN],
    ['namesWi', TWO_HUNDRED_WI, WORD_IC],
    ['proper', PROPER, PLAIN],
    ['properWi', PROPER_WI, WORD_IC],
    // 1 term over the first half of the shards: the scan's own rate is the marginal CPU of the
    // second half, without the per-worker start (automaton tables, module load)
    ['oneHalf', ONE, PLAIN, [0, K / 2]],
  ];
  /** @type {Record<string, { s: number, cpu: number, user: number, sys: number, r: any }[]>} */
  const runs = Object.fromEntries(rows.map(([key]) => [key, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [key, terms, o, range] of round % 2 ? [...rows].reverse() : rows) {
      runs[key].push(await timed(() => core.countTerms(ds, tok, terms, o, { jobs: 1, shards: range ?? shards })));
    }
  }
  const median = (xs) => {
    const b = [...xs].sort((x, y) => x - y);
    return b.length % 2 ? b[b.length >> 1] : (b[b.length / 2 - 1] + b[b.length / 2]) / 2;
  };
  const med = (key, f = (x) => x.cpu) => median(runs[key].map(f));
  /** Median over the rounds of key's CPU ÷ base's CPU in the same round. */
  const ratio = (key, base) => median(runs[key].map((x, i) => x.cpu / runs[base][i].cpu));
  const m = Object.fromEntries(rows.map(([key]) => [key, { cpu: med(key), s: med(key, (x) => x.s), r: runs[key][0].r }]));
  for (const [key, terms] of rows) {
    ctx.log(
      `${key}: ${terms.length} term(s), 1 worker, median of ${ROUNDS} rounds: ${m[key].s.toFixed(2)} s wall, ${m[key].cpu.toFixed(2)} CPU-s (user ${med(key, (x) => x.user).toFixed(2)}, sys ${med(key, (x) => x.sys).toFixed(2)}; min ${Math.min(...runs[key].map((x) => x.cpu)).toFixed(2)}, max ${Math.max(...runs[key].map((x) => x.cpu)).toFixed(2)})`,
    );
  }
  ctx.log(`(${N.toLocaleString('en-US')} tokens, half ${half.toLocaleString('en-US')}; load ${load()})`);
  const perCore = (N - half) / Math.max(1e-3, median(runs.one.map((x, i) => x.cpu - runs.oneHalf[i].cpu)));
  const perCoreUser = (N - half) / Math.max(1e-3, median(runs.one.map((x, i) => x.user - runs.oneHalf[i].user)));
  const perCoreSys = (N - half) / Math.max(1e-3, median(runs.one.map((x, i) => x.sys - runs.oneHalf[i].sys)));
  const one2 = await count(ONE, PLAIN, 2);
  const one1 = await count(ONE, PLAIN, 1);
  ctx.log(`1 term, 2 workers ${one2.s.toFixed(2)} s wall (${one2.cpu.toFixed(2)} CPU-s), 1 worker ${one1.s.toFixed(2)} s (load ${load()})`);
  // The first curve point of a full-scale search: from the call to the first partial counts
  // (2 workers, all 2,098 entries; cancelled once they arrive).
  const stop = new AbortController();
  let firstMs = NaN;
  const t0 = performance.now();
  await core
    .countTerms(ds, tok, TEN, PLAIN, {
      signal: stop.signal,
      onProgress: (p) => {
        if (p.tokensDone > 0 && Number.isNaN(firstMs)) {
          firstMs = performance.now() - t0;
          stop.abort();
        }
      },
    })
    .catch((err) => {
      if (!(err instanceof core.CancelledError)) throw err;
    });
  ctx.log(`first partial counts of a full-scale count (10 terms, 2 workers) after ${firstMs.toFixed(0)} ms (load ${load()})`);
  await ds.stream.close();

  /** A row comparing the CPU time of `key` with that of `base`: the median of the rounds' ratios and its goal in the note. */
  const cpuRow = (name, key, base, goal, extra = '') => {
    const q = ratio(key, base);
    return {
      name,
      ours: m[key].cpu,
      reference: m[base].cpu,
      unit: 'CPU-s',
      ratio: 1 / q,
      note: `${q.toFixed(2)}× the CPU of ${goal[0]} (median of ${ROUNDS} rounds' ratios)${extra}; goal ≤ ${goal[1]}×`,
    };
  };
  const matches = (x) => x.r.totals.reduce((s, c) => s + c, 0).toLocaleString('en-US');
  return [
    cpuRow('count 10 terms vs 1 term (CPU)', 'ten', 'one', ['1 term', 1.5]),
    cpuRow('count 200 names (file) vs 1 term (CPU)', 'names', 'one', ['1 term', 3]),
    cpuRow('count 10 terms --word --ignore-case vs plain (CPU)', 'tenWi', 'ten', ['plain', 1.2]),
    cpuRow(
      'count 200 names --word --ignore-case vs plain (CPU)',
      'namesWi',
      'names',
      ['plain', 1.2],
      ` (${matches(m.namesWi)} vs ${matches(m.names)} matches)`,
    ),
    cpuRow('count 200 proper names (file) vs 1 term (CPU)', 'proper', 'one', ['1 term', 3]),
    cpuRow(
      'count 200 proper names --word --ignore-case vs plain (CPU)',
      'properWi',
      'proper',
      ['plain', 1.2],
      ` (${matches(m.properWi)} vs ${matches(m.proper)} matches)`,
    ),
    {
      name: 'count 1 term: 52.4B tokens on 2 cores, extrapolated',
      ours: FULL_TOKENS / perCore / 2,
      reference: 30,
      unit: 's',
      ratio: 30 / (FULL_TOKENS / perCore / 2),
      note: `${(perCore / 1e6).toFixed(0)}M tokens per CPU-second (marginal, ${(half / 1e6).toFixed(0)}M → ${(N / 1e6).toFixed(0)}M tokens, median of ${ROUNDS} rounds; user ${(perCoreUser / 1e6).toFixed(0)}M/s, sys ${(perCoreSys / 1e6).toFixed(0)}M/s) × 2 cores; extrapolated, not run at full scale; goal ≤ 30 s`,
    },
    {
      name: 'full-scale count: first partial counts',
      ours: firstMs,
      reference: 2000,
      unit: 'ms',
      ratio: 2000 / firstMs,
      note: 'goal ≤ 2 s (the panel adds its cache look-up); 10 terms, 2 workers, one 4 Mi-token chunk',
    },
    {
      name: 'count 1 term: 2 workers vs 1',
      ours: N / one2.s / 1e6,
      reference: N / one1.s / 1e6,
      unit: 'M tok/s',
      ratio: one1.s / one2.s,
      note: `goal ≥ 1.7× (wall time: needs 2 idle cores; load ${load()})`,
    },
  ];
}
