/**
 * `npm run test:electron`: the extension-host suite in a desktop VS Code downloaded by
 * `@vscode/test-electron`. It needs network access to that download, which the project's CI
 * machines do not have; there `npm test` runs the same suite in code-server instead
 * (`scripts/test-vscode.mjs`).
 *
 * Built by esbuild to `out/test/vscode/runElectron.js`, so paths are relative to that folder.
 */
import * as fs from 'fs';
import * as path from 'path';
import { runTests } from '@vscode/test-electron';

async function main(): Promise<void> {
  const repoRoot = path.resolve(__dirname, '..', '..', '..');
  const extensionDevelopmentPath = repoRoot;
  const extensionTestsPath = path.join(repoRoot, 'out', 'test', 'vscode', 'index.js');
  const sample = path.join(repoRoot, 'sample');
  if (!fs.existsSync(path.join(sample, 'shards'))) {
    console.error(`No sample dataset at ${sample}: run \`npm run sample\` first.`);
    process.exit(1);
  }
  try {
    const exitCode = await runTests({
      version: process.env.VSCODE_TEST_VERSION ?? 'stable',
      extensionDevelopmentPath,
      extensionTestsPath,
      launchArgs: [
        sample,
        '--disable-extensions', // only the extension under test
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
      ],
    });
    process.exit(exitCode);
  } catch (err) {
    console.error('Failed to run the extension-host tests in VS Code:', err);
    process.exit(1);
  }
}

void main();
