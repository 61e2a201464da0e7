"""README's "Train on your own data" run as written: its shell blocks, command by command,
on a tiny generated corpus under the file names README uses. Only the config is shrunk
(a copy of configs/transformer.yaml with tiny sizes and a few steps, at the same relative
path) and the server's port is a free one; everything else is README's text."""

from __future__ import annotations

from project import walkthrough_commands
from util import ROOT


def test_walkthrough_is_parsed_from_readme():
    commands = walkthrough_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    verbs = [c.split()[1] for c in commands if c.startswith("translator ")]
    # train comes first; eval, translate, export and serve all appear after it
    assert verbs[0] == "train", commands
    assert {"eval", "translate", "export", "serve"} <= set(verbs[1:]), commands
    assert any(c.startswith("curl ") for c in commands), commands
