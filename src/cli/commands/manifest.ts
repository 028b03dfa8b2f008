/**
 * `token-shards manifest <root>`: writes a `shard_manifest.jsonl`-style list of the stream's files
 * to stdout, one JSON line per token file in stream order: `shard` (name), `start_token`,
 * `num_tokens`, `sha256`, `bytes`, `format` and `sidecars` (`[{file, sha256, bytes}]`: a Megatron
 * `.idx`, a Dolma `.csv.gz`…). Save it once (`> files.jsonl`) and check a copy after every transfer
 * with `token-shards verify <root> --manifest files.jsonl`. Works on every format.
 */
import type { Command } from 'commander';
import { formatFilesOf, formatNameOf } from '../../core/dataset';
import { streamManifest } from '../../core/formats/fileHashes';
import { CliContext } from '../context';

/** Registers `manifest`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('manifest')
    .description("write the stream's files with their sha256 (and their sidecars') as JSON lines, for `verify --manifest`")
    .argument('<root>', 'dataset folder, or a file or folder of any token format')
    .action(
      ctx.run(async (root: string, _opts: unknown, cmd: Command) => {
        const ds = await ctx.open(root, cmd);
        const signal = ctx.cancellable();
        const tty = process.stderr.isTTY === true;
        const lines = await streamManifest(formatFilesOf(ds), formatNameOf(ds), {
          signal,
          onFile: tty
            ? (done, total) => process.stderr.write(`\rmanifest: ${done} of ${total} files hashed${done === total ? '\n' : ''}`)
            : undefined,
        });
        for (const l of lines) await ctx.write(ctx.json(l) + '\n');
        return 0;
      }),
    );
}
