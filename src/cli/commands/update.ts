/**
 * `token-shards update <root> <k> [--sequence r] [--json | --text]`: update k as the training
 * loop saw it.
 *
 * Memory stays bounded whatever G is (G ≤ 16,777,216): the text form reads and decodes a few rows
 * at a time (about 1M tokens), `--sequence r` reads only its row (L + 1 tokens), and `--json`
 * streams row by row (byte for byte the JSON the whole batch would give).
 */
import type { Command } from 'commander';
import { Dataset } from '../../core/dataset';
import { DEFAULT_DOCUMENT_SCAN_LIMIT, DocumentIndex } from '../../core/documents';
import { UpdateBatch } from '../../core/update';
import { buildUpdateModel, documentNumberIfCheap, formatUpdateHeaderText, formatUpdateRowsText } from '../../core/updateModel';
import { CliContext, EXIT, UsageError } from '../context';
import { diagnoseDataset, unknownWarning } from '../diagnose';

/** About how many tokens the text form decodes at a time, and `--json` prints at a time. */
const CHUNK_TOKENS = 1 << 20;

/** Registers `update`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('update')
    .description('update k (0-based) as the training loop saw it: decoded text by default, ids with --json')
    .argument('<root>', 'dataset folder holding shard_manifest.jsonl (or one .u32 file)')
    .argument('<k>', 'update index, 0-based (update k trained on global tokens [G·k, G·(k+1)))')
    .option('--sequence <r>', 'only sequence r (0-based); reads only that row')
    .option('--json', 'print {"update","token_range","shards","input_ids","target_ids"}')
    .option('--text', 'decoded text (the default)')
    .action(
      ctx.run(async (root: string, kText: string, opts: { sequence?: string; json?: boolean; text?: boolean }, cmd: Command) => {
        if (opts.json && opts.text)
          throw new UsageError('--json and --text exclude each other: --json prints ids, --text (the default) decoded text');
        const k = ctx.int(kText, 'update')!;
        const seq = ctx.int(opts.sequence, '--sequence');
        const ds = await ctx.open(root, cmd);
        ctx.warnSchedule(ds);
        ds.schedule.checkUpdate(k); // RangeRequestError (exit 2) naming the valid range, or saying there is no complete update
        const S = ds.schedule.sequencesPerUpdate;
        if (seq !== undefined && seq >= S) throw new UsageError(`--sequence ${seq} is outside 0..${S - 1}`);
        const [first, last] = seq === undefined ? [0, S] : [seq, seq + 1];
        if (opts.json) return printJson(ctx, ds, k, first, last, seq);
        return printText(ctx, cmd, ds, k, first, last);
      }),
    );
}

/** Manifest `shard` fields of the shards holding global tokens [a, b] (inclusive). */
function shardsOf(ds: Dataset, a: number, b: number) {
  return ds.shards.slice(ds.stream.locate(a).segment, ds.stream.locate(b).segment + 1);
}

/** `--json`: rows streamed one at a time; the same bytes as `ctx.json` (jsonSafe) of the whole object. */
async function printJson(ctx: CliContext, ds: Dataset, k: number, first: number, last: number, seq: number | undefined): Promise<number> {
  const { G, L } = ds.schedule;
  const start = G * k;
  const head: Record<string, unknown> = {
    update: k,
    token_range: [start, start + G],
    shards: shardsOf(ds, start, start + G).map((s) => s.shard),
  };
  if (seq !== undefined) head.sequence = seq;
  await ctx.write(ctx.json(head).slice(0, -1));
  for (const [key, shift] of [
    ['input_ids', 0],
    ['target_ids', 1],
  ] as const) {
    await ctx.write(`,${ctx.json(key)}:[`);
    for (let r = first; r < last; r++) {
      await ctx.write(r > first ? ',[' : '[');
      for (let at = 0; at < L; at += CHUNK_TOKENS) {
        const n = Math.min(CHUNK_TOKENS, L - at);
        const ids = await ds.stream.read(start + L * r + shift + at, n);
        await ctx.write((at > 0 ? ',' : '') + ids.join(','));
      }
      await ctx.write(']');
    }
    await ctx.write(']');
  }
  await ctx.write('}\n');
  return 0;
}

/** Text form: the update view's model, a few rows at a time. */
async function printText(ctx: CliContext, cmd: Command, ds: Dataset, k: number, first: number, last: number): Promise<number> {
  const { G, L } = ds.schedule;
  const S = ds.schedule.sequencesPerUpdate;
  const start = G * k;
  const tok = await ctx.tokenizerFor(undefined, cmd, ds);
  const anomaly = await diagnoseDataset(ds, tok.vocabSize);
  if (anomaly && anomaly.kind !== 'out-of-vocab') ctx.warn(anomaly.message);
  ctx.out(
    formatUpdateHeaderText(
      k,
      [start, start + G],
      S,
      L,
      shardsOf(ds, start, start + G).map((s) => ctx.term(s.shard)),
    ),
  );
  const rowsPerChunk = Math.max(1, Math.floor(CHUNK_TOKENS / L));
  const eos = ds.settings.eosTokenId;
  let doc = await documentNumberIfCheap(
    new DocumentIndex(ds.stream, eos, ds.format?.documents),
    start + L * first,
    DEFAULT_DOCUMENT_SCAN_LIMIT,
  );
  let unknown = 0;
  for (let r0 = first; r0 < last; r0 += rowsPerChunk) {
    const rows = Math.min(rowsPerChunk, last - r0);
    const from = start + L * r0;
    const tokens = await ds.stream.read(from, rows * L + 1);
    const prev = from > 0 ? (await ds.stream.read(from - 1, 1))[0] : undefined;
    const batch: UpdateBatch = {
      update: k,
      tokenRange: [from, from + rows * L],
      tokens,
      // Names are metadata: always marked; the decoded text follows --escape/--raw.
      shards: shardsOf(ds, from, from + rows * L).map((e) => ({ ...e, shard: ctx.term(e.shard) })),
      rows,
      seqLen: L,
    };
    const m = buildUpdateModel(batch, tok, {
      previousId: prev,
      firstDocument: doc,
      numUpdates: ds.schedule.numUpdates,
      eos,
      firstRow: r0,
      markUnknown: true,
    });
    for (const row of m.rows) for (const g of row.segments) unknown += g.unknownIds;
    await ctx.write(ctx.text(formatUpdateRowsText(m, undefined, S - 1), { keepLayout: true }) + '\n');
    if (doc !== undefined) for (let i = 0; i < rows * L; i++) if (tokens[i] === eos) doc++;
  }
  // Ids not in the vocabulary are a data problem: exit 1, as in `decode` and `tokens --text`.
  if (unknown) {
    ctx.warn(unknownWarning(unknown, tok.vocabSize));
    return EXIT.data;
  }
  return EXIT.ok;
}
