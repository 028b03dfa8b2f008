/**
 * Problems for token datasets: every `ManifestProblem` (src/core/manifest.ts) of a dataset (malformed JSON,
 * missing fields, gap, overlap, duplicate shard, missing file, size ≠ 4 × num_tokens, bad
 * `manifest.json` / `verification.json`) and every shard that failed verification (hash
 * mismatch, missing, wrong size, changed or unreadable while read) becomes a diagnostic on the
 * `shard_manifest.jsonl` line of that shard (side-file problems on line 1 of their file).
 *
 * Which datasets: those in the workspace (found at activation), any whose manifest is opened as
 * text or in the manifest table, and any that was verified. Refreshed (debounced) when the
 * dataset's metadata changes on disk (the shared services' watcher, plus a watcher per tracked
 * dataset so folders outside the workspace refresh too) and when verification results arrive.
 * While `shard_manifest.jsonl` has unsaved edits in a text editor, its line problems come from
 * the editor's text (parsed as you type); verification results are left out until it is saved,
 * since their line numbers belong to the file on disk.
 * A shard's verification result replaces the manifest's file-state problems for that line
 * (missing file, size), since it is newer than the stat done when the dataset opened.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { Dataset } from './core/dataset';
import { SHARD_FILE_PROBLEM_CODES, SHARD_MANIFEST, parseShardManifest } from './core/manifest';
import type { ShardStatus, ShardVerifyResult } from './core/verify/verify';
import type { VerificationStore } from './verificationStore';
import type { Services } from './services';

/** `source` of our diagnostics in the Problems panel. */
export const DIAGNOSTIC_SOURCE = 'Token Shards';

/** Diagnostic code of a failed verification status. */
const STATUS_CODE: Record<Exclude<ShardStatus, 'ok'>, string> = {
  mismatch: 'sha256-mismatch',
  missing: 'missing-file',
  'size-mismatch': 'size-mismatch',
  changed: 'changed-during-verification',
  unreadable: 'unreadable',
  'no-hash': 'no-sha256',
};

