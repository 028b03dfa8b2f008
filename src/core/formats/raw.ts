/**
 * Raw token files: headerless little-endian ids (nanoGPT's `train.bin` / `val.bin`, any
 * `.bin`/`.npy`/`.u16` without a header) and real numpy `.npy` arrays (with the `\x93NUMPY`
 * header, see `npy.ts`).
 *
 * nanoGPT (karpathy/nanoGPT `data/openwebtext/prepare.py`, `data/shakespeare/prepare.py`):
 * `np.memmap(filename, dtype=np.uint16, mode='w+')` of GPT-2 ids, each document followed by the
 * EOT id 50256 (`ids.append(enc.eot_token)`): uint16 with EOS 50256 closing each document.
 *
 * Otherwise the dtype is `--dtype`, a `.npy` header, the extension (`.u16`), or a guess from the
 * ids (`guess.ts`), and documents are EOS-separated as in the dataset card.
 */
import * as path from 'path';
import { DataError } from '../errors';
import { fmt } from '../units';
import { extOf, fileSize, readBytes } from './files';
import { GUESS_SAMPLE_BYTES, guessDtype } from './guess';
import { hasNpyMagic, parseNpyHeader } from './npy';
import {
  FormatAdapter,
  FormatFile,
  FormatOpenOptions,
  OpenedFormat,
  Provenance,
  SNIFF_HEAD_BYTES,
  SniffInput,
  SniffResult,
  TokenDtype,
  dtypeBytes,
} from './types';

/** GPT-2's `<|endoftext|>` id: nanoGPT appends it to every document. */
export const GPT2_EOT = 50256;

/** Names nanoGPT's `prepare.py` scripts write. */
const NANOGPT_NAMES = new Set(['train.bin', 'val.bin']);

/** Extensions of raw token files. */
const RAW_EXTS = new Set(['.bin', '.npy', '.u16']);

function sniffRaw(input: SniffInput): SniffResult | undefined {
  if (!input.isDirectory) {
    const name = path.basename(input.path);
    const ext = extOf(name);
    if (ext === '.npy' && hasNpyMagic(input.head)) return { format: 'raw', confidence: 3, reason: `numpy .npy header in ${name}` };
    if (NANOGPT_NAMES.has(name)) return { format: 'raw', confidence: 1, reason: `nanoGPT file name ${name} (uint16, EOT 50256 appended)` };
    if (RAW_EXTS.has(ext)) return { format: 'raw', confidence: 1, reason: `headerless token file ${name}` };
    return undefined;
  }
  const data = input.names.filter((n) => RAW_EXTS.has(extOf(n)));
  if (!data.length) return undefined;
  const npy = data.find((n) => input.heads.get(n) && hasNpyMagic(input.heads.get(n)!));
  if (npy) return { format: 'raw', confidence: 3, reason: `numpy .npy header in ${npy}` };
  return {
    format: 'raw',
    confidence: 1,
    reason: `headerless token files (${data.length === 1 ? data[0] : `${data[0]} and ${fmt(data.length - 1)} more`})`,
  };
}

/** One file's header and dtype as far as the file itself tells. */
interface RawFileInfo {
  file: string;
  name: string;
  sizeBytes: number;
  npy?: { dtype: TokenDtype; headerBytes: number; numTokens: number };
}

