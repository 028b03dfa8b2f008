/**
 * How long this page took to show text (docs/benchmarks.md, "Opening a shard in code-server"): marks in epoch ms (this machine's
 * clock, the host compares them with the moment the open was asked for), reported once per page
 * load after the first decoded text was drawn. Imported first by the entry module, so
 * `scriptStart` is taken before the other modules (the web components) are evaluated.
 */
import type { ShardTimingFromWebview } from '../../src/protocol/shard';

const marks: Record<string, number> = { navigationStart: performance.timeOrigin };
let reported = false;

/** Records `name` at the current time (the first time only). */
export function mark(name: string): void {
  if (!(name in marks)) marks[name] = performance.timeOrigin + performance.now();
}

mark('scriptStart');

/**
 * The first decoded text was just put into the DOM: once it is painted (two animation frames),
 * records `firstText` and hands the marks and the page's resource timings to `post`. Once per page.
 */
export function firstTextDrawn(post: (m: ShardTimingFromWebview) => void): void {
  if (reported) return;
  reported = true;
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      mark('firstText');
      const resources = performance.getEntriesByType('resource').map((e) => {
        const r = e as PerformanceResourceTiming;
        return {
          name: r.name.replace(/^.*\//, '').replace(/\?.*$/, ''),
          start: performance.timeOrigin + r.startTime,
          durationMs: Math.round(r.duration),
          bytes: r.encodedBodySize || r.transferSize || 0,
        };
      });
      post({ type: 'timing', marks: { ...marks }, resources });
    }),
  );
}
