/**
 * The host end of the message channel ({@link Channel} in `src/shared/channel.ts`) bound to one
 * `vscode.Webview`: the ready handshake (the webview script says `ready` once it listens; a
 * webview reloaded after being hidden says it again, which drops everything in flight), typed
 * events and requests, and an optional {@link ChannelTaps} that sees every envelope (tests).
 */
import * as vscode from 'vscode';
import { Channel, ChannelError, ChannelHandlers, Envelope, RequestOptions, ViewProtocol } from '../shared/channel';

/** One envelope crossing a host channel, as seen by a tap. */
export interface TappedMessage {
  /** The view type (e.g. `tokenShards.shardEditor`). */
  view: string;
  /** The resource the panel shows (a file URI, a dataset root), when there is one. */
  resource?: string;
  direction: 'toWebview' | 'fromWebview';
  envelope: Envelope;
}

/**
 * Listeners that see every envelope of every host channel (the extension-host tests record
 * messages with it through the API `activate` returns). Free when nobody listens.
 */
export class ChannelTaps {
  private readonly listeners = new Set<(m: TappedMessage) => void>();

  /** Adds a listener; dispose the result to remove it. */
  add(listener: (m: TappedMessage) => void): vscode.Disposable {
    this.listeners.add(listener);
    return new vscode.Disposable(() => this.listeners.delete(listener));
  }

  /** True when somebody listens. */
  get active(): boolean {
    return this.listeners.size > 0;
  }

  /** Hands a message to every listener. */
  emit(m: TappedMessage): void {
    for (const l of this.listeners) l(m);
  }
}

/** What a host channel is told about its panel. */
export interface HostChannelOptions {
  view: string;
  resource?: string;
  taps?: ChannelTaps;
}

/** The host end of one webview's channel, typed by its {@link ViewProtocol}. */
export class HostChannel<P extends ViewProtocol> implements vscode.Disposable {
  private readonly channel: Channel<P['hostEvents'], P['webviewEvents'], P['webviewRequests'], P['hostRequests']>;
  private readonly subscription: vscode.Disposable;
  private isReady = false;
  private disposed = false;
  private readyWaiters: (() => void)[] = [];

  /**
   * @param handlers the webview's events, the requests the host answers, and `onReady` (called on
   *   every `ready`: send the view's whole state then).
   */
  constructor(
    private readonly webview: vscode.Webview,
    handlers: ChannelHandlers<P['webviewEvents'], P['hostRequests']>,
    private readonly opts: HostChannelOptions,
  ) {
    this.channel = new Channel(
      (env) => {
        this.tap('toWebview', env);
        return this.webview.postMessage(env);
      },
      {
        onEvent: (e) => handlers.onEvent(e),
        requests: handlers.requests,
        onReady: () => {
          // A second `ready` is a new page: whatever the old one asked for is moot.
          if (this.isReady) this.channel.reset();
          this.isReady = true;
          for (const w of this.readyWaiters.splice(0)) w();
          handlers.onReady?.();
        },
      },
    );
    this.subscription = webview.onDidReceiveMessage((m: unknown) => {
      this.tap('fromWebview', m as Envelope);
      this.channel.receive(m);
    });
  }

  /** True once the webview script said `ready`. */
  get ready(): boolean {
    return this.isReady;
  }

  /** Resolves once the webview script has said `ready`. */
  whenReady(): Promise<void> {
    return this.isReady ? Promise.resolve() : new Promise((r) => this.readyWaiters.push(r));
  }

  /**
   * Sends an event; resolves false when it was not delivered (the webview is not ready yet, or is
   * hidden and unloaded: its next `ready` is when to send the state again).
   */
  notify(event: P['hostEvents']): Promise<boolean> {
    if (!this.isReady || this.disposed) return Promise.resolve(false);
    return this.channel.notify(event);
  }

  /**
   * Sends a request once the webview is ready and resolves with its answer.
   * @throws ChannelError when the webview's handler failed, or the request was cancelled (signal,
   *   webview reloaded, panel closed).
   */
  async request<M extends keyof P['webviewRequests'] & string>(
    method: M,
    params: P['webviewRequests'][M]['params'],
    opts?: RequestOptions,
  ): Promise<P['webviewRequests'][M]['result']> {
    await this.whenReady();
    if (this.disposed) throw new ChannelError(`${method}: the view was closed`, true);
    return this.channel.request(method, params, opts);
  }

  private tap(direction: TappedMessage['direction'], envelope: Envelope): void {
    const taps = this.opts.taps;
    if (taps?.active) taps.emit({ view: this.opts.view, resource: this.opts.resource, direction, envelope });
  }

  /** Stops listening; requests in flight are cancelled, `whenReady` waiters are released. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.subscription.dispose();
    this.channel.reset('the view was closed');
    for (const w of this.readyWaiters.splice(0)) w();
  }
}
