/**
 * CLI *text* output never carries terminal control from data. A copy of the
 * sample whose first shard has a hostile file name (ESC colour and window-title sequences, BEL,
 * the bidi marks RLM and ALM and the override RLO) is run through the text forms of `update`
 * (its header names the shards), `export --format txt` (a pipe, not a terminal), `info`,
 * `locate`, `verify` and `index`; a manifest naming a missing shard with a NUL in its name goes
 * through `count` (an error on stderr). stdout and stderr must hold none of those characters raw
 * (newline and tab are layout), and where the name is printed it is printed with its marks.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { spawnSync } from 'child_process';
import { cliPath, copySampleWithShardName } from './fixtures';

/** What a terminal or a viewer may act on (the CLI's marks replace them); newline and tab excepted. */
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

describe('CLI text output marks control characters from data', function () {
  this.timeout(120_000);
  let dir: string;
  let root: string;
  let broken: string;
  let nul: string;
  const hostile = 'shards/evil\u001b[31m\u001b]0;pwned\u0007\u200f\u061c\u202egpj.u32';
  /** How the CLI prints the hostile name (sequence lines print the file name only). */
  const markedBase = 'evil⟨ESC⟩[31m⟨ESC⟩]0;pwned⟨BEL⟩⟨U+200F⟩⟨U+061C⟩⟨U+202E⟩gpj.u32';
  const marked = `shards/${markedBase}`;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-cli-text-'));
    root = path.join(dir, 'data');
    copySampleWithShardName(root, 0, hostile);
    broken = path.join(dir, 'broken');
    copySampleWithShardName(broken, 1, hostile, true);
    nul = path.join(dir, 'nul');
    copySampleWithShardName(nul, 0, 'shards/tokens_000000.u32');
    const manifest = path.join(nul, 'shard_manifest.jsonl');
    const lines = fs.readFileSync(manifest, 'utf8').split('\n');
    lines[2] = JSON.stringify({ ...(JSON.parse(lines[2]) as object), shard: 'shards/f\u0000nul.u32' });
    fs.writeFileSync(manifest, lines.join('\n'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Runs a command; asserts the exit code and that neither stream holds a raw control character. */
  function run(args: string[], code: number): { stdout: string; stderr: string } {
    const r = spawnSync(process.execPath, [cliPath(), ...args], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cache') },
      maxBuffer: 1 << 28,
    });
    assert.strictEqual(r.status, code, `${args.join(' ')} exit ${r.status}: ${r.stderr}`);
    for (const [name, text] of [
      ['stdout', r.stdout],
      ['stderr', r.stderr],
    ]) {
      const raw = RAW.exec(text);
      assert.strictEqual(raw, null, `${args[0]} ${name} holds U+${raw?.[0].codePointAt(0)!.toString(16).padStart(4, '0')} raw`);
    }
    return { stdout: r.stdout, stderr: r.stderr };
  }

  it('update: the header names the shard with marks', () => {
    const header = run(['update', root, '0'], 0).stdout.split('\n')[0];
    assert.ok(header.includes(marked), header);
  });

  it('export --format txt to a pipe: every sequence line names the shard with marks', () => {
    const out = run(['export', root, '0', '--format', 'txt'], 0).stdout;
    const seqLines = out.split('\n').filter((l) => l.startsWith('── sequence '));
    assert.ok(seqLines.length > 0);
    assert.ok(
      seqLines.some((l) => l.includes(`shard ${markedBase} ──`)),
      seqLines[0],
    );
  });

  it('info prints nothing raw; locate and index name the shard with marks', () => {
    run(['info', root], 0);
    assert.ok(run(['locate', root, '0'], 0).stdout.includes(marked));
    const ix = run(['index', broken], 1);
    assert.ok((ix.stdout + ix.stderr).includes(marked));
  });

  it('verify names the unreadable shard with marks', () => {
    const r = run(['verify', broken], 1);
    assert.ok((r.stdout + r.stderr).includes(marked), r.stdout + r.stderr);
  });

  it('count: an error naming a shard with a NUL in its name shows ⟨NUL⟩', () => {
    const r = run(['count', nul, 'the'], 1);
    assert.match(r.stderr, /f⟨NUL⟩nul\.u32/);
  });
});

describe('CLI index reports the manifest problems that verify and info report', function () {
  this.timeout(120_000);
  let dir: string;

  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-cli-index-'))));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const index = (root: string) =>
    spawnSync(process.execPath, [cliPath(), 'index', root], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cache') },
    });

  it('a shard whose size is not whole tokens: named on stderr, exit 1 (as info)', () => {
    const root = path.join(dir, 'odd');
    copySampleWithShardName(root, 0, 'shards/tokens_000000.u32');
    const line = JSON.parse(fs.readFileSync(path.join(root, 'shard_manifest.jsonl'), 'utf8').split('\n')[1]) as { shard: string };
    fs.appendFileSync(path.join(root, line.shard), Buffer.from([1, 2, 3]));
    const r = index(root);
    assert.strictEqual(r.status, 1, r.stderr);
    assert.match(r.stderr, /tokens_000001\.u32 \(shard_manifest\.jsonl line 2\): size [\d,]+ bytes is not a multiple of 4/);
    const info = spawnSync(process.execPath, [cliPath(), 'info', root], { encoding: 'utf8' });
    assert.strictEqual(info.status, 1);
  });

  it('every manifest line refused: each named, then "nothing to index", exit 1 (a broken dataset, as verify and info)', () => {
    const root = path.join(dir, 'outside');
    copySampleWithShardName(root, 0, 'shards/tokens_000000.u32');
    const manifest = path.join(root, 'shard_manifest.jsonl');
    const lines = fs.readFileSync(manifest, 'utf8').trim().split('\n');
    fs.writeFileSync(
      manifest,
      lines.map((l) => JSON.stringify({ ...(JSON.parse(l) as object), shard: '../../outside.u32' })).join('\n') + '\n',
    );
    const r = index(root);
    assert.strictEqual(r.status, 1, r.stderr);
    assert.strictEqual(r.stderr.split('\n').filter((l) => /climbs out with \.\./.test(l)).length, lines.length, r.stderr);
    assert.match(r.stderr, /no readable shard line; nothing to index/);
    const verify = spawnSync(process.execPath, [cliPath(), 'verify', root, '--no-cache'], { encoding: 'utf8' });
    assert.strictEqual(verify.status, 1);
  });
});
