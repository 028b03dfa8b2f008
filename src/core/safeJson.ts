/**
 * One JSON parser for every file that comes with a dataset (`shard_manifest.jsonl` lines,
 * `manifest.json`, `verification.json`, `tokenizer.json`, caches): a linear pre-scan rejects
 * nesting deeper than {@link MAX_JSON_DEPTH} before `JSON.parse` runs, so a value nested 100,000
 * levels deep gives the usual "not valid JSON" message naming the file and line instead of
 * "Maximum call stack size exceeded" (from `JSON.parse`, or later from whoever walks the value).
 * Also {@link limitDepth} for printing parsed values (`info --json`).
 */

/** Deepest nesting of arrays/objects accepted. Real files: tokenizer.json ≈ 6, manifest.json ≈ 4. */
export const MAX_JSON_DEPTH = 256;

/** Result of {@link parseJson}: the value, or a sentence plus the 0-based character offset of the fault. */
export type JsonResult = { ok: true; value: unknown } | { ok: false; error: string; offset?: number };

/**
 * Character offset where nesting first exceeds `maxDepth` (outside strings), or -1. Linear, no recursion.
 */
export function jsonDepthViolation(text: string, maxDepth = MAX_JSON_DEPTH): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxDepth) return i;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return -1;
}

/**
 * Parses JSON text without ever throwing: too-deep nesting and syntax errors become `{ ok: false }`
 * with a message (and an offset when known). Callers name the file and line.
 */
export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): JsonResult {
  const deep = jsonDepthViolation(text, maxDepth);
  if (deep >= 0) return { ok: false, error: `nested deeper than ${maxDepth} levels at character ${deep + 1}`, offset: deep };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const m = /position (\d+)/.exec(msg);
    // V8 names no position for input that ends too early: the fault is at the end.
    const offset = m ? Number(m[1]) : /end of JSON input/.test(msg) ? text.length : undefined;
    return { ok: false, error: msg.replace(/\s*\n\s*/g, ' '), offset };
  }
}

/** 1-based line and column of a character offset in `text`. */
export function lineColumnAt(text: string, offset: number): { line: number; column: number } {
  let line = 1,
    lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++)
    if (text.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  return { line, column: end - lineStart + 1 };
}

/**
 * A copy of `value` for display in which anything nested deeper than `maxDepth` is replaced by a
 * string saying so, and arrays/objects longer than `maxItems` are cut with a note. Iteration
 * depth is bounded by `maxDepth`, so printing never overflows the stack.
 */
export function limitDepth(value: unknown, maxDepth = 32, maxItems = 10_000): unknown {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (depth >= maxDepth) return `…(${Array.isArray(v) ? 'array' : 'object'} nested deeper than ${maxDepth} levels, not shown)`;
    if (Array.isArray(v)) {
      const out = v.slice(0, maxItems).map((x) => walk(x, depth + 1));
      if (v.length > maxItems) out.push(`…(${v.length - maxItems} more items)`);
      return out;
    }
    const out: Record<string, unknown> = {};
    const keys = Object.keys(v);
    for (const k of keys.slice(0, maxItems)) out[k] = walk((v as Record<string, unknown>)[k], depth + 1);
    if (keys.length > maxItems) out['…'] = `${keys.length - maxItems} more keys`;
    return out;
  };
  return walk(value, 0);
}