async function openRaw(input: SniffInput, opts: FormatOpenOptions): Promise<OpenedFormat> {
  const dir = input.isDirectory ? input.path : path.dirname(input.path);
  const names = input.isDirectory ? input.names.filter((n) => RAW_EXTS.has(extOf(n))) : [path.basename(input.path)];
  if (!names.length) throw new DataError(`${input.path}: no .bin, .npy or .u16 token files in this folder`, input.path);
  const infos: RawFileInfo[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const sizeBytes = await fileSize(file);
    const head = await readBytes(file, 0, Math.min(SNIFF_HEAD_BYTES, sizeBytes));
    infos.push({ file, name, sizeBytes, npy: hasNpyMagic(head) ? parseNpyHeader(head, file, sizeBytes) : undefined });
  }
  const notes: string[] = [];
  // The dtype: one per stream. A header decides its file; the option must agree with headers.
  const headed = infos.filter((f) => f.npy);
  const headerDtype = headed[0]?.npy?.dtype;
  const mixed = headed.find((f) => f.npy!.dtype !== headerDtype);
  if (mixed) {
    throw new DataError(
      `${mixed.file}: byte 10: .npy dtype ${mixed.npy!.dtype} differs from ${headerDtype} in ${headed[0].name}; expected one dtype per stream`,
      mixed.file,
    );
  }
  let dtype: TokenDtype;
  let dtypeSource: Provenance;
  let eosTokenId: number | undefined;
  if (headerDtype) {
    if (opts.dtype && opts.dtype !== headerDtype) {
      throw new DataError(
        `${headed[0].file}: byte 10: the .npy header says ${headerDtype}, not the ${opts.dtype} the dtype option asks for`,
        headed[0].file,
      );
    }
    dtype = headerDtype;
    dtypeSource = 'header';
  } else if (opts.dtype) {
    dtype = opts.dtype;
    dtypeSource = 'option';
  } else if (infos.every((f) => NANOGPT_NAMES.has(f.name))) {
    dtype = 'uint16';
    dtypeSource = 'name';
    notes.push('nanoGPT layout (train.bin / val.bin): uint16 GPT-2 ids, EOT 50256 appended to every document');
  } else if (infos.every((f) => extOf(f.name) === '.u16')) {
    dtype = 'uint16';
    dtypeSource = 'name';
  } else {
    const first = infos.find((f) => f.sizeBytes > 0) ?? infos[0];
    const sample = await readBytes(first.file, 0, Math.min(GUESS_SAMPLE_BYTES, first.sizeBytes));
    const odd = infos.find((f) => f.sizeBytes % 4 !== 0);
    const guess = odd
      ? guessDtype(sample, odd.sizeBytes, undefined, odd.name)
      : guessDtype(sample, first.sizeBytes, opts.vocabSize ? await opts.vocabSize() : undefined, first.name);
    dtype = guess.dtype;
    dtypeSource = 'guessed';
    notes.push(`${guess.reason}; pass --dtype to choose`);
  }
  if (infos.some((f) => NANOGPT_NAMES.has(f.name)) && dtype === 'uint16') eosTokenId = GPT2_EOT;
  const width = dtypeBytes(dtype);
  const files: FormatFile[] = infos.map((f) => {
    if (f.npy) {
      const extra = f.sizeBytes - f.npy.headerBytes - f.npy.numTokens * width;
      if (extra > 0) notes.push(`${f.name}: ${fmt(extra)} bytes after the ${fmt(f.npy.numTokens)} tokens of its .npy header are not shown`);
      return {
        path: f.file,
        name: f.name,
        numTokens: f.npy.numTokens,
        sizeBytes: f.sizeBytes,
        layout: { dtype, headerBytes: f.npy.headerBytes },
      };
    }
    const numTokens = Math.floor(f.sizeBytes / width);
    if (f.sizeBytes % width) {
      throw new DataError(
        `${f.file}: byte ${fmt(numTokens * width)}: ${fmt(f.sizeBytes % width)} trailing bytes do not make a whole ${dtype} token (size ${fmt(f.sizeBytes)} bytes)`,
        f.file,
      );
    }
    return { path: f.file, name: f.name, numTokens, sizeBytes: f.sizeBytes, layout: { dtype, headerBytes: 0 } };
  });
  return { format: 'raw', dtype, dtypeSource, files, eosTokenId, notes };
}

/** Raw headerless token files and real `.npy` arrays. */
export const rawAdapter: FormatAdapter = {
  name: 'raw',
  description: 'raw token files: nanoGPT train.bin/val.bin (uint16, EOT 50256 appended), headerless .bin/.u16/.npy, numpy .npy arrays',
  sniff: sniffRaw,
  open: openRaw,
};
