"""`--set` and the YAML it reads: a key that is no name, a list left at its default, a key
walked into that holds no section, and the keys a command that reads a checkpoint takes."""

from __future__ import annotations

from pathlib import Path

import pytest
from util import cli, user_error

from translator.config import config_from_dict, load_config
from translator.config.overrides import refuse_other_sections


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "k.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "text, line, kind",
    [
        ("run_dir: x\n? [a, b]\n: 2\n", 2, "a list"),
        ("run_dir: x\ntrain:\n  ? {a: 1}\n  : 2\n", 3, "a mapping"),
    ],
)
def test_a_yaml_key_that_is_a_list_or_a_mapping_names_its_line(tmp_path, text, line, kind):
    path = write(tmp_path, text)
    message = user_error(load_config, path)
    assert message.startswith(f"{path}: line {line}: ")
    assert f"a key must be a name, got {kind}" in message


def test_a_set_value_whose_key_is_a_list_is_refused():
    message = user_error(config_from_dict, {}, overrides=["train={? [a]: 1}"])
    assert message == "--set 'train={? [a]: 1}': a key must be a name, got a list"
    message = user_error(config_from_dict, {}, overrides=["train={lr: 1, lr: 2}"])
    assert "key 'lr' is given twice" in message


def test_an_index_into_a_list_at_its_default_starts_from_the_default():
    cfg = config_from_dict({}, overrides=["train.betas[0]=0.8"])
    assert list(cfg.train.betas) == [0.8, 0.98]
    cfg = config_from_dict({"train": {"lr": 0.1}}, overrides=["train.betas[1]=0.9"])
    assert list(cfg.train.betas) == [0.9, 0.9] and cfg.train.lr == 0.1
    message = user_error(config_from_dict, {}, overrides=["train.betas[2]=0.5"])
    assert "'train.betas' has 2 entries, numbered from 0" in message
    # a list key that is null has no entries to reach
    message = user_error(config_from_dict, {}, overrides=["data.corpora[0].weight=2"])
    assert "'data.corpora' is null and has no entries" in message and "whole list" in message


@pytest.mark.parametrize(
    "raw, assignment, key",
    [
        ({}, "train.lr.x=3", "train.lr"),
        ({"train": {"lr": 0.1}}, "train.lr.x=3", "train.lr"),
        ({}, "run_dir.x=3", "run_dir"),
        ({}, "train.max_minutes.x=3", "train.max_minutes"),
        ({}, "model.heads.x=1", "model.heads"),
        ({"model": {"type": "lstm"}}, "model.hidden_size.x=1", "model.hidden_size"),
    ],
)
def test_walking_into_a_key_that_is_no_section_says_so_whether_or_not_it_is_set(
    raw, assignment, key
):
    message = user_error(config_from_dict, raw, overrides=[assignment])
    assert message == f"--set '{assignment}': '{key}' is not a section"


def test_sections_left_out_are_still_made_on_the_way():
    cfg = config_from_dict({}, overrides=["data.test.src=t.de", "data.test.tgt=t.en"])
    assert (cfg.data.test.src, cfg.data.test.tgt) == ("t.de", "t.en")
    assert "unknown key 'nosuch'" in user_error(config_from_dict, {}, overrides=["nosuch.k=1"])


def test_a_command_that_takes_only_some_sections_refuses_the_others():
    refuse_other_sections(["data.test.src=a", "decode.beam=2"], ("data", "decode"), "eval")
    for assignment in ["model.type=lstm", "tokenizer.vocab_size=5", "train.max_steps=3",
                       "seed=3", "run_dir=x", "train[0]=1"]:  # fmt: skip
        message = user_error(refuse_other_sections, [assignment], ("data", "decode"), "eval")
        assert message.startswith(f"--set '{assignment}': eval applies only data.* and decode.*")


def test_eval_refuses_a_set_key_it_cannot_apply(tmp_path):
    checkpoint = tmp_path / "model.pt"
    checkpoint.write_bytes(b"")  # refused before the checkpoint is read
    result = cli("eval", "--checkpoint", str(checkpoint), "--set", "decode.beam=2",
                 "--set", "model.type=lstm", timeout=300)  # fmt: skip
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "'model.type=lstm': eval applies only data.* and decode.* keys" in lines[0]
