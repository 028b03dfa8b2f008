/**
 * Untrusted text in a real extension host: a hostile shard name and a hostile link parameter
 * reach notifications as plain text. `vscode.window.show*Message` is intercepted (the calls still
 * go through), and every message shown is checked: VS Code turns `[label](command:…)` in message
 * text into a clickable command link, so no message may contain that pattern.
 */
import * as assert from 'assert';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { handleNavigationUri } from '../../src/commands/uriHandler';
import type { TokenShardsApi } from '../../src/extension';

/** The pattern VS Code's notification renderer makes clickable (linkedText.ts). */
const LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;
const HOSTILE = '[click](command:workbench.action.terminal.new)';

type Shown = { kind: string; message: string };

describe('data-derived text in notifications is plain text', function () {
  this.timeout(60_000);
  const shown: Shown[] = [];
  const originals: Partial<Record<'showInformationMessage' | 'showWarningMessage' | 'showErrorMessage', unknown>> = {};
  let dir: string;

  before(() => {
    const w = vscode.window as unknown as Record<string, (...a: unknown[]) => unknown>;
    for (const kind of ['showInformationMessage', 'showWarningMessage', 'showErrorMessage'] as const) {
      const orig = w[kind];
      originals[kind] = orig;
      w[kind] = (...args: unknown[]) => {
        if (typeof args[0] === 'string') shown.push({ kind, message: args[0] });
        return (orig as (...a: unknown[]) => unknown).apply(vscode.window, args);
      };
    }
    // A dataset (outside the workspace: nothing in it changes) whose only shard has a hostile name.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-hostile-'));
    fs.mkdirSync(path.join(dir, 'shards'));
    const bytes = Buffer.alloc(4 * 64);
    for (let i = 0; i < 64; i++) bytes.writeUInt32LE(1000 + i, 4 * i);
    const name = `${HOSTILE}.u32`;
    fs.writeFileSync(path.join(dir, 'shards', name), bytes);
    const sha = crypto.createHash('sha256').update(bytes).digest('hex');
    fs.writeFileSync(
      path.join(dir, 'shard_manifest.jsonl'),
      JSON.stringify({ shard: `shards/${name}`, start_token: 0, num_tokens: 64, sha256: sha }) + '\n',
    );
  });

  after(() => {
    const w = vscode.window as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(originals)) w[k] = v;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a shard named like a command link is shown as text when verified', async () => {
    const before = shown.length;
    const uri = vscode.Uri.file(path.join(dir, 'shards', `${HOSTILE}.u32`));
    await vscode.commands.executeCommand('tokenShards.verifyThisShard', uri);
    const mine = shown.slice(before);
    assert.ok(mine.length >= 1, 'a notification was shown');
    const m = mine.find((s) => s.message.includes('sha256'))!;
    assert.ok(m, JSON.stringify(mine));
    assert.ok(!LINK.test(m.message), `no clickable link in: ${m.message}`);
    // The name is still readable: the same characters once the invisible joiners are removed.
    assert.ok(m.message.replace(/\u2060/g, '').includes(HOSTILE), m.message);
  });

  it('a link whose parameter is a command link is rejected without echoing it', async () => {
    const ext = vscode.extensions.all.find((e) => e.packageJSON?.name === 'token-shard-inspector')!;
    const api = (ext.isActive ? ext.exports : await ext.activate()) as TokenShardsApi;
    const nav = { services: api.services, views: api.updateViews, shardEditors: api.shardEditors };
    const before = shown.length;
    for (const q of [
      `k=${encodeURIComponent(HOSTILE)}`,
      `k=1&sequence=${encodeURIComponent(HOSTILE)}`,
      `o=${encodeURIComponent(HOSTILE)}`,
    ]) {
      const what = q.startsWith('o=') ? 'offset' : 'update';
      await handleNavigationUri(nav, vscode.Uri.parse(`${vscode.env.uriScheme}://token-shards.token-shard-inspector/${what}?${q}`));
    }
    await handleNavigationUri(
      nav,
      vscode.Uri.parse(`${vscode.env.uriScheme}://token-shards.token-shard-inspector/${encodeURIComponent(HOSTILE)}?k=1`),
    );
    const mine = shown.slice(before);
    assert.strictEqual(mine.length, 4, JSON.stringify(mine));
    for (const s of mine) {
      assert.strictEqual(s.kind, 'showErrorMessage');
      assert.ok(!LINK.test(s.message), s.message);
      assert.ok(!s.message.includes('command:'), `the raw parameter is not echoed: ${s.message}`);
    }
  });
});
