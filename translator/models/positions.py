"""Sinusoidal position tables (Vaswani et al. 2017, sec. 3.5), in the two layouts models are
released in. Both use the frequencies 1 / 10000^(2i/d) for i < d/2 and positions from 0:

    interleaved  sin at even dimensions, cos at odd ones (the paper; translator's own)
    halves       sin in the first half of the dimensions, cos in the second (Marian, and
                 transformers' MarianSinusoidalPositionalEmbedding)
"""

from __future__ import annotations

import math

import torch


def sinusoids(length: int, dim: int, layout: str = "interleaved") -> torch.Tensor:
    """The [length, dim] table of positions 0 .. length - 1."""
    if layout == "halves":
        return _halves(length, dim)
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
