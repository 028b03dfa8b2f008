/**
 * Training logs beside the data (the loss-spike workbench): stream-parse a metrics file — CSV (a
 * W&B export) or JSONL (OLMo-core, Hugging Face Trainer) — into one loss series on the **update**
 * axis, and describe what was found. Spike detection and the chart's bucketing are in ./spikes.ts.
 *
 * Rules chosen here (docs/guide.md repeats them):
 * - **Columns** are detected by name (case-insensitive): step = {@link STEP_NAMES} in that order
 *   of preference (then any name ending in `/step`, `/global_step` or `_step`); loss =
 *   {@link LOSS_NAMES} in order (then any name containing `loss` that is not a W&B `__MIN`/`__MAX`
 *   column nor an eval/validation loss). More than one candidate → `ambiguous` is set, the best guess
 *   is used, and callers (the UI) ask. Explicit choices always win.
 * - **Rows** without a loss value (empty cell / key absent) are skipped silently (W&B exports
 *   hold every metric's rows); rows whose step is not a non-negative integer are counted and the
 *   first is named; losses `NaN`, `inf`, `-inf` (CSV text, or the bare `NaN`/`Infinity` Python's
 *   json writes) are kept **as what they are** and listed.
 * - **Restarts**: a step ≤ the previous kept step starts a new segment that **replaces** every kept
 *   point with a step ≥ it (the later run is what the final weights came from: resumed from a
 *   checkpoint, the steps after it were trained again). Each is reported (line, step, previous step,
 *   points dropped); an equal step is reported as a duplicate.
 * - **Memory** is bounded: at most `maxPoints` points are kept; past that the series is decimated
 *   by 2 (repeatedly), keeping the larger loss of each pair (non-finite first), so spikes survive.
 * - **Step convention**: `after` (default) — a logged step s is the loss of update s − 1 (logged
 *   after s updates, the way trainers count); `update` — step s is update s.
 *
 * Units: steps and updates are integers; bytes are file bytes.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parse as csvParse } from 'csv-parse';
import { CancelledError, DataError } from '../errors';
import { count, fmt } from '../units';

/** Step column names, most preferred first (compared lowercased). */
export const STEP_NAMES = ['step', '_step', 'global_step', 'train/global_step', 'trainer/global_step', 'iteration', 'iter'];
/** Loss column names, most preferred first (compared lowercased). */
export const LOSS_NAMES = [
  'train/loss',
  'loss',
  'train_loss',
  'train/ce loss',
  'train/celoss',
  'train/ce_loss',
  'train/lm_loss',
  'lm_loss',
  'lm loss',
];

/** How a logged step maps to a 0-based update. */
export type StepConvention = 'after' | 'update';

/** Plain words for the axis and the settings. */
export const STEP_CONVENTION_TEXT: Record<StepConvention, string> = {
  after: 'logged step s = loss of update s − 1 (logged after s updates)',
  update: 'logged step s = update s',
};

/** The 0-based update a logged step stands for under a convention. */
export function stepToUpdate(step: number, conv: StepConvention): number {
  return conv === 'after' ? step - 1 : step;
}

/**
 * The reading of the `tokenShards.trainingLog.stepConvention` setting's value: 'update' when it
 * says so, else 'after' (the default: a step logged after s updates, as OLMo-core and the Hugging
 * Face Trainer count `global_step`). One reading for every place that turns "step k" into an update
 * (the training log, the `step k` hover, Go to Update).
 */
export function parseStepConvention(value: unknown): StepConvention {
  return value === 'update' ? 'update' : 'after';
}

/**
 * The 0-based updates "step `step`" may mean, the setting's reading first and the other one
 * second, each only when it is an update of the stream (`0 ≤ u < numUpdates`): under 'after'
 * `[step − 1, step]`, under 'update' `[step, step − 1]`. Empty when neither is in the stream.
 */
export function stepReadings(step: number, conv: StepConvention, numUpdates: number): number[] {
  const first = stepToUpdate(step, conv);
  const other = conv === 'after' ? step : step - 1;
  return [first, other].filter((u) => Number.isSafeInteger(u) && u >= 0 && u < numUpdates);
}

