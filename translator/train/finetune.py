"""Fine-tuning: `translator train --init-from CKPT` starts a new run from a checkpoint's weights.

The new run keeps what the weights cannot do without: the model's shape and the
checkpoint's sentencepiece model (an embedding row means nothing under another vocabulary),
so the config's `tokenizer` keys are not used and its data is tokenized with the saved
model. Everything else comes from the new config: the data, the schedule, the limits. The
optimizer, the learning-rate schedule, the step count and the best dev BLEU start afresh.
"""

from __future__ import annotations

import logging
from pathlib import Path

from translator.config import Config, config_from_dict
from translator.config.diff import config_changes, describe_changes
from translator.data.tokenizer import Tokenizer
from translator.errors import UserError
from translator.models.checkpoint import Checkpoint

log = logging.getLogger(__name__)

# Model keys that may differ from the checkpoint's: they shape no weight.
FREE = ("model.dropout", "model.attention_dropout", "model.max_positions")


def initial_checkpoint(path: str | Path, cfg: Config) -> tuple[Checkpoint, Tokenizer]:
    """The checkpoint to start from and its tokenizer, checked against `cfg`; a one-line
    UserError when it is not a model checkpoint or its model differs from the config's."""
    try:
        ckpt = Checkpoint.load(path)
        tokenizer = ckpt.build_tokenizer(str(path))
        saved = config_from_dict(ckpt.config, f"{path} (saved config)")
    except UserError as err:
        raise UserError(f"--init-from: {err.message}", err.hint) from None
    changes = config_changes({"model": saved.model.to_dict()}, {"model": cfg.model.to_dict()})
    if "model.type" in changes:  # the other keys differ because the family does
        changes = {"model.type": changes["model.type"]}
    refused = {k: v for k, v in changes.items() if k not in FREE}
    if refused:
        raise UserError(
            f"--init-from {path}: model keys differ from the checkpoint's: {describe_changes(refused)}",
            "set them as the checkpoint has them; fine-tuning keeps the model's shape",
        )
    if saved.tokenizer != cfg.tokenizer:
        log.info(f"--init-from: the sentencepiece model of {path} is used; tokenizer.* unused")
    return ckpt, tokenizer
