/**
 * CLI front of shard hash verification:
 * `token-shards verify <root> [--jobs N] [--json] [--no-cache]`.
 *
 * - Verifies every shard listed in `<root>/shard_manifest.jsonl` with the core's worker pool
 *   (`--jobs`, default the number of CPU cores; 0 means the default too).
 * - Cache: `$XDG_CACHE_HOME/token-shard-inspector/verify-cache.json` (else `~/.cache/…`); shards
 *   whose identity (device, inode, size, mtime, ctime) has a cached digest equal to the manifest's are not re-read.
 *   `--no-cache` neither reads nor writes it.
 * - The stream index (`token-shards index`) is built in the same read, into the CLI's cache folder
 *   (`--no-index` skips it; `--no-cache` too).
 * - A shard that is not ok names the updates it feeds (text: its message; JSON: `"updates": [first, last]`).
 * - Progress goes to stderr as one rewritten line, only when stderr is a TTY.
 * - Output on stdout: one line per shard that is not ok plus a summary, or with `--json` one
 *   object `{ root, shards, all_ok, counts, results[], manifest_problems[], … }`.
 * - Ctrl+C cancels: finished shards are still cached, unfinished ones are not; exit code 130.
 * - `--shards A:B` verifies manifest entries A..B−1 only (start_token order) and, with `--json`,
 *   writes a part for `merge` (`shard_range`, `dataset`; `core/verify/parts.ts`); no stream index
 *   is built then (a part sees only its shards).
 *
 * Other formats (and any dataset with `--manifest FILE`): the files of `<root>` are checked against
 * FILE, written before by `token-shards manifest <root>` (sha256 of every token file and
 * sidecar); formats that carry hashes (MDS `raw_data.hashes`) are checked against those without
 * `--manifest`. Output: one line per file not ok plus a summary, or `--json`
 * `{ root, format, files, all_ok, results: [{file, path, status, message, digests}] }`.
 *
 * Exit codes (the table in `../exitCodes.ts`): 0 every shard ok; 1 any mismatch, missing file, size
 * fault, unreadable or changing file, shard without a hash, manifest line that could not be read
 * (the rest is still verified), or a manifest that cannot be read at all or lists no shard (a
 * broken dataset is 1 in every command); 2 bad usage (a folder that does not exist, `--jobs`).
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Command } from 'commander';
import { OpenDatasetOptions, formatFilesOf, formatNameOf, openDataset } from '../../core/dataset';
import { DataError } from '../../core/errors';
import { HashCheck, checkHashes, formatVerifyChecks, streamManifestNextTo } from '../../core/formats/fileHashes';
import { isFormatName, sniffFormat, sniffInputOf } from '../../core/formats/registry';
import { count, fmt } from '../../core/units';
import { SHARD_FILE_PROBLEM_CODES } from '../../core/manifest';
import { cachedIndexParams, indexParamsFor } from '../../core/streamIndex/indexShards';
import { IndexStore, defaultCliIndexDir } from '../../core/streamIndex/entryStore';
import { ShardVerifyResult, VerifyOptions, VerifyReport, prestartVerifyWorkers, reportAllOk, verifyShards } from '../../core/verify/verify';
import { verifyPartOf } from '../../core/verify/parts';
import {
  formatBytes,
  formatDuration,
  formatRate,
  formatVerifyProgress,
  formatVerifySummary,
  formatVerifyTiming,
} from '../../core/verify/format';
import { VerifyCache, defaultCliCacheFile, folderUnwritable } from '../../core/verify/cache';
import { jsonSafe, terminalSafe } from '../../core/untrusted';
import { CliContext, EXIT, UsageError, cacheInsideDataset, listed, requireDatasetFolder } from '../context';

/** Registers `verify`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('verify')
    .description("check every shard's sha256 against the manifest (worker threads, cached, Ctrl-C cancels)")
    .argument('<root>', 'dataset folder holding shard_manifest.jsonl, or a file or folder of another token format')
    .option('--manifest <file>', 'check the files against FILE, written by `token-shards manifest <root>` (any format)')
    .option('--jobs <N>', 'hashing threads (default, or 0: number of CPU cores)')
    .option('--json', 'machine-readable output')
    .option('--no-cache', 'neither read nor write the verify cache (re-hash everything)')
    .option('--no-index', 'do not build the stream index in the same read')
    .option('--shards <A:B>', 'verify only manifest entries A..B-1 (in start_token order); merge --json parts with `merge`')
    .action(
      ctx.run(
        async (
          root: string,
          opts: { jobs?: string; json?: boolean; cache: boolean; index: boolean; manifest?: string; shards?: string },
          cmd: Command,
        ) => {
          const sniffed = fs.existsSync(root) ? sniffFormat(await sniffInputOf(root))?.format : undefined;
          const storage = (ctx.globals(cmd).format ?? []).find(isFormatName) ?? sniffed;
          if (opts.manifest !== undefined || (storage !== undefined && storage !== 'token-stream')) {
            if (opts.shards !== undefined) throw new UsageError('--shards: only for a dataset folder holding shard_manifest.jsonl');
            return verifyFileHashes(ctx, root, cmd, { manifest: opts.manifest, json: !!opts.json });
          }
          if (fs.existsSync(root) && fs.statSync(root).isFile()) {
            throw new UsageError(
              `${ctx.term(root)} is a file; verify needs a dataset folder holding shard_manifest.jsonl (its sha256 values are what is checked). For a lone file, compare \`sha256sum ${ctx.term(root)}\` with the hash you expect.`,
            );
          }
          if (fs.existsSync(root)) await requireDatasetFolder(root);
          return runVerifyCommand(root, {
            jobs: ctx.jobs(opts.jobs),
            write: (s) => ctx.write(s),
            err: (s) => ctx.err(s),
            json: !!opts.json,
            noCache: !opts.cache,
            noIndex: !opts.index,
            signal: ctx.cancellable(),
            open: ctx.openOptions(cmd),
            shards: opts.shards,
          });
        },
      ),
    );
}

/**
 * `verify` for every format: the stream's files (and sidecars) against a `token-shards manifest`
 * file (`--manifest`, else `files.jsonl` or `shard_manifest.jsonl` next to the files when the
 * format carries no hashes), or against the hashes the format carries (MDS).
 * @returns the exit code: 0 every file ok, 1 any fault (or a file that could not be checked).
 * @throws UsageError when there is nothing to check against; DataError for an unreadable manifest.
 */
