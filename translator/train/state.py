"""What a training run knows about itself: the progress that checkpoints carry (and
resuming restores), why it stopped, the summary.json made of both, and the two files
that record a run while it goes (RUN/train.log, RUN/validations.jsonl)."""

from __future__ import annotations

import contextlib
import enum
import json
import logging
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from translator.errors import UserError
from translator.fileio import atomic_write_bytes
from translator.runtime import memory_mb
from translator.train.averaging import step_checkpoints
from translator.train.tensorboard_log import FOLDER as TENSORBOARD


@dataclass
class TrainState:
    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0  # next batch of `epoch` to train on
    best_bleu: float = -1.0  # dev BLEU and loss of the validation that best.pt holds
    best_loss: float = float("inf")
    best_step: int = 0
    bad_validations: int = 0
    elapsed: float = 0.0  # seconds of wall clock spent training so far, across resumes
    train_seconds: float = 0.0  # the same, without validation time
    target_tokens: int = 0
    skipped_steps: int = 0
    history: list = field(default_factory=list)  # validations
    losses: list = field(default_factory=list)  # [step, training loss] at each log_every
    memory: list = field(default_factory=list)  # [step, resident MiB, anonymous MiB] likewise
    # the run's expected length in steps, re-estimated at each log step under a time budget
    # (the linear and cosine schedules decay to zero there); 0 = train.max_steps
    planned_steps: float = 0.0


LOG = "train.log"
VALIDATIONS = "validations.jsonl"


def claim_run_dir(run_dir: Path, overwrite: bool, init_from, remove: bool) -> None:
    """A new run in a folder that holds an earlier run's checkpoints: refused, unless
    `overwrite`, which removes them (and the earlier run's step checkpoints, average, summary
    and TensorBoard logs) so that nothing of the two runs mixes; `remove`: this process
    deletes (rank 0 alone)."""
    found = [name for name in ("last.pt", "best.pt") if (run_dir / name).exists()]
    if not found:  # a log without a checkpoint belongs to no run that can go on
        if remove:
            for name in (LOG, VALIDATIONS):
                (run_dir / name).unlink(missing_ok=True)
        return
    if not overwrite:
        raise UserError(
            f"run_dir '{run_dir}' holds an earlier run ({', '.join(found)}): "
            "--resume continues it, --overwrite replaces it",
            "or give the new run its own folder: --set run_dir=...",
        )
    if init_from is not None and Path(init_from).resolve().parent == run_dir.resolve():
        raise UserError(
            f"--init-from {init_from} lies in run_dir '{run_dir}', which --overwrite would "
            "empty: give the new run its own folder (--set run_dir=...)"
        )
    if remove:
        earlier = [
            run_dir / name for name in (*found, "summary.json", "average.pt", LOG, VALIDATIONS)
        ]
        for path in [*earlier, *step_checkpoints(run_dir)]:
            path.unlink(missing_ok=True)
        shutil.rmtree(run_dir / TENSORBOARD, ignore_errors=True)  # its curves would mix in


class RunLog:
    """RUN/train.log: what the run prints (the `translator` logger's lines), appended across
    resumes, each line flushed as it comes; RUN/validations.jsonl: one JSON object a line per
    validation, appended as it happens. `enabled`: this process writes them (rank 0)."""

    def __init__(self, run_dir: Path, enabled: bool):
        self.path, self.validations = run_dir / LOG, run_dir / VALIDATIONS
        self.enabled = enabled
        self.handler: logging.Handler | None = None

    @contextlib.contextmanager
    def attached(self):
        """train.log receives the `translator` logger's lines inside the block, its INFO
        lines too where nothing asked for them (a library caller), so the file is whole; an
        exception that ends the block is written there too (a bug's with its traceback)."""
        if not self.enabled:
            yield
            return
        logger = logging.getLogger("translator")
        level = logger.level
        self.handler = logging.FileHandler(self.path, "a", encoding="utf-8")
        self.handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%d %H:%M:%S"))
        logger.addHandler(self.handler)
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)
        try:
            yield
        except UserError as err:
            self.note(f"error: {err}")
            raise
        except KeyboardInterrupt:
            self.note("interrupted")
            raise
        except BaseException:
            self.note("stopped by an unexpected error", exc_info=True)
            raise
        finally:
            logger.removeHandler(self.handler)
            logger.setLevel(level)
            self.handler.close()
            self.handler = None

    def note(self, line: str, exc_info: bool = False) -> None:
        """A line for train.log alone (on a terminal the progress bar shows it already)."""
        if self.handler is not None:
            error = sys.exc_info() if exc_info else None
            record = logging.LogRecord("translator", logging.INFO, "", 0, line, None, error)
            self.handler.handle(record)

    def validation(self, entry: dict) -> None:
        """Append one validation, written in one call and flushed, so that a crash leaves at
        worst a torn last line, which a reader skips."""
        if not self.enabled:
            return
        with open(self.validations, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def restart(self, history: list[dict]) -> None:
        """On resume: the file holds the validations that the resumed checkpoint knows, so
        the ones after it (which the run will make again) are dropped and a torn line goes."""
        if self.enabled:
            text = "".join(json.dumps(entry) + "\n" for entry in history)
            atomic_write_bytes(self.validations, text.encode())


class StopKind(enum.Enum):
    MAX_STEPS = "max_steps"
    TIME_BUDGET = "time_budget"
    EARLY_STOPPING = "early_stopping"
    INTERRUPTED = "interrupted"  # SIGINT or SIGTERM
    OTHER_RANK = "other_rank"  # another process under torchrun had a reason


@dataclass(frozen=True)
class Stop:
    kind: StopKind
    message: str  # for people: summary.json's stop_reason


def summary(s: TrainState, stop: Stop, run: dict, startup_seconds: float) -> dict:
    """summary.json: how the run went (`run`: what it ran on, e.g. device and processes)."""
    return {
        "stop_reason": stop.message,
        "steps": s.step,
        "epochs": s.epoch,
        "best_dev_bleu": round(s.best_bleu, 2),
        "best_dev_loss": round(s.best_loss, 4) if s.best_step else None,
        "best_step": s.best_step,
        "target_tokens_per_second": round(s.target_tokens / max(s.train_seconds, 1e-9)),
        "train_minutes": round(s.train_seconds / 60, 2),
        "wall_minutes": round(s.elapsed / 60, 2),
        "skipped_steps": s.skipped_steps,
        **run,
        "validations": s.history,
        "losses": s.losses,
        "startup_seconds": round(startup_seconds, 2),
        "peak_rss_mb": memory_mb().get("peak"),
        "memory": s.memory,
    }
