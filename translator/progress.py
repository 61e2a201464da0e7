"""How long jobs show their progress: a tqdm bar on a terminal, plain log lines anywhere
else (a pipe, a log file, CI), where every redraw of a bar would be one more line.

`progress_bar` is the one place that rule lives; every long job asks it for its bar.
The training bar's total is the limit that will stop the run first: without a time budget
that is train.max_steps; with one (train.max_minutes) the steps that the remaining budget
leaves room for at the rate this session has trained at so far, validation included, or
train.max_steps when that is fewer; so the ETA is the time until the run stops, not until
a step limit that the budget will never let it reach.
"""

from __future__ import annotations

import io
import logging
import math
import sys
from collections.abc import Callable

from tqdm import tqdm

from translator.config import TrainConfig

log = logging.getLogger(__name__)

# Plain lines come by the clock rather than by the share done: sampling and preparing a
# corpus have no total, and a long job's log stays short (two lines a minute at most).
LINE_SECONDS = 30.0


def on_terminal() -> bool:
    """Whether stderr shows a bar that redraws itself in place (with carriage returns) as
    one line: only a terminal does."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def progress_bar(
    iterable=None,
    *,
    desc: str,
    unit: str,
    total: float | None = None,
    enabled: bool = True,
    lines: bool = True,
    **options,
) -> tqdm:
    """A progress display with tqdm's interface (iterate, update, close, `with`). On a
    terminal a tqdm bar on stderr; elsewhere a plain line through the `translator` logger
    every LINE_SECONDS and one when it closes, or (`lines=False`, for a caller that logs
    its own, such as training) none. `enabled=False`: nothing shown at all."""
    if enabled and on_terminal():
        return tqdm(
            iterable,
            desc=desc,
            unit=unit,
            total=total,
            file=sys.stderr,
            dynamic_ncols=True,
            **options,
        )
    if enabled and lines:
        return LogLines(iterable, desc=desc, unit=unit, total=total, **options)
    return tqdm(iterable, desc=desc, unit=unit, total=total, disable=True, **options)


class _Nowhere(io.TextIOBase):
    """The stream a LogLines bar draws to: its lines go through the logger instead."""

    def write(self, text: str) -> int:
        return len(text)


class LogLines(tqdm):
    """tqdm's counting and timing, shown as a plain log line (every LINE_SECONDS and when it
    closes) instead of a bar."""

    def __init__(self, *args, **kwargs):
        self.shown: float | None = None  # tqdm's constructor draws once: that is no news
        kwargs.update(file=_Nowhere(), mininterval=LINE_SECONDS, maxinterval=LINE_SECONDS)
        super().__init__(*args, miniters=1, smoothing=0, **kwargs)
        self.shown = self.n

    def display(self, msg=None, pos=None) -> bool:
        """Called by tqdm at most every LINE_SECONDS and on close: a line if the count moved."""
        if self.shown is not None and self.n != self.shown:
            self.shown = self.n
            log.info(self.line())
        return True

    def line(self) -> str:
        n, total, elapsed = self.n, self.total, self.format_dict["elapsed"]
        unit = self.unit.strip()
        done = f"{n:,.0f}/{total:,.0f} ({100 * n / total:.0f}%)" if total else f"{n:,.0f}"
        rate = (n - self.initial) / elapsed if elapsed > 0 else 0.0
        speed = f"{rate:,.0f}" if rate >= 100 else f"{rate:.1f}"
        parts = [done, f"{speed} {unit}/s", f"{tqdm.format_interval(elapsed)} elapsed"]
        if total and rate > 0 and n < total:
            parts.append(f"{tqdm.format_interval((total - n) / rate)} left")
        return f"{self.desc.removesuffix(': ')}: " + ", ".join(parts)


def steps_total(
    step: int, elapsed: float, start: tuple[int, float], budget: float, max_steps: int
) -> int | None:
    """The step the run will stop at: `step` and `elapsed` (seconds, across resumes) now,
    `start` the same at this session's first step, `budget` the wall-clock limit in seconds.
    None while no rate is measured yet."""
    if math.isinf(budget):
        return max_steps
    steps, seconds = step - start[0], elapsed - start[1]
    if steps <= 0 or seconds <= 0:
        return None
    reachable = step + int(max(0.0, budget - elapsed) * steps / seconds)
    return min(max_steps, reachable)


class TrainingBar:
    """The training bar, and the line `report` makes at each train.log_every steps: printed
    where there is no bar, else written to the run's log alone (`to_file`)."""

    def __init__(
        self,
        tc: TrainConfig,
        step: int,
        elapsed: float,
        enabled: bool,
        to_file: Callable[[str], None] = lambda line: None,
    ):
        self.max_steps, self.max_minutes = tc.max_steps, tc.max_minutes
        self.budget = tc.max_minutes * 60 if tc.max_minutes else math.inf
        self.start = (step, elapsed)
        self.total = steps_total(step, elapsed, self.start, self.budget, tc.max_steps)
        self.enabled, self.to_file, self.plain = enabled, to_file, not on_terminal()
        self.bar = progress_bar(
            desc="train", unit="step", total=self.total, initial=step, enabled=enabled, lines=False
        )

    def advance(self, step: int, elapsed: float) -> None:
        """One step done; `elapsed`: the run's wall-clock seconds after it."""
        total = steps_total(step, elapsed, self.start, self.budget, self.max_steps)
        if total is not None:
            self.total = self.bar.total = max(total, step)
        self.bar.update(1)

    def report(self, step: int, elapsed: float, loss: float, lr: float, rate: float) -> None:
        """Step `step` done after `elapsed` seconds (across resumes); `rate`: target tokens/s
        since the last report."""
        minutes = f"{elapsed / 60:.1f}" + (f"/{self.max_minutes:g}" if self.max_minutes else "")
        self.bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{rate:,.0f}", lr=f"{lr:.2e}", min=minutes)
        if not self.enabled:
            return
        line = f"step {step}" + (f"/{self.total}" if self.total else "")
        line += f": loss {loss:.3f}, lr {lr:.2e}, {rate:,.0f} target tokens/s, {minutes} min"
        steps, seconds = step - self.start[0], elapsed - self.start[1]
        if self.total and steps > 0 and seconds > 0:
            line += f", ETA {tqdm.format_interval(max(0, self.total - step) * seconds / steps)}"
        if self.plain:
            log.info(line)
        else:
            self.to_file(line)

    def stopped(self, step: int) -> None:
        """The run stopped at `step` whatever the estimate said: the bar ends there."""
        self.bar.total = step
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
