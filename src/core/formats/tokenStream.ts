/**
 * The dataset card's layout (docs/format.md): raw little-endian uint32 shards listed with their
 * global start offsets and sha256 in `shard_manifest.jsonl`, or one lone `.u32` file. The dataset
 * machinery (`../dataset.ts`) opens it with the manifest's own checks; this adapter recognises it
 * and describes it in the layer's terms (the files and the sha256 the manifest carries).
 */
import * as path from 'path';
import { DataError } from '../errors';
import { fmt } from '../units';
import { BYTES_PER_TOKEN, SHARD_MANIFEST, ShardEntry, parseShardManifest } from '../manifest';
import { extOf, fileSize, readWhole } from './files';
import { FormatAdapter, FormatFile, OpenedFormat, SniffInput, SniffResult, U32_LAYOUT } from './types';

function sniffTokenStream(input: SniffInput): SniffResult | undefined {
  if (input.isDirectory) {
    return input.names.includes(SHARD_MANIFEST)
      ? { format: 'token-stream', confidence: 3, reason: `${SHARD_MANIFEST} in the folder` }
      : undefined;
  }
  if (path.basename(input.path) === SHARD_MANIFEST)
    return { format: 'token-stream', confidence: 3, reason: `the file is ${SHARD_MANIFEST}` };
  if (extOf(input.path) === '.u32') return { format: 'token-stream', confidence: 2, reason: 'a .u32 shard (raw uint32)' };
  return undefined;
}

async function openTokenStream(input: SniffInput): Promise<OpenedFormat> {
  const manifest = input.isDirectory
    ? path.join(input.path, SHARD_MANIFEST)
    : path.basename(input.path) === SHARD_MANIFEST
      ? input.path
      : undefined;
  if (!manifest) {
    const sizeBytes = await fileSize(input.path);
    const numTokens = Math.floor(sizeBytes / BYTES_PER_TOKEN);
    const notes =
      sizeBytes % BYTES_PER_TOKEN
        ? [`${path.basename(input.path)}: the last ${fmt(sizeBytes % BYTES_PER_TOKEN)} bytes make no whole token and are not shown`]
        : [];
    return {
      format: 'token-stream',
      dtype: 'uint32',
      dtypeSource: 'default',
      files: [{ path: input.path, name: path.basename(input.path), numTokens, sizeBytes, layout: U32_LAYOUT }],
      notes,
    };
  }
  const parsed = parseShardManifest((await readWhole(manifest)).toString('utf8'), manifest);
  const fault = parsed.problems.find((p) => p.severity === 'error');
  if (fault) throw new DataError(fault.message, manifest, fault.line);
  const files = filesOfShardEntries(parsed.entries);
  return { format: 'token-stream', dtype: 'uint32', dtypeSource: 'default', files, notes: [] };
}

/**
 * Manifest entries as the layer's files: raw uint32 from byte 0, the manifest's sha256 as their hash.
 */
export function filesOfShardEntries(entries: readonly ShardEntry[]): FormatFile[] {
  return entries.map((e) => ({
    path: e.path,
    name: e.shard,
    numTokens: e.numTokens,
    sizeBytes: e.numTokens * BYTES_PER_TOKEN,
    layout: U32_LAYOUT,
    hashes: e.sha256 ? [{ algorithm: 'sha256', hex: e.sha256.toLowerCase() }] : undefined,
  }));
}

/** The dataset card's `shard_manifest.jsonl` + `.u32` shards, or one lone `.u32` file. */
export const tokenStreamAdapter: FormatAdapter = {
  name: 'token-stream',
  description: 'the dataset card layout: shard_manifest.jsonl + raw uint32 .u32 shards, or one .u32 file',
  sniff: sniffTokenStream,
  open: openTokenStream,
};
