/**
 * Registration of the loss-spike workbench (issue 15): Inspect Updates Around…, Open Training
 * Log…, Export Updates… and the inspect panel's serializer. One call from the composition root.
 */
import * as vscode from 'vscode';
import type { Dataset } from '../core/dataset';
import type { UpdateViews } from '../editor/updateView';
import type { Services } from '../services';
import { currentUpdate } from '../commands/inputs';
import { exportUpdatesCommand } from '../commands/exportUpdates';
import { InspectPanels, inspectUpdates } from './inspectUpdates';
import { openTrainingLog } from './trainingLogPanel';

/** Registers the workbench commands; returns the inspect panels (tests reach them through the command results). */
export function registerWorkbench(context: vscode.ExtensionContext, services: Services, views: UpdateViews): InspectPanels {
  const panels = new InspectPanels(services);
  /** The dataset and update the user is on: the focused update view, else the shard editor's cursor. */
  const here = (): { ds?: Dataset; update?: number } => {
    const ds = views.focusedDataset ?? services.activeShard?.dataset;
    return { ds, update: ds ? currentUpdate(services, views, ds.root) : undefined };
  };
  context.subscriptions.push(
    panels,
    vscode.commands.registerCommand('tokenShards.inspectUpdates', (...a: unknown[]) => inspectUpdates(services, panels, here, ...a)),
    vscode.commands.registerCommand('tokenShards.openTrainingLog', (...a: unknown[]) => openTrainingLog(services, () => here().ds, ...a)),
    vscode.commands.registerCommand('tokenShards.exportUpdates', (...a: unknown[]) => exportUpdatesCommand(services, here, ...a)),
  );
  return panels;
}
