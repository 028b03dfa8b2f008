/**
 * When VS Code offers to open a file in the shard editor. Files with the dataset card's or a
 * format's own extension (`.u32`, Megatron `.idx`, datatrove `.ds`) open the shard editor by
 * default; generic extensions (`.bin`, `.npy`, `.mds`) hold many other things, so the shard editor
 * is registered for them with priority `option` (as microsoft/vscode-hexeditor registers its
 * editor for `*`: package.json `contributes.customEditors`) and, when such a file is opened in
 * another editor and the sniffer recognises a token format, one notification asks
 * "Open as token shard (Megatron int32)?". litdata `chunk-*.bin` files are `.bin` files and MDS
 * `shard.*.mds` files (and their `.br`/`.gz`/`.zstd` copies) are offered the same way: the
 * sniffer tells them by the `index.json` beside them, which their name alone does not promise
 * (an MDS shard may hold no token column at all).
 */
import * as path from 'path';
import type { FormatName, TokenDtype } from './types';

/**
 * Name endings the shard editor is an `option` for, with an offer (package.json
 * `tokenShards.tokenFileEditor`): the generic extensions, and MDS shards compressed with a codec
 * this reader decompresses (`shard.NNNNN.mds.zstd`, see ./compression.ts).
 */
export const OFFERED_EXTENSIONS: readonly string[] = ['.bin', '.npy', '.mds', '.mds.br', '.mds.gz', '.mds.zstd'];

/** How the offer names each format (the field's names for them). */
export const FORMAT_LABELS: Record<FormatName, string> = {
  'token-stream': 'token stream',
  megatron: 'Megatron',
  'llm.c': 'llm.c',
  raw: 'headerless',
  dolma: 'Dolma',
  datatrove: 'datatrove',
  litdata: 'litdata',
  mds: 'MDS',
};

/** What the offer decision knows about one file opened in another editor. */
export interface OfferContext {
  /** Absolute path of the file. */
  file: string;
  /** The user chose "Don't ask again" (remembered across sessions). */
  neverAsk: boolean;
  /** Files offered already in this session (each file is asked about once). */
  offered: ReadonlySet<string>;
}

/**
 * True when a file opened in another editor is worth sniffing for the offer: its name ends with
 * one of {@link OFFERED_EXTENSIONS}, it was not offered in this session, and the user did not say
 * "Don't ask again". The offer itself needs the sniffer to recognise a format.
 */
export function mayOffer(ctx: OfferContext): boolean {
  const name = path.basename(ctx.file).toLowerCase();
  return !ctx.neverAsk && !ctx.offered.has(ctx.file) && OFFERED_EXTENSIONS.some((e) => name.endsWith(e) && name.length > e.length);
}

/** The offer's question for a file the format layer opened: "Open as token shard (Megatron int32)?". */
export function offerQuestion(format: FormatName, dtype: TokenDtype): string {
  return `Open as token shard (${FORMAT_LABELS[format]} ${dtype})?`;
}
