/**
 * Encoding (text → ids) in a worker thread with a time limit. The library's encoder runs the
 * tokenizer.json's own regular expressions; a catastrophic one (e.g. `(a+)+$`) would hang
 * whoever runs it — the extension host, for every extension — so it never runs on the caller's
 * thread. A request that runs past its limit terminates the worker and fails with a DataError
 * naming the file and the pattern that probably backtracked; the next request starts a new worker.
 *
 * One worker per tokenizer, started on first use, kept while requests come (closed after
 * {@link ENCODE_WORKER_IDLE_MS} idle), `unref`'d so it never keeps a process alive.
 *
 * Finding the worker script: `<dir of this bundle>/workers/encodeWorker.js` (dist/), else the
 * first `dist/workers/encodeWorker.js` above this bundle's folder in a folder holding package.json
 * (bundled tests), as for the hash worker.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Worker } from 'worker_threads';
import { CancelledError, DataError } from './errors';
import { fmt } from './units';
import { checkEncoderConfig, tokenizerPatterns } from './encoderCheck';
import type { EncodeReply, EncodeWorkerData } from './workers/encodeWorker';

/** File name of the worker bundle inside `dist/workers/`. */
export const ENCODE_WORKER_FILE = 'encodeWorker.js';
/** A worker with no request for this long is closed (ms). */
export const ENCODE_WORKER_IDLE_MS = 30_000;
/** How long loading the tokenizer in the worker may take (ms). */
export const ENCODE_LOAD_LIMIT_MS = 60_000;

/**
 * Default time limit of one encode, in ms: 10 s plus 1 s per 20,000 characters. Normal encoding
 * runs at about 700,000 characters/s here, so the limit is ~35× the normal time for any length;
 * only a pathological pattern reaches it.
 */
export function defaultEncodeTimeLimitMs(chars: number): number {
  return 10_000 + Math.ceil(chars / 20);
}

/** Options of {@link Encoder.encode}. */
export interface EncodeOptions {
  /** Time limit in ms (default {@link defaultEncodeTimeLimitMs}). */
  timeLimitMs?: number;
  /** Aborting terminates the worker and rejects with CancelledError. */
  signal?: AbortSignal;
}

/** Finds `dist/workers/encodeWorker.js` (see the file comment). */
export function resolveEncodeWorker(from: string = __dirname): string {
  const beside = path.join(from, 'workers', ENCODE_WORKER_FILE);
  if (fs.existsSync(beside)) return beside;
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'dist', 'workers', ENCODE_WORKER_FILE);
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) break;
  }
  throw new Error(`cannot find the encode worker ${ENCODE_WORKER_FILE} next to ${from}; run \`node esbuild.js\` to build dist/workers/.`);
}

/** Encodes with one tokenizer in a worker thread (see the file comment). */
export class Encoder {
  private worker?: Worker;
  private ready?: Promise<Worker>;
  private nextId = 1;
  private idle?: NodeJS.Timeout;
  private checked = false;

  /**
   * @param file the tokenizer.json (named in messages; read by the worker when `json` is undefined).
   * @param json the parsed tokenizer.json, when the caller has it (checked before the worker starts).
   */
  constructor(
    readonly file: string,
    private readonly json?: unknown,
  ) {}

