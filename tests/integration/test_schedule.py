"""Learning-rate schedules that end with the run: linear and cosine decay to the planned
last step, the plan taken from train.max_steps or from the pace under a time budget."""

import pytest
import torch
from util import tiny_config

from translator.config import config_from_dict
from translator.train.schedule import learning_rate
from translator.train.trainer import Trainer


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


# --- train.warmup_share: the warmup as a share of the planned run --------------------------


def test_resume_keeps_the_warmup_exact(tmp_path):
    """12 steps straight equal 6 steps, last.pt, and 6 more after --resume: the warmup goes
    on from the rate the optimizer saved."""
    cfg = config_from_dict(
        tiny_config(
            seed=3,
            run_dir=str(tmp_path / "run"),
            train={"max_steps": 12, "warmup_share": 0.5, "lr_schedule": "linear"},
        )
    )
    straight = Trainer(cfg)
    rates = []
    for _ in range(12):
        straight.train_step()
        rates.append(straight.optimizer.param_groups[0]["lr"])
    halves = Trainer(config_from_dict({**cfg.to_dict(), "run_dir": str(tmp_path / "halves")}))
    for _ in range(6):
        halves.train_step()
    halves.save_last()
    halves.run_dir.release()  # as that run's process ending would (it never ran to its end)
    resumed = Trainer(halves.cfg, resume=True)
    for step in range(6, 12):
        resumed.train_step()
        assert resumed.optimizer.param_groups[0]["lr"] == rates[step]
    assert rates[4] < rates[5] == cfg.train.lr  # the peak at step 6, half of max_steps
    a, b = straight.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(a[name], b[name]) for name in a)
