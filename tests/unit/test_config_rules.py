"""Keys that belong to another setting (another family, another schedule), the layers a
Transformer needs, and values in errors shown as YAML spells them."""

from __future__ import annotations

import logging

import pytest
from util import user_error

from translator.config import config_from_dict
from translator.config.load import read_yaml


def test_another_familys_key_warns_whenever_it_is_given(caplog):
    for value in ("true", "false"):  # the other family's default included
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            config_from_dict({}, "c.yaml", ["model.type=lstm", f"model.bidirectional={value}"])
        assert "key 'model.bidirectional' belongs to model.type bahdanau / luong" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        config_from_dict({"model": {"type": "lstm", "heads": 4}})
    assert "model.heads" in caplog.text


def test_a_flat_model_section_of_earlier_checkpoints_loads_quietly(caplog):
    from translator.models import family as families

    flat = {key: families.config_class(owners[0])().to_dict()[key]
            for key, owners in families.all_keys().items()}  # fmt: skip
    flat["type"] = "luong"
    with caplog.at_level(logging.WARNING):
        assert config_from_dict({"model": flat}).model.type == "luong"
    assert "belongs to" not in caplog.text


def test_warmup_share_under_inverse_sqrt_is_ignored_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        config_from_dict({}, "c.yaml", ["train.warmup_share=0.5"])
    assert "key 'train.warmup_share' belongs to train.lr_schedule linear / cosine" in caplog.text
    for schedule in ("linear", "cosine"):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            config_from_dict({"train": {"lr_schedule": schedule, "warmup_share": 0.5}})
        assert "warmup_share" not in caplog.text


def test_a_transformer_needs_a_decoder_layer_but_not_an_encoder_layer():
    message = user_error(config_from_dict, {"model": {"dec_layers": 0}}, "c.yaml")
    assert message.startswith("c.yaml: key 'model.dec_layers' must be at least 1")
    assert message.endswith("got 0")
    assert config_from_dict({"model": {"enc_layers": 0}}).model.enc_layers == 0


@pytest.mark.parametrize(
    "text, shown",
    [
        ("model: {type: null}", "key 'model.type' must be one of transformer, lstm, bahdanau, "
                                "luong, got null"),  # fmt: skip
        ("run_dir: r\nnull: 3", "unknown key 'null'"),
        ("train: {true: 3}", "unknown key 'train.true'"),
        ("run_dir: 2024-01-01", "key 'run_dir' must be a string, got 2024-01-01"),
        ("seed: !!binary aGVsbG8=", "got !!binary aGVsbG8="),
        ("train: {lr: {x: 3}}", "got {x: 3}"),
        ("data: {train: {src: ' ', tgt: b}}", "key 'data.train.src' must name a file, got ' '"),
        ("data: {directions: [en-de, en-fr], dataset: d}\ntokenizer: {joint: false}",
         "key 'tokenizer.joint' must be true for several directions (one vocabulary for all "
         "languages), got false"),
    ],
)  # fmt: skip
def test_values_and_keys_in_errors_are_spelt_as_yaml(text, shown):
    message = user_error(config_from_dict, read_yaml(text), "c.yaml")
    assert shown in message
    assert "None" not in message and "False" not in message and "datetime" not in message
    assert "b'" not in message


def test_a_date_is_shown_as_written():
    message = user_error(config_from_dict, read_yaml("seed: 2024-01-01"), "c.yaml")
    assert message.endswith("got 2024-01-01")
