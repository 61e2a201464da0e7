"""The run folder: the name of every file in it, and a new run never writes over an earlier
run's checkpoints unless told to (--overwrite)."""

import pytest

from translator.errors import UserError
from translator.models.checkpoint import save_checkpoint
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
        save_checkpoint(run.step_checkpoint(step), {"model": {}})
    (tmp_path / "run" / "step-x.pt").write_bytes(b"")  # not a step checkpoint
    assert [p.name for p in run.step_checkpoints()] == [
        "step-000020.pt",
        "step-000300.pt",
        "step-001000.pt",
    ]
    mine = run.step_checkpoint(5)  # the user's, under a step checkpoint's name
    mine.write_text("precious")
    run.prune_step_checkpoints(keep=1, step=300)  # 1000 is an earlier run's: it goes too
    assert [p.name for p in run.step_checkpoints()] == ["step-000005.pt", "step-000300.pt"]
    assert mine.read_text() == "precious"


def test_claiming_refuses_an_earlier_run_and_overwrite_removes_only_its_files(tmp_path):
    run = RunDir(tmp_path / "run")
    run.create()
    for path in (run.last, run.summary, run.log, run.config):
        path.write_text("earlier")
    for path in (run.step_checkpoint(4), run.average):  # as a run and `average` write them
        save_checkpoint(path, {"model": {}})
    run.tensorboard.mkdir()
    (run.tensorboard / "events.out.tfevents.1.host").write_bytes(b"curves")
    # the user's files under a run's names: not checkpoints, not TensorBoard's
    (run.path / "step-000999.pt").write_text("precious")
    notes = run.tensorboard / "notes.txt"
    notes.write_text("precious")
    with pytest.raises(UserError, match="holds an earlier run \\(last.pt\\)"):
        run.claim(overwrite=False, init_from=None)
    run.claim(overwrite=True, init_from=None)  # allowed, and nothing goes before clear()
    assert run.last.exists() and run.step_checkpoint(4).exists()
    run.clear()
    left = sorted(p.name for p in run.path.iterdir())
    # (train.log: RunLog.restart drops the earlier run's lines, keeping the new run's)
    assert left == [".translator-output.json", "config.yaml", "step-000999.pt", "tensorboard",
                    "train.log"]  # fmt: skip
    assert [p.name for p in run.tensorboard.iterdir()] == ["notes.txt"]
    (run.tensorboard / "notes.txt").unlink()
    run.last.write_text("earlier")
    run.clear()
    assert not run.tensorboard.exists()  # emptied: gone


def test_a_run_removes_the_temporary_files_of_a_killed_ones_checkpoints(tmp_path):
    run = RunDir(tmp_path / "run")
    run.create()
    run.release()
    leftovers = [".step-000005.pt.fufvtsig.tmp", ".last.pt.abc123.tmp", ".best.pt.x_y.tmp"]
    kept = [".notes.txt.abc.tmp", "mine.tmp", ".step-000005.pt"]
    for name in leftovers + kept:
        (run.path / name).write_bytes(b"x")
    RunDir(tmp_path / "run").create()
    assert sorted(p.name for p in run.path.iterdir()) == sorted(kept + [".translator-output.json"])
    with pytest.raises(UserError, match="no .*last.pt to resume from"):
        run.resumable()


def test_a_folder_a_run_holds_is_refused_to_another_run_until_released(tmp_path):
    """Two runs into one folder would mix, or with --overwrite delete, each other's files:
    the second is refused while the first holds it, in this process or another."""
    import subprocess
    import sys

    first = RunDir(tmp_path / "run")
    first.create()
    with pytest.raises(UserError, match="run_dir '.*run' is in use by another training run"):
        RunDir(tmp_path / "run").create()
    other = "from translator.train.run_dir import RunDir; import sys; RunDir(sys.argv[1]).create()"
    held = subprocess.run([sys.executable, "-c", other, str(first.path)], capture_output=True)
    assert held.returncode != 0 and b"in use by another training run" in held.stderr
    first.release()
    second = RunDir(tmp_path / "run")
    second.create()  # free again
    del second  # and freed with the run that held it
    RunDir(tmp_path / "run").create(hold=False)  # (another rank of the same run)
    RunDir(tmp_path / "run").create()


def test_a_file_system_without_locks_does_not_stop_a_run(tmp_path, monkeypatch):
    """Only a lock another run holds refuses the folder; a file system that keeps no locks
    (ENOLCK, some network mounts) lets the run go on."""
    import errno
    import fcntl

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    RunDir(tmp_path / "run").create()
    RunDir(tmp_path / "run").create()


def test_a_run_that_cannot_start_leaves_no_folder_it_made_and_keeps_one_it_found(tmp_path):
    from util import tiny_config

    from translator.config import config_from_dict
    from translator.train.trainer import Trainer

    def start(run_dir, error="data.train.src: file not found", **extra):
        data = {"train": {"src": str(tmp_path / "no.de"), "tgt": str(tmp_path / "no.en")}}
        cfg = config_from_dict(tiny_config(run_dir=str(run_dir), data=data))
        with pytest.raises(UserError, match=error):
            Trainer(cfg, **extra)

    start(tmp_path / "runs" / "new")
    assert list((tmp_path / "runs").iterdir()) == []
    start(tmp_path / "runs" / "new", "--resume: no .*last.pt", resume=True)
    assert list((tmp_path / "runs").iterdir()) == []
    found = tmp_path / "mine"
    found.mkdir()
    start(found)
    assert found.is_dir() and (found / "train.log").is_file()
