/**
 * The CLI through a run description (`--run FILE`): the sample dataset's shards read as OLMo token
 * files (raw uint32, as Dolma writes them), global indices rebuilt from seed and epoch. `update k
 * --json` equals a numpy reference written from OLMo-core's rule (its own PCG64 shuffle, instance
 * reads through the card's reader); `locate --json` names the reading update and sample, and a
 * dropped tail token as never read; a bad run file is one line naming the file and the field.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { cliPath, repoRoot, sampleDir } from './fixtures';
import { orderFixtures, removeOrderFixtures, writeMegatronRunFile } from './orderFixtures';

describe('training order: CLI update and locate with --run', function () {
  this.timeout(300_000);
  let dir: string;
  let runFile: string;
  const root = sampleDir();
  const L = 1000,
    B = 16,
    seed = 6198,
    epoch = 1;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-order-cli-'));
    runFile = path.join(dir, 'run.json');
    fs.writeFileSync(runFile, JSON.stringify({ order: 'olmo', seed, epoch, sequence_length: L, global_batch_size: B }));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The CLI with its caches in the test's folder (never the user's ~/.cache). */
  const cli = (args: string[]): { stdout: string; stderr: string; code: number } => {
    try {
      const stdout = execFileSync(process.execPath, [cliPath(), ...args], {
        encoding: 'utf8',
        maxBuffer: 1 << 30,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cache') },
      });
      return { stdout, stderr: '', code: 0 };
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; status?: number };
      return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: e.status ?? -1 };
    }
  };

  it('update k --json equals the numpy reference of OLMo-core rule, sample for sample', () => {
    const k = 7;
    const ref = JSON.parse(
      execFileSync(
        'python3',
        [
          '-c',
          `import json, sys, numpy as np
sys.path.insert(0, ${JSON.stringify(path.join(repoRoot(), 'scripts'))})
from reference_reader import tokens
root, L, B, seed, epoch, k = sys.argv[1], *map(int, sys.argv[2:])
rows = sorted((json.loads(l) for l in open(f"{root}/shard_manifest.jsonl")), key=lambda e: e["start_token"])
counts = [e["num_tokens"] // L for e in rows]
cum = np.concatenate([[0], np.cumsum(counts)])
idx = np.arange(int(cum[-1]), dtype=np.uint32)
np.random.Generator(np.random.PCG64(seed=seed + epoch)).shuffle(idx)
out = []
for q in range(k * B, (k + 1) * B):
    i = int(idx[q]); f = int(np.searchsorted(cum, i, side="right") - 1)
    s = rows[f]["start_token"] + (i - int(cum[f])) * L
    out.append({"sample": i, "start": s, "ids": tokens(root, s, L).tolist()})
print(json.dumps(out))`,
          root,
          String(L),
          String(B),
          String(seed),
          String(epoch),
          String(k),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 26 },
      ),
    ) as { sample: number; start: number; ids: number[] }[];
    const r = cli(['--run', runFile, 'update', root, String(k), '--json']);
    assert.strictEqual(r.code, 0, r.stderr);
    const got = JSON.parse(r.stdout) as {
      update: number;
      order: string;
      samples: { slot: number; sample: number; ranges: number[][]; input_ids: number[]; target_ids: number[] }[];
    };
    assert.strictEqual(got.order, 'olmo');
    assert.strictEqual(got.samples.length, B);
    got.samples.forEach((s, slot) => {
      assert.strictEqual(s.slot, slot);
      assert.strictEqual(s.sample, ref[slot].sample);
      assert.deepStrictEqual(s.ranges, [[ref[slot].start, ref[slot].start + L]]);
      assert.deepStrictEqual(s.input_ids, ref[slot].ids);
      assert.deepStrictEqual(s.target_ids, ref[slot].ids.slice(1));
    });

    const t = ref[5].start + 17;
    const loc = cli(['--run', runFile, 'locate', root, String(t), '--json']);
    assert.strictEqual(loc.code, 0, loc.stderr);
    const j = JSON.parse(loc.stdout) as {
      update: number;
      sequence: number;
      position: number;
      sample: number;
      order: string;
      reads: { update: number; slot: number }[];
    };
    assert.deepStrictEqual([j.update, j.sequence, j.position, j.sample, j.order], [k, 5, 17, ref[5].sample, 'olmo']);
    assert.deepStrictEqual(
      j.reads.map((x) => [x.update, x.slot]),
      [[k, 5]],
    );
  });

  it('a token in a dropped file tail is never read; without --run the card order answers', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'manifest.json'), 'utf8')) as { stored_tokens: number };
    const last = manifest.stored_tokens - 1; // the last shard's tail is shorter than one instance
    const j = JSON.parse(cli(['--run', runFile, 'locate', root, String(last), '--json']).stdout) as { update: null; reads: unknown[] };
    assert.strictEqual(j.update, null);
    assert.deepStrictEqual(j.reads, []);
    const text = cli(['--run', runFile, 'locate', root, String(last)]).stdout;
    assert.match(text, /never read as an input by the run/);
    const seq = JSON.parse(cli(['locate', root, '131072', '--json']).stdout) as {
      update: number;
      order: string;
      reads: { update: number; target: boolean }[];
    };
    assert.strictEqual(seq.order, 'sequential');
    assert.strictEqual(seq.update, 1);
    assert.deepStrictEqual(
      seq.reads.map((x) => [x.update, x.target]),
      [
        [0, true],
        [1, false],
      ],
    );
  });

  it('count --per 1 through the order equals the byte-level reference mapped through OLMo-core rule (worker threads)', () => {
    const terms = ['whale', 'Congress'];
    const ref = JSON.parse(
      execFileSync(
        'python3',
        [
          '-c',
          `import json, subprocess, sys, numpy as np
root, L, B, seed, epoch, script, terms = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[6], sys.argv[7]
offs = json.loads(subprocess.check_output([sys.executable, script, root, "--terms", terms, "--mode", "offsets"]))
rows = sorted((json.loads(l) for l in open(f"{root}/shard_manifest.jsonl")), key=lambda e: e["start_token"])
counts = [e["num_tokens"] // L for e in rows]
cum = np.concatenate([[0], np.cumsum(counts)])
idx = np.arange(int(cum[-1]), dtype=np.uint32)
np.random.Generator(np.random.PCG64(seed=seed + epoch)).shuffle(idx)
batches = len(idx) // B
rank = np.full(len(idx), -1); rank[idx[: batches * B]] = np.arange(batches * B)
nt = len(json.loads(terms))
per = [[0] * nt for _ in range(batches)]; never = [0] * nt
for o, t in offs:
    f = max(i for i, e in enumerate(rows) if e["start_token"] <= o)
    n = (o - rows[f]["start_token"]) // L
    r = rank[int(cum[f]) + n] if n < counts[f] else -1
    if r < 0: never[t] += 1
    else: per[r // B][t] += 1
print(json.dumps({"updates": batches, "per": per, "not_read": never}))`,
          root,
          String(L),
          String(B),
          String(seed),
          String(epoch),
          path.join(repoRoot(), 'scripts', 'reference_search.py'),
          JSON.stringify(terms),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 26 },
      ),
    ) as { updates: number; per: number[][]; not_read: number[] };
    const r = cli(['--run', runFile, 'count', root, ...terms, '--per', '1', '--json', '--jobs', '2']);
    assert.strictEqual(r.code, 0, r.stderr);
    const got = JSON.parse(r.stdout) as {
      updates: number;
      order: string;
      not_read: number[];
      buckets: { tokens: number; counts: number[] }[];
      totals: number[];
    };
    assert.strictEqual(got.order, 'olmo');
    assert.strictEqual(got.updates, ref.updates);
    assert.deepStrictEqual(
      got.buckets.map((b) => b.counts),
      ref.per,
    );
    assert.deepStrictEqual(got.not_read, ref.not_read);
    assert.ok(got.totals[0] > 0 && ref.not_read.some((c) => c > 0), 'the fixture has occurrences read and never read');
    assert.ok(got.buckets.every((b) => b.tokens === B * L));
  });

  it('a bad run file: exit 1, one line naming the file and the field', () => {
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ order: 'olmo', seed: 1, epoch: 0, sequence_length: 'x', global_batch_size: 4 }));
    const r = cli(['--run', bad, 'update', root, '0']);
    assert.strictEqual(r.code, 1);
    assert.strictEqual(r.stderr.trim().split('\n').length, 1);
    assert.match(r.stderr, /bad\.json: "sequence_length" is "x"; expected a positive integer/);
  });
});

