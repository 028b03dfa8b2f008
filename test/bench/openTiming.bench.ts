/**
 * A benchmark, not a test (`npm test` does not run it): how long the shard editor takes to show
 * text, end to end in code-server, on
 * the full-scale layout of scripts/make-edge-docs.mjs (2,098 shards of 25,000,000 tokens): Go to
 * Token Offset into five different shards, one after the other, the first open of the session
 * first (after the extension's warm-up loaded the dataset and tokenizer). For each open it prints
 * the time from Enter in the input box to the first decoded text drawn in the webview (the
 * webview's clock, same machine), the extension's own timing line (the host log: ms after the
 * command asked for the open, per step), and the service-worker timeline of the open (CDP
 * `ServiceWorker` events, ms after Enter).
 *
 * Why the last: code-server's webview host page registers the webview service worker with the
 * webview's id in the script URL, and all webviews share one scope, so every webview installs a
 * new version (install → skipWaiting, activate → clients.claim) and writes our page only once
 * that version answers. When a previous version is active and has just handled an event (the new
 * host page's own navigation is in its scope), Chromium activates the new one only after the old
 * one reports no work, and then dispatches `activate` after a fixed 1 s delay
 * (`ServiceWorkerRegistration::ActivateWaitingVersion(delay)` in content/browser/service_worker).
 * So every open after the first in a session shows activating → activated ≈ 1,000 ms, and our
 * script starts just after `activated`; the first open has no previous version and no delay.
 *
 * Reports numbers — printed, and written to test-results/open-timing.json for the bench table
 * (scripts/bench/openTiming.mjs) — and asserts only that each open shows the target token and
 * logs its timing (no wall-clock limits; no service-worker events is reported, not a failure).
 *
 * Run with `npm run bench -- --only openTiming` (or `node scripts/test-e2e.mjs --bench`).
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { Page } from 'playwright-core';
import { launchWorkbench, REPO_ROOT, Workbench, reportIfFailed } from '../e2e/harness';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const EDGE_DIR = path.join(REPO_ROOT, 'edge-docs');
const fmt = (n: number) => n.toLocaleString('en-US');

/** One `ServiceWorker.workerVersionUpdated` entry: a worker version's state at `at` (epoch ms, this process's clock). */
interface SwEvent {
  at: number;
  versionId: string;
  /** The webview id in the worker's script URL (code-server's webview host page registers one version per webview). */
  webview: string;
  status: string;
  running: string;
}

/**
 * Records the browser's service-worker version updates (CDP `ServiceWorker` domain on the
 * workbench page's session), each stamped with `Date.now()` when it arrives. `error` says why
 * nothing is recorded when CDP refused.
 */
async function watchServiceWorkers(page: Page): Promise<{ events: SwEvent[]; error?: string }> {
  const events: SwEvent[] = [];
  try {
    const cdp = await page.context().newCDPSession(page);
    cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
      const at = Date.now();
      for (const v of versions) {
        let webview = '?';
        try {
          webview = new URL(v.scriptURL).searchParams.get('id') ?? '?';
        } catch {
          // keep '?'
        }
        events.push({ at, versionId: v.versionId, webview, status: v.status, running: v.runningStatus });
      }
    });
    await cdp.send('ServiceWorker.enable');
    return { events };
  } catch (err) {
    return { events, error: err instanceof Error ? err.message.split('\n')[0] : String(err) };
  }
}

/**
 * The service-worker part of one open's report: for each worker version that appeared after
 * `t0` (Enter), when its webview's host page started (`hostStarts`, by webview id) and when the
 * version reached each status (ms after Enter), the gaps installed → activating and activating →
 * activated, and when the version it replaced turned redundant (with its running status at Enter).
 */
function swTimeline(events: SwEvent[], t0: number, hostStarts: Map<string, number>): string {
  const recent = events.filter((e) => e.at >= t0);
  if (!recent.length) return 'no service-worker events';
  const before = events.filter((e) => e.at < t0);
  const known = new Set(before.map((e) => e.versionId));
  const fresh = [...new Set(recent.map((e) => e.versionId))].filter((v) => !known.has(v));
  const rel = (at: number | undefined) => (at === undefined ? '–' : `+${fmt(Math.round(at - t0))}`);
  const gap = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? '–' : `${fmt(b - a)} ms`);
  const parts = fresh.map((v) => {
    const mine = recent.filter((e) => e.versionId === v);
    const first = (status: string) => mine.find((e) => e.status === status)?.at;
    const statuses = ['new', 'installing', 'installed', 'activating', 'activated', 'redundant']
      .filter((st) => first(st) !== undefined)
      .map((st) => `${st} ${rel(first(st))}`)
      .join(', ');
    const host = hostStarts.get(mine[0].webview);
    return (
      `${host === undefined ? '' : `host page ${rel(host)}, `}version ${v} ${statuses}` +
      ` (installed → activating ${gap(first('installed'), first('activating'))}, activating → activated ${gap(first('activating'), first('activated'))})`
    );
  });
  const retired = [...new Set(recent.filter((e) => e.status === 'redundant' && known.has(e.versionId)).map((e) => e.versionId))].map(
    (v) => {
      const atEnter = before.filter((e) => e.versionId === v).pop()?.running ?? '?';
      return `previous version ${v} (${atEnter} at Enter) redundant ${rel(recent.find((e) => e.versionId === v && e.status === 'redundant')?.at)}`;
    },
  );
  return [...parts, ...retired].join('; ') || 'no new service-worker version';
}

