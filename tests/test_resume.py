"""--resume: the config changes it refuses and the ones it allows, files it cannot resume
from, and every process's own random state under torchrun (2 CPU processes, gloo)."""

import logging
import os
import shutil
import subprocess
import sys

import pytest
import torch
import yaml
from util import tiny_config, user_error

from translator.config import config_from_dict
from translator.config.diff import config_changes, describe_changes
from translator.models.checkpoint import Checkpoint
from translator.train.resume import resumable
from translator.train.trainer import Trainer

TINY = tiny_config(seed=6, train={"max_steps": 2})


def configured(run_dir, *overrides):
    return config_from_dict({**TINY, "run_dir": str(run_dir)}, overrides=list(overrides))


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    """A 2-step run: its folder holds last.pt and best.pt."""
    run_dir = tmp_path_factory.mktemp("resume") / "run"
    Trainer(configured(run_dir)).run()
    return run_dir


def copy_of(saved_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(saved_run, run_dir)
    return run_dir


def test_changes_that_break_the_run_are_refused_with_their_keys(saved_run, tmp_path):
    run_dir = copy_of(saved_run, tmp_path)
    cfg = configured(run_dir, "model.d_model=48", "seed=2", "train.batch_tokens=500")
    message = user_error(Trainer, cfg, resume=True)
    assert message.startswith(f"cannot resume {run_dir / 'last.pt'}: config keys differ")
    assert "model.d_model (32 -> 48)" in message and "seed (6 -> 2)" in message
    assert "train.batch_tokens (400 -> 500)" in message and "new run_dir" in message
    # a change that can resume is not named among them
    cfg = configured(run_dir, "seed=2", "train.max_steps=9")
    assert "max_steps" not in user_error(Trainer, cfg, resume=True)


def test_changes_that_continue_the_run_are_allowed_and_logged(saved_run, tmp_path, caplog):
    run_dir = copy_of(saved_run, tmp_path)
    cfg = configured(run_dir, "train.max_steps=4", "decode.beam=3", "train.log_every=2")
    with caplog.at_level(logging.INFO, logger="translator"):
        trainer = Trainer(cfg, resume=True)
    changed = [r.message for r in caplog.records if "changed settings" in r.message]
    assert len(changed) == 1, caplog.text
    assert "train.max_steps (2 -> 4)" in changed[0] and "decode.beam (2 -> 3)" in changed[0]
    assert "train.log_every (25 -> 2)" in changed[0]
    assert trainer.run().step == 4


def test_config_changes_compare_key_paths_whatever_the_sections_hold():
    saved = {"seed": 1, "model": {"type": "lstm", "lstm": {"hidden": 8}}, "train": {"lr": 1.0}}
    given = {"seed": 1, "model": {"type": "rnn", "rnn": {"d": 4}}, "train": {"lr": 2.0}}
    changes = config_changes(saved, given)
    assert changes == {
        "model.lstm.hidden": (8, ...),
        "model.rnn.d": (..., 4),
        "model.type": ("lstm", "rnn"),
        "train.lr": (1.0, 2.0),
    }
    text = describe_changes(changes)
    assert "model.lstm.hidden (8 -> unset)" in text and 'model.type ("lstm" -> "rnn")' in text
    assert [k for k in changes if resumable(k)] == ["train.lr"]
    assert resumable("decode.beam") and not resumable("decoder.beam")


def test_a_checkpoint_without_training_state_cannot_resume(saved_run, tmp_path):
    run_dir = copy_of(saved_run, tmp_path)
    shutil.copy(run_dir / "best.pt", run_dir / "last.pt")
    message = user_error(Trainer, configured(run_dir), resume=True)
    assert "holds no training state" in message and "last.pt" in message


# -- torchrun -----------------------------------------------------------------------------------
DDP = tiny_config(
    seed=7,
    data={"demo_train": 200},
    model={"dropout": 0.3},  # each rank's dropout masks come from its own random state
    # every rank keeps its own moving average of the weights (translator/train/ema.py)
    train={
        "batch_tokens": 300,
        "valid_every": 1000,
        "save_every": 1000,
        "log_every": 2,
        "ema_decay": 0.9,
    },
)


def torchrun(tmp_path, run_dir, max_steps, resume=False):
    path = tmp_path / "ddp.yaml"
    path.write_text(yaml.safe_dump({**DDP, "run_dir": str(run_dir)}))
    env = {**os.environ, "TRANSLATOR_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    args = ["-m", "translator", "train", "--config", str(path)]
    args += ["--set", f"train.max_steps={max_steps}"] + (["--resume"] if resume else [])
    result = subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return Checkpoint.load(run_dir / "last.pt")


def test_two_processes_resume_exactly_each_with_its_own_random_state(tmp_path):
    straight = torchrun(tmp_path, tmp_path / "straight", 8)
    half = torchrun(tmp_path, tmp_path / "halves", 4)
    assert half.processes == 2
    assert not torch.equal(half.rng[0]["torch"], half.rng[1]["torch"])
    resumed = torchrun(tmp_path, tmp_path / "halves", 8, resume=True)
    assert resumed.progress["step"] == straight.progress["step"] == 8
    for name, weight in straight.model.items():
        assert torch.equal(weight, resumed.model[name]), name
    assert straight.ema["updates"] == resumed.ema["updates"] == 8
    for name, weight in straight.ema["weights"].items():
        assert torch.equal(weight, resumed.ema["weights"][name]), name
    # one process cannot take over the data shares of two
    cfg = config_from_dict({**DDP, "run_dir": str(tmp_path / "halves")})
    message = user_error(Trainer, cfg, resume=True)
    assert "saved by 2 process(es) and this run has 1" in message


def test_test_files_may_change_on_resume_but_training_data_may_not():
    from translator.train.resume import resumable

    # eval alone reads the test split, so naming test files later continues the run
    assert resumable("data.test") and resumable("data.test.src") and resumable("data.test_split")
    assert not resumable("data.train.src") and not resumable("data.dev.tgt")
    assert not resumable("data.testing")
