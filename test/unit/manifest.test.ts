/**
 * Metadata faults beyond the broken-fixture corpus (src/core/manifest.ts, src/core/dataset.ts),
 * each found by feeding bad input to the CLI and the core. Datasets are copies of the corpus's
 * `valid` case (real sample tokens, scripts/make-broken-fixtures.mjs) with one thing changed:
 * - `start_token + num_tokens` past 2^53, and JSON numbers past 2^53 (rounded by JSON.parse):
 *   reported on their line (they used to be accepted, with inexact offsets and byte sizes);
 * - a 10 MB `shard` value: reported, and no message echoes it whole;
 * - shard paths that leave the root (absolute, `../`): a warning on their line;
 * - a shard this process may not read (chmod 000): reported by `info` (stat alone succeeds);
 * - `manifest.json` whose G is not a multiple of L: the dataset still opens, with an error
 *   naming manifest.json (it used to throw, so the CLI exited 2 and VS Code could not open it);
 *   an EOS id past 2^32 − 1 is not used.
 */
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { openDataset } from '../../src/core/dataset';
import { MAX_SHARD_PATH_CHARS, MAX_TOKEN_ID, SHARD_MANIFEST, hasShardsPresent, parseShardManifest } from '../../src/core/manifest';
import { DEFAULT_SCHEDULE } from '../../src/core/schedule';
import { cliPath, repoRoot, sampleDir } from './fixtures';

interface Entry {
  shard: string;
  start_token: number;
  num_tokens: number;
  sha256: string;
}

