"""Training-order fixtures and their reference batches, made the way each framework makes them.

    python3 scripts/make-order-fixtures.py SAMPLE_DIR OUT_DIR

Input: the sample dataset (`npm run sample`: real text, the real dolma2 tokenizer), read with the
dataset card's reader (scripts/reference_reader.py). Its stream is cut into documents at every EOS
(the EOS kept, as Megatron's --append-eod does; the last document is cut short) and written as:

- OUT/megatron/: `text_document.bin` + `.idx` as Megatron's IndexedDatasetBuilder writes them
  (megatron/core/datasets/indexed_dataset.py, NVIDIA/Megatron-LM d98e8a64: magic, version 1, dtype
  code 4 = int32, sequence and document counts, int32 lengths, int64 byte pointers, int64 document
  indices), and per run `run-<name>/cache/<md5>-GPTDataset-train-{description.txt,
  document_index.npy,sample_index.npy,shuffle_index.npy}` built by a Python port of
  gpt_dataset.py `_build_document_sample_shuffle_indices` (lines 475-797) with numpy's own
  RandomState, and helpers.cpp `build_sample_idx` (lines 145-249) ported line by line.
- OUT/olmo/: three token files `part-N.npy` (raw little-endian uint32 memmaps without a numpy
  header, as Dolma writes them) and `global_indices.npy` (raw uint32, as OLMo's
  `_build_and_save_global_indices` writes it with np.memmap), built by OLMo-core's rule
  (`src/olmo_core/data/data_loader.py` `_build_global_indices`, chunk size 1:
  `Generator(PCG64(seed + epoch)).shuffle(arange(n, uint32))`).
- OUT/llmc/: three shards `shard_N.bin` with llm.c's 256 x int32 header (magic 20240801, version
  7, token count; uint32 tokens), and the batches of a Python port of `llmc/dataloader.h`
  (karpathy/llm.c f1e2ace6: dataloader_init/reset/advance/next_batch) with the rand.h port in
  scripts/reference/llmc_rand.py.

OUT/reference.json: for each run, its parameters and the token ids of every sample of several
steps (the first, one across an epoch boundary, the last), assembled the way the framework
assembles them (Megatron `_query_document_sample_shuffle_indices`, OLMo instance reads, llm.c
`dataloader_load_batch`); and for a set of stream offsets, every (step, slot) that read each one,
found by brute force over every sample of the run.
"""
import hashlib
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "reference"))
from reference_reader import tokens  # noqa: E402
from llmc_rand import LlmcRng, random_permutation  # noqa: E402

EOS = 100257


def stream_of(sample_dir):
    rows = [json.loads(l) for l in open(os.path.join(sample_dir, "shard_manifest.jsonl"))]
    total = sum(r["num_tokens"] for r in rows)
    return tokens(sample_dir, 0, total).astype(np.int64)


# ---------------------------------------------------------------- Megatron


def write_megatron_dataset(out, stream):
    ends = list(np.nonzero(stream == EOS)[0] + 1)
    if not ends or ends[-1] != len(stream):
        ends.append(len(stream))
    starts = [0] + ends[:-1]
    lengths = np.array([e - s for s, e in zip(starts, ends)], dtype=np.int32)
    pointers = np.array(starts, dtype=np.int64) * 4
    doc_indices = np.arange(len(lengths) + 1, dtype=np.int64)
    os.makedirs(out, exist_ok=True)
    stream.astype(np.int32).tofile(os.path.join(out, "text_document.bin"))
    with open(os.path.join(out, "text_document.idx"), "wb") as w:
        w.write(b"MMIDIDX\x00\x00")
        w.write(struct.pack("<Q", 1))
        w.write(struct.pack("<B", 4))
        w.write(struct.pack("<Q", len(lengths)))
        w.write(struct.pack("<Q", len(doc_indices)))
        w.write(lengths.tobytes(order="C"))
        w.write(pointers.tobytes(order="C"))
        w.write(doc_indices.tobytes(order="C"))
    return lengths, pointers


def build_document_index(documents, num_epochs, rs, separate_final_epoch):
    if not separate_final_epoch or num_epochs == 1:
        document_index = np.mgrid[0:num_epochs, 0 : len(documents)][1]
        document_index[:] = documents
        document_index = document_index.reshape(-1)
        document_index = document_index.astype(np.int32)
        rs.shuffle(document_index)
        return document_index
    first = build_document_index(documents, num_epochs - 1, rs, False)
    last = build_document_index(documents, 1, rs, False)
    return np.concatenate((first, last))


