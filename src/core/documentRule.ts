/**
 * The one rule of where documents begin in a stream without a document index, asked by every
 * part that numbers or bounds documents (`documents.ts`, the stream index `streamIndex/queries.ts`
 * and its summary, update statistics `stats.ts`, `locate`). A delimiter id separates documents in
 * one of two ways ({@link DelimiterRole}, from the format layer):
 * - `closes` (the dataset card's EOS 100257, Megatron `--append-eod`, nanoGPT): the delimiter is
 *   the last token of the document before it; the next document begins one token after it.
 * - `opens` (llm.c, karpathy/llm.c `dev/data/fineweb.py` commit f1e2ace6: `tokens = [eot]` then
 *   the document's ids; the Llama 3 path prepends BOS 128000): the delimiter is the first token of
 *   the document after it; a document that does not fit continues at the start of the next file.
 *
 * Both are one rule over **boundaries**: the delimiter at global token offset `p` puts a boundary at
 * {@link boundaryOf}(`p`) (`p + 1` for `closes`, `p` for `opens`). Document 0 begins at offset 0;
 * document `n ≥ 1` begins at the n-th boundary inside `(0, totalTokens)`. A boundary at 0 (a stream
 * that opens with its delimiter) or at `totalTokens` (a stream that ends with its EOS) begins no
 * document. So:
 * - the document number at offset `o` = delimiters in `[0, countEnd(o))` − {@link leadingDelimiters};
 * - document `n ≥ 1` begins at `boundaryOf(the (n + leadingDelimiters)-th delimiter)` (1-based);
 * - its length (tokens) is the next delimiter's offset − its start: for `closes` the closing EOS
 *   is left out, for `opens` the opening delimiter is counted;
 * - a non-empty stream has `delimiters + 1 − (leading or trailing delimiter)` documents.
 *
 * Units: offsets in tokens, global.
 */
import type { DelimiterRole } from './formats/types';

/** The delimiter id of a stream and what it does. */
export interface DocumentRule {
  /** The delimiter (EOS, EOT, BOS) token id. */
  delimiter: number;
  role: DelimiterRole;
}

/**
 * The rule of a dataset: its EOS setting and the format's {@link DelimiterRole} (`closes` for the
 * dataset card's layout and every format that does not say otherwise).
 */
export function documentRuleOf(ds: { settings: { eosTokenId: number }; format?: { delimiter?: DelimiterRole } }): DocumentRule {
  return { delimiter: ds.settings.eosTokenId, role: ds.format?.delimiter ?? 'closes' };
}

/** Global offset of the boundary the delimiter at offset `p` puts: where a document begins (`p + 1` for `closes`, `p` for `opens`). */
export function boundaryOf(role: DelimiterRole, p: number): number {
  return role === 'opens' ? p : p + 1;
}

/**
 * End (exclusive) of the range `[0, end)` whose delimiters, less {@link leadingDelimiters}, number
 * the document holding offset `o`: `o` for `closes` (the EOS at `o` still belongs to the document
 * it closes), `o + 1` for `opens` (the delimiter at `o` already belongs to the document it opens).
 */
export function countEnd(role: DelimiterRole, o: number): number {
  return role === 'opens' ? o + 1 : o;
}

/**
 * Delimiters counted by {@link countEnd} that begin no document: 1 when the delimiter opens
 * documents and is the stream's first token (its boundary is 0, where document 0 begins anyway),
 * else 0.
 * @param firstId the stream's first token id (undefined for an empty stream).
 */
export function leadingDelimiters(rule: DocumentRule, firstId: number | undefined): 0 | 1 {
  return rule.role === 'opens' && firstId === rule.delimiter ? 1 : 0;
}

/**
 * Documents in a non-empty stream of `delimiters` delimiters: one more than the boundaries inside
 * `(0, totalTokens)`. Returns 0 for an empty stream.
 * @param firstId the stream's first token id; @param lastId its last (undefined when empty).
 */
export function documentCountOf(rule: DocumentRule, delimiters: number, firstId: number | undefined, lastId: number | undefined): number {
  if (firstId === undefined || lastId === undefined) return 0;
  const edge = rule.role === 'opens' ? firstId : lastId;
  return delimiters + 1 - (edge === rule.delimiter ? 1 : 0);
}
