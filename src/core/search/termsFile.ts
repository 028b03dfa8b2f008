/**
 * A terms file (`count --terms-file names.txt`, the search panel's "Terms from file…"): one term
 * per line, the one parser both use.
 *
 * Format: UTF-8 text (a leading byte-order mark is skipped); lines end with LF or CRLF (the CR is
 * not part of the term); a line whose first character that is not a space or tab is `#` is a
 * comment; a line that is empty or only whitespace is skipped. Every other line is one term,
 * exactly as written (spaces kept: `" Lily"` is a term with a leading space). Terms must meet the
 * rules of `parseTerms` (`./terms.ts`): at most {@link MAX_TERM_BYTES} bytes of UTF-8, at most
 * {@link MAX_TERMS} terms; with `ids`, each line is one id term (`791,4062`).
 */
import { fmt } from '../units';
import { readRegularFile } from '../safeRead';
import { decodeOneChar, parseIdTerm, parseTerms, utf8LeadLength } from './terms';
import { MAX_TERMS, MAX_TERM_BYTES, SearchInputError, SearchOptions } from './types';

/** Largest terms file read: {@link MAX_TERMS} lines of {@link MAX_TERM_BYTES} bytes, with room for comments. */
export const MAX_TERMS_FILE_BYTES = 64 * 1024 * 1024;

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses the bytes of a terms file (format: the module comment).
 * @param bytes the whole file.
 * @param file names the file in messages.
 * @param options the search options (`ids` reads each line as token ids).
 * @returns the terms in file order, as `parseTerms` returns them (duplicates kept).
 * @throws SearchInputError, one line naming the file and line: a NUL byte (a binary file), a
 *   line that is not valid UTF-8, a term line over {@link MAX_TERM_BYTES} bytes, a line that is
 *   not a list of token ids (with `ids`), more than {@link MAX_TERMS} terms, or no term at all.
 */
export function parseTermsFile(bytes: Uint8Array, file: string, options: SearchOptions): string[] {
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    const line = countNewlines(bytes, nul) + 1;
    throw new SearchInputError(
      `${file}: a NUL byte at line ${fmt(line)} (byte offset ${fmt(nul)}): a binary file, not a terms file (one UTF-8 term per line)`,
    );
  }
  let start = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const terms: string[] = [];
  let lineNo = 0;
  while (start < bytes.length) {
    lineNo++;
    let end = bytes.indexOf(0x0a, start);
    const next = end < 0 ? bytes.length : end + 1;
    if (end < 0) end = bytes.length;
    const stop = end > start && bytes[end - 1] === 0x0d ? end - 1 : end;
    const raw = bytes.subarray(start, stop);
    start = next;
    let text: string;
    try {
      text = STRICT_UTF8.decode(raw);
    } catch {
      throw new SearchInputError(
        `${file} line ${fmt(lineNo)}: not valid UTF-8 (byte offset ${fmt(badUtf8At(raw))} in the line); expected UTF-8 text`,
      );
    }
    const lead = text.trimStart();
    if (lead === '' || lead.startsWith('#')) continue;
    if (raw.length > MAX_TERM_BYTES)
      throw new SearchInputError(
        `${file} line ${fmt(lineNo)}: ${fmt(raw.length)} bytes; a term is at most ${fmt(MAX_TERM_BYTES)} bytes of UTF-8`,
      );
    if (terms.length === MAX_TERMS)
      throw new SearchInputError(`${file} line ${fmt(lineNo)}: more than ${fmt(MAX_TERMS)} terms; at most ${fmt(MAX_TERMS)} per search`);
    if (options.ids) {
      try {
        parseIdTerm(text);
      } catch (err) {
        throw new SearchInputError(`${file} line ${fmt(lineNo)}: ${(err as Error).message}`);
      }
    }
    terms.push(text);
  }
  if (terms.length === 0) throw new SearchInputError(`${file}: no term (every line is blank or a # comment); expected one term per line`);
  return parseTerms(terms, options);
}

/**
 * Reads and parses a terms file ({@link parseTermsFile}).
 * @throws SearchInputError naming the file: missing, unreadable, not a regular file, over
 *   {@link MAX_TERMS_FILE_BYTES} bytes, or any fault {@link parseTermsFile} reports.
 */
export async function readTermsFile(file: string, options: SearchOptions): Promise<string[]> {
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(file, 'a terms file', MAX_TERMS_FILE_BYTES);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // (a file that is not a regular one, or too large, comes with its own "expected …")
    if (!e.code) throw new SearchInputError(e.message);
    const why = e.code === 'ENOENT' ? `${file}: no such file` : `${file}: cannot be read (${e.code})`;
    throw new SearchInputError(`${why}; expected a terms file (one UTF-8 term per line)`);
  }
  return parseTermsFile(bytes, file, options);
}

function countNewlines(bytes: Uint8Array, end: number): number {
  let n = 0;
  for (let i = 0; i < end; i++) if (bytes[i] === 0x0a) n++;
  return n;
}

/** Byte offset of the first character of `bytes` that is not valid UTF-8 (`bytes.length` if all are). */
function badUtf8At(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const n = utf8LeadLength(bytes[i]);
    if (n === 0 || i + n > bytes.length || decodeOneChar(bytes.subarray(i, i + n)) < 0) return i;
    i += n;
  }
  return bytes.length;
}
