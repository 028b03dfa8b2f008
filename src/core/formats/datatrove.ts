/**
 * datatrove tokenized files (huggingface/datatrove `src/datatrove/pipeline/tokens/tokenizer.py`,
 * commit a649de79; `docs/formats.md` "datatrove"): `NAME.ds` raw little-endian token ids, 2 or 4
 * bytes each (`TokenizedFile`, L57–58); `NAME.ds.index` the documents' cumulative **end** offsets
 * in tokens as uint64 (L79–85, L110–119); optionally `NAME.ds.loss`, one byte per token, 1 = trained
 * on (L121–143, L366–376); `NAME.ds.metadata`, text whose first line is `tokenizer|token_size`
 * (L255–271; `merger.py` L114–121 reads the token size from it the same way).
 *
 * The dtype: the `.ds.metadata` token size, else the width at which the index's last end fills
 * the `.ds`, else `--dtype`, else a guess from the ids. A `NAME.ds.metadata` without a `NAME.ds`
 * (the merger's total, merger.py L203–205) is not a data file.
 */
import * as path from 'path';
import { DataError } from '../errors';
import { fmt } from '../units';
import { fileSize, readBytes, readWhole } from './files';
import { GrowableFloat64 } from './growable';
import { GUESS_SAMPLE_BYTES, guessDtype } from './guess';
import {
  FormatAdapter,
  FormatFile,
  FormatOpenOptions,
  OpenedFormat,
  Provenance,
  SniffInput,
  SniffResult,
  TokenDtype,
  dtypeBytes,
} from './types';

/** The sidecars of `NAME.ds`, by suffix. */
const SIDECAR_SUFFIXES = ['.index', '.loss', '.metadata'] as const;

/** `NAME.ds` for any of its unit's names (`NAME.ds.index` …), or undefined. */
function dsOf(name: string): string | undefined {
  if (name.endsWith('.ds')) return name;
  for (const s of SIDECAR_SUFFIXES) if (name.endsWith('.ds' + s)) return name.slice(0, -s.length);
  return undefined;
}

function sniffDatatrove(input: SniffInput): SniffResult | undefined {
  const names = new Set(input.names);
  if (!input.isDirectory) {
    const ds = dsOf(path.basename(input.path));
    if (!ds || !names.has(ds)) return undefined;
    return names.has(ds + '.index')
      ? { format: 'datatrove', confidence: 2, reason: `datatrove ${ds} with its ${ds}.index` }
      : { format: 'datatrove', confidence: 1, reason: `datatrove token file name ${ds}` };
  }
  const ds = input.names.filter((n) => n.endsWith('.ds'));
  if (!ds.length) return undefined;
  const indexed = ds.find((n) => names.has(n + '.index'));
  return indexed
    ? { format: 'datatrove', confidence: 2, reason: `datatrove .ds files with .ds.index (${indexed})` }
    : { format: 'datatrove', confidence: 1, reason: `datatrove .ds files (${ds[0]})` };
}

/** The token size `.ds.metadata` records (its first line `tokenizer|token_size`), and the tokenizer. */
export function parseDatatroveMetadata(text: string, file: string): { tokenizer: string; dtype: TokenDtype } {
  const line = text.split('\n', 1)[0].trim();
  const bar = line.lastIndexOf('|');
  const size = bar >= 0 ? line.slice(bar + 1) : '';
  if (size !== '2' && size !== '4') {
    throw new DataError(
      `${file}: line 1: ${JSON.stringify(line.slice(0, 80))} does not end in |2 or |4; expected tokenizer|token_size`,
      file,
      1,
    );
  }
  return { tokenizer: line.slice(0, bar), dtype: size === '2' ? 'uint16' : 'uint32' };
}

