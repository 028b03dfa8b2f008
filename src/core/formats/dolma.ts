/**
 * Dolma / OLMo token files (allenai/dolma `python/dolma/tokenizer/memmap_writer.py`, commit
 * 669f5348; `docs/formats.md` "Dolma"): `part-N-NNNNN.npy`, a raw little-endian memmap of uint16
 * or uint32 ids with **no** numpy header (`np.memmap`, L153–155), and beside it
 * `part-N-NNNNN.csv.gz`, gzip'd CSV rows `start,end,id,src,loc` (L81–92, `data_types.py` L45–50):
 * document `n` of the file is tokens `[start, end)`, rows in file order and tiling it; `id` is the
 * source document's id, `src` its source file, `loc` its 1-based line there (`tokenizer.py`
 * L468–485). A real `.npy` (with the `\x93NUMPY` header) opens too: rows then count tokens from the
 * end of the header.
 *
 * The dtype is the one width at which the rows' last `end` fills the file exactly (the writer cuts
 * the memmap to the tokens written, L179–189); `--dtype` must agree with it.
 *
 * Rows are streamed (gunzip → csv-parse), never held as strings: starts in a Float64Array, `src`
 * interned (a file holds documents of a few sources), `id` as UTF-8 bytes in one growing buffer,
 * `loc` as a number — a few bytes per document plus the ids' bytes.
 */
