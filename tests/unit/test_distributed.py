"""Data-parallel training: 2 CPU processes under torchrun with the gloo backend."""

import json
import os
import subprocess
import sys

import yaml
from util import tiny_config

from translator.train.distributed import Group, shard

TINY = tiny_config(
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


def test_shard_gives_every_rank_different_batches_and_the_same_count():
    batches = list(range(11))
    parts = [shard(batches, Group(rank=r, world=3)) for r in range(3)]
    assert [len(p) for p in parts] == [3, 3, 3]
    assert sorted(sum(parts, [])) == list(range(9))
    assert shard(batches, Group()) == batches


def run(tmp_path, name, batch_tokens, procs):
    cfg = {
        **TINY,
        "run_dir": str(tmp_path / name),
        "train": {**TINY["train"], "batch_tokens": batch_tokens},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "TRANSLATOR_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
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
        [*cmd, "train", "--config", str(path)], capture_output=True, text=True, env=env, timeout=900
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((tmp_path / name / "summary.json").read_text())
    return tmp_path / name, summary, result.stderr
