/**
 * `token-shards`: the headless front over the same core as the extension. Built to `dist/cli.js`
 * (package `bin`).
 *
 * This file builds the commander program: the global options, then one `register(program, ctx)`
 * per file in `src/cli/commands/`. Every subcommand gets `--help`; `--version` prints the
 * package version. Exit codes: 0 ok, 1 the data has a problem, 2 bad usage, 130 Ctrl-C; errors
 * are one line on stderr (see `context.ts`).
 */
import * as fs from 'fs';
import * as path from 'path';
import { Command, CommanderError } from 'commander';
import { CliContext, CliStreams, EXIT, createContext } from './context';
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
offsets). Updates are 0-based: update k trained on global tokens [G·k, G·(k+1)). Numbers accept
55_000, 5.5e4 and 0x… forms. The schedule options replace the dataset card's defaults;
keys in the dataset's manifest.json override both.

Exit codes: 0 ok, 1 the data has a problem, 2 bad usage, 130 interrupted (Ctrl-C).`;

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
): Promise<number> {
  const rt = createContext(streams);
  onInterrupt?.(() => {
    if (rt.interrupt()) process.exit(EXIT.interrupted);
  });
  const program = buildProgram(rt.ctx, streams);
  if (argv.length === 0) {
    streams.stderr.write(program.helpInformation());
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
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
  });
  main(process.argv.slice(2), undefined, (h) => process.on('SIGINT', h))
    .then((code) => {
      process.exitCode = code;
    })
    .catch((e: Error) => {
      process.stderr.write(`error: ${e.message}\n`);
      process.exitCode = 1;
    });
}
