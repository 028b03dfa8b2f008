/**
 * `token-shards index <root> [--jobs N] [--json] [--force] [--run-threshold T]`: builds the stream
 * index (`core/streamIndex/streamIndex.ts`) of every shard without hashing, in the CLI's cache folder
 * (`$XDG_CACHE_HOME/token-shard-inspector/stream-index`, never the dataset folder). Entries still
 * valid for a shard's file identity are reused; Ctrl-C keeps finished shards (resumable).
 * Progress (shards, bytes, rate, time left; then the duplicate pass: documents, rate, time left)
 * on stderr when it is a terminal.
 *
 * Exit codes (the table in `../exitCodes.ts`): 0 indexed; 1 a shard could not be read, the index
 * folder cannot be written (one line naming it), or the anomalies include faults (as `info`
 * judges them); 2 usage; 130 interrupted.
 */
import type { Command } from 'commander';
import { DataError } from '../../core/errors';
import { count, fmt } from '../../core/units';
import { indexSegmentsOf, indexShards, openDatasetIndex } from '../../core/streamIndex/indexShards';
import { DEFAULT_EOS_FREE_RUN_THRESHOLD } from '../../core/streamIndex/anomalies';
import { LONG_RUN_FLOOR } from '../../core/streamIndex/scan';
import { formatBytes, formatDuration, formatRate, formatVerifyProgress } from '../../core/verify/format';
import { folderUnwritable } from '../../core/verify/cache';
import { prestartVerifyWorkers } from '../../core/verify/verify';
import { CliContext, EXIT, UsageError, cacheInsideDataset, listed } from '../context';
import { anomalyJson, describeIndex, openCliIndex } from '../streamIndexCli';

/** Parses `--run-threshold` (tokens; at least the per-shard floor of kept runs). */
export function runThreshold(ctx: CliContext, text: string | undefined): number {
  const t = ctx.int(text, '--run-threshold') ?? DEFAULT_EOS_FREE_RUN_THRESHOLD;
  if (t < LONG_RUN_FLOOR)
    throw new UsageError(`--run-threshold must be ≥ ${fmt(LONG_RUN_FLOOR)} tokens (shorter runs are not kept by the index)`);
  return t;
}

/** Redraws the one progress line on stderr (a terminal); returns its length. */
function drawLine(text: string, lastLen: number): number {
  const width = process.stderr.columns || 100;
  const line = text.slice(0, width - 1);
  process.stderr.write(`\r${line.padEnd(Math.min(width - 1, Math.max(lastLen, line.length)))}`);
  return line.length;
}

/** "duplicates: 1,234,567 of 8,208,264 documents · 612,000 documents/s · 11 s left". */
export function formatDuplicateProgress(done: number, total: number, elapsedMs: number): string {
  const parts = [`duplicates: ${fmt(done)} of ${fmt(total)} documents`];
  if (elapsedMs > 0 && done > 0) {
    const rate = (done / elapsedMs) * 1000;
    parts.push(`${fmt(Math.round(rate))} documents/s`);
    if (done < total) parts.push(`${formatDuration(((total - done) / rate) * 1000)} left`);
  }
  return parts.join(' · ');
}

