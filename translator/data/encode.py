"""Cleaning and tokenizing chunks of training pairs, in worker processes.

Kept free of torch so that worker processes start in a fraction of a second.
A chunk comes back as flat numpy arrays, never as lists of lists.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import chain

import numpy as np

from translator.data.clean import clean_pair
from translator.data.tokenizer import load_processor


def flatten(seqs: list[list[int]], dtype=np.int32) -> tuple[np.ndarray, np.ndarray]:
    """Sequences as one flat array and n+1 offsets (row i is flat[off[i]:off[i+1]])."""
    lengths = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.fromiter(chain.from_iterable(seqs), dtype=dtype, count=int(offsets[-1]))
    return flat, offsets


@dataclass
class Rules:
    max_words: int
    max_len_ratio: float | None
    dedupe: bool
    dtype: str  # of the token arrays


@dataclass
class Chunk:
    src: np.ndarray
    src_lengths: np.ndarray
    tgt: np.ndarray
    tgt_lengths: np.ndarray
    hashes: np.ndarray | None  # of each kept pair's text, for dedupe
    read: int
    dropped: dict[str, int]


_worker: dict = {}


def init_worker(
    src_model: bytes, tgt_model: bytes | None, rules: Rules, vocab: dict | None = None
) -> None:
    """`vocab`: an imported model's piece tables (data/vocab.py), whose ids the arrays hold."""
    src = load_processor(src_model)  # tags input-only: a tag's spelling in the text is text
    tgt = src if tgt_model is None else load_processor(tgt_model)
    if vocab is not None:
        from translator.data.vocab import table_processors

        src, tgt = table_processors(src, tgt, vocab)
    _worker.update(src=src, tgt=tgt, rules=rules)


def pair_hash(src: str, tgt: str) -> int:
    digest = hashlib.blake2b(f"{len(src)}:{src}{tgt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def encode_chunk(pairs: list[tuple[str, str]]) -> Chunk:
    """Clean a chunk with the rules, then source ids + <eos> and <bos> + target ids + <eos>."""
    rules: Rules = _worker["rules"]
    dropped = {"empty": 0, "too_long": 0, "ratio": 0}
    src_text, tgt_text = [], []
    for s, t in pairs:
        kept = clean_pair(s, t, rules.max_words)
        if isinstance(kept, str):
            dropped[kept] += 1
        else:
            src_text.append(kept[0])
            tgt_text.append(kept[1])
    src_ids = _worker["src"].encode(src_text, out_type=int, add_eos=True)
    tgt_ids = _worker["tgt"].encode(tgt_text, out_type=int, add_bos=True, add_eos=True)
    if rules.max_len_ratio is not None:
        keep = [
            i
            for i, (s, t) in enumerate(zip(src_ids, tgt_ids))
            # the subword lengths without the frame
            if max(len(s) - 1, len(t) - 2)
            <= rules.max_len_ratio * max(1, min(len(s) - 1, len(t) - 2))
        ]
        dropped["ratio"] = len(src_ids) - len(keep)
        if dropped["ratio"]:
            src_ids = [src_ids[i] for i in keep]
            tgt_ids = [tgt_ids[i] for i in keep]
            src_text = [src_text[i] for i in keep]
            tgt_text = [tgt_text[i] for i in keep]
    hashes = None
    if rules.dedupe:
        hashes = np.fromiter(
            (pair_hash(s, t) for s, t in zip(src_text, tgt_text)), np.int64, len(src_text)
        )
    src, src_off = flatten(src_ids, rules.dtype)
    tgt, tgt_off = flatten(tgt_ids, rules.dtype)
    return Chunk(src, np.diff(src_off), tgt, np.diff(tgt_off), hashes, len(pairs), dropped)