async function verifyFileHashes(ctx: CliContext, root: string, cmd: Command, opts: { manifest?: string; json: boolean }): Promise<number> {
  const ds = await ctx.open(root, cmd);
  const files = formatFilesOf(ds);
  let checks: HashCheck[];
  // A list `token-shards manifest` wrote next to the data is used as VS Code's Verify Shard Hashes uses it.
  if (opts.manifest === undefined && !formatVerifyChecks(files).checks.length)
    opts = { ...opts, manifest: await streamManifestNextTo(files) };
  if (opts.manifest !== undefined) {
    let text: string;
    try {
      text = await fs.promises.readFile(opts.manifest, 'utf8');
    } catch (err) {
      throw new UsageError(`--manifest ${ctx.term(opts.manifest)}: cannot read: ${(err as Error).message}`);
    }
    checks = formatVerifyChecks(files, { text, file: path.resolve(opts.manifest) }).checks;
  } else {
    checks = formatVerifyChecks(files).checks;
    if (!checks.length) {
      throw new UsageError(
        `${ctx.term(root)} (${formatNameOf(ds)}) carries no hashes: write them once with \`token-shards manifest ${ctx.term(root)} > files.jsonl\`, then check with \`token-shards verify ${ctx.term(root)} --manifest files.jsonl\``,
      );
    }
  }
  const results = await checkHashes(checks, ctx.cancellable());
  const bad = results.filter((r) => r.status !== 'ok');
  if (opts.json) {
    ctx.out(
      ctx.json(
        {
          root: ds.root,
          format: formatNameOf(ds),
          files: results.length,
          all_ok: bad.length === 0,
          results: results.map((r) => ({ file: r.name, path: r.path, status: r.status, message: r.message ?? null, digests: r.digests })),
        },
        2,
      ),
    );
  } else {
    for (const r of bad) ctx.out(`${r.status.toUpperCase()}  ${ctx.term(r.message ?? r.name)}`);
    ctx.out(
      bad.length === 0
        ? `all ${count(results.length, 'file')} ok (${opts.manifest !== undefined ? `against ${ctx.term(opts.manifest)}` : `against the hashes ${formatNameOf(ds)} carries`})`
        : `${count(bad.length, 'file')} of ${fmt(results.length)} not ok`,
    );
  }
  return bad.length ? 1 : 0;
}

/** Options of `token-shards verify`. `jobs` undefined or 0 = number of CPU cores. */
export interface VerifyCommandOptions {
  jobs?: number;
  /** Writes to standard output (the CLI's one output writer: back-pressure, write errors). */
  write: (s: string) => Promise<void>;
  /** Writes a line to standard error (the CLI context's). */
  err: (s: string) => void;
  json: boolean;
  noCache: boolean;
  /** Do not build the stream index in the same read (default: build it, in the CLI's cache folder). */
  noIndex?: boolean;
  /** Aborted on Ctrl-C (the CLI context's signal); without it the command listens to SIGINT itself. */
  signal?: AbortSignal;
  /** Options for opening the dataset (`--allow-outside-root`). */
  open?: OpenDatasetOptions;
  /** `--shards A:B`: verify manifest entries A..B−1 only; `--json` then writes a part for `merge`. */
  shards?: string;
}