/**
 * Checks a `.ds.index` (uint64 cumulative document ends, in tokens) and returns the documents'
 * starts (pushed to `starts`, plus `base`); an end equal to the one before is a document of 0 tokens
 * (a text that tokenized to nothing), counted as the format's index counts it.
 * @param numTokens tokens in the `.ds`, when the dtype is known (the last end must equal it);
 *   undefined: only the order is checked.
 * @throws DataError naming the index file and the byte of the first bad entry: a size that is not a
 *   multiple of 8, an end smaller than the one before, an end past the `.ds`, a last end short of it.
 */
export function parseDatatroveIndex(
  index: Buffer,
  indexFile: string,
  dsName: string,
  numTokens: number | undefined,
  starts: GrowableFloat64,
  base: number,
): { end: number } {
  if (index.length % 8) {
    throw new DataError(
      `${indexFile}: byte ${fmt(index.length - (index.length % 8))}: ${index.length % 8} trailing bytes; expected uint64 document ends (8 bytes each)`,
      indexFile,
    );
  }
  const n = index.length / 8;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const big = index.readBigUInt64LE(8 * i);
    const end = Number(big);
    if (big > BigInt(Number.MAX_SAFE_INTEGER) || end < prev) {
      throw new DataError(
        `${indexFile}: byte ${fmt(8 * i)}: document end ${big} is smaller than the end before it (${fmt(prev)}); expected increasing ends`,
        indexFile,
      );
    }
    if (numTokens !== undefined && end > numTokens) {
      throw new DataError(
        `${indexFile}: byte ${fmt(8 * i)}: document end ${fmt(end)} passes the end of ${dsName} (${fmt(numTokens)} tokens)`,
        indexFile,
      );
    }
    starts.push(base + prev);
    prev = end;
  }
  if (numTokens !== undefined && prev !== numTokens) {
    throw new DataError(
      `${indexFile}: byte ${fmt(index.length)}: the last document ends at token ${fmt(prev)}, but ${dsName} holds ${fmt(numTokens)} tokens; expected ends up to the file's end`,
      indexFile,
    );
  }
  return { end: prev };
}

