"""The training progress bar, whose total is the limit that will stop the run first.

Without a time budget that is train.max_steps. With one (train.max_minutes) the bar
counts toward the steps that the remaining budget leaves room for at the rate this
session has trained at so far, validation included, or train.max_steps when that is
fewer; so the bar's ETA is the time until the run stops, not until a step limit that
the budget will never let it reach.
"""

from __future__ import annotations

import math

from tqdm import tqdm

from translator.config import TrainConfig


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
    def __init__(self, tc: TrainConfig, step: int, elapsed: float, disable: bool):
        self.max_steps = tc.max_steps
        self.budget = tc.max_minutes * 60 if tc.max_minutes else math.inf
        self.start = (step, elapsed)
        self.bar = tqdm(
            total=steps_total(step, elapsed, self.start, self.budget, tc.max_steps),
            initial=step,
            desc="train",
            unit="step",
            dynamic_ncols=True,
            disable=disable,
        )

    def advance(self, step: int, elapsed: float) -> None:
        """One step done; `elapsed`: the run's wall-clock seconds after it."""
        total = steps_total(step, elapsed, self.start, self.budget, self.max_steps)
        if total is not None:
            self.bar.total = max(total, step)
        self.bar.update(1)

    def set_postfix(self, **values) -> None:
        self.bar.set_postfix(**values)

    def stopped(self, step: int) -> None:
        """The run stopped at `step` whatever the estimate said: the bar ends there."""
        self.bar.total = step
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
