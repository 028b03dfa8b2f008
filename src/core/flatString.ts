/**
 * One helper for long-lived strings built from pieces (`a + b`, `path.resolve`, template
 * literals): V8 keeps such a string as a tree of its pieces (a "cons string") until something
 * needs it in one piece, and a tree of ~20 pieces costs several hundred bytes more than the flat
 * text. Strings kept for every line of a 100,000-line manifest (shard paths, cache keys) are
 * flattened once, when they are made (bounded memory for 100,000-line manifests).
 */

/** A side effect that keeps the optimiser from dropping the conversion as unused. */
let _numeric = 0;

/**
 * Returns `s`, flattened in place: converting a string to a number makes V8 copy a cons string
 * into one flat string (the pieces become garbage). The value and identity of `s` are unchanged.
 */
export function flatString(s: string): string {
  if (Number(s) === 0) _numeric++;
  return s;
}
