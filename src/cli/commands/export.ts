/**
 * `token-shards export <root> <K | K1..K2> --format jsonl|txt|npz [--out FILE [--force]]`: the
 * updates in a format people load (see src/core/export.ts). Without `--out` the export goes to
 * stdout (npz only when stdout is not a terminal). `--out` follows the rules of
 * `core/safeWrite.ts`: never inside the dataset folder or onto a file it reads, an existing file
 * only with `--force` and only a regular one (exit 2 otherwise), written under a unique temporary
 * name first. Progress on stderr; Ctrl-C removes the temporary file. With a run description
 * (`--run FILE` or `<root>/run.json`) update k is the run's batch (npz only, `[n, B, L]`: see
 * src/core/export.ts).
 */
import type { Command } from 'commander';
import { isFormatName } from '../../core/formats/registry';
import { Writable } from 'stream';
import { Dataset } from '../../core/dataset';
import { documentIndexOf } from '../../core/documents';
import { RangeRequestError } from '../../core/errors';
import { count, fmt } from '../../core/units';
import {
  EXPORT_FORMATS,
  ExportFormat,
  ExportOrder,
  checkExportUpdates,
  ExportProgress,
  exportUpdates,
  exportUpdatesToFile,
} from '../../core/export';
import { orderFor } from '../order';
import type { LoadedTokenizer } from '../../core/tokenizer';
import { parseUpdateRange } from './stats';
import { CliContext, UsageError } from '../context';

/** Registers `export`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('export')
    .description(
      'write updates as jsonl (one line per sequence), txt (as `update` prints) or npz (input_ids, target_ids: uint32 [n, S, L])',
    )
    .argument('<root>', 'dataset folder holding shard_manifest.jsonl (or one .u32 file)')
    .argument('<updates>', 'K or K1..K2: 0-based updates, inclusive')
    .addHelpText(
      'after',
      '\nThe output format is required: --format jsonl | txt | npz (a storage format for <root>, such as --format megatron, may be given too).',
    )
    .option(
      '--out <file>',
      'write to FILE instead of stdout (never inside the dataset folder; written under a temporary name, renamed when complete)',
    )
    .option('--force', 'with --out: replace FILE when it exists (only a regular file is ever replaced)')
    .action(
      ctx.run(async (root: string, range: string, opts: { out?: string; force?: boolean }, cmd: Command) => {
        if (opts.out !== undefined && opts.out.trim() === '')
          throw new UsageError('--out "": expected a file name (omit --out to write to stdout)');
        if (opts.force && opts.out === undefined)
          throw new UsageError('--force replaces the file of --out; without --out the export goes to stdout');
        // Every --format on the line reaches the program's option; the one that is no storage format is the output's.
        const output = (ctx.globals(cmd).format ?? []).filter((v) => !isFormatName(v));
        if (output.length > 1) throw new UsageError(`--format is given as ${output.join(' and ')}; expected one of jsonl, txt, npz`);
        const ds = await ctx.open(root, cmd);
        const order = await orderFor(ctx, ds, cmd);
        try {
          return await runExport(ds, range, {
            format: output[0],
            out: opts.out,
            force: opts.force,
            markControls: ctx.marks(),
            stdout: ctx.output.writable,
            stderr: ctx.stderr,
            signal: ctx.cancellable(),
            tokenizer: async () => (ctx.globals(cmd).tokenizer || ds.tokenizerFile ? ctx.tokenizerFor(undefined, cmd, ds) : undefined),
            order,
          });
        } finally {
          order.close();
        }
      }),
    );
}

/** Options of {@link runExport}. */
export interface ExportCliOptions {
  format?: string;
  out?: string;
  /** `--force`: replace an existing regular file at `out`. */
  force?: boolean;
  /** txt to stdout: control characters as marks (a terminal, or `--escape`). */
  markControls?: boolean;
  /** Loads the tokenizer (txt needs it; jsonl's text is null without it). */
  tokenizer: () => Promise<LoadedTokenizer | undefined>;
  stdout: Writable & { isTTY?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  signal?: AbortSignal;
  /** The run's training order (`--run FILE` or `<root>/run.json`); updates are then the run's batches (npz only). */
  order?: ExportOrder;
}

/**
 * Runs `export`.
 * @returns the exit code (0).
 * @throws RangeRequestError for a bad format, range or a binary export to a terminal, OutputPathError
 *   (a RangeRequestError) for a refused `out`; DataError on
 *   a short read; CancelledError on `signal`.
 */
export async function runExport(ds: Dataset, rangeText: string | undefined, o: ExportCliOptions): Promise<number> {
  const format = o.format as ExportFormat;
  if (!EXPORT_FORMATS.includes(format))
    throw new RangeRequestError(
      `--format ${o.format === undefined ? '(missing)' : JSON.stringify(o.format)}: expected one of ${EXPORT_FORMATS.join(', ')}`,
    );
  const { first, last } = parseUpdateRange(rangeText);
  checkExportUpdates(ds, first, last, format, o.order);
  if (!o.out && format === 'npz' && o.stdout.isTTY) throw new RangeRequestError('npz is binary: pass --out FILE (or redirect stdout)');
  const tok = await o.tokenizer();
  if (!tok && format === 'jsonl') o.stderr.write('warning: no tokenizer: "text" is null (pass --tokenizer FILE)\n');
  const n = last - first + 1;
  let lastShown = -1;
  const started = Date.now();
  const onProgress = (p: ExportProgress) => {
    const pct = Math.floor((100 * p.done) / p.total);
    if (o.stderr.isTTY) {
      o.stderr.write(`\rexport ${format}: ${pct}% (${fmt(p.bytes)} bytes)${p.done === p.total ? '\n' : ''}`);
    } else if (pct >= lastShown + 10 || p.done === p.total) {
      lastShown = pct;
      o.stderr.write(`export ${format}: ${pct}% (${fmt(p.bytes)} bytes)\n`);
    }
  };
  const opts = {
    tokenizer: tok,
    documentIndex: documentIndexOf(ds),
    signal: o.signal,
    onProgress,
    order: o.order,
  };
  if (o.out !== undefined) {
    const bytes = await exportUpdatesToFile(ds, first, last, format, o.out, { ...opts, force: o.force });
    o.stderr.write(`wrote ${o.out}: ${count(n, 'update')}, ${fmt(bytes)} bytes in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } else {
    await exportUpdates(ds, first, last, format, o.stdout, { ...opts, markControls: o.markControls });
  }
  return 0;
}