/** Lengths of the lines of a text file (empty when it cannot be read). */
function lineLengths(file: string): number[] {
  try {
    let text = fs.readFileSync(file, 'utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return text.split(/\r?\n/).map((l) => l.length);
  } catch {
    return [];
  }
}

/**
 * The diagnostics of one dataset, per file (absolute path).
 * @param ds the opened dataset (its `problems`).
 * @param results this session's verification results for the dataset (any order).
 * @param manifestDoc the manifest's open text document, when line lengths should come from it (unsaved edits).
 */
export function datasetDiagnostics(
  ds: Dataset,
  results: readonly ShardVerifyResult[],
  manifestDoc?: vscode.TextDocument,
): Map<string, vscode.Diagnostic[]> {
  const out = new Map<string, vscode.Diagnostic[]>();
  const lengths = new Map<string, number[]>();
  if (manifestDoc)
    lengths.set(
      ds.manifestFile,
      Array.from({ length: manifestDoc.lineCount }, (_, i) => manifestDoc.lineAt(i).text.length),
    );
  const rangeOf = (file: string, line?: number) => {
    let ls = lengths.get(file);
    if (!ls) {
      ls = lineLengths(file);
      lengths.set(file, ls);
    }
    const l = Math.max(0, (line ?? 1) - 1);
    return new vscode.Range(l, 0, l, ls[l] ?? 0);
  };
  const add = (file: string, d: vscode.Diagnostic) => {
    d.source = DIAGNOSTIC_SOURCE;
    let list = out.get(file);
    if (!list) {
      list = [];
      out.set(file, list);
    }
    list.push(d);
  };
  const verifiedLines = new Set(results.map((r) => r.line));
  for (const p of ds.problems) {
    if (p.file === ds.manifestFile && p.line !== undefined && SHARD_FILE_PROBLEM_CODES.has(p.code) && verifiedLines.has(p.line)) continue;
    const d = new vscode.Diagnostic(
      rangeOf(p.file, p.line),
      p.message,
      p.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
    );
    d.code = p.code;
    add(p.file, d);
  }
  for (const r of results) {
    if (r.status === 'ok') continue;
    const d = new vscode.Diagnostic(
      rangeOf(ds.manifestFile, r.line),
      r.message,
      r.status === 'no-hash' ? vscode.DiagnosticSeverity.Warning : vscode.DiagnosticSeverity.Error,
    );
    d.code = STATUS_CODE[r.status];
    add(ds.manifestFile, d);
  }
  return out;
}

/** Keeps the Problems panel in step with the datasets' manifests and verification results. */
export class ManifestDiagnostics implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('tokenShards');
  private readonly roots = new Set<string>();
  /** Files we set diagnostics on, per root (to clear them when they go away). */
  private readonly files = new Map<string, Set<string>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly watchers = new Map<string, vscode.Disposable>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly services: Services,
    private readonly store: VerificationStore,
  ) {
    this.disposables.push(
      this.collection,
      services.onDidChangeDataset((root) => {
        for (const r of root === '*' ? [...this.roots] : [root]) {
          if (!this.roots.has(r)) continue;
          store.clear(r); // the manifest may have changed: indices and lines may have moved
          this.schedule(r);
        }
      }),
      store.onDidChange((c) => {
        if (c.progressOnly) return;
        if (!this.roots.has(c.root)) this.track(c.root);
        else this.schedule(c.root, 300);
      }),
      vscode.workspace.onDidOpenTextDocument((doc) => this.trackDocument(doc)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        const doc = e.document;
        if (doc.uri.scheme === 'file' && path.basename(doc.uri.fsPath) === SHARD_MANIFEST && this.roots.has(path.dirname(doc.uri.fsPath))) {
          this.schedule(path.dirname(doc.uri.fsPath), 300);
        }
      }),
    );
    for (const doc of vscode.workspace.textDocuments) this.trackDocument(doc);
    void services.workspaceDatasetRoots().then(
      // Problems come from manifests: folders of other storage formats have none to track.
      (roots) => roots.filter((r) => fs.existsSync(path.join(r, SHARD_MANIFEST))).forEach((r) => this.track(r)),
      () => undefined,
    );
  }

  private trackDocument(doc: vscode.TextDocument): void {
    if (doc.uri.scheme === 'file' && path.basename(doc.uri.fsPath) === SHARD_MANIFEST) this.track(path.dirname(doc.uri.fsPath));
  }

  /** Starts showing the problems of the dataset at `root` (idempotent). */
  track(root: string): void {
    root = path.resolve(root);
    if (this.roots.has(root)) return;
    this.roots.add(root);
    this.watch(root);
    this.schedule(root, 0);
  }

  /**
   * Watches the dataset's metadata files with Node's `fs.watch` on the root folder (inotify on
   * Linux; it also covers folders outside the workspace, which VS Code's watcher may not report)
   * and invalidates the shared dataset on change.
   */
  private watch(root: string): void {
    if (this.watchers.has(root)) return;
    const names = new Set([SHARD_MANIFEST, 'manifest.json', 'verification.json']);
    try {
      const w = fs.watch(root, { persistent: false }, (_event, filename) => {
        const name = filename?.toString();
        if (name && names.has(name)) this.services.invalidate(path.join(root, name));
      });
      w.on('error', () => {
        w.close();
        this.watchers.delete(root);
      });
      this.watchers.set(root, { dispose: () => w.close() });
    } catch {
      // Cannot watch (e.g. the folder is gone): the workspace watcher and later refreshes remain.
    }
  }

  private schedule(root: string, delayMs = 200): void {
    const t = this.timers.get(root);
    if (t) clearTimeout(t);
    this.timers.set(
      root,
      setTimeout(() => {
        this.timers.delete(root);
        void this.refresh(root);
      }, delayMs),
    );
  }

  /** Recomputes the diagnostics of one dataset now. */
  async refresh(root: string): Promise<void> {
    const previous = this.files.get(root) ?? new Set<string>();
    const now = new Map<string, vscode.Diagnostic[]>();
    try {
      const ds = await this.services.openRoot(root);
      const manifestUri = vscode.Uri.file(ds.manifestFile);
      const dirty = vscode.workspace.textDocuments.find((d) => d.isDirty && d.uri.toString() === manifestUri.toString());
      if (dirty) {
        // Unsaved edits: line problems of the text being edited; disk-based checks wait for the save.
        const live = parseShardManifest(dirty.getText(), ds.manifestFile);
        const others = ds.problems.filter((p) => p.file !== ds.manifestFile);
        for (const [f, list] of datasetDiagnostics({ ...ds, problems: [...live.problems, ...others] }, [], dirty)) now.set(f, list);
      } else {
        for (const [f, list] of datasetDiagnostics(ds, this.store.results(root))) now.set(f, list);
      }
    } catch (err) {
      const manifest = path.join(root, SHARD_MANIFEST);
      if (!fs.existsSync(manifest)) {
        // The dataset went away: forget it.
        for (const f of previous) this.collection.delete(vscode.Uri.file(f));
        this.files.delete(root);
        this.roots.delete(root);
        this.watchers.get(root)?.dispose();
        this.watchers.delete(root);
        return;
      }
      const d = new vscode.Diagnostic(new vscode.Range(0, 0, 0, 0), (err as Error).message, vscode.DiagnosticSeverity.Error);
      d.source = DIAGNOSTIC_SOURCE;
      d.code = 'unreadable';
      now.set(manifest, [d]);
    }
    for (const f of previous) if (!now.has(f)) this.collection.delete(vscode.Uri.file(f));
    for (const [f, list] of now) this.collection.set(vscode.Uri.file(f), list);
    this.files.set(root, new Set(now.keys()));
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    for (const w of this.watchers.values()) w.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
