"""Faults and hostile input: signals during training, kills during checkpoint writes,
mismatched checkpoints, over-long input, and random bytes for the loaders."""

import os
import signal
import subprocess
import sys
import time

import pytest
import torch
import yaml
from checkpoints import WRITER
from training import FAULTS_TINY as TINY

from translator.errors import UserError
from translator.models.checkpoint import load_checkpoint, save_checkpoint


def start_training(tmp_path, extra_args=()):
    cfg = {**TINY, "run_dir": str(tmp_path / "run")}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "TRANSLATOR_CACHE": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "translator", "train", "--config", str(path), *extra_args]
    return (
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env),
        path,
        env,
    )


def wait_for_steps(proc, seconds=120):
    """Read stderr until a training log line has come, so training is really under way
    (stderr is a pipe, so progress comes as plain lines)."""
    deadline, seen = time.time() + seconds, ""
    while time.time() < deadline:
        chunk = proc.stderr.read(200) if proc.stderr else ""
        seen += chunk
        if "target tokens/s" in seen:
            return seen
        if proc.poll() is not None:
            break
    raise AssertionError(f"training did not start: {seen[-500:]}")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_saves_last_checkpoint_and_resume_continues(tmp_path, sig, here):
    proc, cfg_path, env = start_training(tmp_path)
    wait_for_steps(proc)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    assert "interrupted by" in out
    last = tmp_path / "run" / "last.pt"
    step = load_checkpoint(last)["train_state"]["progress"]["step"]
    assert step > 0
    resumed = here(  # in this process: the signal's part is done
        "train", "--config", str(cfg_path), "--resume", "--set", f"train.max_steps={step + 3}",
        env_extra={"TRANSLATOR_CACHE": env["TRANSLATOR_CACHE"]},
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"resumed from step {step}" in resumed.stderr
    assert load_checkpoint(last)["train_state"]["progress"]["step"] == step + 3


def test_kill_during_checkpoint_write_leaves_a_loadable_checkpoint(tmp_path):
    path = tmp_path / "last.pt"
    save_checkpoint(path, {"model": {"w": torch.zeros(3)}, "n": 0})
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    proc.stdout.readline()  # at least one full write done; the next is under way
    time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    ckpt = load_checkpoint(path)
    assert ckpt["n"] >= 1
    assert torch.all(ckpt["model"]["w"] == float(ckpt["n"]))  # one whole write, not a mix


def test_checkpoint_with_another_tokenizer_is_a_user_error(tmp_path):
    from translator.config import TokenizerConfig
    from translator.data.tokenizer import Tokenizer
    from translator.models.checkpoint import Checkpoint

    def build_from_checkpoint(payload, where):
        return Checkpoint.from_payload(payload).build(where)

    proc, _, _ = start_training(tmp_path)
    wait_for_steps(proc)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    ckpt = load_checkpoint(tmp_path / "run" / "last.pt")
    build_from_checkpoint(ckpt, "last.pt")  # the real pair loads
    other = Tokenizer.train(
        [("a b c", "x y z")] * 50 + [("Hallo", "hello")] * 50, TokenizerConfig(vocab_size=300), 1
    )
    trained_with = ckpt["tokenizer"]["sha256"]
    ckpt["tokenizer"] = other.state()  # another tokenizer, with its own fingerprint
    with pytest.raises(UserError) as err:
        build_from_checkpoint(ckpt, "last.pt")
    assert "tokenizer" in str(err.value)
    ckpt["tokenizer"] = {**other.state(), "sha256": trained_with}  # swapped model bytes
    with pytest.raises(UserError) as err:
        build_from_checkpoint(ckpt, "last.pt")
    assert "fingerprint" in str(err.value)


def test_unwritable_run_dir_is_a_user_error(tmp_path, here):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")  # works as root too, unlike file permissions
    cfg = {**TINY, "run_dir": str(blocker / "run"), "train": {**TINY["train"], "max_steps": 2}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    result = here(
        "train", "--config", str(path), env_extra={"TRANSLATOR_CACHE": str(tmp_path / "cache")}
    )
    assert result.returncode == 2
    assert "run_dir" in result.stderr and "cannot be created" in result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1
