"""Learning-rate schedules that end with the run: linear and cosine decay to the planned
last step, the plan taken from train.max_steps or from the pace under a time budget."""

import math

import pytest
from util import tiny_config

from translator.config import config_from_dict
from translator.errors import UserError
from translator.train.schedule import inverse_sqrt_lr, learning_rate, planned_steps, scheduled_lr


@pytest.mark.parametrize("schedule", ["linear", "cosine"])
def test_decay_runs_from_the_peak_after_warmup_down_to_the_planned_end(schedule):
    lr, warmup, planned = 1e-3, 100, 1099
    curve = [learning_rate(schedule, s, lr, warmup, planned) for s in range(1, 1201)]
    assert curve[49] == pytest.approx(5e-4)  # warmup is linear whatever the decay
    assert curve[99] == pytest.approx(lr)  # the peak at warmup's end
    after = curve[99:planned]
    assert all(a > b for a, b in zip(after, after[1:]))  # falls at every step
    assert 0 < curve[planned - 1] < lr / 500  # the planned last step still learns, barely
    assert all(v == 0 for v in curve[planned + 1 :])  # steps beyond the plan learn nothing
    middle = learning_rate(schedule, (warmup + planned + 1) // 2, lr, warmup, planned)
    assert middle == pytest.approx(lr / 2, rel=0.01)  # both are halfway down halfway


def test_cosine_stays_higher_than_linear_early_and_lower_late():
    early = [learning_rate(k, 300, 1e-3, 100, 1000) for k in ("linear", "cosine")]
    late = [learning_rate(k, 900, 1e-3, 100, 1000) for k in ("linear", "cosine")]
    assert early[1] > early[0] and late[1] < late[0]


def test_inverse_sqrt_ignores_the_plan():
    assert learning_rate("inverse_sqrt", 400, 1e-3, 100, 10) == inverse_sqrt_lr(400, 1e-3, 100)


def test_the_plan_is_max_steps_or_what_the_budget_holds_at_the_pace_so_far():
    assert planned_steps(100, 30.0, math.inf, 5000) == 5000
    assert planned_steps(0, 0.0, 600.0, 5000) == 5000  # no pace yet
    assert planned_steps(100, 30.0, 600.0, 5000) == pytest.approx(2000)
    assert planned_steps(100, 30.0, 600.0, 1500) == 1500  # max_steps comes first


def test_an_unknown_schedule_is_a_config_error():
    with pytest.raises(UserError, match="train.lr_schedule.*inverse_sqrt, linear or cosine"):
        config_from_dict(tiny_config(train={"lr_schedule": "step"}))


# --- train.warmup_share: the warmup as a share of the planned run --------------------------


def train_section(**train):
    return config_from_dict(tiny_config(train=train)).train


def curve(tc, steps: int, plan_at) -> list[float]:
    """The rates of steps 1..steps as training sets them, `plan_at(step)` the plan after a
    log step (None: unchanged)."""
    rates, lr, plan = [], 0.0, 0.0
    for step in range(1, steps + 1):
        lr = scheduled_lr(tc, step, plan, lr)
        rates.append(lr)
        if step % tc.log_every == 0:
            plan = plan_at(step) or plan
    return rates


def test_without_a_budget_the_warmup_is_the_share_of_max_steps():
    tc = train_section(max_steps=1000, warmup_share=0.2, warmup_steps=7, lr_schedule="linear")
    rates = curve(tc, 1000, lambda step: None)
    assert rates == pytest.approx(
        [learning_rate("linear", s, tc.lr, 200, 1000) for s in range(1, 1001)]
    )
    assert rates[198] < tc.lr and rates[199] == pytest.approx(tc.lr)  # the peak at step 200


def test_under_a_budget_the_warmup_follows_the_plan_and_never_jumps():
    tc = train_section(
        max_steps=100_000,
        max_minutes=30.0,
        warmup_share=0.1,
        warmup_steps=800,
        log_every=25,
        lr_schedule="cosine",
    )
    rates = curve(tc, 3000, lambda step: 3000 * (1 + 0.1 * math.sin(step / 100)))  # a drifting pace
    assert rates[:25] == pytest.approx([tc.lr * s / 800 for s in range(1, 26)])  # no plan yet
    peak = rates.index(max(rates)) + 1
    assert max(rates) == pytest.approx(tc.lr) and 270 <= peak <= 330  # 10% of the plan
    warmup = rates[:peak]
    assert all(a <= b for a, b in zip(warmup, warmup[1:]))  # rises at every step
    # no jump where the first plan replaces warmup_steps nor at later plans: a step adds about
    # lr / 280, a few times that where a plan moves the end closer (a restart on the new plan's
    # line would add lr / 18 at once at step 26)
    assert max(b - a for a, b in zip(warmup, warmup[1:])) < tc.lr / 50
    assert rates[-1] < tc.lr / 100  # and it decays to the plan's end


def test_a_zero_share_skips_the_warmup_and_inverse_sqrt_ignores_the_share():
    tc = train_section(max_steps=1000, max_minutes=5.0, warmup_share=0.0, lr_schedule="linear")
    assert scheduled_lr(tc, 1, 0.0, 0.0) == pytest.approx(tc.lr, rel=0.01)  # decay from step 1
    tc = train_section(warmup_share=0.5, warmup_steps=100, lr_schedule="inverse_sqrt")
    assert scheduled_lr(tc, 400, 0.0, 1.0) == inverse_sqrt_lr(400, tc.lr, 100)


@pytest.mark.parametrize("share", [1.0, -0.1, 2])
def test_a_share_outside_zero_to_one_is_a_config_error(share):
    with pytest.raises(UserError, match=r"train.warmup_share.*\[0, 1\)"):
        train_section(warmup_share=share)
    assert train_section().warmup_share is None  # off unless set
