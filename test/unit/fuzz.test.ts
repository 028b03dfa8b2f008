/**
 * Seeded fuzzing of the parsers of untrusted text: 10,000 mutations each of shard_manifest.jsonl text, manifest.json
 * text and token-id list text per run. Every case must end with the parse result or the project's
 * own typed error (DataError / RangeRequestError / problems in the result) — never an untyped
 * exception such as "Maximum call stack size exceeded" or "Cannot read properties of undefined" —
 * and no single case may take over 1 s of this process's CPU time (a bound on pathological inputs,
 * e.g. exponential backtracking or quadratic scans, measured per case with process.cpuUsage so that
 * other processes on a loaded machine do not count; not a benchmark).
 *
 * The seed is fixed (set TSI_FUZZ_SEED to explore others); a failure prints the seed, the case
 * number and the input, so it can be replayed.
 */
import * as assert from 'assert';
import { DataError, RangeRequestError } from '../../src/core/errors';
import { extractIds, findIdsAt } from '../../src/core/idList';
import { parseShardManifest, parseSideFile, scheduleOverrides } from '../../src/core/manifest';
import { parseNumberInput } from '../../src/core/numbers';
import { limitDepth } from '../../src/core/safeJson';
import { jsonSafe, plainText, terminalSafe } from '../../src/core/untrusted';

const SEED = Number(process.env.TSI_FUZZ_SEED ?? 20261201);
const CASES = 10_000;
const CASE_LIMIT_MS = 1000;

/** mulberry32: a small seeded PRNG. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = [
  '[',
  ']',
  '{',
  '}',
  '"',
  ',',
  ':',
  '\\',
  '-',
  '+',
  '.',
  'e',
  'E',
  '0',
  '1',
  '9',
  ' ',
  '\n',
  '\r',
  '\t',
  'x',
  'null',
  'true',
  '1e309',
  '-0',
  '0x1F',
  '9007199254740993',
  '\u0000',
  '\u001b[31m',
  '\u009b',
  '\u202e',
  '\ud800',
  '🐋',
  '$(zap)',
  '[a](command:x)',
  '..',
  '/',
  '../..',
  '/etc/passwd',
  '"shard"',
  '"start_token"',
  '"num_tokens"',
  '"sha256"',
  '__proto__',
  '"__proto__"',
  'constructor',
];

/** One random edit of `s`. */
function mutateOnce(s: string, r: () => number): string {
  const pos = Math.floor(r() * (s.length + 1));
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)];
  switch (Math.floor(r() * 10)) {
    case 0:
      return s.slice(0, pos) + s.slice(pos + 1 + Math.floor(r() * 8)); // delete
    case 1:
    case 2:
      return s.slice(0, pos) + pick(ALPHABET) + s.slice(pos); // insert a token
    case 3:
      return s.slice(0, pos) + pick(ALPHABET) + s.slice(pos + 1); // replace a char
    case 4: {
      const a = Math.floor(r() * s.length),
        n = Math.floor(r() * 40);
      return s.slice(0, pos) + s.slice(a, a + n) + s.slice(pos);
    } // duplicate
    case 5:
      return s.slice(0, pos); // truncate
    case 6: {
      const lines = s.split('\n');
      const i = Math.floor(r() * lines.length),
        j = Math.floor(r() * lines.length);
      [lines[i], lines[j]] = [lines[j], lines[i]];
      return lines.join('\n');
    }
    case 7:
      return s.replace(/\d+/, () =>
        pick(['-1', '1.5', '1e400', '9007199254740993', '0', '16777217', '4294967296', '"12"', '[]', '{}', 'null']),
      );
    case 8: {
      // deep nesting, usually modest, sometimes 100,000 levels
      const n = r() < 0.05 ? 100_000 : Math.floor(r() * 600);
      const [o, c] = r() < 0.5 ? ['[', ']'] : ['{"a":', '}'];
      return s.slice(0, pos) + o.repeat(n) + (r() < 0.5 ? c.repeat(n) : '') + s.slice(pos);
    }
    default:
      return s.slice(0, pos) + String.fromCharCode(Math.floor(r() * 0x3000)) + s.slice(pos);
  }
}

function mutate(s: string, r: () => number): string {
  let t = s;
  for (let k = 1 + Math.floor(r() * 4); k > 0; k--) t = mutateOnce(t, r);
  return t;
}

