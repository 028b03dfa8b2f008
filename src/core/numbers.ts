/**
 * Parsing of numbers typed by people: update indices, token offsets, token ids. Accepted forms:
 * `55000`, `55_000`, `55,000`, `5.5e4` (when the value is a whole number), `0xD6D8`. Rejected,
 * with a message saying why: empty text, words, negatives, fractions, values past 2^53.
 */

/** Result of {@link parseNumberInput}: a value, or an error sentence for the user. */
export type ParsedNumber = { ok: true; value: number } | { ok: false; error: string };

/**
 * Parses a non-negative integer as typed by a person.
 * @param text the raw input (surrounding whitespace ignored).
 */
export function parseNumberInput(text: string): ParsedNumber {
  const t = text.trim();
  if (t === '') return { ok: false, error: 'enter a number' };
  if (/^-\s*[\d.]/.test(t)) return { ok: false, error: `${t} is negative; expected a number ≥ 0` };
  let value: number;
  if (/^0x[0-9a-f]+$/i.test(t)) {
    value = Number.parseInt(t.slice(2), 16);
  } else if (/^\d{1,3}(,\d{3})+$/.test(t)) {
    value = Number(t.replace(/,/g, ''));
  } else if (/^\d+(_\d+)*$/.test(t)) {
    value = Number(t.replace(/_/g, ''));
  } else if (/^(\d+(_\d+)*)?(\.\d+)?(e\+?\d+)?$/i.test(t) && /\d/.test(t)) {
    value = Number(t.replace(/_/g, ''));
    if (!Number.isFinite(value)) return { ok: false, error: `${t} is too large (at most 2^53 − 1)` };
    if (!Number.isInteger(value)) return { ok: false, error: `${t} is not a whole number` };
  } else {
    return { ok: false, error: `${JSON.stringify(t)} is not a number (examples: 55000, 55_000, 5.5e4, 0xD6D8)` };
  }
  if (!Number.isSafeInteger(value)) return { ok: false, error: `${t} is too large (at most 2^53 − 1)` };
  return { ok: true, value };
}
