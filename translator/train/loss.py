"""What training minimises: label-smoothed cross-entropy per target token."""

from __future__ import annotations

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