/** The first five arguments of a reference count script: sample root, fixture folder, the byte-level search reference, the fixture maker (imported for its ports) and the terms as JSON. */
function referenceArgs(dir: string, terms: string[]): string[] {
  const script = (name: string) => path.join(repoRoot(), 'scripts', name);
  return [sampleDir(), dir, script('reference_search.py'), script('make-order-fixtures.py'), JSON.stringify(terms)];
}

/** What `count --per 1 --json` through a run prints. */
interface CountThroughRun {
  order: string;
  updates: number;
  not_read: number[];
  buckets: { counts: number[] }[];
}

/**
 * `token-shards --run RUN --tokenizer <sample's> count PATH TERMS --per 1 --json [EXTRA]`, with the
 * CLI's caches in the order fixtures' folder `dir` (never the user's ~/.cache); throws on a non-zero exit.
 */
function countThroughRun(dir: string, runFile: string, dataPath: string, terms: string[], extra: string[] = []): CountThroughRun {
  const args = ['--run', runFile, '--tokenizer', path.join(sampleDir(), 'tokenizer', 'tokenizer.json'), 'count', dataPath, ...terms];
  return JSON.parse(
    execFileSync(process.execPath, [cliPath(), ...args, '--per', '1', '--json', ...extra], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      env: { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cli-cache') },
    }),
  ) as CountThroughRun;
}

