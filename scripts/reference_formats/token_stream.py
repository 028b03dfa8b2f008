"""Today's layout: a dataset root with shard_manifest.jsonl and raw uint32 shards (the dataset
card; scripts/reference_reader.py reads it the same way). Documents: EOS ends each."""
import json
import os

import reference_formats_common as common


def open_stream(path, dtype=None):
    with open(os.path.join(path, "shard_manifest.jsonl")) as f:
        shards = sorted((json.loads(l) for l in f if l.strip()), key=lambda e: e["start_token"])
    dt = common.DTYPES[dtype or "uint32"]
    parts = [common.Part(os.path.join(path, e["shard"]), 0, dt, e["num_tokens"]) for e in shards]
    return common.Stream("token-stream", parts, delimiter="after")