/** When each webview host page in `page` started (its `performance.timeOrigin`, epoch ms), by webview id. */
async function hostPageStarts(page: Page): Promise<Map<string, number>> {
  const starts = new Map<string, number>();
  for (const f of page.frames()) {
    const id = /\/pre\/index\.html\?(?:.*&)?id=([^&]+)/.exec(f.url())?.[1];
    if (!id) continue;
    const origin = await f.evaluate(() => performance.timeOrigin).catch(() => undefined);
    if (origin !== undefined) starts.set(decodeURIComponent(id), origin);
  }
  return starts;
}

/** One open as written to {@link RESULTS_FILE}: times in ms. */
export interface OpenTiming {
  /** 1-based, in the order of the session. */
  open: number;
  /** Global token offset opened. */
  target: number;
  /** Enter in the input box → the first decoded text drawn (the webview's clock). */
  firstTextMs: number;
  /** The service-worker timeline of the open, as printed. */
  serviceWorker: string;
}

/** Where the measurements go (git-ignored test-results/). */
const RESULTS_FILE = path.join(REPO_ROOT, 'test-results', 'open-timing.json');

describe('bench: shard editor open timing', function () {
  this.timeout(600_000);
  let wb: Workbench | undefined;
  let storedTokens = 0;

  before(async () => {
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'make-edge-docs.mjs')], { cwd: REPO_ROOT, stdio: 'inherit' });
    storedTokens = (JSON.parse(fs.readFileSync(path.join(EDGE_DIR, 'edge-docs.json'), 'utf8')) as { storedTokens: number }).storedTokens;
    wb = await launchWorkbench({ folder: EDGE_DIR, viewport: { width: 1600, height: 1000 } });
  });

  afterEach(async function () {
    await reportIfFailed(this.currentTest, wb);
  });

  after(async () => {
    await wb?.close();
  });

  it('opens five full-size shards one after the other and reports Enter → first text for each', async () => {
    const w = wb!;
    const sw = await watchServiceWorkers(w.page);
    if (sw.error) console.log(`      (service-worker events not recorded: ${sw.error})`);
    // As a person would: the window has been open a few seconds, the extension has loaded the
    // dataset and its tokenizer ahead of the first open (its warm-up), or says why not.
    for (const deadline = Date.now() + 30_000; !/shard editor warm-up/.test(w.extensionLog()) && Date.now() < deadline;) await sleep(200);
    const shardTokens = 25_000_000;
    // Shard 0 inside the long line (real text), shard 2,096 (real text), then three shards of the run of id 0.
    const targets = [300_000, 52_400_300_000, 1_000 * shardTokens + 12_345, 1_500 * shardTokens + 12_345, 700 * shardTokens + 12_345];
    assert.ok(targets.every((t) => t < storedTokens));
    const results: OpenTiming[] = [];
    for (const [i, target] of targets.entries()) {
      const input = await w.typeTokenOffset(target);
      const t0 = Date.now();
      await input.press('Enter');
      const re = new RegExp(`shard editor open #${i + 1} .*timing (\\{.*\\})`);
      let m: RegExpExecArray | null = null;
      // The extension logs the line once the webview drew its first text; nothing here touches the
      // browser meanwhile (polling the page would slow the very thing measured).
      for (const deadline = Date.now() + 60_000; !m && Date.now() < deadline; await sleep(200)) m = re.exec(w.extensionLog());
      assert.ok(m, `open ${i + 1}: no timing line in the extension's log`);
      const frame = await w.activeWebviewFrame();
      const line = await frame.locator('.foot-pos').innerText();
      assert.ok(line.includes(`Token ${fmt(target)} `), `open ${i + 1}: the cursor line says ${line}`);
      // Waits up to 10 s for a token element: once the count came back 0 right after the cursor
      // line matched, while the screenshot taken next showed text.
      await frame
        .locator('.viewport .tok')
        .first()
        .waitFor({ state: 'attached', timeout: 10_000 })
        .catch(() => undefined);
      assert.ok(await frame.locator('.viewport .tok').count(), `open ${i + 1}: no token drawn`);
      const t = JSON.parse(m[1]) as Record<string, unknown>;
      const steps = Object.entries(t)
        .filter(([k, v]) => !['n', 'askedAt', 'resources'].includes(k) && typeof v === 'number')
        .map(([k, v]) => `${k} ${v}`)
        .join(' · ');
      const res = (t.resources as { name: string; at: number; ms: number; bytes: number }[])
        .map((r) => `${r.name} at ${r.at} ms, ${r.ms} ms, ${fmt(r.bytes)} B`)
        .join('; ');
      const firstTextMs = (t.askedAt as number) + (t.firstText as number) - t0;
      console.log(
        `      open ${i + 1}${i === 0 ? ' (first in the session)' : ''} at ${fmt(target)}: Enter → first text ${firstTextMs} ms; extension (ms after the command asked): ${steps}\n        resources: ${res}`,
      );
      await w.screenshot(`open-timing-${i + 1}`);
      // Let the open settle (the shard's document count runs in the background) before the next.
      await sleep(3_000);
      // What code-server's webview host page waited for before it wrote our page: a new version of
      // the one webview service worker (see the header).
      const serviceWorker = swTimeline(sw.events, t0, await hostPageStarts(w.page));
      console.log(`        service worker (ms after Enter): ${serviceWorker}`);
      results.push({ open: i + 1, target, firstTextMs, serviceWorker });
    }
    fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
    fs.writeFileSync(RESULTS_FILE, JSON.stringify(results, null, 2) + '\n');
  });
});
