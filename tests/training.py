"""Training runs the tests start: the tiny configs of each topic (each says what its sizes
are for), trainers in a temporary folder, torchrun with 2 CPU processes, and what a run
leaves behind (validations.jsonl, summary.json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml
from util import tiny_config

from translator.config import config_from_dict

# -- configs ------------------------------------------------------------------------------------

# train.ema_decay: validations and best.pt at the last of 4 steps
EMA = tiny_config(seed=5, train={"max_steps": 4, "valid_every": 4, "ema_decay": 0.9})

# the training loop's guards (out-of-memory retries, non-finite losses): 4 short steps
TRAIN_TINY = tiny_config(seed=5, train={"max_steps": 4, "batch_tokens": 600, "warmup_steps": 2})

# validations at steps 2 and 4, log lines at 2 and 4, last.pt at 2 and 4
LOGS_TINY = tiny_config(
    seed=3, train={"max_steps": 4, "log_every": 2, "valid_every": 2, "save_every": 2}
)

# train, resume, eval and translate end to end through the real CLI
PIPELINE_TINY = tiny_config(seed=3, data={"demo_dev": 20, "demo_test": 20}, model={"dropout": 0.2})

# data-parallel training: enough data that 2 processes each see different batches
DISTRIBUTED_TINY = tiny_config(
    seed=4,
    data={"demo_train": 600, "demo_dev": 16, "demo_test": 16},
    tokenizer={"vocab_size": 500},
    model={"d_model": 48, "ff_dim": 96},
    train={
        "max_steps": 40,
        "lr": 0.002,
        "warmup_steps": 10,
        "valid_every": 20,
        "save_every": 20,
        "log_every": 5,
        "patience": 0,
    },
)

# --resume of a 2-step run
RESUME_TINY = tiny_config(seed=6, train={"max_steps": 2})

# --resume under torchrun: dropout and the moving average make each rank's own state matter
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

# signals and kills during training: a run that goes on until it is stopped
FAULTS_TINY = tiny_config(
    seed=2,
    data={"demo_train": 200},
    model={"dropout": 0.1},
    train={"max_steps": 100000, "valid_every": 100000, "save_every": 100000, "log_every": 1},
)


# -- trainers and processes ---------------------------------------------------------------------


def tiny_trainer(tmp_path, name):
    """A Trainer of TRAIN_TINY writing to tmp_path/name."""
    from translator.train.trainer import Trainer

    return Trainer(config_from_dict({**TRAIN_TINY, "run_dir": str(tmp_path / name)}))


def two_step_trainer(tmp_path, **kwargs):
    """A Trainer of the tiny config for 2 steps, writing to tmp_path/run."""
    from translator.train.trainer import Trainer

    cfg = config_from_dict(tiny_config(run_dir=str(tmp_path / "run"), train={"max_steps": 2}))
    return Trainer(cfg, **kwargs)


def _environment(tmp_path) -> dict:
    # torchrun's agent leaves a folder in TMPDIR: it goes into the test's own
    env = {**os.environ, "TRANSLATOR_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    return {**env, "TMPDIR": str(tmp_path)}


def train_processes(tmp_path, name, batch_tokens, procs):
    """`translator train` of DISTRIBUTED_TINY in tmp_path/name, as one process or under
    torchrun with `procs`; (run folder, summary.json, stderr)."""
    cfg = {
        **DISTRIBUTED_TINY,
        "run_dir": str(tmp_path / name),
        "train": {**DISTRIBUTED_TINY["train"], "batch_tokens": batch_tokens},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    if procs == 1:
        cmd = [sys.executable, "-m", "translator"]
    else:
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc_per_node={procs}",
            "-m",
            "translator",
        ]
    result = subprocess.run(
        [*cmd, "train", "--config", str(path)],
        capture_output=True,
        text=True,
        env=_environment(tmp_path),
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((tmp_path / name / "summary.json").read_text())
    return tmp_path / name, summary, result.stderr


def torchrun(tmp_path, run_dir, max_steps, resume=False):
    """DDP trained by 2 processes under torchrun to `max_steps` (resumed when asked); the
    Checkpoint of its last.pt."""
    from translator.models.checkpoint import Checkpoint

    path = tmp_path / "ddp.yaml"
    path.write_text(yaml.safe_dump({**DDP, "run_dir": str(run_dir)}))
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    args = ["-m", "translator", "train", "--config", str(path)]
    args += ["--set", f"train.max_steps={max_steps}"] + (["--resume"] if resume else [])
    result = subprocess.run(
        [*cmd, *args], capture_output=True, text=True, env=_environment(tmp_path), timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return Checkpoint.load(run_dir / "last.pt")


# -- what a run leaves ----------------------------------------------------------------------------


def validations(run_dir) -> list[dict]:
    """RUN/validations.jsonl, one dict a validation."""
    return [json.loads(line) for line in (run_dir / "validations.jsonl").read_text().splitlines()]


def summary(steps=100, minutes=None, losses=True):
    """A summary.json of `steps` steps with validations at 50 and 100 (their minutes when
    given) and, unless losses is False, a loss every 10 steps."""
    validations = [
        {"step": s, "dev_loss": 3.0 - s / 100, "dev_bleu": s / 10, "seconds": 60.0}
        for s in (50, 100)
    ]
    if minutes is not None:
        for v, m in zip(validations, minutes):
            v["minutes"] = m
    out = {"steps": steps, "train_minutes": 10.0, "wall_minutes": 12.0, "validations": validations}
    if losses:
        out["losses"] = [[s, 5.0 - s / 50] for s in range(10, steps + 1, 10)]
    return out
