/**
 * llm.c / modded-nanogpt token files (karpathy/llm.c `dev/data/data_common.py` `write_datafile`,
 * commit f1e2ace6; read by `llmc/dataloader.h` `dataloader_load_shard_`): a header of 256 int32
 * (1,024 bytes) — `header[0]` magic, `header[1]` version, `header[2]` token count — then the
 * tokens:
 * - magic 20240520, version 1: GPT-2, uint16 tokens; every document is **preceded** by EOT 50256
 *   (`dev/data/fineweb.py`: `tokens = [eot]` then the document's ids);
 * - magic 20240801, version 7: Llama 3, uint32 tokens; every document is preceded by BOS 128000.
 *
 * So documents are delimiter-separated with the delimiter **opening** each document, and a
 * document cut at a file's end continues at the start of the next file.
 */
import * as path from 'path';
import { DataError } from '../errors';
import { fmt } from '../units';
import { extOf, fileSize, readBytes } from './files';
import { FormatAdapter, FormatFile, OpenedFormat, SniffInput, SniffResult, TokenDtype } from './types';

/** Bytes of the llm.c header: 256 int32. */
export const LLMC_HEADER_BYTES = 1024;

/** The llm.c header kinds: magic → version, dtype and the delimiter id prepended to documents. */
export const LLMC_KINDS: Record<number, { version: number; dtype: TokenDtype; delimiter: number; model: string }> = {
  20240520: { version: 1, dtype: 'uint16', delimiter: 50256, model: 'GPT-2' },
  20240801: { version: 7, dtype: 'uint32', delimiter: 128000, model: 'Llama 3' },
};

function magicOf(head: Uint8Array | undefined): number | undefined {
  if (!head || head.length < 4) return undefined;
  const m = new DataView(head.buffer, head.byteOffset, 4).getInt32(0, true);
  return LLMC_KINDS[m] ? m : undefined;
}

/**
 * True when `head` starts with what llm.c's 256 × int32 header looks like even if its magic is
 * not one this reader knows: a date-like `header[0]` (2024…–2029…, as llm.c's magics are) and
 * `header[3..255]` all zero. Such a file is opened as llm.c so a wrong magic is named as one
 * instead of being read as headerless tokens.
 */
function looksLikeLlmcHeader(head: Uint8Array | undefined): boolean {
  if (!head || head.length < LLMC_HEADER_BYTES) return false;
  const view = new DataView(head.buffer, head.byteOffset, LLMC_HEADER_BYTES);
  const m = view.getInt32(0, true);
  if (m < 20240000 || m >= 20300000) return false;
  for (let i = 3; i < 256; i++) if (view.getInt32(4 * i, true) !== 0) return false;
  return true;
}

function sniffLlmc(input: SniffInput): SniffResult | undefined {
  const reason = (head: Uint8Array | undefined, name: string) => {
    const m = magicOf(head);
    if (m !== undefined) return `llm.c header magic ${m} in ${name}`;
    return looksLikeLlmcHeader(head) ? `an llm.c-style 256 x int32 header in ${name}` : undefined;
  };
  if (input.isDirectory) {
    for (const n of input.names) {
      const why = extOf(n) === '.bin' ? reason(input.heads.get(n), n) : undefined;
      if (why) return { format: 'llm.c', confidence: 3, reason: why };
    }
    return undefined;
  }
  const why = extOf(input.path) === '.bin' ? reason(input.head, path.basename(input.path)) : undefined;
  return why ? { format: 'llm.c', confidence: 3, reason: why } : undefined;
}

/** A parsed llm.c header. */
export interface LlmcHeader {
  magic: number;
  dtype: TokenDtype;
  numTokens: number;
}

/**
 * Parses and checks an llm.c header against the file size.
 * @throws DataError naming the file, the byte offset and what was expected (truncated header,
 *   wrong magic, version, a negative count, a file shorter than the count says).
 */
