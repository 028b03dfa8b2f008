/**
 * The registry of storage formats: the adapters in the order sniffing prefers them, the sniffer
 * that picks one for a path, and {@link openFormat}, the one entry point the rest of the product
 * uses to open a path of any format.
 */
import * as fs from 'fs';
import * as path from 'path';
import { DataError } from '../errors';
import { folderHeads } from './files';
import { datatroveAdapter } from './datatrove';
import { dolmaAdapter } from './dolma';
import { litdataAdapter } from './litdata';
import { llmcAdapter } from './llmc';
import { mdsAdapter } from './mds';
import { megatronAdapter } from './megatron';
import { rawAdapter } from './raw';
import { tokenStreamAdapter } from './tokenStream';
import {
  FORMAT_NAMES,
  FormatAdapter,
  FormatName,
  FormatOpenOptions,
  OpenedFormat,
  SNIFF_HEAD_BYTES,
  SniffInput,
  SniffResult,
} from './types';

/**
 * Every adapter, most specific first: on equal confidence the earlier one wins (a `.bin` with an
 * llm.c magic is llm.c, with a sibling `.idx` Megatron, otherwise raw).
 */
export const FORMAT_ADAPTERS: readonly FormatAdapter[] = [
  tokenStreamAdapter,
  megatronAdapter,
  llmcAdapter,
  dolmaAdapter,
  datatroveAdapter,
  litdataAdapter,
  mdsAdapter,
  rawAdapter,
];

/** True when `name` is one of {@link FORMAT_NAMES}. */
export function isFormatName(name: string): name is FormatName {
  return (FORMAT_NAMES as readonly string[]).includes(name);
}

/**
 * Compares two names byte-wise in UTF-8, as Python's `sorted` orders `str` (by code point; UTF-8
 * byte order is code point order), not by locale and not by UTF-16 unit (JS's default sort).
 */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Reads what sniffers see of a path: its first {@link SNIFF_HEAD_BYTES} bytes (a file) and the
 * names in its folder (a folder, with the heads of its first files) or next to it (a file), sorted byte-wise.
 * @throws DataError when the path cannot be stat'ed or read, or is neither a regular file nor a folder.
 */
export async function sniffInputOf(target: string): Promise<SniffInput> {
  const abs = path.resolve(target);
  let st: fs.Stats;
  try {
    st = await fs.promises.stat(abs);
  } catch (err) {
    throw new DataError(`${abs}: cannot open: ${(err as Error).message}`, abs);
  }
  if (st.isDirectory()) {
    const names = await listNames(abs);
    return { path: abs, isDirectory: true, sizeBytes: 0, head: Buffer.alloc(0), names, heads: await folderHeads(abs, names) };
  }
  if (!st.isFile()) throw new DataError(`${abs}: is not a regular file or a folder; expected token data`, abs);
  const head = Buffer.alloc(Math.min(SNIFF_HEAD_BYTES, st.size));
  if (head.length) {
    const fh = await fs.promises.open(abs, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
    try {
      let done = 0;
      while (done < head.length) {
        const { bytesRead } = await fh.read(head, done, head.length - done, done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
    } finally {
      await fh.close();
    }
  }
  return { path: abs, isDirectory: false, sizeBytes: st.size, head, names: await listNames(path.dirname(abs)), heads: new Map() };
}

async function listNames(dir: string): Promise<string[]> {
  try {
    return (await fs.promises.readdir(dir)).sort(byteOrder);
  } catch (err) {
    throw new DataError(`${dir}: cannot list the folder: ${(err as Error).message}`, dir);
  }
}

/**
 * The most confident sniffer's answer for `input` (ties: the earlier adapter), or undefined when
 * no adapter recognises it.
 */
export function sniffFormat(input: SniffInput, adapters: readonly FormatAdapter[] = FORMAT_ADAPTERS): SniffResult | undefined {
  let best: SniffResult | undefined;
  for (const a of adapters) {
    const r = a.sniff(input);
    if (r && (!best || r.confidence > best.confidence)) best = r;
  }
  return best;
}

/** Options of {@link openFormat}. */
export interface OpenFormatOptions extends FormatOpenOptions {
  /** `--format` / `tokenShards.format`: skip sniffing and open as this format. */
  format?: FormatName;
  /** The adapters to choose from (default {@link FORMAT_ADAPTERS}). */
  adapters?: readonly FormatAdapter[];
}

/** A path opened by the format layer, with how its format was chosen. */
export interface OpenedPath {
  opened: OpenedFormat;
  /** Why this format: the sniffer's reason, or that `--format` forced it. */
  formatReason: string;
}

/**
 * Opens `target` (a file or folder of any registered format) as one token stream.
 * @throws DataError when no adapter recognises the path (naming what was looked for), or from the
 *   adapter when the data is not what its format promises.
 */
export async function openFormat(target: string, opts: OpenFormatOptions = {}): Promise<OpenedPath> {
  return openSniffed(await sniffInputOf(target), opts);
}

/**
 * {@link openFormat} for a path already read for sniffing ({@link sniffInputOf}).
 * @throws as {@link openFormat}.
 */
export async function openSniffed(input: SniffInput, opts: OpenFormatOptions = {}): Promise<OpenedPath> {
  const adapters = opts.adapters ?? FORMAT_ADAPTERS;
  let adapter: FormatAdapter | undefined;
  let formatReason: string;
  if (opts.format) {
    adapter = adapters.find((a) => a.name === opts.format);
    if (!adapter) throw new DataError(`format ${opts.format} is not available (known: ${adapters.map((a) => a.name).join(', ')})`);
    formatReason = 'forced by the format option';
  } else {
    const r = sniffFormat(input, adapters);
    if (!r) {
      throw new DataError(
        `${input.path}: no known token format here; expected ${input.isDirectory ? 'a folder holding' : 'one of'} shard_manifest.jsonl, .u32, ` +
          'Megatron .bin + .idx, llm.c .bin, .npy, .ds, or index.json with chunks (or pass --format NAME)',
        input.path,
      );
    }
    adapter = adapters.find((a) => a.name === r.format)!;
    formatReason = r.reason;
  }
  return { opened: await adapter.open(input, opts), formatReason };
}
