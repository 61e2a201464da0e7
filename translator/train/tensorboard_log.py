"""Training scalars for TensorBoard (`train.tensorboard: true`): RUN/tensorboard/ gets
train/loss, train/lr, train/grad_norm and train/tokens_per_s at every log step and dev/loss
and dev/bleu at every validation, from the first process alone. tensorboard is an optional
dependency (the `tensorboard` extra)."""

from __future__ import annotations

import math
from pathlib import Path

from translator.errors import optional_import


def check_installed() -> None:
    """A one-line UserError naming the extra when tensorboard is missing (before training)."""
    optional_import("tensorboard", "tensorboard", "TensorBoard logs (train.tensorboard)")
    optional_import("torch.utils.tensorboard", "tensorboard", "TensorBoard logs")


class TensorBoardLog:
    """A no-op unless `enabled`: every process may call it, only the first writes, between
    open() and close()."""

    def __init__(self, folder: Path, enabled: bool):
        self.folder, self.enabled = folder, enabled
        self.writer = None

    def open(self) -> None:
        if self.enabled and self.writer is None:
            board = optional_import("torch.utils.tensorboard", "tensorboard", "TensorBoard logs")
            self.writer = board.SummaryWriter(str(self.folder))

    def scalars(self, step: int, values: dict[str, float]) -> None:
        if self.writer is None:
            return
        for tag, value in values.items():
            if value is not None and math.isfinite(value):
                self.writer.add_scalar(tag, value, step)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
