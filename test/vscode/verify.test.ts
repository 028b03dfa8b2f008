/**
 * "Verify Shard Hashes" inside a real extension host (code-server via `npm test`, or desktop VS
 * Code via `npm run test:electron`), with the sample dataset as the workspace folder.
 *
 * - The test seam: `runVerification` (src/commands/verifyShards.ts) is called directly with a
 *   recording `Progress` and a `CancellationTokenSource`, exactly the pair `withProgress` gives
 *   the commands: it must report "shard i of N · … GB done" lines whose increments add up to
 *   100 %, agree with `sha256sum`, and stop on cancel without caching unfinished shards.
 * - The real commands (`tokenShards.verifyShards…`, `verifyThisShard`, `openManifest`) run
 *   through `executeCommand` and return their summaries; a corrupted copy ends up in Problems.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { FormatVerifySummary, VerifyDeps, VerifyRunSummary, runVerification } from '../../src/commands/verifyShards';
import { VerificationStore } from '../../src/verificationStore';
import { openDataset, openPath } from '../../src/core/dataset';
import { api, waitFor } from './probe';
import type { ManifestRow, ManifestToWebview } from '../../src/protocol/manifest';
import { sampleRoot } from './sample';

const EXTENSION_ID = 'token-shards.token-shard-inspector';

function sha256sum(files: string[]): Map<string, string> {
  const out = execFileSync('sha256sum', files, { encoding: 'utf8' });
  return new Map(
    out
      .trim()
      .split('\n')
      .map((l) => {
        const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(l)!;
        return [m[2], m[1]] as [string, string];
      }),
  );
}

let tmp: string;
let copies = 0;
function copySample(): string {
  const dst = path.join(tmp, `copy-${++copies}`);
  fs.mkdirSync(dst, { recursive: true });
  for (const f of ['shard_manifest.jsonl', 'manifest.json']) fs.copyFileSync(path.join(sampleRoot(), f), path.join(dst, f));
  fs.cpSync(path.join(sampleRoot(), 'shards'), path.join(dst, 'shards'), { recursive: true });
  return dst;
}

/** A `Progress` that records every report. */
function recordingProgress(): vscode.Progress<{ message?: string; increment?: number }> & {
  reports: { message?: string; increment?: number }[];
} {
  const reports: { message?: string; increment?: number }[] = [];
  return {
    reports,
    report: (v) => {
      reports.push(v);
    },
  };
}

function silentLog(): VerifyDeps['log'] & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) };
}

/** The rows of the latest manifest table `init` any table sends, kept up to date until `sub` is disposed. */
async function tableRowsTap(): Promise<{ rows: ManifestRow[]; sub: vscode.Disposable }> {
  const rows: ManifestRow[] = [];
  const sub = (await api()).tapMessages((m) => {
    if (m.view !== 'tokenShards.manifestEditor' || m.direction !== 'toWebview' || m.envelope.kind !== 'event') return;
    const body = m.envelope.body as ManifestToWebview;
    if (body.type === 'init') rows.splice(0, rows.length, ...body.rows);
  });
  return { rows, sub };
}

