"""Reference answers for the stream index, computed with numpy the way a user would write them,
over the tokens the dataset card's reference reader returns (scripts/reference_reader.py).

    python3 scripts/index_reference.py ROOT [--threshold T] [--offsets O1 O2 ...]

Prints one JSON object:
- eos_per_shard: count_nonzero(shard == EOS) per manifest line (sorted by start_token);
- documents: EOS count + (1 if the stream does not end with EOS);
- longest_run: {start, length} of the longest EOS-free run (first one when tied), the final
  run to the end of the stream included;
- long_runs: runs longer than the threshold (start, length);
- specials: {id: {count, first: [8 first global offsets]}} per shard index, for the tokenizer's
  special ids other than EOS; unknown: {count, first} per shard (ids >= vocabulary size or holes);
- duplicates: {count, pairs: [[doc, start, length, earlier_doc, earlier_start], ...20 first]} over
  non-empty documents (length excludes the EOS);
- pages / numbering (with --page-tokens P): per shard, per page [EOS count, first, last local
  EOS offset or -1]; per shard the EOS count before it, the start of the document holding its
  first token, and the end (one past the EOS) of the document after its last EOS;
- locate: for each offset {offset, shard, local_offset, document, document_start, document_length}
  (document = EOS ids before the offset; length excludes the closing EOS).
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_reader import tokens  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("root")
ap.add_argument("--threshold", type=int, default=100_000)
ap.add_argument("--offsets", type=int, nargs="*", default=[])
ap.add_argument("--eos", type=int, default=None)
ap.add_argument("--page-tokens", type=int, default=0)
a = ap.parse_args()
root = a.root

shards = sorted((json.loads(l) for l in open(f"{root}/shard_manifest.jsonl") if l.strip()), key=lambda e: e["start_token"])
meta = json.load(open(f"{root}/manifest.json")) if os.path.exists(f"{root}/manifest.json") else {}
EOS = a.eos if a.eos is not None else meta.get("eos_token_id", 100257)
tok = json.load(open(f"{root}/tokenizer/tokenizer.json"))
ids = list(tok["model"]["vocab"].values()) + [t["id"] for t in tok.get("added_tokens", [])]
vocab = max(ids) + 1
known = np.zeros(vocab, dtype=bool)
known[np.array(ids)] = True
specials = sorted({t["id"] for t in tok.get("added_tokens", []) if t.get("special") and t["id"] != EOS})

total = sum(e["num_tokens"] for e in shards)
stream = tokens(root, 0, total)
N = len(stream)

eos_per_shard = [int(np.count_nonzero(stream[e["start_token"]:e["start_token"] + e["num_tokens"]] == EOS)) for e in shards]
p = np.flatnonzero(stream == EOS)
documents = len(p) + (0 if N > 0 and stream[-1] == EOS else 1)

# EOS-free runs: between consecutive EOS, before the first, after the last.
bounds = np.concatenate(([-1], p, [N]))
starts = bounds[:-1] + 1
lengths = bounds[1:] - bounds[:-1] - 1
keep = lengths > 0
i = int(np.argmax(lengths)) if len(lengths) else 0
longest = {"start": int(starts[i]), "length": int(lengths[i])}
long_runs = [{"start": int(s), "length": int(l)} for s, l in zip(starts, lengths) if l > a.threshold]

spec, unk = {}, {}
for si, e in enumerate(shards):
    seg = stream[e["start_token"]:e["start_token"] + e["num_tokens"]]
    per = {}
    for sid in specials:
        where = np.flatnonzero(seg == sid)
        if len(where):
            per[str(sid)] = {"count": int(len(where)), "first": [int(e["start_token"] + x) for x in where[:8]]}
    if per:
        spec[str(si)] = per
    bad = seg >= vocab
    inside = ~bad
    bad[inside] = ~known[seg[inside]]
    where = np.flatnonzero(bad)
    if len(where):
        unk[str(si)] = {"count": int(len(where)), "first": [int(e["start_token"] + x) for x in where[:8]]}

seen, dup, pairs = {}, 0, []
doc_starts = starts  # document n starts at starts[n]; its length is lengths[n] (EOS excluded)
ndocs = documents
for n in range(ndocs):
    s, l = int(doc_starts[n]), int(lengths[n])
    if l == 0:
        continue
    key = stream[s:s + l].tobytes()
    if key in seen:
        dup += 1
        if len(pairs) < 20:
            pairs.append([n, s, l, seen[key][0], seen[key][1]])
    else:
        seen[key] = (n, s)

loc = []
shard_starts = np.array([e["start_token"] for e in shards])
for o in a.offsets:
    si = int(np.searchsorted(shard_starts, o, side="right") - 1)
    n = int(np.searchsorted(p, o, side="left"))
    start = 0 if n == 0 else int(p[n - 1]) + 1
    end = int(p[n]) if n < len(p) else N
    loc.append({"offset": o, "shard": shards[si]["shard"], "local_offset": o - shards[si]["start_token"], "document": n,
                "document_start": start, "document_length": end - start})

pages, numbering = [], []
if a.page_tokens:
    for e in shards:
        s0, n = e["start_token"], e["num_tokens"]
        seg = stream[s0:s0 + n]
        per = []
        for lo in range(0, n, a.page_tokens):
            w = np.flatnonzero(seg[lo:lo + a.page_tokens] == EOS)
            per.append([int(len(w)), int(w[0]) if len(w) else -1, int(w[-1]) if len(w) else -1])
        pages.append(per)
        base = int(np.searchsorted(p, s0, side="left"))
        head = 0 if base == 0 else int(p[base - 1]) + 1
        inside = p[(p >= s0) & (p < s0 + n)]
        tail_from = int(inside[-1]) + 1 if len(inside) else s0
        after = p[p >= tail_from]
        tail = [int(after[0]) + 1, True] if tail_from < N and len(after) else [N, False]
        numbering.append({"doc_base": base, "head_start": head, "tail_end": tail[0], "tail_known": tail[1]})

print(json.dumps({"pages": pages, "numbering": numbering, "eos": EOS, "vocab": vocab, "tokens": N, "eos_per_shard": eos_per_shard, "documents": documents,
                  "longest_run": longest, "long_runs": long_runs, "specials": spec, "unknown": unk,
                  "duplicates": {"count": dup, "pairs": pairs}, "locate": loc}))
