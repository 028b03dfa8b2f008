/**
 * `token-shards`: the headless front over the same core as the extension. Built to
 * `dist/cli-main.js`, which the package's `bin`, `dist/cli.js` (`loader.ts`), runs through V8's
 * code cache.
 *
 * This file builds the commander program: the global options, then one `register(program, ctx)`
 * per file in `src/cli/commands/`. Every subcommand gets `--help`; `--version` prints the
 * package version. Exit codes: the table in `exitCodes.ts` (0 ok, 1 the data has a problem, 2 bad
 * usage, 130 Ctrl-C); errors are one line on stderr (see `context.ts`). Ctrl-C ends the process
 * within {@link INTERRUPT_GRACE_MS} whatever the command is doing.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Command, CommanderError } from 'commander';
import { CliContext, CliStreams, EXIT, createContext, invokedAs } from './context';
import { exitCodeHelp } from './exitCodes';
import { FORMAT_NAMES, TOKEN_DTYPES } from '../core/formats/types';
import * as decode from './commands/decode';
import * as encode from './commands/encode';
import * as index from './commands/index';
import * as info from './commands/info';
import * as locate from './commands/locate';
import * as tokens from './commands/tokens';
import * as update from './commands/update';
import * as verify from './commands/verify';
import * as count from './commands/count';
import * as find from './commands/find';
import * as merge from './commands/merge';
import * as stats from './commands/stats';
import * as exportCmd from './commands/export';
import * as manifest from './commands/manifest';

/** A subcommand module: `src/cli/commands/<name>.ts`. Add yours to {@link COMMANDS}. */
export interface CommandModule {
  register(program: Command, ctx: CliContext): void;
}

/** Every subcommand, in the order `--help` lists them. */
export const COMMANDS: CommandModule[] = [
  info,
  tokens,
  update,
  decode,
  encode,
  verify,
  manifest,
  count,
  find,
  merge,
  index,
  locate,
  stats,
  exportCmd,
];

