"""The training report without a Trainer: validations recorded and written, statistics
counted, a diverged run stopped, summary.json written."""

import json
import logging

import pytest
from util import tiny_config

from translator.config import config_from_dict
from translator.errors import UserError
from translator.train.report import MAX_BAD_STEPS, StepStats, TrainingReport
from translator.train.run_dir import RunDir
from translator.train.state import Stop, StopKind
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
