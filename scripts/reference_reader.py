"""The dataset card's reference reader (olmo3_lit50b_shuf dataset card, "Format"), verbatim.

The ground truth the tests and benchmarks compare the extension's core with. Use it from other
Python code with:

    import sys; sys.path.insert(0, "<repo>/scripts"); from reference_reader import tokens
"""
import json

import numpy as np


def tokens(root, start, n):
    """Return stream tokens [start, start+n) as a uint32 array."""
    shards = sorted((json.loads(l) for l in open(f"{root}/shard_manifest.jsonl")), key=lambda e: e["start_token"])
    out, need = [], n
    for e in shards:
        s0, s1 = e["start_token"], e["start_token"] + e["num_tokens"]
        if s1 <= start or need == 0: continue
        mm = np.memmap(f"{root}/{e['shard']}", dtype="<u4", mode="r")
        a = max(start, s0) - s0; b = min(a + need, e["num_tokens"])
        out.append(mm[a:b]); need -= b - a
        if need == 0: break
    return np.concatenate(out)