/** Status words of the text output, upper-case so they stand out in a terminal. */
export const STATUS_WORD: Record<ShardVerifyResult['status'], string> = {
  ok: 'OK',
  mismatch: 'MISMATCH',
  missing: 'MISSING',
  'size-mismatch': 'SIZE',
  changed: 'CHANGED',
  unreadable: 'UNREADABLE',
  'no-hash': 'NO-HASH',
};

/** Stands for the results array in the document given to {@link writeJsonWithResults} (a NUL cannot be in a path). */
const RESULTS_HERE = '\u0000results\u0000';

/**
 * Writes `jsonSafe(doc, 2)` with `doc.results` = `results.map(row)` to stdout, one result at a
 * time (with back-pressure), so the whole text never exists at once.
 */
async function writeJsonWithResults<T>(
  write: (s: string) => Promise<void>,
  doc: Record<string, unknown>,
  results: readonly T[],
  row: (r: T) => unknown,
): Promise<void> {
  const text = jsonSafe(doc, 2);
  const marker = jsonSafe(RESULTS_HERE);
  const at = text.indexOf(marker);
  let buf = text.slice(0, at);
  const flush = async () => {
    await write(buf);
    buf = '';
  };
  if (results.length === 0) buf += '[]';
  else {
    buf += '[';
    for (let i = 0; i < results.length; i++) {
      buf += `${i ? ',' : ''}\n    ${jsonSafe(row(results[i]), 2).replace(/\n/g, '\n    ')}`;
      if (buf.length >= 1 << 16) await flush();
    }
    buf += '\n  ]';
  }
  buf += `${text.slice(at + marker.length)}\n`;
  await flush();
}

/**
 * Runs `token-shards verify <root>`.
 * @returns the exit code: 0 all ok, 1 faults (an unreadable manifest too), 2 usage, 130 interrupted.
 */
