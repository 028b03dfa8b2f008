"""MosaicML Streaming MDS shards with a `tokens` ndarray column (docs/formats.md, "MDS"), numpy only.

`index.json`: {"shards": [{"column_names", "column_encodings", "column_sizes", "raw_data":
{"basename"}, "samples", ...}], "version": 2}. A shard: uint32 sample count N, uint32 offsets[N+1]
(bytes from the file start), the config JSON, the samples. A sample: uint32 sizes of its
variable-size columns, then the columns in name order. `ndarray:DTYPE` column: one byte
`ndim << 2 | shape width code` (width 1, 2, 4, 8 bytes for codes 0..3), the shape, the values;
`ndarray` without a dtype puts a dtype code byte first (16 uint16, 32 uint32, 33 int32). The
stream is every sample's token values, shards in index order. Documents: EOS ends each.
"""
import json
import os

import numpy as np

import reference_formats_common as common

VALUE_DTYPES = {16: "<u2", 32: "<u4", 33: "<i4"}
SHAPE_DTYPES = {0: "<u1", 1: "<u2", 2: "<u4", 3: "<u8"}


class ShardPart(common.Part):
    """A shard whose tokens are the concatenation of its samples' token values."""

    def __init__(self, path, dtype, values):
        super().__init__(path, 0, dtype, len(values))
        self.values = values

    def ids(self, a, b):
        return np.asarray(self.values[a:b], dtype=np.int64)


def _shard_tokens(f, shard):
    names, encs, sizes = shard["column_names"], shard["column_encodings"], shard["column_sizes"]
    k = names.index("tokens")
    parts = encs[k].split(":")
    fixed_dtype = np.dtype(parts[1]).newbyteorder("<") if len(parts) > 1 and parts[1] else None
    fixed_shape = [int(x) for x in parts[2].split(",")] if len(parts) > 2 else None
    data = np.fromfile(f, dtype=np.uint8)
    n = int(data[:4].view("<u4")[0])
    offsets = data[4 : 4 + 4 * (n + 1)].view("<u4").astype(np.int64)
    out, dtype = [], fixed_dtype
    for i in range(n):
        s = data[offsets[i] : offsets[i + 1]]
        col_sizes, idx = [], 0
        for size in sizes:
            if size is None:
                col_sizes.append(int(s[idx : idx + 4].view("<u4")[0]))
                idx += 4
            else:
                col_sizes.append(size)
        pos = idx + sum(col_sizes[:k])
        end = pos + col_sizes[k]
        dt = fixed_dtype
        if dt is None:
            dt = np.dtype(VALUE_DTYPES[int(s[pos])])
            pos += 1
        if fixed_shape is None:
            b = int(s[pos])
            ndim, sd = b >> 2, np.dtype(SHAPE_DTYPES[b & 3])
            pos += 1 + ndim * sd.itemsize
        out.append(s[pos:end].view(dt))
        dtype = dt
    return dtype, (np.concatenate(out) if out else np.zeros(0, dtype=dtype or "<i4"))


def open_stream(path, dtype=None):
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    with open(os.path.join(folder, "index.json"), encoding="utf-8") as fh:
        index = json.load(fh)
    shards = index["shards"]
    if not os.path.isdir(path) and os.path.basename(path) != "index.json":
        shards = [s for s in shards if s["raw_data"]["basename"] == os.path.basename(path)]
    parts = []
    for shard in shards:
        f = os.path.join(folder, shard["raw_data"]["basename"])
        dt, values = _shard_tokens(f, shard)
        parts.append(ShardPart(f, dt, values))
    return common.Stream("mds", parts, delimiter="after")
