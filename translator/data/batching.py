"""Length-bucketed token batches, padded tensors.

A batch costs `rows * longest side` tokens (padding included), the quantity
memory and compute scale with, and stays within `batch_tokens`. Each epoch's
order is a pure function of (seed, epoch), so a resumed run can skip to the
exact batch it stopped at.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import torch

from translator.data.tokenizer import PAD
from translator.runtime import to_device


@dataclass
class Batch:
    src: torch.Tensor  # [B, S] source ids, PAD-padded
    tgt_in: torch.Tensor  # [B, T] <bos> y1 .. yn
    tgt_out: torch.Tensor  # [B, T] y1 .. yn <eos>
    n_tokens: int  # real target tokens (the loss normaliser)

    def split(self, pieces: int) -> list[Batch]:
        """The rows in `pieces` smaller batches (for retrying after running out of memory)."""
        if pieces <= 1 or self.src.size(0) < 2:
            return [self]
        out = []
        for src, tgt_in, tgt_out in zip(
            self.src.tensor_split(pieces),
            self.tgt_in.tensor_split(pieces),
            self.tgt_out.tensor_split(pieces),
        ):
            if src.size(0):
                out.append(Batch(src, tgt_in, tgt_out, int((tgt_out != PAD).sum())))
        return out

    def to(self, device: torch.device) -> Batch:
        return Batch(
            to_device(self.src, device),
            to_device(self.tgt_in, device),
            to_device(self.tgt_out, device),
            self.n_tokens,
        )


def pad_ids(seqs: list[list[int]], pad: int = PAD) -> torch.Tensor:
    width = max((len(s) for s in seqs), default=0)
    out = np.full((len(seqs), max(width, 1)), pad, dtype=np.int64)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return torch.from_numpy(out)


class TokenBatches:
    """Epochs of length-bucketed batches over pre-tokenized pairs."""

    def __init__(
        self,
        src: list[list[int]],
        tgt: list[list[int]],
        batch_tokens: int,
        seed: int,
        pool_batches: int = 64,
    ):
        assert len(src) == len(tgt)
        self.src, self.tgt = src, tgt
        self.batch_tokens = batch_tokens
        self.seed = seed
        self.pool_batches = pool_batches
        # The decoder sees tgt_in/tgt_out, one shorter than the framed target.
        self.lengths = np.array([max(len(s), len(t) - 1) for s, t in zip(src, tgt)])

    def epoch(self, epoch: int) -> list[list[int]]:
        """The list of batches (lists of pair indices) for one epoch."""
        rng = random.Random(self.seed * 1_000_003 + epoch)
        order = list(range(len(self.src)))
        rng.shuffle(order)
        # Sort within pools of a few dozen batches' worth: low padding, but
        # batches still differ from epoch to epoch.
        pool = max(1, self.pool_batches * self.batch_tokens // max(1, int(self.lengths.mean())))
        batches: list[list[int]] = []
        for start in range(0, len(order), pool):
            chunk = sorted(order[start : start + pool], key=lambda i: self.lengths[i])
            batch: list[int] = []
            longest = 0
            for i in chunk:
                n = int(self.lengths[i])
                if batch and max(longest, n) * (len(batch) + 1) > self.batch_tokens:
                    batches.append(batch)
                    batch, longest = [], 0
                batch.append(i)
                longest = max(longest, n)
            if batch:
                batches.append(batch)
        rng.shuffle(batches)
        return batches

    def collate(self, indices: list[int]) -> Batch:
        tgt = [self.tgt[i] for i in indices]
        return Batch(
            src=pad_ids([self.src[i] for i in indices]),
            tgt_in=pad_ids([t[:-1] for t in tgt]),
            tgt_out=pad_ids([t[1:] for t in tgt]),
            n_tokens=sum(len(t) - 1 for t in tgt),
        )

    def padding_share(self, batches: list[list[int]]) -> float:
        """Fraction of padded source+target cells that are padding."""
        real = padded = 0
        for b in batches:
            s = [len(self.src[i]) for i in b]
            t = [len(self.tgt[i]) - 1 for i in b]
            real += sum(s) + sum(t)
            padded += len(b) * (max(s) + max(t))
        return 1.0 - real / max(1, padded)
