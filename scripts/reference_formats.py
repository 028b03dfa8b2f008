#!/usr/bin/env python3
"""Independent numpy reference reader of the token formats, written from docs/formats.md (the
layouts as each format's own writer lays them out), not from the product's code. Python 3 +
numpy only (and the `zstd` command for compressed litdata chunks).

Usage:
  reference_formats.py PATH --format NAME [--dtype uint16|uint32|int32] [--eos ID]
                       [--ranges JSON] [--locate JSON] [--documents]
    --ranges   [[start, count], …]: ids of global tokens [start, start+count) in stream order
    --locate   [offset, …]: the document holding each global token offset
    --documents  include the whole document table
Prints one JSON object:
  {"format", "dtype", "files": [{"path", "header_bytes", "tokens"}], "stored_tokens",
   "documents": N from the format's index or null where only EOS tells,
   "ranges": [[id, …], …], "locate": [{"offset", "document", "document_start", "document_length"}],
   "document_table": [[start, length], …]}
Document rules: index formats give each entry's start and tokens (EOS included when stored);
"after" formats (raw, token-stream) end a document at EOS, its length excluding the EOS;
"before" formats (llm.c) begin a document at its delimiter, its length including it.

ADDING A FORMAT: write scripts/reference_formats/<module>.py with `open_stream(path, dtype=None)`
returning a `common.Stream`, and add one line to FORMATS below.
"""
import argparse
import importlib.util
import json
import os
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_formats")

# format name (as `token-shards info --json` prints it) -> module file in scripts/reference_formats/
FORMATS = {
    "token-stream": "token_stream.py",
    "megatron": "megatron.py",
    "llm.c": "llmc.py",
    "raw": "raw.py",
    "dolma": "dolma.py",
    "datatrove": "datatrove.py",
    "litdata": "litdata.py",
    "mds": "mds.py",
}


def _load(file):
    """Imports scripts/reference_formats/<file> as module reference_formats_<stem>."""
    name = "reference_formats_" + os.path.splitext(file)[0]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


common = _load("common.py")


def open_stream(path, fmt, dtype=None):
    """The `common.Stream` of PATH read as format `fmt` (dtype forced when given)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt} (known: {', '.join(FORMATS)})")
    return _load(FORMATS[fmt]).open_stream(path, dtype)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path")
    ap.add_argument("--format", required=True)
    ap.add_argument("--dtype", choices=["uint16", "uint32", "int32"])
    ap.add_argument("--eos", type=int, default=100257)
    ap.add_argument("--ranges", default="[]")
    ap.add_argument("--locate", default="[]")
    ap.add_argument("--documents", action="store_true")
    a = ap.parse_args()
    s = open_stream(a.path, a.format, a.dtype)
    out = {
        "format": s.format,
        "dtype": s.dtype,
        "files": [{"path": p.path, "header_bytes": p.header, "tokens": p.tokens} for p in s.parts],
        "stored_tokens": s.stored_tokens,
        "documents": None if s.documents is None else int(len(s.documents[0])),
        "ranges": [s.ids(int(st), int(n)).tolist() for st, n in json.loads(a.ranges)],
        "locate": [],
    }
    for o in json.loads(a.locate):
        d, start, length = s.locate(int(o), a.eos)
        out["locate"].append({"offset": int(o), "document": d, "document_start": start, "document_length": length})
    if a.documents:
        starts, lengths = s.document_table(a.eos)
        out["document_table"] = [[int(x), int(y)] for x, y in zip(starts, lengths)]
    print(json.dumps(out))


if __name__ == "__main__":
    try:
        main()
    except ValueError as e:
        print(f"reference_formats: {e}", file=sys.stderr)
        sys.exit(1)
