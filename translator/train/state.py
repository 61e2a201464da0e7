"""What a training run knows about itself: the progress that checkpoints carry (and
resuming restores), why it stopped, and RUN/train.log, what the run prints."""

from __future__ import annotations

import contextlib
import enum
import io
import logging
import sys
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

from translator.errors import UserError
from translator.fileio import atomic_write_bytes

FIELD_TYPES = {float: (int, float)}  # a float field may hold a whole number


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
    # [step, alignment loss per target token] likewise, with train.guided_alignment
    alignment_losses: list = field(default_factory=list)
    memory: list = field(default_factory=list)  # [step, resident MiB, anonymous MiB] likewise
    # the run's expected length in steps, re-estimated at each log step under a time budget
    # (the linear and cosine schedules decay to zero there); 0 = train.max_steps
    planned_steps: float = 0.0
    # what training reads from the prepared data (data/prepared.py training_digest); a run
    # resumes only on the same ("": saved before it was recorded)
    data_digest: str = ""
    # the sums of the log line in progress at the last sync (StepStats.window), for resuming
    log_window: list = field(default_factory=list)

    @classmethod
    def saved(cls, progress) -> TrainState:
        """The state a checkpoint holds, each field of the type this class gives it (a
        TypeError naming the first that is not: the file was edited or is not ours)."""
        if not isinstance(progress, dict):
            raise TypeError(f"a table is expected, got {type(progress).__name__}")
        state = cls(**progress)
        for f in fields(cls):
            kind = list if f.default is MISSING else type(f.default)
            value = getattr(state, f.name)
            if isinstance(value, bool) or not isinstance(value, FIELD_TYPES.get(kind, kind)):
                raise TypeError(f"{f.name} is {type(value).__name__}, not {kind.__name__}")
        return state


class RunLog:
    """RUN/train.log: what the run prints (the `translator` logger's lines), appended across
    resumes, each line flushed as it comes. `enabled`: this process writes it (rank 0).
    `fresh`: a new run. Where the folder has a log already (an earlier run's, which this
    run replaces once it has started), its start-up lines are held in memory until
    `restart` makes them the log, so that a start that fails or is interrupted leaves that
    log as it was."""

    def __init__(self, path: Path, enabled: bool, fresh: bool = False):
        self.path, self.enabled, self.held = path, enabled, fresh
        self.handler: logging.StreamHandler | None = None

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
        self.held = self.held and self.path.is_file()
        stream = io.StringIO() if self.held else open(self.path, "a", encoding="utf-8")
        self.handler = logging.StreamHandler(stream)
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
            self.handler.stream.close()
            self.handler = None

    def restart(self) -> None:
        """A new run has started: its lines so far become train.log, written whole (an
        earlier run's lines go), and the lines to come are appended."""
        if self.handler is None or not self.held:
            return
        mine = self.handler.stream.getvalue()
        atomic_write_bytes(self.path, mine.encode("utf-8"))
        self.held = False
        self.handler.setStream(open(self.path, "a", encoding="utf-8")).close()

    def note(self, line: str, exc_info: bool = False) -> None:
        """A line for train.log alone (on a terminal the progress bar shows it already)."""
        if self.handler is not None:
            error = sys.exc_info() if exc_info else None
            record = logging.LogRecord("translator", logging.INFO, "", 0, line, None, error)
            self.handler.handle(record)


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
