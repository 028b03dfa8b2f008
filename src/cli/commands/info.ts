/** `token-shards info <root> [--json]`: shards, stored tokens, updates, G, L, EOS, tokenizer, problems. */
import type { Command } from 'commander';
import { formatNameOf } from '../../core/dataset';
import { fmt } from '../../core/units';
import { ScheduleSettings } from '../../core/schedule';
import { limitDepth } from '../../core/safeJson';
import { CliContext, listed } from '../context';
import { diagnoseDataset } from '../diagnose';
import { anomalyJson, describeIndex, openCliIndex } from '../streamIndexCli';
import { runThreshold } from './index';

/** Registers `info`. Exit 1 when the dataset has an error-level problem. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('info')
    .description('summarise a dataset: shards, stored tokens, updates, G, L, EOS, tokenizer, problems')
    .argument('<root>', 'dataset folder holding shard_manifest.jsonl, one .u32 file, or a file or folder of another token format')
    .option('--json', 'machine-readable output')
    .option('--run-threshold <tokens>', 'with the stream index: report EOS-free runs longer than this (default 100000)')
    .action(
      ctx.run(async (root: string, opts: { json?: boolean; runThreshold?: string }, cmd: Command) => {
        const threshold = runThreshold(ctx, opts.runThreshold);
        const ds = await ctx.open(root, cmd);
        // uint16 data read as uint32 (or the reverse) decodes to nothing: a problem, found by the editor's diagnosis.
        const tok =
          ds.tokenizerFile || ctx.globals(cmd).tokenizer ? await ctx.tokenizerFor(undefined, cmd, ds).catch((e: Error) => e) : undefined;
        if (tok instanceof Error) {
          ds.problems.push({ code: 'bad-tokenizer', severity: 'error', file: ds.tokenizerFile ?? '', message: tok.message });
        } else if (tok) {
          const anomaly = await diagnoseDataset(ds, tok.vocabSize);
          if (anomaly)
            ds.problems.push({
              code: 'id-anomaly',
              // A dtype the user forced is what they asked to see: its look is a warning, not a fault.
              severity: anomaly.kind === 'out-of-vocab' || ds.format?.dtypeSource === 'option' ? 'warning' : 'error',
              file: ds.manifestFile || ds.shards[0]?.path || '',
              message: anomaly.message,
            });
        }
        const errors = ds.problems.filter((p) => p.severity === 'error');
        // The stream index, when built (`token-shards index`): documents, longest run, anomalies (faults exit 1).
        const { index: ix } = await openCliIndex(ctx, ds, cmd);
        const indexed = ix.indexedCount > 0;
        const anomalies = indexed ? ix.anomalies(ds.schedule, threshold) : [];
        const anomalyFaults = anomalies.filter((a) => a.severity === 'error').length;
        if (opts.json) {
          const info = {
            root: ds.root,
            format: formatNameOf(ds),
            format_reason: ds.format?.reason ?? null,
            dtype: ds.format?.dtype ?? 'uint32',
            dtype_source: ds.format?.dtypeSource ?? 'default',
            files: ds.shards.length,
            stream_files: ds.shards.map((e, i) => ({
              name: e.shard,
              path: e.path,
              start_token: e.startToken,
              tokens: e.numTokens,
              header_bytes: ds.format?.files[i].layout.headerBytes ?? 0,
              // The file the folder holds when the tokens are read from a copy (a compressed chunk's decompressed copy).
              stored_as: ds.format?.files[i].storedAs ?? null,
              sidecars: ds.format?.files[i].sidecars ?? [],
            })),
            documents: ds.format?.documents ? ds.format.documents.starts.length : indexed ? (ix.documentCount ?? null) : null,
            documents_from: ds.format?.documents ? 'format index' : indexed && ix.documentCount !== undefined ? 'stream index' : null,
            delimiter: ds.format?.delimiter ?? 'closes',
            notes: ds.format?.notes ?? [],
            lone_shard: ds.lone ? ds.shards[0].path : null,
            shards: ds.shards.length,
            stored_tokens: ds.storedTokens,
            training_tokens: ds.schedule.numUpdates * ds.schedule.G,
            updates: ds.schedule.numUpdates,
            global_tokens_per_update: ds.settings.globalTokensPerUpdate,
            sequence_length: ds.settings.sequenceLength,
            sequences_per_update: ds.schedule.sequencesPerUpdate,
            eos_token_id: ds.settings.eosTokenId,
            setting_sources: ds.settingSources,
            tokenizer: ds.tokenizerFile ?? null,
            // Depth-limited: a deeply nested value prints as a note, not a stack overflow.
            manifest_json: ds.provenance ? limitDepth(ds.provenance.data) : null,
            verification_json: ds.verification ? limitDepth(ds.verification.data) : null,
            problems: ds.problems.map((p) => ({ severity: p.severity, code: p.code, line: p.line ?? null, message: p.message })),
            stream_index: indexed
              ? {
                  shards_indexed: ix.indexedCount,
                  complete: ix.complete,
                  documents: ix.documentCount ?? null,
                  longest_run: ix.summary().longestRun,
                  run_threshold: threshold,
                  anomalies: anomalies.map((a) => anomalyJson(ds, a)),
                }
              : null,
          };
          ctx.out(ctx.json(info, 2));
        } else {
          const t = ctx.term;
          const src = (...keys: (keyof ScheduleSettings)[]) => {
            const from = [...new Set(keys.map((k) => ds.settingSources[k]).filter((s) => s !== 'default'))];
            return from.length ? ` (from ${from.join(' and ')})` : ' (dataset card defaults)';
          };
          ctx.out(
            [
              ds.lone ? `shard            ${t(ds.shards[0].path)} (no manifest: local offsets)` : `dataset          ${t(ds.root)}`,
              `format           ${formatNameOf(ds)}${ds.format ? ` (${t(ds.format.reason)})` : ''}`,
              `dtype            ${ds.format?.dtype ?? 'uint32'}${ds.format ? ` (${ds.format.dtypeSource})` : ''}`,
              ...(ds.format?.notes ?? []).map((n) => `note             ${t(n)}`),
              `shards           ${fmt(ds.shards.length)}`,
              ...(ds.format?.documents ? [`documents        ${fmt(ds.format.documents.starts.length)} (from the format's index)`] : []),
              `stored tokens    ${fmt(ds.storedTokens)} (training tokens + look-ahead)`,
              `updates          ${
                ds.schedule.numUpdates > 0
                  ? `${fmt(ds.schedule.numUpdates)} (0-based: 0..${fmt(ds.schedule.numUpdates - 1)})`
                  : `0 (one update needs ${fmt(ds.schedule.G + 1)} tokens: ${fmt(ds.schedule.G)} plus the look-ahead token)`
              }`,
              `tokens/update    ${fmt(ds.settings.globalTokensPerUpdate)} = ${fmt(ds.schedule.sequencesPerUpdate)} sequences × ${fmt(ds.settings.sequenceLength)}${src('globalTokensPerUpdate', 'sequenceLength')}`,
              `EOS id           ${ds.settings.eosTokenId}${src('eosTokenId')}`,
              `tokenizer        ${ds.tokenizerFile ? t(ds.tokenizerFile) : '(none found: pass --tokenizer)'}`,
              `manifest.json    ${ds.provenance ? t(Object.keys(ds.provenance.data).join(', ')) : '(absent)'}`,
              `verification     ${ds.verification ? t(Object.keys(ds.verification.data).join(', ')) : '(absent)'}`,
              ds.problems.length
                ? `problems (${fmt(ds.problems.length)}):\n${listed(
                    ds.problems.map((p) => `  ${p.severity}: ${t(p.message)}`),
                    (n) => `  … and ${n} more (--json lists them all)`,
                  ).join('\n')}`
                : 'problems         none',
              ...(indexed
                ? describeIndex(ds, ix, anomalies, t, ctx.self)
                : [`stream index     (not built: \`${ctx.self} index ${t(root)}\` gives documents, EOS-free runs and anomalies)`]),
            ].join('\n'),
          );
        }
        return errors.length || anomalyFaults ? 1 : 0;
      }),
    );
}
