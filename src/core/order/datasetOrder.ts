/**
 * A dataset's inputs to a training order ({@link OrderInputs}): its stream files, its schedule,
 * and for a Megatron run the `.idx` sequence lengths. Shared by the CLI (`src/cli/order.ts`) and
 * the extension (`src/orderService.ts`), so both open the same order from the same `run.json`.
 */
import { Dataset, formatFilesOf } from '../dataset';
import { DataError } from '../errors';
import { readWhole } from '../formats/files';
import { parseMegatronIndex } from '../formats/megatron';
import { OrderCache } from './order';
import { OrderInputs } from './openOrder';
import { RunDescription } from './runFile';

/**
 * The {@link OrderInputs} of `ds` for `run` (undefined: the card's sequential order).
 * @param cache where built indices and inverses are kept (the CLI's or the extension's folder).
 * @throws DataError naming the run file when a Megatron order meets a folder of several `.bin`/`.idx` pairs.
 */
export async function orderInputsOf(ds: Dataset, run: RunDescription | undefined, cache: OrderCache): Promise<OrderInputs> {
  // The format's files tile the stream in the dataset's shard order (same offsets).
  const files = formatFilesOf(ds).map((f, i) => ({ name: f.name, path: f.path, start: ds.shards[i].startToken, tokens: f.numTokens }));
  return {
    files,
    schedule: ds.schedule,
    megatron: run?.order === 'megatron' ? await megatronInputs(ds, run.file) : undefined,
    cache,
  };
}

/**
 * The `.idx` of a dataset opened as Megatron and its sequence lengths, parsed by the format
 * layer's reader (the same checks as at open). Undefined for another format (the order says what
 * it needs); a folder of several `.bin`/`.idx` pairs is refused: GPTDataset orders one.
 */
async function megatronInputs(ds: Dataset, runFile: string): Promise<OrderInputs['megatron']> {
  if (ds.format?.name !== 'megatron') return undefined;
  const files = ds.format.files;
  if (files.length !== 1)
    throw new DataError(
      `${runFile}: order "megatron" orders one .bin/.idx pair (a GPTDataset); ${ds.root} holds ${files.length} (${files
        .slice(0, 3)
        .map((f) => f.name)
        .join(', ')}${files.length > 3 ? ', …' : ''}): open the one the run trained on`,
      runFile,
    );
  const bin = files[0];
  const idxFile = bin.sidecars?.find((s) => s.endsWith('.idx')) ?? bin.path.replace(/\.bin$/, '.idx');
  const { lengths } = parseMegatronIndex(await readWhole(idxFile), idxFile, bin.path, bin.sizeBytes);
  return { idxFile, lengths };
}
