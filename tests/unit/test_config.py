"""Tests for translator.config: YAML and --set in, typed and validated Config out; every
mistake is a one-line UserError that names the key and where it came from."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from util import user_error

from translator.config import (
    Config,
    config_from_dict,
    load_config,
    save_config,
)
from translator.models import family as families

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def write(tmp_path: Path, text: str, name: str = "cfg.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def write_yaml(tmp_path: Path, data, name: str = "cfg.yaml") -> Path:
    return write(tmp_path, yaml.safe_dump(data, sort_keys=False), name)


def get(cfg: Config, key: str):
    obj = cfg
    for part in key.split("."):
        obj = getattr(obj, part)
    return obj


# -- valid files ------------------------------------------------------------------------------


def test_valid_yaml_loads_into_typed_values(tmp_path):
    path = write(
        tmp_path,
        """
run_dir: runs/x
seed: 3
data:
  dir: null
  src_lang: fr
  tgt_lang: en
model:
  type: lstm
  hidden_size: 64
  reverse_source: false
train:
  lr: 1            # an integer where a float is expected
  max_minutes: 2   # float | None given an integer
  betas: [0, 0.5]
decode:
  beam: 2
""",
    )
    cfg = load_config(path)
    assert isinstance(cfg, Config)
    assert cfg.run_dir == "runs/x" and cfg.seed == 3
    assert cfg.data.dir is None and cfg.data.src_lang == "fr"
    assert cfg.model.type == "lstm" and cfg.model.hidden_size == 64
    assert cfg.model.reverse_source is False
    assert cfg.train.lr == 1.0 and type(cfg.train.lr) is float
    assert cfg.train.max_minutes == 2.0 and type(cfg.train.max_minutes) is float
    assert cfg.train.betas == [0.0, 0.5] and all(type(b) is float for b in cfg.train.betas)
    assert cfg.decode.beam == 2 and type(cfg.decode.beam) is int
    # keys the file does not mention keep their defaults
    assert cfg.train.warmup_steps == Config().train.warmup_steps
    assert cfg.tokenizer == Config().tokenizer


def test_empty_file_and_empty_mapping_give_the_defaults(tmp_path):
    assert load_config(write(tmp_path, "run_dir: runs/demo\n")) == Config()
    assert config_from_dict({}) == Config()
    assert config_from_dict(None) == Config()


@pytest.mark.parametrize("name", sorted(p.name for p in CONFIGS.glob("*.yaml")))
def test_shipped_configs_load_with_the_values_they_state(name):
    path = CONFIGS / name
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    loaded = load_config(path).to_dict()  # nested sections (data.train: {src, tgt}) as mappings
    for key, value in raw.items():
        if isinstance(value, dict):
            for sub, subvalue in value.items():
                assert loaded[key][sub] == subvalue, f"{key}.{sub}"
        else:
            assert loaded[key] == value, key


@pytest.mark.parametrize("name", ["multi30k_transformer.yaml", "multi30k_transformer_align.yaml"])
def test_the_multi30k_transformer_recipes_export_to_hugging_face(name):
    from translator.pretrained.export_hf import M2M100, hf_class

    assert hf_class(load_config(CONFIGS / name).model) == M2M100


@pytest.mark.parametrize(
    "text, expected",
    [("1e-3", 1e-3), ("5E-4", 5e-4), ("1.0e3", 1000.0), ("2e+2", 200.0), ("-1.5e-2", None)],
)
def test_exponent_notation_is_a_number(tmp_path, text, expected):
    # PyYAML (YAML 1.1) reads 1e-3 as a string; a float key must still accept it.
    if expected is None:  # negative: parsed as a number, then refused as impossible
        message = user_error(load_config, write(tmp_path, f"train:\n  lr: {text}\n"))
        assert "train.lr" in message and "greater than 0" in message
        return
    assert load_config(write(tmp_path, f"run_dir: r\ntrain:\n  lr: {text}\n")).train.lr == expected
    assert config_from_dict({}, overrides=[f"train.lr={text}"]).train.lr == expected


def test_exponent_notation_is_still_not_an_integer(tmp_path):
    message = user_error(load_config, write(tmp_path, "train:\n  max_steps: 1e5\n"))
    assert "train.max_steps" in message and "integer" in message


def test_a_number_is_taken_as_a_string_but_a_string_is_not_taken_as_a_number(tmp_path):
    cfg = load_config(write(tmp_path, "run_dir: 2024\ndata:\n  test_split: 2016\n"))
    assert (cfg.run_dir, cfg.data.test_split) == ("2024", "2016")
    message = user_error(load_config, write(tmp_path, 'decode:\n  beam: "5"\n'))
    assert "decode.beam" in message and "an integer in [1, 1000]" in message
    message = user_error(load_config, write(tmp_path, "data:\n  dedupe: 1\n"))
    assert "data.dedupe" in message and "true or false" in message


# -- unknown keys and wrong types -------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, bad, suggestion",
    [
        ({"train": {"lrr": 0.1}}, "train.lrr", "train.lr"),
        ({"model": {"d_modle": 64}}, "model.d_modle", "model.d_model"),
        ({"sed": 3}, "sed", "seed"),
        ({"decode": {"beams": 3}}, "decode.beams", "decode.beam"),
    ],
)
def test_unknown_key_names_key_file_and_closest_valid_key(tmp_path, raw, bad, suggestion):
    path = write_yaml(tmp_path, raw)
    message = user_error(load_config, path)
    assert f"'{bad}'" in message
    assert str(path) in message
    assert f"did you mean '{suggestion}'" in message


def test_unknown_key_without_a_close_match_has_no_suggestion(tmp_path):
    path = write_yaml(tmp_path, {"train": {"zzzzqqq": 1}})
    message = user_error(load_config, path)
    assert "train.zzzzqqq" in message and str(path) in message
    assert "did you mean" not in message


def test_an_unknown_key_with_a_newline_in_it_is_quoted_on_one_line(tmp_path):
    path = write_yaml(tmp_path, {"run_dir": "r", "data": {"bad\nkey\x1b": None}})
    message = user_error(load_config, path)  # user_error requires one line, no escape codes
    assert "data.bad\\nkey\\x1b" in message


@pytest.mark.parametrize(
    "section, key, value, expected",
    [
        ("train", "lr", "fast", "a number"),
        ("model", "d_model", 1.5, "an integer"),
        ("train", "max_steps", True, "an integer"),
        ("train", "lr", True, "a number"),
        ("model", "pre_norm", "yes please", "true or false"),
        ("data", "src_lang", None, "a string"),
        ("data", "src_lang", [1, 2], "a string"),
        ("train", "betas", 0.9, "a list"),
        ("train", "betas", [0.9, "x"], "a number"),
    ],
)
def test_wrong_type_names_key_and_file(tmp_path, section, key, value, expected):
    path = write_yaml(tmp_path, {section: {key: value}})
    message = user_error(load_config, path)
    assert f"{section}.{key}" in message
    assert str(path) in message
    assert expected in message


def test_nested_section_given_as_a_scalar_is_an_error(tmp_path):
    path = write(tmp_path, "train: 5\n")
    message = user_error(load_config, path)
    assert "'train'" in message and str(path) in message and "mapping" in message


def test_top_level_not_a_mapping_is_an_error(tmp_path):
    path = write(tmp_path, "- a\n- b\n")
    message = user_error(load_config, path)
    assert str(path) in message and "mapping" in message
    user_error(config_from_dict, [1, 2])


# -- unreadable files -------------------------------------------------------------------------


@pytest.mark.parametrize("bad_line", ["  data: 3", "\tdata: 3"])
def test_not_yaml_names_the_file_and_line(tmp_path, bad_line):
    lines = ["seed: 1", "run_dir: x", bad_line, "model:", "  type: lstm"]
    path = write(tmp_path, "\n".join(lines) + "\n")
    message = user_error(load_config, path)
    assert str(path) in message
    assert f"line {lines.index(bad_line) + 1}" in message
    assert "YAML" in message


def test_not_utf8_names_the_file(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_bytes(b"run_dir: \xff\xfe\x00runs\n")
    message = user_error(load_config, path)
    assert str(path) in message


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    message = user_error(load_config, path)
    assert str(path) in message and "not found" in message
    # a folder is not a config file either
    assert str(tmp_path) in user_error(load_config, tmp_path)


# -- impossible values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, key, words",
    [
        ({"train": {"lr": -0.001}}, "train.lr", "greater than 0"),
        ({"train": {"lr": 0}}, "train.lr", "greater than 0"),
        ({"decode": {"beam": 0}}, "decode.beam", "an integer in [1, 1000]"),
        ({"train": {"max_minutes": 0}}, "train.max_minutes", "a number in (0, 1000000]"),
        ({"train": {"warmup_steps": -1}}, "train.warmup_steps", "negative"),
        ({"train": {"label_smoothing": 1.0}}, "train.label_smoothing", "[0, 1)"),
        ({"model": {"dropout": -0.1}}, "model.dropout", "[0, 1)"),
        ({"model": {"d_model": 130, "heads": 4}}, "model.d_model", "divisible"),
        ({"tokenizer": {"model_type": "wordpiece"}}, "tokenizer.model_type", "unigram"),
        ({"train": {"device": "tpu"}}, "train.device", "cpu"),
        ({"train": {"dtype": "fp8"}}, "train.dtype", "bf16"),
        ({"train": {"best_by": "chrf"}}, "train.best_by", "bleu or loss"),
        ({"train": {"betas": [0.9]}}, "train.betas", "two numbers"),
        ({"data": {"src_lang": "en", "tgt_lang": "en"}}, "data.tgt_lang", "differ"),
    ],
)
def test_impossible_values_are_errors(tmp_path, raw, key, words):
    path = write_yaml(tmp_path, raw)
    message = user_error(load_config, path)
    assert f"'{key}'" in message and str(path) in message and words in message


def test_unknown_model_type_lists_the_valid_ones(tmp_path):
    path = write_yaml(tmp_path, {"model": {"type": "gru"}})
    message = user_error(load_config, path)
    assert "model.type" in message and "'gru'" in message and str(path) in message
    for name in families.names():
        assert name in message


def test_divisibility_is_only_required_of_the_transformer():
    assert config_from_dict({"model": {"type": "lstm", "d_model": 130, "heads": 4}})
    message = user_error(
        config_from_dict, {"model": {"type": "transformer", "d_model": 130, "heads": 4}}
    )
    assert "model.d_model" in message and "divisible" in message


def test_each_family_reads_its_own_typed_section():
    for name in families.names():
        section = config_from_dict({"model": {"type": name}}).model
        assert isinstance(section, families.config_class(name)) and section.type == name
    lstm = config_from_dict({"model": {"type": "lstm"}}).model
    assert not hasattr(lstm, "d_model") and not hasattr(lstm, "attention_score")
    luong = config_from_dict({"model": {"type": "luong", "attention_score": "dot"}}).model
    assert luong.attention_score == "dot" and not hasattr(luong, "heads")
    # a key no family has is still an error that names the key
    message = user_error(config_from_dict, {"model": {"type": "luong", "hiden_size": 8}})
    assert "model.hiden_size" in message and "hidden_size" in message


def test_another_familys_key_is_ignored_with_a_warning_when_set(caplog):
    with caplog.at_level("WARNING"):
        cfg = config_from_dict({"model": {"type": "lstm", "d_model": 128, "heads": 4}})
    assert cfg.model.type == "lstm"
    assert "model.d_model" in caplog.text and "transformer" in caplog.text
    assert "model.heads" in caplog.text  # at the transformer's default, but given all the same


def test_attention_as_products_on_a_recurrent_model_is_ignored_with_a_warning(caplog):
    with caplog.at_level("WARNING"):
        config_from_dict({"model": {"type": "transformer"}, "train": {"attention": "products"}})
    assert "train.attention" not in caplog.text
    with caplog.at_level("WARNING"):
        config_from_dict({"model": {"type": "lstm"}, "train": {"attention": "products"}})
    assert "'train.attention' is the Transformer's; model.type lstm ignores it" in caplog.text


def test_a_saved_flat_model_section_of_earlier_versions_still_loads():
    flat = {
        "type": "luong", "d_model": 256, "heads": 4, "ff_dim": 1024, "pre_norm": True,
        "attention_dropout": 0.0, "embed_dim": 32, "hidden_size": 48, "rnn_type": "gru",
        "bidirectional": True, "reverse_source": True, "attention_score": "concat",
        "input_feeding": False, "enc_layers": 1, "dec_layers": 1, "dropout": 0.3,
        "tie_embeddings": True, "max_positions": 1024,
    }  # fmt: skip
    cfg = config_from_dict({"model": flat}).model
    assert (cfg.hidden_size, cfg.rnn_type, cfg.attention_score) == (48, "gru", "concat")
    assert config_from_dict(Config(model=cfg).to_dict()).model == cfg


def test_a_family_rule_names_the_key_and_the_file(tmp_path):
    path = write_yaml(
        tmp_path, {"run_dir": "r", "model": {"type": "luong", "attention_score": "x"}}
    )
    message = user_error(load_config, path)
    assert "model.attention_score" in message and str(path) in message
    path = write_yaml(tmp_path, {"run_dir": "r", "model": {"type": "bahdanau", "enc_layers": 0}})
    assert "model.enc_layers" in user_error(load_config, path)


def test_max_minutes_null_means_no_limit(tmp_path):
    path = write(tmp_path, "run_dir: r\ntrain:\n  max_minutes: null\n")
    assert load_config(path).train.max_minutes is None


# -- --set overrides --------------------------------------------------------------------------


def test_set_overrides_win_over_the_file(tmp_path):
    path = write_yaml(tmp_path, {"run_dir": "r", "seed": 5, "train": {"lr": 0.1, "max_steps": 10}})
    cfg = load_config(path, overrides=["train.lr=0.25", "seed=9"])
    assert cfg.train.lr == 0.25 and cfg.seed == 9
    assert cfg.train.max_steps == 10  # untouched keys of the file survive
    # the later of two assignments to one key wins
    assert load_config(path, overrides=["seed=2", "seed=4"]).seed == 4


@pytest.mark.parametrize(
    "assignment, key, expected, kind",
    [
        ("train.max_steps=200", "train.max_steps", 200, int),
        ("train.lr=0.002", "train.lr", 0.002, float),
        ("train.lr=3", "train.lr", 3.0, float),
        ("model.pre_norm=false", "model.pre_norm", False, bool),
        ("model.tie_embeddings=true", "model.tie_embeddings", True, bool),
        ("train.max_minutes=null", "train.max_minutes", None, type(None)),
        ("train.max_minutes=", "train.max_minutes", None, type(None)),
        ("data.dir=~", "data.dir", None, type(None)),
        ("data.dir=/data/my corpus", "data.dir", "/data/my corpus", str),
        ("data.src_lang=fr", "data.src_lang", "fr", str),
        ("run_dir=123", "run_dir", "123", str),
        ("train.betas=[0.8, 0.9]", "train.betas", [0.8, 0.9], list),
        (" train.lr = 0.5 ", "train.lr", 0.5, float),
    ],
)
def test_set_values_are_parsed_as_yaml_scalars(tmp_path, assignment, key, expected, kind):
    path = write_yaml(tmp_path, {"run_dir": "r", "train": {"max_minutes": 7}, "data": {"dir": "x"}})
    value = get(load_config(path, overrides=[assignment]), key)
    assert value == expected
    assert type(value) is kind


def test_set_value_of_the_wrong_type_is_an_error(tmp_path):
    path = write_yaml(tmp_path, {})
    message = user_error(load_config, path, overrides=["train.max_steps=lots"])
    assert "train.max_steps" in message and "--set" in message and str(path) in message


def test_unknown_key_in_set_mentions_set(tmp_path):
    path = write_yaml(tmp_path, {})
    message = user_error(load_config, path, overrides=["train.lrr=0.1"])
    assert "--set" in message and "train.lrr" in message
    assert "did you mean 'train.lr'" in message
    message = user_error(config_from_dict, {}, overrides=["nosuch.key=1"])
    assert "--set" in message and "nosuch" in message


def test_a_wrong_value_is_shown_as_yaml_spells_it(tmp_path):
    path = write_yaml(tmp_path, {"train": {"max_steps": True}})
    assert user_error(load_config, path).endswith("got true")
    path = write_yaml(tmp_path, {"train": {"lr": None}})
    assert user_error(load_config, path).endswith("got null")
    path = write_yaml(tmp_path, {"train": {"lr": "fast"}})
    assert user_error(load_config, path).endswith("got 'fast'")


def test_a_mistake_of_the_files_own_is_not_blamed_on_set(tmp_path):
    path = write_yaml(tmp_path, {"train": {"lrr": 0.1}})
    message = user_error(load_config, path, overrides=["run_dir=runs/x"])
    assert message.startswith(f"{path}: unknown key 'train.lrr'") and "--set" not in message
    path = write_yaml(tmp_path, {"model": {"d_model": 30, "heads": 4}})  # fixed by --set
    message = user_error(load_config, path, overrides=["model.heads=2", "train.lrx=1"])
    assert "(with --set): unknown key 'train.lrx'" in message


def test_set_without_equals_is_an_error():
    message = user_error(config_from_dict, {}, overrides=["train.lr"])
    assert "--set" in message and "train.lr" in message and "KEY=VALUE" in message


def test_set_into_a_scalar_is_an_error():
    message = user_error(config_from_dict, {"train": {"lr": 0.1}}, overrides=["train.lr.x=1"])
    assert "--set" in message and "train.lr.x" in message and "section" in message
    # not in the file: the key then holds a mapping where a number belongs
    message = user_error(config_from_dict, {}, overrides=["train.lr.x=1"])
    assert "--set" in message and "train.lr" in message
    message = user_error(config_from_dict, {"seed": 3}, overrides=["seed.x=1"])
    assert "--set" in message and "seed" in message


def test_set_reaches_into_a_list_entry_by_its_index(tmp_path):
    corpus = lambda name: {"train": {"src": f"{name}.de", "tgt": f"{name}.en"}}  # noqa: E731
    raw = {"data": {"corpora": [corpus("a"), corpus("b")]}}
    cfg = config_from_dict(raw, overrides=["data.corpora[1].weight=3", "data.corpora[0].tag=<x>"])
    assert [c.weight for c in cfg.data.corpora] == [1.0, 3.0]
    assert cfg.data.corpora[0].tag == "<x>" and cfg.data.corpora[1].tag is None
    assert cfg.data.corpora[1].train.src == "b.de"  # the rest of the entry stays
    assert raw["data"]["corpora"][1] == corpus("b")  # (the caller's mapping is not touched)
    # a key inside an entry's section, and an entry of a list of plain values
    cfg = config_from_dict(raw, overrides=["data.corpora[0].train.src=c.de"])
    assert cfg.data.corpora[0].train.src == "c.de" and cfg.data.corpora[0].train.tgt == "a.en"
    cfg = config_from_dict({"train": {"betas": [0.9, 0.98]}}, overrides=["train.betas[1]=0.999"])
    assert list(cfg.train.betas) == [0.9, 0.999]
    # an entry that is not there, a key that is not a list, a key that is no key
    message = user_error(config_from_dict, raw, overrides=["data.corpora[2].weight=3"])
    assert "'data.corpora' has 2 entries, numbered from 0" in message
    assert "data.corpora[2].weight" in message and "set the whole list" in message
    message = user_error(config_from_dict, raw, overrides=["train[0].lr=1"])
    assert "'train' is not a list" in message
    message = user_error(config_from_dict, raw, overrides=["data.corpora[x].weight=1"])
    assert "'corpora[x]' is not a key" in message


def test_set_a_section_to_a_scalar_is_an_error():
    message = user_error(config_from_dict, {}, overrides=["train=5"])
    assert "'train'" in message and "mapping" in message


def test_set_does_not_change_the_callers_mapping():
    raw = {"train": {"lr": 0.1}}
    assert config_from_dict(raw, overrides=["train.lr=0.2"]).train.lr == 0.2
    assert raw == {"train": {"lr": 0.1}}


# Key names that scripts pass with --set, each with a value different from the default.
SCRIPT_KEYS = [
    ("run_dir", "runs/elsewhere"),
    ("seed", 7),
    ("data.dir", "/data/corpus"),
    ("data.src_lang", "fr"),
    ("data.tgt_lang", "it"),
    ("model.type", "lstm"),
    ("train.max_steps", 123),
    ("train.max_minutes", 2.5),
    ("train.batch_tokens", 1000),
    ("train.lr", 0.003),
    ("train.warmup_steps", 17),
    ("train.label_smoothing", 0.2),
    ("train.valid_every", 33),
    ("train.patience", 4),
    ("decode.beam", 3),
    ("decode.len_penalty", 0.6),
    ("decode.max_len_a", 1.2),
    ("decode.max_len_b", 7),
]


@pytest.mark.parametrize("key, value", SCRIPT_KEYS, ids=[k for k, _ in SCRIPT_KEYS])
def test_keys_used_by_scripts_exist(key, value):
    assert get(Config(), key) != value  # the override must be what changes it
    cfg = config_from_dict({}, overrides=[f"{key}={value}"])
    assert get(cfg, key) == value


def test_all_script_keys_at_once(tmp_path):
    path = write_yaml(tmp_path, {})
    cfg = load_config(path, overrides=[f"{k}={v}" for k, v in SCRIPT_KEYS])
    assert {k: get(cfg, k) for k, _ in SCRIPT_KEYS} == dict(SCRIPT_KEYS)


# -- save_config ------------------------------------------------------------------------------


def test_save_then_load_round_trips(tmp_path):
    cfg = config_from_dict(
        {},
        overrides=[f"{k}={v}" for k, v in SCRIPT_KEYS]
        + [
            "train.betas=[0.8, 0.95]",
            "model.pre_norm=false",
            "tokenizer.joint=false",
            "train.lr=1e-5",
        ],
    )
    assert cfg != Config()
    path = tmp_path / "saved.yaml"
    save_config(cfg, path)
    again = load_config(path)
    assert again == cfg
    assert again.to_dict() == cfg.to_dict()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saved.yaml"]  # no temp files left


def test_save_overwrites_and_round_trips_none(tmp_path):
    path = tmp_path / "saved.yaml"
    save_config(config_from_dict({"train": {"max_minutes": 3}}), path)
    cfg = config_from_dict({"train": {"max_minutes": None}, "data": {"dir": None}})
    save_config(cfg, path)
    again = load_config(path)
    assert again.train.max_minutes is None and again.data.dir is None
    assert again == cfg


def test_a_config_file_must_name_its_run_dir(tmp_path):
    """Without it, a second experiment would overwrite the first one's checkpoints."""
    path = write(tmp_path, "seed: 3\n")
    message = user_error(load_config, path)
    assert "run_dir" in message and str(path) in message
    assert load_config(path, overrides=["run_dir=runs/x"]).run_dir == "runs/x"


def test_a_config_folder_is_named_a_folder(tmp_path):
    assert "is a folder" in user_error(load_config, tmp_path)
