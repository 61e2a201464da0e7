"""--resume: the config changes it refuses and the ones it allows, files it cannot resume
from, and every process's own random state under torchrun (2 CPU processes, gloo)."""

import os
import subprocess
import sys

import yaml
from util import tiny_config

from translator.config.diff import config_changes, describe_changes
from translator.models.checkpoint import Checkpoint
from translator.train.resume import resumable

TINY = tiny_config(seed=6, train={"max_steps": 2})


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


def test_test_files_may_change_on_resume_but_training_data_may_not():
    from translator.train.resume import resumable

    # eval alone reads the test split, so naming test files later continues the run
    assert resumable("data.test") and resumable("data.test.src") and resumable("data.test_split")
    assert not resumable("data.train.src") and not resumable("data.dev.tgt")
    assert not resumable("data.testing")
