/**
 * The format choice VS Code reads from `tokenShards.format` / `tokenShards.dtype` and the CLI from
 * `--format` / `--dtype` (`core/formats/choice.ts`, one check for both): the settings' enums in
 * package.json are the format layer's names plus `auto`; values map to the options `openPath`
 * takes; a value naming nothing is one line naming the setting and the values expected, and the
 * CLI's message for the same value is that line with its flag's name.
 *
 * The offer to open a generic token file (`.bin`, `.npy`, `.mds`) in the shard editor
 * (`core/formats/offer.ts`): its extensions are the ones package.json registers the editor for
 * with priority `option`; it asks once per file and never after "Don't ask again"; its question
 * names the format and dtype the format layer opens each fixture file as, which must be the
 * format and dtype the fixture generator wrote (`format-fixtures/fixtures.json`).
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { CLI_CHOICE_NAMES, SETTING_CHOICE_NAMES, formatChoice } from '../../src/core/formats/choice';
import { SettingError } from '../../src/core/errors';
import { FORMAT_NAMES, TOKEN_DTYPES } from '../../src/core/formats/types';
import { openPath } from '../../src/core/dataset';
import { FORMAT_LABELS, OFFERED_EXTENSIONS, mayOffer, offerQuestion } from '../../src/core/formats/offer';
import { repoRoot, runCli, sampleDir } from './fixtures';

const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8'));
const props = pkg.contributes.configuration.properties;

describe('format settings (tokenShards.format, tokenShards.dtype)', () => {
  it("package.json's enums are auto plus the format layer's names and dtypes, default auto", () => {
    assert.deepStrictEqual(props['tokenShards.format'].enum, ['auto', ...FORMAT_NAMES]);
    assert.deepStrictEqual(props['tokenShards.dtype'].enum, ['auto', ...TOKEN_DTYPES]);
    assert.strictEqual(props['tokenShards.format'].default, 'auto');
    assert.strictEqual(props['tokenShards.dtype'].default, 'auto');
  });

  it('auto (and an empty value) forces nothing; every name is passed on as it is', () => {
    assert.deepStrictEqual(formatChoice('auto', 'auto', SETTING_CHOICE_NAMES), {});
    assert.deepStrictEqual(formatChoice('', undefined, SETTING_CHOICE_NAMES), {});
    for (const f of FORMAT_NAMES) assert.deepStrictEqual(formatChoice(f, 'auto', SETTING_CHOICE_NAMES), { format: f });
    for (const d of TOKEN_DTYPES) assert.deepStrictEqual(formatChoice('auto', d, SETTING_CHOICE_NAMES), { dtype: d });
    assert.deepStrictEqual(formatChoice('megatron', 'int32', SETTING_CHOICE_NAMES), { format: 'megatron', dtype: 'int32' });
  });

  it('a value naming nothing throws one line naming the setting, the value and the values expected', () => {
    assert.throws(
      () => formatChoice('parquet', 'auto', SETTING_CHOICE_NAMES),
      (e: Error) =>
        e instanceof SettingError &&
        e.message === `tokenShards.format parquet is not a known format (expected one of auto, ${FORMAT_NAMES.join(', ')})`,
    );
    assert.throws(
      () => formatChoice('auto', 'float32', SETTING_CHOICE_NAMES),
      (e: Error) =>
        e instanceof SettingError &&
        e.message === 'tokenShards.dtype float32 is not a token dtype (expected one of auto, uint16, uint32, int32)',
    );
    // The CLI does not take `auto`: it is a value naming nothing there.
    assert.throws(() => formatChoice('auto', undefined, CLI_CHOICE_NAMES), /--format auto is not a known format/);
  });

  it('the CLI says the same line for the same bad values (exit 2)', () => {
    for (const [flag, value, names] of [
      ['--dtype', 'float32', { dtype: 'float32' }],
      ['--format', 'parquet', { format: 'parquet' }],
    ] as const) {
      const r = runCli(['info', sampleDir(), flag, value]);
      let expected = '';
      try {
        formatChoice('format' in names ? names.format : undefined, 'dtype' in names ? names.dtype : undefined, CLI_CHOICE_NAMES);
      } catch (e) {
        expected = (e as Error).message;
      }
      assert.strictEqual(r.code, 2, r.stderr);
      assert.strictEqual(r.stderr.trim(), `error: ${expected}`);
    }
  });
});

describe('the offer to open a token file in the shard editor', () => {
  const fixturesDir = path.join(repoRoot(), 'format-fixtures');
  before(function () {
    if (!fs.existsSync(path.join(fixturesDir, 'fixtures.json'))) {
      execFileSync(process.execPath, [path.join(repoRoot(), 'scripts', 'make-format-fixtures.mjs')], { cwd: repoRoot(), stdio: 'inherit' });
    }
  });

  it("offers exactly the extensions package.json registers the shard editor for with priority 'option'", () => {
    const editors = pkg.contributes.customEditors as { viewType: string; priority: string; selector: { filenamePattern: string }[] }[];
    const option = editors.find((e) => e.viewType === 'tokenShards.tokenFileEditor')!;
    assert.strictEqual(option.priority, 'option');
    assert.deepStrictEqual(
      option.selector.map((s) => s.filenamePattern),
      OFFERED_EXTENSIONS.map((e) => `*${e}`),
    );
    const byDefault = editors.find((e) => e.viewType === 'tokenShards.shardEditor')!;
    assert.strictEqual(byDefault.priority, 'default');
    assert.deepStrictEqual(
      byDefault.selector.map((s) => s.filenamePattern),
      ['*.u32', '*.idx', '*.ds'],
    );
  });

  it("asks once per file, only for offered extensions, never after Don't ask again", () => {
    const offered = new Set<string>(['/data/seen.bin']);
    assert.strictEqual(mayOffer({ file: '/data/a.bin', neverAsk: false, offered }), true);
    assert.strictEqual(mayOffer({ file: '/data/a.NPY', neverAsk: false, offered }), true);
    assert.strictEqual(mayOffer({ file: '/data/shard.00000.mds', neverAsk: false, offered }), true);
    assert.strictEqual(mayOffer({ file: '/data/shard.00000.mds.zstd', neverAsk: false, offered }), true);
    assert.strictEqual(mayOffer({ file: '/data/seen.bin', neverAsk: false, offered }), false);
    assert.strictEqual(mayOffer({ file: '/data/a.bin', neverAsk: true, offered }), false);
    for (const f of ['/data/tokens_000000.u32', '/data/x.idx', '/data/x.ds', '/data/notes.txt', '/data/bin', '/data/.bin', '/data/a.gz'])
      assert.strictEqual(mayOffer({ file: f, neverAsk: false, offered }), false, f);
  });

  it('names the format and dtype each offered fixture file opens as (the generator wrote them)', async () => {
    const meta = JSON.parse(fs.readFileSync(path.join(fixturesDir, 'fixtures.json'), 'utf8')) as {
      fixtures: { name: string; format: 'megatron'; dtype: 'int32'; path: string }[];
    };
    let asked = 0;
    for (const fx of meta.fixtures) {
      const root = path.join(fixturesDir, fx.path);
      const files = fs.statSync(root).isDirectory() ? fs.readdirSync(root).map((n) => path.join(root, n)) : [root];
      const file = files.find((f) => mayOffer({ file: f, neverAsk: false, offered: new Set() }));
      if (!file) continue;
      const ds = await openPath(file);
      assert.ok(ds?.format, `${fx.name}: ${file} opened with no format`);
      assert.strictEqual(
        offerQuestion(ds.format.name, ds.format.dtype),
        `Open as token shard (${FORMAT_LABELS[fx.format]} ${fx.dtype})?`,
        fx.name,
      );
      await ds.stream.close();
      asked++;
    }
    assert.ok(asked >= 8, `only ${asked} fixtures have an offered file`);
    const megatron = path.join(fixturesDir, 'dolma2', 'megatron-int32-eod', 'corpus_text_document.bin');
    const ds = await openPath(megatron);
    assert.strictEqual(offerQuestion(ds!.format!.name, ds!.format!.dtype), 'Open as token shard (Megatron int32)?');
    await ds!.stream.close();
  });
});
