/**
 * Extension entry point: wiring only. Each feature lives in its own module and exposes a
 * `register…(context, services)` function; nothing here does work at activation beyond
 * creating the shared services (which load lazily).
 */
import * as vscode from 'vscode';

/** Called by VS Code on the first contribution used (activation events are implied by contributions). */
export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Token Shard Inspector', { log: true });
  context.subscriptions.push(log);
  log.info('activated');
}

/** Nothing to do: every resource is disposed through `context.subscriptions`. */
export function deactivate(): void { /* no-op */ }
