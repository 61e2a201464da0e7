"""How training stops: the kinds of stop and what each one does at the end, and the
progress bar's total under a wall-clock budget."""

import json
import math
import signal

import pytest
from util import tiny_config

from translator import progress
from translator.config import config_from_dict
from translator.progress import steps_total
from translator.train.report import EarlyStopping
from translator.train.state import StopKind, TrainState
from translator.train.trainer import Trainer
from translator.train.validation import Validation

TINY = tiny_config(seed=8, train={"max_steps": 6, "log_every": 2})


def trainer(tmp_path, *overrides):
    cfg = config_from_dict({**TINY, "run_dir": str(tmp_path / "run")}, overrides=list(overrides))
    return Trainer(cfg)


def test_steps_total_is_the_step_the_first_limit_stops_at():
    # 100 steps in this session's 60 s; 510 s of a 600 s budget left: 850 more steps
    assert steps_total(150, 90.0, (50, 30.0), 600.0, 100_000) == 1000
    assert steps_total(150, 90.0, (50, 30.0), 600.0, 400) == 400  # max_steps comes first
    assert steps_total(150, 700.0, (50, 30.0), 600.0, 400) == 150  # the budget is spent
    assert steps_total(50, 30.0, (50, 30.0), 600.0, 400) is None  # no rate measured yet
    assert steps_total(7, 5.0, (0, 0.0), math.inf, 400) == 400  # no budget


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


@pytest.mark.parametrize("best_by", ["bleu", "loss"])
def test_best_and_early_stopping_follow_train_best_by(best_by):
    stopping, state = EarlyStopping(best_by, patience=2), TrainState()
    # dev (loss, BLEU) at steps 1-4: the loss falls while greedy BLEU wobbles
    scores = [(3.0, 20.0), (2.5, 24.0), (2.4, 23.0), (2.45, 22.0)]
    best, stops = [], []
    for step, (loss, bleu) in enumerate(scores, 1):
        state.step = step
        if stopping.judge(state, Validation(step, loss, bleu, seconds=0.0)):
            best.append(step)
        stops.append(stopping.stop(state))
    if best_by == "loss":  # step 3 has the lowest loss; step 4 is the first worse one
        assert best == [1, 2, 3] and state.best_loss == 2.4 and state.best_bleu == 23.0
        assert state.bad_validations == 1 and stops == [None] * 4
        assert stopping.best(state) == "loss 2.400"
    else:  # steps 3 and 4 are two worse BLEUs in a row: patience 2 stops
        assert best == [1, 2] and state.best_bleu == 24.0 and state.best_loss == 2.5
        assert stops[:3] == [None] * 3 and stops[3].kind is StopKind.EARLY_STOPPING
        assert "dev BLEU" in stops[3].message and stopping.best(state) == "24.00"
    assert state.best_step == best[-1]


def test_without_patience_early_stopping_never_stops():
    stopping, state = EarlyStopping("bleu", patience=0), TrainState()
    for step in range(1, 6):
        state.step = step
        stopping.judge(state, Validation(step, 1.0, 10.0 - step, seconds=0.0))
    assert state.bad_validations == 4 and stopping.stop(state) is None
