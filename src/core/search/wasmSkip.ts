/**
 * The hottest loop of the search as a tiny WebAssembly function (≈1.7× the JavaScript loop on
 * this machine, measured side by side): in automaton state 0, skip every token id whose bit in
 * the "interesting ids" set is clear. The scanner reads its chunks straight into this module's
 * memory (no copy), so the function walks the same ids the JavaScript code sees.
 *
 * Memory layout: bytes `[0, BITS_BYTES)` hold the bit set (bit `id` set = the id can start or
 * complete something from state 0); the scanner's read buffers follow.
 *
 * The module, hand-assembled (123 bytes) from this text:
 * ```wat
 * (module
 *   (import "env" "mem" (memory 1))
 *   (func (export "skip") (param $ptr i32) (param $i i32) (param $to i32) (param $V i32) (param $bits i32) (result i32)
 *     (local $id i32)
 *     (block $done
 *       (loop $next
 *         (br_if $done (i32.ge_u (local.get $i) (local.get $to)))
 *         (local.set $id (i32.load (i32.add (local.get $ptr) (i32.shl (local.get $i) (i32.const 2)))))
 *         (if (i32.lt_u (local.get $id) (local.get $V))
 *           (then (br_if $done (i32.and (i32.shr_u (i32.load (i32.add (local.get $bits)
 *             (i32.shl (i32.shr_u (local.get $id) (i32.const 5)) (i32.const 2)))) (local.get $id)) (i32.const 1)))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 1)))
 *         (br $next)))
 *     (local.get $i)))
 * ```
 * `skip(ptr, i, to, V, bits)` returns the first index `≥ i` and `< to` of the uint32 array at
 * byte `ptr` whose id is `< V` with its bit set, or `to`.
 */
const SKIP_WASM =
  'AGFzbQEAAAABCgFgBX9/f39/AX8CDAEDZW52A21lbQIAAQMCAQAHCAEEc2tpcAAACkkBRwEBfwJAA0AgASACTw0BIAAgAUECdGooAgAhBSAFIANJBEAgBCAFQQV2QQJ0aigCACAFdkEBcQ0CCyABQQFqIQEMAAsLIAEL';

/** Bytes reserved for the bit set at the start of the memory (enough for ids < 2^20, the corrupt-id floor). */
export const BITS_BYTES = (1 << 20) / 8;

/** A module instance with its own memory: the bit set, then `count` read buffers of `tokens` ids. */
export interface SkipMemory {
  /** The memory's buffer: `ids.buffer === buffer` says an array lives in it. */
  buffer: ArrayBuffer;
  /** See the file header. */
  skip: (ptr: number, i: number, to: number, V: number, bits: number) => number;
  /** The read buffers, views into the memory. */
  buffers: Uint32Array[];
}

let compiled: WebAssembly.Module | null | undefined;

/**
 * Makes a memory holding `bits` and `count` buffers of `tokens` ids, or returns undefined when
 * WebAssembly is unavailable (the scanner then uses its JavaScript loop).
 */
export function makeSkipMemory(bits: Int32Array, count: number, tokens: number): SkipMemory | undefined {
  try {
    if (bits.length * 4 > BITS_BYTES) return undefined;
    if (compiled === undefined) compiled = new WebAssembly.Module(Buffer.from(SKIP_WASM, 'base64'));
    if (!compiled) return undefined;
    const bytes = BITS_BYTES + count * tokens * 4;
    if (bytes > 0x7fff0000) return undefined;
    const mem = new WebAssembly.Memory({ initial: Math.ceil(bytes / 65536) });
    const inst = new WebAssembly.Instance(compiled, { env: { mem } });
    new Int32Array(mem.buffer, 0, bits.length).set(bits);
    const buffers = Array.from({ length: count }, (_, k) => new Uint32Array(mem.buffer, BITS_BYTES + k * tokens * 4, tokens));
    return { buffer: mem.buffer, skip: inst.exports.skip as SkipMemory['skip'], buffers };
  } catch {
    compiled = null;
    return undefined;
  }
}