/** Registers `index`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('index')
    .description('build the stream index (document numbers, EOS-free runs, anomalies, duplicates) without hashing')
    .argument('<root>', 'dataset folder holding shard_manifest.jsonl (or one .u32 file)')
    .option('--jobs <N>', 'reading threads (default, or 0: number of CPU cores)')
    .option('--json', 'machine-readable output')
    .option('--force', 'rebuild entries that are still valid')
    .option('--run-threshold <tokens>', `report EOS-free runs longer than this (default ${DEFAULT_EOS_FREE_RUN_THRESHOLD})`)
    .action(
      ctx.run(async (root: string, opts: { jobs?: string; json?: boolean; force?: boolean; runThreshold?: string }, cmd: Command) => {
        const jobs = ctx.jobs(opts.jobs);
        const threshold = runThreshold(ctx, opts.runThreshold);
        // The reading threads start while this one reads the manifest and the tokenizer.
        prestartVerifyWorkers({ jobs, index: true });
        const ds = await ctx.open(root, cmd);
        // The manifest's own problems (lines refused, paths leading out, sizes that are not whole
        // tokens) come first, as `verify` and `info` report them: the index covers only what is read.
        if (!opts.json)
          for (const l of listed(
            ds.problems.map((p) => `${p.severity}: ${ctx.term(p.message)}`),
            (n) => `… and ${n} more manifest problems (--json lists them all)`,
          ))
            ctx.err(l);
        const manifestErrors = ds.problems.filter((p) => p.severity === 'error').length;
        if (ds.shards.length === 0)
          throw new DataError(`${ctx.term(ds.manifestFile || ds.root)}: no readable shard line; nothing to index`, ds.manifestFile);
        const signal = ctx.cancellable();
        const { store, params, noTokenizer } = await openCliIndex(ctx, ds, cmd);
        if (noTokenizer) ctx.warn(noTokenizer);
        // An index folder that cannot be written would fail every shard alike: one line instead.
        const unwritable = cacheInsideDataset(store.dir, ds.root) ?? folderUnwritable(store.dir);
        if (unwritable) {
          ctx.err(`error: cannot write the stream index in ${ctx.term(store.dir)} (${ctx.term(unwritable)})`);
          return 1;
        }
        const tty = !opts.json && process.stderr.isTTY === true;
        let lastLen = 0;
        const report = await indexShards(indexSegmentsOf(ds), store, params, {
          jobs: jobs || undefined,
          signal,
          force: !!opts.force,
          onProgress: tty ? (p) => (lastLen = drawLine(formatVerifyProgress(p), lastLen)) : undefined,
        });
        if (lastLen) process.stderr.write(`\r${' '.repeat(lastLen)}\r`);
        lastLen = 0;
        // One line per failed shard, at most MAX_FAILURE_LINES (an unwritable index folder fails every shard alike).
        for (const l of listed(
          report.failed.map((f) => `error: ${ctx.term(f.message)}`),
          (n) => `error: … and ${n} more shards failed (--json lists them all)`,
        ))
          ctx.err(l);
        const ix = await openDatasetIndex(ds, store, params);
        const anomalies = ix.anomalies(ds.schedule, threshold);
        // The duplicate pass reads every shard's document hashes (16 bytes a document): seconds to
        // tens of seconds at full scale, so it draws its own progress line (rate, time left).
        let lastDraw = 0;
        const dups = ix.complete
          ? await ix.duplicates(store, {
              signal,
              onProgress: tty
                ? (done, total, ms) => {
                    if (Date.now() - lastDraw < 200) return;
                    lastDraw = Date.now();
                    lastLen = drawLine(formatDuplicateProgress(done, total, ms), lastLen);
                  }
                : undefined,
            })
          : undefined;
        if (lastLen) process.stderr.write(`\r${' '.repeat(lastLen)}\r`);
        lastLen = 0;
        // Index size on disk: distinct entries (hard links share one).
        const seen = new Set<unknown>();
        let json = 0,
          docs = 0,
          entries = 0;
        for (const r of ix.records) {
          if (!r || seen.has(r)) continue;
          seen.add(r);
          const s = await store.entrySize(r);
          json += s.json;
          docs += s.docs;
          entries++;
        }
        if (opts.json) {
          const s = ix.summary();
          ctx.out(
            ctx.json(
              {
                root: ds.root,
                index_dir: store.dir,
                problems: ds.problems.map((p) => ({ severity: p.severity, code: p.code, line: p.line ?? null, message: p.message })),
                shards: ds.shards.length,
                built: report.built,
                reused: report.reused,
                shared: report.shared,
                pruned: report.pruned,
                failed: report.failed.map((f) => ({ shard: ds.shards[f.segment].shard, message: f.message })),
                cancelled: report.cancelled,
                bytes_read: report.bytesRead,
                elapsed_ms: report.elapsedMs,
                jobs: report.jobs,
                complete: ix.complete,
                documents: ix.documentCount ?? null,
                eos: ix.totalEos ?? null,
                eos_per_shard: ix.records.map((r) => r?.eosCount ?? null),
                document_length: {
                  count: s.documents.count,
                  sum: s.documents.sum,
                  min: s.documents.min,
                  max: s.documents.max,
                  log2_histogram: s.documents.hist,
                },
                longest_run: s.longestRun,
                run_threshold: threshold,
                anomalies: anomalies.map((a) => anomalyJson(ds, a)),
                duplicates: dups
                  ? {
                      documents: dups.documents,
                      duplicates: dups.duplicates,
                      stopped_at: dups.stoppedAt ?? null,
                      pairs: dups.pairs.map((p) => ({
                        document: p.document,
                        start: p.start,
                        length: p.length,
                        earlier_document: p.earlierDocument,
                        earlier_start: p.earlierStart,
                      })),
                    }
                  : null,
                index_bytes: { entries, json, docs, json_per_entry: entries ? Math.round(json / entries) : 0 },
              },
              2,
            ),
          );
        } else {
          const rate =
            report.elapsedMs > 0 && report.bytesRead >= 1e8 ? ` (${formatRate((report.bytesRead / report.elapsedMs) * 1000)})` : '';
          const lines = [
            `indexed          ${count(ds.shards.length, 'shard')}: ${fmt(report.built)} built, ${fmt(report.reused)} still valid (not re-read)${report.shared ? `, ${fmt(report.shared)} hard links read once` : ''}${report.failed.length ? `, ${fmt(report.failed.length)} failed` : ''}${report.cancelled ? `, cancelled with ${fmt(report.unfinished.length)} left (finished shards are kept)` : ''}${report.pruned ? `, ${fmt(report.pruned)} entries of rewritten or removed shard files deleted` : ''} · ${formatBytes(report.bytesRead)} read in ${formatDuration(report.elapsedMs)}${rate}`,
            ...describeIndex(ds, ix, anomalies, ctx.term, ctx.self),
            dups
              ? `duplicates       ${fmt(dups.duplicates)} of ${fmt(dups.documents)} non-empty documents repeat an earlier one exactly${dups.pairs.length ? ` (first: document ${fmt(dups.pairs[0].document)} at ${fmt(dups.pairs[0].start)} = document ${fmt(dups.pairs[0].earlierDocument)} at ${fmt(dups.pairs[0].earlierStart)})` : ''}${dups.stoppedAt !== undefined ? `; compared up to global offset ${fmt(dups.stoppedAt)} (memory cap)` : ''}`
              : 'duplicates       (needs the whole stream indexed)',
            `index size       ${formatBytes(json)} (${formatBytes(entries ? json / entries : 0)} per distinct shard file) + ${formatBytes(docs)} document hashes, in ${ctx.term(store.dir)}`,
          ];
          ctx.out(lines.join('\n'));
        }
        if (report.cancelled) return EXIT.interrupted;
        const anomalyFaults = anomalies.some((a) => a.severity === 'error');
        return report.failed.length || manifestErrors || anomalyFaults ? EXIT.data : EXIT.ok;
      }),
    );
}