/** Candidate columns found by name. */
export interface ColumnChoice {
  /** The column used (explicit, or the best guess); undefined when there is no candidate. */
  column?: string;
  /** Every column that looks like one, best first. */
  candidates: string[];
  /** True when there is more than one candidate and none was chosen explicitly: ask. */
  ambiguous: boolean;
}

/** Ranks candidate step columns of a header. */
export function stepCandidates(columns: string[]): string[] {
  return rank(columns, STEP_NAMES, (l) => /(\/|_)step$|\/global_step$/.test(l) && !/__(min|max)$/.test(l));
}

/** Ranks candidate loss columns of a header. */
export function lossCandidates(columns: string[]): string[] {
  return rank(
    columns,
    LOSS_NAMES,
    (l) => l.includes('loss') && !/__(min|max)$/.test(l) && !/(^|[/_ ])(eval|val|valid|validation|test)([/_ ]|$)/.test(l),
  );
}

function rank(columns: string[], names: string[], loose: (lower: string) => boolean): string[] {
  const exact = names.flatMap((n) => columns.filter((c) => c.trim().toLowerCase() === n));
  const rest = columns.filter((c) => !exact.includes(c) && loose(c.trim().toLowerCase()));
  return [...exact, ...rest];
}

/** Chooses a column: the explicit one (must exist), or the best candidate. */
export function chooseColumn(
  columns: string[],
  candidates: string[],
  explicit: string | undefined,
  what: string,
  file: string,
): ColumnChoice {
  if (explicit !== undefined) {
    if (!columns.includes(explicit))
      throw new DataError(
        `${file}: no column ${JSON.stringify(explicit)} for the ${what}; the columns are ${columns.map((c) => JSON.stringify(c)).join(', ')}`,
        file,
      );
    return { column: explicit, candidates, ambiguous: false };
  }
  return { column: candidates[0], candidates, ambiguous: candidates.length > 1 };
}

/** A restart (or a duplicate step) found while reading. */
export interface LogRestart {
  /** 1-based line of the file where the step went back. */
  line: number;
  /** The step logged on that line. */
  step: number;
  /** The last kept step before it. */
  previousStep: number;
  /** Points with a step ≥ `step` dropped from the series (replaced by the later run). */
  dropped: number;
  /** `duplicate` when the step equals the previous one, `restart` when it is smaller. */
  kind: 'duplicate' | 'restart';
}

/** A NaN or infinite loss, shown as what it is. */
export interface NonFiniteLoss {
  /** Logged step (after restarts are resolved, so no line number: the kept point may come from any run). */
  step: number;
  /** `NaN`, `Infinity` or `-Infinity`. */
  value: string;
}

/** A parsed training log. */
export interface TrainingLog {
  file: string;
  format: 'csv' | 'jsonl';
  /** Columns seen (CSV header; JSONL keys of the lines read, first-seen order, at most 500). */
  columns: string[];
  step: ColumnChoice;
  loss: ColumnChoice;
  /** Kept points, steps strictly increasing. */
  steps: Float64Array;
  /** Losses of the kept points (NaN / ±Infinity kept as such). */
  losses: Float64Array;
  /** Data rows read (lines, minus the CSV header, minus blank lines). */
  rows: number;
  /** Rows with a step but no loss value (skipped). */
  rowsWithoutLoss: number;
  /** Rows whose step was missing or not a non-negative integer (skipped); the first one's line and text. */
  badSteps: { count: number; first?: { line: number; text: string } };
  /** Lines that are not JSON (JSONL only; skipped); the first one's line and the parser's message. */
  badLines: { count: number; first?: { line: number; message: string } };
  restarts: LogRestart[];
  /** Non-finite losses among the kept points (at most 1,000 listed; `nonFiniteCount` has them all). */
  nonFinite: NonFiniteLoss[];
  nonFiniteCount: number;
  /** 1 when every point is kept; 2^n after n decimations (see the module doc). */
  decimation: number;
  /** File size in bytes. */
  bytes: number;
}

/** Options of {@link parseTrainingLog}. */
export interface ParseLogOptions {
  stepColumn?: string;
  lossColumn?: string;
  /** Most points kept before decimating (default 2,000,000: 32 MB). */
  maxPoints?: number;
  signal?: AbortSignal;
  /** Bytes read so far of `total`. */
  onProgress?: (bytes: number, total: number) => void;
}

