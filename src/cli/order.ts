/**
 * The CLI's training order: `--run FILE` (a global option), else `<root>/run.json`, else the
 * dataset card's sequential order. Inverses and rebuilt indices are cached in
 * `$XDG_CACHE_HOME/token-shard-inspector/training-order/` (else `~/.cache/…`), next to the stream index.
 */
import * as path from 'path';
import type { Command } from 'commander';
import { Dataset } from '../core/dataset';
import { orderInputsOf } from '../core/order/datasetOrder';
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

function inputsOf(ds: Dataset, run: RunDescription | undefined): Promise<OrderInputs> {
  return orderInputsOf(ds, run, OrderCache.cliDefault());
}
