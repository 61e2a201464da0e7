"""Learning-rate schedules that end with the run: linear and cosine decay to the planned
last step, the plan taken from train.max_steps or from the pace under a time budget."""

import math

import pytest
from util import tiny_config

from translator.config import config_from_dict
from translator.errors import UserError
from translator.objective import inverse_sqrt_lr, learning_rate, planned_steps
from translator.train import Trainer


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


def test_training_plans_from_its_clock_and_steps_with_the_planned_rate(tmp_path):
    cfg = tiny_config(
        seed=3,
        run_dir=str(tmp_path / "run"),
        train={
            "max_steps": 10_000,
            "max_minutes": 1.0,
            "lr_schedule": "linear",
            "warmup_steps": 2,
            "batch_tokens": 600,
        },
    )
    t = Trainer(config_from_dict(cfg))
    t.state.step, t.state.elapsed = 100, 20.0  # 100 steps in a third of the minute
    t._plan()
    assert t.state.planned_steps == pytest.approx(300)
    t.train_step()
    expected = learning_rate("linear", 101, t.cfg.train.lr, 2, 300)
    assert t.optimizer.param_groups[0]["lr"] == pytest.approx(expected)
    assert expected < t.cfg.train.lr * 0.7


def test_without_a_budget_the_plan_is_max_steps(tmp_path):
    cfg = tiny_config(
        seed=3,
        run_dir=str(tmp_path / "run"),
        train={"max_steps": 6, "lr_schedule": "cosine", "warmup_steps": 2, "batch_tokens": 600},
    )
    t = Trainer(config_from_dict(cfg))
    t.state.step, t.state.elapsed = 4, 1.0
    t._plan()
    assert t.state.planned_steps == 0  # nothing to estimate: max_steps is the plan
    for _ in range(6):
        t.train_step()
    lr = t.optimizer.param_groups[0]["lr"]
    assert lr == pytest.approx(learning_rate("cosine", 10, t.cfg.train.lr, 2, 6))


def test_an_unknown_schedule_is_a_config_error():
    with pytest.raises(UserError, match="train.lr_schedule.*inverse_sqrt, linear, cosine"):
        config_from_dict(tiny_config(train={"lr_schedule": "step"}))