async function openDatatrove(input: SniffInput, opts: FormatOpenOptions): Promise<OpenedFormat> {
  const dir = input.isDirectory ? input.path : path.dirname(input.path);
  const present = new Set(input.names);
  const names = input.isDirectory ? input.names.filter((n) => n.endsWith('.ds')) : [dsOf(path.basename(input.path))!];
  if (!names.length || !names[0]) throw new DataError(`${input.path}: no datatrove .ds files here`, input.path);
  const notes: string[] = [];

  interface Part {
    name: string;
    file: string;
    sizeBytes: number;
    index?: Buffer;
    metaDtype?: TokenDtype;
  }
  const parts: Part[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const sizeBytes = await fileSize(file);
    const index = present.has(name + '.index') ? await readWhole(file + '.index') : undefined;
    let metaDtype: TokenDtype | undefined;
    if (present.has(name + '.metadata')) {
      const meta = parseDatatroveMetadata((await readWhole(file + '.metadata')).toString('utf8'), file + '.metadata');
      metaDtype = meta.dtype;
      if (!parts.length && meta.tokenizer) notes.push(`tokenizer (from ${name}.metadata): ${meta.tokenizer}`);
    }
    parts.push({ name, file, sizeBytes, index, metaDtype });
  }

  // The dtype, in order of trust: .ds.metadata, the index's last end against the size, the option, a guess.
  let dtype: TokenDtype | undefined;
  let dtypeSource: Provenance = 'sidecar';
  const withMeta = parts.find((p) => p.metaDtype);
  if (withMeta) dtype = withMeta.metaDtype;
  for (const p of parts) {
    if (p.metaDtype && p.metaDtype !== dtype) {
      throw new DataError(
        `${p.file}.metadata: line 1: token size of ${p.metaDtype} differs from ${dtype} in ${withMeta!.name}.metadata; expected one dtype per stream`,
        p.file + '.metadata',
        1,
      );
    }
  }
  if (!dtype) {
    for (const p of parts) {
      if (!p.index || p.index.length < 8) continue;
      const last = Number(p.index.readBigUInt64LE(p.index.length - (p.index.length % 8) - 8));
      if (last > 0 && p.sizeBytes === 2 * last) dtype = 'uint16';
      else if (last > 0 && p.sizeBytes === 4 * last) dtype = 'uint32';
      if (dtype) {
        notes.push(`dtype ${dtype}: ${p.name} holds ${fmt(p.sizeBytes)} bytes for the ${fmt(last)} tokens its .ds.index ends at`);
        break;
      }
    }
  }
  if (opts.dtype) {
    if (dtype && opts.dtype !== dtype) {
      throw new DataError(
        `${parts[0].file}: the .ds.metadata / .ds.index say ${dtype}, not the ${opts.dtype} the dtype option asks for`,
        parts[0].file,
      );
    }
    if (!dtype) dtypeSource = 'option';
    dtype = opts.dtype;
  }
  if (!dtype) {
    const p = parts[0];
    const sample = await readBytes(p.file, 0, Math.min(GUESS_SAMPLE_BYTES, p.sizeBytes));
    const guess = guessDtype(sample, p.sizeBytes, opts.vocabSize ? await opts.vocabSize() : undefined, p.name);
    dtype = guess.dtype;
    dtypeSource = 'guessed';
    notes.push(`${guess.reason}; pass --dtype to choose`);
  }

  const width = dtypeBytes(dtype);
  const files: FormatFile[] = [];
  const starts = new GrowableFloat64();
  let base = 0;
  const indexed = parts.filter((p) => p.index).length;
  for (const p of parts) {
    if (p.sizeBytes % width) {
      throw new DataError(
        `${p.file}: byte ${fmt(p.sizeBytes - (p.sizeBytes % width))}: ${p.sizeBytes % width} trailing bytes do not make a whole ${dtype} token`,
        p.file,
      );
    }
    const numTokens = p.sizeBytes / width;
    if (p.index && indexed === parts.length) {
      parseDatatroveIndex(p.index, p.file + '.index', p.name, numTokens, starts, base);
    }
    const sidecars = SIDECAR_SUFFIXES.map((s) => p.name + s)
      .filter((n) => present.has(n))
      .map((n) => path.join(dir, n));
    const file: FormatFile = { path: p.file, name: p.name, numTokens, sizeBytes: p.sizeBytes, layout: { dtype, headerBytes: 0 }, sidecars };
    if (present.has(p.name + '.loss')) {
      const lossBytes = await fileSize(p.file + '.loss');
      if (lossBytes !== numTokens) {
        throw new DataError(
          `${p.file}.loss: byte ${fmt(Math.min(lossBytes, numTokens))}: ${fmt(lossBytes)} bytes; expected one byte per token of ${p.name} (${fmt(numTokens)})`,
          p.file + '.loss',
        );
      }
      file.lossMask = { path: p.file + '.loss', byteOffset: 0 };
    }
    files.push(file);
    base += numTokens;
  }
  if (indexed > 0 && indexed < parts.length) {
    notes.push(`documents are EOS-separated: only ${fmt(indexed)} of ${fmt(parts.length)} .ds files have a .ds.index`);
  }
  const lossy = files.filter((f) => f.lossMask).length;
  if (lossy && lossy < files.length)
    notes.push(`loss mask not shown: only ${fmt(lossy)} of ${fmt(files.length)} .ds files have a .ds.loss`);
  return {
    format: 'datatrove',
    dtype,
    dtypeSource,
    files,
    documents: indexed === parts.length ? { starts: starts.toArray() } : undefined,
    notes,
  };
}

/** datatrove `.ds` token files with `.ds.index` document ends and an optional `.ds.loss`. */
export const datatroveAdapter: FormatAdapter = {
  name: 'datatrove',
  description:
    'datatrove .ds token files with .ds.index document ends (uint64), .ds.loss loss mask, .ds.metadata token size (datatrove tokenizer.py)',
  sniff: sniffDatatrove,
  open: openDatatrove,
};
