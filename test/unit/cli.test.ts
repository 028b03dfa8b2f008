/**
 * The CLI's contract: exit codes (0 ok, 1 data problem, 2 usage), one clear stderr line that
 * names the file/line/offset, on the broken-fixture corpus made by scripts/make-broken-fixtures.mjs.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { repoRoot, runCli, sampleDir } from './fixtures';
import { pyTokens } from './pyref';

interface Case {
  name: string;
  dir: string;
  valid: boolean;
  skipped?: boolean;
  expect: { problems: { code: string; line?: number }[] };
}

describe('CLI exit codes and messages', function () {
  this.timeout(0);
  let out: string;
  let cases: Case[];
  before(async () => {
    const sample = sampleDir();
    const fx = await import(pathToFileURL(path.join(repoRoot(), 'scripts', 'make-broken-fixtures.mjs')).href);
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-cli-'));
    await fx.makeBrokenFixtures({ out, sampleRoot: sample, quiet: true });
    cases = JSON.parse(fs.readFileSync(path.join(out, 'cases.json'), 'utf8')).cases;
  });
  after(() => {
    if (out) fs.rmSync(out, { recursive: true, force: true });
  });

  it('`info` exits 0 on valid roots and 1 on broken ones, naming the manifest line', () => {
    for (const c of cases) {
      if (c.skipped || !fs.existsSync(path.join(out, c.dir, 'shard_manifest.jsonl'))) continue;
      const r = runCli(['info', path.join(out, c.dir)]);
      const errors = c.expect.problems.filter((p) => (p as { severity?: string }).severity === 'error');
      assert.strictEqual(r.code, errors.length ? 1 : 0, `${c.name}: exit ${r.code}\n${r.stdout}${r.stderr}`);
      for (const p of errors) {
        if (p.line !== undefined) assert.match(r.stdout, new RegExp(`line ${p.line}\\b`), `${c.name}: message names line ${p.line}`);
      }
    }
  });

  it('a read past a truncated shard fails with exit 1 and names the file and byte offset', () => {
    const root = path.join(out, 'truncated-file');
    const lines = fs
      .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const e = lines.find((l) => l.shard.includes('000001'));
    const actualTokens = fs.statSync(path.join(root, e.shard)).size / 4;
    const r = runCli(['tokens', root, '--start', String(e.start_token + actualTokens), '--count', '2']);
    assert.strictEqual(r.code, 1);
    assert.match(r.stderr, new RegExp(`tokens_000001\\.u32: short read at byte ${(actualTokens * 4).toLocaleString('en-US')}`));
  });

  it('a lone .u32 (no manifest) works with local offsets and equals the reader at the same global offsets', () => {
    const root = sampleDir();
    const lines = fs
      .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const e = lines.sort((a, b) => a.start_token - b.start_token)[1];
    const file = path.join(root, e.shard);
    const info = runCli(['info', file, '--json']);
    assert.strictEqual(info.code, 0, info.stderr);
    assert.strictEqual(JSON.parse(info.stdout).stored_tokens, e.num_tokens);
    const r = runCli(['tokens', file, '--start', '5', '--count', '12', '--json']);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(JSON.parse(r.stdout).ids, pyTokens(root, e.start_token + 5, 12));
    const trailing = cases.find((c) => c.name === 'lone-trailing-bytes');
    if (trailing) {
      const dir = path.join(out, trailing.dir);
      const u32 = fs.readdirSync(dir).find((f) => f.endsWith('.u32'))!;
      const t = runCli(['info', path.join(dir, u32)]);
      assert.strictEqual(t.code, 1);
      assert.match(t.stdout, /not a multiple of 4; the last 3 bytes after token/);
    }
  });

  it('a read reaching into a manifest gap fails with exit 1 naming the hole (no tokens from the next shard)', () => {
    const root = path.join(out, 'gap');
    const es = fs
      .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .sort((a, b) => a.start_token - b.start_token);
    const holeStart = es[1].start_token + es[1].num_tokens;
    const r = runCli(['tokens', root, '--start', String(holeStart - 2), '--count', '4']);
    assert.strictEqual(r.code, 1, r.stdout);
    assert.strictEqual(r.stdout, '');
    assert.match(
      r.stderr,
      new RegExp(
        `^error: token ${holeStart.toLocaleString('en-US')} is in no shard: .*\\[${holeStart.toLocaleString('en-US')}, ${es[2].start_token.toLocaleString('en-US')}\\)`,
      ),
    );
  });

  it('`update` on a stream without one complete update says so (exit 2), and `info` does not print "0..0"', () => {
    const root = path.join(out, 'valid');
    const stored = fs
      .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .reduce((n, l) => n + JSON.parse(l).num_tokens, 0);
    const r = runCli(['update', root, '0']);
    assert.strictEqual(r.code, 2);
    assert.match(
      r.stderr,
      new RegExp(
        `^error: the stream holds no complete update: it has ${stored.toLocaleString('en-US')} tokens and one update needs 131,073`,
      ),
    );
    const info = runCli(['info', root]);
    assert.strictEqual(info.code, 0, info.stderr);
    assert.match(info.stdout, /^updates +0 \(one update needs 131,073 tokens/m);
  });

  it('`tokens` prints any count in pieces, byte for byte the JSON of the whole range, equal to the reader', () => {
    const root = sampleDir();
    const stored = fs
      .readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .reduce((n, l) => n + JSON.parse(l).num_tokens, 0);
    const start = 3,
      count = stored - 5; // several 1,048,576-token pieces, not aligned to them
    const want = pyTokens(root, start, count);
    const json = runCli(['tokens', root, '--start', String(start), '--count', String(count), '--json']);
    assert.strictEqual(json.code, 0, json.stderr);
    assert.strictEqual(json.stdout, JSON.stringify({ start, count, ids: want }) + '\n');
    const text = runCli(['tokens', root, '--start', String(start), '--count', String(count)]);
    assert.strictEqual(text.stdout, want.join(' ') + '\n');
  });

  it('usage errors exit 2 with one line', () => {
    for (const args of [
      [],
      ['frobnicate'],
      ['info'],
      ['tokens', sampleDir()],
      ['tokens', sampleDir(), '--start', 'abc', '--count', '1'],
      ['update', sampleDir(), '1.5'],
      ['update', sampleDir(), '0', '--sequence', '128'],
      ['info', '/nonexistent/dataset'],
      ['info', sampleDir(), '[--json]'],
      ['verify', sampleDir(), '[--jobs', '2]'],
      ['decode', sampleDir(), '791', '[--pieces]'],
      ['decode', sampleDir(), ''],
      ['decode', sampleDir(), ' , '],
    ]) {
      const r = runCli(args);
      assert.strictEqual(r.code, 2, `${args.join(' ')} → ${r.code}: ${r.stderr}`);
      if (args.length) assert.match(r.stderr, /^error: .+\n$/, `${args.join(' ')}: ${r.stderr}`);
    }
  });
});

describe('CLI on commander: help, version, one-line errors', function () {
  this.timeout(0);
  it('`--help` for the program and every subcommand, `--version` from package.json', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8'));
    const v = runCli(['--version']);
    assert.strictEqual(v.code, 0);
    assert.strictEqual(v.stdout.trim(), pkg.version);
    const top = runCli(['--help']);
    assert.strictEqual(top.code, 0);
    const names = [...top.stdout.matchAll(/^ {2}(\w+) /gm)].map((m) => m[1]).filter((n) => n !== 'help');
    assert.ok(names.length >= 6, top.stdout);
    for (const name of names) {
      const h = runCli([name, '--help']);
      assert.strictEqual(h.code, 0, `${name} --help: ${h.stderr}`);
      assert.match(h.stdout, new RegExp(`^Usage: token-shards ${name} `), h.stdout);
    }
  });

  it('numbers people type: "update must be ≥ 0", "too large", global options after the subcommand', () => {
    const neg = runCli(['update', sampleDir(), '-1']);
    assert.strictEqual(neg.code, 2);
    assert.match(neg.stderr, /^error: update must be ≥ 0 \(got -1\)\n$/);
    const big = runCli(['update', sampleDir(), '1e309']);
    assert.strictEqual(big.code, 2);
    assert.match(big.stderr, /^error: update: 1e309 is too large/);
    const shard = path.join(sampleDir(), 'shards', fs.readdirSync(path.join(sampleDir(), 'shards')).sort()[0]);
    const g = runCli(['info', shard, '--json', '--sequence-length', '512']);
    assert.strictEqual(g.code, 0, g.stderr);
    assert.strictEqual(JSON.parse(g.stdout).sequence_length, 512);
    const before = runCli(['--sequence-length', '512', 'info', shard, '--json']);
    assert.strictEqual(JSON.parse(before.stdout).sequence_length, 512);
  });

  it('"-0" is zero: locate -0 answers exactly as locate 0; -0.5 is still refused', () => {
    const zero = runCli(['locate', sampleDir(), '0', '--json']);
    assert.strictEqual(zero.code, 0, zero.stderr);
    for (const text of ['-0', '-00', '-0.0']) {
      const r = runCli(['locate', sampleDir(), text, '--json']);
      assert.strictEqual(r.code, 0, `${text}: ${r.stderr}`);
      assert.deepStrictEqual(JSON.parse(r.stdout), JSON.parse(zero.stdout), text);
    }
    const half = runCli(['locate', sampleDir(), '-0.5']);
    assert.strictEqual(half.code, 2);
    assert.match(half.stderr, /^error: offset must be ≥ 0 \(got -0\.5\)\n$/);
  });
});
