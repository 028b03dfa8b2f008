/**
 * What the encoder (`@huggingface/tokenizers`) needs from a `tokenizer.json`, checked before it
 * is handed over, so a bad file gives a message naming the file and the field ("model.merges is
 * missing") instead of "Cannot read properties of undefined". Also finds the pre-tokenizer's
 * regular expressions, so a time-out can name the pattern that probably backtracked.
 */
import { DataError } from './errors';

/** Pre-tokenizer types the bundled `@huggingface/tokenizers` (0.2.x) can build. */
export const KNOWN_PRE_TOKENIZERS = [
  'BertPreTokenizer',
  'Sequence',
  'Whitespace',
  'WhitespaceSplit',
  'Metaspace',
  'ByteLevel',
  'Split',
  'Punctuation',
  'Digits',
  'Replace',
  'FixedLength',
];

/** A regular expression of a pre-tokenizer (or normalizer) and where it sits in the file. */
export interface TokenizerPattern {
  /** JSON path, e.g. `pre_tokenizer.pretokenizers[0].pattern.Regex`. */
  field: string;
  /** The pattern as written. */
  pattern: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks the parts of a parsed tokenizer.json that encoding uses.
 * @throws DataError naming `file` and the field: no `model.merges` array (BPE), a merge that is
 *   neither "a b" nor ["a", "b"], a pre-tokenizer whose `type` is missing or unknown, a `Split`
 *   without a pattern.
 */
export function checkEncoderConfig(json: unknown, file: string): void {
  if (!isObj(json)) throw new DataError(`${file}: not a tokenizer.json object`, file);
  const model = json.model;
  if (!isObj(model)) throw new DataError(`${file}: field model is missing; expected a BPE model with vocab and merges`, file);
  if ((model.type ?? 'BPE') === 'BPE') {
    if (!('merges' in model))
      throw new DataError(
        `${file}: field model.merges is missing; a BPE tokenizer needs its merges to encode (decoding still works)`,
        file,
      );
    if (!Array.isArray(model.merges))
      throw new DataError(`${file}: field model.merges is ${typeof model.merges}; expected an array of merges`, file);
    const bad = model.merges.findIndex(
      (m) => !(typeof m === 'string' ? m.includes(' ') : Array.isArray(m) && m.length === 2 && m.every((x) => typeof x === 'string')),
    );
    if (bad >= 0)
      throw new DataError(
        `${file}: field model.merges[${bad}] is ${JSON.stringify(model.merges[bad])?.slice(0, 60)}; expected "a b" or ["a", "b"]`,
        file,
      );
  }
  const walk = (pt: unknown, field: string): void => {
    if (pt === null || pt === undefined) return;
    if (!isObj(pt)) throw new DataError(`${file}: field ${field} is not an object`, file);
    const type = pt.type;
    if (typeof type !== 'string') throw new DataError(`${file}: field ${field}.type is missing`, file);
    if (!KNOWN_PRE_TOKENIZERS.includes(type)) {
      throw new DataError(
        `${file}: field ${field}.type is ${JSON.stringify(type).slice(0, 60)}, an unknown pre-tokenizer type (known: ${KNOWN_PRE_TOKENIZERS.join(', ')})`,
        file,
      );
    }
    if (type === 'Sequence') {
      if (!Array.isArray(pt.pretokenizers))
        throw new DataError(`${file}: field ${field}.pretokenizers is missing; a Sequence pre-tokenizer lists its parts there`, file);
      pt.pretokenizers.forEach((p, i) => walk(p, `${field}.pretokenizers[${i}]`));
    }
    if (type === 'Split') {
      const p = pt.pattern;
      if (!isObj(p) || (typeof p.Regex !== 'string' && typeof p.String !== 'string')) {
        throw new DataError(`${file}: field ${field}.pattern is missing; a Split pre-tokenizer needs {"Regex": …} or {"String": …}`, file);
      }
    }
  };
  walk(json.pre_tokenizer, 'pre_tokenizer');
}

/** Every `Regex` pattern in the pre-tokenizer and normalizer, with its field path. */
export function tokenizerPatterns(json: unknown): TokenizerPattern[] {
  const out: TokenizerPattern[] = [];
  const walk = (v: unknown, field: string, depth: number): void => {
    if (depth > 16) return;
    if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, `${field}[${i}]`, depth + 1));
      return;
    }
    if (!isObj(v)) return;
    for (const [k, x] of Object.entries(v)) {
      if (k === 'Regex' && typeof x === 'string') out.push({ field: `${field}.Regex`, pattern: x });
      else walk(x, `${field}.${k}`, depth + 1);
    }
  };
  if (isObj(json)) {
    walk(json.pre_tokenizer, 'pre_tokenizer', 0);
    walk(json.normalizer, 'normalizer', 0);
  }
  return out;
}