/** The package version, read from the package.json next to `dist/` (or "unknown"). */
function packageVersion(): string {
  for (const p of [path.join(__dirname, '..', 'package.json'), path.join(__dirname, '..', '..', 'package.json')]) {
    try {
      const pkg = JSON.parse(fs.readFileSync(p, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'token-shard-inspector' && pkg.version) return pkg.version;
    } catch {
      /* try the next location */
    }
  }
  return 'unknown';
}

const EPILOG = `
<root> is a dataset folder holding shard_manifest.jsonl (or one .u32 file, read with local
offsets), or a file or folder of another token format, recognised by magic numbers, headers,
sidecar files and names (--format and --dtype force it):
- megatron: PREFIX.bin + PREFIX.idx (MMIDIDX index; documents from document_indices);
- llm.c: .bin with the 256 x int32 header (magic 20240520 uint16 / 20240801 uint32; each
   document begins with its delimiter, EOT 50256 or BOS 128000);
- raw: headerless uint16/uint32/int32 files (nanoGPT train.bin/val.bin: uint16, EOT 50256
   appended; other dtypes guessed from the ids, as info says) and numpy .npy arrays.
A folder of one format is one stream of its files in byte-wise name order. The tokenizer is
--tokenizer, or a tokenizer.json next to the data or up to three folders above.
Updates are 0-based: update k trained on global tokens [G·k, G·(k+1)). Numbers accept
55_000, 5.5e4 and 0x… forms. The schedule options replace the dataset card's defaults;
keys in the dataset's manifest.json override both.

Text from the data (decoded text, names) is written as it is to files and pipes; on a terminal,
control characters (ESC, CR, DEL, bidi controls…) are shown as marks such as ⟨ESC⟩ instead.
--escape and --raw choose either everywhere.

${exitCodeHelp()}`;

/** How long a command may take to stop after Ctrl-C before the process exits anyway (ms). */
export const INTERRUPT_GRACE_MS = 500;

/**
 * Builds the program with every subcommand registered against `ctx`. Commander never exits the
 * process (exitOverride) and writes its own errors as one `error: …` line.
 */
export function buildProgram(ctx: CliContext, streams: CliStreams): Command {
  const program = new Command('token-shards');
  program
    .description('inspect pretraining token shards (uint32 token streams)')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--tokens-per-update <G>', 'global tokens per update (default 131072, or manifest.json)')
    .option('--sequence-length <L>', 'tokens per sequence (default 1024, or manifest.json)')
    .option('--eos <id>', 'EOS token id (default 100257, or manifest.json)')
    .option('--tokenizer <file>', 'tokenizer.json to use instead of <root>/tokenizer/tokenizer.json')
    .option('--allow-outside-root', 'read manifest shards whose path leads outside the dataset folder (absolute, .., symbolic links)')
    .option(
      '--run <file>',
      'run description naming the training order (megatron, olmo, llm.c; default <root>/run.json, else the sequential order)',
    )
    .option(
      '--format <name>',
      `open <root> as this storage format instead of sniffing it (${FORMAT_NAMES.join(', ')}); export's output format is given with --format too`,
      (v: string, prev?: string[]) => [...(prev ?? []), v],
    )
    .option('--dtype <dtype>', `token dtype of headerless files (${TOKEN_DTYPES.join(', ')}); a header that says otherwise is an error`)
    .option('--escape', 'show control characters of the data as marks (⟨ESC⟩, ⟨CR⟩, ⟨U+202E⟩) even when the output is not a terminal')
    .option('--raw', 'write text from the data as it is, even to a terminal (control characters act on it)')
    .addHelpText('after', EPILOG)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => {
        streams.stdout.write(s);
      },
      writeErr: (s) => {
        streams.stderr.write(s);
      },
      outputError: (s, write) => write(s.replace(/\s*\n\s*(?=\S)/g, ' ').replace(/\s*$/, '\n')),
    });
  for (const m of COMMANDS) m.register(program, ctx);
  for (const c of program.commands) c.exitOverride().showSuggestionAfterError(true).configureOutput(program.configureOutput());
  return program;
}

/**
 * Runs the CLI with `argv` (without node and the script); returns the exit code.
 * `onInterrupt` receives the SIGINT handler to install (the entry point installs it on `process`).
 */
export async function main(
  argv: string[],
  streams: CliStreams = { stdout: process.stdout, stderr: process.stderr },
  onInterrupt?: (handler: () => void) => void,
  self?: string,
): Promise<number> {
  const rt = createContext(streams, { self });
  onInterrupt?.(() => {
    // The first Ctrl-C asks a cancellable command to stop (it may save finished work); whatever
    // it is doing, the process ends INTERRUPT_GRACE_MS later. A second Ctrl-C ends it at once.
    if (rt.interrupt()) process.exit(EXIT.interrupted);
    setTimeout(() => process.exit(EXIT.interrupted), INTERRUPT_GRACE_MS).unref();
  });
  const program = buildProgram(rt.ctx, streams);
  if (argv.length === 0) {
    streams.stderr.write(program.helpInformation());
    return EXIT.usage;
  }
  // `help NAME` for a name that is no command: commander would print the whole usage and exit 0.
  if (argv[0] === 'help' && argv[1] !== undefined && !program.commands.some((c) => c.name() === argv[1] || c.aliases().includes(argv[1]))) {
    const names = program.commands.map((c) => c.name()).filter((n) => n !== 'help');
    streams.stderr.write(`error: help ${rt.ctx.term(JSON.stringify(argv[1]))}: no such command; the commands are ${names.join(', ')}\n`);
    return EXIT.usage;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw err;
  }
  return rt.exitCode() ?? EXIT.ok;
}

if (require.main === module) {
  main(process.argv.slice(2), undefined, (h) => process.on('SIGINT', h), invokedAs())
    .then((code) => {
      process.exitCode = code;
    })
    .catch((e: Error) => {
      process.stderr.write(`error: ${e.message}\n`);
      process.exitCode = 1;
    });
}
