/**
 * Search the stream: count and list the occurrences of literal terms over training time.
 *
 * ## What a match is (exact; the README says the same)
 * - A **document** is the bytes of the tokens between two EOS ids (an added token contributes its
 *   content's UTF-8 bytes, as the decode does; an id with no token contributes no bytes). A match
 *   never crosses an EOS; it does cross token edges and shard edges.
 * - A term is a literal string (UTF-8). An **occurrence** is every byte position in a document
 *   where the term starts; overlapping occurrences each count ("aa" occurs 3 times in "aaaa").
 * - An occurrence's **place** is the global offset of the token that holds its first byte; its
 *   update is `offset ÷ G` (0-based), then sequence and position as everywhere else. An
 *   occurrence that starts in the look-ahead token(s) (after the last whole update) belongs to no
 *   update: it is not counted by {@link countTerms} (and {@link findTerms} lists it with
 *   `update: null`).
 * - `word`: the characters just before and after the occurrence are not letters, digits or `_`
 *   (Unicode `\p{L}`, `\p{N}`); a document edge (EOS, start or end of the stream) counts as a
 *   non-word character; bytes that are not valid UTF-8 decode to U+FFFD, a non-word character.
 * - `ignoreCase`: Unicode simple case folding (the folding of JavaScript's `/iu` regular
 *   expressions, `CaseFolding.txt` statuses C and S): each character of the term matches every
 *   character with the same simple fold, whatever its UTF-8 length.
 * - `ids`: a term given as token ids (`"791,4062"`) matches exact runs of ids anywhere, EOS
 *   included when the term names it; its place is its first token. `word`/`ignoreCase` do not
 *   apply (rejected by {@link parseTerms}).
 *
 * Results are identical to a byte-level reference over decoded documents
 * (`scripts/reference_search.py`), never approximately equal.
 *
 * ## How (speed: token speed, not decode speed)
 * All terms are compiled into one automaton over bytes (ids for `ids`), expanded into a table
 * indexed by (state, token id) that moves through all of a token's bytes at once and records
 * the matches it completes, so the scan is one table lookup per token. Count scans run in
 * worker threads (`src/core/workers/searchWorker.ts`), one shard per task, reading big
 * sequential ranges through {@link TokenStream}.
 *
 * Units: offsets and counts of tokens are global token offsets / tokens; `bytesPerSecond` is
 * bytes of token storage read per second.
 */
export * from './types';
export { parseTerms, parseShardRange, parseIdTerm } from './terms';
export { parseTermsFile, readTermsFile, MAX_TERMS_FILE_BYTES } from './termsFile';
export { countTerms, defaultPer, resolveSearchWorker } from './count';
export { datasetFingerprint, mergeCounts, parseCountPart } from './merge';
export { findTerms } from './find';
export { heatmapModel } from './heatmap';
export type { HeatmapModel, HeatmapOrder } from './heatmap';
export { bucketShares, topTerms } from './share';
