/**
 * The format choice VS Code reads from `tokenShards.format` / `tokenShards.dtype` and the CLI from
 * `--format` / `--dtype` (`core/formats/choice.ts`, one check for both): the settings' enums in
 * package.json are the format layer's names plus `auto`; values map to the options `openPath`
 * takes; a value naming nothing is one line naming the setting and the values expected, and the
 * CLI's message for the same value is that line with its flag's name.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { CLI_CHOICE_NAMES, SETTING_CHOICE_NAMES, formatChoice } from '../../src/core/formats/choice';
import { SettingError } from '../../src/core/errors';
import { FORMAT_NAMES, TOKEN_DTYPES } from '../../src/core/formats/types';
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
