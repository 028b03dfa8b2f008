/**
 * The shard editor on edge documents, end to end in code-server: the dataset made by
 * scripts/make-edge-docs.mjs (2,098 shards in the real layout, edge content at the start of shard
 * 0 and of shard 2,096). Checks, against the script's record (edge-docs.json), the dataset card's
 * Python reader and the tokenizer library:
 * - every invisible character of the list shows as its own boxed mark, with its code point
 *   in the tooltip, in the Documents and Tokens views, and copying gives the original characters;
 * - the chips of an Arabic line are in token order left to right, while the Documents view lays the
 *   line out right to left;
 * - switching views keeps the cursor token visible at the same height, at three depths (inside a
 *   520,000-token line, deep in the dataset in text, deep in a 25M-token run without EOS);
 * - the status bar and the cursor line agree, and the status bar never shows an intermediate state;
 * - nothing essential is cut at 1280×800 and 1600×1000 (element scrollWidth vs clientWidth).
 *
 * Run with `node scripts/test-e2e.mjs --grep "edge documents"`.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { FrameLocator } from 'playwright-core';
import { launchWorkbench, REPO_ROOT, Workbench, reportIfFailed, until } from './harness';
import { loadTokenizer, LoadedTokenizer } from '../../src/core/tokenizer';
import { pyTokens } from '../unit/pyref';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const EDGE_DIR = path.join(REPO_ROOT, 'edge-docs');
const fmt = (n: number) => n.toLocaleString('en-US');

interface EdgeLine {
  start: number;
  text?: string;
  chars: number[];
}
interface EdgeDoc {
  name: string;
  start: number;
  end: number;
  lines: EdgeLine[];
}
interface EdgeInfo {
  storedTokens: number;
  contentStarts: { first: number; deep: number };
  deepShard: string;
  documents: EdgeDoc[];
}

const cp = (c: number) => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;

describe('e2e: shard editor on edge documents', function () {
  this.timeout(900_000);
  let wb: Workbench | undefined;
  let info: EdgeInfo;
  let tok: LoadedTokenizer;
  let frame: FrameLocator;
  const doc = (name: string) => info.documents.find((d) => d.name === name)!;

  before(async () => {
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'make-edge-docs.mjs')], { cwd: REPO_ROOT, stdio: 'inherit' });
    info = JSON.parse(fs.readFileSync(path.join(EDGE_DIR, 'edge-docs.json'), 'utf8')) as EdgeInfo;
    tok = await loadTokenizer(path.join(EDGE_DIR, 'tokenizer', 'tokenizer.json'));
    wb = await launchWorkbench({ folder: EDGE_DIR, viewport: { width: 1600, height: 1000 } });
  });

  afterEach(async function () {
    await reportIfFailed(this.currentTest, wb);
  });

  after(async () => {
    await wb?.close();
  });

  /** Go to Token Offset… through the palette (global offset); waits for the cursor line to say it. */
  async function goTo(global: number): Promise<FrameLocator> {
    const w = wb!;
    const input = await w.typeTokenOffset(global);
    await input.press('Enter');
    const f = await until(
      async () => {
        const fr = await w.activeWebviewFrame();
        return (await fr.locator('.foot-pos').innerText()).includes(`Token ${fmt(global)} `) ? fr : undefined;
      },
      `cursor at ${fmt(global)}`,
      60_000,
    );
    frame = f;
    return f;
  }

  async function clickView(view: 'documents' | 'tokens' | 'ids'): Promise<void> {
    await frame.locator(`vscode-tab-header[data-view="${view}"]`).click();
    await until(async () => (await frame.locator('body').getAttribute('data-view')) === view, `view ${view}`);
    await sleep(400);
  }

  /** Invisible-character marks rendered inside local tokens [start, end), paging down until `end` is drawn. */
  async function collectMarks(
    start: number,
    end: number,
  ): Promise<Map<string, { mark: string; title: string; ch: string; width: number }>> {
    const w = wb!;
    const got = new Map<string, { mark: string; title: string; ch: string; width: number }>();
    for (let i = 0; i < 60; i++) {
      const marks = await frame.locator('.viewport .tok .inv').evaluateAll((els) =>
        els.map((e) => {
          const el = e as HTMLElement;
          const o = Number((el.closest('.tok') as HTMLElement).dataset.o);
          return {
            o,
            mark: el.dataset.mark ?? '',
            title: el.title,
            ch: el.querySelector('.inv-ch')?.textContent ?? '',
            width: el.getBoundingClientRect().width,
          };
        }),
      );
      for (const m of marks) if (m.o >= start && m.o < end) got.set(`${m.o}:${m.title}`, m);
      if (await frame.locator(`.viewport .tok[data-o="${end - 1}"]`).count()) break;
      await frame.locator('.viewport').focus();
      await w.page.keyboard.press('PageDown');
      await sleep(250);
    }
    return got;
  }

  it('shows each invisible character as its own boxed mark with its code point, in Documents and Tokens; copying gives the originals', async () => {
    const w = wb!;
    const d = doc('invisibles');
    await goTo(info.contentStarts.first + d.start);
    const all = d.lines.flatMap((l) => l.chars);
    // The Tokens view shows a token's own text: a character whose bytes the tokenizer split over
    // several tokens shows as those bytes (`<E2 80>` …), so marks are expected for the characters
    // that sit whole inside one token (from the reader's ids and the tokenizer's pieces).
    const whole: number[] = [];
    d.lines.forEach((l, i) => {
      const end = i + 1 < d.lines.length ? d.lines[i + 1].start : d.end - 1;
      const pieces = tok.pieces(pyTokens(EDGE_DIR, info.contentStarts.first + l.start, end - l.start));
      for (const c of l.chars) if (pieces.some((p) => p.kind !== 'partial' && p.text.includes(String.fromCodePoint(c)))) whole.push(c);
    });
    assert.ok(whole.length >= 10, `${whole.length} characters sit whole in a token`);
    for (const view of ['documents', 'tokens'] as const) {
      const expected = view === 'documents' ? all : whole;
      await clickView(view);
      await frame.locator('.viewport').focus();
      await w.page.keyboard.press('Home');
      await sleep(500);
      const marks = [...(await collectMarks(d.start, d.end)).values()];
      const labels = new Map<number, string>();
      for (const c of expected) {
        const m = marks.find((x) => x.title.startsWith(`${cp(c)} `));
        assert.ok(m, `${view}: no mark for ${cp(c)}; marks: ${marks.map((x) => x.title).join(', ')}`);
        assert.strictEqual(m.ch, String.fromCodePoint(c), `${view}: the mark of ${cp(c)} holds the original character`);
        assert.ok(m.width >= 8, `${view}: the mark of ${cp(c)} is drawn (${m.width}px wide)`);
        labels.set(c, m.mark);
      }
      assert.strictEqual(new Set(labels.values()).size, expected.length, `${view}: every character has a distinct label`);
      if (view === 'documents') {
        await w.page.keyboard.press('Home');
        await sleep(500);
        await w.screenshot('shard-editor-invisibles');
      }
    }
    // Copy three lines (a zero-width space, a non-joiner, a joiner) with shift+click, then Ctrl+C.
    await clickView('documents');
    await w.page.keyboard.press('Home');
    await sleep(500);
    await w.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(w.page.url()).origin });
    const a = d.lines[0].start,
      b = d.lines[3].start - 1;
    await frame.locator(`.viewport .tok.tx[data-o="${a}"]`).click();
    await frame
      .locator(`.viewport .tok[data-o="${b}"]`)
      .first()
      .click({ modifiers: ['Shift'] });
    await w.page.keyboard.press('Control+C');
    const ids = pyTokens(EDGE_DIR, info.contentStarts.first + a, b + 1 - a);
    const text = await tok.libraryDecode(ids);
    assert.ok(text.includes('\u200b') && text.includes('\u200c') && text.includes('\u200d'));
    await until(
      async () => (await w.page.evaluate(() => navigator.clipboard.readText())) === text,
      `clipboard = ${JSON.stringify(text)}`,
      10_000,
    );
    await frame.locator('.viewport').focus();
    await w.page.keyboard.press('Escape');
  });

  it('keeps the chips of an Arabic line in token order, and the Documents view lays it out right to left', async () => {
    const d = doc('rtl');
    const line = d.lines[1];
    const end = d.lines[2].start;
    await goTo(info.contentStarts.first + line.start);
    const positions = async (sel: string) =>
      frame.locator(sel).evaluateAll(
        (els, [s, e]) =>
          els
            .map((el) => ({ o: Number((el as HTMLElement).dataset.o), r: el.getBoundingClientRect() }))
            .filter((x) => x.o >= s && x.o < e)
            .sort((x, y) => x.o - y.o)
            .map((x) => ({ o: x.o, x: x.r.left, y: x.r.top })),
        [line.start, end],
      );
    await clickView('tokens');
    const chips = await until(async () => {
      const p = await positions('.viewport .tok.chip');
      return p.length >= end - line.start - 1 ? p : undefined;
    }, 'chips of the Arabic line');
    let pairs = 0;
    for (let i = 1; i < chips.length; i++) {
      if (Math.abs(chips[i].y - chips[i - 1].y) > 2) continue; // wrapped onto the next row
      assert.ok(
        chips[i].x > chips[i - 1].x,
        `chip ${chips[i].o} (x ${chips[i].x}) is right of chip ${chips[i - 1].o} (x ${chips[i - 1].x})`,
      );
      pairs++;
    }
    assert.ok(pairs >= 10, `compared ${pairs} chip pairs`);
    await wb!.screenshot('shard-editor-rtl-tokens');
    await clickView('documents');
    const text = await until(async () => {
      const p = await positions('.viewport .tok.tx');
      return p.length >= 10 ? p : undefined;
    }, 'Arabic text tokens');
    const firstRow = text.filter((t) => Math.abs(t.y - text[0].y) <= 2);
    assert.ok(
      firstRow.length >= 3 && firstRow[0].x > firstRow[firstRow.length - 1].x,
      'the Arabic line runs right to left in the Documents view',
    );
    await wb!.screenshot('shard-editor-rtl-documents');
  });

  /** The cursor token's top relative to the viewport, once it is drawn. */
  async function cursorY(): Promise<number> {
    return until(
      async () =>
        frame.locator('.viewport').evaluate((vp) => {
          const c = vp.querySelector('.tok.cur');
          if (!c) return undefined;
          const r = c.getBoundingClientRect(),
            v = vp.getBoundingClientRect();
          return r.bottom > v.top && r.top < v.bottom ? r.top - v.top + 1 : undefined; // +1: never 0 (falsy)
        }),
      'the cursor token in view',
    );
  }

  /** The status bar item's text, and the cursor line's. */
  async function statusAndCursorLine(): Promise<{ status: string; line: string }> {
    const status = (
      await wb!.page
        .locator('.statusbar-item')
        .filter({ hasText: /Token [0-9,]+/ })
        .first()
        .innerText()
    ).trim();
    return { status, line: (await frame.locator('.foot-pos').innerText()).trim() };
  }

  for (const depth of [
    'inside the 520,000-token line',
    'deep in the dataset (shard 2,096), in text',
    'deep in the dataset, 20M tokens into a run without EOS',
  ] as const) {
    it(`switching views keeps the cursor token at the same height: ${depth}; status bar and cursor line agree`, async () => {
      const long = doc('long-line');
      const target = depth.startsWith('inside')
        ? info.contentStarts.first + long.start + 300_000
        : depth.includes('text')
          ? info.contentStarts.deep + long.start + 10_000
          : info.contentStarts.deep + 20_000_000;
      // Record every text the status bar item shows while navigating: every DOM change of the status
      // bar (MutationObserver) and a sample every animation frame, so no painted state is missed.
      await wb!.page.evaluate(() => {
        const w = window as unknown as { __tsiStatus: string[]; __tsiObs?: MutationObserver; __tsiRaf?: number };
        w.__tsiStatus = [];
        w.__tsiObs?.disconnect();
        if (w.__tsiRaf) cancelAnimationFrame(w.__tsiRaf);
        const bar = document.querySelector('.statusbar')!;
        const sample = () => {
          for (const el of bar.querySelectorAll('.statusbar-item')) {
            const t = (el as HTMLElement).innerText.trim();
            if (/Token [0-9,]+/.test(t) && w.__tsiStatus[w.__tsiStatus.length - 1] !== t) w.__tsiStatus.push(t);
          }
        };
        w.__tsiObs = new MutationObserver(sample);
        w.__tsiObs.observe(bar, { subtree: true, childList: true, characterData: true, attributes: true });
        const frame = () => {
          sample();
          w.__tsiRaf = requestAnimationFrame(frame);
        };
        frame();
      });
      const before = await wb!.page
        .locator('.statusbar-item')
        .filter({ hasText: /Token [0-9,]+/ })
        .first()
        .innerText()
        .catch(() => '');
      await goTo(target);
      await clickView('documents');
      const y0 = await cursorY();
      for (const v of ['tokens', 'documents', 'ids', 'documents', 'tokens'] as const) {
        await clickView(v);
        const y = await cursorY();
        assert.ok(Math.abs(y - y0) <= 30, `${depth}: after switching to ${v} the cursor is at ${y}px, was ${y0}px`);
        assert.ok(
          (await frame.locator('.foot-pos').innerText()).includes(`Token ${fmt(target)} `),
          `${depth}: cursor line still at ${fmt(target)}`,
        );
      }
      await wb!.screenshot(
        `shard-editor-switch-${depth.startsWith('inside') ? 'long-line' : depth.includes('text') ? 'deep-text' : 'deep-run'}`,
      );
      // The status bar says what the cursor line says: token, update/seq/pos and document.
      const { status, line } = await until(async () => {
        const s = await statusAndCursorLine();
        return s.status.includes(`Token ${fmt(target)}`) && (!/ doc /.test(s.line) || / doc /.test(s.status)) ? s : undefined;
      }, 'status bar at the cursor');
      const pos = /update [0-9,]+ · seq [0-9,]+ · pos [0-9,]+/.exec(line)?.[0];
      assert.ok(pos && status.includes(pos), `status "${status}" vs cursor line "${line}"`);
      const docInLine = / doc (\+?[0-9,]+)/.exec(line)?.[1];
      const docInStatus = / doc (\+?[0-9,]+)/.exec(status)?.[1];
      assert.strictEqual(docInStatus, docInLine, `status "${status}" vs cursor line "${line}"`);
      const seen = await wb!.page.evaluate(() => {
        const w = window as unknown as { __tsiStatus: string[]; __tsiObs?: MutationObserver; __tsiRaf?: number };
        w.__tsiObs?.disconnect();
        if (w.__tsiRaf) cancelAnimationFrame(w.__tsiRaf);
        return w.__tsiStatus;
      });
      // No intermediate state: until the target shows, only what was there before;
      // from then on, only the target (never the new shard's first token, never the previous place).
      const firstAtTarget = seen.findIndex((t) => t.includes(`Token ${fmt(target)} `));
      assert.ok(firstAtTarget >= 0, `the status bar never showed Token ${fmt(target)}: ${JSON.stringify(seen)}`);
      const wrong = seen.filter((t, i) => (i < firstAtTarget ? t !== before.trim() : !t.includes(`Token ${fmt(target)} `)));
      assert.deepStrictEqual(wrong, [], `the status bar passed through other positions on its way to ${fmt(target)}`);
      // Never the position without its document first (the document number must not flash in later).
      if (/ doc /.test(status))
        for (const t of seen.filter((x) => x.includes(`Token ${fmt(target)}`)))
          assert.ok(/ doc /.test(t), `status went through "${t}" before "${status}"`);
    });
  }

  for (const size of [
    { width: 1280, height: 800 },
    { width: 1600, height: 1000 },
  ]) {
    it(`nothing essential is cut at ${size.width}×${size.height}: cursor line, footer, separators, end-of-shard bar, manifest table`, async () => {
      const w = wb!;
      await w.page.setViewportSize(size);
      await sleep(800);
      const long = doc('long-line');
      await goTo(info.contentStarts.first + doc('rtl').start);
      await clickView('documents');
      // Highlight the update at the cursor (the footer then holds three parts).
      await frame.locator('vscode-toolbar-button[icon="symbol-color"]').click();
      await until(async () => /Highlighted: update/.test(await frame.locator('.foot-hl').innerText()), 'highlight');
      await sleep(500);
      const cut = (sel: string) =>
        frame
          .locator(sel)
          .evaluateAll((els) =>
            els
              .filter((e) => (e as HTMLElement).offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
              .map((e) => `${e.className}: "${(e.textContent ?? '').slice(0, 80)}" ${e.scrollWidth}>${e.clientWidth}`),
          );
      assert.deepStrictEqual(await cut('.footer > span, .blk.sep .next, .blk.sep'), [], 'footer and separators');
      await w.screenshot(`shard-editor-layout-${size.width}`);
      await frame.locator('vscode-toolbar-button[icon="symbol-color"]').click();
      // The end-of-shard bar at the end of shard 0 (last token of the shard), wholly inside the viewport.
      await frame.locator('.viewport').focus();
      await w.page.keyboard.press('End');
      const edge = frame.locator('.viewport .edge.end');
      await edge.waitFor({ state: 'visible', timeout: 30_000 });
      await sleep(500);
      const inside = await frame.locator('.viewport').evaluate((vp) => {
        const e = vp.querySelector('.edge.end')!.getBoundingClientRect(),
          v = vp.getBoundingClientRect();
        return e.top >= v.top - 1 && e.bottom <= v.bottom + 1 && e.right <= v.right + 1;
      });
      assert.ok(inside, 'the end-of-shard bar is wholly visible');
      assert.deepStrictEqual(await cut('.edge .edge-text'), [], 'end-of-shard bar text');
      await w.screenshot(`shard-editor-end-${size.width}`);
      // Tokens view inside the 520,000-token line: chip rows wrap between chips, no chip runs past
      // its block's right edge (nor the viewport's), and every chip's row stays whole (one box).
      await goTo(info.contentStarts.first + long.start + 1_000);
      await clickView('tokens');
      const chips = await until(
        async () =>
          frame.locator('.viewport').evaluate((vp) => {
            const v = vp.getBoundingClientRect();
            const all = [...vp.querySelectorAll('.tok.chip')].filter((c) => {
              const r = c.getBoundingClientRect();
              return r.bottom > v.top && r.top < v.bottom;
            });
            if (all.length < 100) return undefined;
            const past = all
              .map((c) => {
                const r = c.getBoundingClientRect(),
                  b = c.closest('.blk')!.getBoundingClientRect();
                return r.right > b.right + 0.5 || r.right > v.right + 0.5 || c.getClientRects().length !== 1
                  ? `chip ${(c as HTMLElement).dataset.o} "${c.textContent}" ${r.left}–${r.right} (block right ${b.right}, viewport right ${v.right}, ${c.getClientRects().length} boxes)`
                  : '';
              })
              .filter(Boolean);
            const rows = new Set(all.map((c) => Math.round(c.getBoundingClientRect().top))).size;
            const blocks = new Set(all.map((c) => c.closest('.blk'))).size;
            return { count: all.length, past, rows, blocks };
          }),
        'chips of the long line',
      );
      assert.deepStrictEqual(chips.past, [], `chips past the right edge at ${size.width}×${size.height}`);
      assert.ok(chips.rows > chips.blocks, `the long line's chip blocks wrap (${chips.rows} rows for ${chips.blocks} blocks)`);
      await w.screenshot(`shard-editor-tokens-wrap-${size.width}`);
      await clickView('documents');
      // Manifest table: no cell cut, and the file column shows the shard's digits.
      await w.runCommand('Token Shards: Open Shard Manifest Table');
      const mf = await w.waitForWebview('.mf-grid', 60_000);
      await mf.locator('.mf-spacer > .mf-row').first().waitFor({ state: 'visible', timeout: 30_000 });
      await sleep(500);
      const cells = await mf
        .locator('.mf-spacer > .mf-row:not([hidden]) .mf-cell:not(.mf-file), .mf-colheads .mf-cell')
        .evaluateAll((els) =>
          els
            .filter(
              (e) =>
                (e as HTMLElement).offsetParent !== null && getComputedStyle(e).display !== 'none' && e.scrollWidth > e.clientWidth + 1,
            )
            .map((e) => `"${e.textContent}" ${e.scrollWidth}>${e.clientWidth}`),
        );
      assert.deepStrictEqual(cells, [], 'manifest cells');
      const digits = await mf.locator('.mf-spacer > .mf-row:not([hidden]) .mf-cell.mf-file').evaluateAll((els) =>
        els.map((cell) => {
          const text = cell.querySelector('.mf-path')!.firstChild as Text;
          const r = document.createRange();
          r.setStart(text, text.length - 10);
          r.setEnd(text, text.length);
          const a = r.getBoundingClientRect(),
            c = cell.getBoundingClientRect();
          return a.left >= c.left - 1 && a.right <= c.right + 1
            ? ''
            : `${text.data} (digits at ${a.left}–${a.right}, cell ${c.left}–${c.right})`;
        }),
      );
      assert.deepStrictEqual(digits.filter(Boolean), [], 'the last 10 characters of every file name are visible');
      const lastCol = await mf
        .locator('.mf-colheads .mf-cell')
        .last()
        .evaluate((e) => {
          const r = e.getBoundingClientRect();
          return r.right <= document.documentElement.clientWidth + 1;
        });
      assert.ok(lastCol, 'the last column is inside the window');
      await w.screenshot(`manifest-table-${size.width}`);
    });
  }

  it('numbering documents in the 2,096 earlier shards shows progress with the rate and the time left', async () => {
    const w = wb!;
    await w.page.setViewportSize({ width: 1600, height: 1000 });
    await goTo(info.contentStarts.deep + doc('long-line').start + 10_000);
    const button = frame.locator('.foot-num vscode-button').filter({ hasText: 'Count documents in earlier shards' });
    await button.waitFor({ state: 'visible', timeout: 60_000 });
    await button.click();
    // The words of every progress line (src/core/units.ts formatRateAndTimeLeft): "… · 1.62 GB/s · 2 min 10 s left".
    const line = await until(
      async () => {
        const t = (await frame.locator('.foot-num').innerText()).trim();
        return /Counting documents in earlier shards: [0-9,]+ of 2,096 · [0-9.]+ (GB|MB|kB)\/s · [0-9.]+ (ms|s|min|h)( [0-9]+ (s|min))? left/.test(
          t,
        )
          ? t
          : undefined;
      },
      'numbering progress with rate and time left',
      60_000,
    );
    console.log(`      footer: ${line}`);
    await w.screenshot('shard-editor-numbering-progress');
    // Closing the editor stops the count.
    await w.runCommand('View: Close Editor');
  });
});
