/**
 * `token-shards`: the headless front over the same core as the extension.
 *
 * Exit codes: 0 ok, 1 the data has a problem, 2 bad usage. Errors go to stderr in one line.
 * Run `token-shards help` for the commands.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseArgs } from 'util';
import { Dataset, openDataset, openShardFileAsDataset } from './core/dataset';
import { DataError, RangeRequestError, fmt } from './core/errors';
import { ScheduleSettings } from './core/schedule';
import { LoadedTokenizer, loadTokenizer } from './core/tokenizer';
import { inputRow, readUpdate, targetRow } from './core/update';
import { buildUpdateModel, documentNumberIfCheap, formatUpdateModelText } from './core/updateModel';
import { DocumentIndex } from './core/documents';
import { parseNumberInput } from './core/numbers';
import { runVerifyCommand } from './cliVerify';
import { runStats } from './cli/commands/stats';
import { runExport } from './cli/commands/export';
import { CancelledError } from './core/errors';

/** Thrown for bad command lines; exit code 2. */
class UsageError extends Error {}

/** Tokens the text form of `update` may scan to number documents (the extension's documentScanLimit default). */
const DEFAULT_DOCUMENT_SCAN_LIMIT = 25_000_000;

const USAGE = `token-shards — inspect pretraining token shards (uint32 token streams)

Usage:
  token-shards info <root> [--json]
  token-shards tokens <root> --start S --count N [--json]
  token-shards update <root> <k> [--sequence r] [--json | --text]
  token-shards decode <root|tokenizer.json> <id…> [--pieces] [--json]
  token-shards encode <root|tokenizer.json> <text> [--json]
  token-shards verify <root> [--jobs N] [--json] [--no-cache]
  token-shards stats <root> <K | K1..K2> [--json | --csv]
  token-shards export <root> <K | K1..K2> --format jsonl|txt|npz [--out FILE]

<root> is a dataset folder holding shard_manifest.jsonl. Updates are 0-based: update k trained
on global tokens [G·k, G·(k+1)). Numbers accept 55_000, 5.5e4 and 0x… forms.

Schedule options (defaults from the dataset card; manifest.json keys override them):
  --tokens-per-update G   (131072)   --sequence-length L (1024)   --eos ID (100257)
  --tokenizer FILE        tokenizer.json to use instead of <root>/tokenizer/tokenizer.json

Exit codes: 0 ok, 1 the data has a problem, 2 bad usage.`;

