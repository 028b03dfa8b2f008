"""litdata / LitGPT optimized chunks written with TokensLoader (docs/formats.md, "litdata"), numpy only.

`index.json`: {"chunks": [{"chunk_bytes", "chunk_size", "dim", "filename"}, ...], "config":
{"data_format": ["no_header_numpy:I" | "no_header_tensor:I"], ...}}; the stream is the chunks in
that order. A chunk: uint32 item count N, uint32 offsets[N+1] (bytes from the file start), then the
items, each one document's ids. One chunk file alone is that chunk.
With "config": {"compression": "zstd" | "zstd:N"} every chunk file is one whole zstd-compressed
chunk named chunk-R-N.<compression>.bin; it is decompressed here (in memory) by the `zstd` command.
"""
import json
import os
import subprocess

import numpy as np

import reference_formats_common as common

# litdata constants.py: _NUMPY_DTYPES_MAPPING / _TORCH_DTYPES_MAPPING positions of the token dtypes
NUMPY = {2: "<i4", 5: "<u2", 6: "<u4"}
TENSOR = {15: "<i4", 16: "<i4"}


class MemoryPart(common.Part):
    """A chunk decompressed in memory: `tokens` ids of `dtype` from byte `header` of `data`."""

    def __init__(self, path, data, header, dtype, tokens):
        super().__init__(path, header, dtype, tokens)
        self.values = np.frombuffer(data, dtype=self.dtype, count=self.tokens, offset=self.header)

    def ids(self, a, b):
        return np.asarray(self.values[a:b], dtype=np.int64)


def open_stream(path, dtype=None):
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    with open(os.path.join(folder, "index.json"), encoding="utf-8") as fh:
        index = json.load(fh)
    kind, i = index["config"]["data_format"][0].split(":")
    dt = np.dtype((NUMPY if kind == "no_header_numpy" else TENSOR)[int(i)])
    chunks = index["chunks"]
    compression = index["config"].get("compression")
    if not os.path.isdir(path) and os.path.basename(path) != "index.json":
        chunks = [c for c in chunks if c["filename"] == os.path.basename(path)]
    parts, starts, lengths, base = [], [], [], 0
    for c in chunks:
        f = os.path.join(folder, c["filename"])
        data = None
        if compression:
            data = subprocess.run(["zstd", "-d", "-q", "-c", f], check=True, stdout=subprocess.PIPE).stdout
            head = np.frombuffer(data, dtype="<u4", count=c["chunk_size"] + 2)
        else:
            head = np.fromfile(f, dtype="<u4", count=c["chunk_size"] + 2)
        offsets = head[1:].astype(np.int64)
        sizes = np.diff(offsets) // dt.itemsize
        begin = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        starts.append(base + begin)
        lengths.append(sizes)
        n = int(sizes.sum())
        if data is None:
            parts.append(common.Part(f, int(offsets[0]), dt, n))
        else:
            parts.append(MemoryPart(f, data, int(offsets[0]), dt, n))
        base += n
    return common.Stream("litdata", parts, documents=(np.concatenate(starts), np.concatenate(lengths)))
