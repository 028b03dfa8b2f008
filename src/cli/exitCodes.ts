/**
 * The exit codes of `token-shards`, written once: every command ends through `describeError`
 * (`context.ts`) or returns one of these, and `--help` prints {@link EXIT_RULES}.
 *
 * The rule: 1 whenever the data (a dataset, a shard, a tokenizer, a part file, the ids it
 * holds) has a problem — whichever command found it, whether it stops the command or is
 * reported next to its output — and when the output cannot be written; 2 when the command line
 * is wrong, including values outside what the flag takes (an id ≥ 2^32, `--jobs 1000`) and files
 * named on the command line that do not exist; 0 otherwise, also when a reader of standard
 * output stopped reading (EPIPE, `… | head -1`).
 */

/** Exit codes of the CLI. */
export const EXIT = { ok: 0, data: 1, usage: 2, interrupted: 130 } as const;

/** One row of the exit-code table: the code and when a command ends with it. */
export interface ExitRule {
  code: (typeof EXIT)[keyof typeof EXIT];
  when: string;
}

/** The exit-code table, as `--help` prints it. */
export const EXIT_RULES: readonly ExitRule[] = [
  { code: EXIT.ok, when: 'ok (also when the reader of standard output stops early, as `| head` does)' },
  {
    code: EXIT.data,
    when:
      'the data has a problem: a dataset, manifest, shard, tokenizer or part file that is broken or unreadable, ' +
      'ids not in the vocabulary, faults that verify, index or info report; or the output cannot be written',
  },
  {
    code: EXIT.usage,
    when: 'bad usage: unknown or conflicting flags, values out of range, files named on the command line that do not exist',
  },
  { code: EXIT.interrupted, when: 'interrupted (Ctrl-C)' },
];

/** The table as help text: "Exit codes: 0 ok …; 1 …". */
export function exitCodeHelp(): string {
  return `Exit codes:\n${EXIT_RULES.map((r) => `    ${String(r.code).padEnd(3)}  ${r.when}`).join('\n')}`;
}
