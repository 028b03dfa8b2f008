/**
 * Units for people that both the extension host and the webviews show (no Node or DOM imports, so
 * webview bundles can import it).
 */

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
