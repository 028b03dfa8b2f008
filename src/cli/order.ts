/**
 * The CLI's training order: `--run FILE` (a global option), else `<root>/run.json`, else the
 * dataset card's sequential order. Inverses and rebuilt indices are cached in
 * `$XDG_CACHE_HOME/token-shard-inspector/training-order/` (else `~/.cache/…`), next to the stream index.
 */
import * as path from 'path';
import type { Command } from 'commander';
import { Dataset, formatFilesOf } from '../core/dataset';
import { DataError } from '../core/errors';
import { readWhole } from '../core/formats/files';
import { parseMegatronIndex } from '../core/formats/megatron';
import { OrderCache, TrainingOrder } from '../core/order/order';
import { OrderInputs, OrderSpec, openTrainingOrder, orderSpec } from '../core/order/openOrder';
import { RunDescription, findRunFile, readRunDescription } from '../core/order/runFile';
import { CliContext } from './context';

/** The run description in effect for `ds`: `--run FILE`, else the dataset folder's `run.json`, else none. */
export async function runDescriptionFor(ctx: CliContext, ds: Dataset, cmd: Command): Promise<RunDescription | undefined> {
  const given = ctx.globals(cmd).run;
  const file = given !== undefined ? path.resolve(given) : findRunFile(ds.root);
  return file === undefined ? undefined : readRunDescription(file);
}

/**
 * The training order of `ds` per {@link runDescriptionFor}. The stream's files are the opened
 * format's files; a Megatron order needs a dataset opened as Megatron (one `.bin`/`.idx` pair),
 * whose `.idx` gives the sequence lengths, and says so.
 * @throws DataError naming the run file and field, or an index file, when the order cannot be opened.
 */
export async function orderFor(ctx: CliContext, ds: Dataset, cmd: Command): Promise<TrainingOrder> {
  const run = await runDescriptionFor(ctx, ds, cmd);
  return openTrainingOrder(run, await inputsOf(ds, run));
}

/** The order's {@link OrderSpec} for worker threads, or undefined for the card's sequential order. */
export async function orderSpecFor(ctx: CliContext, ds: Dataset, cmd: Command): Promise<OrderSpec | undefined> {
  const run = await runDescriptionFor(ctx, ds, cmd);
  return run === undefined || run.order === 'sequential' ? undefined : orderSpec(run, await inputsOf(ds, run));
}

async function inputsOf(ds: Dataset, run: RunDescription | undefined): Promise<OrderInputs> {
  // The format's files tile the stream in the dataset's shard order (same offsets).
  const files = formatFilesOf(ds).map((f, i) => ({ name: f.name, path: f.path, start: ds.shards[i].startToken, tokens: f.numTokens }));
  return {
    files,
    schedule: ds.schedule,
    megatron: run?.order === 'megatron' ? await megatronInputs(ds, run.file) : undefined,
    cache: OrderCache.cliDefault(),
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