describe('Verify Shard Hashes (extension host)', function () {
  this.timeout(120_000);

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-vscode-verify-'));
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is installed`);
    await ext.activate();
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('runVerification reports "shard i of N · MB done" (MB below 1 GB) through the progress it is given and agrees with sha256sum', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const progress = recordingProgress();
    const cts = new vscode.CancellationTokenSource();
    const deps: VerifyDeps = { log: silentLog(), cacheFile: path.join(tmp, 'seam-cache.json'), jobs: 2 };
    const summary = await runVerification(deps, ds, {}, progress, cts.token);
    assert.strictEqual(summary.allOk, true, summary.text);
    assert.strictEqual(summary.counts.ok, ds.shards.length);
    assert.strictEqual(summary.text, `${ds.shards.length} ok`);
    assert.ok(progress.reports.length >= 2, `progress was reported (${progress.reports.length} reports)`);
    for (const r of progress.reports) {
      // The sample is a few MB: progress in MB, never "0.00 GB done".
      assert.match(r.message ?? '', new RegExp(`^shard \\d+ of ${ds.shards.length} · \\d+(\\.\\d{1,2})? MB done`), r.message);
      assert.doesNotMatch(r.message ?? '', /0\.00 GB/, r.message);
    }
    const total = progress.reports.reduce((s, r) => s + (r.increment ?? 0), 0);
    assert.ok(Math.abs(total - 100) < 1e-6, `increments add up to 100 % (got ${total})`);
    const sums = sha256sum(ds.shards.map((e) => e.path));
    for (const r of summary.results) assert.strictEqual(r.actualSha256, sums.get(r.path), r.shard);
    cts.dispose();
  });

  it('a cancelled token stops the run; only finished shards are cached', async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const cacheFile = path.join(tmp, 'cancel-cache.json');
    const store = new VerificationStore(cacheFile);
    const cts = new vscode.CancellationTokenSource();
    const sub = store.onDidChange((c) => {
      if (!c.progressOnly && store.results(c.root).length >= 1) cts.cancel();
    });
    const deps: VerifyDeps = { log: silentLog(), cacheFile, jobs: 1, store };
    const summary: VerifyRunSummary = await runVerification(deps, ds, { ignoreCache: true }, recordingProgress(), cts.token);
    sub.dispose();
    assert.strictEqual(summary.cancelled, true, summary.text);
    assert.ok(summary.unfinished >= 1, 'some shards were left');
    assert.strictEqual(summary.results.length + summary.unfinished, ds.shards.length);
    assert.match(summary.text, /^Cancelled: .*[\d,]+ not checked$/);
    const cached = Object.keys(JSON.parse(fs.readFileSync(cacheFile, 'utf8')).entries).sort();
    assert.deepStrictEqual(cached, summary.results.map((r) => r.path).sort(), 'the cache holds exactly the finished shards');
    assert.strictEqual(store.isRunning(ds.root), false);
    store.dispose();
    cts.dispose();
  });

  it('the commands run for real and return their summaries; the cache answers the second run', async () => {
    const manifest = vscode.Uri.file(path.join(sampleRoot(), 'shard_manifest.jsonl'));
    const n = (await openDataset(sampleRoot())).shards.length;
    const first = await vscode.commands.executeCommand<VerifyRunSummary>('tokenShards.verifyShardsIgnoreCache', manifest);
    assert.ok(first, 'the command returned a summary');
    assert.strictEqual(first.allOk, true, first.text);
    assert.strictEqual(first.total, n);
    assert.strictEqual(first.fromCache, 0);
    const second = await vscode.commands.executeCommand<VerifyRunSummary>('tokenShards.verifyShards', manifest);
    assert.strictEqual(second.allOk, true);
    assert.strictEqual(second.fromCache, n, 'every shard known good from the cache');
    assert.strictEqual(second.bytesHashed, 0);
    const shard = vscode.Uri.file(path.join(sampleRoot(), 'shards', 'tokens_000001.u32'));
    const one = await vscode.commands.executeCommand<VerifyRunSummary>('tokenShards.verifyThisShard', shard);
    assert.strictEqual(one.total, 1);
    assert.strictEqual(one.counts.ok, 1);
    assert.strictEqual(one.results[0].shard, 'shards/tokens_000001.u32');
    assert.strictEqual(one.results[0].actualSha256, sha256sum([shard.fsPath]).get(shard.fsPath));
    const errors = vscode.languages.getDiagnostics(manifest).filter((d) => d.severity === vscode.DiagnosticSeverity.Error);
    assert.deepStrictEqual(
      errors.map((d) => d.message),
      [],
      'the clean sample has no errors in Problems',
    );
  });

  it("a corrupted copy: the mismatch is in the summary and in Problems on the shard's manifest line", async () => {
    const root = copySample();
    const ds = await openDataset(root);
    const victim = ds.shards[3];
    const b = fs.readFileSync(victim.path);
    b[4242] ^= 0x10;
    fs.writeFileSync(victim.path, b);
    const manifest = vscode.Uri.file(ds.manifestFile);
    const summary = await vscode.commands.executeCommand<VerifyRunSummary>('tokenShards.verifyShards', manifest);
    assert.strictEqual(summary.counts.mismatch, 1, summary.text);
    assert.strictEqual(summary.counts.ok, ds.shards.length - 1);
    assert.match(summary.text, /1 mismatched/);
    const diag = await waitFor(() => vscode.languages.getDiagnostics(manifest).find((d) => d.code === 'sha256-mismatch'), 10_000);
    assert.ok(diag, 'a sha256-mismatch diagnostic appeared');
    assert.strictEqual(diag.range.start.line, victim.line - 1);
    assert.strictEqual(diag.severity, vscode.DiagnosticSeverity.Error);
    assert.match(diag.message, /sha256 mismatch/);
    assert.ok(diag.message.includes(sha256sum([victim.path]).get(victim.path)!), 'the message names the digest sha256sum computes');
  });

  it('manifest faults are diagnostics on their lines, refreshed when the manifest changes on disk', async () => {
    const root = copySample();
    const mf = path.join(root, 'shard_manifest.jsonl');
    const original = fs.readFileSync(mf, 'utf8');
    const lines = original.split('\n');
    lines[3] = lines[3].slice(0, 40); // line 4 cut short: malformed JSON
    fs.writeFileSync(mf, lines.join('\n'));
    fs.rmSync(path.join(root, 'shards', 'tokens_000006.u32')); // line 7: missing file
    const uri = vscode.Uri.file(mf);
    await vscode.commands.executeCommand('tokenShards.openManifest', uri);
    const codesAt = () =>
      vscode.languages
        .getDiagnostics(uri)
        .map((d) => `${d.code}@${d.range.start.line}`)
        .sort();
    const got = await waitFor(() => {
      const c = codesAt();
      return c.includes('malformed-json@3') && c.includes('missing-file@6') ? c : undefined;
    }, 15_000);
    assert.ok(got, `diagnostics: ${codesAt().join(', ')}`);
    const malformed = vscode.languages.getDiagnostics(uri).find((d) => d.code === 'malformed-json')!;
    assert.match(malformed.message, /shard_manifest\.jsonl line 4: not valid JSON/);
    assert.strictEqual(malformed.range.end.character, 40, 'the range covers the line');
    // Repair the manifest on disk: its diagnostics follow (the dataset's watcher, even outside the workspace).
    fs.writeFileSync(mf, original);
    const repaired = await waitFor(() => !codesAt().some((c) => c.startsWith('malformed-json') || c.startsWith('gap')), 15_000);
    assert.ok(repaired, `after the repair: ${codesAt().join(', ')}`);
    assert.ok(codesAt().includes('missing-file@6'), 'the missing file is still reported');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('unsaved edits of the manifest are checked as you type', async () => {
    const root = copySample();
    const uri = vscode.Uri.file(path.join(root, 'shard_manifest.jsonl'));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const edit = new vscode.WorkspaceEdit();
    edit.insert(uri, new vscode.Position(1, 0), '{"shard": oops}\n');
    assert.ok(await vscode.workspace.applyEdit(edit));
    const d = await waitFor(() => vscode.languages.getDiagnostics(uri).find((x) => x.code === 'malformed-json'), 15_000);
    assert.ok(d, 'a malformed-json diagnostic for the unsaved line');
    assert.strictEqual(d.range.start.line, 1);
    await vscode.commands.executeCommand('workbench.action.files.revert');
    const gone = await waitFor(() => !vscode.languages.getDiagnostics(uri).some((x) => x.code === 'malformed-json'), 15_000);
    assert.ok(gone, 'reverting removes it');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('Verify Shard Hashes on an MDS stream checks the hashes index.json carries, naming their kind', async () => {
    const repo = path.dirname(sampleRoot());
    const src = path.join(repo, 'format-fixtures', 'dolma2', 'mds-int32');
    if (!fs.existsSync(src)) execFileSync(process.execPath, [path.join(repo, 'scripts', 'make-format-fixtures.mjs')], { cwd: repo });
    const root = path.join(tmp, 'mds');
    fs.cpSync(src, root, { recursive: true });
    const kinds = JSON.parse(
      execFileSync(
        'python3',
        ['-c', 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["shards"][0]["hashes"]))', path.join(root, 'index.json')],
        {
          encoding: 'utf8',
        },
      ),
    ) as string[];
    const shards = fs.readdirSync(root).filter((f) => f.endsWith('.mds'));
    const file = vscode.Uri.file(root);
    const ok = await vscode.commands.executeCommand<FormatVerifySummary>('tokenShards.verifyShards', file);
    assert.deepStrictEqual(ok.kinds, kinds);
    assert.strictEqual(ok.results.length, shards.length);
    assert.ok(ok.allOk, ok.text);
    const victim = path.join(root, shards[1]);
    const b = fs.readFileSync(victim);
    b[100] ^= 0x10;
    fs.writeFileSync(victim, b);
    const bad = await vscode.commands.executeCommand<FormatVerifySummary>('tokenShards.verifyShards', file);
    assert.deepStrictEqual(
      bad.results.filter((r) => r.status !== 'ok').map((r) => r.path),
      [victim],
    );
    assert.strictEqual(bad.text, `1 of ${shards.length} files not ok (${kinds.join(', ')} against the hashes mds carries)`);
  });

  /**
   * Opens the manifest table of a format stream (from one of its files), runs Verify Shard Hashes
   * on that file as the table's Verify button does, and returns the rows as the table last got them (`init`, then every `rowsChanged`).
   */
  async function verifyThroughTable(
    file: string,
    fresh = true,
  ): Promise<{ rows: Map<number, ManifestRow>; summary: FormatVerifySummary; t0: number; t1: number }> {
    const a = await api();
    const rows = new Map<number, ManifestRow>();
    let inits = 0;
    const sub = a.tapMessages((m) => {
      if (m.view !== 'tokenShards.manifestEditor' || m.direction !== 'toWebview' || m.envelope.kind !== 'event') return;
      const body = m.envelope.body as ManifestToWebview;
      if (body.type === 'init') {
        inits++;
        rows.clear();
        for (const r of body.rows) rows.set(r.index, { ...r });
      } else if (body.type === 'rowsChanged') for (const r of body.rows) Object.assign(rows.get(r.index) ?? {}, r);
    });
    try {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await vscode.commands.executeCommand('tokenShards.openManifest', vscode.Uri.file(file));
      assert.ok(await waitFor(() => inits > 0 && rows.size > 0, 30_000), 'the table sent its rows');
      if (fresh)
        assert.ok(
          [...rows.values()].every((r) => r.status === 'not-checked' && r.checkedAt === null),
          'not checked before the run',
        );
      const t0 = Date.now();
      const summary = await vscode.commands.executeCommand<FormatVerifySummary>('tokenShards.verifyShards', vscode.Uri.file(file));
      const t1 = Date.now();
      assert.ok(summary && !summary.cancelled, 'the run finished');
      const settled = await waitFor(
        () =>
          [...rows.values()].every(
            (r) => r.checkedAt !== null && r.checkedAt >= t0 && r.checkedAt <= t1 && !['queued', 'checking'].includes(r.status),
          ),
        15_000,
      );
      assert.ok(settled, `every row got its verdict: ${JSON.stringify([...rows.values()].map((r) => [r.shard, r.status, r.checkedAt]))}`);
      return { rows, summary, t0, t1 };
    } finally {
      sub.dispose();
    }
  }

  it('the manifest table of an MDS stream shows each file’s verify status and last-checked time: sha256 of each shard vs index.json’s (sha256sum)', async () => {
    const repo = path.dirname(sampleRoot());
    const src = path.join(repo, 'format-fixtures', 'dolma2', 'mds-int32');
    if (!fs.existsSync(src)) execFileSync(process.execPath, [path.join(repo, 'scripts', 'make-format-fixtures.mjs')], { cwd: repo });
    const root = path.join(tmp, 'mds-table');
    fs.cpSync(src, root, { recursive: true });
    const shards = fs.readdirSync(root).filter((f) => f.endsWith('.mds'));
    const victim = path.join(root, shards[2]);
    const b = fs.readFileSync(victim);
    b[200] ^= 0x01;
    fs.writeFileSync(victim, b);
    // The reference: sha256sum of every shard against raw_data.hashes.sha256 of index.json.
    const index = JSON.parse(fs.readFileSync(path.join(root, 'index.json'), 'utf8')) as {
      shards: { raw_data: { basename: string; hashes: Record<string, string> } }[];
    };
    const sums = sha256sum(shards.map((f) => path.join(root, f)));
    const want = new Map(
      index.shards.map((s) => [
        s.raw_data.basename,
        sums.get(path.join(root, s.raw_data.basename)) === s.raw_data.hashes.sha256 ? 'ok' : 'mismatch',
      ]),
    );
    assert.deepStrictEqual(
      [...want.values()].filter((v) => v !== 'ok'),
      ['mismatch'],
      'one shard differs from its hash',
    );
    // index.json opens the whole stream (a shard file alone is a stream of one shard).
    const { rows } = await verifyThroughTable(path.join(root, 'index.json'));
    assert.strictEqual(rows.size, shards.length);
    assert.deepStrictEqual(new Map([...rows.values()].map((r) => [r.shard, r.status])), want);
    const bad = [...rows.values()].find((r) => r.status === 'mismatch')!;
    assert.strictEqual(bad.shard, shards[2]);
    assert.ok(bad.detail?.includes(shards[2]) && /sha(1|256)/.test(bad.detail), bad.detail ?? '');
    // A later session (a new store over the same global storage) shows the same verdicts while the
    // files are unchanged; the damaged shard, touched, is no longer trusted.
    const a = await api();
    assert.ok(a.verification.verdictsFile && !a.verification.verdictsFile.startsWith(root), 'kept in global storage, not the dataset');
    const ds = (await openPath(path.join(root, 'index.json')))!;
    const later = async (): Promise<[string, string][]> =>
      (await new VerificationStore(a.verification.cacheFile, a.verification.verdictsFile).pastFormatStates(ds)).map(
        (s, i): [string, string] => [ds.shards[i].shard, s?.status ?? 'not-checked'],
      );
    assert.deepStrictEqual(new Map(await later()), want);
    const t = new Date(fs.statSync(victim).mtimeMs + 5000);
    fs.utimesSync(victim, t, t);
    assert.deepStrictEqual(new Map(await later()), new Map([...want].map(([k, v]) => [k, k === shards[2] ? 'not-checked' : v])));
    await ds.stream.close();
  });

  it('Open Manifest Table on one litdata chunk lists every chunk of the folder (index.json), as the reference lists them', async () => {
    const repo = path.dirname(sampleRoot());
    const dir = path.join(repo, 'format-fixtures', 'dolma2', 'litdata-uint32');
    if (!fs.existsSync(dir)) execFileSync(process.execPath, [path.join(repo, 'scripts', 'make-format-fixtures.mjs')], { cwd: repo });
    const ref = JSON.parse(
      execFileSync('python3', [path.join(repo, 'scripts', 'reference_formats.py'), dir, '--format', 'litdata'], { encoding: 'utf8' }),
    ) as { files: { path: string }[] };
    const chunk = path.join(dir, path.basename(ref.files[1].path));
    const uri = await vscode.commands.executeCommand<vscode.Uri>('tokenShards.openManifest', vscode.Uri.file(chunk));
    assert.strictEqual(uri?.fsPath, path.join(dir, 'index.json'));
    const { rows, sub } = await tableRowsTap();
    try {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await vscode.commands.executeCommand('tokenShards.openManifest', vscode.Uri.file(chunk));
      assert.ok(await waitFor(() => rows.length > 0, 30_000), 'the table sent its rows');
      assert.deepStrictEqual(
        rows.map((r) => r.shard),
        ref.files.map((f) => path.basename(f.path)),
      );
    } finally {
      sub.dispose();
    }
  });

  it('Open Manifest Table on a folder of Dolma, llm.c, datatrove or Megatron files lists every file of the folder’s stream, as the reference lists them', async () => {
    const repo = path.dirname(sampleRoot());
    const fixtures = path.join(repo, 'format-fixtures');
    if (!fs.existsSync(path.join(fixtures, 'fixtures.json')))
      execFileSync(process.execPath, [path.join(repo, 'scripts', 'make-format-fixtures.mjs')], { cwd: repo });
    const { rows, sub } = await tableRowsTap();
    try {
      for (const [format, folder] of [
        ['dolma', 'dolma2/dolma-uint32'],
        ['llm.c', 'gpt2/llmc-gpt2'],
        ['datatrove', 'dolma2/datatrove-uint32-loss'],
        ['megatron', 'dolma2/megatron-multi'],
      ]) {
        const dir = path.join(fixtures, folder);
        const ref = JSON.parse(
          execFileSync('python3', [path.join(repo, 'scripts', 'reference_formats.py'), dir, '--format', format], { encoding: 'utf8' }),
        ) as { files: { path: string }[] };
        assert.ok(ref.files.length > 1, `${folder}: the reference lists several files`);
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        rows.length = 0;
        const uri = await vscode.commands.executeCommand<vscode.Uri>('tokenShards.openManifest', vscode.Uri.file(dir));
        assert.strictEqual(uri?.fsPath, dir, `${folder}: the table of the folder`);
        assert.ok(await waitFor(() => rows.length > 0, 30_000), `${folder}: the table sent its rows`);
        assert.deepStrictEqual(
          rows.map((r) => r.shard),
          ref.files.map((f) => path.basename(f.path)),
          folder,
        );
      }
    } finally {
      sub.dispose();
    }
  });

  it('the manifest table of a Megatron unit with files.jsonl: an .idx (a sidecar) that differs from the list makes the row a mismatch, then ok once listed right (list made with sha256sum)', async () => {
    const repo = path.dirname(sampleRoot());
    const src = path.join(repo, 'format-fixtures', 'dolma2', 'megatron-multi');
    if (!fs.existsSync(src)) execFileSync(process.execPath, [path.join(repo, 'scripts', 'make-format-fixtures.mjs')], { cwd: repo });
    const root = path.join(tmp, 'megatron-table');
    fs.cpSync(src, root, { recursive: true });
    const bin = fs
      .readdirSync(root)
      .filter((f) => f.endsWith('.bin'))
      .sort()[1];
    const idx = bin.replace(/\.bin$/, '.idx');
    // files.jsonl as `token-shards manifest PREFIX.idx` writes it (one line: shard, sha256, sidecars),
    // the digests from sha256sum; first with the .idx listed under another file's digest, as if it had changed.
    const sums = sha256sum(fs.readdirSync(root).map((f) => path.join(root, f)));
    const other = sums.get(path.join(root, fs.readdirSync(root).filter((f) => f.endsWith('.idx') && f !== idx)[0]))!;
    const list = (idxSha: string) =>
      JSON.stringify({ shard: bin, sha256: sums.get(path.join(root, bin)), sidecars: [{ file: idx, sha256: idxSha }] }) + '\n';
    assert.notStrictEqual(other, sums.get(path.join(root, idx)));
    fs.writeFileSync(path.join(root, 'files.jsonl'), list(other));
    const bad = await verifyThroughTable(path.join(root, idx));
    assert.strictEqual(bad.summary.manifest, path.join(root, 'files.jsonl'));
    assert.deepStrictEqual(
      [...bad.rows.values()].map((r) => [r.shard, r.status]),
      [[bin, 'mismatch']],
    );
    assert.ok(bad.rows.get(0)!.detail?.includes(idx), bad.rows.get(0)!.detail ?? '');
    fs.writeFileSync(path.join(root, 'files.jsonl'), list(sums.get(path.join(root, idx))!));
    const good = await verifyThroughTable(path.join(root, idx), false);
    assert.deepStrictEqual(
      [...good.rows.values()].map((r) => [r.shard, r.status]),
      [[bin, 'ok']],
    );
    assert.ok(good.rows.get(0)!.detail?.includes('sidecar'), good.rows.get(0)!.detail ?? '');
  });

  it('openManifest opens the manifest table custom editor', async () => {
    const manifest = vscode.Uri.file(path.join(sampleRoot(), 'shard_manifest.jsonl'));
    await vscode.commands.executeCommand('tokenShards.openManifest', manifest);
    const tab = await waitFor(() => {
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
      return input instanceof vscode.TabInputCustom && input.viewType === 'tokenShards.manifestEditor' ? input : undefined;
    }, 10_000);
    assert.ok(tab, 'the active tab is the manifest table');
    assert.strictEqual(tab.uri.fsPath, manifest.fsPath);
  });
});
