/**
 * Where the loss-spike workbench commands (issue 15) start from: the dataset and update the user
 * is on. The commands themselves are registered by the composition root (src/extension.ts).
 */
import type { Dataset } from '../core/dataset';
import type { UpdateViews } from '../panels/updateView';
import type { Services } from '../services';
import { currentUpdate } from '../commands/inputs';

/** The focused update view's dataset and update, else the shard editor cursor's (either may be undefined). */
export type WorkbenchFocus = () => { ds?: Dataset; update?: number };

/** Builds the {@link WorkbenchFocus} of the workbench commands. */
export function workbenchFocus(services: Services, views: UpdateViews): WorkbenchFocus {
  return () => {
    const ds = views.focusedDataset ?? services.activeShard?.dataset;
    return { ds, update: ds ? currentUpdate(services, views, ds.root) : undefined };
  };
}
