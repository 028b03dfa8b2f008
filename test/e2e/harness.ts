/**
 * End-to-end harness: the packaged extension (token-shard-inspector.vsix, from `npm run package`)
 * installed into code-server 4.100.3, its workbench opened in Debian's Chromium through
 * playwright-core, and helpers that act as a person would (explorer clicks, the F1 palette,
 * hovering, screenshots). Built by esbuild to out/test/e2e/harness.js; the tests beside it
 * (`*.e2e.test.ts`) run with mocha through `scripts/test-e2e.mjs`.
 *
 * Typical use:
 * ```ts
 * let wb: Workbench;
 * before(async () => { wb = await launchWorkbench(); });
 * after(async () => { await wb?.close(); });
 * it('…', async () => { await wb.openFileFromExplorer('shards', 'tokens_000000.u32'); … });
 * ```
 */
import * as fs from 'fs';
import * as path from 'path';
import { pathToFileURL } from 'url';
import type { Browser, FrameLocator, Locator, Page } from 'playwright-core';

/** Repository root (this file runs from out/test/e2e/). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
/** The packaged extension the e2e tests install. */
export const VSIX_PATH = path.join(REPO_ROOT, 'token-shard-inspector.vsix');
/** The extension's id (publisher.name). */
export const EXTENSION_ID = 'token-shards.token-shard-inspector';
/** Where screenshots go (git-ignored). */
export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'test-results', 'screenshots');
/** The sample dataset (`npm run sample`), or TSI_SAMPLE_DIR. */
export const SAMPLE_DIR = path.resolve(process.env.TSI_SAMPLE_DIR ?? path.join(REPO_ROOT, 'sample'));

/** What `startCodeServer()` in scripts/code-server.mjs returns. */
interface RunningCodeServer {
  url: string;
  port: number;
  folder: string;
  userDataDir: string;
  extensionsDir: string;
  /** The folder of its IPC sockets (its XDG_RUNTIME_DIR), removed when it stops. */
  runtimeDir: string;
  logFile: string;
  pid: number;
  stop(): Promise<void>;
  exited: Promise<number | null>;
}

/** The parts of scripts/code-server.mjs the harness uses (an ES module, loaded at run time). */
interface CodeServerModule {
  startCodeServer(o: {
    folder: string;
    installVsix?: string;
    settings?: Record<string, unknown>;
    logFile?: string;
  }): Promise<RunningCodeServer>;
  launchChromium(o?: { headless?: boolean }): Promise<Browser>;
  findExtensionHostLogs(userDataDir: string): string[];
  findLogs(userDataDir: string, re: RegExp): string[];
  tailFile(file: string, lines?: number): string;
}

async function codeServerModule(): Promise<CodeServerModule> {
  // A run-time import keeps esbuild from bundling the .mjs (its import.meta.url must stay real).
  const url = pathToFileURL(path.join(REPO_ROOT, 'scripts', 'code-server.mjs')).href;
  return (await import(url)) as CodeServerModule;
}

