"""Dolma / OLMo token files (docs/formats.md, "Dolma"), numpy only.

`NAME.npy` is a raw little-endian memmap of uint16 or uint32 ids with no numpy header (a real
`.npy` with the `\\x93NUMPY` header is read through numpy's own `numpy.lib.format`); beside it
`NAME.csv.gz`, gzip'd CSV rows `start,end,id,src,loc`: document n of the file is its tokens
[start, end). The dtype of a headerless file is the width at which the last row's end fills it.
A folder is its `.npy` files that have a sidecar, sorted byte-wise.
"""
import csv
import gzip
import io
import os

import numpy as np

import reference_formats_common as common


def _rows(csv_path):
    """The sidecar's rows as (start, end, id, src, loc) tuples."""
    with gzip.open(csv_path, "rb") as fh:
        text = io.TextIOWrapper(fh, encoding="utf-8", newline="")
        return [(int(r[0]), int(r[1]), r[2], r[3], r[4]) for r in csv.reader(text)]


def _sidecar(npy):
    return npy[: -len(".npy")] + ".csv.gz"


def _files(path):
    if os.path.isdir(path):
        return common.files_in(path, lambda n: n.endswith(".npy") and os.path.exists(os.path.join(path, n[:-4] + ".csv.gz")))
    if path.endswith(".csv.gz"):
        return [path[: -len(".csv.gz")] + ".npy"]
    return [path]


def _part(f, rows, dtype):
    npy = common.npy_header(f)
    if npy is not None:
        return common.Part(f, *npy)
    end = rows[-1][1] if rows else 0
    size = os.path.getsize(f)
    if dtype is not None:
        dt = common.DTYPES[dtype]
    elif end and size == 2 * end:
        dt = np.dtype("<u2")
    elif end and size == 4 * end:
        dt = np.dtype("<u4")
    else:
        raise ValueError(f"{f}: {size} bytes do not hold the {end} tokens of its rows as uint16 or uint32")
    return common.Part(f, 0, dt, size // dt.itemsize)


def open_stream(path, dtype=None):
    parts, starts, lengths, base = [], [], [], 0
    for f in _files(path):
        rows = _rows(_sidecar(f))
        p = _part(f, rows, dtype)
        if rows and rows[-1][1] != p.tokens:
            raise ValueError(f"{f}: its rows end at {rows[-1][1]}, the file holds {p.tokens} tokens")
        for s, e, *_ in rows:
            starts.append(base + s)
            lengths.append(e - s)
        parts.append(p)
        base += p.tokens
    return common.Stream("dolma", parts, documents=(np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64)))


def document_metadata(path):
    """(id, src, loc) of every document, in stream order."""
    out = []
    for f in _files(path):
        out.extend((i, s, l) for _, _, i, s, l in _rows(_sidecar(f)))
    return out
