"""An import takes the release's decoding settings (pretrained/files.py released_decoding):
transformers' generation_config.json over its config.json, a native Marian decoder.yml."""

from __future__ import annotations

import json

from translator.pretrained.files import released_decoding


def test_generation_config_wins_over_config(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"num_beams": 6, "length_penalty": 0.8}))
    (tmp_path / "generation_config.json").write_text(json.dumps({"num_beams": 4}))
    assert released_decoding(tmp_path) == {"len_norm": "power", "len_penalty": 0.8, "beam": 4}


def test_marians_decoder_yml(tmp_path):
    (tmp_path / "decoder.yml").write_text("models:\n  - m.npz\nbeam-size: 12\nnormalize: 0.6\n")
    assert released_decoding(tmp_path) == {"len_norm": "power", "len_penalty": 0.6, "beam": 12}


def test_nothing_named_gives_transformers_alpha_and_no_beam(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"num_beams": "four", "length_penalty": -1}))
    assert released_decoding(tmp_path) == {"len_norm": "power", "len_penalty": 0.0}


def test_a_folder_translator_exported_gives_back_its_length_cap(tmp_path):
    ours = {"num_beams": 3, "translator": {"max_len_a": 0.5, "max_len_b": 2}}
    (tmp_path / "generation_config.json").write_text(json.dumps(ours))
    found = released_decoding(tmp_path)
    assert (found["beam"], found["max_len_a"], found["max_len_b"]) == (3, 0.5, 2)
    ours["translator"] = {"max_len_a": "long", "max_len_b": None}  # (not ours: not taken)
    (tmp_path / "generation_config.json").write_text(json.dumps(ours))
    assert "max_len_a" not in released_decoding(tmp_path)
