"""The run folder: the name of every file in it, and a new run never writes over an earlier
run's checkpoints unless told to (--overwrite)."""

import json

import pytest
import yaml
from training import two_step_trainer as trainer
from util import assert_user_error, tiny_config

from translator.errors import UserError


def config_file(tmp_path, **train):
    run = tmp_path / "run"
    text = yaml.safe_dump(tiny_config(run_dir=str(run), train={"max_steps": 2, **train}))
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path, run


def test_a_second_run_is_refused_then_replaces_the_first_with_overwrite(tmp_path, here):
    path, run = config_file(tmp_path)
    first = here("train", "--config", str(path))
    assert first.returncode == 0, first.stderr[-2000:]
    kept = {name: (run / name).read_bytes() for name in ("best.pt", "last.pt", "summary.json")}
    stale = run / "step-000999.pt"  # a step checkpoint of the earlier run
    stale.write_bytes(kept["best.pt"])
    average = run / "average.pt"  # and its average, and its TensorBoard curves
    average.write_bytes(kept["best.pt"])
    (run / "tensorboard").mkdir()
    events = run / "tensorboard" / "events.out.tfevents.1"
    events.write_bytes(b"earlier")
    logs = {name: (run / name).read_text() for name in ("train.log", "validations.jsonl")}
    assert "validation step 2:" in logs["train.log"] and len(logs["validations.jsonl"]) > 0

    again = here("train", "--config", str(path), "--set", "seed=2")
    assert_user_error(again, str(run), "--resume", "--overwrite")
    for name, data in kept.items():  # nothing of the first run was touched
        assert (run / name).read_bytes() == data
    assert stale.read_bytes() == average.read_bytes() == kept["best.pt"]
    assert events.read_bytes() == b"earlier"
    assert logs == {name: (run / name).read_text() for name in logs}

    replaced = here("train", "--config", str(path), "--set", "seed=2", "--overwrite")
    assert replaced.returncode == 0, replaced.stderr[-2000:]
    assert not stale.exists()  # `translator average` would have mixed it in
    assert not average.exists() and not events.exists()
    assert (run / "last.pt").read_bytes() != kept["last.pt"]
    # the logs are the new run's alone: one validation, one start
    assert len((run / "validations.jsonl").read_text().splitlines()) == 1
    assert (run / "train.log").read_text().count("model transformer:") == 1
    assert "seed: 2" in (run / "config.yaml").read_text()


def test_overwrite_keeps_the_earlier_run_until_the_new_one_is_ready(tmp_path, here):
    """A mistake that stops the new run before its first step (a missing data file, a model
    it cannot build) leaves the earlier run whole, its log too; once ready, train.log is the
    new run's."""
    path, run = config_file(tmp_path)
    assert here("train", "--config", str(path)).returncode == 0
    kept = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    missing = tmp_path / "missing.de"
    failed = here("train", "--config", str(path), "--overwrite", "--set",
                  f"data.train.src={missing}", "--set", f"data.train.tgt={missing}")  # fmt: skip
    assert_user_error(failed, "data.train", str(missing))
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == kept
    replaced = here("train", "--config", str(path), "--overwrite", "--set", "seed=2")
    assert replaced.returncode == 0, replaced.stderr[-2000:]
    log = (run / "train.log").read_text()
    assert log.count("model transformer:") == 1 and str(missing) not in log


def test_overwrite_interrupted_while_starting_leaves_the_earlier_run_and_its_log(
    tmp_path, monkeypatch
):
    import translator.train.trainer as trainer_mod

    run = tmp_path / "run"
    trainer(tmp_path).run()
    kept = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}

    def interrupted(*args, **kwargs):  # Ctrl-C while the data is read
        raise KeyboardInterrupt

    monkeypatch.setattr(trainer_mod, "TrainingData", interrupted)
    with pytest.raises(KeyboardInterrupt):
        trainer(tmp_path, overwrite=True)
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == kept


def test_resume_and_overwrite_together_are_refused(tmp_path):
    with pytest.raises(UserError, match="--overwrite starts a new run"):
        trainer(tmp_path, resume=True, overwrite=True)


def test_overwrite_does_not_empty_the_folder_that_init_from_reads(tmp_path):
    run = tmp_path / "run"
    trainer(tmp_path).run()
    before = (run / "best.pt").read_bytes()
    with pytest.raises(UserError, match="its own folder"):
        trainer(tmp_path, init_from=run / "best.pt", overwrite=True)
    assert (run / "best.pt").read_bytes() == before


def test_an_empty_or_unfinished_folder_is_not_an_earlier_run(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("seed: 1\n")  # no checkpoint: nothing to lose
    (run / "train.log").write_text("a run that saved nothing\n")  # its logs start again
    (run / "validations.jsonl").write_text('{"step": 7, "dev_bleu": 1.0}\n')
    assert trainer(tmp_path).run().step == 2
    assert "saved nothing" not in (run / "train.log").read_text()
    assert [json.loads(line)["step"] for line in (run / "validations.jsonl").open()] == [2]
