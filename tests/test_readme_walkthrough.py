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

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Train on your own data"
TINY = {
    "tokenizer": {"vocab_size": 500},
    "model": {"d_model": 32, "heads": 2, "enc_layers": 1, "dec_layers": 1, "ff_dim": 64},
    "train": {
        "max_steps": 200,
        "valid_every": 100,
        "save_every": 100,
        "batch_tokens": 1000,
        "warmup_steps": 20,
        "lr": 0.005,
        "threads": 1,
        "dtype": "fp32",
    },
    "decode": {"batch_size": 16},
}


def walkthrough_commands(readme: str) -> list[str]:
    """The commands of the section's ```sh blocks, continuation lines joined."""
    start = readme.index(SECTION)
    end = readme.find("\n## ", start + len(SECTION))
    section = readme[start : end if end >= 0 else None]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    commands = []
    for block in blocks:
        text = re.sub(r"\\\n\s*", "", block)
        commands += [line.strip() for line in text.splitlines() if line.strip()]
    return commands


def test_walkthrough_is_parsed_from_readme():
    commands = walkthrough_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    verbs = [c.split()[1] for c in commands if c.startswith("translator ")]
    # train comes first; eval, translate, export and serve all appear after it
    assert verbs[0] == "train", commands
    assert {"eval", "translate", "export", "serve"} <= set(verbs[1:]), commands
    assert any(c.startswith("curl ") for c in commands), commands


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
    assert [json.loads(line)["step"] for line in lines] == [100, 200]

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
