"""Megatron-LM PREFIX.bin + PREFIX.idx (docs/formats.md, "Megatron-LM"), numpy only.

A PATH is a `.bin`, an `.idx`, a prefix, or a folder of prefixes (stream order: prefix names
sorted byte-wise). Documents come from `document_indices`, never from EOS.
"""
import os

import numpy as np

import reference_formats_common as common

MAGIC = b"MMIDIDX\x00\x00"
CODES = {1: "u1", 2: "i1", 3: "<i2", 4: "<i4", 5: "<i8", 6: "<f8", 7: "<f4", 8: "<u2"}


def read_index(idx):
    """(dtype, lengths int32[S], pointers int64[S], document_indices int64[D]) of one `.idx`."""
    raw = np.fromfile(idx, dtype=np.uint8)
    if len(raw) < 34 or raw[:9].tobytes() != MAGIC:
        raise ValueError(f"{idx}: not a Megatron index")
    version = int(raw[9:17].view("<u8")[0])
    code = int(raw[17])
    if version != 1 or code not in CODES:
        raise ValueError(f"{idx}: version {version}, dtype code {code}")
    s, d = (int(x) for x in raw[18:34].view("<u8"))
    at = 34
    lengths = raw[at:at + 4 * s].view("<i4").astype(np.int64); at += 4 * s
    pointers = raw[at:at + 8 * s].view("<i8").astype(np.int64); at += 8 * s
    docs = raw[at:at + 8 * d].view("<i8").astype(np.int64)
    if len(lengths) != s or len(pointers) != s or len(docs) != d:
        raise ValueError(f"{idx}: shorter than its counts")
    return np.dtype(CODES[code]), lengths, pointers, docs


def open_stream(path, dtype=None):
    if os.path.isdir(path):
        prefixes = [p[:-4] for p in common.files_in(path, lambda n: n.endswith(".idx"))]
    else:
        prefixes = [path[:-4] if path.endswith((".bin", ".idx")) else path]
    parts, starts, lengths, base = [], [], [], 0
    for prefix in prefixes:
        dt, seq_len, ptr, di = read_index(prefix + ".idx")
        if dtype is not None:
            dt = common.DTYPES[dtype]
        size = os.path.getsize(prefix + ".bin")
        tokens = size // dt.itemsize
        expect = np.concatenate(([0], np.cumsum(seq_len)[:-1])) * dt.itemsize if len(seq_len) else seq_len
        if not np.array_equal(ptr, expect) or int(seq_len.sum()) != tokens or size % dt.itemsize:
            raise ValueError(f"{prefix}: pointers and lengths do not tile the .bin ({size} bytes)")
        if len(di) == 0 or di[0] != 0 or di[-1] != len(seq_len) or np.any(np.diff(di) < 0):
            raise ValueError(f"{prefix}: document_indices do not run from 0 to the sequence count")
        seq_start = np.concatenate(([0], np.cumsum(seq_len)))  # token offset of each sequence, then the end
        starts.append(base + seq_start[di[:-1]])
        lengths.append(seq_start[di[1:]] - seq_start[di[:-1]])
        parts.append(common.Part(prefix + ".bin", 0, dt, tokens))
        base += tokens
    docs = (np.concatenate(starts).astype(np.int64), np.concatenate(lengths).astype(np.int64))
    return common.Stream("megatron", parts, documents=docs)
