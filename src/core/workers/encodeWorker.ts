/**
 * worker_threads entry: encodes text with `@huggingface/tokenizers` off the calling thread, so a
 * tokenizer.json with a catastrophic split regex cannot hang the extension host or the CLI: the
 * host (`src/core/encode.ts`) terminates this worker when a request runs past its time limit.
 *
 * workerData: {@link EncodeWorkerData}. Messages in: {@link EncodeRequest}; out: {@link EncodeReply}.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parentPort, workerData } from 'worker_threads';
import { parseJson } from '../safeJson';

/** How the worker gets the tokenizer: the parsed object, or a file to read. */
export interface EncodeWorkerData {
  file: string;
  /** The parsed tokenizer.json (when the caller built the tokenizer from an object). */
  json?: unknown;
}
/** One text to encode. */
export interface EncodeRequest {
  id: number;
  text: string;
}
/** The ids, or the library's error message. */
export type EncodeReply = { id: number; ids: number[] } | { id: number; error: string } | { ready: true } | { loadError: string };

interface Lib {
  encode(text: string): { ids: number[] };
}

async function load(): Promise<Lib> {
  const data = workerData as EncodeWorkerData;
  let json = data.json;
  if (json === undefined) {
    const r = parseJson(fs.readFileSync(data.file, 'utf8'));
    if (!r.ok) throw new Error(r.error);
    json = r.value;
  }
  let config: unknown = {};
  try {
    const r = parseJson(fs.readFileSync(path.join(path.dirname(data.file), 'tokenizer_config.json'), 'utf8'));
    if (r.ok && typeof r.value === 'object' && r.value !== null) config = r.value;
  } catch {
    /* optional: the library only needs an object */
  }
  const { Tokenizer } = await import('@huggingface/tokenizers');
  return new Tokenizer(json as never, config as never) as unknown as Lib;
}

const port = parentPort!;
load().then(
  (lib) => {
    port.postMessage({ ready: true } satisfies EncodeReply);
    port.on('message', (req: EncodeRequest) => {
      try {
        port.postMessage({ id: req.id, ids: lib.encode(req.text).ids } satisfies EncodeReply);
      } catch (e) {
        port.postMessage({ id: req.id, error: e instanceof Error ? e.message : String(e) } satisfies EncodeReply);
      }
    });
  },
  (e: Error) => port.postMessage({ loadError: e.message } satisfies EncodeReply),
);
