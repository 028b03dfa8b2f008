/**
 * Export of updates in the formats people load:
 * - `jsonl`: one line per sequence, `{"update","sequence","token_range","input_ids","target_ids","text"}`
 *   (`token_range` = the sequence's global input range `[G·k + L·r, G·k + L·(r+1))`, `input_ids` =
 *   the card's `x[r]`, `target_ids` = `y[r]`, `text` = the decoded `input_ids`, or null without a tokenizer);
 * - `txt`: each update as `token-shards update ROOT k` prints it to a file (the update view's text
 *   model with the decoded text as it is; control characters as marks such as `⟨ESC⟩` only with
 *   `markControls`, for a terminal), updates separated by one blank line;
 * - `npz`: an uncompressed zip (what `np.savez` writes) of `input_ids.npy` and `target_ids.npy`,
 *   uint32 little-endian, shape `[updates, S, L]` (S = G/L; [n, 128, 1024] for the card), equal to
 *   the card's `x` and `y` stacked. Written with yazl (ZIP64 when an entry passes 4 GiB).
 *
 * Through a run's training order ({@link ExportOptions.order}, e.g. Megatron's shuffled samples),
 * only `npz` is written: shape `[updates, B, L]` (B samples per update in batch order, L input
 * tokens per sample), `input_ids[i, s]` = sample s's first L tokens as the trainer assembled them
 * from its stream ranges, `target_ids[i, s]` = its tokens 1..L (the same arrays as
 * `token-shards update ROOT k --run FILE --json` prints per sample).
 *
 * Memory is bounded: one update (G + 1 ids) is read at a time and written with backpressure
 * (for npz the updates are read twice, once per array). Units: counts in updates unless named bytes.
 */
import * as fs from 'fs';
import * as os from 'os';
import { Readable, Writable } from 'stream';
import * as yazl from 'yazl';
import type { Dataset } from './dataset';
import { DEFAULT_DOCUMENT_SCAN_LIMIT, type DocumentIndex } from './documents';
import { documentRuleOf } from './documentRule';
import { CancelledError, DataError, RangeRequestError } from './errors';
import { checkOrderUpdate, type OrderSample, type TrainingOrder } from './order/order';
import { count } from './units';
import { npyHeaderBytes } from './formats/npy';
import type { LoadedTokenizer } from './tokenizer';
import { readUpdate, inputRow, targetRow } from './update';
import { buildUpdateModel, documentNumberIfCheap, formatUpdateModelText } from './updateModel';
import { jsonSafe, terminalSafe } from './untrusted';
import { checkOutputPath, protectedPathsOf, createPartialFile, publishPartialFile } from './safeWrite';

/** Export formats. */
export const EXPORT_FORMATS = ['jsonl', 'txt', 'npz'] as const;
/** One of {@link EXPORT_FORMATS}. */
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Progress: `done` of `total` update passes (npz makes two passes: x, then y). */
export interface ExportProgress {
  done: number;
  total: number;
  /** Bytes handed to the sink so far (npz: entry payloads, before the zip's own headers). */
  bytes: number;
}

/** Options of {@link exportUpdates}. */
export interface ExportOptions {
  /** Decodes `text` (jsonl) and the txt form; required for `txt`. */
  tokenizer?: LoadedTokenizer;
  /** Numbers documents in the txt form when cheap (as `update` does). */
  documentIndex?: DocumentIndex;
  /** Budget (tokens) for that numbering; the extension's documentScanLimit default. */
  documentScanLimit?: number;
  signal?: AbortSignal;
  onProgress?: (p: ExportProgress) => void;
  /** txt: show control characters of the text as marks (`⟨ESC⟩`), for a terminal. Default false: the text as it is. */
  markControls?: boolean;
  /**
   * The run's training order that update k follows (the CLI's `TrainingOrder`, the extension's
   * `OrderView`); absent or `sequential`: the dataset card's order. Only `npz` goes through it.
   */
  order?: ExportOrder;
}

/** What the export asks of a training order: its shape and update k's samples in batch order. */
export interface ExportOrder extends Pick<TrainingOrder, 'kind' | 'numUpdates' | 'samplesPerUpdate' | 'inputTokens'> {
  update(k: number): OrderSample[] | Promise<OrderSample[]>;
}