const OPTIONS = {
  json: { type: 'boolean' },
  csv: { type: 'boolean' },
  format: { type: 'string' },
  out: { type: 'string' },
  text: { type: 'boolean' },
  pieces: { type: 'boolean' },
  start: { type: 'string' },
  count: { type: 'string' },
  sequence: { type: 'string' },
  jobs: { type: 'string' },
  'no-cache': { type: 'boolean' },
  'tokens-per-update': { type: 'string' },
  'sequence-length': { type: 'string' },
  eos: { type: 'string' },
  tokenizer: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** Parses a numeric flag; UsageError naming the flag when it is not a non-negative integer. */
function intFlag(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const r = parseNumberInput(v);
  if (!r.ok) throw new UsageError(`${name}: ${r.error}`);
  return r.value;
}

function scheduleFlags(v: Values): Partial<ScheduleSettings> {
  return {
    globalTokensPerUpdate: intFlag(v['tokens-per-update'], '--tokens-per-update'),
    sequenceLength: intFlag(v['sequence-length'], '--sequence-length'),
    eosTokenId: intFlag(v.eos, '--eos'),
  };
}

/** Opens a dataset root, or a lone `.u32` file as a one-shard dataset with local offsets. */
async function open(root: string | undefined, v: Values): Promise<Dataset> {
  if (!root) throw new UsageError('missing <root>: the dataset folder holding shard_manifest.jsonl (or one .u32 file)');
  if (!fs.existsSync(root)) throw new UsageError(`${root}: no such file or folder`);
  if (fs.statSync(root).isFile()) return openShardFileAsDataset(root, scheduleFlags(v));
  return openDataset(root, scheduleFlags(v));
}

/** Rejects positional arguments beyond what a command takes (e.g. `[--json]` copied with its brackets). */
function maxArgs(args: string[], n: number, usage: string): void {
  if (args.length > n) throw new UsageError(`unexpected argument ${JSON.stringify(args[n])}; usage: token-shards ${usage}`);
}

/** Loads the tokenizer named by --tokenizer, a tokenizer.json path, or a dataset root's tokenizer. */
async function tokenizerFor(target: string | undefined, v: Values, ds?: Dataset): Promise<LoadedTokenizer> {
  if (v.tokenizer) return loadTokenizer(v.tokenizer);
  if (ds) {
    if (!ds.tokenizerFile) throw new DataError(`${ds.root}: no tokenizer/tokenizer.json; pass --tokenizer FILE`);
    return loadTokenizer(ds.tokenizerFile);
  }
  if (!target) throw new UsageError('missing <root|tokenizer.json>');
  if (fs.existsSync(target) && fs.statSync(target).isFile()) return loadTokenizer(target);
  for (const p of [path.join(target, 'tokenizer', 'tokenizer.json'), path.join(target, 'tokenizer.json')]) {
    if (fs.existsSync(p)) return loadTokenizer(p);
  }
  throw new UsageError(`${target}: neither a tokenizer.json nor a folder holding tokenizer/tokenizer.json`);
}

function out(s: string): void {
  process.stdout.write(s.endsWith('\n') ? s : s + '\n');
}

async function cmdInfo(args: string[], v: Values): Promise<number> {
  maxArgs(args, 1, 'info <root> [--json]');
  const ds = await open(args[0], v);
  const errors = ds.problems.filter((p) => p.severity === 'error');
  const info = {
    root: ds.root,
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
    manifest_json: ds.provenance ? ds.provenance.data : null,
    verification_json: ds.verification ? ds.verification.data : null,
    problems: ds.problems.map((p) => ({ severity: p.severity, code: p.code, line: p.line ?? null, message: p.message })),
  };
  if (v.json) {
    out(JSON.stringify(info, null, 2));
  } else {
    const src = (...keys: (keyof ScheduleSettings)[]) => {
      const from = [...new Set(keys.map((k) => ds.settingSources[k]).filter((s) => s !== 'default'))];
      return from.length ? ` (from ${from.join(' and ')})` : ' (dataset card defaults)';
    };
    out([
      ds.lone ? `shard            ${ds.shards[0].path} (no manifest: local offsets)` : `dataset          ${ds.root}`,
      `shards           ${fmt(ds.shards.length)}`,
      `stored tokens    ${fmt(ds.storedTokens)} (training tokens + look-ahead)`,
      `updates          ${ds.schedule.numUpdates > 0 ? `${fmt(ds.schedule.numUpdates)} (0-based: 0..${fmt(ds.schedule.numUpdates - 1)})`
        : `0 (one update needs ${fmt(ds.schedule.G + 1)} tokens: ${fmt(ds.schedule.G)} plus the look-ahead token)`}`,
      `tokens/update    ${fmt(ds.settings.globalTokensPerUpdate)} = ${fmt(ds.schedule.sequencesPerUpdate)} sequences × ${fmt(ds.settings.sequenceLength)}${src('globalTokensPerUpdate', 'sequenceLength')}`,
      `EOS id           ${ds.settings.eosTokenId}${src('eosTokenId')}`,
      `tokenizer        ${ds.tokenizerFile ?? '(none found: pass --tokenizer)'}`,
      `manifest.json    ${ds.provenance ? Object.keys(ds.provenance.data).join(', ') : '(absent)'}`,
      `verification     ${ds.verification ? Object.keys(ds.verification.data).join(', ') : '(absent)'}`,
      ds.problems.length ? `problems (${ds.problems.length}):\n${ds.problems.map((p) => `  ${p.severity}: ${p.message}`).join('\n')}` : 'problems         none',
    ].join('\n'));
  }
  return errors.length ? 1 : 0;
}

async function cmdTokens(args: string[], v: Values): Promise<number> {
  maxArgs(args, 1, 'tokens <root> --start S --count N [--json]');
  const ds = await open(args[0], v);
  const start = intFlag(v.start, '--start');
  const count = intFlag(v.count, '--count');
  if (start === undefined || count === undefined) throw new UsageError('tokens needs --start S and --count N');
  if (start + count > ds.storedTokens) {
    throw new UsageError(`--start ${fmt(start)} --count ${fmt(count)} runs past the stream end (${fmt(ds.storedTokens)} tokens)`);
  }
  // Read and print in pieces: any count works in bounded memory (500M ids do not fit in one JS
  // string, nor 1G tokens in one Buffer), and output starts at once. Same bytes as one JSON.stringify.
  const sep = v.json ? ',' : ' ';
  if (v.json) await write(`{"start":${start},"count":${count},"ids":[`);
  for (let at = 0; at < count; at += TOKENS_PRINT_CHUNK) {
    const ids = await ds.stream.read(start + at, Math.min(TOKENS_PRINT_CHUNK, count - at));
    await write((at > 0 ? sep : '') + ids.join(sep));
  }
  await write(v.json ? ']}\n' : '\n');
  return 0;
}

/** Tokens `token-shards tokens` reads and prints at a time. */
const TOKENS_PRINT_CHUNK = 1 << 20;

/** Writes to stdout, waiting for the pipe to drain when it is full (big outputs stay in bounded memory). */
async function write(s: string): Promise<void> {
  if (!process.stdout.write(s)) await new Promise<void>((resolve) => process.stdout.once('drain', resolve));
}

async function cmdUpdate(args: string[], v: Values): Promise<number> {
  maxArgs(args, 2, 'update <root> <k> [--sequence r] [--json | --text]');
  const ds = await open(args[0], v);
  if (args[1] === undefined) throw new UsageError('update needs <k>, the 0-based update index');
  const k = parseNumberInput(args[1]);
  if (!k.ok) throw new UsageError(`<k>: ${k.error}`);
  ds.schedule.checkUpdate(k.value); // RangeRequestError (exit 2) naming the valid range, or saying there is no complete update
  const seq = intFlag(v.sequence, '--sequence');
  if (seq !== undefined && seq >= ds.schedule.sequencesPerUpdate) {
    throw new UsageError(`--sequence ${seq} is outside 0..${ds.schedule.sequencesPerUpdate - 1}`);
  }
  const batch = await readUpdate(ds, k.value);
  const rows = seq === undefined ? [...Array(batch.rows).keys()] : [seq];
  if (v.json && !v.text) {
    const json: Record<string, unknown> = {
      update: batch.update,
      token_range: batch.tokenRange,
      shards: batch.shards.map((s) => s.shard),
    };
    if (seq !== undefined) json.sequence = seq;
    json.input_ids = rows.map((r) => Array.from(inputRow(batch, r)));
    json.target_ids = rows.map((r) => Array.from(targetRow(batch, r)));
    out(JSON.stringify(json));
    return 0;
  }
  // Text form (the default; `--text` wins over `--json`): the update view's model, as text.
  const tok = await tokenizerFor(undefined, v, ds);
  const firstDocument = await documentNumberIfCheap(new DocumentIndex(ds.stream, ds.settings.eosTokenId), batch.tokenRange[0], DEFAULT_DOCUMENT_SCAN_LIMIT);
  const prev = batch.tokenRange[0] > 0 ? (await ds.stream.read(batch.tokenRange[0] - 1, 1))[0] : undefined;
  out(formatUpdateModelText(buildUpdateModel(batch, tok, { previousId: prev, firstDocument, numUpdates: ds.schedule.numUpdates, eos: ds.settings.eosTokenId }), rows));
  return 0;
}

async function cmdDecode(args: string[], v: Values): Promise<number> {
  const [target, ...rest] = args;
  if (rest.length === 0) throw new UsageError('decode needs <root|tokenizer.json> and at least one id');
  const ids = rest.flatMap((a) => a.split(/[\s,\[\]]+/).filter(Boolean)).map((a) => {
    const r = parseNumberInput(a);
    if (!r.ok) throw new UsageError(`id ${JSON.stringify(a)}: ${r.error}`);
    return r.value;
  });
  if (ids.length === 0) throw new UsageError(`decode needs at least one id; got only separators (${rest.map((a) => JSON.stringify(a)).join(' ')})`);
  const tok = await tokenizerFor(target, v);
  const unknown = ids.filter((id) => !tok.isKnown(id));
  if (v.pieces) {
    const pieces = tok.pieces(ids);
    if (v.json) out(JSON.stringify(pieces));
    else out(pieces.map((p) => `${String(p.id).padStart(7)}  ${p.kind.padEnd(7)}  ${JSON.stringify(p.text)}  [${p.hex}]`).join('\n'));
  } else if (v.json) {
    out(JSON.stringify({ ids, text: tok.decode(ids), unknown_ids: unknown }));
  } else {
    out(tok.decode(ids));
  }
  if (unknown.length) {
    process.stderr.write(`warning: ${unknown.length} id(s) not in the tokenizer's vocabulary (${fmt(tok.vocabSize)} ids): ${unknown.slice(0, 10).join(', ')}\n`);
    return 1;
  }
  return 0;
}

async function cmdEncode(args: string[], v: Values): Promise<number> {
  const [target, ...rest] = args;
  if (rest.length === 0) throw new UsageError('encode needs <root|tokenizer.json> and the text');
  const tok = await tokenizerFor(target, v);
  const text = rest.join(' ');
  const ids = await tok.encode(text);
  if (v.json) out(JSON.stringify({ text, ids }));
  else out(ids.join(' '));
  return 0;
}

/** Runs `fn` with a signal that fires on Ctrl-C (SIGINT), so long commands stop cleanly (exit 130). */
async function withInterrupt<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const onInt = () => ac.abort();
  process.once('SIGINT', onInt);
  try { return await fn(ac.signal); } finally { process.off('SIGINT', onInt); }
}

