"""What a run records about itself as it goes: the statistics its TrainState carries, the
best validation and early stopping, RUN/validations.jsonl, the TensorBoard scalars and
summary.json at the end."""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from translator.errors import UserError
from translator.fileio import atomic_write_bytes
from translator.memory import memory_mb, release_free_memory
from translator.train.run_dir import RunDir
from translator.train.state import Stop, StopKind, TrainState
from translator.train.tensorboard_log import TensorBoardLog
from translator.train.validation import Validation

log = logging.getLogger(__name__)

MAX_BAD_STEPS = 20  # consecutive non-finite losses before giving up


@dataclass(frozen=True)
class StepStats:
    """What the steps since the last read did: the mean loss and gradient norm (before
    clipping) of the good steps (NaN without one), the steps skipped for a non-finite loss,
    the longest run of those, and the target tokens of all ranks."""

    loss: float
    grad_norm: float
    skipped: int
    longest_bad_run: int
    tokens: int = 0
    # the mean alignment loss per target token (guided alignment), apart from `loss`
    alignment: float | None = None
    # the sums of the log line in progress, after the read (TrainState.log_window)
    window: tuple = ()


class EarlyStopping:
    """Which validation is the best so far, by dev BLEU (`best_by="bleu"`) or dev loss, and
    the stop once `patience` validations in a row found none better (0: never). The scores
    live in the TrainState, so that a checkpoint carries them across resumes."""

    def __init__(self, best_by: str, patience: int):
        self.by_loss, self.patience = best_by == "loss", patience

    def judge(self, state: TrainState, result: Validation) -> bool:
        """Record `result` in `state`; whether it is the new best."""
        if self.by_loss:
            improved = result.dev_loss < state.best_loss
        else:
            improved = result.dev_bleu > state.best_bleu
        if improved:
            state.best_bleu, state.best_loss = result.dev_bleu, result.dev_loss
            state.best_step, state.bad_validations = result.step, 0
        else:
            state.bad_validations += 1
        return improved

    def best(self, state: TrainState) -> str:
        return f"loss {state.best_loss:.3f}" if self.by_loss else f"{state.best_bleu:.2f}"

    def stop(self, state: TrainState) -> Stop | None:
        if self.patience and state.bad_validations >= self.patience:
            return Stop(
                StopKind.EARLY_STOPPING,
                f"early stopping: no better dev {'loss' if self.by_loss else 'BLEU'} "
                f"in {self.patience} validations",
            )
        return None


class ValidationLog:
    """RUN/validations.jsonl: one JSON object a line per validation, appended as it happens.
    `enabled`: this process writes it (rank 0)."""

    def __init__(self, path, enabled: bool):
        self.path, self.enabled = path, enabled

    def append(self, entry: dict) -> None:
        """Written in one call and flushed, so that a crash leaves at worst a torn last line,
        which a reader skips."""
        if not self.enabled:
            return
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def restart(self, history: list[dict]) -> None:
        """On resume: the file holds the validations that the resumed checkpoint knows, so
        the ones after it (which the run will make again) are dropped and a torn line goes."""
        if self.enabled:
            text = "".join(json.dumps(entry) + "\n" for entry in history)
            atomic_write_bytes(self.path, text.encode())


def keep_newer_best(state: TrainState, best: Path) -> None:
    """A run killed after a validation wrote best.pt but before the next last.pt resumes
    with a record older than best.pt: best.pt's own record is taken, so the resumed run
    replaces it only with weights that do better."""
    try:  # (mmap: the progress alone is read, not the weights)
        saved = torch.load(best, map_location="cpu", weights_only=True, mmap=True)
        newer = TrainState.saved(saved["train_state"]["progress"])
    except Exception:  # no best.pt, or none readable: the next best validation writes one
        return
    if newer.best_step <= state.best_step:
        return
    state.best_bleu, state.best_loss = newer.best_bleu, newer.best_loss
    state.best_step, state.bad_validations = newer.best_step, 0
    log.info(
        f"{best} holds the validation of step {newer.best_step}, after the step {state.step} "
        "that last.pt holds: only a better validation replaces it"
    )


