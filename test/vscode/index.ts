/**
 * Entry point of the extension-host test suite: VS Code loads this file inside its extension host
 * (`extensionTestsPath`) and awaits `run()`. The same file serves both runners:
 * `scripts/test-vscode.mjs` (code-server's remote extension host, driven by Chromium) and
 * `test/vscode/runElectron.ts` (`@vscode/test-electron`, desktop VS Code).
 *
 * Runs mocha (bdd: `describe`/`it`) over every `*.test.js` file under this folder (esbuild builds
 * `test/vscode/*.test.ts` → `out/test/vscode/*.test.js`) and rejects when a test fails.
 */
import * as fs from 'fs';
import * as path from 'path';
import type MochaType from 'mocha';

// mocha 12 is an ES module package; its CommonJS build is required directly so the entry works
// in any extension host (code-server's Node, desktop Electron) without `require(esm)`.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- mocha 12 is ESM; its CommonJS build is required directly
const Mocha: typeof MochaType = require('mocha/lib/mocha.cjs');

/** Every file under `dir` (recursively) whose name ends in `.test.js`, sorted for a stable order. */
function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(p));
    else if (entry.isFile() && entry.name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

/**
 * Runs the suite; resolves when every test passed, rejects with the failure count otherwise.
 * `MOCHA_GREP` (environment of the extension host) narrows the run to matching test titles.
 */
export function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    color: false, // output travels through the workbench's log forwarding, not a terminal
    timeout: 60_000, // the first custom editor or activation in a cold host can be slow
    slow: 5_000,
  });
  if (process.env.MOCHA_GREP) mocha.grep(process.env.MOCHA_GREP);
  const files = testFiles(__dirname);
  if (files.length === 0) return Promise.reject(new Error(`no *.test.js files under ${__dirname}: run \`node esbuild.js --tests\``));
  for (const f of files) mocha.addFile(f);
  return new Promise<void>((resolve, reject) => {
    try {
      mocha.run((failures) => {
        if (failures > 0) reject(new Error(`${failures} test${failures === 1 ? '' : 's'} failed.`));
        else resolve();
      });
    } catch (err) {
      reject(err);
    }
  });
}