/**
 * Checks that updates `first` and `last` exist: in the run's `order` when one is given (and not
 * the card's sequential order; then only npz is exported), else in the card's schedule.
 * @throws RangeRequestError naming the valid range, or the format the order does not export.
 */
export function checkExportUpdates(
  ds: Pick<Dataset, 'schedule'>,
  first: number,
  last: number,
  format: ExportFormat,
  order: ExportOrder | undefined,
): void {
  const run = runOrder({ order });
  if (run) {
    checkOrderUpdate(run, first);
    checkOrderUpdate(run, last);
    if (format !== 'npz')
      throw new RangeRequestError(`through the run's ${run.kind} order only npz is exported (asked: ${format}); choose npz`);
  } else {
    ds.schedule.checkUpdate(first);
    ds.schedule.checkUpdate(last);
  }
}

/** The run's order when it is not the card's sequential one. */
function runOrder(opts: ExportOptions): ExportOrder | undefined {
  return opts.order && opts.order.kind !== 'sequential' ? opts.order : undefined;
}

const LITTLE_ENDIAN_HOST = os.endianness() === 'LE';

/**
 * The `.npy` (format 1.0) header for a C-order little-endian uint32 array: magic, version, header
 * length, the dict padded with spaces and a newline so the data starts at a multiple of 64 bytes.
 */
export function npyHeader(shape: number[]): Buffer {
  return npyHeaderBytes('<u4', shape);
}

/** Little-endian bytes of ids (a view on little-endian hosts, a swapped copy otherwise). */
function leBytes(ids: Uint32Array): Buffer {
  if (LITTLE_ENDIAN_HOST) return Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength);
  const b = Buffer.allocUnsafe(ids.byteLength);
  for (let i = 0; i < ids.length; i++) b.writeUInt32LE(ids[i], 4 * i);
  return b;
}

/** Writes a chunk, waiting for `drain` when the sink is full; rejects on a sink error. */
function writeChunk(sink: Writable, chunk: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    if (sink.destroyed) {
      reject(new Error('the output was closed'));
      return;
    }
    const ok = sink.write(chunk, (err) => {
      if (err) reject(err);
    });
    if (ok) resolve();
    else {
      const onDrain = () => {
        sink.off('error', onError);
        resolve();
      };
      const onError = (err: Error) => {
        sink.off('drain', onDrain);
        reject(err);
      };
      sink.once('drain', onDrain);
      sink.once('error', onError);
    }
  });
}

/**
 * Writes updates `first..last` (inclusive, 0-based) in `format` to `sink` (not ended: the caller
 * owns it; npz output is piped and finished before this resolves).
 * @throws RangeRequestError for updates outside the stream or `txt` without a tokenizer;
 *   DataError on a short read; CancelledError when `signal` fires (the output is then incomplete).
 */