/** Lines of a JSONL log read to collect keys when no loss key is known yet. */
const JSONL_KEY_SCAN_LINES = 1000;

/** Parses a loss/step cell: number, or NaN/±Infinity spelled as trainers write them; undefined when empty/absent. */
export function parseLogNumber(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return NaN;
  const s = String(v).trim();
  if (s === '') return undefined;
  const l = s.toLowerCase();
  if (l === 'nan' || l === '-nan') return NaN;
  if (l === 'inf' || l === '+inf' || l === 'infinity' || l === '+infinity') return Infinity;
  if (l === '-inf' || l === '-infinity') return -Infinity;
  const n = Number(s);
  return Number.isNaN(n) ? NaN : n;
}

/** Growable (step, loss) series with restart handling and decimation. */
class SeriesBuilder {
  steps: Float64Array;
  losses: Float64Array;
  n = 0;
  decimation = 1;
  /** Points waiting to be merged into one kept point (when decimating). */
  private pendStep = NaN;
  private pendLoss = NaN;
  private pendCount = 0;
  private lastStep = -Infinity;
  restarts: LogRestart[] = [];

  constructor(private readonly maxPoints: number) {
    this.steps = new Float64Array(Math.min(1024, maxPoints));
    this.losses = new Float64Array(Math.min(1024, maxPoints));
  }

  add(step: number, loss: number, line: number): void {
    if (step <= this.lastStep) this.restart(step, line);
    this.lastStep = step;
    if (this.decimation === 1) {
      this.push(step, loss);
      return;
    }
    if (this.pendCount === 0 || worse(loss, this.pendLoss)) {
      this.pendStep = step;
      this.pendLoss = loss;
    }
    if (++this.pendCount === this.decimation) {
      this.push(this.pendStep, this.pendLoss);
      this.pendCount = 0;
    }
  }

  private push(step: number, loss: number): void {
    if (this.n === this.steps.length) {
      if (this.n >= this.maxPoints) {
        this.decimate();
      } else {
        const cap = Math.min(this.maxPoints, this.n * 2);
        const s = new Float64Array(cap);
        s.set(this.steps);
        this.steps = s;
        const l = new Float64Array(cap);
        l.set(this.losses);
        this.losses = l;
      }
    }
    this.steps[this.n] = step;
    this.losses[this.n] = loss;
    this.n++;
  }

  private decimate(): void {
    let w = 0;
    for (let i = 0; i + 1 < this.n; i += 2) {
      const j = worse(this.losses[i + 1], this.losses[i]) ? i + 1 : i;
      this.steps[w] = this.steps[j];
      this.losses[w] = this.losses[j];
      w++;
    }
    if (this.n % 2) {
      this.steps[w] = this.steps[this.n - 1];
      this.losses[w] = this.losses[this.n - 1];
      w++;
    }
    this.n = w;
    this.decimation *= 2;
  }

  private restart(step: number, line: number): void {
    const previousStep = this.lastStep;
    let dropped = 0;
    if (this.pendCount > 0 && this.pendStep >= step) {
      dropped += this.pendCount;
      this.pendCount = 0;
    } else if (this.pendCount > 0) {
      this.push(this.pendStep, this.pendLoss);
      this.pendCount = 0;
    }
    // Kept steps ascend: drop the tail with step ≥ `step` (binary search).
    let lo = 0,
      hi = this.n;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (this.steps[m] < step) lo = m + 1;
      else hi = m;
    }
    dropped += this.n - lo;
    this.n = lo;
    this.restarts.push({ line, step, previousStep, dropped, kind: step === previousStep ? 'duplicate' : 'restart' });
  }

  finish(): { steps: Float64Array; losses: Float64Array } {
    if (this.pendCount > 0) {
      this.push(this.pendStep, this.pendLoss);
      this.pendCount = 0;
    }
    return { steps: this.steps.slice(0, this.n), losses: this.losses.slice(0, this.n) };
  }
}

/** Ordering used to keep the "worse" point of a pair: non-finite (NaN, +Inf) first, then larger. */
function worse(a: number, b: number): boolean {
  if (Number.isNaN(b)) return false;
  if (Number.isNaN(a)) return true;
  return a > b;
}