/**
 * The CLI's per-update counts and never-read counts equal the reference's, under the named order
 * and number of updates, and the fixture has occurrences read more than once in an update and
 * occurrences never read (so the comparison covers both).
 */
function assertCountsEqual(got: CountThroughRun, want: { per: number[][]; not_read: number[] }, order: string, updates: number): void {
  assert.strictEqual(got.order, order);
  assert.strictEqual(got.updates, updates);
  assert.deepStrictEqual(
    got.buckets.map((b) => b.counts),
    want.per,
  );
  assert.deepStrictEqual(got.not_read, want.not_read);
  assert.ok(
    want.not_read.every((c) => c > 0) && want.per.some((c) => c.some((x) => x > 1)),
    'the fixture has occurrences read and never read',
  );
}

/**
 * A Megatron run from the CLI: the dataset opened from its `.bin` PATH through the format layer,
 * whose `.idx` gives the order its sequence lengths; `update k --json` equals the reference
 * batches (a Python port of Megatron's index building) and `locate --json` the reference reads.
 */
describe('training order: CLI over a Megatron PATH', function () {
  this.timeout(600_000);
  after(removeOrderFixtures);

  it('update k --json and locate --json through the cached GPTDataset indices', () => {
    const { dir, ref } = orderFixtures();
    const r = ref.megatron['two-epochs'];
    const runFile = writeMegatronRunFile('cli-run.json');
    const bin = path.join(dir, 'megatron', 'text_document.bin');
    const cli = (args: string[]) =>
      execFileSync(process.execPath, [cliPath(), '--run', runFile, ...args], {
        encoding: 'utf8',
        maxBuffer: 1 << 30,
        env: { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cli-cache') },
      });
    for (const [k, rows] of Object.entries(r.steps)) {
      const j = JSON.parse(cli(['update', bin, k, '--json'])) as {
        order: string;
        samples: { slot: number; input_ids: number[]; target_ids: number[] }[];
      };
      assert.strictEqual(j.order, 'megatron');
      assert.strictEqual(j.samples.length, rows.length);
      for (const s of j.samples)
        assert.deepStrictEqual([...s.input_ids, s.target_ids[s.target_ids.length - 1]], rows[s.slot], `step ${k} slot ${s.slot}`);
    }
    for (const probe of ref.probes.slice(0, 4)) {
      const j = JSON.parse(cli(['locate', bin, String(probe), '--json'])) as {
        reads: { update: number; slot: number; position: number }[];
      };
      const got = j.reads.map((x) => [x.update, x.slot, x.position]).sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
      assert.deepStrictEqual(got, r.reads[String(probe)], `reads of ${probe}`);
    }
  });

  it('count --per 1 through the order equals the byte-level reference mapped through the fixture’s Megatron indices (read and never read)', () => {
    const { dir, ref } = orderFixtures();
    const r = ref.megatron['two-epochs'];
    // Fewer steps than the cached indices hold: the tokens of the later samples go unread.
    const iters = Math.floor(r.train_iters / 2);
    const runFile = path.join(dir, 'megatron', 'count-run.json');
    fs.writeFileSync(
      runFile,
      JSON.stringify({ order: 'megatron', cache: 'run-two-epochs/cache', global_batch_size: r.global_batch_size, train_iters: iters }),
    );
    const terms = ['whale', 'Congress', ' the'];
    const want = JSON.parse(
      execFileSync(
        'python3',
        [
          '-c',
          `import glob, importlib.util, json, struct, subprocess, sys, numpy as np
sample, fxdir, script, fixtures, terms, B, iters, L = sys.argv[1:5] + [sys.argv[5]] + list(map(int, sys.argv[6:9]))
spec = importlib.util.spec_from_file_location("fx", fixtures); fx = importlib.util.module_from_spec(spec); spec.loader.exec_module(fx)
offs = json.loads(subprocess.check_output([sys.executable, script, sample, "--terms", terms, "--mode", "offsets"]))
base = glob.glob(f"{fxdir}/megatron/run-two-epochs/cache/*-document_index.npy")[0][: -len("document_index.npy")]
di, si, sh = (np.load(base + n + ".npy") for n in ("document_index", "sample_index", "shuffle_index"))
idx = open(f"{fxdir}/megatron/text_document.idx", "rb").read()
n = struct.unpack_from("<Q", idx, 18)[0]
lengths = np.frombuffer(idx, np.int32, n, 34); pointers = np.frombuffer(idx, np.int64, n, 34 + 4 * n)
ms = np.array(sorted({o for o, _ in offs}), dtype=np.int64)
ups = {}
for q in range(iters * B):
    pos = 0
    for s, e in fx.megatron_piece_ranges(pointers, lengths, di, si, int(sh[q]), 1):
        e_in = min(e, s + L - pos)  # the sample's first L tokens are its inputs; the last is only a target
        if e_in > s:
            a, b = np.searchsorted(ms, [s, e_in])
            for k in range(a, b): ups.setdefault(int(ms[k]), set()).add(q // B)
        pos += e - s
print(json.dumps(fx.per_update_counts(offs, ups, len(json.loads(terms)), iters)))`,
          ...referenceArgs(dir, terms),
          String(r.global_batch_size),
          String(iters),
          String(r.sequence_length),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 26 },
      ),
    ) as { per: number[][]; not_read: number[] };
    const got = countThroughRun(dir, runFile, path.join(dir, 'megatron', 'text_document.bin'), terms);
    assertCountsEqual(got, want, 'megatron', iters);
  });
});

/**
 * An llm.c run from the CLI: the fixture's three `shard_N.bin` files (llm.c's 256 × int32 header,
 * uint32 tokens) opened as one folder stream, read by 3 processes with gradient accumulation and
 * shuffling on. `count --per 1` equals the byte-level reference mapped through the Python port of
 * `llmc/dataloader.h` in scripts/make-order-fixtures.py (a match counts once per update that reads
 * its first token as an input; the row's last token is only a target).
 */
describe('training order: CLI over llm.c shards', function () {
  this.timeout(600_000);
  after(removeOrderFixtures);

  it('count --per 1 through the order equals the byte-level reference mapped through the dataloader.h port (read and never read)', () => {
    const { dir, ref } = orderFixtures();
    const r = ref.llmc;
    // A third of the fixture's steps: less than one epoch, so some tokens are never read.
    const steps = Math.floor(r.steps_total / 3);
    const runFile = path.join(dir, 'llmc-count-run.json');
    fs.writeFileSync(
      runFile,
      JSON.stringify({ order: 'llm.c', B: r.B, T: r.T, processes: r.processes, grad_accum_steps: r.grad_accum_steps, steps }),
    );
    const terms = ['whale', 'Congress', ' the'];
    const want = JSON.parse(
      execFileSync(
        'python3',
        [
          '-c',
          `import importlib.util, json, subprocess, sys, numpy as np
sample, fxdir, script, fixtures, terms = sys.argv[1:6]
B, T, P, A, steps = map(int, sys.argv[6:11])
spec = importlib.util.spec_from_file_location("fx", fixtures); fx = importlib.util.module_from_spec(spec); spec.loader.exec_module(fx)
offs = json.loads(subprocess.check_output([sys.executable, script, sample, "--terms", terms, "--mode", "offsets"]))
ntok = [int(np.fromfile(f"{fxdir}/llmc/shard_{n}.bin", dtype="<i4", count=256)[2]) for n in range(3)]
starts = np.concatenate([[0], np.cumsum(ntok)])
ms = np.array(sorted({o for o, _ in offs}), dtype=np.int64)
loaders = [fx.LlmcLoader(ntok, B, T, r, P, True) for r in range(P)]
ups = {}
for k in range(steps):
    for a in range(A):
        for r in range(P):
            shard, local = loaders[r].next_batch()
            for b in range(B):
                s = int(starts[shard] + local + b * T)
                lo, hi = np.searchsorted(ms, [s, s + T])
                for i in range(lo, hi): ups.setdefault(int(ms[i]), set()).add(k)
print(json.dumps(fx.per_update_counts(offs, ups, len(json.loads(terms)), steps)))`,
          ...referenceArgs(dir, terms),
          String(r.B),
          String(r.T),
          String(r.processes),
          String(r.grad_accum_steps),
          String(steps),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 26 },
      ),
    ) as { per: number[][]; not_read: number[] };
    const got = countThroughRun(dir, runFile, path.join(dir, 'llmc'), terms, ['--jobs', '2']);
    assertCountsEqual(got, want, 'llm.c', steps);
  });
});
