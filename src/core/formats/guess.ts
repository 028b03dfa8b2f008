/**
 * Guessing the dtype of headerless token files from their ids: the same look the shard editor's
 * uint16/uint32 warning uses (`diagnoseIds` in `../tokenizer.ts`: uint16 data read as uint32
 * gives ids in the billions), turned into a decision with its reason for `info`.
 */
import { fmt } from '../units';

/** Bytes of a file sampled for a guess (its first 64 KiB of tokens). */
export const GUESS_SAMPLE_BYTES = 1 << 16;

/** Largest vocabulary assumed when no tokenizer is known (Gemma's 256,000 fits). */
export const ASSUMED_MAX_VOCAB = 1 << 18;

/** Share of sampled ids that must be valid for a reading to be taken. */
const VALID_SHARE = 0.99;

/** A guessed dtype and the sentence `info` prints for it. */
export interface DtypeGuess {
  dtype: 'uint16' | 'uint32';
  reason: string;
}

/**
 * Guesses uint16 or uint32 for headerless token bytes. Read as uint32, uint16 ids pair into
 * `lo + 65,536·hi`, past any vocabulary unless `hi` is one of the first few ids; so the bytes are
 * uint32 when ≥ 99% of the uint32 ids are below the vocabulary size, else uint16. A size that is
 * not a multiple of 4 bytes can only be uint16.
 * @param sample the file's first bytes (after any header), ideally {@link GUESS_SAMPLE_BYTES}.
 * @param sizeBytes the token bytes' total size (header excluded).
 * @param vocabSize the tokenizer's vocabulary size, or undefined (then {@link ASSUMED_MAX_VOCAB}).
 * @param file name used in the reason.
 */
export function guessDtype(sample: Uint8Array, sizeBytes: number, vocabSize: number | undefined, file: string): DtypeGuess {
  if (sizeBytes % 4 !== 0) {
    return { dtype: 'uint16', reason: `dtype guessed uint16: ${file} has ${fmt(sizeBytes)} token bytes, not a multiple of 4` };
  }
  const n = Math.floor(Math.min(sample.length, GUESS_SAMPLE_BYTES) / 4);
  if (n === 0) return { dtype: 'uint32', reason: `dtype assumed uint32: ${file} holds no tokens to look at` };
  const view = new DataView(sample.buffer, sample.byteOffset, n * 4);
  const bound = vocabSize ?? ASSUMED_MAX_VOCAB;
  let valid = 0;
  for (let i = 0; i < n; i++) if (view.getUint32(i * 4, true) < bound) valid++;
  const share = valid / n;
  const limit =
    vocabSize !== undefined
      ? `the vocabulary size ${fmt(vocabSize)}`
      : `${fmt(ASSUMED_MAX_VOCAB)} (no tokenizer: largest vocabulary assumed)`;
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  if (share >= VALID_SHARE) {
    return {
      dtype: 'uint32',
      reason: `dtype guessed uint32: read as uint32, ${pct(share)} of the first ${fmt(n)} ids of ${file} are below ${limit}`,
    };
  }
  return {
    dtype: 'uint16',
    reason: `dtype guessed uint16: read as uint32, only ${pct(share)} of the first ${fmt(n)} ids of ${file} are below ${limit} (uint16 ids pair into large numbers)`,
  };
}