export function parseLlmcHeader(head: Uint8Array, file: string, sizeBytes: number): LlmcHeader {
  if (head.length < LLMC_HEADER_BYTES) {
    throw new DataError(
      `${file}: byte ${fmt(head.length)}: truncated header (expected ${fmt(LLMC_HEADER_BYTES)} bytes of 256 int32)`,
      file,
    );
  }
  const view = new DataView(head.buffer, head.byteOffset, LLMC_HEADER_BYTES);
  const magic = view.getInt32(0, true);
  const kind = LLMC_KINDS[magic];
  if (!kind) throw new DataError(`${file}: byte 0: wrong magic ${magic}; expected 20240520 (GPT-2) or 20240801 (Llama 3)`, file);
  const version = view.getInt32(4, true);
  if (version !== kind.version)
    throw new DataError(`${file}: byte 4: version ${version}; expected ${kind.version} for magic ${magic}`, file);
  const numTokens = view.getInt32(8, true);
  const need = LLMC_HEADER_BYTES + numTokens * (kind.dtype === 'uint16' ? 2 : 4);
  if (numTokens < 0) throw new DataError(`${file}: byte 8: token count ${numTokens}; expected ≥ 0`, file);
  if (need > sizeBytes) {
    throw new DataError(
      `${file}: byte ${fmt(sizeBytes)}: the file ends before the ${fmt(numTokens)} tokens its header promises (expected ${fmt(need)} bytes)`,
      file,
    );
  }
  return { magic, dtype: kind.dtype, numTokens };
}

async function openLlmc(input: SniffInput, opts: { dtype?: TokenDtype }): Promise<OpenedFormat> {
  const dir = input.isDirectory ? input.path : path.dirname(input.path);
  const names = input.isDirectory ? input.names.filter((n) => extOf(n) === '.bin') : [path.basename(input.path)];
  const files: FormatFile[] = [];
  const notes: string[] = [];
  let header: LlmcHeader | undefined;
  let firstName = '';
  for (const name of names) {
    const file = path.join(dir, name);
    const sizeBytes = await fileSize(file);
    const head = await readBytes(file, 0, Math.min(LLMC_HEADER_BYTES, sizeBytes));
    if (input.isDirectory && magicOf(head) === undefined && !looksLikeLlmcHeader(head)) {
      notes.push(`${name}: no llm.c header; left out of the stream`);
      continue;
    }
    const h = parseLlmcHeader(head, file, sizeBytes);
    if (header && h.magic !== header.magic) {
      throw new DataError(
        `${file}: byte 0: magic ${h.magic} differs from ${header.magic} in ${firstName}; expected one kind of file per stream`,
        file,
      );
    }
    if (!header) {
      header = h;
      firstName = name;
    }
    const extra = sizeBytes - LLMC_HEADER_BYTES - h.numTokens * (h.dtype === 'uint16' ? 2 : 4);
    if (extra > 0) notes.push(`${name}: ${fmt(extra)} bytes after the ${fmt(h.numTokens)} tokens of its header are not shown`);
    files.push({ path: file, name, numTokens: h.numTokens, sizeBytes, layout: { dtype: h.dtype, headerBytes: LLMC_HEADER_BYTES } });
  }
  if (!header) throw new DataError(`${input.path}: no .bin file with an llm.c header in this folder`, input.path);
  if (opts.dtype && opts.dtype !== header.dtype) {
    throw new DataError(
      `${path.join(dir, firstName)}: byte 0: the header says ${header.dtype}, not the ${opts.dtype} the dtype option asks for`,
      path.join(dir, firstName),
    );
  }
  const kind = LLMC_KINDS[header.magic];
  notes.push(`llm.c ${kind.model} files: every document begins with ${kind.delimiter}`);
  return { format: 'llm.c', dtype: header.dtype, dtypeSource: 'header', files, eosTokenId: kind.delimiter, delimiter: 'opens', notes };
}

/** llm.c `.bin` with the 256 × int32 header. */
export const llmcAdapter: FormatAdapter = {
  name: 'llm.c',
  description: 'llm.c / modded-nanogpt .bin with a 256 x int32 header (data_common.py)',
  sniff: sniffLlmc,
  open: openLlmc,
};
