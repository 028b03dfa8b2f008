/**
 * The storage-format layer's contract. Every on-disk layout the product opens (the dataset card's
 * uint32 shards, Megatron `.bin`/`.idx`, llm.c `.bin`, nanoGPT and other headerless files, real
 * `.npy`, Dolma, datatrove, litdata, MDS) is one small {@link FormatAdapter} answering the same
 * questions: which files form the stream and in which order, where each file's tokens are and how
 * wide they are, where documents start (when the format has an index) and what it says about
 * them, and which hashes it carries. `TokenStream` reads tokens through the {@link TokenLayout} of
 * each file; nothing above the layer knows a format.
 *
 * Units: `…Tokens` and token offsets count tokens; `…Bytes` and `byteOffset` count bytes. Offsets
 * pass 2^32 (shards of 100 MB, streams of 5e10 tokens): plain JS numbers, exact to 2^53.
 */

import { GrowableFloat64 } from './growable';

/** Names of the formats, as `info --json` prints them in `"format"` and `--format` accepts them. */
export const FORMAT_NAMES = ['token-stream', 'megatron', 'llm.c', 'raw', 'dolma', 'datatrove', 'litdata', 'mds'] as const;

/** One of {@link FORMAT_NAMES}. */
export type FormatName = (typeof FORMAT_NAMES)[number];

/**
 * How token ids are stored, little-endian. Every dtype is read into the stream's uint32 ids:
 * `uint16` is widened, `int32` keeps its bits (a negative id reads as an id ≥ 2^31, past any
 * vocabulary, so the unknown-id checks flag it).
 */
export type TokenDtype = 'uint16' | 'uint32' | 'int32';

/** The dtypes `--dtype` accepts. */
export const TOKEN_DTYPES: readonly TokenDtype[] = ['uint16', 'uint32', 'int32'];

/** Bytes per stored token of a dtype. */
export function dtypeBytes(dtype: TokenDtype): 2 | 4 {
  return dtype === 'uint16' ? 2 : 4;
}

/**
 * The contiguous runs of tokens inside a file, one entry per run, as two columns: a stream of 25M
 * MDS samples holds two typed arrays (16 bytes a run), not 25M objects. Plain data (typed arrays
 * are structured-clonable: layouts cross to worker threads).
 */
export interface TokenExtents {
  /** Byte offset of each run's first token in the file. */
  byteOffsets: Float64Array;
  /** Tokens in each run. */
  numTokens: Float64Array;
}

/** Collects {@link TokenExtents} run by run into growing typed arrays. */
export class TokenExtentsBuilder {
  private readonly offsets = new GrowableFloat64();
  private readonly counts = new GrowableFloat64();

  /** Runs pushed. */
  get length(): number {
    return this.offsets.length;
  }

  /** Appends a run of `numTokens` tokens from byte `byteOffset`. */
  push(byteOffset: number, numTokens: number): void {
    this.offsets.push(byteOffset);
    this.counts.push(numTokens);
  }

  /** Byte offset of run `i` (0 ≤ i < length). */
  byteOffsetAt(i: number): number {
    return this.offsets.at(i);
  }

  /** Tokens of run `i` (0 ≤ i < length). */
  numTokensAt(i: number): number {
    return this.counts.at(i);
  }

  /** Adds `n` tokens to the last run (a run that continues back to back). */
  extendLast(n: number): void {
    const i = this.counts.length - 1;
    this.counts.set(i, this.counts.at(i) + n);
  }

  /** Forgets every run. */
  clear(): void {
    this.offsets.clear();
    this.counts.clear();
  }

  /** The runs as {@link TokenExtents} (copies sized to the runs pushed). */
  finish(): TokenExtents {
    return { byteOffsets: this.offsets.toArray(), numTokens: this.counts.toArray() };
  }
}

/**
 * Where a file's tokens are and how they are stored: what `TokenStream`, the verify worker's index
 * scan and the search workers need to read ids. Plain data (structured-clonable: it crosses to
 * worker threads).
 */
export interface TokenLayout {
  dtype: TokenDtype;
  /**
   * Bytes before the first token (a header: llm.c 1,024, a real `.npy` its header length; 0 for
   * raw files). Ignored when {@link extents} is given.
   */
  headerBytes: number;
  /**
   * The token runs in stream order, when the tokens are not one run starting at
   * {@link headerBytes} (MDS: every sample is its own blob inside a shard). Their `numTokens` sum
   * to the file's token count.
   */
  extents?: TokenExtents;
}

