"""How fast training moves: the learning-rate schedules and the steps a budget holds."""

from __future__ import annotations

import math

from translator.config import TrainConfig


def inverse_sqrt_lr(step: int, lr: float, warmup: int) -> float:
    """Linear warmup to `lr`, then decay with 1/sqrt(step) (Vaswani et al. 2017, eq. 3)."""
    if warmup <= 0:
        return lr
    step = max(step, 1)
    return lr * min(step / warmup, math.sqrt(warmup / step))


def learning_rate(
    schedule: str,
    step: int,
    lr: float,
    warmup: float,
    planned_steps: float,
    previous: float | None = None,
) -> float:
    """The learning rate at `step`: linear warmup to `lr` over `warmup` steps, then
    - inverse_sqrt: 1/sqrt(step) decay, which never ends (Vaswani et al. 2017);
    - linear or cosine: decay to zero at `planned_steps`, the run's expected length
      (train.max_steps, or the steps the wall-clock budget is expected to hold). Under a
      budget, annealing to its end is what short runs gain most from (Li et al. 2020,
      "Budgeted training").
    With `previous`, the rate of step - 1, the warmup goes from it the rest of the way to
    `lr` in the warmup's steps left: the same line while `warmup` stays, a bend where it
    moves, never a jump."""
    if schedule == "inverse_sqrt":
        return inverse_sqrt_lr(step, lr, warmup)
    step = max(step, 1)
    if step < warmup:
        if previous is None:
            return lr * step / warmup
        return previous + (lr - previous) / (warmup - step + 1)
    # 1 at warmup's end, falling to 1/(span + 1) at the planned last step (which still learns)
    span = max(planned_steps - warmup, 0.0)
    left = min(max((planned_steps + 1 - step) / (span + 1), 0.0), 1.0)
    if schedule == "linear":
        return lr * left
    return lr * 0.5 * (1.0 - math.cos(math.pi * left))


def scheduled_lr(tc: TrainConfig, step: int, plan: float, previous: float) -> float:
    """The learning rate of optimizer step `step` (from 1) under the train section `tc`;
    `plan`: the run's planned length so far (0: none, max_steps stands in), `previous`: the
    rate of the step before."""
    planned = plan or tc.max_steps
    share = tc.warmup_share
    if share is None or tc.lr_schedule == "inverse_sqrt":
        return learning_rate(tc.lr_schedule, step, tc.lr, tc.warmup_steps, planned)
    # Before a time budget's first plan (the first log_every steps) warmup_steps sets the ramp;
    # each plan then bends it from the last step's rate toward the peak at share * plan.
    warmup = tc.warmup_steps if tc.max_minutes and not plan and share else share * planned
    return learning_rate(
        tc.lr_schedule, step, tc.lr, warmup, planned, previous if step > 1 else 0.0
    )


def planned_steps(step: int, elapsed: float, budget: float, max_steps: int) -> float:
    """The steps a run will make: max_steps, or fewer when the wall-clock budget (seconds)
    is expected to run out first at the pace so far (`step` steps in `elapsed` seconds,
    validation included)."""
    if step <= 0 or elapsed <= 0 or not math.isfinite(budget):
        return float(max_steps)
    return min(float(max_steps), step * budget / elapsed)
