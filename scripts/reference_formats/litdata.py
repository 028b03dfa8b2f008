"""litdata / LitGPT optimized chunks written with TokensLoader (docs/formats.md, "litdata"), numpy only.

`index.json`: {"chunks": [{"chunk_bytes", "chunk_size", "dim", "filename"}, ...], "config":
{"data_format": ["no_header_numpy:I" | "no_header_tensor:I"], ...}}; the stream is the chunks in
that order. A chunk: uint32 item count N, uint32 offsets[N+1] (bytes from the file start), then the
items, each one document's ids. One chunk file alone is that chunk.
"""
import json
import os

import numpy as np

import reference_formats_common as common

# litdata constants.py: _NUMPY_DTYPES_MAPPING / _TORCH_DTYPES_MAPPING positions of the token dtypes
NUMPY = {2: "<i4", 5: "<u2", 6: "<u4"}
TENSOR = {15: "<i4", 16: "<i4"}


def open_stream(path, dtype=None):
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    with open(os.path.join(folder, "index.json"), encoding="utf-8") as fh:
        index = json.load(fh)
    kind, i = index["config"]["data_format"][0].split(":")
    dt = np.dtype((NUMPY if kind == "no_header_numpy" else TENSOR)[int(i)])
    chunks = index["chunks"]
    if not os.path.isdir(path) and os.path.basename(path) != "index.json":
        chunks = [c for c in chunks if c["filename"] == os.path.basename(path)]
    parts, starts, lengths, base = [], [], [], 0
    for c in chunks:
        f = os.path.join(folder, c["filename"])
        head = np.fromfile(f, dtype="<u4", count=c["chunk_size"] + 2)
        offsets = head[1:].astype(np.int64)
        sizes = np.diff(offsets) // dt.itemsize
        begin = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        starts.append(base + begin)
        lengths.append(sizes)
        n = int(sizes.sum())
        parts.append(common.Part(f, int(offsets[0]), dt, n))
        base += n
    return common.Stream("litdata", parts, documents=(np.concatenate(starts), np.concatenate(lengths)))
