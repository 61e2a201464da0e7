"""A training run's folder: the name of every file in it, and whether a new run may claim it.

RUN/
  last.pt             what resuming needs (optimizer, random states, moving average)
  best.pt             the weights of the best validation, for translating
  step-NNNNNN.pt      weights kept for `translator average` (train.keep_checkpoints)
  average.pt          what `translator average` writes by default
  config.yaml         the resolved config the run trains with
  summary.json        how the run went, written when it stops
  train.log           what the run prints, appended across resumes
  validations.jsonl   one JSON object a line per validation
  tensorboard/        the scalars for TensorBoard (train.tensorboard)
"""

from __future__ import annotations

import contextlib
import os
import re
import weakref
from pathlib import Path

from translator.errors import UserError
from translator.fileio import Busy, locked
from translator.fileio.outputs import claim_folder, record
from translator.fileio.recognise import RUN_NAMES, STEP_NAME, earlier_run

# fileio.atomic_open's temporary file of NAME: what a run killed while writing NAME leaves
TEMPORARY = re.compile(r"\.(.+)\.[^.]+\.tmp")


def _translator_checkpoint(path: Path) -> bool:
    """Whether `path` is a checkpoint translator wrote (only its header is read)."""
    import torch

    from translator.models.checkpoint import FORMAT

    if not path.is_file():
        return False
    try:
        found = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception:  # noqa: BLE001 (any file at all may be there)
        return False
    return isinstance(found, dict) and found.get("format") == FORMAT


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock: weakref.finalize | None = None

    def __str__(self) -> str:
        return str(self.path)

    @property
    def last(self) -> Path:
        return self.path / "last.pt"

    @property
    def best(self) -> Path:
        return self.path / "best.pt"

    @property
    def average(self) -> Path:
        return self.path / "average.pt"

    @property
    def config(self) -> Path:
        return self.path / "config.yaml"

    @property
    def summary(self) -> Path:
        return self.path / "summary.json"

    @property
    def log(self) -> Path:
        return self.path / "train.log"

    @property
    def validations(self) -> Path:
        return self.path / "validations.jsonl"

    @property
    def tensorboard(self) -> Path:
        return self.path / "tensorboard"

    # -- step checkpoints ----------------------------------------------------------------------
    def step_checkpoint(self, step: int) -> Path:
        return self.path / f"step-{step:06d}.pt"

    def step_checkpoints(self) -> list[Path]:
        """The run's step-numbered checkpoints, oldest first."""
        found = [(STEP_NAME.fullmatch(p.name), p) for p in self.path.glob("step-*.pt")]
        return [p for m, p in sorted((int(m[1]), p) for m, p in found if m)]

    def prune_step_checkpoints(self, keep: int, step: int) -> None:
        """Keep the `keep` newest step checkpoints up to `step` (called after the one of `step`
        is written whole); later-numbered ones belong to an earlier run in the same folder that
        this one is overwriting, as it overwrites its last.pt and best.pt. A file of the
        user's under such a name is no checkpoint of translator's, and stays."""
        paths = self.step_checkpoints()
        current = [p for p in paths if int(STEP_NAME.fullmatch(p.name)[1]) <= step]
        for path in set(paths) - set(current[-keep:]):
            if _translator_checkpoint(path):
                path.unlink(missing_ok=True)

    # -- claiming ------------------------------------------------------------------------------
    def create(self, hold: bool = True) -> None:
        """Make the folder, or check that it is a run's (or empty): a folder of the user's
        is refused, so that nothing a run writes replaces a file of theirs. `hold`: lock it
        for this run until `release` (a second run into it is refused: the two would mix
        or delete each other's files)."""
        claim_folder(self.path, "run_dir", earlier_run, "train")
        if hold:
            self._hold()
            self._drop_leftovers()
        record(self.path, RUN_NAMES, "train")

    def _drop_leftovers(self) -> None:
        """The temporary files of checkpoints a killed run was writing: the folder is this
        run's now (locked), so no writer of theirs is left."""
        for path in self.path.iterdir():
            found = TEMPORARY.fullmatch(path.name)
            name = found[1] if found else ""
            if (name in RUN_NAMES or STEP_NAME.fullmatch(name)) and path.is_file():
                path.unlink(missing_ok=True)

    def _hold(self) -> None:
        try:  # a lock on the folder itself: no file to leave
            fd = locked(self.path)
        except Busy:
            raise UserError(
                f"run_dir '{self}' is in use by another training run",
                "wait for it to stop, or give this run its own folder: --set run_dir=...",
            ) from None
        if fd is not None:
            self._lock = weakref.finalize(self, os.close, fd)  # (released when the run is gone)

    def release(self) -> None:
        """Unlock the folder (`create(hold=True)`)."""
        if self._lock is not None:
            self._lock()

    def claim(self, overwrite: bool, init_from: str | Path | None) -> None:
        """A new run in a folder that holds an earlier run's checkpoints: refused, unless
        `overwrite`; the earlier run's files go once the new run has started (`clear`)."""
        found = [path for path in (self.last, self.best) if path.exists()]
        if not found:
            return
        if not overwrite:
            raise UserError(
                f"run_dir '{self}' holds an earlier run ({', '.join(p.name for p in found)}): "
                "--resume continues it, --overwrite replaces it",
                "or give the new run its own folder: --set run_dir=...",
            )
        if init_from is not None and Path(init_from).resolve().parent == self.path.resolve():
            raise UserError(
                f"--init-from {init_from} lies in run_dir '{self}', which --overwrite would "
                "empty: give the new run its own folder (--set run_dir=...)"
            )

    def clear(self) -> None:
        """Remove an earlier run's files, so that nothing of two runs mixes: called by a new
        run once its config, data and model are ready, so that a mistake in them leaves the
        earlier run whole. Its checkpoints, step checkpoints and average (translator's
        only: a file of the user's under such a name stays), summary, validations and
        TensorBoard curves; its log lines are RunLog.restart's to drop."""
        self.validations.unlink(missing_ok=True)  # (a log without a checkpoint's too)
        found = [path for path in (self.last, self.best) if path.exists()]
        if not found:
            return
        for path in [*found, self.summary]:
            path.unlink(missing_ok=True)
        for path in [self.average, *self.step_checkpoints()]:
            if _translator_checkpoint(path):
                path.unlink()
        if self.tensorboard.is_dir():  # its curves would mix in
            for path in self.tensorboard.glob("events.out.tfevents.*"):
                path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                self.tensorboard.rmdir()  # (unless something else is in it)

    def resumable(self) -> Path:
        """last.pt, which `--resume` continues from."""
        if not self.last.is_file():
            raise UserError(
                f"--resume: no {self.last} to resume from", "train without --resume first"
            )
        return self.last


def summary_file(path: Path) -> Path:
    """The summary of a run folder, or `path` itself where it names a summary file."""
    return RunDir(path).summary if path.is_dir() else path