class TrainingReport:
    """The run's statistics (in `state`, which checkpoints carry), its validations and where
    they are written. `main`: this process writes files (rank 0)."""

    def __init__(self, run_dir: RunDir, tc, main: bool):
        self.run_dir, self.main = run_dir, main
        self.state = TrainState()
        self.stopping = EarlyStopping(tc.best_by, tc.patience)
        self.validations = ValidationLog(run_dir.validations, main)
        self.board = TensorBoardLog(run_dir.tensorboard, tc.tensorboard and main)
        self.summary: dict = {}

    def restore(self, progress: dict) -> None:
        """Resuming: the saved progress, and validations.jsonl cut back to it."""
        self.state = TrainState.saved(progress)
        self.validations.restart(self.state.history)
        keep_newer_best(self.state, self.run_dir.best)

    def synced(self, stats: StepStats) -> None:
        """Counts read from the device: target tokens and skipped steps since the last read;
        a run whose losses stayed non-finite stops here."""
        s = self.state
        s.target_tokens, s.log_window = s.target_tokens + stats.tokens, list(stats.window)
        if stats.skipped:
            s.skipped_steps += stats.skipped
            log.warning(
                f"step {s.step}: {stats.skipped} step(s) skipped for a non-finite loss "
                f"({s.skipped_steps} so far)"
            )
        if stats.longest_bad_run >= MAX_BAD_STEPS:
            raise UserError(
                f"training diverged: {MAX_BAD_STEPS} non-finite losses in a row by step {s.step}",
                "lower train.lr or raise train.warmup_steps;"
                " last.pt and best.pt keep the last good weights",
            )

    def logged(self, stats: StepStats, lr: float, rate: float) -> None:
        """A log step: the training loss and the process's memory, kept for summary.json;
        `rate`: target tokens per second since the last log step."""
        s, loss = self.state, stats.loss
        s.losses.append([s.step, round(loss, 4) if math.isfinite(loss) else None])
        release_free_memory()
        mem = memory_mb()
        s.memory.append([s.step, mem.get("rss"), mem.get("anon")])
        scalars = {"loss": loss, "lr": lr, "grad_norm": stats.grad_norm, "tokens_per_s": rate}
        if stats.alignment is not None:
            scalars["alignment_loss"] = stats.alignment
            s.alignment_losses.append([s.step, round(stats.alignment, 4)])
        self.board.scalars(s.step, {f"train/{k}": v for k, v in scalars.items()})

    def validated(self, result: Validation, dev_pairs) -> bool:
        """Record a validation (rank 0): best so far, history, validations.jsonl, TensorBoard
        and the lines to print; whether it is the new best."""
        s = self.state
        improved = self.stopping.judge(s, result)
        s.history.append(result.entry(round((s.elapsed + result.seconds) / 60, 3)))
        self.validations.append(s.history[-1])
        scalars = {"dev/loss": result.dev_loss, "dev/bleu": result.dev_bleu}
        scalars.update({f"dev/bleu_{n}": d["dev_bleu"] for n, d in result.directions.items()})
        self.board.scalars(s.step, scalars)
        note = " new best" if improved else f", best {self.stopping.best(s)} at {s.best_step}"
        for line in result.report(note, dev_pairs):
            log.info(line)
        return improved

    def write_summary(self, stop: Stop, run: dict, startup_seconds: float) -> dict:
        """summary.json (`run`: what the run ran on, e.g. device and processes)."""
        self.summary = summary(self.state, stop, run, startup_seconds)
        if self.main:
            text = json.dumps(self.summary, indent=1) + "\n"
            atomic_write_bytes(self.run_dir.summary, text.encode())
        return self.summary

    def close(self) -> None:
        self.board.close()


def summary(s: TrainState, stop: Stop, run: dict, startup_seconds: float) -> dict:
    """How the run went, from its state and why it stopped."""
    best = next((v for v in s.history if v["step"] == s.best_step), {})
    by_direction = {n: round(d["dev_bleu"], 2) for n, d in best.get("directions", {}).items()}
    return {
        "stop_reason": stop.message,
        "steps": s.step,
        "epochs": s.epoch,
        "best_dev_bleu": round(s.best_bleu, 2),
        "best_dev_loss": round(s.best_loss, 4) if s.best_step else None,
        "best_step": s.best_step,
        **({"best_dev_bleu_by_direction": by_direction} if by_direction else {}),
        "target_tokens_per_second": round(s.target_tokens / max(s.train_seconds, 1e-9)),
        "train_minutes": round(s.train_seconds / 60, 2),
        "wall_minutes": round(s.elapsed / 60, 2),
        "skipped_steps": s.skipped_steps,
        **run,
        "validations": s.history,
        "losses": s.losses,
        **({"alignment_losses": s.alignment_losses} if s.alignment_losses else {}),
        "startup_seconds": round(startup_seconds, 2),
        "peak_rss_mb": memory_mb().get("peak"),
        "memory": s.memory,
    }
