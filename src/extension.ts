/**
 * Extension entry point: wiring only. Each feature lives in its own module and exposes a
 * `register…(context, services)` function; nothing here does work at activation beyond
 * creating the shared services (datasets and the tokenizer load lazily).
 */
import * as vscode from 'vscode';
import { Services } from './services';
// Feature registrations (one line each; keep alphabetical within the block):
import { registerNavigation } from './commands/goToUpdate';
import { registerShardEditor } from './editor/shardEditor';
import { registerTokenIds } from './hover/tokenHover';
import { registerVerifyShards } from './commands/verifyShards';
import { registerWorkbench } from './panels/workbench';

/** Called by VS Code on the first contribution used (activation events are implied by contributions). */
export function activate(context: vscode.ExtensionContext): Services {
  const log = vscode.window.createOutputChannel('Token Shard Inspector', { log: true });
  const services = new Services(context, log);
  context.subscriptions.push(log, services);
  // Feature registrations (one call each):
  const updateViews = registerNavigation(context, services);
  registerShardEditor(context, services);
  registerTokenIds(context, services);
  registerVerifyShards(context, services);
  registerWorkbench(context, services, updateViews);
  log.info(`activated (${context.extension.id} ${context.extension.packageJSON.version})`);
  return services;
}

/** Nothing to do: every resource is disposed through `context.subscriptions`. */
export function deactivate(): void { /* no-op */ }
