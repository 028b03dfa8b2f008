/**
 * Go to Update, from command to data ready: for 200 random updates (seeded) of the full-size
 * data, the extension's work after the user presses Enter — read the update's G + 1 tokens plus
 * the token before it, build the update view's model (rows, EOS/shard-edge segments, decoded
 * text, look-ahead tokens) and the webview payload (`toUpdateViewData` + JSON, as postMessage
 * sends it) — against the dataset card's Python reader reading the same batches and building
 * `x, y` (one python3 process for all 200 batches, timed inside it). The reader produces ids
 * only, so a third row compares the text part alone with the tokenizer library decoding the
 * same 128 rows. Both sides: one warm-up
 * pass (page cache warm), then best of 3 rounds. Our model's x/y are checked against the
 * reader's by a checksum over every batch.
 */
import { execFileSync } from 'node:child_process';
import { PY_READER_PRELUDE } from '../lib/reference-reader.mjs';
import { mulberry32 } from '../lib/mulberry32.mjs';

const READER = `${PY_READER_PRELUDE}root, G, L = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ks = list(map(int, sys.argv[4:]))
def one(k):
    batch = tokens(root, G * k, G + 1)
    x, y = batch[:-1].reshape(G // L, L), batch[1:].reshape(G // L, L)
    return int(x[0, 0]) + int(x[-1, -1]) + int(y[-1, -1])
for k in ks: one(k)  # warm-up pass
best = float("inf")
for rnd in range(3):
    t = time.perf_counter()
    check = 0
    for k in ks: check += one(k)
    best = min(best, (time.perf_counter() - t) * 1000)
print(json.dumps({"ms": best, "check": check}))
`;

export async function run(ctx) {
  const { core, root } = ctx;
  const ds = await core.openDataset(root);
  const { G, L } = ds.schedule;
  const tok = await core.loadTokenizer(ds.tokenizerFile);
  const rand = mulberry32(20260730);
  const ks = Array.from({ length: 200 }, () => Math.floor(rand() * ds.schedule.numUpdates));
  const spanning = ks.filter((k) => ds.stream.locate(G * k).segment !== ds.stream.locate(G * (k + 1) - 1).segment).length;

  const py = JSON.parse(
    execFileSync('python3', ['-c', READER, root, String(G), String(L), ...ks.map(String)], { encoding: 'utf8', maxBuffer: 1 << 26 }),
  );

  let bytes = 0;
  const once = async () => {
    let check = 0;
    bytes = 0;
    for (const k of ks) {
      const m = await core.readUpdateModel(ds, k, tok);
      bytes += JSON.stringify(core.toUpdateViewData(m)).length;
      const last = m.rows[m.rows.length - 1];
      check += m.rows[0].x[0] + last.x[L - 1] + last.y[L - 1];
    }
    return check;
  };
  await once(); // warm-up pass, like the reference
  let best = Infinity,
    check = 0;
  for (let round = 0; round < 3; round++) {
    const t0 = process.hrtime.bigint();
    check = await once();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (check !== py.check) throw new Error(`x/y mismatch: ours ${check} vs the reader ${py.check}`);

  // The read alone, for scale (no decoding, no model).
  let readBest = Infinity;
  for (let round = 0; round < 3; round++) {
    const t0 = process.hrtime.bigint();
    for (const k of ks) await core.readUpdate(ds, k);
    readBest = Math.min(readBest, Number(process.hrtime.bigint() - t0) / 1e6);
  }
  // The text part alone, against the tokenizer library decoding the same 128 rows (20 of the updates).
  const sub = ks.slice(0, 20);
  const batches = [];
  for (const k of sub) batches.push(await core.readUpdate(ds, k));
  const rowsOf = (b) => Array.from({ length: b.rows }, (_, r) => Array.from(core.inputRow(b, r)));
  const plain = batches.map(rowsOf);
  await tok.libraryDecode(plain[0][0]); // load the library
  let libMs = Infinity,
    modelMs = Infinity;
  for (let round = 0; round < 3; round++) {
    let t0 = process.hrtime.bigint();
    for (const rows of plain) for (const r of rows) await tok.libraryDecode(r);
    libMs = Math.min(libMs, Number(process.hrtime.bigint() - t0) / 1e6 / sub.length);
    t0 = process.hrtime.bigint();
    for (const b of batches) core.buildUpdateModel(b, tok, { numUpdates: ds.schedule.numUpdates, eos: ds.settings.eosTokenId });
    modelMs = Math.min(modelMs, Number(process.hrtime.bigint() - t0) / 1e6 / sub.length);
  }
  await ds.stream.close();
  const n = ks.length;
  ctx.log(
    `text: our model (segments, decode, look-ahead) ${modelMs.toFixed(2)} ms/update vs library decode of the 128 rows ${libMs.toFixed(2)} ms/update`,
  );
  ctx.log(
    `${n} random updates (${spanning} span a shard edge) of ${ds.schedule.numUpdates}: ours model+payload ${(best / n).toFixed(2)} ms/update ` +
      `(read only ${(readBest / n).toFixed(2)}), reader x,y ${(py.ms / n).toFixed(2)} ms/update; payload ${(bytes / n / 1024).toFixed(0)} KiB/update`,
  );
  return [
    {
      name: 'go to update: data ready (read + model + payload)',
      ours: best / n,
      reference: py.ms / n,
      unit: 'ms/update',
      ratio: py.ms / best,
      note: `${n} random k (${spanning} span shards); reference = card reader x,y only (no text)`,
    },
    {
      name: 'go to update: batch read only',
      ours: readBest / n,
      reference: py.ms / n,
      unit: 'ms/update',
      ratio: py.ms / readBest,
      note: 'same k, same reader',
    },
    {
      name: 'go to update: text model of 128 rows',
      ours: modelMs,
      reference: libMs,
      unit: 'ms/update',
      ratio: libMs / modelMs,
      note: 'vs @huggingface/tokenizers decode of the same rows, 20 updates',
    },
  ];
}
