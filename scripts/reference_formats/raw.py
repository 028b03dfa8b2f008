"""Headerless token files and `.npy` (docs/formats.md, "Raw files"), numpy only.

A headerless file is tokens of the dtype the caller names; a `.npy` says its dtype and shape in
its header (read with numpy's own `numpy.lib.format`). A folder is its files sorted byte-wise.
Documents: EOS ends each (the "after" rule).
"""
import os

import numpy as np

import reference_formats_common as common


def _part(f, dtype):
    npy = common.npy_header(f)
    if npy is not None:
        header, dt, n = npy
        return common.Part(f, header, common.DTYPES[dtype] if dtype is not None else dt, n)
    if dtype is None:
        raise ValueError(f"{f}: a headerless file needs --dtype")
    dt = common.DTYPES[dtype]
    size = os.path.getsize(f)
    if size % dt.itemsize:
        raise ValueError(f"{f}: {size} bytes is not a whole number of {dtype}")
    return common.Part(f, 0, dt, size // dt.itemsize)


def open_stream(path, dtype=None):
    files = common.files_in(path, lambda n: n.endswith((".bin", ".npy")))
    return common.Stream("raw", [_part(f, dtype) for f in files], delimiter="after")
