"""What training minimises: label-smoothed cross-entropy per target token, plus, with guided
alignment, a cross-entropy of the alignment head's attention against word alignments."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from translator.models.base import Seq2Seq
from translator.specials import PAD

# The smallest attention weight the alignment loss takes the log of: a target link to a
# weight of 0 (a masked or saturated position) costs about 18, not infinity.
TINY = 1e-8


def token_loss(logits: torch.Tensor, tgt_out: torch.Tensor, smoothing: float) -> torch.Tensor:
    return F.cross_entropy(
        logits.float().view(-1, logits.size(-1)),
        tgt_out.view(-1),
        ignore_index=PAD,
        label_smoothing=smoothing,
        reduction="sum",
    )


def sequence_loss(model: Seq2Seq, batch, smoothing: float, loss=token_loss) -> torch.Tensor:
    """Summed label-smoothed cross-entropy over the real target tokens (`loss`: token_loss
    or its compiled form)."""
    return loss(model(batch.src, batch.tgt_in), batch.tgt_out, smoothing)


def alignment_loss(weights: torch.Tensor, align: torch.Tensor) -> torch.Tensor:
    """Summed over the target positions with a link: the cross-entropy between the row of
    `align` [B, T, S] made a distribution (its links alike) and the attention `weights`."""
    target = align.float()
    target = target / target.sum(-1, keepdim=True).clamp_min(1.0)
    return -(target * weights.float().clamp_min(TINY).log()).sum()


def training_loss(
    net, batch, smoothing: float, guided: float, loss=token_loss
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(the summed token cross-entropy, the summed alignment loss or None): the alignment
    loss where `guided` > 0 and the batch carries alignments (Batch.align); the gradient
    follows token loss + guided * alignment loss."""
    if guided <= 0 or batch.align is None:
        return sequence_loss(net, batch, smoothing, loss), None
    logits, weights = net(batch.src, batch.tgt_in, alignment=True)
    return loss(logits, batch.tgt_out, smoothing), alignment_loss(weights, batch.align)
