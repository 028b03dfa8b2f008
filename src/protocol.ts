/**
 * The typed messages between the extension host and the webviews, shared by both sides.
 * One section per webview; every message is a plain JSON-serialisable object with a `type`.
 * Units: `offset`/`start`/`count` fields are in tokens; "global" means a global token offset
 * in the dataset's stream (for a lone shard without a manifest, local offsets are used and
 * `global` flags say so).
 *
 * Naming: `…ToWebview` messages are sent by the host, `…FromWebview` by the webview.
 */
import type { TokenPiece } from './core/tokenizer';

export type { TokenPiece };

// ───────────────────────────── Shard editor ─────────────────────────────
// (owned by src/editor/shardEditor.ts and webview/shardEditor.ts)

// ───────────────────────────── Manifest editor ──────────────────────────
// (owned by src/editor/manifestEditor.ts and webview/manifestEditor.ts)

// ───────────────────────────── Update view ──────────────────────────────
// (owned by src/editor/updateView.ts and webview/updateView.ts)
