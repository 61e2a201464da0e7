"""Data-parallel training: 2 CPU processes under torchrun with the gloo backend."""

import json
import os
import subprocess
import sys

import yaml
from util import tiny_config

from translator.engines.load import load_engine
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


def test_two_processes_match_one_process_with_twice_the_batch(tmp_path):
    ddp_dir, ddp, log = run(tmp_path, "ddp", 300, 2)
    # one process prepared the data; the other waited for it and mapped the same files
    assert log.count("training pairs kept") == 1, log[-3000:]
    prepared = list((tmp_path / "cache" / "prepared").glob("[!.]*"))  # not the lock file
    assert len(prepared) == 1 and not list(prepared[0].parent.glob(".*.tmp-*"))
    one_dir, one, log = run(tmp_path, "one", 600, 1)
    assert "training pairs kept" not in log  # the same data: prepared once, reused
    assert list((tmp_path / "cache" / "prepared").glob("[!.]*")) == prepared
    assert ddp["steps"] == one["steps"] == 40
    # The same number of target tokens per step, so the loss curves should agree closely.
    ddp_loss = dict((s, loss) for s, loss in ddp["losses"])
    one_loss = dict((s, loss) for s, loss in one["losses"])
    assert ddp_loss.keys() == one_loss.keys()
    late = [s for s in ddp_loss if s > 20]
    for step in late:
        assert abs(ddp_loss[step] - one_loss[step]) / one_loss[step] < 0.15, (step, ddp, one)
    assert ddp_loss[40] < ddp_loss[5]  # and it did learn
    # the checkpoint of the 2-process run loads and translates in one process
    translator = load_engine(str(ddp_dir / "last.pt"), "cpu")
    assert len(translator.translate(["Ein Hund läuft.", ""])) == 2
    assert (ddp_dir / "best.pt").is_file() and not list(ddp_dir.glob(".*.tmp"))
