/**
 * The CLI's memory stays under 300 MB for anything it accepts. The largest
 * accepted update (G = 16,777,216 tokens) is read from a sparse 64 MiB lone shard, and the peak
 * resident set size of the child process is measured by a preloaded sampler (process.memoryUsage
 * every 10 ms, plus once at exit) for `update --json`, the text form, and `--sequence r`. Also: a G
 * past the limit is refused before anything is read.
 */
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { cliPath, sampleDir } from './fixtures';
import { MAX_TOKENS_PER_UPDATE } from '../../src/core/schedule';

const LIMIT_MB = 300;

describe('CLI memory on the largest accepted update', function () {
  this.timeout(0);
  let dir: string;
  let shard: string;
  let sampler: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-mem-'));
    shard = path.join(dir, 'big.u32');
    const fd = fs.openSync(shard, 'w');
    fs.ftruncateSync(fd, 4 * (MAX_TOKENS_PER_UPDATE + 1)); // sparse: no disk used
    fs.closeSync(fd);
    sampler = path.join(dir, 'peak.js');
    fs.writeFileSync(
      sampler,
      `let peak = 0; const f = () => { peak = Math.max(peak, process.memoryUsage().rss); };
setInterval(f, 10).unref();
process.on('exit', () => { f(); require('fs').writeSync(2, '\\nPEAK_RSS ' + peak + '\\n'); });\n`,
    );
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  function peakMb(args: string[]): { mb: number; code: number | null; bytes: number } {
    const r = spawnSync(process.execPath, ['-r', sampler, cliPath(), ...args], { encoding: 'buffer', maxBuffer: 1 << 28 });
    const m = /PEAK_RSS (\d+)/.exec(r.stderr.toString());
    assert.ok(m, r.stderr.toString());
    return { mb: Number(m![1]) / 1e6, code: r.status, bytes: r.stdout.length };
  }

  const tok = () => ['--tokenizer', path.join(sampleDir(), 'tokenizer', 'tokenizer.json')];
  const G = ['--tokens-per-update', String(MAX_TOKENS_PER_UPDATE), '--sequence-length', '1024'];

  it('update --json streams the 16,777,216 × 2 ids row by row', () => {
    const r = peakMb(['update', shard, '0', '--json', ...G]);
    assert.strictEqual(r.code, 0);
    assert.ok(r.bytes > 2 * MAX_TOKENS_PER_UPDATE, `${r.bytes} bytes of JSON`);
    assert.ok(r.mb < LIMIT_MB, `peak ${r.mb.toFixed(0)} MB`);
  });

  it('the text form decodes a few rows at a time; --sequence r reads only its row', () => {
    for (const extra of [[], ['--sequence', '16383']]) {
      const r = peakMb(['update', shard, '0', ...G, ...tok(), ...extra]);
      assert.strictEqual(r.code, 0);
      assert.ok(r.mb < LIMIT_MB, `${extra.join(' ') || 'all rows'}: peak ${r.mb.toFixed(0)} MB`);
    }
  });

  it('G past 16,777,216 or L past 1,048,576 is refused (exit 2), naming the flag', () => {
    const big = spawnSync(process.execPath, [cliPath(), 'update', shard, '0', '--tokens-per-update', String(2 * MAX_TOKENS_PER_UPDATE)], {
      encoding: 'utf8',
    });
    assert.strictEqual(big.status, 2);
    assert.match(big.stderr, /^error: --tokens-per-update: 33,554,432 is more than 16,777,216/);
    const long = spawnSync(
      process.execPath,
      [
        cliPath(),
        'update',
        shard,
        '0',
        '--tokens-per-update',
        String(MAX_TOKENS_PER_UPDATE),
        '--sequence-length',
        String(MAX_TOKENS_PER_UPDATE),
      ],
      { encoding: 'utf8' },
    );
    assert.strictEqual(long.status, 2);
    assert.match(long.stderr, /^error: --sequence-length: 16,777,216 is more than 1,048,576/);
  });
});
