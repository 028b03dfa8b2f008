/**
 * Token-id hover computation on a 4,096-id list (target: well under a 16 ms frame): finding the
 * list around the cursor (core `findIdsAt`) plus decoding it (the id → bytes table) and the
 * hovered token's piece — the work the hover provider does on the extension host — against the
 * tokenizer library's decode of the same ids (`@huggingface/tokenizers`, what a hover would
 * cost without our decode table). Real ids: 4,096 consecutive tokens of the sample stream.
 * Shapes: JSON one id per line (`json.dumps(indent=2)`), a full numpy print (python3 + numpy,
 * threshold lifted so every id is printed), and a lone number inside a 1,000,000-id one-line
 * list, where the bounded scanning window keeps the cost flat (reference: `JSON.parse` of that
 * line, the least a parser that reads the whole list must do).
 * Medians of many runs after a warm-up; decoded text checked identical to the library's.
 */
import { execFileSync } from 'node:child_process';

const PRINT = `
import json, sys, numpy as np
ids = np.array(json.load(sys.stdin), dtype=np.uint32)
np.set_printoptions(threshold=sys.maxsize)
print(repr(ids))
`;

/** Median time (ms) of `fn` over `n` runs after `warm` warm-up runs. */
async function median(fn, n, warm = 5) {
  for (let i = 0; i < warm; i++) await fn();
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(n / 2)];
}

export async function run(ctx) {
  const { core, sample } = ctx;
  const ds = await core.openDataset(sample);
  const tok = await core.loadTokenizer(ds.tokenizerFile);
  const ids = Array.from(await ds.stream.read(1000, 4096));
  await ds.stream.close();
  const json = JSON.stringify({ input_ids: ids }, null, 2);
  const numpy = execFileSync('python3', ['-c', PRINT], { input: JSON.stringify(ids), encoding: 'utf8', maxBuffer: 1 << 26 });
  const library = await tok.libraryDecode(ids);
  const opts = { minDigits: 3, vocabSize: tok.vocabSize };

  /** The hover's core work at the k-th number of `text` (the middle of the list). */
  const cursor = (text, k) => {
    const re = /\d+/g;
    let m;
    for (let i = 0; i <= k; i++) m = re.exec(text);
    return /** @type {RegExpExecArray} */ (m).index;
  };
  const hoverWork = (text, at) => {
    const hit = core.findIdsAt(text, at, opts);
    let unknown = 0;
    for (const id of hit.ids) if (!tok.isKnown(id)) unknown++;
    const decoded = tok.decode(hit.ids);
    const piece = tok.pieces([hit.id])[0];
    return { hit, decoded, piece, unknown };
  };

  const rows = [];
  for (const [label, text, k] of /** @type {[string, string, number][]} */ ([
    ['JSON, one id per line', json, 2048],
    ['numpy repr, every id printed', numpy, 2048],
  ])) {
    const at = cursor(text, k); // neither print has other digits before the list
    const check = hoverWork(text, at);
    if (check.hit.kind !== 'list' || check.hit.ids.length !== 4096 || check.hit.ids.some((x, i) => x !== ids[i]))
      throw new Error(`${label}: the list was not found whole`);
    if (check.decoded !== library) throw new Error(`${label}: decoded text differs from the library's`);
    const ours = await median(() => hoverWork(text, at), 400);
    const parseOnly = await median(() => core.findIdsAt(text, at, opts), 400);
    const ref = await median(() => tok.libraryDecode(ids), 60);
    ctx.log(
      `${label} (${text.length.toLocaleString('en-US')} chars): hover ${ours.toFixed(3)} ms (find list ${parseOnly.toFixed(3)} ms), library decode ${ref.toFixed(3)} ms`,
    );
    rows.push({
      name: `hover on a 4,096-id list: ${label}`,
      ours,
      reference: ref,
      unit: 'ms',
      ratio: ref / ours,
      note: 'find list + decode + piece vs library decode alone; frame = 16 ms',
    });
    const jsonRef = await median(
      () => JSON.parse(text.slice(text.indexOf('['), text.lastIndexOf(']') + 1).replace(/(\d)\s+(?=\d)/g, '$1,')),
      100,
    );
    rows.push({
      name: `find the list only: ${label}`,
      ours: parseOnly,
      reference: jsonRef,
      unit: 'ms',
      ratio: jsonRef / parseOnly,
      note: 'vs JSON.parse of the list already cut out (it is told where the list is)',
    });
  }

  // A lone number deep inside a 1,000,000-id single-line list: the window bounds the work.
  const big = JSON.stringify(Array.from({ length: 1_000_000 }, (_, i) => ids[i % ids.length]));
  const at = Math.floor(big.length / 2);
  const start = big.lastIndexOf(',', at) + 1;
  const lone = core.findIdsAt(big, start, opts);
  // Not a list (its brackets are out of sight); a 3-digit id after ",<digit>" even reads as a formatted group.
  if (lone?.kind === 'list') throw new Error('a list bigger than the window must not be guessed at');
  const ours = await median(() => core.findIdsAt(big, start, opts), 100);
  const ref = await median(() => JSON.parse(big), 10, 2);
  ctx.log(
    `lone number in a ${big.length.toLocaleString('en-US')}-char one-line list: ${ours.toFixed(3)} ms (window-bounded), JSON.parse of the line ${ref.toFixed(1)} ms`,
  );
  rows.push({
    name: 'number inside a 1,000,000-id one-line list',
    ours,
    reference: ref,
    unit: 'ms',
    ratio: ref / ours,
    note: 'bounded window vs JSON.parse of the whole line',
  });
  return rows;
}
