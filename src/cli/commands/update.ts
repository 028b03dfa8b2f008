/**
 * `token-shards update <root> <k> [--sequence r] [--json | --text]`: update k as the training
 * loop saw it. With a run description (`--run FILE` or `<root>/run.json`) naming a training order
 * other than the card's sequential one, update k is the run's batch: {@link printOrdered}.
 *
 * Memory stays bounded whatever G is (G ≤ 16,777,216): the text form reads and decodes a few rows
 * at a time (about 1M tokens), `--sequence r` reads only its row (L + 1 tokens), and `--json`
 * streams row by row (byte for byte the JSON the whole batch would give).
 */
import type { Command } from 'commander';
import { Dataset } from '../../core/dataset';
import { DEFAULT_DOCUMENT_SCAN_LIMIT, documentIndexOf } from '../../core/documents';
import { countEnd, documentRuleOf } from '../../core/documentRule';
import { UpdateBatch } from '../../core/update';
import { buildUpdateModel, documentNumberIfCheap, formatUpdateHeaderText, formatUpdateRowsText } from '../../core/updateModel';
import { CliContext, EXIT, UsageError } from '../context';
import { diagnoseDataset, unknownWarning } from '../diagnose';
import { orderFor } from '../order';
import { TrainingOrder, checkOrderUpdate } from '../../core/order/order';
import { fmt } from '../../core/units';
import { decodeForDisplay } from '../../core/tokenizer';
import { openCliIndex } from '../streamIndexCli';

/** About how many tokens the text form decodes at a time, and `--json` prints at a time. */
const CHUNK_TOKENS = 1 << 20;

/** Registers `update`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('update')
    .description('update k (0-based) as the training loop saw it: decoded text by default, ids with --json')
    .argument('<root>', 'dataset folder holding shard_manifest.jsonl (or one .u32 file)')
    .argument('<k>', 'update index, 0-based (update k trained on global tokens [G·k, G·(k+1)))')
    .option('--sequence <r>', 'only sequence r (0-based; with a run description, the sample in batch slot r); reads only that row')
    .option(
      '--json',
      'print {"update","token_range","shards","input_ids","target_ids"}; with a run description {"update","order","samples":[{"slot","sample","ranges","shards","input_ids","target_ids"}]}',
    )
    .option('--text', 'decoded text (the default)')
    .action(
      ctx.run(async (root: string, kText: string, opts: { sequence?: string; json?: boolean; text?: boolean }, cmd: Command) => {
        if (opts.json && opts.text)
          throw new UsageError('--json and --text exclude each other: --json prints ids, --text (the default) decoded text');
        const k = ctx.int(kText, 'update')!;
        const seq = ctx.int(opts.sequence, '--sequence');
        const ds = await ctx.open(root, cmd);
        ctx.warnSchedule(ds);
        const order = await orderFor(ctx, ds, cmd);
        try {
          if (order.kind !== 'sequential') return await printOrdered(ctx, cmd, ds, order, k, seq, opts.json === true);
        } finally {
          order.close();
        }
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
  const role = documentRuleOf(ds).role;
  let doc = await documentNumberIfCheap(documentIndexOf(ds), start + L * first, DEFAULT_DOCUMENT_SCAN_LIMIT);
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
      delimiter: role,
      firstRow: r0,
      markUnknown: true,
    });
    for (const row of m.rows) for (const g of row.segments) unknown += g.unknownIds;
    await ctx.write(ctx.text(formatUpdateRowsText(m, undefined, S - 1), { keepLayout: true }) + '\n');
    // The next chunk's first document: delimiters in [0, countEnd(next chunk's first token)).
    const shift = countEnd(role, 0);
    if (doc !== undefined) for (let i = shift; i < rows * L + shift; i++) if (tokens[i] === eos) doc++;
  }
  // Ids not in the vocabulary are a data problem: exit 1, as in `decode` and `tokens --text`.
  if (unknown) {
    ctx.warn(unknownWarning(unknown, tok.vocabSize));
    return EXIT.data;
  }
  return EXIT.ok;
}

/**
 * Update k of a run's training order (`--run FILE` or `<root>/run.json`): its samples in batch
 * order, each with the stream ranges it was assembled from. JSON:
 * `{"update","order","description","samples":[{"slot","sample","ranges":[[start,end],…],"shards","input_ids","target_ids"}]}`
 * (`process`, `row` for llm.c); `input_ids` are the sample's first `inputTokens` tokens,
 * `target_ids` its tokens shifted by one. Text: one header line per sample (slot, the order's
 * sample number, ranges, shards, the document of its first token when the stream index has it),
 * then its decoded inputs.
 */
