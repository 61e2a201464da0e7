"""README's "Train on your own data" run as written: its shell blocks, command by command,
on a tiny generated corpus under the file names README uses. Only the config is shrunk
(a copy of configs/transformer.yaml with tiny sizes and a few steps, at the same relative
path) and the server's port is a free one; everything else is README's text."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from project import WALKTHROUGH_TINY as TINY
from project import walkthrough_commands
from util import ROOT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_corpus(folder: Path) -> dict[str, list[str]]:
    """data/corpus.{de,en}, data/dev.*, data/test.* from the demo generator."""
    from translator.data.demo import demo_splits

    splits = demo_splits(300, 20, 12, seed=3)
    names = {"train": "corpus", "dev": "dev", "test": "test"}
    (folder / "data").mkdir()
    for split, pairs in splits.items():
        for side, lang in ((0, "de"), (1, "en")):
            lines = "".join(pair[side] + "\n" for pair in pairs)
            (folder / "data" / f"{names[split]}.{lang}").write_text(lines, encoding="utf-8")
    return {"test": [s for s, _ in splits["test"]]}


def _tiny_config(folder: Path) -> None:
    cfg = yaml.safe_load((ROOT / "configs" / "transformer.yaml").read_text(encoding="utf-8"))
    for section, keys in TINY.items():
        cfg[section].update(keys)
    (folder / "configs").mkdir()
    (folder / "configs" / "transformer.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")


def test_readme_own_data_walkthrough(tmp_path):
    if not _has("ctranslate2") or not _has("fastapi") or not _has("uvicorn"):
        pytest.skip("the walkthrough needs the ctranslate2 and serve extras (make install)")
    commands = walkthrough_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    corpus = _write_corpus(tmp_path)
    _tiny_config(tmp_path)
    port = str(_free_port())
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    outputs, server = {}, None
    try:
        for command in commands:
            command = command.replace("8000", port)
            print(f"$ {command}", flush=True)
            if command.endswith("&"):
                server = subprocess.Popen(
                    ["bash", "-c", command[:-1]], cwd=tmp_path, env=env, start_new_session=True
                )
                continue
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            print(done.stdout + done.stderr[-2000:], flush=True)
            assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"
            outputs[command] = done.stdout
    finally:
        if server is not None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)

    run = tmp_path / "runs" / "mine"
    for name in ("best.pt", "last.pt", "train.log", "validations.jsonl", "ct2/model.bin"):
        assert (run / name).is_file(), name
    lines = (run / "validations.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["step"] for line in lines] == [30, 60]

    def output_of(verb: str, contains: str = "") -> str:
        return next(o for c, o in outputs.items() if c.startswith(verb) and contains in c)

    assert re.search(r"BLEU \d+\.\d+", output_of("translator eval"))
    # one line for the one sentence (a model this small may translate it as nothing)
    assert output_of("translator translate", "Ein Hund").count("\n") == 1
    hyps = (run / "test.hyp.en").read_text(encoding="utf-8").splitlines()
    assert len(hyps) == len(corpus["test"])
    answer = json.loads(output_of("curl", "/translate"))
    assert len(answer["translations"]) == 1 and isinstance(answer["translations"][0], str)


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
