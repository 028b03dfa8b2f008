/**
 * Training-order index files (Megatron's GPTDataset cache, OLMo's global_indices.npy) are told
 * apart from token files by name, on the files the order fixture script writes as the trainers do
 * (scripts/make-order-fixtures.py): every index file it writes is one, every token file is not.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { isTrainingOrderIndexFile } from '../../src/core/order/indexFiles';
import { orderFixtures } from './orderFixtures';

function npyFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? npyFiles(p) : e.name.endsWith('.npy') ? [p] : [];
  });
}

describe('training-order index files (workspace discovery skips them)', function () {
  this.timeout(600_000);

  it("recognises the Megatron cache's and OLMo's index files, and no token file", () => {
    const { dir } = orderFixtures();
    const files = npyFiles(dir);
    const index = files.filter((f) => f.includes(`${path.sep}cache${path.sep}`) || path.basename(f) === 'global_indices.npy');
    const tokens = files.filter((f) => !index.includes(f));
    assert.ok(index.length >= 4 && tokens.length >= 1, `fixture has index and token .npy files: ${files.join(', ')}`);
    assert.deepStrictEqual(
      index.filter((f) => !isTrainingOrderIndexFile(f)),
      [],
      'index files not recognised',
    );
    assert.deepStrictEqual(
      tokens.filter((f) => isTrainingOrderIndexFile(f)),
      [],
      'token files taken for index files',
    );
    assert.strictEqual(isTrainingOrderIndexFile('global_indices.npy.bak'), false);
    assert.strictEqual(isTrainingOrderIndexFile('my_global_indices.npy'), false);
  });
});