/** One past the last byte holding tokens of a file of `numTokens` tokens laid out as `layout` (its smallest possible size). */
export function layoutEnd(layout: TokenLayout, numTokens: number): number {
  if (!layout.extents) return layout.headerBytes + numTokens * dtypeBytes(layout.dtype);
  const { byteOffsets, numTokens: counts } = layout.extents;
  let end = 0;
  for (let i = 0; i < byteOffsets.length; i++) end = Math.max(end, byteOffsets[i] + counts[i] * dtypeBytes(layout.dtype));
  return end;
}

/** The layout of the dataset card's shards: raw little-endian uint32 from byte 0. */
export const U32_LAYOUT: TokenLayout = Object.freeze({ dtype: 'uint32', headerBytes: 0 }) as TokenLayout;

/** A hash a format records for one of its files (MDS `index.json` `hashes`). */
export interface FormatHash {
  /** The algorithm as the format names it (`sha1`, `sha256`, `md5`, `xxh64`…). */
  algorithm: string;
  /** Lower-case hex digest. */
  hex: string;
}

/** One file of the stream as a format lays it out. */
export interface FormatFile {
  /** Absolute path of the file holding the tokens. */
  path: string;
  /**
   * When {@link path} is a copy decompressed into the user's cache (compressed MDS shards and
   * litdata chunks): the compressed file in the dataset's folder, absolute. Names relative to the
   * file (sidecars in a stream manifest, the manifest next to the files) are relative to its folder.
   */
  storedAs?: string;
  /** Name shown for it (relative to the opened folder, `/`-separated). */
  name: string;
  /** Tokens of the stream stored in the file. */
  numTokens: number;
  /** The file's size in bytes as the format implies it (header + tokens + anything else the format stores). */
  sizeBytes: number;
  layout: TokenLayout;
  /**
   * Files that belong to this one and are no token data (Megatron's `.idx`, Dolma's `.csv.gz`,
   * datatrove's `.ds.index`/`.ds.loss`/`.ds.metadata`): absolute paths. `manifest` hashes them too.
   */
  sidecars?: string[];
  /** Hashes the format carries for the file (checked by `verify`). */
  hashes?: FormatHash[];
  /**
   * The file's loss mask, where the format stores one (datatrove `.ds.loss`): one byte per token,
   * 1 = the model is trained on the token, 0 = no loss. Read it with `readLossMask` (`lossMask.ts`).
   */
  lossMask?: TokenFlagsFile;
}

/**
 * A file of per-token flags, one byte per token, beside a token file (datatrove `.ds.loss`,
 * written by `TokenizedFile.write_loss_bytes`, datatrove `pipeline/tokens/tokenizer.py` L121–143).
 * Plain data (structured-clonable).
 */
export interface TokenFlagsFile {
  /** Absolute path of the flags file. */
  path: string;
  /** Byte offset of the flag of the token file's first token (0 for `.ds.loss`). */
  byteOffset: number;
}

/** Provenance of one document, where the format records it (Dolma's `.csv.gz` rows). */
export interface DocumentMetadata {
  /** The source document's id. */
  id?: string;
  /** The source file (a path or URL). */
  src?: string;
  /** The document's line or position in the source file. */
  loc?: string;
}

/**
 * Document boundaries from a format's own index (Megatron `document_indices`, datatrove
 * `.ds.index`, Dolma `.csv.gz`). Document `n` is tokens `[starts[n], starts[n+1])`, the last one
 * ending at the stream end; the closing EOS, when stored, is inside its document.
 */
export interface FormatDocuments {
  /** Global token offset of every document's first token, ascending, `starts[0] = 0`. */
  starts: Float64Array;
  /** Metadata of document `n` (0-based), when the format has any. */
  metadata?(document: number): DocumentMetadata | undefined;
}

/** Where a value the layer reports came from (shown by `info`). */
export type Provenance = 'header' | 'sidecar' | 'name' | 'option' | 'guessed' | 'default';

