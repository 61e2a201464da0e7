"""A vocabulary shortlist for CTranslate2 (`export --vocab-map`): which target subwords a
source subword may bring into an output.

CTranslate2 restricts each batch's output layer to the union of its source subwords'
candidates and the always-allowed ones (`use_vmap`), which cuts the cost of the output
projection and softmax. The map is learnt from training pairs, as Marian's lexical
shortlist is: the `frequent` most frequent target subwords are always allowed, and each
source subword adds the `per_source` target subwords that co-occur with it most strongly,
by the Dice coefficient over sentence pairs (2 c(s,t) / (c(s) + c(t))), which favours
translations over words that are merely common. The file CTranslate2 reads holds one line
per source subword, `SOURCE<TAB>TARGET TARGET ...`, and one with an empty source for the
always-allowed ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from translator.data.readers import chunked
from translator.fileio import atomic_open
from translator.progress import progress_bar

FREQUENT = 300  # target subwords always allowed
PER_SOURCE = 50  # target subwords each source subword allows
CHUNK = 10_000  # pairs counted at a time


def _merge(keys: np.ndarray, counts: np.ndarray, new: np.ndarray):
    """Counts of `keys` (sorted, unique) plus the occurrences in `new`, as sorted unique
    keys and their counts."""
    new_keys, new_counts = np.unique(new, return_counts=True)
    both = np.concatenate([keys, new_keys])
    weights = np.concatenate([counts, new_counts])
    merged, where = np.unique(both, return_inverse=True)
    return merged, np.bincount(where, weights=weights, minlength=len(merged)).astype(np.int64)


def count_pairs(pairs: Iterable[tuple[list[int], list[int]]], src_size: int, tgt_size: int):
    """(pairs, c(s), c(t), co-occurring keys s * tgt_size + t, their counts) over sentence
    pairs, each subword counted once per sentence."""
    n = 0
    src_df = np.zeros(src_size, dtype=np.int64)
    tgt_df = np.zeros(tgt_size, dtype=np.int64)
    keys = np.zeros(0, dtype=np.int64)
    counts = np.zeros(0, dtype=np.int64)
    for chunk in chunked(iter(pairs), CHUNK):
        blocks = []
        for src, tgt in chunk:
            s = np.unique(np.asarray(src, dtype=np.int64))
            t = np.unique(np.asarray(tgt, dtype=np.int64))
            src_df[s] += 1
            tgt_df[t] += 1
            blocks.append((s[:, None] * tgt_size + t[None, :]).ravel())
        n += len(chunk)
        if blocks:
            keys, counts = _merge(keys, counts, np.concatenate(blocks))
    return n, src_df, tgt_df, keys, counts


def shortlist(src_df, tgt_df, keys, counts, tgt_size: int, frequent: int, per_source: int):
    """(always-allowed target ids, {source id: its candidate target ids})."""
    always = [int(t) for t in np.argsort(-tgt_df, kind="stable")[:frequent] if tgt_df[t] > 0]
    src, tgt = keys // tgt_size, keys % tgt_size
    dice = 2 * counts / (src_df[src] + tgt_df[tgt])
    order = np.lexsort((-dice, src))  # by source, then strongest first
    src, tgt = src[order], tgt[order]
    starts = np.flatnonzero(np.r_[True, src[1:] != src[:-1]])
    ends = np.r_[starts[1:], len(src)]
    table = {
        int(src[a]): [int(t) for t in tgt[a : min(b, a + per_source)]] for a, b in zip(starts, ends)
    }
    return always, table


def write_vmap(path: Path, always, table, src_piece, tgt_piece) -> None:
    with atomic_open(path, "w", encoding="utf-8") as out:
        out.write("\t" + " ".join(tgt_piece(t) for t in always) + "\n")
        for s, targets in sorted(table.items()):
            out.write(f"{src_piece(s)}\t{' '.join(tgt_piece(t) for t in targets)}\n")


def encoded_pairs(tokenizer, pairs: Iterable[tuple[str, str]], limit: int) -> Iterator:
    """Subword ids of up to `limit` pairs, encoded a chunk at a time, with a bar."""
    with progress_bar(total=None, desc="shortlist", unit="pair") as bar:
        seen = 0
        for chunk in chunked(iter(pairs), CHUNK):
            chunk = chunk[: limit - seen]
            src = tokenizer.encode_src([s for s, _ in chunk])
            tgt = tokenizer.encode_tgt([t for _, t in chunk])
            yield from zip(src, tgt)
            seen += len(chunk)
            bar.update(len(chunk))
            if seen >= limit:
                return


def build_vmap(tokenizer, pairs, path: Path, limit: int = 1_000_000) -> dict:
    """Learn the shortlist (FREQUENT, PER_SOURCE) from `pairs` (text) and write it to `path`;
    what it holds."""
    src_size, tgt_size = tokenizer.src.get_piece_size(), tokenizer.tgt.get_piece_size()
    n, *counted = count_pairs(encoded_pairs(tokenizer, pairs, limit), src_size, tgt_size)
    always, table = shortlist(*counted, tgt_size, FREQUENT, PER_SOURCE)
    write_vmap(path, always, table, tokenizer.src.id_to_piece, tokenizer.tgt.id_to_piece)
    return {"pairs": n, "always": len(always), "sources": len(table), "per_source": PER_SOURCE}
