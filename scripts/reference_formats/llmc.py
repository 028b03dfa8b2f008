"""llm.c / modded-nanogpt `.bin` (docs/formats.md, "llm.c"), numpy only.

1,024-byte header of 256 int32 (magic, version, token count); magic 20240520 version 1 holds
uint16 tokens, magic 20240801 version 7 uint32. A folder is its `.bin` files sorted byte-wise.
Documents: each begins with its delimiter (the "before" rule).
"""
import os

import numpy as np

import reference_formats_common as common

HEADERS = {(20240520, 1): "<u2", (20240801, 7): "<u4"}


def open_stream(path, dtype=None):
    parts = []
    for f in common.files_in(path, lambda n: n.endswith(".bin")):
        header = np.fromfile(f, dtype="<i4", count=256)
        if len(header) != 256:
            raise ValueError(f"{f}: shorter than the 1,024-byte header")
        key = (int(header[0]), int(header[1]))
        if key not in HEADERS:
            raise ValueError(f"{f}: magic {key[0]} version {key[1]}")
        dt = np.dtype(common.DTYPES[dtype] if dtype else HEADERS[key])
        n = int(header[2])
        if os.path.getsize(f) != 1024 + n * dt.itemsize:
            raise ValueError(f"{f}: {os.path.getsize(f)} bytes, header says {n} tokens")
        parts.append(common.Part(f, 1024, dt, n))
    return common.Stream("llm.c", parts, delimiter="before")
