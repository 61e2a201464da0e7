"""Tests for translator.data.prepare: the prepared (memory-mapped) training data gives the
same batches as the in-memory path, is reused while current and rebuilt when not, and is
never left half-written by a crash, a full disk or two prepares at once."""

from __future__ import annotations

import os
import subprocess
import sys

import yaml
from corpora import corpus_folder
from util import tiny_config


def test_two_prepares_at_once_build_once_and_agree(tmp_path):
    folder = corpus_folder(tmp_path / "d")
    cfg = tiny_config(
        run_dir=str(tmp_path / "run"),
        data={"dir": str(folder), "prepared_dir": str(tmp_path / "p"), "workers": 1},
        tokenizer={"vocab_size": 500},
    )
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    cmd = [sys.executable, "-m", "translator", "prepare", "--config", str(path)]
    env = {"TRANSLATOR_CACHE": str(tmp_path / "cache")}
    procs = [
        subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **env},
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    built = sum("training pairs kept" in err for _, err in outs)
    assert built == 1, outs  # one of them waited for the other and reused its work
    assert all(str(tmp_path / "p") in out for out, _ in outs)
    assert not list(tmp_path.glob(".p.tmp-*"))
