/** `token-shards update <root> <k> [--sequence r] [--json | --text]`: update k as the training loop saw it. */
import type { Command } from 'commander';
import { DEFAULT_DOCUMENT_SCAN_LIMIT, DocumentIndex } from '../../core/documents';
import { inputRow, readUpdate, targetRow } from '../../core/update';
import { buildUpdateModel, documentNumberIfCheap, formatUpdateModelText } from '../../core/updateModel';
import { CliContext, UsageError } from '../context';


/** Registers `update`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('update')
    .description('update k (0-based) as the training loop saw it: decoded text by default, ids with --json')
    .argument('<root>', 'dataset folder holding shard_manifest.jsonl (or one .u32 file)')
    .argument('<k>', 'update index, 0-based (update k trained on global tokens [G·k, G·(k+1)))')
    .option('--sequence <r>', 'only sequence r (0-based)')
    .option('--json', 'print {"update","token_range","shards","input_ids","target_ids"}')
    .option('--text', 'decoded text (the default)')
    .action(ctx.run(async (root: string, kText: string, opts: { sequence?: string; json?: boolean; text?: boolean }, cmd: Command) => {
      const ds = await ctx.open(root, cmd);
      const k = ctx.int(kText, 'update')!;
      ds.schedule.checkUpdate(k); // RangeRequestError (exit 2) naming the valid range, or saying there is no complete update
      const seq = ctx.int(opts.sequence, '--sequence');
      if (seq !== undefined && seq >= ds.schedule.sequencesPerUpdate) {
        throw new UsageError(`--sequence ${seq} is outside 0..${ds.schedule.sequencesPerUpdate - 1}`);
      }
      const batch = await readUpdate(ds, k);
      const rows = seq === undefined ? [...Array(batch.rows).keys()] : [seq];
      if (opts.json && !opts.text) {
        const json: Record<string, unknown> = {
          update: batch.update,
          token_range: batch.tokenRange,
          shards: batch.shards.map((s) => s.shard),
        };
        if (seq !== undefined) json.sequence = seq;
        json.input_ids = rows.map((r) => Array.from(inputRow(batch, r)));
        json.target_ids = rows.map((r) => Array.from(targetRow(batch, r)));
        ctx.out(JSON.stringify(json));
        return 0;
      }
      const tok = await ctx.tokenizerFor(undefined, cmd, ds);
      const firstDocument = await documentNumberIfCheap(new DocumentIndex(ds.stream, ds.settings.eosTokenId), batch.tokenRange[0], DEFAULT_DOCUMENT_SCAN_LIMIT);
      const prev = batch.tokenRange[0] > 0 ? (await ds.stream.read(batch.tokenRange[0] - 1, 1))[0] : undefined;
      const text = formatUpdateModelText(buildUpdateModel(batch, tok, { previousId: prev, firstDocument, numUpdates: ds.schedule.numUpdates, eos: ds.settings.eosTokenId }), rows);
      ctx.out(ctx.term(text, { keepLayout: true }));
      return 0;
    }));
}