export async function exportUpdates(
  ds: Pick<Dataset, 'schedule' | 'stream' | 'shards' | 'settings'> & Partial<Pick<Dataset, 'format'>>,
  first: number,
  last: number,
  format: ExportFormat,
  sink: Writable,
  opts: ExportOptions = {},
): Promise<void> {
  checkExportUpdates(ds, first, last, format, opts.order);
  if (last < first) throw new RangeRequestError(`the range ${first}..${last} is empty (the last update comes before the first)`);
  if (format === 'txt' && !opts.tokenizer) throw new RangeRequestError('the txt export decodes text and needs a tokenizer');
  const n = last - first + 1;
  const check = () => {
    if (opts.signal?.aborted) throw new CancelledError();
  };
  const progress: ExportProgress = { done: 0, total: format === 'npz' ? 2 * n : n, bytes: 0 };
  if (format === 'npz') return writeNpz(ds, first, last, sink, opts, progress);
  const { G, L } = ds.schedule;
  const tok = opts.tokenizer;
  for (let k = first; k <= last; k++) {
    check();
    const batch = await readUpdate(ds as Dataset, k);
    let text: string;
    if (format === 'jsonl') {
      const lines: string[] = [];
      for (let r = 0; r < batch.rows; r++) {
        const x = inputRow(batch, r),
          y = targetRow(batch, r);
        const s = G * k + L * r;
        lines.push(
          `{"update":${k},"sequence":${r},"token_range":[${s},${s + L}],"input_ids":[${x.join(',')}],"target_ids":[${y.join(',')}],"text":${tok ? jsonSafe(tok.decode(x)) : 'null'}}\n`,
        );
      }
      text = lines.join('');
    } else {
      const prev = k > 0 ? (await ds.stream.read(G * k - 1, 1))[0] : undefined;
      const firstDocument = opts.documentIndex
        ? await documentNumberIfCheap(opts.documentIndex, G * k, opts.documentScanLimit ?? DEFAULT_DOCUMENT_SCAN_LIMIT, opts.signal)
        : undefined;
      // Shard names are metadata, always shown with their control characters marked (a name is
      // never a terminal command); the decoded text is the text unless `markControls`.
      const model = buildUpdateModel({ ...batch, shards: batch.shards.map((e) => ({ ...e, shard: terminalSafe(e.shard) })) }, tok, {
        previousId: prev,
        firstDocument,
        numUpdates: ds.schedule.numUpdates,
        eos: ds.settings.eosTokenId,
        delimiter: documentRuleOf(ds).role,
      });
      // As `update` prints it: the text itself, or with control characters as marks for a terminal.
      const body = formatUpdateModelText(model);
      text = (k > first ? '\n' : '') + (opts.markControls ? terminalSafe(body, { keepLayout: true }) : body) + '\n';
    }
    const buf = Buffer.from(text, 'utf8');
    await writeChunk(sink, buf);
    progress.done++;
    progress.bytes += buf.length;
    opts.onProgress?.({ ...progress });
  }
}

async function writeNpz(
  ds: Pick<Dataset, 'schedule' | 'stream' | 'shards' | 'settings'>,
  first: number,
  last: number,
  sink: Writable,
  opts: ExportOptions,
  progress: ExportProgress,
): Promise<void> {
  const order = runOrder(opts);
  const S = order ? order.samplesPerUpdate : ds.schedule.G / ds.schedule.L;
  const L = order ? order.inputTokens : ds.schedule.L;
  const n = last - first + 1;
  const read = async (k: number, which: 'x' | 'y'): Promise<Uint32Array> =>
    order ? orderedRows(ds, order, k, which) : ds.stream.read(ds.schedule.G * k + (which === 'x' ? 0 : 1), ds.schedule.G);
  const zip = new yazl.ZipFile();
  const streams: Readable[] = [];
  let failed: Error | undefined;
  let fail: (err: Error) => void = (err) => {
    failed ??= err;
  };
  const entry = (which: 'x' | 'y'): Readable => {
    const header = npyHeader([n, S, L]);
    async function* gen(): AsyncGenerator<Buffer> {
      yield header;
      for (let k = first; k <= last; k++) {
        if (opts.signal?.aborted) throw new CancelledError();
        const b = leBytes(await read(k, which));
        progress.done++;
        progress.bytes += b.length;
        opts.onProgress?.({ ...progress });
        yield b;
      }
    }
    const r = Readable.from(gen(), { objectMode: false, highWaterMark: 1 });
    r.on('error', (err) => fail(err));
    streams.push(r);
    return r;
  };
  const size = npyHeader([n, S, L]).length + n * S * L * 4;
  const mtime = new Date(1980, 0, 1); // fixed: the same updates give the same bytes
  zip.addReadStreamLazy('input_ids.npy', { compress: false, size, mtime }, (cb) => cb(null, entry('x')));
  zip.addReadStreamLazy('target_ids.npy', { compress: false, size, mtime }, (cb) => cb(null, entry('y')));
  zip.end();
  const onAbort = () => {
    for (const s of streams) s.destroy(new CancelledError());
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      const out = zip.outputStream as Readable;
      fail = (err: Error) => {
        failed ??= err;
        out.unpipe(sink);
        for (const st of streams) st.destroy();
        reject(failed);
      };
      if (failed) {
        fail(failed);
        return;
      }
      (zip as unknown as NodeJS.EventEmitter).on('error', fail);
      out.on('error', fail);
      sink.on('error', fail);
      out.on('end', () => (failed ? reject(failed) : resolve()));
      out.pipe(sink, { end: false });
    });
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Update k of a run's order as one `[B, L]` block (row-major): each sample's ids assembled from
 * its stream ranges in order, its first L (`x`) or its ids 1..L (`y`).
 * @throws DataError when a sample holds fewer than L + 1 tokens.
 */
