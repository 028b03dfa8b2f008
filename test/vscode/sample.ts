/**
 * The sample dataset as the extension-host tests see it: the workspace folder the runner opens
 * (`sample/`, made by `npm run sample`), its manifest lines and its schedule. Read from the files,
 * never typed by hand.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

/** One line of `shard_manifest.jsonl` (the fields the tests use; offsets and counts in tokens). */
export interface SampleManifestLine {
  shard: string;
  start_token: number;
  num_tokens: number;
}

/** Absolute path of the sample dataset: the first workspace folder. Fails the test when none is open. */
export function sampleRoot(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the tests need the sample dataset open as the workspace folder');
  return folder.uri.fsPath;
}

/** The sample's manifest lines in stream order (by `start_token`). */
export function sampleManifest(): SampleManifestLine[] {
  return fs
    .readFileSync(path.join(sampleRoot(), 'shard_manifest.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as SampleManifestLine)
    .sort((a, b) => a.start_token - b.start_token);
}

/** Schedule values (tokens): the sample's `manifest.json` keys, else the dataset card's defaults. */
export function sampleSchedule(): { G: number; L: number; eos: number } {
  const m = JSON.parse(fs.readFileSync(path.join(sampleRoot(), 'manifest.json'), 'utf8')) as Record<string, number>;
  return { G: m.global_tokens_per_update ?? 131072, L: m.sequence_length ?? 1024, eos: m.eos_token_id ?? 100257 };
}
