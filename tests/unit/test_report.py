"""The training report without a Trainer: validations recorded and written, statistics
counted, a diverged run stopped, summary.json written."""

import json
import logging
import math

import pytest
from util import tiny_config

from translator.config import config_from_dict
from translator.errors import UserError
from translator.progress import steps_total
from translator.train.report import MAX_BAD_STEPS, EarlyStopping, StepStats, TrainingReport
from translator.train.run_dir import RunDir
from translator.train.state import Stop, StopKind, TrainState
from translator.train.trainer import Trainer
from translator.train.validation import Validation


def report(tmp_path, main=True, **train):
    tc = config_from_dict(tiny_config(train=train)).train
    run = RunDir(tmp_path)
    return TrainingReport(run, tc, main), run


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_validations_are_judged_kept_written_and_printed(tmp_path, caplog):
    r, run = report(tmp_path, patience=1)
    caplog.set_level(logging.INFO, logger="translator")
    pairs = [("ein Haus", "a house"), ("eine Katze", "a cat")]
    r.state.step, r.state.elapsed = 2, 54.0
    assert r.validated(Validation(2, 3.0, 20.0, 6.0, ["a house", "cat"]), pairs)
    r.state.step = 4
    assert not r.validated(Validation(4, 2.5, 19.0, 6.0, ["a house", "a cat"]), pairs)
    entries = lines(run.validations)
    assert (
        entries == r.state.history
        and [list(e) for e in entries]
        == [["step", "dev_loss", "dev_bleu", "seconds", "minutes"]] * 2
    )
    assert entries[0]["minutes"] == 1.0  # 54 s of training and 6 s of this validation
    assert r.state.best_step == 2 and r.stopping.stop(r.state).kind is StopKind.EARLY_STOPPING
    logged = [rec.getMessage() for rec in caplog.records]
    assert logged[0] == "validation step 2: dev loss 3.000, dev BLEU 20.00 (6.0s) new best"
    assert logged[1:4] == [
        "  example 1 source:     ein Haus",
        "  example 1 reference:  a house",
        "  example 1 hypothesis: a house",
    ]
    assert "validation step 4: dev loss 2.500, dev BLEU 19.00 (6.0s), best 20.00 at 2" in logged


def test_resuming_cuts_the_validations_back_to_the_checkpoint(tmp_path):
    r, run = report(tmp_path)
    for step in (2, 4):
        r.state.step = step
        r.validated(Validation(step, 3.0, float(step), 1.0), [])
    saved = {**vars(r.state), "history": r.state.history[:1]}
    with open(run.validations, "a") as f:
        f.write('{"step": 6, "dev_')  # a torn last line
    again, _ = report(tmp_path)
    again.restore(saved)
    assert lines(run.validations) == saved["history"] and again.state.step == 4


def test_a_second_rank_counts_but_writes_nothing(tmp_path):
    r, run = report(tmp_path, main=False)
    r.validated(Validation(2, 3.0, 20.0, 1.0), [])
    r.synced(StepStats(2.0, 1.0, skipped=1, longest_bad_run=1, tokens=50))
    r.write_summary(Stop(StopKind.MAX_STEPS, "done"), {}, 0.0)
    assert r.state.target_tokens == 50 and r.state.skipped_steps == 1
    assert r.summary["stop_reason"] == "done" and not list(tmp_path.iterdir())


def test_statistics_add_up_and_a_run_of_bad_losses_stops_it(tmp_path):
    r, run = report(tmp_path)
    r.synced(StepStats(2.0, 1.0, skipped=0, longest_bad_run=0, tokens=100))
    r.synced(StepStats(2.0, 1.0, skipped=3, longest_bad_run=2, tokens=40))
    r.state.step = 7
    r.logged(StepStats(2.34567, 0.5, 0, 0), lr=1e-3, rate=10.0)
    r.logged(StepStats(float("nan"), 0.5, 3, 3), lr=1e-3, rate=10.0)
    assert r.state.target_tokens == 140 and r.state.skipped_steps == 3
    assert r.state.losses == [[7, 2.3457], [7, None]] and len(r.state.memory) == 2
    with pytest.raises(UserError, match=f"diverged: {MAX_BAD_STEPS} non-finite"):
        r.synced(StepStats(float("nan"), 1.0, MAX_BAD_STEPS, MAX_BAD_STEPS))
    r.state.train_seconds = 2.0
    summary = r.write_summary(Stop(StopKind.MAX_STEPS, "max"), {"device": "cpu"}, 1.234)
    assert json.loads(run.summary.read_text()) == summary
    assert summary["target_tokens_per_second"] == 70 and summary["device"] == "cpu"
    assert summary["best_dev_loss"] is None and summary["startup_seconds"] == 1.23


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
