"""What training minimises and how fast: the loss, the learning-rate schedule."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from translator.config import SCHEDULES  # noqa: F401 (the names train.lr_schedule accepts)
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


def learning_rate(schedule: str, step: int, lr: float, warmup: int, planned_steps: float) -> float:
    """The learning rate at `step`: linear warmup to `lr` over `warmup` steps, then
    - inverse_sqrt: 1/sqrt(step) decay, which never ends (Vaswani et al. 2017);
    - linear or cosine: decay to zero at `planned_steps`, the run's expected length
      (train.max_steps, or the steps the wall-clock budget is expected to hold). Under a
      budget, annealing to its end is what short runs gain most from (Li et al. 2020,
      "Budgeted training")."""
    if schedule == "inverse_sqrt":
        return inverse_sqrt_lr(step, lr, warmup)
    step = max(step, 1)
    if step < warmup:
        return lr * step / warmup
    # 1 at warmup's end, falling to 1/(span + 1) at the planned last step (which still learns)
    span = max(planned_steps - warmup, 0.0)
    left = min(max((planned_steps + 1 - step) / (span + 1), 0.0), 1.0)
    if schedule == "linear":
        return lr * left
    return lr * 0.5 * (1.0 - math.cos(math.pi * left))


def planned_steps(step: int, elapsed: float, budget: float, max_steps: int) -> float:
    """The steps a run will make: max_steps, or fewer when the wall-clock budget (seconds)
    is expected to run out first at the pace so far (`step` steps in `elapsed` seconds,
    validation included)."""
    if step <= 0 or elapsed <= 0 or not math.isfinite(budget):
        return float(max_steps)
    return min(float(max_steps), step * budget / elapsed)


def is_oom(err: BaseException) -> bool:
    """A CUDA or CPU allocator failure, as opposed to any other RuntimeError."""
    if isinstance(err, torch.OutOfMemoryError):
        return True
    text = str(err)
    return "out of memory" in text or "can't allocate memory" in text
