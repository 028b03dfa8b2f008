/**
 * `worker_threads` entry of the stream search (`count`), built by esbuild to
 * `dist/workers/searchWorker.js` and driven by `src/core/search/count.ts` (found like the
 * verify worker: next to the bundle, else `<package>/dist/workers/`).
 *
 * At creation it gets the compiled terms, the tokenizer's byte table and the stream's segments
 * (`workerData`: {@link SearchWorkerData}) and builds its own automaton tables. Then it counts
 * one shard per task message ({@link SearchWorkerTask}) and answers with the non-zero bucket
 * cells of each chunk as it is scanned, then the rest when the shard is done ({@link SearchWorkerReply}). Cancellation: the parent terminates the worker.
 */
import { parentPort, workerData } from 'worker_threads';
import { TokenStream, StreamSegment } from '../stream';
import { CountSetup, CountTask, countTask, makeScanner } from '../search/task';
import { openOrderSpec } from '../order/openOrder';

/** Data given to each search worker at creation. */
export interface SearchWorkerData {
  setup: CountSetup;
  segments: StreamSegment[];
  /** Tokens per sequential read. */
  chunkTokens?: number;
}

/** Parent → worker: count one shard. */
export interface SearchWorkerTask {
  type: 'task';
  id: number;
  task: CountTask;
}

/** Worker → parent. */
export type SearchWorkerReply =
  /** A chunk of the task's shard is scanned: its tokens and the cells counted since the last message, flat `[bucket·T + term, count, …]`. */
  | { type: 'chunk'; id: number; tokens: number; cells: number[] }
  /** The shard is counted: the cells not sent with its chunks, flat `[bucket·T + term, count, …]`. */
  | { type: 'done'; id: number; cells: number[] }
  /** The shard could not be counted (unreadable, changed while read, …). */
  | { type: 'error'; id: number; message: string; file?: string };

const data = workerData as SearchWorkerData;
// A worker thread may block: its reads are pread()s on this thread, with no thread-pool hop.
const stream = new TokenStream(data.segments, { blocking: true });
const scanner = makeScanner(stream, data.setup);
// Opened once per worker; a failure is reported by each task (the empty catch keeps the rejection handled until a task awaits it).
const opening = data.setup.order ? openOrderSpec(data.setup.order) : Promise.resolve(undefined);
opening.catch(() => undefined);
const post = (m: SearchWorkerReply) => parentPort!.postMessage(m);

let queue: Promise<void> = Promise.resolve();
parentPort!.on('message', (msg: SearchWorkerTask) => {
  if (msg.type !== 'task') return;
  queue = queue.then(async () => {
    try {
      const order = await opening;
      const cells = await countTask(
        scanner,
        data.setup,
        msg.task,
        {
          chunkTokens: data.chunkTokens,
          onChunk: (tokens, cells) => post({ type: 'chunk', id: msg.id, tokens, cells }),
        },
        order,
      );
      post({ type: 'done', id: msg.id, cells });
    } catch (err) {
      post({ type: 'error', id: msg.id, message: (err as Error).message, file: (err as { file?: string }).file });
    }
  });
});
