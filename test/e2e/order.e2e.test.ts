/**
 * End-to-end: "update k" through a run's training order. One workbench opened on a Megatron
 * dataset folder (`text_document.bin` + `.idx`, the sample's tokenizer, and a `run.json` pointing
 * at the run's cached `document_index`/`sample_index`/`shuffle_index` files), all made by
 * scripts/make-order-fixtures.py (a Python port of Megatron's index building) from the sample
 * dataset. Go to Update k, for the first update, the one across the epoch boundary and the last,
 * shows the run's samples in batch order: each row's sample number and decoded text equal
 * `token-shards update ROOT k --run run.json --json` (whose ids are checked against the fixture
 * script's reference batch), decoded with the tokenizer library. Enter on a row opens the
 * sample's first token in the shard editor, and the status bar names the update and sample
 * `token-shards locate ROOT OFFSET --json` gives for that token. The shard editor's own cursor
 * line (webview) names the same reads: for fixture tokens read once and twice (the fixture
 * script's brute-force reads of its probes), the line's update/sample/pos and "+N reads" and its
 * tooltip's list of every read equal the CLI's `reads`, and the update highlight names the
 * CLI's `update k` samples; after run.json is replaced by a shorter run, a token the CLI says
 * that run never read is shown as "not read by the run". Screenshots:
 * test-results/screenshots/update-view-megatron-order.png and shard-editor-megatron-order.png
 * (the README's media/screenshots/).
 *
 * Run with `node scripts/test-e2e.mjs --grep "training order"`.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadTokenizer } from '../../src/core/tokenizer';
import { fmt, ordinalSuffix } from '../../src/core/units';
import { launchWorkbench, REPO_ROOT, SAMPLE_DIR, Workbench, reportIfFailed, until } from './harness';

/** One sample of `token-shards update ROOT k --run FILE --json`. */
interface CliSample {
  slot: number;
  sample: number;
  ranges: [number, number][];
  input_ids: number[];
  target_ids: number[];
}

/** The fixture script's Megatron run (OUT/reference.json `megatron.two-epochs`). */
interface MegatronReference {
  sequence_length: number;
  seed: number;
  global_batch_size: number;
  train_iters: number;
  steps: Record<string, number[][]>;
  /** Brute-force reads of the probe offsets: `[update, slot, position]`, sorted. */
  reads: Record<string, [number, number, number][]>;
}

/** One read of `token-shards locate ROOT OFFSET --run FILE --json`. */
interface CliRead {
  update: number;
  slot: number;
  sample: number;
  position: number;
  target: boolean;
}

/** Runs the CLI (dist/cli.js) and parses its JSON output. */
function cli<T>(...args: string[]): T {
  return JSON.parse(
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'dist', 'cli.js'), ...args], { encoding: 'utf8', maxBuffer: 1 << 28 }),
  ) as T;
}

