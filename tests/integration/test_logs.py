"""Logs a person can read: plain lines instead of progress bars where stderr is not a
terminal, RUN/train.log and RUN/validations.jsonl written while a run goes, and three dev
examples at each validation."""

import json
import logging

import pytest
import yaml
from training import LOGS_TINY as TINY
from training import validations
from util import at_once, cli

from translator.config import config_from_dict
from translator.data.corpus import open_source
from translator.errors import UserError
from translator.train import loss as loss_mod
from translator.train import report as report_mod
from translator.train.trainer import Trainer


@pytest.fixture(scope="module")
def piped_run(tmp_path_factory):
    """`translator train` with stderr a pipe, as under CI, nohup or `2>&1 | cat`."""
    folder = tmp_path_factory.mktemp("logs")
    config = folder / "c.yaml"
    config.write_text(yaml.safe_dump({**TINY, "run_dir": str(folder / "run")}))
    result = cli("train", "--config", str(config))
    assert result.returncode == 0, result.stderr[-2000:]
    return folder / "run", result.stderr


def test_a_piped_training_run_prints_plain_lines(piped_run):
    run_dir, stderr = piped_run
    assert "\r" not in stderr and "\x1b" not in stderr
    lines = stderr.splitlines()
    logged = [line for line in lines if line.startswith("step ")]
    assert [line.split(":")[0] for line in logged] == ["step 2/4", "step 4/4"]
    for line in logged:
        assert all(word in line for word in ("loss", "lr", "target tokens/s", "min", "ETA"))
    assert sum(line.startswith("validation step ") for line in lines) == 2


def test_each_validation_shows_the_same_three_dev_examples(piped_run):
    run_dir, stderr = piped_run
    dev = list(open_source(config_from_dict(TINY).data, TINY["seed"]).pairs("dev"))[:3]
    blocks = stderr.split("validation step ")[1:]
    assert len(blocks) == 2
    for block in blocks:
        shown = [line.strip() for line in block.splitlines() if line.startswith("  example ")]
        assert len(shown) == 9
        for i, (source, reference) in enumerate(dev, 1):
            assert f"example {i} source:     {source}" in shown
            assert f"example {i} reference:  {reference}" in shown
            assert any(line.startswith(f"example {i} hypothesis: ") for line in shown)


def test_the_run_keeps_what_it_printed_and_its_validations(piped_run):
    run_dir, stderr = piped_run
    log = (run_dir / "train.log").read_text()
    for line in stderr.splitlines():  # every line, each behind its time
        assert f" {line}\n" in log, line
    found = validations(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert [v["step"] for v in found] == [2, 4]
    assert found == summary["validations"] and all("dev_bleu" in v for v in found)


def test_translate_and_eval_progress_is_plain_lines_when_piped(piped_run, tmp_path):
    run_dir, _ = piped_run
    text = tmp_path / "in.de"
    text.write_text("Ein Mann besucht das Haus.\nEin Vogel hört die Katze.\n")
    checkpoint = str(run_dir / "best.pt")
    translated, evaluated = at_once(
        lambda: cli("translate", "--checkpoint", checkpoint, "--input", str(text)),
        lambda: cli("eval", "--checkpoint", checkpoint, "--src", str(text), "--ref", str(text)),
    )
    # translate counts lines; eval's two lines make one batch
    for result, done in ((translated, "translate: 2/2 (100%)"), (evaluated, "translate: 1/1")):
        assert result.returncode == 0, result.stderr[-2000:]
        assert "\r" not in result.stderr
        assert any(line.startswith(done) for line in result.stderr.splitlines()), result.stderr


def test_the_logs_exist_and_grow_while_the_run_goes(tmp_path, monkeypatch):
    t = Trainer(config_from_dict({**TINY, "run_dir": str(tmp_path / "run")}))
    seen, real_step = {}, t.train_step

    def watched_step():
        if t.state.step == 3:  # after the first validation, before the second
            seen["log"] = (tmp_path / "run" / "train.log").read_text()
            seen["validations"] = validations(tmp_path / "run")
        return real_step()

    monkeypatch.setattr(t, "train_step", watched_step)
    t.run()
    assert "validation step 2:" in seen["log"] and "validation step 4:" not in seen["log"]
    assert "step 2/4: loss" in seen["log"]
    assert [v["step"] for v in seen["validations"]] == [2]
    assert [v["step"] for v in validations(tmp_path / "run")] == [2, 4]
    assert not any(
        isinstance(h, logging.FileHandler) for h in logging.getLogger("translator").handlers
    )


def test_resume_appends_the_log_and_keeps_one_entry_per_validation(tmp_path):
    run_dir = tmp_path / "run"
    Trainer(config_from_dict({**TINY, "run_dir": str(run_dir)})).run()
    first_log = (run_dir / "train.log").read_text()
    # the crashed session's validation after last.pt, and its torn last line
    with open(run_dir / "validations.jsonl", "a") as f:
        f.write(json.dumps({"step": 5, "dev_bleu": 1.0}) + "\n" + '{"step": 6, "dev_')
    again = config_from_dict({**TINY, "run_dir": str(run_dir)}, overrides=["train.max_steps=6"])
    Trainer(again, resume=True).run()
    assert [v["step"] for v in validations(run_dir)] == [2, 4, 6]
    log = (run_dir / "train.log").read_text()
    assert log.startswith(first_log) and "resumed from step 4" in log[len(first_log) :]


def test_an_error_that_ends_the_run_is_in_its_log(tmp_path, monkeypatch):
    real = loss_mod.sequence_loss
    monkeypatch.setattr(
        loss_mod, "sequence_loss", lambda m, b, s, f: real(m, b, s, f) * float("nan")
    )
    monkeypatch.setattr(report_mod, "MAX_BAD_STEPS", 2)
    t = Trainer(config_from_dict({**TINY, "run_dir": str(tmp_path / "run")}))
    with pytest.raises(UserError, match="training diverged"):
        t.run()
    log = (tmp_path / "run" / "train.log").read_text()
    assert "skipped for a non-finite loss" in log and "error: training diverged" in log
