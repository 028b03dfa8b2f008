/**
 * `token-shards locate <root> <offset> [--json]`: where a global token offset is — shard and local
 * offset, update/sequence/position (0-based; null for look-ahead tokens), and its document:
 * `document` (0-based) = the number of EOS ids before the offset, `document_start` (global), and
 * `document_length` in tokens **excluding** the document's closing EOS (a last document without EOS
 * runs to the end of the stream).
 *
 * With the stream index (`token-shards index`), the answer reads at most three blocks of 16,384
 * tokens. Without it (or for offsets past the indexed shards) it counts EOS by reading every shard
 * before the offset, says so on stderr, and suggests building the index.
 *
 * Formats with a document index (Megatron `.idx`, datatrove `.ds.index`, Dolma `.csv.gz`): the
 * document is the index's entry and `document_length` its tokens, EOS included when stored; Dolma
 * adds `metadata` `{id, src, loc}`. Formats whose delimiter opens documents (llm.c): the document
 * starts at its delimiter and `document_length` counts it.
 *
 * JSON: `{"offset","shard","local_offset","update","sequence","position","sample","order","reads","document","document_start","document_length"[,"metadata"]}`.
 * `update`/`sequence`/`position`/`sample` are the token's first reading as a model input in the
 * training order (`--run FILE` or `<root>/run.json`, else the card's sequential order; `sequence` is
 * the sample's slot in the update's batch); null when the run never read it as an input. `reads`
 * lists every reading: `{"update","slot","sample","position","target"}` (`target`: only as the
 * sample's last target; llm.c adds `process`, `row`).
 */
import type { Command } from 'commander';
import { documentIndexOf, findDocumentBounds, formatDocumentAt } from '../../core/documents';
import { documentRuleOf } from '../../core/documentRule';
import type { DocumentMetadata } from '../../core/formats/types';
import { PAST_LAST_UPDATE_TEXT } from '../../core/schedule';
import { count, fmt } from '../../core/units';
import { formatBytes } from '../../core/verify/format';
import { CliContext, UsageError } from '../context';
import { openCliIndex } from '../streamIndexCli';
import { orderFor } from '../order';
import { OrderRead } from '../../core/order/order';

/** Registers `locate`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('locate')
    .description('shard, update/sequence/position and document (number, start, length) of a global token offset')
    .argument('<root>', 'dataset folder holding shard_manifest.jsonl (or one .u32 file)')
    .argument('<offset>', 'global token offset (0-based)')
    .option('--json', 'machine-readable output')
    .action(
      ctx.run(async (root: string, offsetText: string, opts: { json?: boolean }, cmd: Command) => {
        const offset = ctx.int(offsetText, 'offset')!;
        const ds = await ctx.open(root, cmd);
        if (offset >= ds.storedTokens)
          throw new UsageError(
            ds.storedTokens === 0
              ? `offset ${fmt(offset)}: the stream is empty (no readable shard)`
              : `offset ${fmt(offset)} is outside the stream (0..${fmt(ds.storedTokens - 1)})`,
          );
        const { index: ix } = await openCliIndex(ctx, ds, cmd);
        const { segment, localToken } = ds.stream.locate(offset);
        const order = await orderFor(ctx, ds, cmd);
        let reads: OrderRead[];
        try {
          reads = order.reads(offset);
        } finally {
          order.close();
        }
        const input = reads.find((r) => !r.target);
        let document: number, start: number, length: number;
        let metadata: DocumentMetadata | undefined;
        let lengthNote = 'excluding its EOS';
        const rule = documentRuleOf(ds);
        if (rule.role === 'opens') lengthNote = `including its opening ${rule.delimiter}`;
        const info = ds.format?.documents ? undefined : ix.covers(offset) ? await ix.documentAt(offset) : undefined;
        if (ds.format?.documents) {
          const d = formatDocumentAt(ds.format.documents, offset, ds.storedTokens);
          ({ document, start } = d);
          length = d.end - d.start;
          metadata = ds.format.documents.metadata?.(document);
          lengthNote = "from the format's index";
        } else if (info && info.length !== undefined) {
          ({ document, start, length } = { document: info.document, start: info.start, length: info.length });
        } else {
          ctx.warn(
            `no stream index for ${ix.readyUpTo < segment ? `shard ${ctx.term(ds.shards[ix.readyUpTo].shard)} and later` : 'this shard'}: counting EOS by reading ${formatBytes(4 * offset)}; \`${ctx.self} index ${ctx.term(root)}\` makes this instant`,
          );
          const di = documentIndexOf(ds);
          document = await di.documentNumberAt(offset, ctx.signal);
          const b = await findDocumentBounds(ds.stream, offset, rule.delimiter, Number.MAX_SAFE_INTEGER, rule.role);
          start = b.start;
          length = b.length;
        }
        const out = {
          offset,
          shard: ds.shards[segment].shard,
          local_offset: localToken,
          update: input?.update ?? null,
          sequence: input?.slot ?? null,
          position: input?.position ?? null,
          sample: input?.sample ?? null,
          order: order.kind,
          reads: reads.map((r) => ({
            update: r.update,
            slot: r.slot,
            sample: r.sample,
            position: r.position,
            target: r.target,
            ...(r.process !== undefined ? { process: r.process, row: r.row } : {}),
          })),
          document,
          document_start: start,
          document_length: length,
          ...(metadata ? { metadata: { id: metadata.id ?? null, src: metadata.src ?? null, loc: metadata.loc ?? null } } : {}),
        };
        if (opts.json) ctx.out(ctx.json(out));
        else {
          const where = !input
            ? order.kind === 'sequential'
              ? PAST_LAST_UPDATE_TEXT[ds.schedule.pastLastUpdate(offset) ?? 'untrained']
              : 'never read as an input by the run'
            : order.kind === 'sequential'
              ? `update ${fmt(input.update)}, sequence ${fmt(input.slot)}, position ${fmt(input.position)} (0-based)`
              : `read as an input in ${reads
                  .filter((r) => !r.target)
                  .map((r) => `update ${fmt(r.update)} slot ${fmt(r.slot)} (sample ${fmt(r.sample)}) position ${fmt(r.position)}`)
                  .join('; ')} (0-based, ${order.kind} order)`;
          ctx.out(
            `offset ${fmt(offset)} · ${ctx.term(out.shard)} local ${fmt(localToken)} · ${where} · document ${fmt(document)} (0-based), starting at ${fmt(start)}, ${count(length, 'token')} ${lengthNote}${
              metadata
                ? ` · id ${ctx.term(metadata.id ?? '?')} src ${ctx.term(metadata.src ?? '?')} loc ${ctx.term(metadata.loc ?? '?')}`
                : ''
            }`,
          );
        }
        return 0;
      }),
    );
}
