/**
 * The training-order fixtures (scripts/make-order-fixtures.py, from the sample dataset): made once
 * per test process into a temporary folder, with the reference batches and reads the script
 * computed the way each framework does.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { repoRoot, sampleDir } from './fixtures';
import { TrainingOrder, inputSpan, inputUpdates } from '../../src/core/order/order';
import { parseMegatronIndex } from '../../src/core/formats/megatron';

/** Reads of one stream offset: [update, slot, position] triples, sorted. */
export type RefReads = Record<string, [number, number, number][]>;

export interface OrderReference {
  stream_tokens: number;
  probes: number[];
  megatron: Record<
    string,
    {
      sequence_length: number;
      seed: number;
      global_batch_size: number;
      train_iters: number;
      hash: string;
      epochs: number;
      separate_final_epoch: boolean;
      samples: number;
      steps: Record<string, number[][]>;
      reads: RefReads;
    }
  >;
  olmo: {
    files: string[];
    sequence_length: number;
    seed: number;
    epoch: number;
    global_batch_size: number;
    instances: number;
    steps: Record<string, number[][]>;
    reads: RefReads;
  };
  llmc: {
    files: string[];
    B: number;
    T: number;
    processes: number;
    grad_accum_steps: number;
    steps_total: number;
    steps: Record<string, number[][]>;
    reads: RefReads;
  };
}

let made: { dir: string; ref: OrderReference; stream: Int32Array } | undefined;

/** The fixture folder, its reference.json and the whole stream's ids (the sample's, as int32). */
export function orderFixtures(): { dir: string; ref: OrderReference; stream: Int32Array } {
  if (made) return made;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-order-'));
  execFileSync('python3', [path.join(repoRoot(), 'scripts', 'make-order-fixtures.py'), sampleDir(), dir], { stdio: 'inherit' });
  const ref = JSON.parse(fs.readFileSync(path.join(dir, 'reference.json'), 'utf8')) as OrderReference;
  const bin = fs.readFileSync(path.join(dir, 'megatron', 'text_document.bin'));
  const stream = new Int32Array(bin.buffer, bin.byteOffset, bin.byteLength / 4);
  made = { dir, ref, stream };
  return made;
}

/** Sequence lengths of a Megatron `.idx`, read by the format layer's parser (with its checks against the `.bin`). */
export function idxLengths(idxFile: string): Int32Array {
  const binFile = idxFile.replace(/\.idx$/, '.bin');
  return parseMegatronIndex(fs.readFileSync(idxFile), idxFile, binFile, fs.statSync(binFile).size).lengths;
}

/** The ids of a list of stream ranges, concatenated. */
export function idsOf(stream: Int32Array, pieces: { start: number; end: number }[]): number[] {
  const out: number[] = [];
  for (const p of pieces) for (let t = p.start; t < p.end; t++) out.push(stream[t]);
  return out;
}

/**
 * Writes `megatron/<name>` in the fixture folder: a run description of the two-epoch Megatron
 * run (its cached indices in `run-two-epochs/cache`, its batch size and iterations).
 * @returns the run file's path.
 */
export function writeMegatronRunFile(name: string): string {
  const { dir, ref } = orderFixtures();
  const r = ref.megatron['two-epochs'];
  const runFile = path.join(dir, 'megatron', name);
  fs.writeFileSync(
    runFile,
    JSON.stringify({
      order: 'megatron',
      cache: 'run-two-epochs/cache',
      global_batch_size: r.global_batch_size,
      train_iters: r.train_iters,
    }),
  );
  return runFile;
}

/** Removes the fixture folder. */
export function removeOrderFixtures(): void {
  if (made) fs.rmSync(made.dir, { recursive: true, force: true });
  made = undefined;
}

/**
 * Asserts an order's batches and reads against a reference run: every sample of every reference
 * step id for id (the ids read from `stream` at the sample's ranges), and the reads of every probe
 * as [update, slot, position]. @returns the reference reads of the probes (for further checks).
 */
export function assertMatchesReference(
  order: TrainingOrder,
  stream: Int32Array,
  probes: number[],
  ref: { steps: Record<string, number[][]>; reads: RefReads },
): [number, number, number][][] {
  for (const [k, rows] of Object.entries(ref.steps)) {
    const got = order.update(Number(k));
    assert.strictEqual(got.length, rows.length, `step ${k}: samples`);
    got.forEach((s) => assert.deepStrictEqual(idsOf(stream, s.pieces), rows[s.slot], `step ${k} slot ${s.slot}`));
  }
  return probes.map((t) => {
    const want = ref.reads[String(t)];
    assert.deepStrictEqual(
      order.reads(t).map((x) => [x.update, x.slot, x.position]),
      want,
      `offset ${t}`,
    );
    return want;
  });
}

/**
 * Checks {@link TrainingOrder.inputSpan} (through `inputSpan`) against the reference's brute-force
 * reads of the probes: at a probe it names the probe's input updates (reads at a position below
 * `order.inputTokens`, ascending, each once), and so does every span starting up to `back` tokens
 * before the probe that reaches it; in that window each token's span agrees with the order's own
 * reads (`inputUpdates`) and the next token's span is the rest of it; walking the stream span by
 * span ends exactly at its end.
 * @returns how many spans longer than one token were checked at a probe.
 */
export function assertSpansMatchReference(
  order: TrainingOrder,
  probes: number[],
  reads: RefReads,
  streamTokens: number,
  back: number,
): number {
  let longer = 0;
  for (const t of probes) {
    const want = [...new Set(reads[String(t)].filter((x) => x[2] < order.inputTokens).map((x) => x[0]))].sort((a, b) => a - b);
    assert.deepStrictEqual(inputSpan(order, t).updates, want, `inputSpan(${t})`);
    for (let s = Math.max(0, t - back); s < t; s++) {
      const span = inputSpan(order, s);
      assert.ok(span.tokens >= 1, `inputSpan(${s}).tokens`);
      // Token by token, the span agrees with the order's own reads, and its next token's span is its rest.
      assert.deepStrictEqual(span.updates, inputUpdates(order, s), `inputSpan(${s}) vs reads`);
      if (span.tokens > 1)
        assert.deepStrictEqual(inputSpan(order, s + 1), { updates: span.updates, tokens: span.tokens - 1 }, `inputSpan(${s + 1})`);
      if (s + span.tokens > t) {
        assert.deepStrictEqual(span.updates, want, `inputSpan(${s}) covering ${t} (${span.tokens} tokens)`);
        longer++;
      }
    }
  }
  let t = 0;
  while (t < streamTokens) t += inputSpan(order, t).tokens;
  assert.strictEqual(t, streamTokens, 'spans end at the end of the stream');
  return longer;
}
