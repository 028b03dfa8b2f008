// @ts-check
// ESLint 9 flat config: typescript-eslint for src/, webview/, test/ (type-aware: the rules that
// catch real bugs need types, e.g. a promise nobody awaits) and plain rules for scripts/ (the
// scripts are type-checked by `tsc -p tsconfig.scripts.json` instead). `npm run lint` runs it
// after both type checks and before the import-cycle check (madge).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Decoded token text comes from the open web: webviews and hovers insert it as text only. */
const NO_HTML_SINKS = [
  { property: 'innerHTML', message: 'Insert text as text (textContent, h() from webview/common.ts): decoded text may hold markup.' },
  { property: 'outerHTML', message: 'Insert text as text (textContent, h() from webview/common.ts): decoded text may hold markup.' },
  { property: 'insertAdjacentHTML', message: 'Insert text as text (insertAdjacentText, h()): decoded text may hold markup.' },
  { object: 'document', property: 'write', message: 'Build the DOM with h() from webview/common.ts.' },
  { object: 'document', property: 'writeln', message: 'Build the DOM with h() from webview/common.ts.' },
];

export default defineConfig(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', 'sample/**', 'bench-data/**', '.vscode-test/**', 'test-results/**', '**/*.d.ts'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    // Everything: the rules the team agreed on.
    rules: {
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-restricted-properties': ['error', ...NO_HTML_SINKS],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // TypeScript: type-aware rules (one TypeScript program per tsconfig via the project service).
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['webview/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // The core runs in the CLI, worker threads and plain-Node tests; the channel and the webviews
    // run outside the extension host. None of them may import the VS Code API.
    files: ['src/core/**/*.ts', 'src/shared/**/*.ts', 'webview/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'vscode',
              message:
                'src/core, src/shared and webview/ run without VS Code: keep the vscode API in src/editor, src/commands, src/panels, src/hover or the host modules.',
            },
          ],
        },
      ],
    },
  },
  {
    // Node scripts (ES modules) and the CommonJS build script.
    files: ['scripts/**/*.mjs', 'scripts/**/*.js'],
    languageOptions: { globals: { ...globals.node }, sourceType: 'module' },
  },
  {
    files: ['esbuild.js'],
    languageOptions: { globals: { ...globals.node }, sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
