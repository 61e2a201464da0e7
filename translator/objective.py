"""What training minimises and how fast: the loss, the learning-rate schedule."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from translator.models.base import Seq2Seq
from translator.specials import PAD


def sequence_loss(model: Seq2Seq, batch, smoothing: float) -> torch.Tensor:
    """Summed label-smoothed cross-entropy over the real target tokens."""
    logits = model(batch.src, batch.tgt_in)
    return F.cross_entropy(
        logits.float().view(-1, logits.size(-1)),
        batch.tgt_out.view(-1),
        ignore_index=PAD,
        label_smoothing=smoothing,
        reduction="sum",
    )


def inverse_sqrt_lr(step: int, lr: float, warmup: int) -> float:
    """Linear warmup to `lr`, then decay with 1/sqrt(step) (Vaswani et al. 2017, eq. 3)."""
    if warmup <= 0:
        return lr
    step = max(step, 1)
    return lr * min(step / warmup, math.sqrt(warmup / step))


def is_oom(err: BaseException) -> bool:
    """A CUDA or CPU allocator failure, as opposed to any other RuntimeError."""
    if isinstance(err, torch.OutOfMemoryError):
        return True
    text = str(err)
    return "out of memory" in text or "can't allocate memory" in text