async function printOrdered(
  ctx: CliContext,
  cmd: Command,
  ds: Dataset,
  order: TrainingOrder,
  k: number,
  seq: number | undefined,
  json: boolean,
): Promise<number> {
  checkOrderUpdate(order, k);
  if (seq !== undefined && seq >= order.samplesPerUpdate)
    throw new UsageError(`--sequence ${seq} is outside 0..${order.samplesPerUpdate - 1} (samples of the update)`);
  const samples = order.update(k).filter((s) => seq === undefined || s.slot === seq);
  const tok = json ? undefined : await ctx.tokenizerFor(undefined, cmd, ds);
  if (tok) {
    const anomaly = await diagnoseDataset(ds, tok.vocabSize);
    if (anomaly && anomaly.kind !== 'out-of-vocab') ctx.warn(anomaly.message);
  }
  const ix = json ? undefined : (await openCliIndex(ctx, ds, cmd)).index;
  let unknown = 0;
  if (json) await ctx.write(ctx.json({ update: k, order: order.kind, description: order.description }).slice(0, -1) + ',"samples":[');
  else ctx.out(`update ${fmt(k)} (0-based) · ${order.description} · ${fmt(samples.length)} sample${samples.length === 1 ? '' : 's'}`);
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    const ids: number[] = [];
    for (const p of s.pieces) for (const v of await ds.stream.read(p.start, p.end - p.start)) ids.push(v);
    const shards = [...new Set(s.pieces.flatMap((p) => shardsOf(ds, p.start, p.end - 1).map((e) => e.shard)))];
    if (json) {
      const o: Record<string, unknown> = { slot: s.slot, sample: s.sample };
      if (s.process !== undefined) Object.assign(o, { process: s.process, row: s.row });
      Object.assign(o, { ranges: s.pieces.map((p) => [p.start, p.end]), shards });
      await ctx.write((i > 0 ? ',' : '') + ctx.json(o).slice(0, -1));
      await ctx.write(`,"input_ids":[${ids.slice(0, order.inputTokens).join(',')}],"target_ids":[${ids.slice(1).join(',')}]}`);
    } else {
      const first = s.pieces[0]?.start;
      const doc = first !== undefined && ix?.covers(first) ? await ix.documentAt(first) : undefined;
      const who = s.process !== undefined ? ` · process ${s.process} row ${s.row}` : '';
      ctx.out(
        `— slot ${fmt(s.slot)} · sample ${fmt(s.sample)}${who} · tokens ${s.pieces.map((p) => `[${fmt(p.start)}, ${fmt(p.end)})`).join(' + ')} · ${shards.map((x) => ctx.term(x)).join(', ')}${doc ? ` · document ${fmt(doc.document)}` : ''}`,
      );
      // Names are metadata: always marked; the decoded text follows --escape/--raw.
      const text = decodeForDisplay(tok!, ids.slice(0, order.inputTokens));
      unknown += text.unknown;
      ctx.out(ctx.text(text.text, { keepLayout: true }));
    }
  }
  if (json) await ctx.write(']}\n');
  // Ids not in the vocabulary are a data problem: exit 1, as in the sequential text form.
  if (unknown) {
    ctx.warn(unknownWarning(unknown, tok!.vocabSize));
    return EXIT.data;
  }
  return EXIT.ok;
}
