"""datatrove tokenized files (docs/formats.md, "datatrove"), numpy only.

`NAME.ds`: raw little-endian ids, 2 or 4 bytes each; `NAME.ds.metadata`: first line
`tokenizer|token_size`; `NAME.ds.index`: uint64 cumulative document ends in tokens;
`NAME.ds.loss`: one byte per token (1 = trained on). Without `.ds.metadata` the token size is the
width at which the index's last end fills the `.ds`. A folder is its `.ds` files sorted byte-wise.
"""
import os

import numpy as np

import reference_formats_common as common


def _files(path):
    if os.path.isdir(path):
        return common.files_in(path, lambda n: n.endswith(".ds"))
    for suffix in (".index", ".loss", ".metadata"):
        if path.endswith(".ds" + suffix):
            return [path[: -len(suffix)]]
    return [path]


def _dtype(f, dtype):
    if os.path.exists(f + ".metadata"):
        with open(f + ".metadata", encoding="utf-8") as fh:
            size = int(fh.read().split("\n")[0].rsplit("|", 1)[1])
        return np.dtype("<u2" if size == 2 else "<u4")
    if dtype is not None:
        return common.DTYPES[dtype]
    ends = np.fromfile(f + ".index", dtype="<u8")
    return np.dtype("<u2" if os.path.getsize(f) == 2 * int(ends[-1]) else "<u4")


def open_stream(path, dtype=None):
    parts, starts, lengths, base, indexed = [], [], [], 0, True
    for f in _files(path):
        dt = _dtype(f, dtype)
        n = os.path.getsize(f) // dt.itemsize
        if os.path.exists(f + ".index"):
            ends = np.fromfile(f + ".index", dtype="<u8").astype(np.int64)
            if len(ends) and (np.any(np.diff(ends) < 0) or ends[-1] != n):
                raise ValueError(f"{f}.index: ends not increasing or not ending at the file's {n} tokens")
            begin = np.concatenate(([0], ends[:-1]))
            starts.append(base + begin)
            lengths.append(ends - begin)
        else:
            indexed = False
        parts.append(common.Part(f, 0, dt, n))
        base += n
    docs = (np.concatenate(starts), np.concatenate(lengths)) if indexed and starts else None
    return common.Stream("datatrove", parts, documents=docs)


def loss_mask(path):
    """The stream's loss mask: one uint8 per token, 1 = trained on."""
    return np.concatenate([np.fromfile(f + ".loss", dtype=np.uint8) for f in _files(path)])
