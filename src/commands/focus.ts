/**
 * Where the user is, for commands that start from there: the navigation commands' dependencies
 * ({@link NavigationDeps}), the update and sequence the user is on ({@link currentSequence}), and
 * the dataset and update the loss-spike workbench commands start from ({@link workbenchFocus}).
 */
import type { Dataset } from '../core/dataset';
import type { ShardEditorProvider } from '../editor/shardEditor';
import type { UpdateViews } from '../panels/updateView';
import type { Services } from '../services';

/** What the navigation commands work with (built once by the composition root, `src/extension.ts`). */
export interface NavigationDeps {
  services: Services;
  views: UpdateViews;
  shardEditors: ShardEditorProvider;
}

/** The update the user is looking at in a dataset (see {@link currentSequence}). */
export function currentUpdate(services: Services, views: UpdateViews, root: string): number | undefined {
  return currentSequence(services, views, root)?.update;
}

/**
 * Where the user is in a dataset: the focused update view's update (and its focused row), else
 * the shard editor cursor's update and sequence, else the last focused update view's. The
 * shard editor comes before an update view that is open but not focused, so the cursor wins
 * over an update view showing another update in the background.
 */
export function currentSequence(services: Services, views: UpdateViews, root: string): { update: number; sequence?: number } | undefined {
  const a = views.active;
  const focused = views.focusedDataset;
  if (a && focused && a.dataset.root === root && focused.root === root) return { update: a.update, sequence: a.row };
  const s = services.activeShard;
  if (s?.dataset?.root === root) {
    const p = s.dataset.schedule.position(s.offset);
    if (p.update !== undefined && !p.lookAhead) return { update: p.update, sequence: p.sequence };
  }
  if (a && a.dataset.root === root) return { update: a.update, sequence: a.row };
  return undefined;
}

/** The focused update view's dataset and update, else the shard editor cursor's (either may be undefined). */
export type WorkbenchFocus = () => { ds?: Dataset; update?: number };

/** Builds the {@link WorkbenchFocus} of the workbench commands. */
export function workbenchFocus(services: Services, views: UpdateViews): WorkbenchFocus {
  return () => {
    const ds = views.focusedDataset ?? services.activeShard?.dataset;
    return { ds, update: ds ? currentUpdate(services, views, ds.root) : undefined };
  };
}