  /**
   * Encodes `text`.
   * @throws DataError naming the file and field when the tokenizer.json lacks what encoding needs,
   *   or naming the file and pattern when the time limit passes; CancelledError on abort.
   */
  async encode(text: string, opts: EncodeOptions = {}): Promise<number[]> {
    if (!this.checked && this.json !== undefined) {
      checkEncoderConfig(this.json, this.file);
      this.checked = true;
    }
    if (text === '') return [];
    const limit = opts.timeLimitMs ?? defaultEncodeTimeLimitMs(text.length);
    const worker = await this.start(opts.signal);
    if (this.idle) clearTimeout(this.idle);
    const id = this.nextId++;
    try {
      return await new Promise<number[]>((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
          opts.signal?.removeEventListener('abort', onAbort);
        };
        const onMessage = (m: EncodeReply) => {
          if (!('id' in m) || m.id !== id) return;
          done();
          if ('ids' in m) resolve(m.ids);
          else reject(new DataError(`${this.file}: cannot encode: ${m.error}`, this.file));
        };
        const onError = (e: Error) => {
          done();
          this.kill();
          reject(new DataError(`${this.file}: the encoder failed: ${e.message}`, this.file));
        };
        const onExit = () => {
          done();
          this.forget();
          reject(new DataError(`${this.file}: the encoder stopped unexpectedly`, this.file));
        };
        const onAbort = () => {
          done();
          this.kill();
          reject(new CancelledError());
        };
        const timer = setTimeout(() => {
          done();
          this.kill();
          reject(this.timeoutError(text.length, limit));
        }, limit);
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.on('exit', onExit);
        opts.signal?.addEventListener('abort', onAbort, { once: true });
        worker.postMessage({ id, text });
      });
    } finally {
      if (this.worker) {
        this.idle = setTimeout(() => this.kill(), ENCODE_WORKER_IDLE_MS);
        this.idle.unref();
      }
    }
  }

  /** Closes the worker (a later encode starts a new one). */
  dispose(): void {
    this.kill();
  }

  private timeoutError(chars: number, limit: number): DataError {
    const patterns = this.json !== undefined ? tokenizerPatterns(this.json) : [];
    const named = patterns.map((p) => `${p.field} = ${JSON.stringify(p.pattern.length > 120 ? p.pattern.slice(0, 119) + '…' : p.pattern)}`);
    // The time-out does not say which pattern ran: with several, none is singled out.
    const which =
      named.length === 1
        ? `; the pattern ${named[0]} probably backtracks catastrophically on this text`
        : named.length
          ? `; one of its patterns probably backtracks catastrophically on this text (normalizer first, then pre-tokenizer): ${[...named].sort((a, b) => Number(b.startsWith('normalizer')) - Number(a.startsWith('normalizer'))).join(', ')}`
          : '; its pre-tokenizer or normalizer is pathologically slow on this text';
    return new DataError(
      `${this.file}: encoding ${fmt(chars)} characters took longer than the ${fmt(limit / 1000)} s time limit${which}`,
      this.file,
    );
  }

  private start(signal?: AbortSignal): Promise<Worker> {
    if (signal?.aborted) return Promise.reject(new CancelledError());
    if (this.ready) return this.ready;
    const data: EncodeWorkerData = { file: this.file, json: this.json };
    const worker = new Worker(resolveEncodeWorker(), { workerData: data });
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<Worker>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.kill();
        reject(
          new DataError(`${this.file}: loading the tokenizer for encoding took longer than ${ENCODE_LOAD_LIMIT_MS / 1000} s`, this.file),
        );
      }, ENCODE_LOAD_LIMIT_MS);
      const onMessage = (m: EncodeReply) => {
        if ('ready' in m) {
          clearTimeout(timer);
          worker.off('message', onMessage);
          resolve(worker);
        } else if ('loadError' in m) {
          clearTimeout(timer);
          this.kill();
          reject(new DataError(`${this.file}: cannot load the tokenizer for encoding: ${m.loadError}`, this.file));
        }
      };
      worker.on('message', onMessage);
      worker.once('error', (e) => {
        clearTimeout(timer);
        this.kill();
        reject(new DataError(`${this.file}: the encoder failed to start: ${e.message}`, this.file));
      });
    });
    this.ready.catch(() => undefined);
    return this.ready;
  }

  private forget(): void {
    this.worker = undefined;
    this.ready = undefined;
    if (this.idle) {
      clearTimeout(this.idle);
      this.idle = undefined;
    }
  }

  private kill(): void {
    const w = this.worker;
    this.forget();
    if (w) void w.terminate();
  }
}