async function orderedRows(ds: Pick<Dataset, 'stream'>, order: ExportOrder, k: number, which: 'x' | 'y'): Promise<Uint32Array> {
  const L = order.inputTokens;
  const samples = await order.update(k);
  const out = new Uint32Array(samples.length * L);
  for (const s of samples) {
    const ids = new Uint32Array(L + 1);
    let at = 0;
    for (const p of s.pieces) {
      if (at >= ids.length) break;
      const got = await ds.stream.read(p.start, Math.min(p.end - p.start, ids.length - at));
      ids.set(got, at);
      at += got.length;
    }
    if (at < ids.length)
      throw new DataError(
        `update ${k}, sample ${s.sample}: its ranges hold ${at} tokens; the export needs ${L + 1} (inputs and the last target)`,
      );
    out.set(which === 'x' ? ids.subarray(0, L) : ids.subarray(1), s.slot * L);
  }
  return out;
}

/** Options of {@link exportUpdatesToFile}: those of {@link exportUpdates}, and how the rules of `safeWrite.ts` apply. */
export interface ExportFileOptions extends ExportOptions {
  /** Replace an existing regular file (default: refuse). */
  force?: boolean;
  /** How messages name the output option (default `--out`). */
  flag?: string;
}

/**
 * {@link exportUpdates} into a file, by the rules of `safeWrite.ts`: checked before anything is
 * written (never inside the dataset, an existing file only with `force`, never anything but a
 * regular file), written to a new temporary file next to it (unique name, `O_EXCL`) and given
 * the name only when complete, so a cancelled or failed export never leaves a truncated file
 * under the chosen name and never touches another file.
 * The dataset's folder and files are protected ({@link protectedPathsOf}).
 * @returns bytes written.
 * @throws OutputPathError (a RangeRequestError) for a refused path; what {@link exportUpdates}
 *   throws; the file-system error of the write.
 */
export async function exportUpdatesToFile(
  ds: Pick<
    Dataset,
    'schedule' | 'stream' | 'shards' | 'settings' | 'root' | 'lone' | 'manifestFile' | 'tokenizerFile' | 'provenance' | 'verification'
  >,
  first: number,
  last: number,
  format: ExportFormat,
  file: string,
  opts: ExportFileOptions = {},
): Promise<number> {
  const target = checkOutputPath(file, protectedPathsOf(ds), !!opts.force, opts.flag);
  const { path: tmp, handle } = await createPartialFile(target);
  const ws = handle.createWriteStream();
  try {
    await exportUpdates(ds, first, last, format, ws, opts);
    await new Promise<void>((resolve, reject) => {
      ws.once('error', reject);
      ws.end(() => resolve());
    });
    await publishPartialFile(tmp, target, !!opts.force, opts.flag);
    return (await fs.promises.stat(target)).size;
  } catch (err) {
    ws.destroy();
    await fs.promises.rm(tmp, { force: true });
    throw err;
  }
}

/** Bytes an npz export of `n` updates takes on disk, roughly (payload plus zip headers); for the UI's confirmation of big exports. */
export function npzSizeEstimate(n: number, G: number, L: number): number {
  return 2 * (npyHeader([n, G / L, L]).length + n * G * 4) + 512;
}

/** "12 updates (1.5 MB)"-style text for progress and confirmations. */
export function describeExport(n: number, bytes: number): string {
  const mb = bytes / 1e6;
  return `${count(n, 'update')} (${mb >= 1000 ? `${(mb / 1000).toFixed(1)} GB` : `${mb.toFixed(1)} MB`})`;
}
