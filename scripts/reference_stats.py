"""Reference per-update statistics, computed with numpy over the dataset card's x.

The ground truth for test/unit/stats.test.ts and the reference side of scripts/bench/stats.mjs.
Every field follows the definitions in src/core/stats.ts (and the README), written independently
of the TypeScript code: whole-array numpy operations, no hashing.

Usage: python3 scripts/reference_stats.py ROOT K1 K2 [--tokenizer FILE] [--G 131072] [--L 1024]
       [--eos 100257] [--rounds N]
Prints a JSON array of records for updates K1..K2 (inclusive). With --rounds N it also times N
rounds (after one warm-up) and prints {"ms": best, "records": [...]} instead.
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
    if vocab is not None:
        known, special = vocab
        unknown = int((~np.isin(flat, known)).sum())
        specials = int((np.isin(flat, special) & (flat != eos)).sum())
    else:
        unknown = specials = None
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
    a = ap.parse_args()
    vocab = load_vocab(a.tokenizer)
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
