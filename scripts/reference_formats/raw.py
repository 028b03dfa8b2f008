"""Headerless token files and `.npy` (docs/formats.md, "Raw files"), numpy only.

A headerless file is tokens of the dtype the caller names; a `.npy` says its dtype and shape in
its header (read with numpy's own `numpy.lib.format`). A folder is its files sorted byte-wise.
Documents: EOS ends each (the "after" rule).
"""
import os

import numpy as np

import reference_formats_common as common


def _part(f, dtype):
    with open(f, "rb") as fh:
        if fh.read(6) == b"\x93NUMPY":
            fh.seek(0)
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dt = read(fh)
            if len(shape) != 1 or fortran:
                raise ValueError(f"{f}: a .npy of shape {shape} is not a 1-D token array")
            if dtype is not None:
                dt = common.DTYPES[dtype]
            return common.Part(f, fh.tell(), dt, shape[0])
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
