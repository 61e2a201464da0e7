"""How training stops: the kinds of stop and what each one does at the end, and the
progress bar's total under a wall-clock budget."""

import json
import signal

import pytest
from util import tiny_config

from translator import progress
from translator.config import config_from_dict
from translator.train.state import StopKind
from translator.train.trainer import Trainer

TINY = tiny_config(seed=8, train={"max_steps": 6, "log_every": 2})


def trainer(tmp_path, *overrides):
    cfg = config_from_dict({**TINY, "run_dir": str(tmp_path / "run")}, overrides=list(overrides))
    return Trainer(cfg)


def test_under_a_time_budget_the_bar_counts_toward_where_the_run_stops(tmp_path, monkeypatch):
    totals = []

    class Recording(progress.tqdm):
        def update(self, n=1):
            totals.append((self, self.total))
            return super().update(n)

    monkeypatch.setattr(progress, "tqdm", Recording)
    t = trainer(tmp_path, "train.max_steps=100000", "train.max_minutes=0.02")
    steps = t.run().step
    totals = [total for bar, total in totals if bar is t.bar.bar]  # not validation's own bars
    assert t.stop.kind is StopKind.TIME_BUDGET
    assert t.summary["stop_reason"] == "time budget of 0.02 minutes reached"
    assert 2 < steps < 10_000 and len(totals) == steps
    # estimated from the first step on (at 100,000 it would read hours for a second's run)
    assert all(steps // 10 < total < 10 * steps for total in totals), totals
    assert t.bar.bar.total == steps  # the bar ends full


def test_without_a_budget_the_bar_counts_to_max_steps(tmp_path, monkeypatch):
    t = trainer(tmp_path)
    attributes = set(vars(t))
    assert t.run().step == 6 and t.bar.bar.total == 6 and t.stop.kind is StopKind.MAX_STEPS
    assert set(vars(t)) == attributes  # run() sets what __init__ made, nothing new


def test_an_interrupt_saves_without_validating_and_a_second_one_stops_at_once(tmp_path):
    t = trainer(tmp_path)
    validated, step = [], t.train_step

    def interrupted_step():
        tokens = step()
        if t.state.step == 3:
            t._on_signal(signal.SIGTERM, None)
        return tokens

    t.train_step = interrupted_step
    t.validate_and_keep_best = lambda: validated.append(t.state.step)
    assert t.run().step == 3 and validated == []
    assert t.stop.kind is StopKind.INTERRUPTED
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["stop_reason"] == "interrupted by SIGTERM" and summary["steps"] == 3
    with pytest.raises(KeyboardInterrupt):
        t._on_signal(signal.SIGINT, None)


def test_a_run_that_reaches_max_steps_validates_its_last_step(tmp_path):
    t = trainer(tmp_path)
    validated = []
    t.validate_and_keep_best = lambda: validated.append(t.state.step)
    t.run()
    assert validated == [6] and t.summary["stop_reason"] == "train.max_steps=6 reached"
