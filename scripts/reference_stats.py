"""Reference per-update statistics, computed with numpy over the dataset card's x.

The ground truth for test/unit/stats.test.ts and the reference side of scripts/bench/stats.mjs.
Every field follows the definitions in src/core/stats.ts (and the README), written independently
of the TypeScript code: whole-array numpy operations, no hashing.

Usage: python3 scripts/reference_stats.py ROOT K1 K2 [--tokenizer FILE] [--G 131072] [--L 1024]
       [--eos 100257] [--rounds N]
       python3 scripts/reference_stats.py ROOT K1 K2 --order-fixture DIR --order RUN [--tokenizer FILE]
       [--eos 100257] [--opens]
       python3 scripts/reference_stats.py ROOT K1 K2 --ranges FILE [--tokenizer FILE] [--eos 100257] [--opens]
Prints a JSON array of records for updates K1..K2 (inclusive). With --rounds N it also times N
rounds (after one warm-up) and prints {"ms": best, "records": [...]} instead.

With --order-fixture (a folder written by scripts/make-order-fixtures.py from the sample ROOT)
and --order RUN (`megatron:two-epochs`, `megatron:three-epochs`, `olmo`, `llmc`), update k is
that run's step k: its samples come from the framework ports in make-order-fixtures.py (Megatron's
indices rebuilt from seed and sample count, OLMo-core's PCG64 shuffle, llm.c's dataloader.h run
from step 0), each as the stream ranges it was read from, and the statistics follow the
definitions through an order (src/core/stats.ts, "Through a run's training order"): the inputs
of each sample only (its first sequence_length / T tokens), 13-grams and EOS-free runs inside one
sample, a document started where the stream token before a read token is EOS (--opens: where the
read token is the delimiter) or at offset 0, complete documents inside one contiguous range.
With --ranges FILE the samples of each update are given as stream ranges
(`{"kind", "inputs", "updates": {"k": [[[start, end], ...] per sample]}}`) and the same definitions apply.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_reader import tokens  # noqa: E402

NGRAM = 13


def load_vocab(path):
    """(known ids, special non-EOS ids) of a tokenizer.json: vocab values and added tokens."""
    if not path:
        return None
    tj = json.load(open(path, encoding="utf8"))
    known = set(tj["model"]["vocab"].values())
    special = set()
    for t in tj.get("added_tokens", []):
        known.add(t["id"])
        if t.get("special"):
            special.add(t["id"])
    return np.array(sorted(known), dtype=np.int64), np.array(sorted(special), dtype=np.int64)


def vocab_counts(flat, eos, vocab):
    """(unknown_ids, special_ids) of the ids `flat`; (None, None) without a tokenizer."""
    if vocab is None:
        return None, None
    known, special = vocab
    return int((~np.isin(flat, known)).sum()), int((np.isin(flat, special) & (flat != eos)).sum())


def stream_of(root):
    """The whole stream of a dataset root (the card's reader)."""
    total = sum(json.loads(l)["num_tokens"] for l in open(os.path.join(root, "shard_manifest.jsonl")))
    return tokens(root, 0, total)


def stats(root, k, G, L, eos, vocab):
    batch = tokens(root, G * k, G + 1)
    x = batch[:-1].reshape(G // L, L)
    flat = x.ravel().astype(np.int64)
    prev_is_eos = True if k == 0 else int(tokens(root, G * k - 1, 1)[0]) == eos
    is_eos = flat == eos
    starts = np.concatenate([[prev_is_eos], is_eos[:-1]])
    eos_pos = np.flatnonzero(is_eos)
    gaps = np.diff(np.concatenate([[-1], eos_pos, [G]])) - 1
    ids, counts = np.unique(flat, return_counts=True)
    top = int(np.argmax(counts))  # first maximum in ascending id order = lowest id on a tie
    unique_rows = np.unique(x, axis=0).shape[0]
    if G >= NGRAM:
        win = np.ascontiguousarray(np.lib.stride_tricks.sliding_window_view(flat.astype(np.uint32), NGRAM))
        grams = win.view(np.dtype((np.void, 4 * NGRAM))).ravel()
        repeated = int(len(grams) - len(np.unique(grams)))
        share = repeated / (G - (NGRAM - 1))
    else:
        repeated, share = 0, None
    prev_e = np.concatenate([[-1], eos_pos])[:-1]
    valid = (prev_e >= 0) | bool(starts[0])
    lengths = (eos_pos - (prev_e + 1) + 1)[valid]
    unknown, specials = vocab_counts(flat, eos, vocab)
    return {
        "update": k,
        "token_range": [G * k, G * (k + 1)],
        "eos": int(is_eos.sum()),
        "documents_started": int(starts.sum()),
        "distinct_tokens": int(len(ids)),
        "max_id": int(flat.max()),
        "unknown_ids": unknown,
        "special_ids": specials,
        "longest_eos_free_run": int(gaps.max()),
        "duplicate_sequences": int(G // L - unique_rows),
        "top_token": {"id": int(ids[top]), "count": int(counts[top])},
        "repeated_13grams": repeated,
        "repeat_13gram_share": share,
        "complete_documents": int(len(lengths)),
        "mean_complete_document_length": (int(lengths.sum()) / len(lengths)) if len(lengths) else None,
    }


def load_ports():
    """scripts/make-order-fixtures.py as a module (its file name has a hyphen)."""
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("order_fixtures", os.path.join(here, "make-order-fixtures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def order_batches(fixture, run, k1, k2):
    """(input tokens per sample, {k: [[(start, end), ...] per sample]}) of steps k1..k2 of a fixture run."""
    ports = load_ports()
    ref = json.load(open(os.path.join(fixture, "reference.json")))
    out = {}
    if run.startswith("megatron:"):
        p = ref["megatron"][run.split(":", 1)[1]]
        raw = np.fromfile(os.path.join(fixture, "megatron", "text_document.idx"), dtype=np.uint8)
        n = int(raw[18:26].view("<u8")[0])
        lengths = raw[34 : 34 + 4 * n].view("<i4").astype(np.int64)
        pointers = raw[34 + 4 * n : 34 + 12 * n].view("<i8").astype(np.int64)
        L, B = p["sequence_length"], p["global_batch_size"]
        di, si, sh, _, _, _ = ports.megatron_indices(lengths.astype(np.int32), L, p["seed"], p["train_iters"] * B, 1)
        for k in range(k1, k2 + 1):
            out[k] = [ports.megatron_piece_ranges(pointers, lengths, di, si, int(sh[k * B + s]), 1) for s in range(B)]
        return L, out
    if run == "olmo":
        p = ref["olmo"]
        L, B = p["sequence_length"], p["global_batch_size"]
        starts, counts, at = [], [], 0
        for name in p["files"]:
            ntok = os.path.getsize(os.path.join(fixture, "olmo", name)) // 4
            starts.append(at)
            counts.append(ntok // L)
            at += ntok
        indices = np.arange(sum(counts), dtype=np.uint32)
        np.random.Generator(np.random.PCG64(seed=p["seed"] + p["epoch"])).shuffle(indices)
        cum = np.concatenate([[0], np.cumsum(counts)])
        for k in range(k1, k2 + 1):
            rows = []
            for s in range(B):
                i = int(indices[k * B + s])
                f = int(np.searchsorted(cum, i, side="right") - 1)
                a = starts[f] + (i - int(cum[f])) * L
                rows.append([(a, a + L)])
            out[k] = rows
        return L, out
    if run == "llmc":
        p = ref["llmc"]
        B, T, P, A = p["B"], p["T"], p["processes"], p["grad_accum_steps"]
        ntok, starts, at = [], [], 0
        for name in p["files"]:
            n = (os.path.getsize(os.path.join(fixture, "llmc", name)) - 1024) // 4
            ntok.append(n)
            starts.append(at)
            at += n
        loaders = [ports.LlmcLoader(ntok, B, T, r, P, True) for r in range(P)]
        for k in range(k2 + 1):
            rows = []
            for _ in range(A):
                for r in range(P):
                    shard, local = loaders[r].next_batch()
                    s0 = starts[shard] + local
                    rows.extend([[(s0 + b * T, s0 + b * T + T + 1)] for b in range(B)])
            if k >= k1:
                out[k] = rows
        return T, out
    raise SystemExit(f"unknown --order {run}")


def ordered_stats(stream, k, pieces_per_sample, inputs, eos, opens, vocab):
    """One update's record through an order (the definitions of src/core/stats.ts, numpy over the stream)."""
    samples, offsets, ranges = [], [], []
    for pieces in pieces_per_sample:
        left, offs = inputs, []
        for s, e in pieces:
            n = min(e - s, left)
            if n <= 0:
                break
            offs.append(np.arange(s, s + n, dtype=np.int64))
            ranges.append((s, s + n))
            left -= n
        o = np.concatenate(offs)
        offsets.append(o)
        samples.append(stream[o].astype(np.int64))
    flat = np.concatenate(samples)
    offs = np.concatenate(offsets)
    is_eos = flat == eos
    # A token begins a document: global offset 0, or (closes) the stream token before it is EOS, or (opens) it is the delimiter.
    if opens:
        starts = (offs == 0) | (stream[offs] == eos)
    else:
        starts = (offs == 0) | (stream[np.maximum(offs - 1, 0)] == eos)
    longest = 0
    grams = []
    for x in samples:
        e = np.flatnonzero(x == eos)
        gaps = np.diff(np.concatenate([[-1], e, [len(x)]])) - 1
        longest = max(longest, int(gaps.max()))
        if len(x) >= NGRAM:
            win = np.ascontiguousarray(np.lib.stride_tricks.sliding_window_view(x.astype(np.uint32), NGRAM))
            grams.append(win.view(np.dtype((np.void, 4 * NGRAM))).ravel())
    if grams:
        g = np.concatenate(grams)
        repeated = int(len(g) - len(np.unique(g)))
        share = repeated / len(g)
    else:
        repeated, share = 0, None
    unique_samples = len({tuple(x.tolist()) for x in samples})
    # Complete documents: first token and end inside one contiguous range of one sample.
    lengths = []
    for s, e in ranges:
        seg = stream[s:e].astype(np.int64)
        offs_r = np.arange(s, e)
        st = (offs_r == 0) | ((stream[offs_r] == eos) if opens else (stream[np.maximum(offs_r - 1, 0)] == eos))
        delim = np.flatnonzero(seg == eos)
        for i in np.flatnonzero(st):
            if opens:
                nxt = delim[delim > i]
                if len(nxt):
                    lengths.append(int(nxt[0] - i))
            else:
                nxt = delim[delim >= i]
                if len(nxt):
                    lengths.append(int(nxt[0] - i + 1))
    merged = 0
    last_end = -1
    for s, e in ranges:
        if s != last_end:
            merged += 1
        last_end = e
    ids, counts = np.unique(flat, return_counts=True)
    top = int(np.argmax(counts))
    unknown, specials = vocab_counts(flat, eos, vocab)
    return {
        "update": k,
        "order": None,
        "tokens": int(len(flat)),
        "ranges": merged,
        "eos": int(is_eos.sum()),
        "documents_started": int(starts.sum()),
        "distinct_tokens": int(len(ids)),
        "max_id": int(flat.max()),
        "unknown_ids": unknown,
        "special_ids": specials,
        "longest_eos_free_run": longest,
        "duplicate_sequences": len(samples) - unique_samples,
        "top_token": {"id": int(ids[top]), "count": int(counts[top])},
        "repeated_13grams": repeated,
        "repeat_13gram_share": share,
        "complete_documents": len(lengths),
        "mean_complete_document_length": (sum(lengths) / len(lengths)) if lengths else None,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("k1", type=int)
    ap.add_argument("k2", type=int)
    ap.add_argument("--tokenizer")
    ap.add_argument("--G", type=int, default=131072)
    ap.add_argument("--L", type=int, default=1024)
    ap.add_argument("--eos", type=int, default=100257)
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--order-fixture")
    ap.add_argument("--order")
    ap.add_argument("--opens", action="store_true")
    ap.add_argument("--ranges")
    a = ap.parse_args()
    vocab = load_vocab(a.tokenizer)
    if a.ranges or a.order_fixture:
        if a.ranges:
            # Explicit samples: {"kind": ..., "inputs": n, "updates": {"k": [[[start, end], ...] per sample]}}.
            spec = json.load(open(a.ranges))
            kind, inputs = spec["kind"], spec["inputs"]
            batches = {int(k): [[tuple(p) for p in sample] for sample in v] for k, v in spec["updates"].items()}
        else:
            inputs, batches = order_batches(a.order_fixture, a.order, a.k1, a.k2)
            kind = {"megatron": "megatron", "olmo": "olmo", "llmc": "llm.c"}[a.order.split(":")[0]]
        stream = stream_of(a.root)
        recs = []
        for k in range(a.k1, a.k2 + 1):
            r = ordered_stats(stream, k, batches[k], inputs, a.eos, a.opens, vocab)
            r["order"] = kind
            recs.append(r)
        print(json.dumps(recs))
        return
    run = lambda: [stats(a.root, k, a.G, a.L, a.eos, vocab) for k in range(a.k1, a.k2 + 1)]
    if a.rounds:
        recs = run()
        best = float("inf")
        for _ in range(a.rounds):
            t = time.perf_counter()
            recs = run()
            best = min(best, (time.perf_counter() - t) * 1000)
        print(json.dumps({"ms": best, "records": recs}))
    else:
        print(json.dumps(run()))


if __name__ == "__main__":
    main()