/**
 * Reads the column names of a metrics file without parsing it all: the CSV header, or the keys of
 * the first {@link JSONL_KEY_SCAN_LINES} JSON lines. Format by extension (`.csv`/`.tsv` → CSV,
 * otherwise JSONL when the first non-blank character is `{`, else CSV).
 * @throws DataError when the file cannot be read or has no header/JSON line.
 */
export async function readLogColumns(file: string): Promise<{ format: 'csv' | 'jsonl'; columns: string[] }> {
  const format = await detectFormat(file);
  if (format === 'csv') {
    const rows = await csvHead(file);
    if (!rows.length) throw new DataError(`${file}: empty file; expected a CSV header line with a step and a loss column`, file);
    return { format, columns: rows[0] };
  }
  const keys = new Set<string>();
  let n = 0;
  for await (const { text } of lines(file)) {
    const obj = parseJsonLine(text);
    if (obj) for (const k of Object.keys(obj)) if (keys.size < 500) keys.add(k);
    if (++n >= JSONL_KEY_SCAN_LINES) break;
  }
  if (!keys.size)
    throw new DataError(
      `${file}: no JSON object in the first ${fmt(JSONL_KEY_SCAN_LINES)} lines; expected one JSON object per line (JSONL)`,
      file,
    );
  return { format, columns: [...keys] };
}

async function detectFormat(file: string): Promise<'csv' | 'jsonl'> {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.csv' || ext === '.tsv') return 'csv';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, 'r');
  } catch (err) {
    throw new DataError(`${file}: cannot open: ${(err as Error).message}`, file);
  }
  try {
    const buf = Buffer.alloc(4096);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const first = buf.subarray(0, bytesRead).toString('utf8').trimStart()[0];
    return first === '{' ? 'jsonl' : 'csv';
  } finally {
    await fh.close();
  }
}

async function csvHead(file: string): Promise<string[][]> {
  const parser = fs
    .createReadStream(file, { end: 1 << 20 })
    .pipe(csvParse({ to_line: 1, relax_column_count: true, bom: true, delimiter: file.toLowerCase().endsWith('.tsv') ? '\t' : ',' }));
  const rows: string[][] = [];
  for await (const r of parser) rows.push(r as string[]);
  return rows;
}

/** Python's json writes NaN / Infinity / -Infinity bare: quote them so JSON.parse accepts the line. */
function parseJsonLine(text: string): Record<string, unknown> | undefined {
  const t = text.trim();
  if (!t) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(t);
  } catch {
    v = JSON.parse(t.replace(/([:[,]\s*)(-?Infinity|NaN)(?=\s*[,\]}])/g, '$1"$2"'));
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Lines of a file (1-based numbers) with the bytes read so far; chunked, bounded memory. */
async function* lines(file: string, signal?: AbortSignal): AsyncGenerator<{ text: string; line: number; bytes: number }> {
  const rs = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  let carry = '';
  let line = 0,
    bytes = 0;
  const decoder = new TextDecoder('utf-8');
  try {
    for await (const chunk of rs as AsyncIterable<Buffer>) {
      if (signal?.aborted) throw new CancelledError();
      bytes += chunk.length;
      const text = carry + decoder.decode(chunk, { stream: true });
      const parts = text.split('\n');
      carry = parts.pop() ?? '';
      for (const p of parts) yield { text: p, line: ++line, bytes };
    }
    carry += decoder.decode();
    if (carry) yield { text: carry, line: ++line, bytes };
  } finally {
    rs.destroy();
  }
}

/**
 * Parses a metrics file into a loss series (see the module doc for the rules).
 * @throws DataError when the file cannot be read, has no step or no loss column (naming the
 *   columns), or no row with a numeric step and a loss; CancelledError when `signal` fires.
 */
