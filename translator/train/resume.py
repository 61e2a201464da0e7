"""What --resume checks and restores beyond the weights: which config changes a run can
resume under, and the random state of every training process.

A change to a key that shapes the weights or the data order (the model, the tokenizer,
the data, `seed`, `train.batch_tokens`, `train.accumulate`, the optimizer's settings) or
to the number of processes would not continue the saved run, so it is refused with the
keys named. Keys that only steer the run from here on (limits, intervals, the schedule,
device and precision, decoding) may change; the changes are logged.
"""

from __future__ import annotations

import contextlib
import logging
import random

import torch

from translator.config import Config, config_from_dict
from translator.config.diff import config_changes, describe_changes
from translator.errors import UserError
from translator.models.checkpoint import Checkpoint
from translator.train.distributed import Group, all_gather

log = logging.getLogger(__name__)

# Key paths (a trailing dot: a whole section) that a run may change when it resumes.
RESUMABLE = (
    "run_dir",
    "decode.",
    "data.workers",
    "data.prepared_dir",
    "data.test",  # only eval reads the test split
    "data.test.",
    "data.test_split",
    "train.max_steps",
    "train.max_minutes",
    "train.patience",
    "train.valid_every",
    "train.save_every",
    "train.log_every",
    "train.valid_beam",
    "train.keep_checkpoints",
    "train.tensorboard",
    "train.lr",
    "train.warmup_steps",
    "train.warmup_share",
    "train.lr_schedule",
    "train.label_smoothing",
    "train.dropout_after_epochs",
    "train.clip_norm",
    "train.threads",
    "train.device",
    "train.dtype",
    "train.compile",
    "train.attention",
)


def resumable(key: str) -> bool:
    return any(key == p or (p.endswith(".") and key.startswith(p)) for p in RESUMABLE)


def check_resumable(ckpt: Checkpoint, cfg: Config, processes: int, where: str) -> None:
    """A one-line UserError unless `cfg`, run by `processes` processes, continues the run
    saved in `ckpt`; logs the changes that it allows."""
    if ckpt.progress is None or ckpt.optimizer is None or not ckpt.rng:
        raise UserError(
            f"cannot resume {where}: it holds no training state (optimizer and random state)",
            "resume from the last.pt that training wrote",
        )
    saved = config_from_dict(ckpt.config, f"{where} (saved config)")
    changes = config_changes(saved.to_dict(), cfg.to_dict())
    refused = {k: v for k, v in changes.items() if not resumable(k)}
    if refused:
        raise UserError(
            f"cannot resume {where}: config keys differ from the saved run: {describe_changes(refused)}",
            "set them as the saved run had them, or give a new run_dir to start a new run",
        )
    if ckpt.processes is not None and ckpt.processes != processes:
        raise UserError(
            f"cannot resume {where}: it was saved by {ckpt.processes} process(es) and this run "
            f"has {processes}, which changes every process's share of the data",
            f"start {ckpt.processes} process(es), or give a new run_dir to start a new run",
        )
    if changes:
        log.info(f"resuming with changed settings: {describe_changes(changes)}")


@contextlib.contextmanager
def saved_part(where: str, key: str):
    """Restoring `train_state.<key>` of last.pt: a value of another shape (an edited or
    foreign file) is a one-line error naming the key, not a traceback from torch."""
    try:
        yield
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RuntimeError) as err:
        first = (str(err).splitlines() or [""])[0][:120]
        raise UserError(
            f"cannot resume {where}: key 'train_state.{key}' is not what training saved "
            f"({type(err).__name__}: {first})",
            "resume from the last.pt that training wrote",
        ) from None


def check_optimizer_state(optimizer: torch.optim.Optimizer) -> None:
    """torch loads an optimizer state whose moments have other shapes than the weights and
    fails only at the first step; here it fails at once (a ValueError for saved_part)."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            for key, value in optimizer.state.get(p, {}).items():
                if isinstance(value, torch.Tensor) and value.dim() and value.shape != p.shape:
                    raise ValueError(
                        f"its {key} has shape {tuple(value.shape)} for a weight of {tuple(p.shape)}"
                    )


def restore_training(saved: Checkpoint, where: str, updater, ema, report, digest: str) -> None:
    """What last.pt holds beyond the weights, each part checked as it is restored; `digest`:
    the training data's now (TrainState.data_digest), which must be the saved run's."""
    optimizer, scaler = updater.optimizer, updater.scaler
    with saved_part(where, "optimizer"):
        optimizer.load_state_dict(saved.optimizer)
        check_optimizer_state(optimizer)
    with saved_part(where, "scaler"):
        if saved.scaler:
            scaler.load_state_dict(saved.scaler)
    with saved_part(where, "ema"):
        if ema:  # ema_decay cannot change on resume: a saved run with it saved its EMA
            ema.load_state_dict(saved.ema, where)
    with saved_part(where, "progress"):
        report.restore(saved.progress)
        updater.restore_window(report.state.log_window)
    if report.state.data_digest not in ("", digest):
        raise UserError(
            f"cannot resume {where}: the training data differs from the saved run's (a "
            "training file changed, or the cleaning or tokenizer that prepared it)",
            "train on the data the run began with, or give a new run_dir to start a new run",
        )


# -- random state ------------------------------------------------------------------------------
def capture_rng() -> dict:
    rng = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        rng["cuda"] = torch.cuda.get_rng_state_all()
    return rng


def gather_rng(group: Group) -> list[dict]:
    """Every process's random state in rank order (a collective under torchrun)."""
    return all_gather(capture_rng(), group)


def restore_rng(ckpt: Checkpoint, group: Group, where: str) -> None:
    """This process's own saved random state. A file that predates per-process state holds
    rank 0's alone: the other ranks then keep the state they were seeded with."""
    if group.rank >= len(ckpt.rng):
        return
    with saved_part(where, "rng"):
        rng = ckpt.rng[group.rank]
        torch.set_rng_state(rng["torch"])
        random.setstate(rng["python"])
        if torch.cuda.is_available() and rng.get("cuda"):
            torch.cuda.set_rng_state_all(rng["cuda"])
    if group.main and len(ckpt.rng) < group.world:
        log.warning(
            f"the checkpoint holds the random state of {len(ckpt.rng)} process(es) (written by "
            f"translator {ckpt.version}); the other processes start theirs from the seed"
        )
