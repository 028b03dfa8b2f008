/**
 * Token Shards: Go to Token Offset… (`tokenShards.goToOffset`): reveals a **global** token offset
 * in its shard editor (the shard is found from the manifest; offsets may cross into any shard).
 * Accepts `55_000_000`, `55,000,000`, `5.5e7` and hex. In a lone `.u32` opened without a
 * manifest, offsets are local to that file.
 *
 * Arguments (optional; with `offset` no prompt): `{ offset: number | string, root?: string }`.
 * Resolves with `{ offset }` (the offset revealed) or undefined.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { openLoneShard } from '../core/dataset';
import { checkOffset, validateLocalOffsetInput, validateOffsetInput } from '../core/navigation';
import { fmt } from '../core/units';
import { argOrPrompt, commandArgs, promptValidated, reportError, resolveDataset } from '../inputs';
import { NavigationDeps } from './focus';
import { iconSafe } from '../core/untrusted';

/** Arguments of `tokenShards.goToOffset`. */
export interface GoToOffsetArgs {
  /** Global token offset (number or text such as "5.5e7"). */
  offset: number | string;
  /** Dataset root; default: the focused shard editor's dataset, the only one, or a pick. */
  root?: string;
}

/** Runs Go to Token Offset… (see the file comment). */
export async function goToOffset(nav: NavigationDeps, ...args: unknown[]): Promise<{ offset: number } | undefined> {
  const { services, views } = nav;
  const { opts, uri } = commandArgs<GoToOffsetArgs>(args);
  try {
    const lone = services.activeShard && !services.activeShard.dataset && opts.root === undefined ? services.activeShard : undefined;
    if (lone) return await goToLocalOffset(nav, lone.uri, opts.offset, lone.offset);
    const ds = await resolveDataset(services, vscode.l10n.t('Go to Token Offset: choose a dataset'), opts.root, uri, views?.focusedDataset);
    if (!ds) return undefined;
    const cur = services.activeShard?.dataset?.root === ds.root ? services.activeShard.offset : undefined;
    const offset = await argOrPrompt(
      opts.offset,
      'offset',
      (v) => checkOffset(v, ds),
      () =>
        promptValidated({
          title: vscode.l10n.t('Go to Token Offset (global) · {0}', iconSafe(path.basename(ds.root))),
          prompt: vscode.l10n.t('Global token offset, 0..{0} (55_000_000, 5.5e7 and 0x… accepted)', fmt(ds.storedTokens - 1)),
          placeholder: vscode.l10n.t('e.g. 55_000_000'),
          value: cur?.toString(),
          validate: (t) => validateOffsetInput(t, ds),
        }),
    );
    if (offset === undefined) return undefined;
    await nav.shardEditors.reveal({
      dataset: ds,
      offset,
      highlight: [{ start: offset, end: offset + 1, label: vscode.l10n.t('token {0}', fmt(offset)) }],
    });
    return { offset };
  } catch (err) {
    return reportError(services, vscode.l10n.t('Go to Token Offset'), err);
  }
}

/** Go to Token Offset in a lone shard (no manifest): local offsets. */
async function goToLocalOffset(
  nav: NavigationDeps,
  file: vscode.Uri,
  arg: unknown,
  current: number,
): Promise<{ offset: number } | undefined> {
  const lone = await openLoneShard(file.fsPath);
  const tokens = lone.stream.totalTokens;
  await lone.stream.close();
  const name = path.basename(file.fsPath);
  const offset = await argOrPrompt(
    arg,
    'offset',
    (v) => validateLocalOffsetInput(String(v), tokens, name),
    () =>
      promptValidated({
        title: vscode.l10n.t('Go to Token Offset in {0} (local: no manifest)', iconSafe(name)),
        prompt: vscode.l10n.t('Token offset in this file, 0..{0}', fmt(Math.max(0, tokens - 1))),
        value: String(current),
        validate: (t) => validateLocalOffsetInput(t, tokens, name),
      }),
  );
  if (offset === undefined) return undefined;
  await nav.shardEditors.reveal({ file, offset, highlight: [{ start: offset, end: offset + 1 }] });
  return { offset };
}
