/**
 * Locations of test data. The sample dataset is made by `scripts/make-sample.mjs` from real
 * text and the real tokenizer (never typed by hand); tests build it on first use.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/** The repository root (the folder holding package.json), found from this file's location. */
export function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json')) || !fs.existsSync(path.join(dir, 'esbuild.js'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find the repository root above ${__dirname}`);
    dir = up;
  }
  return dir;
}

/** The sample dataset root, generated if missing (`npm run sample`). */
export function sampleDir(): string {
  const dir = path.join(repoRoot(), 'sample');
  if (!fs.existsSync(path.join(dir, 'shard_manifest.jsonl'))) {
    execFileSync(process.execPath, [path.join(repoRoot(), 'scripts', 'make-sample.mjs')], { cwd: repoRoot(), stdio: 'inherit' });
  }
  return dir;
}

/** Path of the built CLI (`node esbuild.js` must have run). */
export function cliPath(): string {
  return path.join(repoRoot(), 'dist', 'cli.js');
}

/** Runs the CLI; returns stdout, stderr and the exit code (never throws on non-zero exit). */
export function runCli(args: string[]): { stdout: string; stderr: string; code: number } {
  try {
    const stdout = execFileSync(process.execPath, [cliPath(), ...args], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { stdout, stderr: '', code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; status?: number };
    return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: e.status ?? -1 };
  }
}

/**
 * Copies the sample to `to` with the manifest's `line`-th shard (0-based) renamed to `name` (a
 * hostile file name, say); with `folder`, the shard is replaced by an empty folder of that name
 * (a shard that cannot be read). The manifest entry keeps its count and sha256.
 */
export function copySampleWithShardName(to: string, line: number, name: string, folder = false): void {
  fs.cpSync(sampleDir(), to, { recursive: true });
  const manifest = path.join(to, 'shard_manifest.jsonl');
  const lines = fs.readFileSync(manifest, 'utf8').split('\n');
  const entry = JSON.parse(lines[line]) as { shard: string };
  if (folder) {
    fs.rmSync(path.join(to, entry.shard));
    fs.mkdirSync(path.join(to, name));
  } else fs.renameSync(path.join(to, entry.shard), path.join(to, name));
  lines[line] = JSON.stringify({ ...entry, shard: name });
  fs.writeFileSync(manifest, lines.join('\n'));
}

/** sha256sum of each file (absolute paths), in one call: the reference digests. */
export function sha256sum(files: string[]): Map<string, string> {
  const out = execFileSync('sha256sum', files, { encoding: 'utf8', maxBuffer: 1 << 26 });
  const m = new Map<string, string>();
  for (const line of out.trim().split('\n')) {
    const match = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (!match) throw new Error(`unexpected sha256sum line ${line}`);
    m.set(match[2], match[1]);
  }
  return m;
}