/** Runs `target` on 10,000 mutations of the seeds; returns the failures (untyped throws, slow cases). */
function fuzz(name: string, seeds: string[], target: (text: string) => void): string[] {
  const r = rng(SEED ^ [...name].reduce((h, c) => Math.imul(h, 31) + c.charCodeAt(0), 7));
  const failures: string[] = [];
  let slowest = 0;
  for (let i = 0; i < CASES; i++) {
    const input = mutate(seeds[i % seeds.length], r);
    const t0 = process.cpuUsage();
    try {
      target(input);
    } catch (e) {
      if (!(e instanceof DataError || e instanceof RangeRequestError)) {
        failures.push(
          `${name} seed ${SEED} case ${i}: untyped ${(e as Error)?.name}: ${(e as Error)?.message} for ${JSON.stringify(input.slice(0, 200))}`,
        );
      }
    }
    const used = process.cpuUsage(t0);
    const ms = (used.user + used.system) / 1000;
    slowest = Math.max(slowest, ms);
    if (ms > CASE_LIMIT_MS)
      failures.push(
        `${name} seed ${SEED} case ${i}: ${ms.toFixed(0)} ms (> ${CASE_LIMIT_MS} ms CPU) for ${JSON.stringify(input.slice(0, 200))}`,
      );
    if (failures.length > 20) break;
  }
  process.stdout.write(`      ${name}: ${CASES.toLocaleString('en-US')} mutations, slowest case ${slowest.toFixed(1)} ms CPU\n`);
  return failures;
}

const SHA = 'a'.repeat(64);
const MANIFEST =
  [0, 1, 2]
    .map((i) => JSON.stringify({ shard: `shards/tokens_00000${i}.u32`, start_token: i * 1000, num_tokens: 1000, sha256: SHA }))
    .join('\n') + '\n';
const PROVENANCE = JSON.stringify(
  {
    name: 'x',
    global_tokens_per_update: 131072,
    sequence_length: 1024,
    eos_token_id: 100257,
    training: { seq_len: 1024 },
    sources: [{ id: 'a', file: 'b' }],
  },
  null,
  2,
);
const ID_LISTS = [
  '[791, 4062, 14198]',
  'tensor([[  791,  4062, 14198],\n        [  13,   220,  100257]])',
  'ids: 791 4062 14198 at update 55000',
  '{"input_ids": [[791, 4062], [14198, 13]]}',
  'array([791, ..., 14198], dtype=uint32)',
];

describe(`seeded fuzzing (seed ${SEED}, ${CASES} mutations per target): only typed errors, no case over 1 s`, function () {
  this.timeout(0);

  it('shard_manifest.jsonl text → parseShardManifest (never throws; every problem names the file)', () => {
    const failures = fuzz('manifest lines', [MANIFEST], (text) => {
      const p = parseShardManifest(text, '/data/root/shard_manifest.jsonl');
      for (const pr of p.problems) if (!pr.file || !pr.message) throw new Error(`problem without file or message: ${JSON.stringify(pr)}`);
      for (const e of p.entries) terminalSafe(e.shard);
    });
    assert.deepStrictEqual(failures, []);
  });

  it('manifest.json text → parseSideFile, scheduleOverrides, info --json output (limitDepth + jsonSafe)', () => {
    const failures = fuzz('manifest.json', [PROVENANCE], (text) => {
      const { side, problems } = parseSideFile(text, '/data/root/manifest.json', 'bad-provenance');
      for (const pr of problems) if (!pr.file || !pr.message) throw new Error(`problem without file or message: ${JSON.stringify(pr)}`);
      if (side) {
        scheduleOverrides(side);
        jsonSafe(limitDepth(side.data), 2);
        plainText(Object.keys(side.data).join(', '));
      }
    });
    assert.deepStrictEqual(failures, []);
  });

  it('token-id list text → extractIds, findIdsAt, parseNumberInput', () => {
    const failures = fuzz('id lists', ID_LISTS, (text) => {
      const x = extractIds(text);
      for (const id of x.ids) if (!Number.isSafeInteger(id) || id < 0) throw new Error(`bad id ${id}`);
      findIdsAt(text, Math.floor(text.length / 2));
      for (const w of text.split(/[\s,[\]]+/).slice(0, 50)) parseNumberInput(w);
    });
    assert.deepStrictEqual(failures, []);
  });
});
