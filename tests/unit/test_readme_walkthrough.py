"""README's "Train on your own data" run as written: its shell blocks, command by command,
on a tiny generated corpus under the file names README uses. Only the config is shrunk
(a copy of configs/transformer.yaml with tiny sizes and a few steps, at the same relative
path) and the server's port is a free one; everything else is README's text."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
