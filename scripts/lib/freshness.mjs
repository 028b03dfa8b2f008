/**
 * Is a build output up to date? One rule for `npm start` and the end-to-end runner: an output is
 * fresh when it exists and is newer than every file of its inputs (modification times, as make
 * decides). Used to skip rebuilding and repackaging when nothing changed.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Files and folders whose contents end up in (or shape) the packaged .vsix (`npm run package`). */
export const VSIX_INPUTS = [
  'package.json',
  'package.nls.json',
  'README.md',
  'CHANGELOG.md',
  'LICENSE',
  '.vscodeignore',
  'esbuild.js',
  'tsconfig.json',
  'src',
  'webview',
  'media',
];

/** Inputs of `node esbuild.js --tests` (the extension, CLI, webviews and the test bundles). */
export const BUILD_INPUTS = ['package.json', 'esbuild.js', 'tsconfig.json', 'src', 'webview', 'media', 'test'];

/** Newest modification time (ms) of a file or of any file under a folder; 0 when absent. */
export function newestMtime(p) {
  let st;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = 0;
  for (const e of fs.readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, e)));
  return newest;
}

/**
 * Why `outputs` must be built again, in words ('' when they are fresh): one of them is missing,
 * or some inputs changed after the oldest of them was written.
 * @param {string} root the folder the relative paths are under (the repository)
 * @param {string[]} outputs files the build writes, relative to `root`
 * @param {string[]} inputs files and folders it reads, relative to `root`
 */
export function staleReason(root, outputs, inputs) {
  const missing = outputs.filter((o) => !fs.existsSync(path.join(root, o)));
  if (missing.length) return `${missing.join(', ')} ${missing.length === 1 ? 'does' : 'do'} not exist`;
  const built = Math.min(...outputs.map((o) => fs.statSync(path.join(root, o)).mtimeMs));
  const newer = inputs.filter((p) => newestMtime(path.join(root, p)) > built);
  return newer.length ? `newer inputs: ${newer.join(', ')}` : '';
}