/** How a delimiter token marks documents in a stream without a document index. */
export type DelimiterRole =
  /** The EOS closes the document before it (the dataset card, Megatron `--append-eod`, nanoGPT). */
  | 'closes'
  /** The delimiter opens the document after it (llm.c: EOT / BOS is prepended to every document). */
  | 'opens';

/** A format opened: everything the rest of the product needs, with no format left to know. */
export interface OpenedFormat {
  format: FormatName;
  /** The dtype of the files (one per stream: a folder mixing dtypes is refused). */
  dtype: TokenDtype;
  /** Where {@link dtype} came from. */
  dtypeSource: Provenance;
  /** The files in stream order; their token counts tile the stream from 0. */
  files: FormatFile[];
  /** Document boundaries, when the format has an index; absent: documents are EOS-separated. */
  documents?: FormatDocuments;
  /** The EOS / delimiter id the format implies (llm.c GPT-2 50256, Llama 3 BOS 128000; nanoGPT 50256), when it implies one. */
  eosTokenId?: number;
  /** What the delimiter does; absent = `closes`. */
  delimiter?: DelimiterRole;
  /**
   * Sentences for `info` and the shard editor: what was guessed and why ("dtype guessed uint16:
   * …"), what was ignored. No fault here; faults throw.
   */
  notes: string[];
}

/** What a sniffer sees of a path: a file's first bytes, or a folder's entries. */
export interface SniffInput {
  /** Absolute path. */
  path: string;
  /** True for a folder. */
  isDirectory: boolean;
  /** File size in bytes (0 for a folder). */
  sizeBytes: number;
  /** The file's first bytes (up to {@link SNIFF_HEAD_BYTES}); empty for a folder. */
  head: Buffer;
  /** Names in the folder (for a folder) or next to the file (for a file), sorted byte-wise. */
  names: readonly string[];
  /**
   * For a folder: the first bytes (up to {@link SNIFF_HEAD_BYTES}) of its first
   * {@link SNIFF_FOLDER_FILES} regular files in name order, by name. Empty for a file.
   */
  heads: ReadonlyMap<string, Buffer>;
}

/** How many files of a folder a sniffer sees the heads of. */
export const SNIFF_FOLDER_FILES = 16;

/** Bytes of a file a sniffer is given. */
export const SNIFF_HEAD_BYTES = 4096;

/** A sniffer's answer: this format, how sure, and why (shown by `info`). */
export interface SniffResult {
  format: FormatName;
  /**
   * How sure: 3 a magic number or a header that checks out; 2 a sidecar file (`.idx`,
   * `.csv.gz`, `index.json` naming the format); 1 a name or extension only. The highest wins; a
   * tie goes to the adapter registered first.
   */
  confidence: 1 | 2 | 3;
  /** One phrase: "MMIDIDX magic in x.idx", "llm.c header magic 20240520". */
  reason: string;
}

/** What the front end forces or knows when opening. */
export interface FormatOpenOptions {
  /** `--dtype` / `tokenShards.dtype`: overrides a headerless format's dtype; a header that disagrees is an error. */
  dtype?: TokenDtype;
  /**
   * Vocabulary size of the tokenizer, when one was found (undefined: none): used to guess the
   * dtype of a headerless file. A function, so the tokenizer is loaded only when a guess needs it.
   */
  vocabSize?: () => Promise<number | undefined>;
}

/**
 * One format. `sniff` must be cheap (it sees a file head or a folder listing, no other I/O);
 * `open` validates everything it reads and throws `DataError` with one line naming the file, the
 * byte offset (or row) and what was expected — never a partial result.
 */
export interface FormatAdapter {
  readonly name: FormatName;
  /** One line for `--help` and `info`: "Megatron-LM PREFIX.bin + PREFIX.idx (indexed_dataset.py)". */
  readonly description: string;
  /** Recognises the format from a file or a folder; undefined when it does not. */
  sniff(input: SniffInput): SniffResult | undefined;
  /**
   * Opens a file of the format (any of its unit's files: Megatron's `.bin` or `.idx`) or a
   * folder: every file of the format in it, in byte-wise name order (Python's `sorted`).
   * @throws DataError for data that is not what the format promises; UsageError-like
   *   `RangeRequestError` never.
   */
  open(input: SniffInput, opts: FormatOpenOptions): Promise<OpenedFormat>;
}
