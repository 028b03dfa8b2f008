/**
 * Reading a stream's loss mask (datatrove `.ds.loss`: one byte per token, 1 = trained on, 0 = no
 * loss) by global token offset, across the files of an opened format.
 */
import * as fs from 'fs';
import { DataError, RangeRequestError } from '../errors';
import { fmt } from '../units';
import { FormatFile } from './types';

/** True when every file of the stream carries a loss mask. */
export function hasLossMask(files: readonly FormatFile[]): boolean {
  return files.length > 0 && files.every((f) => f.lossMask);
}

/**
 * The loss-mask bytes of global tokens `[start, start + count)` (files in stream order, their
 * tokens tiling the stream from 0): `out[i]` is 1 when token `start + i` is trained on, 0 when not.
 * @throws RangeRequestError for a range outside the stream or a stream without a loss mask in
 *   every file; DataError naming the mask file when it cannot be read or ends early.
 */
export async function readLossMask(files: readonly FormatFile[], start: number, count: number): Promise<Uint8Array> {
  if (!hasLossMask(files)) throw new RangeRequestError('this stream has no loss mask (datatrove .ds.loss next to every .ds)');
  const total = files.reduce((s, f) => s + f.numTokens, 0);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(count) || start < 0 || count < 0 || start + count > total) {
    throw new RangeRequestError(`tokens [${fmt(start)}, ${fmt(start + count)}) are outside the stream [0, ${fmt(total)})`);
  }
  const out = new Uint8Array(count);
  let fileStart = 0;
  for (const f of files) {
    const fileEnd = fileStart + f.numTokens;
    const a = Math.max(start, fileStart);
    const b = Math.min(start + count, fileEnd);
    if (a < b) {
      const mask = f.lossMask!;
      const position = mask.byteOffset + (a - fileStart);
      let fh: fs.promises.FileHandle;
      try {
        fh = await fs.promises.open(mask.path, 'r');
      } catch (err) {
        throw new DataError(`${mask.path}: cannot open: ${(err as Error).message}`, mask.path);
      }
      try {
        let done = 0;
        while (done < b - a) {
          const { bytesRead } = await fh.read(out, a - start + done, b - a - done, position + done);
          if (bytesRead === 0) {
            throw new DataError(
              `${mask.path}: byte ${fmt(position + done)}: the loss mask ends early; expected one byte per token of ${f.name}`,
              mask.path,
            );
          }
          done += bytesRead;
        }
      } finally {
        await fh.close().catch(() => undefined);
      }
    }
    fileStart = fileEnd;
    if (fileStart >= start + count) break;
  }
  return out;
}
