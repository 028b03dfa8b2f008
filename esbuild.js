// Build script: bundles the extension host code, the CLI, worker threads, the webviews and the tests.
// Usage: node esbuild.js [--watch] [--production] [--tests]
'use strict';
const esbuild = require('esbuild');
const fs = require('fs');
const path = require('path');

const args = new Set(process.argv.slice(2));
const watch = args.has('--watch');
const production = args.has('--production');
const withTests = args.has('--tests') || args.has('--watch');

/** Every `*.ts` file directly inside `dir` whose name matches `re`. */
function entries(dir, re = /\.ts$/) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => re.test(f))
    .map((f) => path.join(dir, f));
}

/** Copies the codicon font and stylesheet next to the webview bundles (they are shipped, node_modules is not). */
function copyMedia() {
  const src = path.join(__dirname, 'node_modules', '@vscode', 'codicons', 'dist');
  const dst = path.join(__dirname, 'dist', 'media');
  fs.mkdirSync(dst, { recursive: true });
  for (const f of ['codicon.css', 'codicon.ttf']) fs.copyFileSync(path.join(src, f), path.join(dst, f));
  // uPlot's stylesheet, loaded as a file by the chart panels (the strict CSP allows no inline <style>).
  fs.copyFileSync(path.join(__dirname, 'node_modules', 'uplot', 'dist', 'uPlot.min.css'), path.join(dst, 'uPlot.min.css'));
}

/**
 * In watch mode, says when each rebuild starts and ends and prints errors as `file:line:col: message`,
 * the lines the "npm: watch" task's problem matcher reads (.vscode/tasks.json).
 * @type {import('esbuild').Plugin}
 */
const watchReporter = {
  name: 'watch-reporter',
  setup(build) {
    build.onStart(() => {
      console.log('[watch] build started');
    });
    build.onEnd((result) => {
      for (const { text, location } of result.errors) {
        console.error(`✘ [ERROR] ${location ? `${location.file}:${location.line}:${location.column}: ` : ''}${text}`);
      }
      console.log('[watch] build finished');
    });
  },
};

/**
 * Bundles `*.wat` files (WebAssembly text, written by hand: src/core/search/scanKernel.wat) as the
 * bytes of their module, compiled here by wabt's wat2wasm (the `wabt` package).
 * @type {import('esbuild').Plugin}
 */
const watModules = {
  name: 'wat',
  setup(build) {
    build.onLoad({ filter: /\.wat$/ }, async (args) => {
      const wabt = await require('wabt')();
      const mod = wabt.parseWat(args.path, fs.readFileSync(args.path, 'utf8'));
      try {
        mod.validate();
        return { contents: mod.toBinary({}).buffer, loader: 'binary', watchFiles: [args.path] };
      } finally {
        mod.destroy();
      }
    });
  },
};

/** @type {import('esbuild').BuildOptions} */
const common = {
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'info',
  legalComments: 'none',
  plugins: watch ? [watModules, watchReporter] : [watModules],
};

/** @type {import('esbuild').BuildOptions[]} */
const nodeTargets = [
  {
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
  {
    ...common,
    // the CLI bundle, run by dist/cli.js through V8's code cache (src/cli/loader.ts)
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli-main.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  {
    ...common,
    // the `token-shards` executable: the small loader of dist/cli-main.js
    entryPoints: ['src/cli/loader.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    ...common,
    // the core as a library for scripts (bench, tools): dist/core.js
    entryPoints: ['src/core/index.ts'],
    outfile: 'dist/core.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  {
    ...common,
    // worker_threads entry points live in src/core/workers/*.ts and are built to dist/workers/*.js
    entryPoints: entries('src/core/workers'),
    outdir: 'dist/workers',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  {
    ...common,
    entryPoints: entries('webview', /^(?!common\.ts$|channel\.ts$).*\.ts$/),
    outdir: 'dist/webview',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
];

/** @type {import('esbuild').BuildOptions[]} */
const testTargets = withTests
  ? [
      {
        ...common,
        entryPoints: entries('test/unit', /\.test\.ts$/),
        outdir: 'out/test/unit',
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        packages: 'external',
      },
      {
        ...common,
        entryPoints: [...entries('test/vscode'), ...entries('test/e2e'), ...entries('test/bench')],
        outdir: 'out/test',
        outbase: 'test',
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        external: ['vscode'],
        packages: 'external',
      },
    ]
  : [];

async function main() {
  // A production build (the .vsix) starts from an empty dist/ so no stale source maps ship.
  if (production) fs.rmSync(path.join(__dirname, 'dist'), { recursive: true, force: true });
  copyMedia();
  const targets = [...nodeTargets, ...testTargets].filter((t) => !Array.isArray(t.entryPoints) || t.entryPoints.length > 0);
  if (watch) {
    const ctxs = await Promise.all(targets.map((t) => esbuild.context(t)));
    await Promise.all(ctxs.map((c) => c.watch()));
    console.log('[watch] watching for changes');
  } else {
    await Promise.all(targets.map((t) => esbuild.build(t)));
    fs.chmodSync(path.join(__dirname, 'dist', 'cli.js'), 0o755);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