/** Options of {@link launchWorkbench}. */
export interface LaunchOptions {
  /** Folder to open (default: the sample dataset). */
  folder?: string;
  /** The .vsix to install (default: token-shard-inspector.vsix at the repo root). */
  vsix?: string;
  /** Extra user settings. */
  settings?: Record<string, unknown>;
  /** Viewport (default 1600×1000). */
  viewport?: { width: number; height: number };
  /** How long to wait for the workbench and the extension host (default 120 s). */
  readyTimeoutMs?: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Escapes a string for use inside a double-quoted CSS attribute selector. */
function cssString(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/** Polls `f` (every 200 ms) until it returns a truthy value; rejects naming `what` after `ms`. */
export async function until<T>(f: () => Promise<T>, what: string, ms = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** A running workbench: code-server + Chromium + helpers. Always `close()` it. */
export class Workbench {
  /** Console errors and page errors seen so far (no-network noise left out). */
  readonly errors: string[] = [];

  constructor(
    readonly browser: Browser,
    readonly page: Page,
    readonly codeServer: RunningCodeServer,
    private readonly cs: CodeServerModule,
  ) {
    const noise = /open-vsx|marketplace|telemetry|getaddrinfo|ENOTFOUND|net::ERR_|Failed to load resource|vsda/i;
    page.on('console', (m) => {
      if (m.type() === 'error' && !noise.test(m.text())) this.errors.push(m.text());
    });
    page.on('pageerror', (e) => {
      if (!noise.test(String(e))) this.errors.push(String(e));
    });
  }

  /** The folder the workbench has open. */
  get folder(): string {
    return this.codeServer.folder;
  }

  /** The workbench root element. */
  get workbench(): Locator {
    return this.page.locator('.monaco-workbench');
  }

  /** The extension host's log (the newest remoteexthost.log), '' until it exists. */
  extensionHostLog(): string {
    const [log] = this.cs.findExtensionHostLogs(this.codeServer.userDataDir);
    return log ? fs.readFileSync(log, 'utf8') : '';
  }

  /** Our output channel's log ("Token Shard Inspector", the extension's `log.info` lines), '' until it exists. */
  extensionLog(): string {
    const [log] = this.cs.findLogs(this.codeServer.userDataDir, /Token Shard Inspector\.log$/);
    return log ? fs.readFileSync(log, 'utf8') : '';
  }

  /** Waits until the extension host log contains `re` (e.g. our activation line). */
  async waitForExtensionHostLog(re: RegExp, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!re.test(this.extensionHostLog())) {
      if (Date.now() > deadline) throw new Error(`the extension host log never matched ${re} within ${timeoutMs / 1000} s`);
      await sleep(200);
    }
  }

  /** Waits until our extension has been activated in the extension host. */
  async waitForActivation(timeoutMs = 60_000): Promise<void> {
    await this.waitForExtensionHostLog(new RegExp(`_doActivateExtension ${EXTENSION_ID.replace(/\./g, '\\.')}\\b`, 'i'), timeoutMs);
  }

  /** Shows the Explorer view (idempotent) and returns its file tree. */
  async showExplorer(): Promise<Locator> {
    const tree = this.page.locator('.explorer-folders-view .monaco-list');
    if (!(await tree.isVisible())) {
      await this.page.keyboard.press('Control+Shift+E');
      await tree.waitFor({ state: 'visible', timeout: 15_000 });
    }
    return tree;
  }

  /** The explorer row of a file or folder by its name (the row's aria-label). */
  explorerRow(name: string): Locator {
    return this.page.locator(`.explorer-folders-view .monaco-list-row[aria-label="${cssString(name)}"]`);
  }

  /**
   * Opens a file by clicking through the Explorer as a person would: expands each folder in
   * `parts` (relative to the workspace folder) and clicks the file; resolves when its tab is active.
   */
  async openFileFromExplorer(...parts: string[]): Promise<void> {
    if (parts.length === 0) throw new Error('openFileFromExplorer: give at least a file name');
    await this.showExplorer();
    for (const folder of parts.slice(0, -1)) {
      const row = this.explorerRow(folder).first();
      await row.waitFor({ state: 'visible', timeout: 15_000 });
      if ((await row.getAttribute('aria-expanded')) !== 'true') {
        await row.click();
        await this.page.waitForFunction((el) => el?.getAttribute('aria-expanded') === 'true', await row.elementHandle(), {
          timeout: 10_000,
        });
      }
    }
    const file = parts[parts.length - 1];
    const row = this.explorerRow(file).first();
    await row.scrollIntoViewIfNeeded({ timeout: 15_000 });
    await row.click();
    await this.activeTab(file).waitFor({ state: 'visible', timeout: 15_000 });
  }

  /** The active editor tab, when its label is `name`. */
  activeTab(name: string): Locator {
    return this.page.locator(`.tabs-container .tab.active[data-resource-name="${cssString(name)}"]`);
  }

  /**
   * Opens the F1 palette, types `>title` and clicks the command of that title (e.g.
   * 'Token Shards: Go to Update…'); one try, no retry (see {@link palette}).
   */
  private async pickCommand(title: string): Promise<void> {
    const widget = this.page.locator('.quick-input-widget');
    await this.page.keyboard.press('F1');
    await widget.waitFor({ state: 'visible', timeout: 10_000 });
    const input = widget.locator('.quick-input-box input');
    await input.fill(`>${title}`, { timeout: 5_000 });
    const item = widget.locator('.quick-input-list .monaco-list-row').filter({ hasText: title }).first();
    await item.waitFor({ state: 'visible', timeout: 10_000 });
    await item.click({ timeout: 5_000 });
  }

  /**
   * The one mechanism behind every palette interaction. On a busy machine a webview that
   * finishes loading, or takes the focus late, closes the palette (or a command's input box)
   * while it is being typed into: then Escape, `prepare` (e.g. focus the view the command reads)
   * and `attempt` again (three tries in all). Resolves with what `attempt` returns.
   */
  private async palette<T>(what: string, attempt: () => Promise<T>, prepare?: () => Promise<void>): Promise<T> {
    for (let n = 1; ; n++) {
      try {
        await prepare?.();
        return await attempt();
      } catch (err) {
        if (n === 3) throw err;
        console.warn(`      (${what}: ${(err as Error).message.split('\n')[0]}; trying again)`);
        await this.page.keyboard.press('Escape');
      }
    }
  }

  /**
   * Runs a command through the F1 palette by its title as shown there (e.g.
   * 'Token Shards: Go to Update…'); resolves once the palette picked it (the command may then
   * show its own input box). A palette closed early is reopened ({@link palette}).
   */
  async runCommand(title: string, prepare?: () => Promise<void>): Promise<void> {
    await this.palette(title, () => this.pickCommand(title), prepare);
  }

  /**
   * The commands the F1 palette lists for `query`, top first (what Enter would run is the first),
   * as their labels read; closes the palette again. Through the one palette mechanism ({@link palette}).
   */
  async paletteCommands(query: string): Promise<string[]> {
    const widget = this.page.locator('.quick-input-widget');
    return this.palette(query, async () => {
      await this.page.keyboard.press('F1');
      await widget.waitFor({ state: 'visible', timeout: 10_000 });
      await widget.locator('.quick-input-box input').fill(`>${query}`, { timeout: 5_000 });
      const rows = widget.locator('.quick-input-list .monaco-list-row');
      await rows.first().waitFor({ state: 'visible', timeout: 10_000 });
      await this.page.waitForTimeout(300); // the list settles its order after the last keystroke
      const labels = await rows.locator('.label-name').allTextContents();
      await this.page.keyboard.press('Escape');
      return labels.map((l) => l.replace(/\s+/g, ' ').trim());
    });
  }

  /**
   * Runs `command`, waits for its own input box (titled with `title`, replacing the palette) and
   * hands the quick-input widget to `use` (checks and typing before Enter; it may run more than
   * once). A palette or input box closed early is reopened by running the command again
   * ({@link palette}). Resolves with what `use` returns.
   */
  async withInputBox<T>(command: string, title: string, use: (box: Locator) => Promise<T>, prepare?: () => Promise<void>): Promise<T> {
    const box = this.page.locator('.quick-input-widget');
    return this.palette(
      title,
      async () => {
        await this.pickCommand(command);
        await box.locator('.quick-input-title').filter({ hasText: title }).first().waitFor({ state: 'visible', timeout: 10_000 });
        return use(box);
      },
      prepare,
    );
  }

  /**
   * Runs "Token Shards: Go to Token Offset…" and types `offset` (a global offset); resolves with
   * the input box once it says it will go there, for the caller to press Enter.
   */
  async typeTokenOffset(offset: number): Promise<Locator> {
    return this.withInputBox('Token Shards: Go to Token Offset…', 'Go to Token Offset', async (box) => {
      const input = box.locator('.quick-input-box input');
      await input.fill(String(offset), { timeout: 5_000 });
      await box
        .locator('.quick-input-message')
        .filter({ hasText: offset.toLocaleString('en-US') })
        .first()
        .waitFor({ state: 'visible', timeout: 15_000 });
      return input;
    });
  }

  /**
   * The content of the visible webview (the last one in the DOM when several are visible). VS
   * Code puts each webview in an `iframe.webview.ready` whose inner `#active-frame` holds the
   * page; hidden editors' webviews stay in the DOM, so only visible ones count. With split
   * editors prefer {@link activeWebviewFrame}.
   */
  webviewFrame(): FrameLocator {
    return this.page.locator('iframe.webview.ready:visible').last().contentFrame().frameLocator('#active-frame');
  }

  /**
   * The content of the active editor group's webview: webview iframes live in an overlay outside
   * the editor groups, so the one whose centre lies inside the active group's editor area is
   * chosen. Falls back to {@link webviewFrame} when none matches.
   */
  async activeWebviewFrame(): Promise<FrameLocator> {
    const frames = this.page.locator('iframe.webview.ready');
    const index = await frames.evaluateAll((els) => {
      const area = document.querySelector('.editor-group-container.active .editor-container');
      if (!area) return -1;
      const a = area.getBoundingClientRect();
      return els.findIndex((el) => {
        const r = el.getBoundingClientRect();
        const x = r.left + r.width / 2;
        const y = r.top + r.height / 2;
        const visible = r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
        return visible && x >= a.left && x <= a.right && y >= a.top && y <= a.bottom;
      });
    });
    return index >= 0 ? frames.nth(index).contentFrame().frameLocator('#active-frame') : this.webviewFrame();
  }

  /**
   * Waits until the active editor's webview shows `selector` (default: its body) and returns
   * that webview's content frame.
   */
  async waitForWebview(selector = 'body', timeoutMs = 60_000): Promise<FrameLocator> {
    const deadline = Date.now() + timeoutMs;
    await this.page.locator('iframe.webview.ready:visible').first().waitFor({ state: 'visible', timeout: timeoutMs });
    const frame = await this.activeWebviewFrame();
    await frame
      .locator(selector)
      .first()
      .waitFor({ state: 'visible', timeout: Math.max(1_000, deadline - Date.now()) });
    return frame;
  }

  /** Hovers `target` (workbench or webview) and waits out VS Code's hover delay; returns the workbench hover widget. */
  async hover(target: Locator, { settleMs = 800 }: { settleMs?: number } = {}): Promise<Locator> {
    await target.scrollIntoViewIfNeeded();
    await target.hover();
    await sleep(settleMs);
    return this.page.locator('.monaco-hover:visible, .workbench-hover-container:visible').first();
  }

  /** Saves a PNG of the whole window into test-results/screenshots/<name>.png; returns its path. */
  async screenshot(name: string): Promise<string> {
    fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
    const file = path.join(SCREENSHOT_DIR, `${name.replace(/[^\w.-]+/g, '_')}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /**
   * Closes the browser and stops code-server. The temporary user data dir (with code-server's
   * and the extension host's logs) is removed unless `keepData` or TSI_KEEP_E2E_DATA=1.
   * Safe to call twice.
   */
  async close({ keepData = false }: { keepData?: boolean } = {}): Promise<void> {
    await this.browser.close().catch(() => undefined);
    await this.codeServer.stop();
    if (!keepData && process.env.TSI_KEEP_E2E_DATA !== '1') {
      fs.rmSync(path.dirname(this.codeServer.userDataDir), { recursive: true, force: true });
    }
  }

  /** The tails of the extension host and code-server logs, for a failure report. */
  diagnostics(): string {
    const hostLogs = this.cs.findExtensionHostLogs(this.codeServer.userDataDir);
    return [
      ...hostLogs.slice(0, 1).map((f) => `----- ${f} -----\n${this.cs.tailFile(f, 60)}`),
      `----- ${this.codeServer.logFile} -----\n${this.cs.tailFile(this.codeServer.logFile, 30)}`,
      this.errors.length ? `----- workbench errors -----\n${this.errors.slice(-20).join('\n')}` : '',
    ].join('\n');
  }
}

/**
 * Starts code-server with the packaged extension installed and `folder` open, opens the
 * workbench in Chromium and waits until the workbench is drawn and the extension host has
 * started (an editor opened before that falls back to the text editor).
 */
export async function launchWorkbench(options: LaunchOptions = {}): Promise<Workbench> {
  const folder = path.resolve(options.folder ?? SAMPLE_DIR);
  const vsix = path.resolve(options.vsix ?? VSIX_PATH);
  if (!fs.existsSync(vsix)) throw new Error(`${vsix} is missing: run \`npm run package\` (scripts/test-e2e.mjs does when it is stale)`);
  if (!fs.existsSync(folder)) throw new Error(`${folder} is missing: run \`npm run sample\``);
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  const cs = await codeServerModule();
  const t0 = Date.now();
  const phases: string[] = [];
  let tPhase = t0;
  const phase = (name: string) => {
    const now = Date.now();
    phases.push(`${name} ${((now - tPhase) / 1000).toFixed(1)} s`);
    tPhase = now;
  };
  const server = await cs.startCodeServer({
    folder,
    installVsix: vsix,
    settings: {
      'workbench.editor.enablePreview': false, // a clicked file keeps its tab while others open
      ...options.settings,
    },
  });
  phase('code-server (with the extension installed)');
  let browser: Browser | undefined;
  try {
    browser = await cs.launchChromium();
    phase('Chromium');
    const page = await browser.newPage({ viewport: options.viewport ?? { width: 1600, height: 1000 } });
    const wb = new Workbench(browser, page, server, cs);
    await page.goto(`${server.url}?folder=${encodeURIComponent(folder)}`, { waitUntil: 'domcontentloaded', timeout: readyTimeoutMs });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: readyTimeoutMs });
    phase('workbench drawn');
    // The extension host has started and finished its eager activations: custom editors of
    // installed extensions are known from here on.
    await wb.waitForExtensionHostLog(/Eager extensions activated/, readyTimeoutMs);
    await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ state: 'visible', timeout: readyTimeoutMs });
    phase('extension host and Explorer');
    // One line per launch: where the start-up time of a spec file goes.
    console.log(`      (workbench ready in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${phases.join(', ')})`);
    return wb;
  } catch (err) {
    const tail = cs.tailFile(server.logFile, 30);
    await browser?.close().catch(() => undefined);
    await server.stop();
    throw new Error(
      `the workbench did not become ready: ${err instanceof Error ? err.message : String(err)}\n----- ${server.logFile} -----\n${tail}`,
    );
  }
}

/**
 * `afterEach` body shared by the e2e suites: when the test just run failed, saves a screenshot
 * named after it and prints the workbench diagnostics (console errors, extension host log tail).
 */
export async function reportIfFailed(test: Mocha.Test | undefined, wb: Workbench | undefined): Promise<void> {
  if (test?.state !== 'failed' || !wb) return;
  const shot = await wb.screenshot(`FAILED-${test.fullTitle()}`).catch(() => undefined);
  if (shot) console.error(`    screenshot: ${shot}`);
  console.error(wb.diagnostics());
}
