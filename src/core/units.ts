/**
 * Units for people that both the extension host, the CLI and the webviews show (no Node or DOM
 * imports, so webview bundles can import it): numbers with thousands separators, counts with
 * their noun, rates, durations, and the rate-and-time-left tail of every progress line.
 */

const NUMBER_FORMAT = new Intl.NumberFormat('en-US');

/** The English ordinal suffix of a whole number ≥ 0: 1 → "st", 12 → "th", 1,025 → "th". */
export function ordinalSuffix(n: number): string {
  return n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
}

/** Formats a number with thousands separators (12,345,678), the way the UI and CLI print counts. One shared formatter: `toLocaleString` builds a new one per call. */
export function fmt(n: number): string {
  return NUMBER_FORMAT.format(n);
}

/**
 * A count with its noun, plural unless exactly one: `1 token`, `2 tokens`, `1,024 tokens`,
 * `0 documents` (thousands separators by {@link fmt}). `plural` defaults to noun + "s"
 * (`count(n, 'match', 'matches')`). The one helper for every "N things" people read.
 */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${fmt(n)} ${n === 1 ? noun : plural}`;
}

/**
 * A read or hash rate for people, unit chosen by size so that a slow start never reads "0.00 GB/s":
 * "1.62 GB/s" at or above 1 GB/s, "85.3 MB/s" / "412 MB/s" from 1 MB/s, else "640 kB/s". Decimal units;
 * `bytesPerSecond` is bytes (not tokens) per second; 0 or less gives "0 MB/s".
 */
export function formatRate(bytesPerSecond: number): string {
  if (!(bytesPerSecond > 0)) return '0 MB/s';
  if (bytesPerSecond >= 1e9) return `${(bytesPerSecond / 1e9).toFixed(2)} GB/s`;
  if (bytesPerSecond >= 1e6) {
    const mb = bytesPerSecond / 1e6;
    return `${mb >= 100 ? mb.toFixed(0) : mb.toFixed(1)} MB/s`;
  }
  return `${(bytesPerSecond / 1e3).toFixed(0)} kB/s`;
}

/** A duration for people: "640 ms", "6.3 s", "45 s", "3 min 20 s", "1 h 05 min". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/**
 * Rate (bytes per second) and time left (ms) of a run that has done `bytesDone` of `bytesTotal`
 * bytes in `elapsedMs`: rate 0 and time left unknown until something was done.
 */
export function progressRate(bytesDone: number, bytesTotal: number, elapsedMs: number): { bytesPerSecond: number; etaMs?: number } {
  const bytesPerSecond = elapsedMs > 0 && bytesDone > 0 ? (bytesDone / elapsedMs) * 1000 : 0;
  return { bytesPerSecond, etaMs: bytesPerSecond > 0 ? (Math.max(0, bytesTotal - bytesDone) / bytesPerSecond) * 1000 : undefined };
}

/**
 * The tail of a progress line, in the words every progress line uses: "1.62 GB/s · 2 min 10 s
 * left" ({@link formatRate}, then {@link formatDuration} + " left"). The rate is left out while 0,
 * the time left while unknown; '' when both are.
 */
export function formatRateAndTimeLeft(bytesPerSecond: number, etaMs: number | undefined): string {
  const parts: string[] = [];
  if (bytesPerSecond > 0) parts.push(formatRate(bytesPerSecond));
  if (etaMs !== undefined) parts.push(`${formatDuration(etaMs)} left`);
  return parts.join(' · ');
}

/**
 * Rate and time left of a scan through a dataset's first shards (counting their EOS tokens for
 * document numbers) that reports (shards done, shards to do). Only shards actually read in this run
 * count: a shard whose count was known when the scan started (cached, imported, from the stream
 * index) takes no time, so it adds neither to the bytes read (the rate) nor to the bytes left (the
 * time left). Without this, a scan that starts past cached shards reported e.g. "100.00 GB/s".
 */
export class ShardScanRate {
  /** `unread[i]`: bytes of the shards before shard `i` that were not known at the start. */
  private readonly unread: number[];

  /**
   * @param shardBytes each shard's size in bytes (the manifest's sizes), in stream order.
   * @param known per shard, true when its count was known when the scan started (missing = false).
   */
  constructor(shardBytes: readonly number[], known: (i: number) => boolean) {
    this.unread = [0];
    shardBytes.forEach((b, i) => this.unread.push(this.unread[i] + (known(i) ? 0 : b)));
  }

  /** Bytes (not tokens) read when `done` shards are done. */
  bytesRead(done: number): number {
    return this.unread[Math.max(0, Math.min(done, this.unread.length - 1))];
  }

  /** Rate (bytes read per second) and time left (ms) after `elapsedMs`, with `done` of `total` shards done. */
  at(done: number, total: number, elapsedMs: number): { bytesPerSecond: number; etaMs?: number } {
    return progressRate(this.bytesRead(done), this.bytesRead(total), elapsedMs);
  }
}