export async function parseTrainingLog(file: string, opts: ParseLogOptions = {}): Promise<TrainingLog> {
  file = path.resolve(file);
  let total: number;
  try {
    total = (await fs.promises.stat(file)).size;
  } catch (err) {
    throw new DataError(`${file}: cannot read: ${(err as Error).message}`, file);
  }
  const { format, columns } = await readLogColumns(file);
  const name = path.basename(file);
  const step = chooseColumn(columns, stepCandidates(columns), opts.stepColumn, 'step', file);
  const loss = chooseColumn(columns, lossCandidates(columns), opts.lossColumn, 'loss', file);
  const shown =
    columns
      .slice(0, 30)
      .map((c) => JSON.stringify(c))
      .join(', ') + (columns.length > 30 ? ', …' : '');
  if (!step.column)
    throw new DataError(`${name}: no step column (looked for ${STEP_NAMES.join(', ')}); the columns are ${shown}. Choose one.`, file);
  if (!loss.column)
    throw new DataError(
      `${name}: no loss column (looked for ${LOSS_NAMES.join(', ')} or a name containing "loss"); the columns are ${shown}. Choose one.`,
      file,
    );
  const series = new SeriesBuilder(Math.max(16, opts.maxPoints ?? 2_000_000));
  const result = {
    rows: 0,
    rowsWithoutLoss: 0,
    badSteps: { count: 0 } as TrainingLog['badSteps'],
    badLines: { count: 0 } as TrainingLog['badLines'],
    nonFinite: [] as NonFiniteLoss[],
    nonFiniteCount: 0,
  };
  const take = (stepRaw: unknown, lossRaw: unknown, line: number) => {
    result.rows++;
    const s = parseLogNumber(stepRaw);
    if (s === undefined || !Number.isSafeInteger(s) || s < 0) {
      result.badSteps.count++;
      result.badSteps.first ??= { line, text: stepRaw === undefined ? '(absent)' : String(stepRaw).slice(0, 40) };
      return;
    }
    const l = parseLogNumber(lossRaw);
    if (l === undefined) {
      result.rowsWithoutLoss++;
      return;
    }
    series.add(s, l, line);
  };
  const progress = (bytes: number) => opts.onProgress?.(bytes, total);

  if (format === 'csv') {
    const si = columns.indexOf(step.column),
      li = columns.indexOf(loss.column);
    const rs = fs.createReadStream(file, { highWaterMark: 1 << 20 });
    const parser = rs.pipe(
      csvParse({
        from_line: 2,
        relax_column_count: true,
        bom: true,
        skip_empty_lines: true,
        delimiter: file.toLowerCase().endsWith('.tsv') ? '\t' : ',',
        on_record: (rec: string[], ctx: { lines: number }) => [ctx.lines, rec[si], rec[li]] as unknown as string[],
      }),
    );
    let n = 0;
    try {
      for await (const rec of parser as AsyncIterable<[number, string | undefined, string | undefined]>) {
        take(rec[1], rec[2], rec[0]);
        if ((++n & 0xffff) === 0) {
          if (opts.signal?.aborted) throw new CancelledError();
          progress(parser.info.bytes);
          await new Promise<void>((r) => setImmediate(r));
        }
      }
    } catch (err) {
      if (err instanceof CancelledError) throw err;
      const e = err as Error & { lines?: number };
      throw new DataError(`${name}: line ${e.lines ?? '?'}: not valid CSV: ${e.message}`, file, e.lines);
    } finally {
      rs.destroy();
    }
    progress(total);
  } else {
    let n = 0;
    for await (const { text, line, bytes } of lines(file, opts.signal)) {
      if (!text.trim()) continue;
      let obj: Record<string, unknown> | undefined;
      try {
        obj = parseJsonLine(text);
      } catch (err) {
        result.badLines.count++;
        result.badLines.first ??= { line, message: (err as Error).message };
        continue;
      }
      if (!obj) {
        result.badLines.count++;
        result.badLines.first ??= { line, message: 'not a JSON object' };
        continue;
      }
      if (!(loss.column in obj)) {
        if (step.column in obj) {
          result.rows++;
          result.rowsWithoutLoss++;
        }
        continue;
      }
      take(obj[step.column], obj[loss.column], line);
      if ((++n & 0x3fff) === 0) {
        progress(bytes);
        await new Promise<void>((r) => setImmediate(r));
      }
    }
    progress(total);
  }
  const { steps, losses } = series.finish();
  if (!steps.length) {
    const why = result.badSteps.count
      ? `the step column ${JSON.stringify(step.column)} holds no non-negative integer (line ${result.badSteps.first!.line}: ${JSON.stringify(result.badSteps.first!.text)})`
      : `no row has both ${JSON.stringify(step.column)} and ${JSON.stringify(loss.column)}`;
    throw new DataError(`${name}: no loss points: ${why}`, file, result.badSteps.first?.line);
  }
  // Non-finite losses among the kept points.
  for (let i = 0; i < losses.length; i++) {
    if (!Number.isFinite(losses[i])) {
      result.nonFiniteCount++;
      if (result.nonFinite.length < 1000) result.nonFinite.push({ step: steps[i], value: String(losses[i]) });
    }
  }
  return {
    file,
    format,
    columns,
    step,
    loss,
    steps,
    losses,
    ...result,
    restarts: series.restarts,
    decimation: series.decimation,
    bytes: total,
  };
}

