"""The run folder: the name of every file in it, and a new run never writes over an earlier
run's checkpoints unless told to (--overwrite)."""

import json

import pytest
import yaml
from test_cli_errors import assert_user_error
from util import cli, tiny_config

from translator.config import config_from_dict
from translator.errors import UserError
from translator.train.run_dir import RunDir
from translator.train.trainer import Trainer


def config_file(tmp_path, **train):
    run = tmp_path / "run"
    text = yaml.safe_dump(tiny_config(run_dir=str(run), train={"max_steps": 2, **train}))
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path, run


def test_a_second_run_is_refused_then_replaces_the_first_with_overwrite(tmp_path):
    path, run = config_file(tmp_path)
    first = cli("train", "--config", str(path))
    assert first.returncode == 0, first.stderr[-2000:]
    kept = {name: (run / name).read_bytes() for name in ("best.pt", "last.pt", "summary.json")}
    stale = run / "step-000999.pt"  # a step checkpoint of the earlier run
    stale.write_bytes(b"earlier")
    average = run / "average.pt"  # and its average, and its TensorBoard curves
    average.write_bytes(b"earlier")
    (run / "tensorboard").mkdir()
    events = run / "tensorboard" / "events.out.tfevents.1"
    events.write_bytes(b"earlier")
    logs = {name: (run / name).read_text() for name in ("train.log", "validations.jsonl")}
    assert "validation step 2:" in logs["train.log"] and len(logs["validations.jsonl"]) > 0

    again = cli("train", "--config", str(path), "--set", "seed=2")
    assert_user_error(again, str(run), "--resume", "--overwrite")
    for name, data in kept.items():  # nothing of the first run was touched
        assert (run / name).read_bytes() == data
    assert stale.read_bytes() == average.read_bytes() == events.read_bytes() == b"earlier"
    assert logs == {name: (run / name).read_text() for name in logs}

    replaced = cli("train", "--config", str(path), "--set", "seed=2", "--overwrite")
    assert replaced.returncode == 0, replaced.stderr[-2000:]
    assert not stale.exists()  # `translator average` would have mixed it in
    assert not average.exists() and not events.exists()
    assert (run / "last.pt").read_bytes() != kept["last.pt"]
    # the logs are the new run's alone: one validation, one start
    assert len((run / "validations.jsonl").read_text().splitlines()) == 1
    assert (run / "train.log").read_text().count("model transformer:") == 1
    assert "seed: 2" in (run / "config.yaml").read_text()


def trainer(tmp_path, **kwargs):
    cfg = config_from_dict(tiny_config(run_dir=str(tmp_path / "run"), train={"max_steps": 2}))
    return Trainer(cfg, **kwargs)


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


def test_the_run_dir_names_every_file_and_orders_step_checkpoints_by_step(tmp_path):
    run = RunDir(tmp_path / "run")
    run.create()
    names = [run.last, run.best, run.average, run.config, run.summary, run.log, run.validations]
    assert [p.name for p in names] == [
        "last.pt",
        "best.pt",
        "average.pt",
        "config.yaml",
        "summary.json",
        "train.log",
        "validations.jsonl",
    ]
    assert run.tensorboard == tmp_path / "run" / "tensorboard"
    for step in (1000, 20, 300):
        run.step_checkpoint(step).write_bytes(b"")
    (tmp_path / "run" / "step-x.pt").write_bytes(b"")  # not a step checkpoint
    assert [p.name for p in run.step_checkpoints()] == [
        "step-000020.pt",
        "step-000300.pt",
        "step-001000.pt",
    ]
    run.prune_step_checkpoints(keep=1, step=300)  # 1000 is an earlier run's: it goes too
    assert [p.name for p in run.step_checkpoints()] == ["step-000300.pt"]


def test_claiming_refuses_an_earlier_run_and_overwrite_removes_only_its_files(tmp_path):
    run = RunDir(tmp_path / "run")
    run.create()
    for path in (run.last, run.summary, run.log, run.step_checkpoint(4), run.config):
        path.write_text("earlier")
    with pytest.raises(UserError, match="holds an earlier run \\(last.pt\\)"):
        run.claim(overwrite=False, init_from=None, remove=True)
    run.claim(overwrite=True, init_from=None, remove=False)  # another rank: deletes nothing
    assert run.last.exists() and run.step_checkpoints()
    run.claim(overwrite=True, init_from=None, remove=True)
    assert sorted(p.name for p in run.path.iterdir()) == ["config.yaml"]
    with pytest.raises(UserError, match="no .*last.pt to resume from"):
        run.resumable()