export async function runVerifyCommand(root: string, opts: VerifyCommandOptions): Promise<number> {
  const err = opts.err;
  if (!fs.existsSync(root)) throw new UsageError(`${terminalSafe(root)}: no such folder`);
  // The hashing threads start while this one reads the manifest, the cache and the tokenizer.
  prestartVerifyWorkers({ jobs: opts.jobs, index: !opts.noIndex && !opts.noCache });
  // A manifest that cannot be read at all throws a DataError: exit 1, as in every command.
  const ds = await openDataset(root, {}, opts.open);
  const lineFaults = ds.problems.filter((p) => p.severity === 'error' && !SHARD_FILE_PROBLEM_CODES.has(p.code));
  const problemLines = (list: typeof ds.problems) =>
    listed(
      list.map((p) => `${p.severity}: ${terminalSafe(p.message)}`),
      (n) => `… and ${n} more manifest problems (--json lists them all)`,
    );
  if (ds.shards.length === 0) {
    for (const l of problemLines(ds.problems)) err(l);
    throw new DataError(`${ds.manifestFile}: no readable shard line; nothing to verify`, ds.manifestFile);
  }
  if (!opts.json) for (const l of problemLines(ds.problems.filter((q) => !SHARD_FILE_PROBLEM_CODES.has(q.code)))) err(l);
  const part = opts.shards !== undefined ? verifyPartOf(ds, opts.shards) : undefined;
  const entries = part ? ds.shards.slice(part.shard_range[0], part.shard_range[1]) : ds.shards;

  let cache: VerifyCache | undefined;
  // The cache folder is checked once: an unusable one is one line, not a warning from the cache
  // load, the cache save and the index writes each.
  let noCache = opts.noCache;
  if (!noCache) {
    const folder = path.dirname(defaultCliCacheFile());
    const why = cacheInsideDataset(folder, ds.root) ?? folderUnwritable(opts.noIndex || part ? folder : defaultCliIndexDir());
    if (why) {
      err(
        `warning: cannot use the cache folder ${terminalSafe(folder)} (${terminalSafe(why)}); verifying without the verify cache${opts.noIndex ? '' : ' and the stream index'} (every shard is read).`,
      );
      noCache = true;
    }
  }
  if (!noCache) {
    cache = await VerifyCache.load(defaultCliCacheFile());
    if (cache.warning) err(`warning: ${terminalSafe(cache.warning)}`);
  }

  const tty = !opts.json && process.stderr.isTTY === true;
  let progressShown = false;
  let lastLen = 0;
  const ac = new AbortController();
  const onSigint = () => {
    if (!ac.signal.aborted) {
      err(progressShown ? '\ncancelling…' : 'cancelling…');
      ac.abort();
    }
  };
  if (opts.signal) {
    opts.signal.addEventListener('abort', onSigint, { once: true });
    // Ctrl-C while the manifest or the cache was still loading: the listener came too late to hear it.
    if (opts.signal.aborted) onSigint();
  } else process.on('SIGINT', onSigint);
  let index: VerifyOptions['index'];
  if (!opts.noIndex && !noCache && !part) {
    const dir = defaultCliIndexDir();
    const params = ds.tokenizerFile ? await cachedIndexParams(ds, ds.tokenizerFile, dir).catch(() => undefined) : undefined;
    index = { store: new IndexStore(dir, { remember: false }), params: params ?? indexParamsFor(ds) };
  }
  let report: VerifyReport;
  try {
    report = await verifyShards(entries, {
      jobs: opts.jobs || undefined,
      cache,
      schedule: ds.schedule,
      index,
      signal: ac.signal,
      onProgress: tty
        ? (p) => {
            progressShown = true;
            const width = process.stderr.columns || 100;
            const line = formatVerifyProgress(p).slice(0, width - 1);
            process.stderr.write(`\r${line.padEnd(Math.min(width - 1, Math.max(lastLen, line.length)))}`);
            lastLen = line.length;
          }
        : undefined,
    });
  } finally {
    if (opts.signal) opts.signal.removeEventListener('abort', onSigint);
    else process.off('SIGINT', onSigint);
  }
  if (progressShown) process.stderr.write(`\r${' '.repeat(lastLen)}\r`);
  if (report.cacheError) err(`warning: ${terminalSafe(report.cacheError)}`);
  if (report.indexError) err(`warning: ${terminalSafe(report.indexError)}`);
  // Where the time went, for a person at a terminal (--json has the figures as `timing`).
  if (tty) err(formatVerifyTiming(report));

  const allOk = reportAllOk(report) && lineFaults.length === 0;
  if (opts.json) {
    // Streamed: the results are written one at a time (100,000 of them are ~50 MB of JSON);
    // the bytes are those of jsonSafe(document, 2).
    await writeJsonWithResults(
      opts.write,
      {
        root: ds.root,
        shards: entries.length,
        ...part,
        all_ok: allOk,
        cancelled: report.cancelled,
        counts: report.counts,
        from_cache: report.fromCache,
        unfinished: report.unfinished.map((i) => ds.shards[i].shard),
        bytes_hashed: report.bytesHashed,
        elapsed_ms: report.elapsedMs,
        jobs: report.jobs,
        cache_file: cache?.file ?? null,
        results: RESULTS_HERE,
        indexed: report.indexed,
        // ms; started_at_ms is since the process started, the rest since the run started (VerifyTiming).
        timing: {
          started_at_ms: report.timing.startedAtMs,
          triage_ms: report.timing.triageMs,
          first_byte_ms: report.timing.firstByteMs ?? null,
          read_ms: report.timing.readMs,
          finish_ms: report.timing.finishMs,
          cpu_ms: report.timing.cpuMs,
        },
        manifest_problems: ds.problems.map((p) => ({
          severity: p.severity,
          code: p.code,
          file: p.file,
          line: p.line ?? null,
          message: p.message,
        })),
      },
      report.results,
      (r) => ({
        shard: r.shard,
        line: r.line,
        status: r.status,
        expected_sha256: r.expectedSha256 ?? null,
        actual_sha256: r.actualSha256 ?? null,
        expected_size: r.expectedSize,
        actual_size: r.actualSize ?? null,
        from_cache: r.fromCache,
        checked_at: new Date(r.checkedAt).toISOString(),
        message: r.message,
        updates: r.updates ?? null,
      }),
    );
  } else {
    const out = listed(
      report.results.filter((r) => r.status !== 'ok').map((r) => `${STATUS_WORD[r.status].padEnd(10)} ${terminalSafe(r.message)}`),
      (n) => `… and ${n} more shards not ok (--json lists them all)`,
    );
    // A rate over a few MB mostly measures start-up (stat of every shard, starting workers): leave it out.
    const rate =
      report.elapsedMs > 0 && report.bytesHashed >= 1e8
        ? ` (${formatRate((report.bytesHashed / report.elapsedMs) * 1000)}, ${count(report.jobs, 'worker')})`
        : '';
    out.push(
      `${count(entries.length, 'shard')}${part ? ` (entries ${opts.shards})` : ''}: ${formatVerifySummary(report)}` +
        ` · ${formatBytes(report.bytesHashed)} hashed in ${formatDuration(report.elapsedMs)}${rate}`,
    );
    if (lineFaults.length)
      out.push(`${count(lineFaults.length, 'manifest problem')} (listed above on stderr): lines that could not be read are not verified.`);
    await opts.write(out.join('\n') + '\n');
  }
  if (report.cancelled) return EXIT.interrupted;
  return allOk ? EXIT.ok : EXIT.data;
}
