"""Fine-tuning: `translator train --init-from CKPT` starts a new run from a checkpoint's weights.

The new run keeps what the weights cannot do without: the model's shape and the
checkpoint's sentencepiece model and an imported model's piece tables (an embedding row
means nothing under another vocabulary), so the config's `tokenizer` keys are not used and
its data is tokenized with the saved model. A config whose `model` section sets nothing
but the FREE keys and keys of the checkpoint's own values takes the checkpoint's model
section, so that fine-tuning an
imported model needs a config of data and training settings alone. So do the decoding
settings (a release's beam and length normalisation): the checkpoint's, but for the keys
the config sets. Everything else comes from the new config: the data, the schedule, the
limits. The optimizer, the learning-rate
schedule, the step count and the best dev BLEU start afresh.
"""

from __future__ import annotations

import logging
from pathlib import Path

from translator.config import Config, config_from_dict
from translator.config.diff import config_changes, describe_changes
from translator.config.languages import directions, spelled
from translator.data.tokenizer import Tokenizer
from translator.errors import UserError
from translator.models.checkpoint import Checkpoint

log = logging.getLogger(__name__)

# Model keys that may differ from the checkpoint's: they shape no weight.
FREE = ("model.dropout", "model.attention_dropout", "model.max_positions")


def set_keys(section) -> dict:
    """The keys a config section was given (in its file or by --set), whatever their value:
    a key written with its default value is still the config's word."""
    return {k: getattr(section, k) for k in section.model_fields_set}


def adopt_model(cfg: Config, saved) -> Config:
    """`cfg` with the model section of the saved config `saved` (a checkpoint's, already
    valid; anything else leaves cfg as it is) where cfg's own sets nothing but FREE keys
    and keys of the checkpoint's values; the FREE keys it sets are kept."""
    if not isinstance(saved, dict):
        return cfg
    try:
        model = config_from_dict({"model": saved.get("model")}).model
    except UserError:  # a saved config that is not valid: its use says so, naming the file
        return cfg
    named = set_keys(cfg.model)
    if any(f"model.{k}" not in FREE and getattr(model, k, None) != v for k, v in named.items()):
        return cfg  # (initial_checkpoint and check_resumable name the keys that differ)
    return cfg.replace(model=model.replace(**{k: named[k] for k in named if f"model.{k}" in FREE}))


def adopt_decoding(cfg: Config, saved: Config, option: str = "--init-from") -> Config:
    """`cfg` with the saved config's decoding settings, but for those cfg sets."""
    decode = saved.decode.replace(**set_keys(cfg.decode))
    changes = config_changes({"decode": cfg.decode.to_dict()}, {"decode": decode.to_dict()})
    if changes:
        log.info(f"{option}: decoding as the checkpoint does: {describe_changes(changes)}")
    return cfg.replace(decode=decode)


def resumed_config(cfg: Config, saved: dict) -> Config:
    """`cfg` for resuming the run whose checkpoint holds config `saved`: its model where cfg
    names none (adopt_model) and its decoding settings but for those cfg sets, so a
    fine-tuned run keeps what --init-from took from the checkpoint it started from."""
    cfg = adopt_model(cfg, saved)
    if not isinstance(saved, dict):
        return cfg
    try:
        return adopt_decoding(cfg, config_from_dict(saved), "--resume")
    except UserError:  # (check_resumable names the file)
        return cfg


def initial_checkpoint(path: str | Path, cfg: Config) -> tuple[Checkpoint, Tokenizer, Config]:
    """The checkpoint to start from, its tokenizer and `cfg` with the checkpoint's model
    where cfg names none; a one-line UserError when it is not a model checkpoint or its
    model differs from the config's."""
    try:
        ckpt = Checkpoint.load(path)
        tokenizer = ckpt.build_tokenizer(str(path))
        saved = config_from_dict(ckpt.config, f"{path} (saved config)")
    except UserError as err:
        raise UserError(f"--init-from: {err.message}", err.hint) from None
    if (ckpt.source or {}).get("languages"):
        raise UserError(
            f"--init-from {path}: a model of language codes (NLLB, M2M100, OPUS-MT's >>xx<<) "
            "does not fine-tune here: its training pairs would need the codes decoding adds",
            "fine-tune it with transformers, or start from a model of one language pair",
        )
    cfg = adopt_model(cfg, saved.to_dict())
    cfg = adopt_decoding(cfg, saved)
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
    new = [pair for pair in directions(cfg.data) if pair not in directions(saved.data)]
    if new:  # (a warm start from another direction can be meant; swapped files rarely are)
        log.warning(
            f"--init-from: {path} was trained on {spelled(directions(saved.data))}; this run "
            f"trains {spelled(new)}, which it was not: check data.src_lang and data.tgt_lang"
        )
    return ckpt, tokenizer, cfg