describe('e2e: training order (Megatron run) → Go to Update, update view, status bar', function () {
  this.timeout(600_000);
  let wb: Workbench | undefined;
  let tmp = '';
  let root = '';
  let runFile = '';
  let ref: MegatronReference;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-order-e2e-'));
    execFileSync('python3', [path.join(REPO_ROOT, 'scripts', 'make-order-fixtures.py'), SAMPLE_DIR, tmp], { stdio: 'inherit' });
    root = path.join(tmp, 'megatron');
    fs.cpSync(path.join(SAMPLE_DIR, 'tokenizer'), path.join(root, 'tokenizer'), { recursive: true });
    ref = (JSON.parse(fs.readFileSync(path.join(tmp, 'reference.json'), 'utf8')) as { megatron: Record<string, MegatronReference> })
      .megatron['two-epochs'];
    // The run's cache lives outside the opened folder, as a training job's checkpoint folder does
    // (its .npy index files would otherwise be offered as datasets of their own).
    const cache = path.join(tmp, 'checkpoints', 'cache');
    fs.mkdirSync(path.dirname(cache), { recursive: true });
    fs.renameSync(path.join(root, 'run-two-epochs', 'cache'), cache);
    fs.rmSync(path.join(root, 'run-two-epochs'), { recursive: true });
    fs.rmSync(path.join(root, 'run-three-epochs'), { recursive: true });
    runFile = path.join(root, 'run.json');
    fs.writeFileSync(
      runFile,
      JSON.stringify({
        order: 'megatron',
        cache,
        global_batch_size: ref.global_batch_size,
        train_iters: ref.train_iters,
      }),
    );
    wb = await launchWorkbench({ folder: root });
  });

  afterEach(async function () {
    await reportIfFailed(this.currentTest, wb);
  });

  after(async () => {
    await wb?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** Runs Go to Update, types `k`, presses Enter; resolves with the update view once all its rows are in. */
  async function goToUpdate(w: Workbench, k: number) {
    const input = await w.withInputBox('Token Shards: Go to Update…', 'Go to Update (0-based)', async (b) => {
      const i = b.locator('.quick-input-box input');
      await i.fill(String(k), { timeout: 5_000 });
      await b
        .locator('.quick-input-message')
        .filter({ hasText: `update ${fmt(k)}` })
        .first()
        .waitFor({ state: 'visible', timeout: 60_000 });
      return i;
    });
    await input.press('Enter');
    const frame = await w.waitForWebview('h1', 60_000);
    await frame
      .locator('h1')
      .filter({ hasText: new RegExp(`^Update ${fmt(k)}\\b`) })
      .waitFor({ state: 'visible', timeout: 60_000 });
    await frame.locator(`.rows > .row[data-row="${ref.global_batch_size - 1}"]`).waitFor({ state: 'attached', timeout: 60_000 });
    return frame;
  }

  it('Go to Update k (first, epoch boundary, last) shows the CLI’s samples in batch order, text for text', async () => {
    const w = wb!;
    const tok = await loadTokenizer(path.join(root, 'tokenizer', 'tokenizer.json'));
    const steps = Object.keys(ref.steps).map(Number);
    assert.deepStrictEqual(steps.length, 3, 'the fixture gives the first step, one across the epoch boundary, and the last');
    assert.strictEqual(steps[steps.length - 1], ref.train_iters - 1);
    for (const k of steps) {
      const want = cli<{ samples: CliSample[] }>('update', root, String(k), '--run', runFile, '--json').samples;
      // The CLI's batch is the Megatron port's batch, id for id (inputs, then the extra target token).
      assert.deepStrictEqual(
        want.map((s) => [...s.input_ids, s.target_ids[s.target_ids.length - 1]]),
        ref.steps[String(k)],
        `CLI update ${k} vs the fixture's reference`,
      );
      const frame = await goToUpdate(w, k);
      const rows = frame.locator('.rows > .row');
      assert.strictEqual(await rows.count(), want.length, `update ${k}: one row per sample`);
      for (const s of want) {
        const row = frame.locator(`.rows > .row[data-row="${s.slot}"]`);
        assert.match(
          (await row.locator('.gutter .off').textContent()) ?? '',
          new RegExp(`^sample ${fmt(s.sample)} · `),
          `update ${k} slot ${s.slot}`,
        );
        assert.strictEqual(
          await row.locator('.text').textContent(),
          await tok.libraryDecode(s.input_ids),
          `update ${k} slot ${s.slot} text`,
        );
      }
      // The legend names the sample's own next token (its L + 1st), not the card's.
      const L = want[0].input_ids.length;
      const legend = (await frame.locator('.legend').textContent()) ?? '';
      assert.ok(legend.includes(`the ${fmt(L + 1)}${ordinalSuffix(L + 1)} token: target of the last position`), legend);
      if (k === steps[1]) {
        await w.runCommand('Notifications: Clear All Notifications');
        await w.page.waitForTimeout(800); // let fonts and the first screen settle for the picture
        const file = await w.screenshot('update-view-megatron-order');
        await w.page.locator('.part.editor').screenshot({ path: path.join(path.dirname(file), 'update-view-megatron-order-editor.png') });
      }
    }
  });

  it('Enter on a row opens the sample’s first token; the status bar names the update and sample the CLI’s locate gives', async () => {
    const w = wb!;
    const k = ref.train_iters - 1;
    const slot = 3;
    const frame = await w.activeWebviewFrame();
    await frame.locator(`.rows > .row[data-row="${slot}"] .gutter`).click();
    await w.page.keyboard.press('Enter');
    const s = cli<{ samples: CliSample[] }>('update', root, String(k), '--run', runFile, '--json').samples[slot];
    const at = cli<{ reads: { update: number; sample: number }[] }>('locate', root, String(s.ranges[0][0]), '--run', runFile, '--json');
    assert.ok(
      at.reads.some((r) => r.update === k && r.sample === s.sample),
      'the CLI says update k read this token in this sample',
    );
    const first = at.reads[0];
    const where = `Token ${fmt(s.ranges[0][0])} · update ${fmt(first.update)} · sample ${fmt(first.sample)}`; // src/editor/statusBar.ts statusText
    await w.page.locator('.statusbar-item').filter({ hasText: where }).first().waitFor({ state: 'visible', timeout: 60_000 });
  });

  /** Go to Token Offset `t` in the open shard editor; resolves with the webview once its cursor line names `t` and the run's answer (not `update …`). */
  async function cursorLineAt(w: Workbench, t: number) {
    const input = await w.typeTokenOffset(t);
    await input.press('Enter');
    return until(
      async () => {
        const frame = await w.activeWebviewFrame();
        const line = (await frame.locator('.foot-pos').innerText()).trim();
        return line.includes(`Token ${fmt(t)} `) && !line.includes('update …') ? { frame, line } : undefined;
      },
      `the cursor line at token ${fmt(t)} with the run's reads`,
      60_000,
    );
  }

  /** The cursor-line words for the CLI's reads (src/core/order/orderText.ts readsLine, as documented there). */
  function expectedWords(reads: CliRead[]): string {
    if (reads.length === 0) return 'not read by the run';
    const r = reads[0];
    const words = [`update ${fmt(r.update)}`, `sample ${fmt(r.sample)}`, r.target ? 'target' : `pos ${fmt(r.position)}`];
    if (reads.length > 1) words.push(`+${fmt(reads.length - 1)} reads`);
    return words.join(' · ');
  }

  it('the shard editor’s cursor line and update highlight follow the run’s order: the CLI’s locate and update, read for read', async () => {
    const w = wb!;
    const once = Object.keys(ref.reads).find((t) => ref.reads[t].length === 1 && Number(t) > 0)!;
    const twice = Object.keys(ref.reads).find((t) => ref.reads[t].length === 2)!;
    assert.ok(once && twice, 'the fixture has probes read once and twice');
    for (const t of [Number(once), Number(twice)]) {
      const at = cli<{ reads: CliRead[] }>('locate', root, String(t), '--run', runFile, '--json');
      // The CLI's reads are the fixture script's brute-force reads of its probe.
      assert.deepStrictEqual(
        at.reads.map((r) => [r.update, r.slot, r.position]),
        ref.reads[String(t)],
        `CLI locate ${t} vs the fixture's reference`,
      );
      const { frame, line } = await cursorLineAt(w, t);
      assert.ok(line.includes(`Token ${fmt(t)} (shard offset ${fmt(t)}) · ${expectedWords(at.reads)} · doc `), `${line} (token ${t})`);
      // The line's tooltip lists every read: update, sample, slot, position.
      const title = (await frame.locator('.foot-pos').getAttribute('title')) ?? '';
      const listed = [...title.matchAll(/^update ([\d,]+), sample ([\d,]+) \(slot ([\d,]+)\), (?:position ([\d,]+)|target only)/gm)].map(
        (m) => [m[1], m[2], m[3], m[4] ?? 'target'].map((x) => (x === 'target' ? x : Number(x.replace(/,/g, '')))),
      );
      assert.deepStrictEqual(
        listed,
        at.reads.map((r) => [r.update, r.sample, r.slot, r.target ? 'target' : r.position]),
        `tooltip of the cursor line at ${t}: ${title}`,
      );
    }
    // The update highlight: the first read's update, every sample the CLI's `update k` lists.
    const t = Number(twice);
    const first = cli<{ reads: CliRead[] }>('locate', root, String(t), '--run', runFile, '--json').reads[0];
    const batch = cli<{ samples: CliSample[] }>('update', root, String(first.update), '--run', runFile, '--json').samples;
    await w.runCommand('Token Shards: Highlight Current Update and Sequences');
    const frame = await w.activeWebviewFrame();
    // Go to Token Offset (cursorLineAt) leaves its own one-token highlight ("token 1,623"): wait for
    // the update's, not for any highlight.
    const want = `update ${fmt(first.update)} · sample ${fmt(first.sample)} (slot ${fmt(first.slot)} of ${fmt(batch.length)}) · at the cursor`;
    let hl = '';
    await until(
      async () => {
        hl = (await frame.locator('.foot-hl').innerText()).trim();
        return hl.startsWith('Highlighted: ') && hl.includes(want);
      },
      'the update highlight',
      60_000,
    ).catch(() => undefined);
    assert.ok(hl.includes(want), `${hl} (expected it to name ${want})`);
    const hlTitle = (await frame.locator('.foot-hl').getAttribute('title')) ?? '';
    const named = new Set(
      [...hlTitle.matchAll(/update ([\d,]+) · sample ([\d,]+) \(slot ([\d,]+) of/g)].map((m) => `${m[1]}/${m[2]}/${m[3]}`),
    );
    assert.deepStrictEqual(
      [...named].sort(),
      batch.map((s) => `${fmt(first.update)}/${fmt(s.sample)}/${fmt(s.slot)}`).sort(),
      'the highlight names each sample of the CLI’s update (the fixture is one file: every sample lies in it)',
    );
    // The picture: the shard editor alone (the update view of the tests above closed).
    await w.runCommand('View: Close Editors in Other Groups');
    await w.runCommand('Notifications: Clear All Notifications');
    await w.page.waitForTimeout(1_500); // let the layout, fonts and the first screen settle for the picture
    await w.screenshot('shard-editor-megatron-order');
    await w.runCommand('Token Shards: Highlight Current Update and Sequences');
  });

  it('a token the run never read is shown as such (run.json replaced by a shorter run)', async () => {
    const w = wb!;
    const saved = fs.readFileSync(runFile, 'utf8');
    const short = path.join(tmp, 'short-run.json');
    // The same run's parameters, 4 updates long: the indices are rebuilt from them; most tokens go unread.
    fs.writeFileSync(
      short,
      JSON.stringify({
        order: 'megatron',
        sequence_length: ref.sequence_length,
        seed: ref.seed,
        global_batch_size: ref.global_batch_size,
        train_iters: 4,
      }),
    );
    const probes = Object.keys(ref.reads).map(Number);
    const unread = probes.find((t) => cli<{ reads: CliRead[] }>('locate', root, String(t), '--run', short, '--json').reads.length === 0)!;
    assert.ok(unread !== undefined, 'a probe the short run never reads');
    try {
      fs.writeFileSync(runFile, fs.readFileSync(short, 'utf8'));
      const { line } = await until(
        async () => {
          const r = await cursorLineAt(w, unread);
          return r.line.includes('not read by the run') ? r : undefined;
        },
        `token ${unread} shown as never read`,
        120_000,
      );
      assert.ok(line.includes(`Token ${fmt(unread)} (shard offset ${fmt(unread)}) · not read by the run · doc `), line);
    } finally {
      fs.writeFileSync(runFile, saved);
    }
  });
});