describe('manifest faults found by bad-input testing', function () {
  this.timeout(0);
  let out: string;
  let valid: string;
  let good: Entry[];
  let copies = 0;

  /** A copy of the corpus's valid case with `manifest` (entries or raw text) and optional extra files. */
  function variant(manifest: (Entry | string)[], files: Record<string, string> = {}): string {
    const root = path.join(out, `v${++copies}`);
    fs.cpSync(valid, root, { recursive: true });
    fs.writeFileSync(
      path.join(root, SHARD_MANIFEST),
      manifest.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join('\n') + '\n',
    );
    for (const [rel, text] of Object.entries(files)) fs.writeFileSync(path.join(root, rel), text);
    return root;
  }
  const parse = (root: string) => {
    const file = path.join(root, SHARD_MANIFEST);
    return parseShardManifest(fs.readFileSync(file, 'utf8'), file);
  };

  before(async () => {
    const fx = await import(pathToFileURL(path.join(repoRoot(), 'scripts', 'make-broken-fixtures.mjs')).href);
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-manifest-'));
    fs.chmodSync(out, 0o755); // the unreadable-shard test reads it as another user
    await fx.makeBrokenFixtures({ out: path.join(out, 'corpus'), sampleRoot: sampleDir(), sparse: false, quiet: true });
    valid = path.join(out, 'corpus', 'valid');
    good = fs
      .readFileSync(path.join(valid, SHARD_MANIFEST), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  });
  after(() => {
    if (out) fs.rmSync(out, { recursive: true, force: true });
  });

  it('start_token + num_tokens past 2^53 is a bad field on its line', () => {
    const num = Number.MAX_SAFE_INTEGER - good[2].start_token + 1; // safe on its own, the end is not
    const p = parse(variant([good[0], good[1], { ...good[2], num_tokens: num }]));
    const bad = p.problems.filter((x) => x.code === 'bad-field');
    assert.deepStrictEqual(
      bad.map((x) => x.line),
      [3],
    );
    assert.match(bad[0].message, /line 3: start_token \+ num_tokens = [\d,]+ .*past 2\^53/);
    assert.strictEqual(p.entries.length, 2, 'the line is skipped');
  });

  it('a JSON number past 2^53 is reported as such, not as "not an integer"', () => {
    const text = JSON.stringify(good[1]).replace(`"start_token":${good[1].start_token}`, `"start_token":${Number.MAX_SAFE_INTEGER}2`);
    const p = parse(variant([good[0], text, good[2]]));
    const bad = p.problems.find((x) => x.code === 'bad-field');
    assert.strictEqual(bad?.line, 2);
    assert.match(bad!.message, /start_token \d+ is past 2\^53/);
  });

  it('a shard path longer than PATH_MAX is a bad field, and no message carries it whole', () => {
    const huge = 'shards/' + 'a'.repeat(10_000_000) + '.u32';
    const p = parse(variant([good[0], { ...good[1], shard: huge }, good[2]]));
    assert.deepStrictEqual(
      p.problems.filter((x) => x.code === 'bad-field').map((x) => x.line),
      [2],
    );
    assert.ok(huge.length > MAX_SHARD_PATH_CHARS);
    for (const x of p.problems) assert.ok(x.message.length < 1000, `${x.code}: ${x.message.length} characters`);
  });

  it('shard paths that leave the root are errors on their line and not read (warnings when allowed); ones that stay inside are fine', async () => {
    const outside = path.join(valid, good[2].shard); // an absolute path to a real shard
    const manifest = [
      { ...good[0], shard: `shards/../${good[0].shard}` },
      { ...good[1], shard: `../${path.basename(valid)}/${good[1].shard}` },
      { ...good[2], shard: outside },
    ];
    const p = parse(variant(manifest));
    const refused = p.problems.filter((x) => x.code === 'outside-root');
    assert.deepStrictEqual(
      refused.map((x) => [x.line, x.severity]),
      [
        [2, 'error'],
        [3, 'error'],
      ],
    );
    assert.match(refused[0].message, /line 2: .*climbs out with \.\..*not read/);
    assert.match(refused[1].message, /line 3: .*is an absolute path.*--allow-outside-root/);
    assert.deepStrictEqual(
      p.entries.map((e) => e.line),
      [1],
    );
    const root = variant(manifest);
    const allowed = parseShardManifest(fs.readFileSync(path.join(root, SHARD_MANIFEST), 'utf8'), path.join(root, SHARD_MANIFEST), {
      allowOutsideRoot: true,
    });
    assert.deepStrictEqual(
      allowed.problems.filter((x) => x.code === 'outside-root').map((x) => [x.line, x.severity]),
      [
        [2, 'warning'],
        [3, 'warning'],
      ],
    );
    assert.strictEqual(allowed.entries.length, 3);
  });

  it('a shard that is a symbolic link leading out of the root is an error on its line; allowed with allowOutsideRoot', async () => {
    const root = variant(good);
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-elsewhere-'));
    try {
      const target = path.join(elsewhere, 'x.u32');
      fs.renameSync(path.join(root, good[1].shard), target);
      fs.symlinkSync(target, path.join(root, good[1].shard));
      const ds = await openDataset(root);
      const p = ds.problems.filter((x) => x.code === 'outside-root');
      assert.deepStrictEqual(
        p.map((x) => [x.line, x.severity]),
        [[2, 'error']],
      );
      assert.match(p[0].message, /symbolic link/);
      assert.ok(!ds.shards.some((e) => e.line === 2));
      const ok = await openDataset(root, {}, { allowOutsideRoot: true });
      assert.strictEqual(ok.shards.length, 3);
      assert.ok(!ok.problems.some((x) => x.code === 'outside-root'));
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('a shard this process may not read is reported by `info` (exit 1, naming the line)', function () {
    const root = variant(good);
    const locked = path.join(root, good[2].shard);
    fs.chmodSync(locked, 0);
    // Root reads anything: then run the CLI as "nobody", as a user without the permission would.
    const asRoot = process.getuid?.() === 0;
    if (asRoot && spawnSync('setpriv', ['--version']).status !== 0) {
      if (this.test) this.test.title += ' — skipped: running as root without setpriv';
      this.skip();
    }
    const cmd = asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', process.execPath] : [process.execPath];
    const r = spawnSync(cmd[0], [...cmd.slice(1), cliPath(), 'info', root], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`line 3: cannot read shard file ${good[2].shard.replace(/\./g, '\\.')}: EACCES`));
  });

  it('manifest.json with G not a multiple of L: the dataset opens, with an error naming manifest.json and both numbers', async () => {
    const G = 1000;
    assert.notStrictEqual(G % DEFAULT_SCHEDULE.sequenceLength, 0);
    const ds = await openDataset(variant(good, { 'manifest.json': JSON.stringify({ global_tokens_per_update: G }) }));
    assert.deepStrictEqual(ds.settings, { ...DEFAULT_SCHEDULE });
    assert.strictEqual(ds.settingSources.globalTokensPerUpdate, 'default');
    const p = ds.problems.find((x) => x.file.endsWith('manifest.json'));
    assert.strictEqual(p?.severity, 'error');
    assert.match(
      p!.message,
      /^manifest\.json: tokens per update 1,000 \(from manifest\.json\) is not a multiple of the sequence length 1,024/,
    );
    // The user's sequence length is kept when manifest.json's G is dropped.
    const L = 64;
    assert.ok(G % L !== 0 && DEFAULT_SCHEDULE.globalTokensPerUpdate % L === 0);
    const withSetting = await openDataset(variant(good, { 'manifest.json': JSON.stringify({ global_tokens_per_update: G }) }), {
      sequenceLength: L,
    });
    assert.deepStrictEqual(
      [withSetting.settings.globalTokensPerUpdate, withSetting.settings.sequenceLength],
      [DEFAULT_SCHEDULE.globalTokensPerUpdate, L],
    );
    // A consistent pair from manifest.json is used as before.
    const ok = await openDataset(
      variant(good, { 'manifest.json': JSON.stringify({ global_tokens_per_update: G, sequence_length: G / 10 }) }),
    );
    assert.deepStrictEqual([ok.settings.globalTokensPerUpdate, ok.settings.sequenceLength], [G, G / 10]);
    assert.deepStrictEqual(ok.problems, []);
    // The CLI reports it as a data problem (exit 1), not a usage error.
    const r = spawnSync(process.execPath, [cliPath(), 'info', ds.root], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1, r.stderr);
    assert.match(r.stdout, /error: manifest\.json: tokens per update 1,000/);
  });

  it('an EOS id past 2^32 − 1 in manifest.json is not used', async () => {
    const ds = await openDataset(variant(good, { 'manifest.json': JSON.stringify({ eos_token_id: MAX_TOKEN_ID + 1 }) }));
    assert.strictEqual(ds.settings.eosTokenId, DEFAULT_SCHEDULE.eosTokenId);
    assert.match(ds.problems[0].message, /eos_token_id = 4294967296 is not a token id \(an integer 0\.\.4,294,967,295\)/);
  });
});

describe('datasets worth choosing: shards present', () => {
  it('the sample has its shards; a copy holding only the manifest (a source/ folder) has none', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-present-'));
    try {
      assert.strictEqual(await hasShardsPresent(sampleDir()), true);
      const only = path.join(tmp, 'source');
      fs.mkdirSync(only);
      fs.copyFileSync(path.join(sampleDir(), SHARD_MANIFEST), path.join(only, SHARD_MANIFEST));
      assert.strictEqual(await hasShardsPresent(only), false);
      // One shard back (the last one listed): present again.
      const lines = fs.readFileSync(path.join(only, SHARD_MANIFEST), 'utf8').trim().split('\n');
      const last = (JSON.parse(lines[lines.length - 1]) as { shard: string }).shard;
      fs.mkdirSync(path.dirname(path.join(only, last)), { recursive: true });
      fs.copyFileSync(path.join(sampleDir(), last), path.join(only, last));
      assert.strictEqual(await hasShardsPresent(only), true);
      // A folder with the shard's name is no shard; no manifest at all is no dataset.
      fs.rmSync(path.join(only, last));
      fs.mkdirSync(path.join(only, last));
      assert.strictEqual(await hasShardsPresent(only), false);
      assert.strictEqual(await hasShardsPresent(tmp), false);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
