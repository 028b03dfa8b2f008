/**
 * Where save dialogs open (src/core/saveFolder.ts): never in the dataset folder by default.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { defaultSaveFolder } from '../../src/core/saveFolder';
import { sampleDir } from './fixtures';

describe('save dialogs: default folder', () => {
  const isFolder = (p: string) => fs.existsSync(p) && fs.statSync(p).isDirectory();

  it('the workspace is the dataset: the dialog opens beside it, not in it', () => {
    const ws = sampleDir();
    const got = defaultSaveFolder({ workspaceFolders: [ws], home: os.homedir(), isFolder });
    assert.strictEqual(got, path.dirname(ws));
  });

  it('the last folder saved into wins while it exists; no workspace: the home folder', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-save-'));
    try {
      const ws = sampleDir();
      assert.strictEqual(defaultSaveFolder({ remembered: tmp, workspaceFolders: [ws], home: '/home/x', isFolder }), tmp);
      fs.rmSync(tmp, { recursive: true });
      assert.strictEqual(defaultSaveFolder({ remembered: tmp, workspaceFolders: [ws], home: '/home/x', isFolder }), path.dirname(ws));
      assert.strictEqual(defaultSaveFolder({ workspaceFolders: [], home: '/home/x', isFolder }), '/home/x');
      assert.strictEqual(defaultSaveFolder({ workspaceFolders: ['/'], home: '/home/x', isFolder }), '/home/x', 'the root has no parent');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
