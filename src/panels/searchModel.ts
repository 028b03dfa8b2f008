/**
 * Pure helpers of the search panel (no `vscode` import; unit-tested in plain Node): splitting the
 * form's terms, re-bucketing a count result, and the token range of a match for highlighting.
 */
import type { Dataset } from '../core/dataset';
import type { CountResult, Occurrence } from '../core/search';
import type { LoadedTokenizer } from '../core/tokenizer';
import type { SearchForm, SearchProgressInfo, SearchToWebview } from '../protocol/search';

/**
 * Splits the form's text into raw terms: comma-separated (`\,` is a literal comma, `\\` a
 * backslash), each trimmed of surrounding whitespace; with `ids`, terms are separated by `;`.
 * Empty pieces are kept so that `parseTerms` names them ("term 2 is empty").
 */
export function splitTerms(text: string, ids: boolean): string[] {
  if (ids) return text.split(';').map((t) => t.trim());
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && (text[i + 1] === ',' || text[i + 1] === '\\')) {
      cur += text[++i];
      continue;
    }
    if (c === ',') {
      out.push(cur.trim());
      cur = '';
      continue;
    }
    cur += c;
  }
  out.push(cur.trim());
  return out;
}

/** Joins terms back into the form's text (inverse of {@link splitTerms}). */
export function joinTerms(terms: string[], ids: boolean): string {
  return ids ? terms.join('; ') : terms.map((t) => t.replace(/\\/g, '\\\\').replace(/,/g, '\\,')).join(', ');
}

/**
 * Merges consecutive buckets of `r` into buckets of `per` updates (`per` must be a multiple of
 * `r.per`): counts and tokens add up exactly, the last bucket may be shorter.
 * @throws Error when `per` is not a positive multiple of `r.per`.
 */
export function rebucket(r: CountResult, per: number): CountResult {
  if (!(Number.isInteger(per) && per > 0 && per % r.per === 0)) throw new Error(`bucket size ${per} is not a multiple of ${r.per}`);
  const m = per / r.per;
  const buckets: CountResult['buckets'] = [];
  for (let i = 0; i < r.buckets.length; i += m) {
    const group = r.buckets.slice(i, i + m);
    buckets.push({
      first_update: group[0].first_update,
      last_update: group[group.length - 1].last_update,
      tokens: group.reduce((a, b) => a + b.tokens, 0),
      counts: r.terms.map((_t, k) => group.reduce((a, b) => a + b.counts[k], 0)),
    });
  }
  return { ...r, per, buckets, totals: [...r.totals] };
}

/**
 * The global token range `[start, end)` covering an occurrence's bytes: for `ids` terms the run
 * of ids; for text, from the token holding the first byte to the one holding the last, found by
 * locating the match's bytes (as decoded in the context) in the token bytes from `occ.offset`.
 * Falls back to the first token alone when the bytes cannot be located (e.g. invalid UTF-8).
 */
export async function matchTokenRange(
  ds: Dataset,
  tok: LoadedTokenizer | undefined,
  occ: Occurrence,
  ids: boolean,
): Promise<[number, number]> {
  const start = occ.offset;
  if (ids) return [start, Math.min(ds.storedTokens, start + occ.term.split(',').length)];
  if (!tok) return [start, start + 1];
  const match = Buffer.from(occ.context.slice(occ.matchStart, occ.matchEnd), 'utf8');
  const n = Math.min(ds.storedTokens - start, match.length + 1);
  if (n <= 0 || match.length === 0) return [start, start + 1];
  const idsRead = await ds.stream.readClipped(start, n);
  const pieces = Array.from(idsRead, (id) => Uint8Array.from(tok.bytesOf(id)));
  const ends: number[] = [];
  let total = 0;
  for (const p of pieces) {
    total += p.length;
    ends.push(total);
  }
  const all = Buffer.concat(pieces);
  const firstLen = pieces[0]?.length ?? 0;
  for (let b0 = 0; b0 < Math.max(1, firstLen); b0++) {
    if (b0 + match.length <= all.length && all.subarray(b0, b0 + match.length).equals(match)) {
      const last = b0 + match.length - 1;
      const k = ends.findIndex((e) => e > last);
      return [start, start + (k < 0 ? pieces.length : k + 1)];
    }
  }
  return [start, start + 1];
}

/**
 * The search a panel shows, as far as the page must draw it again after a reload (a hidden panel's
 * page is rebuilt when it is shown again): its form, how far it got and how it ended.
 */
export interface ShownSearch {
  id: number;
  form: SearchForm;
  terms: string[];
  /** Updates per bucket. */
  per: number;
  /** `running` → `cancelling` (Cancel pressed) → `cancelled`; or `done`, or `failed`. */
  state: 'running' | 'cancelling' | 'cancelled' | 'done' | 'failed';
  /** The last partial counts posted while it ran, with the progress they came with. */
  partial?: { counts: CountResult; progress: SearchProgressInfo };
  /** The final counts (state `done`). */
  result?: CountResult;
  /** The message of a failed search. */
  error?: string;
}

/**
 * The messages that draw `s` on a fresh page, in order: `started`, then the partial counts (if
 * any), then how it stands — `done`, `cancelling`, `cancelled` or `error`; nothing more while it
 * still runs (its next progress message follows). A cancelled search keeps its partial chart.
 */
export function replaySearch(s: ShownSearch): SearchToWebview[] {
  const out: SearchToWebview[] = [{ type: 'started', searchId: s.id, form: s.form, terms: s.terms, per: s.per }];
  if (s.state === 'done' && s.result) return [...out, { type: 'done', searchId: s.id, result: s.result, ms: 0 }];
  if (s.partial) out.push({ type: 'progress', searchId: s.id, partial: s.partial.counts, progress: s.partial.progress });
  if (s.state === 'cancelling') out.push({ type: 'cancelling', searchId: s.id });
  else if (s.state === 'cancelled') out.push({ type: 'cancelled', searchId: s.id });
  else if (s.state === 'failed') out.push({ type: 'error', searchId: s.id, message: s.error ?? '' });
  return out;
}
