"""The run folder: the name of every file in it, and a new run never writes over an earlier
run's checkpoints unless told to (--overwrite)."""

import pytest

from translator.errors import UserError
from translator.train.run_dir import RunDir


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
    assert sorted(p.name for p in run.path.iterdir()) == [".translator-output.json", "config.yaml"]
    with pytest.raises(UserError, match="no .*last.pt to resume from"):
        run.resumable()
