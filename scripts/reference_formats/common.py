"""Shared pieces of the format reference readers (scripts/reference_formats.py), numpy only.

Written from the layouts in docs/formats.md, not from the product's code. A format module
builds a `Stream`: its data files in stream order (`Part`: path, header bytes, numpy dtype,
token count) and, where the format has an index, the document table; otherwise the
delimiter rule that splits documents at the end-of-text id.
"""
import os

import numpy as np

# numpy dtype -> the name `token-shards info --json` prints
DTYPE_NAMES = {np.dtype("<u2"): "uint16", np.dtype("<u4"): "uint32", np.dtype("<i4"): "int32",
               np.dtype("u1"): "uint8", np.dtype("i1"): "int8", np.dtype("<i2"): "int16",
               np.dtype("<i8"): "int64", np.dtype("<f8"): "float64", np.dtype("<f4"): "float32"}
# name -> little-endian numpy dtype (for --dtype)
DTYPES = {v: k for k, v in DTYPE_NAMES.items()}


class Part:
    """One data file of a stream: `tokens` ids of `dtype` starting `header` bytes into `path`."""

    def __init__(self, path, header, dtype, tokens):
        self.path, self.header, self.dtype, self.tokens = path, int(header), np.dtype(dtype), int(tokens)

    def ids(self, a, b):
        """Tokens [a, b) of this file (local token offsets) as int64."""
        mm = np.memmap(self.path, dtype=self.dtype, mode="r", offset=self.header, shape=(self.tokens,))
        return np.asarray(mm[a:b], dtype=np.int64)


class Stream:
    """A format's token stream.

    parts: [Part] in stream order.
    documents: None, or (starts, lengths) int64 arrays in global tokens from the format's index
      (length = the entry's tokens, the EOS included when stored).
    delimiter: for formats without an index, "after" (EOS ends a document; lengths exclude it)
      or "before" (the delimiter begins a document; lengths include it).
    """

    def __init__(self, fmt, parts, documents=None, delimiter="after"):
        self.format, self.parts, self.documents, self.delimiter = fmt, parts, documents, delimiter
        dtypes = {p.dtype for p in parts}
        if len(dtypes) != 1:
            raise ValueError(f"{fmt}: the files of one stream have different dtypes {sorted(map(str, dtypes))}")
        self.dtype = DTYPE_NAMES[dtypes.pop()]
        self.stored_tokens = sum(p.tokens for p in parts)

    def ids(self, start, n):
        """Global tokens [start, start+n) in stream order, across file edges (int64)."""
        if start < 0 or n < 0 or start + n > self.stored_tokens:
            raise ValueError(f"range [{start}, {start + n}) is outside the stream's {self.stored_tokens} tokens")
        out, base = [], 0
        for p in self.parts:
            a, b = max(start, base), min(start + n, base + p.tokens)
            if a < b:
                out.append(p.ids(a - base, b - base))
            base += p.tokens
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def document_table(self, eos):
        """(starts, lengths) of every document: the index's, else split at `eos` by the delimiter rule."""
        if self.documents is not None:
            return self.documents
        ids = self.ids(0, self.stored_tokens)
        pos = np.nonzero(ids == eos)[0].astype(np.int64)
        n = len(ids)
        if self.delimiter == "after":
            starts = np.concatenate(([0], pos + 1))
            ends = np.concatenate((pos, [n]))
            keep = ~((starts == n) & (ends == n))  # no empty document after a final EOS
            if n == 0:
                keep[:] = False
            return starts[keep], (ends - starts)[keep]
        if self.delimiter == "before":
            starts = pos
            if n and (len(pos) == 0 or pos[0] != 0):  # the stream begins inside a document
                starts = np.concatenate(([0], pos))
            ends = np.concatenate((starts[1:], [n]))
            return starts, ends - starts
        raise ValueError(f"unknown delimiter rule {self.delimiter}")

    def locate(self, offset, eos):
        """(document, document_start, document_length) of the document holding global token `offset`.

        The document that holds a token is the one whose span covers it: [start, start + length),
        plus its closing EOS under the "after" rule. Empty index entries hold no token.
        """
        starts, lengths = self.document_table(eos)
        span = lengths + (1 if (self.documents is None and self.delimiter == "after") else 0)
        hit = np.nonzero((starts <= offset) & (offset < starts + span))[0]
        if len(hit) != 1:
            raise ValueError(f"offset {offset} is in {len(hit)} documents")
        d = int(hit[0])
        return d, int(starts[d]), int(lengths[d])


def npy_header(f):
    """(header_bytes, dtype, tokens) of a real `.npy` (read with numpy's own `numpy.lib.format`), or None without the magic."""
    with open(f, "rb") as fh:
        if fh.read(6) != b"\x93NUMPY":
            return None
        fh.seek(0)
        version = np.lib.format.read_magic(fh)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dt = read(fh)
        if len(shape) != 1 or fortran:
            raise ValueError(f"{f}: a .npy of shape {shape} is not a 1-D token array")
        return fh.tell(), dt, shape[0]


def files_in(path, accept):
    """`path` itself, or the files of folder `path` that `accept(name)` in byte-wise name order (Python's sorted)."""
    if os.path.isdir(path):
        names = sorted((n for n in os.listdir(path) if accept(n)), key=lambda s: s.encode("utf-8", "surrogateescape"))
        return [os.path.join(path, n) for n in names]
    return [path]
