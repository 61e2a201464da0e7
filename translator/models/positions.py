"""Sinusoidal position tables (Vaswani et al. 2017, sec. 3.5), in the layouts models are
released in. Row p of a table is what the model adds at position p (p from 0):

    interleaved  sin at even dimensions, cos at odd ones, frequencies 1 / 10000^(2i/d) for
                 i < d/2 (the paper; translator's own)
    halves       sin in the first half of the dimensions, cos in the second, the same
                 frequencies (Marian, and transformers' MarianSinusoidalPositionalEmbedding)
    m2m100       sin in the first half, cos in the second, frequencies
                 exp(-i log(10000) / (d/2 - 1)), and position p at angle p + 2 (fairseq's
                 table, transformers' M2M100SinusoidalPositionalEmbedding: M2M100, NLLB)

fairseq numbers the positions of a sentence from padding_idx + 1 (2, with its <pad> at id
1) and gives padding the zero row at padding_idx. translator pads on the right, so the
tokens of every row stand at positions 0, 1, ... and the offset of 2 is the whole
difference; padding's own rows are never read (attention masks those keys, and losses
and searches ignore their outputs).
"""

from __future__ import annotations

import math

import torch

M2M100_OFFSET = 2  # fairseq's padding_idx + 1, with <pad> at id 1


def sinusoids(length: int, dim: int, layout: str = "interleaved") -> torch.Tensor:
    """The [length, dim] table of positions 0 .. length - 1."""
    if layout == "halves":
        return _halves(length, dim)
    if layout == "m2m100":
        return _fairseq(length + M2M100_OFFSET, dim)[M2M100_OFFSET:]
    pos = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    inv = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    pe = torch.zeros(length, dim)
    pe[:, 0::2] = torch.sin(pos * inv)
    pe[:, 1::2] = torch.cos(pos * inv)
    return pe


def _halves(length: int, dim: int) -> torch.Tensor:
    """Computed in float64 and rounded once, as transformers computes Marian's table (numpy),
    so an imported model sees the same float32 values."""
    pos = torch.arange(length, dtype=torch.float64).unsqueeze(1)
    angles = pos / torch.pow(10000.0, torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    sin, cos = torch.sin(angles), torch.cos(angles)
    half = (dim + 1) // 2
    return torch.cat([sin, cos[:, : dim - half]], 1).float()


def _fairseq(rows: int, dim: int) -> torch.Tensor:
    """fairseq's table of angles 0 .. rows - 1, in float32 step by step as fairseq and
    transformers compute it (so the values are theirs to the last bit); an odd `dim` ends
    in a zero column."""
    half = dim // 2
    step = math.log(10000.0) / max(half - 1, 1)
    freq = torch.exp(torch.arange(half, dtype=torch.float32) * -step)
    angles = torch.arange(rows, dtype=torch.float32).unsqueeze(1) * freq.unsqueeze(0)
    table = torch.cat([torch.sin(angles), torch.cos(angles)], 1)
    if dim % 2:
        table = torch.cat([table, torch.zeros(rows, 1)], 1)
    return table