def build_sample_idx(sizes, document_idx, seq_length, num_epochs, tokens_per_epoch, drop_last, extra):
    if drop_last:
        num_samples = (num_epochs * tokens_per_epoch - extra) // seq_length
    else:
        num_samples = int(np.ceil(np.float32(num_epochs * tokens_per_epoch - extra) / np.float32(seq_length)))
    sample_idx = np.zeros(2 * (num_samples + 1), dtype=np.int32)
    sample_idx_index = 0
    document_idx_index = 0
    doc_offset = 0
    sample_idx[0] = document_idx_index
    sample_idx[1] = doc_offset
    sample_idx_index += 1
    while sample_idx_index <= num_samples:
        remaining_seq_length = seq_length + extra
        while remaining_seq_length != 0:
            document_index = document_idx[document_idx_index]
            document_length = int(sizes[document_index]) - doc_offset
            remaining_seq_length -= document_length
            if remaining_seq_length <= 0:
                doc_offset += remaining_seq_length + document_length - extra
                remaining_seq_length = 0
            else:
                if document_idx_index == len(document_idx) - 1:
                    doc_offset = int(sizes[document_idx[document_idx_index]]) - extra
                    break
                document_idx_index += 1
                doc_offset = 0
        sample_idx[2 * sample_idx_index] = document_idx_index
        sample_idx[2 * sample_idx_index + 1] = doc_offset
        sample_idx_index += 1
    return sample_idx.reshape(num_samples + 1, 2)


def build_shuffle_index(num_samples, total_size, rs):
    dtype_ = np.uint32
    if total_size >= (np.iinfo(np.uint32).max - 1):
        dtype_ = np.int64
    first = np.arange(start=0, stop=num_samples, step=1, dtype=dtype_)
    rs.shuffle(first)
    if num_samples == total_size:
        return first
    last = np.arange(start=num_samples, stop=total_size, step=1, dtype=dtype_)
    rs.shuffle(last)
    return np.concatenate((first, last))


def megatron_indices(lengths, seq_length, seed, num_samples, extra=1):
    indices = np.arange(len(lengths), dtype=np.int32)  # split "100,0,0": every sequence
    tokens_per_epoch = int(np.sum(lengths[indices]))
    num_epochs, t = 1, tokens_per_epoch
    while t < num_samples * seq_length + extra:
        num_epochs += 1
        t += tokens_per_epoch
    sans_final = None
    if num_epochs == 1:
        separate = False
    else:
        sans_final = ((num_epochs - 1) * tokens_per_epoch - extra) // seq_length
        from_final = num_samples - sans_final
        per_epoch = (tokens_per_epoch - extra) // seq_length
        assert 0 <= from_final <= per_epoch + 1
        separate = from_final < int(0.80 * per_epoch)
    rs = np.random.RandomState(seed)
    document_index = build_document_index(indices, num_epochs, rs, separate)
    sample_index = build_sample_idx(lengths, document_index, seq_length, num_epochs, tokens_per_epoch, True, extra)
    n = sample_index.shape[0] - 1
    shuffle_index = build_shuffle_index(sans_final if separate else n, n, rs)
    return document_index, sample_index, shuffle_index, num_epochs, separate, sans_final


