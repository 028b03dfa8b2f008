/**
 * `findTerms`: the occurrences themselves, in stream order, with their decoded context. Scans
 * on the calling thread one chunk (about a million tokens, a few ms) at a time, yielding to the
 * event loop between chunks. Match rules in `./index.ts`.
 */
import type { Dataset } from '../dataset';
import { CancelledError, RangeRequestError } from '../errors';
import { fmt } from '../units';
import type { LoadedTokenizer } from '../tokenizer';
import { TokenBytes, compileTerms, tokenBytesOf } from './automaton';
import { MatchPlace } from './scan';
import { makeScanner } from './task';
import { parseTerms } from './terms';
import { FindOptions, Occurrence, SearchOptions } from './types';

const FIND_CHUNK = 1 << 20;
const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/** Bytes of ids `[from, to)` of `ids` (ids mode keeps EOS; unknown ids add none). */
function bytesOfRange(tb: TokenBytes, ids: Uint32Array, from: number, to: number, firstFrom = 0, lastTo = -1): number[] {
  const out: number[] = [];
  for (let i = from; i < to; i++) {
    const id = ids[i];
    if (id >= tb.vocabSize) continue;
    const o0 = tb.offsets[id],
      o1 = tb.offsets[id + 1];
    const s = i === from ? o0 + firstFrom : o0;
    const e = i === to - 1 && lastTo >= 0 ? o0 + lastTo : o1;
    for (let o = s; o < e; o++) out.push(tb.bytes[o]);
  }
  return out;
}

/** Up to `n` UTF-16 units from the end (or start) of `s`, never splitting a surrogate pair. */
function tail(s: string, n: number): string {
  if (s.length <= n) return s;
  let i = s.length - n;
  if (i > 0 && /[\uDC00-\uDFFF]/.test(s[i])) i++;
  return s.slice(i);
}
function head(s: string, n: number): string {
  if (s.length <= n) return s;
  let i = n;
  if (/[\uD800-\uDBFF]/.test(s[i - 1])) i--;
  return s.slice(0, i);
}

/**
 * Lists occurrences in stream order (by place, then by first byte, then by term), scanning
 * lazily; memory is bounded by `limit`. Context: up to `context` characters each side, cut at
 * the document's EOS (`ids` terms that name EOS show it as its content inside the match).
 * @throws (from the iterator) SearchInputError for bad terms or offsets; DataError for
 *   unreadable shards; CancelledError when `signal` fires.
 */
export async function* findTerms(
  ds: Dataset,
  tok: LoadedTokenizer,
  terms: string[],
  options: SearchOptions,
  opts: FindOptions = {},
): AsyncGenerator<Occurrence> {
  terms = parseTerms(terms, options);
  const limit = opts.limit ?? 100;
  const context = opts.context ?? 60;
  const total = ds.stream.totalTokens;
  const from = opts.fromOffset ?? 0;
  const to = Math.min(opts.toOffset ?? total, total);
  if (!Number.isSafeInteger(from) || from < 0 || from > total)
    throw new RangeRequestError(`fromOffset ${fmt(from)} is outside the stream [0, ${fmt(total)}]`);
  if (limit <= 0) return;
  const tb = tokenBytesOf(tok);
  const eos = ds.settings.eosTokenId;
  const setup = {
    compiled: compileTerms(terms, options),
    tokenBytes: tb,
    eos,
    word: options.word,
    G: ds.schedule.G,
    updates: ds.schedule.numUpdates,
    per: 1,
  };
  const scanner = makeScanner(ds.stream, setup);
  const idsMode = options.ids;
  const W = context * 4 + 16;
  let yielded = 0;
  for (let p = from; p < to; p += FIND_CHUNK) {
    if (opts.signal?.aborted) throw new CancelledError();
    const found: MatchPlace[] = [];
    await scanner.scanRange(
      p,
      Math.min(to, p + FIND_CHUNK),
      (term, start, startByte, end, endByte) => found.push({ term, start, startByte, end, endByte }),
      { chunkTokens: FIND_CHUNK + 4096, signal: opts.signal },
    );
    found.sort((x, y) => x.start - y.start || x.startByte - y.startByte || x.term - y.term);
    for (const m of found) {
      if (opts.signal?.aborted) throw new CancelledError();
      const lo = Math.max(0, m.start - W),
        hi = Math.min(total, m.end + 1 + W);
      const ids = await ds.stream.read(lo, hi - lo);
      const s = m.start - lo,
        e = m.end - lo;
      let docStart = 0,
        docEnd = ids.length;
      for (let i = s - 1; i >= 0; i--)
        if (ids[i] === eos) {
          docStart = i + 1;
          break;
        }
      for (let i = e + 1; i < ids.length; i++)
        if (ids[i] === eos) {
          docEnd = i;
          break;
        }
      const pre = decoder.decode(Uint8Array.from(bytesOfRange(tb, ids, docStart, s + 1, 0, m.startByte)));
      const mid = idsMode
        ? decoder.decode(Uint8Array.from(bytesOfRange(tb, ids, s, e + 1)))
        : decoder.decode(Uint8Array.from(bytesOfRange(tb, ids, s, e + 1, m.startByte, m.endByte)));
      const post = idsMode
        ? decoder.decode(Uint8Array.from(bytesOfRange(tb, ids, e + 1, docEnd)))
        : decoder.decode(Uint8Array.from(bytesOfRange(tb, ids, e, docEnd, m.endByte)));
      const before = tail(pre, context);
      const pos = ds.schedule.position(m.start);
      yield {
        term: terms[m.term],
        termIndex: m.term,
        offset: m.start,
        update: pos.lookAhead ? null : pos.update!,
        sequence: pos.lookAhead ? null : pos.sequence!,
        position: pos.lookAhead ? null : pos.position!,
        context: before + mid + head(post, context),
        matchStart: before.length,
        matchEnd: before.length + mid.length,
      };
      if (++yielded >= limit) return;
    }
    await new Promise<void>((r) => setImmediate(r));
  }
}