/** Runs the CLI with `argv` (without node and script); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n${USAGE.split('\n').slice(2, 10).join('\n')}\n`);
    return 2;
  }
  const [cmd, ...args] = parsed.positionals;
  const v = parsed.values;
  if (!cmd || cmd === 'help' || v.help) { out(USAGE); return cmd || v.help ? 0 : 2; }
  try {
    switch (cmd) {
      case 'info': return await cmdInfo(args, v);
      case 'tokens': return await cmdTokens(args, v);
      case 'update': return await cmdUpdate(args, v);
      case 'decode': return await cmdDecode(args, v);
      case 'encode': return await cmdEncode(args, v);
      case 'verify': {
        if (!args[0]) throw new UsageError('verify needs <root>');
        maxArgs(args, 1, 'verify <root> [--jobs N] [--json] [--no-cache]');
        return await runVerifyCommand(args[0], { jobs: intFlag(v.jobs, '--jobs'), json: !!v.json, noCache: !!v['no-cache'] });
      }
      case 'stats': {
        maxArgs(args, 2, 'stats <root> <K | K1..K2> [--json | --csv]');
        const ds = await open(args[0], v);
        const tok = v.tokenizer || ds.tokenizerFile ? await tokenizerFor(undefined, v, ds) : undefined;
        return await withInterrupt((signal) => runStats(ds, args[1], v.json ? 'json' : v.csv ? 'csv' : 'table', { write, err: (s) => process.stderr.write(s + '\n') }, tok, signal));
      }
      case 'export': {
        maxArgs(args, 2, 'export <root> <K | K1..K2> --format jsonl|txt|npz [--out FILE]');
        const ds = await open(args[0], v);
        return await withInterrupt((signal) => runExport(ds, args[1], {
          format: v.format, out: v.out, stdout: process.stdout, stderr: process.stderr, signal,
          tokenizer: async () => (v.tokenizer || ds.tokenizerFile ? tokenizerFor(undefined, v, ds) : undefined),
        }));
      }
      default: throw new UsageError(`unknown command ${JSON.stringify(cmd)}; run token-shards help`);
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof RangeRequestError) {
      process.stderr.write(`error: ${err.message}\n`);
      return 2;
    }
    if (err instanceof CancelledError) {
      process.stderr.write('\ninterrupted\n');
      return 130;
    }
    if (err instanceof DataError) {
      process.stderr.write(`error: ${err.message}\n`);
      return 1;
    }
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EPIPE') return 0;
    process.stderr.write(`error: ${e.message}\n`);
    return 1;
  }
}

if (require.main === module) {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => { if (e.code === 'EPIPE') process.exit(0); });
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
}