def megatron_sample(bin_tokens, pointers, lengths, document_index, sample_index, shuffle_index, i, extra):
    """_query_document_sample_shuffle_indices: the tokens of training sample i."""
    idx = shuffle_index[i]
    b, bo = sample_index[idx]
    e, eo = sample_index[idx + 1]
    get = lambda doc, off, n: bin_tokens[pointers[doc] // 4 + off : pointers[doc] // 4 + off + n]
    if b == e:
        return get(document_index[b], bo, eo - bo + extra)
    parts = []
    for p in range(b, e + 1):
        doc = document_index[p]
        off = 0 if p > b else bo
        n = lengths[doc] - off if p < e else eo + extra
        parts.append(get(doc, off, n))
    return np.concatenate(parts)


def megatron_piece_ranges(pointers, lengths, document_index, sample_index, j, extra):
    b, bo = sample_index[j]
    e, eo = sample_index[j + 1]
    out = []
    for p in range(b, e + 1):
        doc = document_index[p]
        off = 0 if p > b else bo
        end = lengths[doc] if p < e else eo + extra
        out.append((int(pointers[doc] // 4 + off), int(pointers[doc] // 4 + end)))
    return out


def make_megatron(out, stream, runs, probes):
    lengths, pointers = write_megatron_dataset(os.path.join(out, "megatron"), stream)
    ref = {}
    for name, p in runs.items():
        L, seed, B, iters, extra = p["sequence_length"], p["seed"], p["global_batch_size"], p["train_iters"], 1
        num_samples = iters * B
        di, si, sh, epochs, separate, sans_final = megatron_indices(lengths, L, seed, num_samples, extra)
        desc = json.dumps(
            {
                "class": "GPTDataset",
                "dataset_path": os.path.join(out, "megatron", "text_document"),
                "num_samples": num_samples,
                "index_split": "train",
                "random_seed": seed,
                "sequence_length": L,
                "split": "100,0,0",
                "split_matrix": [[0, 1.0], None, None],
                "tokenizer": None,
            },
            indent=4,
        )
        h = hashlib.md5(desc.encode("utf-8")).hexdigest()
        cache = os.path.join(out, "megatron", f"run-{name}", "cache")
        os.makedirs(cache, exist_ok=True)
        base = os.path.join(cache, f"{h}-GPTDataset-train-")
        open(base + "description.txt", "wt").write(desc)
        np.save(base + "document_index.npy", di, allow_pickle=True)
        np.save(base + "sample_index.npy", si, allow_pickle=True)
        np.save(base + "shuffle_index.npy", sh, allow_pickle=True)
        boundary = (sans_final // B) if separate else (len(sh) // 2) // B
        steps = sorted({0, boundary, iters - 1})
        batches = {}
        for k in steps:
            batches[k] = [megatron_sample(stream, pointers, lengths, di, si, sh, k * B + s, extra).tolist() for s in range(B)]
        # Inverse by brute force: every sample of every trained step, its stream ranges.
        rank = {int(sh[q]): q for q in range(iters * B)}
        reads = {t: [] for t in probes}
        pr = np.array(probes)
        for j in range(len(sh)):
            if j not in rank:
                continue
            q = rank[j]
            pos = 0
            for s, e in megatron_piece_ranges(pointers, lengths, di, si, j, extra):
                hit = pr[(pr >= s) & (pr < e)]
                for t in hit.tolist():
                    reads[t].append([q // B, q % B, pos + t - s])
                pos += e - s
        ref[name] = {
            **p,
            "hash": h,
            "epochs": epochs,
            "separate_final_epoch": bool(separate),
            "samples": int(len(sh)),
            "steps": {str(k): v for k, v in batches.items()},
            "reads": {str(t): sorted(v) for t, v in reads.items()},
        }
    return ref


# ---------------------------------------------------------------- OLMo


def make_olmo(out, stream, probes):
    d = os.path.join(out, "olmo")
    os.makedirs(d, exist_ok=True)
    cuts = [0, len(stream) * 2 // 5 + 123, len(stream) * 3 // 4 + 7, len(stream)]
    files = []
    for n in range(3):
        name = f"part-{n}.npy"
        stream[cuts[n] : cuts[n + 1]].astype("<u4").tofile(os.path.join(d, name))
        files.append((name, cuts[n], cuts[n + 1] - cuts[n]))
    L, seed, epoch, B = 1000, 6198, 2, 16
    counts = [t // L for _, _, t in files]
    n = sum(counts)
    indices = np.arange(n, dtype=np.uint32)
    np.random.Generator(np.random.PCG64(seed=seed + epoch)).shuffle(indices)
    mm = np.memmap(os.path.join(d, "global_indices.npy"), dtype=np.uint32, mode="w+", shape=(len(indices),))
    mm[:] = indices
    mm.flush()
    del mm
    cum = np.concatenate([[0], np.cumsum(counts)])

    def instance(i):
        f = int(np.searchsorted(cum, i, side="right") - 1)
        name, start, _ = files[f]
        arr = np.memmap(os.path.join(d, name), dtype=np.uint32, mode="r")
        local = (i - cum[f]) * L
        return arr[local : local + L], int(start + local)

    total_batches = n // B
    steps = sorted({0, total_batches // 2, total_batches - 1})
    batches = {k: [instance(int(indices[k * B + s]))[0].tolist() for s in range(B)] for k in steps}
    reads = {t: [] for t in probes}
    pr = np.array(probes)
    for q in range(total_batches * B):
        _, s = instance(int(indices[q]))
        for t in pr[(pr >= s) & (pr < s + L)].tolist():
            reads[t].append([q // B, q % B, t - s])
    return {
        "files": [f for f, _, _ in files],
        "sequence_length": L,
        "seed": seed,
        "epoch": epoch,
        "global_batch_size": B,
        "instances": n,
        "steps": {str(k): v for k, v in batches.items()},
        "reads": {str(t): sorted(v) for t, v in reads.items()},
    }


# ---------------------------------------------------------------- llm.c


class LlmcLoader:
    """llmc/dataloader.h, ported: one process's DataLoader (positions only; tokens read separately)."""

    def __init__(self, shard_ntok, B, T, rank, P, shuffle):
        self.ntok, self.B, self.T, self.rank, self.P, self.shuffle = shard_ntok, B, T, rank, P, shuffle
        self.total = P * B * T
        if shuffle:
            self.rng = LlmcRng(42 + rank)
            self.shard_indices = list(range(len(shard_ntok)))
        for nt in shard_ntok:
            assert nt >= P * B * T + 1
        self.reset()

    def load_shard(self, i):
        self.shard = self.shard_indices[i] if self.shuffle else i
        self.shard_num_samples = (self.ntok[self.shard] - 1) // self.total

    def prepare_intra(self):
        self.intra = list(range(self.shard_num_samples))
        random_permutation(self.intra, self.rng)

    def reset(self):
        self.cur_shard, self.cur_sample = 0, 0
        if self.shuffle:
            random_permutation(self.shard_indices, self.rng)
        self.load_shard(0)
        if self.shuffle:
            self.prepare_intra()

    def advance(self):
        if self.cur_shard == len(self.ntok) - 1:
            self.reset()
            return
        self.cur_shard = (self.cur_shard + 1) % len(self.ntok)
        self.cur_sample = 0
        self.load_shard(self.cur_shard)
        if self.shuffle:
            self.prepare_intra()

    def next_batch(self):
        if self.cur_sample >= self.shard_num_samples:
            self.advance()
        idx = self.intra[self.cur_sample] if self.shuffle else self.cur_sample
        self.cur_sample += 1
        return self.shard, idx * self.total + self.rank * self.B * self.T


def make_llmc(out, stream, probes):
    d = os.path.join(out, "llmc")
    os.makedirs(d, exist_ok=True)
    cuts = [0, len(stream) // 3 + 5000, len(stream) * 2 // 3 - 777, len(stream)]
    ntok, starts = [], []
    for n in range(3):
        part = stream[cuts[n] : cuts[n + 1]]
        header = np.zeros(256, dtype=np.int32)
        header[0], header[1], header[2] = 20240801, 7, len(part)
        with open(os.path.join(d, f"shard_{n}.bin"), "wb") as w:
            w.write(header.tobytes())
            w.write(part.astype("<u4").tobytes())
        ntok.append(len(part))
        starts.append(cuts[n])
    B, T, P, A = 4, 256, 3, 2
    epoch_micro = sum((nt - 1) // (P * B * T) for nt in ntok)
    steps_total = (2 * epoch_micro + 5) // A  # into the second epoch
    loaders = [LlmcLoader(ntok, B, T, r, P, True) for r in range(P)]
    reads = {t: [] for t in probes}
    pr = np.array(probes)
    batches = {}
    boundary = epoch_micro // A
    want = {0, boundary, steps_total - 1}
    for k in range(steps_total):
        rows = []
        for a in range(A):
            for r in range(P):
                shard, local = loaders[r].next_batch()
                s0 = starts[shard] + local
                for b in range(B):
                    slot = (a * P + r) * B + b
                    s = int(s0 + b * T)
                    if k in want:
                        rows.append(stream[s : s + T + 1].tolist())
                    for t in pr[(pr >= s) & (pr <= s + T)].tolist():
                        reads[t].append([k, slot, t - s])
        if k in want:
            batches[k] = rows
    return {
        "files": [f"shard_{n}.bin" for n in range(3)],
        "B": B,
        "T": T,
        "processes": P,
        "grad_accum_steps": A,
        "steps_total": steps_total,
        "steps": {str(k): v for k, v in batches.items()},
        "reads": {str(t): sorted(v) for t, v in reads.items()},
    }


def per_update_counts(offs, ups, nterms, updates):
    """Per-update counts of byte-level matches through an order (for the count tests).

    offs: [[stream offset, term], ...] from reference_search.py --mode offsets; ups: stream offset
    of a match's first token -> the set of updates that read that token as an input. A match counts
    once in each update that reads it; a match no update reads counts in not_read."""
    per = [[0] * nterms for _ in range(updates)]
    never = [0] * nterms
    for o, t in offs:
        if o not in ups:
            never[t] += 1
        for u in ups.get(o, ()):
            per[u][t] += 1
    return {"per": per, "not_read": never}


def main():
    sample_dir, out = sys.argv[1], sys.argv[2]
    stream = stream_of(sample_dir)
    rng = np.random.default_rng(20261202)
    probes = sorted(set(rng.integers(0, len(stream), 300).tolist()) | {0, len(stream) - 1})
    runs = {
        "two-epochs": {"sequence_length": 512, "seed": 1234, "global_batch_size": 8, "train_iters": 700},
        "three-epochs": {"sequence_length": 1000, "seed": 7, "global_batch_size": 12, "train_iters": 560},
    }
    ref = {
        "stream_tokens": int(len(stream)),
        "probes": probes,
        "megatron": make_megatron(out, stream, runs, probes),
        "olmo": make_olmo(out, stream, probes),
        "llmc": make_llmc(out, stream, probes),
    }
    with open(os.path.join(out, "reference.json"), "w") as w:
        json.dump(ref, w)


if __name__ == "__main__":
    main()
