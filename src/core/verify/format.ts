/**
 * Text for people about verification and index runs, shared by the CLI, the notifications and the
 * output channel: byte and duration units, the one-line progress, the one-line summary. No I/O;
 * kept apart from the hashing engine (`verify.ts`).
 */
import { fmt, formatDuration, formatRate, formatRateAndTimeLeft } from '../units';

export { count, formatDuration, formatRate } from '../units';
import { SHARD_STATUSES, ShardStatus, ShardVerifyResult, VerifyProgress, VerifyReport } from './verify';

/** Decimal gigabytes with 2 decimals below 10 GB, 1 above ("0.42", "12.3"). */
export function formatGB(bytes: number): string {
  const gb = bytes / 1e9;
  return gb < 10 ? gb.toFixed(2) : gb.toFixed(1);
}

/**
 * Bytes hashed so far for a progress line, unit included: decimal MB below 1 GB ("0 MB", "8.00 MB",
 * "42.5 MB", "812 MB"), else {@link formatGB} GB ("1.20 GB"). Never "0.00 GB" for a small dataset.
 */
export function formatDone(bytes: number): string {
  if (bytes >= 1e9) return `${formatGB(bytes)} GB`;
  if (bytes <= 0) return '0 MB';
  const mb = bytes / 1e6;
  return `${mb >= 100 ? mb.toFixed(0) : mb >= 10 ? mb.toFixed(1) : mb.toFixed(2)} MB`;
}

/** Bytes for people in decimal units: "812 B", "1.00 MB", "4.97 GB", "210 GB". */
export function formatBytes(bytes: number): string {
  const units: [number, string][] = [
    [1e12, 'TB'],
    [1e9, 'GB'],
    [1e6, 'MB'],
    [1e3, 'kB'],
  ];
  for (const [u, name] of units) {
    if (bytes >= u) {
      const v = bytes / u;
      return `${v >= 100 ? v.toFixed(0) : v.toFixed(2)} ${name}`;
    }
  }
  return `${bytes} B`;
}

/**
 * The one-line progress text shared by the CLI and the notification:
 * "shard 12 of 2,098 · 1.20 GB done · 1.62 GB/s · 2 min 10 s left" ("… · 8.00 MB done · …" below 1 GB). `i` counts finished shards
 * plus those being hashed now.
 */
export function formatVerifyProgress(p: VerifyProgress): string {
  const i = Math.min(p.shardsTotal, p.shardsDone + p.running.length);
  const parts = [`shard ${fmt(Math.max(i, 1))} of ${fmt(p.shardsTotal)}`, `${formatDone(p.bytesDone)} done`];
  const tail = formatRateAndTimeLeft(p.bytesPerSecond, p.bytesDone < p.bytesTotal ? p.etaMs : undefined);
  if (tail) parts.push(tail);
  return parts.join(' · ');
}

/**
 * A one-line summary of a report, faults first: "2,098 ok" or "3 mismatched · 1 missing · 2,094 ok"
 * ("Cancelled: 327 ok · 1,771 not checked" when cancelled); when some shards were answered from the cache it says so
 * ("2,098 ok · 2,090 not re-read (cached)"), so nobody mistakes a cache hit for a hash.
 */
export function formatVerifySummary(r: Pick<VerifyReport, 'counts' | 'cancelled' | 'unfinished'> & { fromCache?: number }): string {
  const labels: Record<ShardStatus, string> = {
    ok: 'ok',
    mismatch: 'mismatched',
    missing: 'missing',
    'size-mismatch': 'wrong size',
    changed: 'changed while read',
    unreadable: 'unreadable',
    'no-hash': 'without a manifest hash',
  };
  // Faults first ("3 mismatched · 2,095 ok"): they are what the reader must act on.
  const order = [...SHARD_STATUSES.filter((s) => s !== 'ok'), 'ok' as const];
  const parts = order.filter((s) => r.counts[s] > 0).map((s) => `${fmt(r.counts[s])} ${labels[s]}`);
  if (r.fromCache) parts.push(`${fmt(r.fromCache)} not re-read (cached)`);
  // Cancelled: say so first, then what was found and what was not checked ("Cancelled: 327 ok · 1,771 not checked").
  if (r.cancelled) return `Cancelled: ${[...parts, `${fmt(r.unfinished.length)} not checked`].join(' · ')}`;
  return parts.join(' · ') || 'nothing to verify';
}

/**
 * The updates fed by shards that are not ok, for summaries: "shards/tokens_000004.u32 feeds
 * updates 7–9 (3 updates)"; several shards are joined with "; " (three at most, then "and N more
 * shards"). Empty when no failed result carries `updates` (verify without a schedule).
 */
export function formatFailedUpdates(results: readonly ShardVerifyResult[]): string {
  const failed = results.filter((r) => r.status !== 'ok' && r.updates);
  const one = (r: ShardVerifyResult) => {
    const [a, b] = r.updates!;
    return `${r.shard} feeds ${a === b ? `update ${fmt(a)}` : `updates ${fmt(a)}–${fmt(b)} (${fmt(b - a + 1)} updates)`}`;
  };
  const parts = failed.slice(0, 3).map(one);
  if (failed.length > 3) parts.push(`and ${fmt(failed.length - 3)} more shards`);
  return parts.join('; ');
}

/**
 * The timing line of a run, shared by the CLI and the output channel of Verify Shard Hashes:
 * "timing: first byte hashed 48 ms after the start (stat and cache 3 ms) · reading 1.1 s
 * (1.43 GB/s) · end 9 ms · CPU 1.5 s (user + system, all threads; 0.95 s per GB)". Wall times are
 * from the run's start (see `VerifyTiming`); the CPU figure barely depends on other load.
 */
export function formatVerifyTiming(r: Pick<VerifyReport, 'timing' | 'bytesHashed'>): string {
  const t = r.timing;
  const parts = [
    t.firstByteMs !== undefined
      ? `first byte hashed ${formatDuration(t.firstByteMs)} after the start (stat and cache ${formatDuration(t.triageMs)})`
      : `nothing read (stat and cache ${formatDuration(t.triageMs)})`,
  ];
  if (t.readMs > 0)
    parts.push(`reading ${formatDuration(t.readMs)}${r.bytesHashed > 0 ? ` (${formatRate((r.bytesHashed / t.readMs) * 1000)})` : ''}`);
  parts.push(`end ${formatDuration(t.finishMs)}`);
  const perGB = r.bytesHashed >= 1e8 ? `; ${((t.cpuMs / 1000) * (1e9 / r.bytesHashed)).toFixed(2)} s per GB` : '';
  parts.push(`CPU ${formatDuration(t.cpuMs)} (user + system, all threads${perGB})`);
  return `timing: ${parts.join(' · ')}`;
}
