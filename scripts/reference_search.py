#!/usr/bin/env python3
"""Byte-level reference of the stream search, independent of the product's code.

Reads the stream with the dataset card's reader (scripts/reference_reader.py + numpy), decodes
tokenizer.json's byte table on its own (GPT-2 byte-level alphabet inverted; added tokens as
their UTF-8 content; ids without a token contribute no bytes), splits the stream into documents
at EOS, and runs a regular expression (the `regex` module: Unicode simple case folding for
IGNORECASE, \\p{L}/\\p{N}, overlapped matches) over each document's text. Every occurrence's
place is the global offset of the token holding its first byte.

Usage:
  reference_search.py ROOT --terms JSON [--word] [--ignore-case] [--ids]
                      [--G 131072] [--eos 100257] [--tokenizer FILE] --mode counts|offsets
                      [--format NAME [--dtype D]]
  reference_search.py ROOT --mode names|proper-names [--top 200]
With --format, ROOT is any PATH of that token format, read by scripts/reference_formats.py.
Prints JSON:
  counts:  {"updates": U, "counts": {"<update>": [c_term0, …], …}, "shares": {"<update>": [s_term0, …], …}}
           (updates with a count only; a share is the term's count over the update's count of all terms)
  offsets: [[offset, term_index], …] in stream order (by offset, then first byte, then term)
  names:   the TOP most frequent capitalised words (an upper-case letter, then lower-case letters)
           of the decoded documents, most frequent first (ties in code-point order); when there are
           fewer, then the other words (letters only), most frequent first
  proper-names: the same, of the capitalised words that are proper names by the usual corpus
           test: the word in lower case occurs at most a tenth as often (`Congress`, `Lincoln`;
           not `The`, `States`)
"""
import argparse
import json
import os
import sys

import numpy as np
import regex

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_reader import tokens  # noqa: E402


def byte_table(tokenizer_file):
    """id -> bytes, from tokenizer.json alone."""
    with open(tokenizer_file, encoding="utf-8") as f:
        tj = json.load(f)
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    char_to_byte = {}
    n = 0
    for b in range(256):
        if b in keep:
            char_to_byte[chr(b)] = b
        else:
            char_to_byte[chr(256 + n)] = b
            n += 1
    table = {}
    for tok, i in tj["model"]["vocab"].items():
        table[i] = bytes(char_to_byte[c] for c in tok)
    for t in tj.get("added_tokens", []):
        table[t["id"]] = t["content"].encode("utf-8")
    size = max(table) + 1
    return [table.get(i, b"") for i in range(size)]


def char_byte_len(c):
    o = ord(c)
    if 0xDC80 <= o <= 0xDCFF:  # surrogateescape: one undecodable byte
        return 1
    return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--terms")
    ap.add_argument("--top", type=int, default=200)
    ap.add_argument("--word", action="store_true")
    ap.add_argument("--ignore-case", action="store_true")
    ap.add_argument("--ids", action="store_true")
    ap.add_argument("--G", type=int, default=131072)
    ap.add_argument("--eos", type=int, default=100257)
    ap.add_argument("--tokenizer")
    ap.add_argument("--mode", choices=["counts", "offsets", "names", "proper-names"], required=True)
    ap.add_argument("--format")
    ap.add_argument("--dtype", choices=["uint16", "uint32", "int32"])
    a = ap.parse_args()
    listing = a.mode in ("names", "proper-names")
    terms = json.loads(a.terms) if not listing else []
    root = a.root
    if a.format:
        from reference_formats import open_stream
        stream = open_stream(root, a.format, a.dtype)
        total = stream.stored_tokens
        ids = stream.ids(0, total)
    else:
        total = sum(json.loads(l)["num_tokens"] for l in open(f"{root}/shard_manifest.jsonl") if l.strip())
        ids = tokens(root, 0, total).astype(np.int64)
    updates = max(0, (total - 1) // a.G) if total > 0 else 0
    found = []  # (offset, first byte in token, term)

    if a.ids:
        for ti, term in enumerate(terms):
            seq = np.array([int(x) for x in term.split(",")], dtype=np.int64)
            k = len(seq)
            if k > len(ids):
                continue
            m = np.ones(len(ids) - k + 1, dtype=bool)
            for j in range(k):
                m &= ids[j:len(ids) - k + 1 + j] == seq[j]
            for off in np.nonzero(m)[0]:
                found.append((int(off), 0, ti))
    else:
        tok_file = a.tokenizer or (f"{root}/tokenizer/tokenizer.json" if os.path.exists(f"{root}/tokenizer/tokenizer.json") else f"{root}/tokenizer.json")
        table = byte_table(tok_file)
        lens = np.array([len(table[i]) if i < len(table) else 0 for i in range(max(len(table), 1))], dtype=np.int64)
        word = r"[\p{L}\p{N}_]"
        flags = regex.IGNORECASE if a.ignore_case else 0
        pats = []
        for t in terms:
            p = regex.escape(t)
            if a.word:
                p = rf"(?<!{word}){p}(?!{word})"
            pats.append(regex.compile(p, flags))
        eos_pos = np.nonzero(ids == a.eos)[0]
        starts = np.concatenate(([0], eos_pos + 1))
        ends = np.concatenate((eos_pos, [len(ids)]))
        names = {}
        for s, e in zip(starts, ends):
            if e <= s:
                continue
            doc = ids[s:e]
            tl = np.where(doc < len(lens), lens[np.minimum(doc, len(lens) - 1)], 0)
            data = b"".join(table[i] if i < len(table) else b"" for i in doc.tolist())
            text = data.decode("utf-8", errors="surrogateescape")
            if listing:
                for m in regex.finditer(r"(?<![\p{L}\p{N}_])\p{L}+(?![\p{L}\p{N}_])", text):
                    names[m.group()] = names.get(m.group(), 0) + 1
                continue
            cb = np.cumsum([0] + [char_byte_len(c) for c in text])  # char index -> byte offset
            cum = np.cumsum(tl)  # token i covers bytes [cum[i]-tl[i], cum[i])
            for ti, p in enumerate(pats):
                for m in p.finditer(text, overlapped=True):
                    b = int(cb[m.start()])
                    tk = int(np.searchsorted(cum, b, side="right"))
                    first = b - int(cum[tk] - tl[tk])
                    found.append((int(s) + tk, first, ti))
    if a.mode == "proper-names":
        cap = regex.compile(r"\p{Lu}\p{Ll}+")
        proper = {w: n for w, n in names.items() if cap.fullmatch(w) and names.get(w.lower(), 0) * 10 <= n}
        by_freq = sorted(proper.items(), key=lambda x: (-x[1], x[0]))
        print(json.dumps([w for w, _ in by_freq[: a.top]]))
        return
    if a.mode == "names":
        cap = regex.compile(r"\p{Lu}\p{Ll}+")
        by_freq = sorted(names.items(), key=lambda x: (not cap.fullmatch(x[0]), -x[1], x[0]))
        print(json.dumps([w for w, _ in by_freq[: a.top]]))
        return
    found.sort()
    if a.mode == "offsets":
        print(json.dumps([[o, t] for o, _, t in found]))
        return
    counts = {}
    for o, _, t in found:
        u = o // a.G
        if u >= updates:
            continue
        counts.setdefault(u, [0] * len(terms))[t] += 1
    shares = {str(k): [c / sum(v) for c in v] for k, v in sorted(counts.items())}
    print(json.dumps({"updates": updates, "counts": {str(k): v for k, v in sorted(counts.items())}, "shares": shares}))


if __name__ == "__main__":
    main()