import * as fs from 'fs';
import * as path from 'path';
import { pipeline } from 'stream/promises';
import * as zlib from 'zlib';
import { CsvError, parse as csvParse } from 'csv-parse';
import { DataError } from '../errors';
import { fmt } from '../units';
import { fileSize, readBytes } from './files';
import { hasNpyMagic, parseNpyHeader } from './npy';
import { GrowableFloat64, GrowableUint32 } from './growable';
import {
  DocumentMetadata,
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

/** Suffix of Dolma's sidecar (memmap_writer.py L24). */
export const DOLMA_SIDECAR = '.csv.gz';

/** The `.npy` names that have a `.csv.gz` next to them. */
function pairedNpy(names: readonly string[]): string[] {
  const set = new Set(names);
  return names.filter((n) => n.endsWith('.npy') && set.has(n.slice(0, -4) + DOLMA_SIDECAR));
}

function sniffDolma(input: SniffInput): SniffResult | undefined {
  if (!input.isDirectory) {
    const name = path.basename(input.path);
    const npy = name.endsWith(DOLMA_SIDECAR) ? name.slice(0, -DOLMA_SIDECAR.length) + '.npy' : name;
    if (!npy.endsWith('.npy') || !pairedNpy(input.names).includes(npy)) return undefined;
    const headed = npy === name && hasNpyMagic(input.head);
    return { format: 'dolma', confidence: headed ? 3 : 2, reason: `Dolma sidecar ${npy.slice(0, -4)}${DOLMA_SIDECAR} next to ${npy}` };
  }
  const pairs = pairedNpy(input.names);
  if (!pairs.length) return undefined;
  const headed = pairs.some((n) => input.heads.get(n) && hasNpyMagic(input.heads.get(n)!));
  return {
    format: 'dolma',
    confidence: headed ? 3 : 2,
    reason: `Dolma .npy files with .csv.gz sidecars (${pairs.length === 1 ? pairs[0] : `${pairs[0]} and ${fmt(pairs.length - 1)} more`})`,
  };
}

/**
 * The documents' provenance, stored compactly: `src` interned, `id` as UTF-8 bytes in one buffer,
 * `loc` as a number (or, when a row's `loc` is not a whole number, as text in a side table).
 */
export class DolmaMetadataStore {
  private readonly srcNames: string[] = [];
  private readonly srcIndex = new Map<string, number>();
  private readonly docSrc = new GrowableUint32();
  private readonly idEnds = new GrowableFloat64();
  private idBytes = new Uint8Array(1 << 16);
  private idUsed = 0;
  private readonly locs = new GrowableFloat64();
  private readonly odd = new Map<number, string>();
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  /** Documents stored. */
  get length(): number {
    return this.docSrc.length;
  }

  /** Appends document `length`'s provenance. */
  push(id: string, src: string, loc: string): void {
    const n = this.docSrc.length;
    let s = this.srcIndex.get(src);
    if (s === undefined) {
      s = this.srcNames.length;
      this.srcNames.push(src);
      this.srcIndex.set(src, s);
    }
    this.docSrc.push(s);
    const need = this.idUsed + id.length * 3;
    if (need > this.idBytes.length) {
      const next = new Uint8Array(Math.max(need, this.idBytes.length * 2));
      next.set(this.idBytes.subarray(0, this.idUsed));
      this.idBytes = next;
    }
    this.idUsed += this.encoder.encodeInto(id, this.idBytes.subarray(this.idUsed)).written;
    this.idEnds.push(this.idUsed);
    if (/^\d{1,15}$/.test(loc)) this.locs.push(Number(loc));
    else {
      this.locs.push(NaN);
      this.odd.set(n, loc);
    }
  }

  /** Provenance of document `n` (0-based over the stream), or undefined past the end. */
  get(n: number): DocumentMetadata | undefined {
    if (!Number.isInteger(n) || n < 0 || n >= this.length) return undefined;
    const from = n === 0 ? 0 : this.idEnds.at(n - 1);
    const loc = this.locs.at(n);
    return {
      id: this.decoder.decode(this.idBytes.subarray(from, this.idEnds.at(n))),
      src: this.srcNames[this.docSrc.at(n)],
      loc: Number.isNaN(loc) ? this.odd.get(n) : String(loc),
    };
  }
}

/** One `.csv.gz` read: its rows' starts (tokens, local to the file) and the last row's end. */
interface SidecarRows {
  /** Rows read. */
  rows: number;
  /** `end` of the last row: the tokens the rows cover (0 without rows). */
  end: number;
}

/**
 * Streams one `.csv.gz`, appending every row's start (plus `base`) to `starts` and its provenance to `meta`.
 * @param maxTokens the most tokens the file can hold (its size over 2 bytes, or the `.npy` header's count):
 *   a row ending past it is outside the file.
 * @throws DataError naming the file and the row (1-based) for a row that is not
 *   `start,end,id,src,loc` with whole-number `start ≤ end`, that does not start where the row
 *   before it ended (the first at 0), or that ends past the file; for gzip or CSV damage.
 */
export async function readDolmaSidecar(
  csvFile: string,
  npyFile: string,
  maxTokens: number,
  base: number,
  starts: GrowableFloat64,
  meta: DolmaMetadataStore,
  signal?: AbortSignal,
): Promise<SidecarRows> {
  let rows = 0;
  let prevEnd = 0;
  const parser = csvParse({ relax_column_count: false, skip_empty_lines: true });
  const reading = pipeline(fs.createReadStream(csvFile), zlib.createGunzip(), parser, { signal }).catch((err: Error) => {
    throw sidecarError(csvFile, rows, err);
  });
  try {
    for await (const rec of parser as AsyncIterable<string[]>) {
      rows++;
      const { start, end } = checkDolmaRow(rec, rows, prevEnd, maxTokens, csvFile, npyFile);
      starts.push(base + start);
      meta.push(rec[2], rec[3], rec[4]);
      prevEnd = end;
    }
    await reading;
  } catch (err) {
    parser.destroy();
    await reading.catch(() => undefined);
    if (err instanceof DataError) throw err;
    throw sidecarError(csvFile, rows, err as Error);
  }
  return { rows, end: prevEnd };
}

/**
 * Checks one `.csv.gz` record: five fields `start,end,id,src,loc`, whole-number `start ≤ end`,
 * `start` where the row before ended (`prevEnd`, 0 for the first row), `end` within the file.
 * @param row 1-based row number. @param maxTokens the most tokens the `.npy` can hold.
 * @throws DataError naming the `.csv.gz` and the row.
 */
export function checkDolmaRow(
  rec: string[],
  row: number,
  prevEnd: number,
  maxTokens: number,
  csvFile: string,
  npyFile: string,
): { start: number; end: number } {
  if (rec.length !== 5)
    throw new DataError(`${csvFile}: row ${fmt(row)}: ${rec.length} fields; expected 5 (start,end,id,src,loc)`, csvFile, row);
  const [s, e] = rec;
  if (!/^\d{1,15}$/.test(s) || !/^\d{1,15}$/.test(e)) {
    throw new DataError(
      `${csvFile}: row ${fmt(row)}: start ${JSON.stringify(s.slice(0, 40))} and end ${JSON.stringify(e.slice(0, 40))} must be whole numbers of tokens`,
      csvFile,
      row,
    );
  }
  const start = Number(s);
  const end = Number(e);
  if (start !== prevEnd) {
    throw new DataError(
      `${csvFile}: row ${fmt(row)}: start ${fmt(start)} is not where the ${row === 1 ? 'file begins (0)' : `row before ends (${fmt(prevEnd)})`}; expected rows that tile ${path.basename(npyFile)}`,
      csvFile,
      row,
    );
  }
  if (end < start) throw new DataError(`${csvFile}: row ${fmt(row)}: end ${fmt(end)} is before start ${fmt(start)}`, csvFile, row);
  if (end > maxTokens) {
    throw new DataError(
      `${csvFile}: row ${fmt(row)}: end ${fmt(end)} is outside ${path.basename(npyFile)}, which holds at most ${fmt(maxTokens)} tokens`,
      csvFile,
      row,
    );
  }
  return { start, end };
}

/** The DataError for a `.csv.gz` that cannot be read (gzip or CSV damage) at row `rows + 1`; an abort passes through. */
export function sidecarError(csvFile: string, rows: number, err: Error): Error {
  if (err instanceof DataError || err.name === 'AbortError') return err;
  const what =
    err instanceof CsvError ? `not CSV rows start,end,id,src,loc (${err.message})` : `cannot read the gzip'd CSV (${err.message})`;
  return new DataError(`${csvFile}: row ${fmt(rows + 1)}: ${what}`, csvFile, rows + 1);
}

/** The dtype at which `tokens` (> 0) tokens fill `bytes` bytes exactly. */
function widthDtype(bytes: number, tokens: number): TokenDtype | undefined {
  if (bytes === tokens * 2) return 'uint16';
  if (bytes === tokens * 4) return 'uint32';
  return undefined;
}

async function openDolma(input: SniffInput, opts: FormatOpenOptions): Promise<OpenedFormat> {
  const dir = input.isDirectory ? input.path : path.dirname(input.path);
  let names: string[];
  if (input.isDirectory) {
    names = pairedNpy(input.names);
    const lone = input.names.find((n) => n.endsWith('.npy') && !names.includes(n));
    if (lone)
      throw new DataError(
        `${path.join(dir, lone)}: has no ${lone.slice(0, -4)}${DOLMA_SIDECAR} next to it; expected a sidecar for every .npy of a Dolma folder`,
        path.join(dir, lone),
      );
  } else {
    const name = path.basename(input.path);
    names = [name.endsWith(DOLMA_SIDECAR) ? name.slice(0, -DOLMA_SIDECAR.length) + '.npy' : name];
  }
  if (!names.length) throw new DataError(`${input.path}: no .npy file with a .csv.gz sidecar here`, input.path);

  const starts = new GrowableFloat64();
  const meta = new DolmaMetadataStore();
  interface Part {
    name: string;
    file: string;
    csv: string;
    sizeBytes: number;
    npy?: { dtype: TokenDtype; headerBytes: number; numTokens: number };
    rows: number;
    end: number;
  }
  const parts: Part[] = [];
  let base = 0;
  for (const name of names) {
    const file = path.join(dir, name);
    const csv = file.slice(0, -4) + DOLMA_SIDECAR;
    const sizeBytes = await fileSize(file);
    const head = await readBytes(file, 0, Math.min(SNIFF_HEAD_BYTES, sizeBytes));
    const npy = hasNpyMagic(head) ? parseNpyHeader(head, file, sizeBytes) : undefined;
    if (npy && opts.dtype && npy.dtype !== opts.dtype) {
      throw new DataError(`${file}: byte 10: the .npy header says ${npy.dtype}, not the ${opts.dtype} the dtype option asks for`, file);
    }
    const maxTokens = npy ? npy.numTokens : Math.floor(sizeBytes / 2);
    const { rows, end } = await readDolmaSidecar(csv, file, maxTokens, base, starts, meta);
    if (npy && end !== npy.numTokens) {
      throw new DataError(
        `${csv}: row ${fmt(rows)}: the rows end at token ${fmt(end)}, but ${name} holds ${fmt(npy.numTokens)} tokens; expected rows covering the whole file`,
        csv,
        rows,
      );
    }
    parts.push({ name, file, csv, sizeBytes, npy, rows, end });
    base += end;
  }
  // One dtype for the stream: a header's, the option, or the width at which the rows fill the files.
  const headed = parts.find((p) => p.npy);
  const sized = parts.find((p) => !p.npy && p.end > 0);
  const dtype: TokenDtype = headed?.npy?.dtype ?? opts.dtype ?? (sized ? (widthDtype(sized.sizeBytes, sized.end) ?? 'uint16') : 'uint32');
  const dtypeSource: Provenance = headed ? 'header' : opts.dtype ? 'option' : 'sidecar';
  if (!headed && !opts.dtype && sized && !widthDtype(sized.sizeBytes, sized.end)) {
    throw new DataError(
      `${sized.file}: byte ${fmt(sized.sizeBytes)}: ${fmt(sized.sizeBytes)} bytes do not hold the ${fmt(sized.end)} tokens the rows of ${path.basename(sized.csv)} cover; ` +
        `expected ${fmt(sized.end * 2)} bytes (uint16) or ${fmt(sized.end * 4)} (uint32)`,
      sized.file,
    );
  }
  const notes: string[] = [];
  if (!headed && !opts.dtype && sized) {
    notes.push(`dtype ${dtype}: ${sized.name} holds ${fmt(sized.sizeBytes)} bytes for the ${fmt(sized.end)} tokens of its .csv.gz rows`);
  }
  const files: FormatFile[] = parts.map((p) => {
    if (p.npy) {
      if (p.npy.dtype !== dtype)
        throw new DataError(
          `${p.file}: byte 10: its .npy header says ${p.npy.dtype}, not ${dtype} as in ${headed!.name}; expected one dtype per stream`,
          p.file,
        );
      return {
        path: p.file,
        name: p.name,
        numTokens: p.end,
        sizeBytes: p.sizeBytes,
        layout: { dtype, headerBytes: p.npy.headerBytes },
        sidecars: [p.csv],
      };
    }
    const width = dtypeBytes(dtype);
    if (p.sizeBytes % width) {
      throw new DataError(
        `${p.file}: byte ${fmt(p.sizeBytes - (p.sizeBytes % width))}: ${p.sizeBytes % width} trailing bytes do not make a whole ${dtype} token`,
        p.file,
      );
    }
    const held = p.sizeBytes / width;
    if (p.end > held) {
      throw new DataError(
        `${p.csv}: row ${fmt(p.rows)}: end ${fmt(p.end)} is outside ${p.name}, which holds ${fmt(held)} ${dtype} tokens`,
        p.csv,
        p.rows,
      );
    }
    if (p.end < held) {
      throw new DataError(
        `${p.csv}: row ${fmt(p.rows)}: the rows end at token ${fmt(p.end)}, but ${p.name} holds ${fmt(held)} ${dtype} tokens; expected rows covering the whole file`,
        p.csv,
        p.rows,
      );
    }
    return { path: p.file, name: p.name, numTokens: p.end, sizeBytes: p.sizeBytes, layout: { dtype, headerBytes: 0 }, sidecars: [p.csv] };
  });
  const docStarts = starts.toArray();
  return {
    format: 'dolma',
    dtype,
    dtypeSource,
    files,
    documents: { starts: docStarts, metadata: (n) => meta.get(n) },
    notes,
  };
}

/** Dolma / OLMo `.npy` memmaps with `.csv.gz` document rows. */
export const dolmaAdapter: FormatAdapter = {
  name: 'dolma',
  description: 'Dolma / OLMo part-*.npy token memmaps (no numpy header) with .csv.gz rows start,end,id,src,loc (dolma memmap_writer.py)',
  sniff: sniffDolma,
  open: openDolma,
};
