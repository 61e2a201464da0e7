"""Inputs that pass the door must work: numbers out of range or not finite, device names,
files of our own formats with wrong contents and empty test sets are refused at the door
with one line that names the option, key or file (exit code 2)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch
from checkpoints import trained_checkpoint
from commandline import assert_success_or_one_error, run_cli
from util import tiny_config, user_error

from translator.config import config_from_dict
from translator.models.checkpoint import load_checkpoint, save_checkpoint


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return trained_checkpoint(tmp_path_factory.mktemp("door"))


def refused(capsys, *args) -> str:
    code, _, err = run_cli(capsys, *args)
    line = assert_success_or_one_error(code, err)
    assert line is not None, f"{args} was accepted"
    return line


@pytest.mark.parametrize("value", ["inf", "nan", "1e30", "-1"])
def test_max_len_a_that_is_not_a_finite_length_ratio_is_refused(capsys, checkpoint, value):
    line = refused(capsys, "translate", "--checkpoint", checkpoint, "--max-len-a", value, "Ein")
    assert "--max-len-a" in line


def test_max_len_a_zero_still_means_max_len_b_alone(capsys, checkpoint):
    args = ["--max-len-a", "0", "--max-len-b", "3", "Ein Hund läuft."]
    code, out, err = run_cli(capsys, "translate", "--checkpoint", checkpoint, *args)
    assert code == 0, err
    assert len(out.splitlines()) == 1


@pytest.mark.parametrize(
    "option, value",
    [
        ("--len-penalty", "nan"),
        ("--len-penalty", "inf"),
        ("--beam", "100000000000000000000"),
        ("--nbest", "100000"),
        ("--batch-size", "10000000000"),
    ],
)
def test_decoding_numbers_out_of_their_range_are_refused(capsys, checkpoint, option, value):
    line = refused(capsys, "translate", "--checkpoint", checkpoint, option, value, "Ein")
    assert option in line


@pytest.mark.parametrize("temperature", ["inf", "nan", "1e-300"])
def test_sampling_temperature_must_be_finite_and_in_range(capsys, checkpoint, temperature):
    args = ["--sampling", "topk:3", "--temperature", temperature, "Ein"]
    line = refused(capsys, "translate", "--checkpoint", checkpoint, *args)
    assert "--temperature" in line


def test_corpus_weight_inf_is_refused_at_load_naming_the_key():
    corpora = [{"dataset": "demo"}, {"dataset": "demo", "weight": float("inf")}]
    message = user_error(config_from_dict, tiny_config(data={"corpora": corpora}), "cfg.yaml")
    assert "cfg.yaml" in message and "'data.corpora[1].weight'" in message


@pytest.mark.parametrize(
    "section, key, value",
    [
        ("decode", "max_len_a", float("inf")),
        ("decode", "len_penalty", float("nan")),
        ("train", "max_minutes", float("inf")),
        ("train", "clip_norm", float("nan")),
        ("data", "max_len_ratio", float("inf")),
    ],
)
def test_config_numbers_must_be_finite(section, key, value):
    message = user_error(config_from_dict, tiny_config(**{section: {key: value}}), "cfg.yaml")
    assert f"'{section}.{key}'" in message


@pytest.mark.parametrize(
    "device, words",
    [("foo", "expected auto, cpu, cuda"), ("cuda:x", "expected auto"), ("GPU", "expected")],
)
def test_unknown_device_name_is_one_line(capsys, checkpoint, device, words):
    line = refused(capsys, "translate", "--checkpoint", checkpoint, "--device", device, "Ein")
    assert "--device" in line and words in line


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine without CUDA")
def test_cuda_device_without_cuda_is_one_line_naming_the_option(capsys, checkpoint):
    line = refused(capsys, "translate", "--checkpoint", checkpoint, "--device", "cuda:9", "Ein")
    assert "--device is 'cuda:9'" in line


def edited(checkpoint, tmp_path, change) -> str:
    ckpt = copy.deepcopy(load_checkpoint(checkpoint))
    change(ckpt)
    path = tmp_path / "edited.pt"
    save_checkpoint(path, ckpt)
    return str(path)


def first_weight(ckpt) -> str:
    return next(iter(ckpt["model"]))


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda c: c.__setitem__("model", [1, 2]), "key 'model' must map weight names"),
        (lambda c: c["model"].__setitem__(first_weight(c), 3), "not a tensor"),
        (lambda c: c["tokenizer"].__setitem__("tgt", 5), "key 'tokenizer.tgt'"),
        (
            lambda c: c["model"].__setitem__(first_weight(c), c["model"][first_weight(c)] * 0 / 0),
            "inf or nan",
        ),
        (lambda c: c["model"].__setitem__(first_weight(c), torch.zeros(3, 3)), "do not fit"),
    ],
)
@pytest.mark.parametrize("command", ["translate", "export", "average"])
def test_checkpoint_with_wrong_contents_is_one_line(
    capsys, checkpoint, tmp_path, change, words, command
):
    path = edited(checkpoint, tmp_path, change)
    args = {
        "translate": ["translate", "--checkpoint", path, "Ein"],
        "export": ["export", "--checkpoint", path, "--output", tmp_path / "out"],
        "average": ["average", "--checkpoint", path, "--checkpoint", checkpoint,
                    "--output", tmp_path / "avg.pt"],
    }[command]  # fmt: skip
    if command == "average" and words == "inf or nan":  # averaged as they are, then refused
        assert run_cli(capsys, *args)[0] == 0
        args = ["translate", "--checkpoint", path := tmp_path / "avg.pt", "Ein"]
    line = refused(capsys, *args)
    assert Path(path).name in line
    if command != "average":  # averaging compares shapes with the other file first
        assert words in line


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda m: m.__setitem__("quantization", 5), "key 'quantization'"),
        (lambda m: m.__setitem__("tokenizer", None), "key 'tokenizer'"),
        (lambda m: m["files"].__setitem__(next(iter(m["files"])), "12"), "key 'files'"),
    ],
)
def test_export_manifest_with_wrong_types_is_one_line(capsys, checkpoint, tmp_path, change, words):
    pytest.importorskip("ctranslate2")
    out = tmp_path / "ct2"
    assert run_cli(capsys, "export", "--checkpoint", checkpoint, "--output", out)[0] == 0
    manifest = json.loads((out / "manifest.json").read_text())
    change(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest))
    line = refused(capsys, "translate", "--checkpoint", out, "Ein")
    assert "manifest.json" in line and words in line


def test_empty_test_files_are_one_line_not_a_score(capsys, checkpoint, tmp_path):
    (tmp_path / "src.de").write_text("")
    (tmp_path / "ref.en").write_text("")
    args = ["--src", tmp_path / "src.de", "--ref", tmp_path / "ref.en"]
    line = refused(capsys, "eval", "--checkpoint", checkpoint, *args)
    assert "src.de" in line and "no sentences to score" in line


def test_empty_test_split_of_a_folder_is_one_line(capsys, checkpoint, tmp_path):
    for split in ("train", "dev", "test"):
        for lang in ("de", "en"):
            (tmp_path / f"{split}.{lang}").write_text("Ein Hund.\n" if split == "train" else "")
    line = refused(capsys, "eval", "--checkpoint", checkpoint, "--set", f"data.dir={tmp_path}")
    assert "test" in line and "no sentences to score" in line
