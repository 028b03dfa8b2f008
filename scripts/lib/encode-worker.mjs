/**
 * worker_threads entry used by scripts/make-sample.mjs: encodes a batch of documents with
 * `@huggingface/tokenizers` (`new Tokenizer(json, {})`, `encode(text).ids`).
 *
 * workerData: `{ tokenizerText: string, docs: Array<{ index: number, text: string }> }`.
 * Posts `{ index, ids: Uint32Array }` per document (the buffer is transferred), then `{ done: true }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Tokenizer } from '@huggingface/tokenizers';

if (!parentPort) throw new Error('encode-worker.mjs must run as a worker thread');

const tokenizer = new Tokenizer(JSON.parse(workerData.tokenizerText), {});
for (const { index, text } of workerData.docs) {
  const ids = Uint32Array.from(tokenizer.encode(text).ids);
  parentPort.postMessage({ index, ids }, [ids.buffer]);
}
parentPort.postMessage({ done: true });
