/**
 * Every CLI `--json` output goes through the one JSON helper (`ctx.json`, i.e.
 * `jsonSafe`), which escapes what `JSON.stringify` leaves raw (DEL, C1 controls, bidi overrides
 * and isolates, U+2028/9). A copy of the sample whose first shard has a hostile file name (ESC,
 * DEL, C1 NEL and CSI, RLO, LRI) is run through `locate`, `verify` and `update` with `--json`,
 * and a copy whose second shard is a folder of such a name through `index --json` (which lists
 * it as failed): each output holds none of those characters raw, parses as JSON, and gives back
 * the exact name.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { spawnSync } from 'child_process';
import { cliPath, copySampleWithShardName } from './fixtures';

/** Control characters a terminal or a viewer may act on; JSON text must carry them escaped. */
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

describe('CLI --json escapes control characters from data', function () {
  this.timeout(120_000);
  let dir: string;
  let root: string;
  const hostile = `shards/evil\u001b[31m\u007f\u0085\u009b2J\u202eu32.txt\u2066.u32`;

  let broken: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-cli-json-'));
    root = path.join(dir, 'data');
    copySampleWithShardName(root, 0, hostile);
    broken = path.join(dir, 'broken');
    copySampleWithShardName(broken, 1, hostile, true);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Runs a command; asserts its stdout is JSON without raw control characters and returns it parsed. */
  function json(args: string[], code = 0): unknown {
    const r = spawnSync(process.execPath, [cliPath(), ...args], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cache') },
      maxBuffer: 1 << 28,
    });
    assert.strictEqual(r.status, code, `${args.join(' ')}: ${r.stderr}`);
    const raw = RAW.exec(r.stdout.replace(/\n/g, ''));
    assert.strictEqual(raw, null, `${args[0]} --json printed U+${raw?.[0].codePointAt(0)!.toString(16).padStart(4, '0')} raw`);
    return JSON.parse(r.stdout);
  }

  it('locate --json names the shard, escaped', () => {
    const out = json(['locate', root, '0', '--json']) as { shard: string; local_offset: number };
    assert.strictEqual(out.shard, hostile);
    assert.strictEqual(out.local_offset, 0);
  });

  it('verify --json lists the shard, escaped (and it is ok: the file is the same)', () => {
    const out = json(['verify', root, '--json', '--no-cache']) as { all_ok: boolean; results: { shard: string; status: string }[] };
    assert.strictEqual(out.results[0].shard, hostile);
    assert.strictEqual(out.results[0].status, 'ok');
    assert.strictEqual(out.all_ok, true);
  });

  it('index --json lists the shard that could not be read, escaped', () => {
    const out = json(['index', broken, '--json'], 1) as { failed: { shard: string; message: string }[] };
    assert.deepStrictEqual(
      out.failed.map((f) => f.shard),
      [hostile],
    );
  });

  it('update --json lists the shards it reads, escaped', () => {
    const out = json(['update', root, '0', '--json']) as { shards: string[] };
    assert.strictEqual(out.shards[0], hostile);
  });
});