/** Points whose update (under the convention) is outside `0..numUpdates−1`: count and the step range. */
export function outOfRangeSteps(
  steps: Float64Array,
  conv: StepConvention,
  numUpdates: number,
): { count: number; firstStep?: number; lastStep?: number } {
  let count = 0,
    firstStep: number | undefined,
    lastStep: number | undefined;
  for (let i = 0; i < steps.length; i++) {
    const u = stepToUpdate(steps[i], conv);
    if (u < 0 || u >= numUpdates) {
      count++;
      firstStep ??= steps[i];
      lastStep = steps[i];
    }
  }
  return { count, firstStep, lastStep };
}

/** One-paragraph summary of what was read and what was odd, for the UI and the CLI. */
export function describeLog(log: TrainingLog, conv: StepConvention, numUpdates?: number): string[] {
  const name = path.basename(log.file);
  const out = [
    `${name}: ${count(log.steps.length, 'loss point')} from ${JSON.stringify(log.loss.column)} against ${JSON.stringify(log.step.column)}, steps ${fmt(log.steps[0])}..${fmt(log.steps[log.steps.length - 1])} (${STEP_CONVENTION_TEXT[conv]}).`,
  ];
  if (log.decimation > 1) out.push(`Large log: kept 1 point in ${fmt(log.decimation)} (the higher loss of each group, so spikes stay).`);
  if (log.nonFiniteCount)
    out.push(
      `NaN or infinite: ${count(log.nonFiniteCount, 'loss value')} (first at step ${fmt(log.nonFinite[0].step)}: ${log.nonFinite[0].value}); shown as gaps and listed.`,
    );
  const restarts = log.restarts.filter((r) => r.kind === 'restart'),
    dups = log.restarts.filter((r) => r.kind === 'duplicate');
  if (restarts.length)
    out.push(
      `${count(restarts.length, 'restart')}: the step went back (first at line ${fmt(restarts[0].line)}: step ${fmt(restarts[0].previousStep)} → ${fmt(restarts[0].step)}); the later run replaces the earlier points from that step on.`,
    );
  if (dups.length)
    out.push(
      `${count(dups.length, 'duplicated step')} (first at line ${fmt(dups[0].line)}, step ${fmt(dups[0].step)}); the last value is kept.`,
    );
  if (log.badSteps.count)
    out.push(
      `Skipped for want of a usable step: ${count(log.badSteps.count, 'row')} (first at line ${fmt(log.badSteps.first!.line)}: ${JSON.stringify(log.badSteps.first!.text)}).`,
    );
  if (log.badLines.count)
    out.push(
      `Skipped as not JSON objects: ${count(log.badLines.count, 'line')} (first at line ${fmt(log.badLines.first!.line)}: ${log.badLines.first!.message}).`,
    );
  if (numUpdates !== undefined) {
    const o = outOfRangeSteps(log.steps, conv, numUpdates);
    if (o.count)
      out.push(
        `Outside the dataset's updates 0..${fmt(numUpdates - 1)}: ${count(o.count, 'point')} (steps ${fmt(o.firstStep!)}..${fmt(o.lastStep!)}), drawn, but with no data to inspect.`,
      );
  }
  if (log.step.ambiguous)
    out.push(
      `Several step columns: ${log.step.candidates.map((c) => JSON.stringify(c)).join(', ')}; using ${JSON.stringify(log.step.column)}.`,
    );
  if (log.loss.ambiguous)
    out.push(
      `Several loss columns: ${log.loss.candidates.map((c) => JSON.stringify(c)).join(', ')}; using ${JSON.stringify(log.loss.column)}.`,
    );
  return out;
}
