"""Corpus tags and language tags kept apart: --tag takes a corpus tag only (a language tag
comes from --tgt-lang alone), a tag found in the training text is answered with one that is
not, a language missing from the data is blamed on data.directions, and /health names the
languages of the model served."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from checkpoints import multilingual_checkpoint, needs_ct2, untrained
from util import assert_user_error, cli, multiway_folder, tiny_config, user_error

from translator import api
from translator.config import config_from_dict
from translator.config.languages import check_corpus_tag
from translator.data.prepare import check_tags
from translator.engines.lang_codes import Codes
from translator.engines.load import corpus_tag_prefix, load_engine


@pytest.fixture(scope="module")
def multi(tmp_path_factory) -> str:
    return multilingual_checkpoint(tmp_path_factory.mktemp("tags") / "m.pt", ["en-de", "en-fr"])


def data_config(**data):
    raw = tiny_config(data={"dir": "corpus", **data})
    raw["data"].pop("dataset")
    return config_from_dict(raw)


def test_tag_refuses_a_language_tag_wherever_it_is_taken(multi):
    for opened in (
        lambda: load_engine(multi, "cpu", tgt_lang="de", tag="<2fr>"),  # translate, score
        lambda: load_engine(multi, "cpu", tag="<2fr>", any_language=True),  # serve
        lambda: api.load(multi, tag="<2fr>"),
    ):
        message = user_error(opened).replace("_", "-")  # (the API names tag and tgt_lang)
        assert "tag <2fr>" in message and "tgt-lang fr" in message, message
        assert "its tags: none" in message, message
    # an unknown tag lists the corpus tags, which this model has none of
    message = user_error(load_engine, multi, "cpu", tgt_lang="de", tag="<bt>")
    assert "its tags: none" in message and "<2de>" not in message, message


def test_the_tags_listed_are_the_corpus_tags(multi):
    both = [{"dir": "a", "src_lang": "en", "tgt_lang": "de", "tag": "<bt>"},
            {"dir": "b", "src_lang": "en", "tgt_lang": "cs"}]  # fmt: skip
    data = data_config(corpora=both).data
    assert data.corpus_tags == ["<bt>"] and data.tags == ["<bt>", "<2de>", "<2cs>"]
    message = user_error(check_corpus_tag, data, "<2cs>")
    assert "--tgt-lang cs" in message and message.endswith("its tags: <bt>"), message
    check_corpus_tag(data, "<bt>")
    tokenizer = load_engine(multi, "cpu", tgt_lang="de").tokenizer
    message = user_error(corpus_tag_prefix, tokenizer, data, "<ft>")
    assert message.endswith("its tags: <bt>"), message


@needs_ct2
def test_an_export_refuses_a_language_tag_too(multi, tmp_path):
    from translator.engines.export import export_checkpoint

    _, folder = export_checkpoint(multi, "ctranslate2", "float32", tmp_path / "ct2")
    message = user_error(load_engine, folder, "cpu", tgt_lang="de", tag="<2fr>")
    assert "--tag <2fr>" in message and "--tgt-lang fr" in message, message


def test_translate_with_a_language_tag_is_exit_2(multi):
    found = cli("translate", "--checkpoint", multi, "--tgt-lang", "de", "--tag", "<2fr>", "x")
    assert_user_error(found, "--tag <2fr>", "--tgt-lang")


def test_a_tag_in_the_text_is_answered_with_one_that_is_not():
    sample = [("ein <bt> Hund", "a dog"), ("<tag> zwei", "two")]
    message = user_error(check_tags, sample, ["<bt>"], "data.corpora[0] (x)")
    assert "tag '<bt>' occurs" in message and message.endswith("such as <tag1>"), message
    message = user_error(check_tags, [("<x> y", "z")], ["<x>", "<bt>"], "data.corpora[0] (x)")
    assert message.endswith("such as <tag>"), message  # (<bt> is a tag already)
    # a target-language tag is no choice of the config's: the text is what must change
    said = user_error(check_tags, [("a <2de> b", "c")], ["<bt>", "<2de>"], "x", ["<bt>"])
    assert "'<2de>' occurs" in said and "target-language tag" in said and "such as" not in said


@pytest.mark.parametrize(
    "data, needle",
    [
        ({"directions": ["en-de", "en-xx"]}, "data.directions: en-xx: language 'xx' is not in"),
        ({"directions": ["xx-de"]}, "data.directions: xx-de: language 'xx' is not in"),
        (
            {"corpora": [{"dir": "D", "src_lang": "en", "tgt_lang": "xx"}]},
            "data.corpora[0].tgt_lang is 'xx'",
        ),
    ],
)
def test_a_missing_language_names_where_it_was_set(tmp_path, data, needle):
    from translator.data.corpora import prepare_corpora

    folder = multiway_folder(tmp_path)
    for corpus in data.get("corpora", []):
        corpus["dir"] = str(folder)
    cfg = data_config(**{"dir": str(folder), **data})
    message = user_error(prepare_corpora, cfg, None, False)
    assert needle in message and "languages found: cs, de, en, fr" in message, message
    assert "data.tgt_lang" not in message and "data.src_lang" not in message, message


def test_health_names_the_languages_of_the_model(multi, tmp_path):
    pytest.importorskip("fastapi", reason="the `serve` extra (fastapi) is not installed")
    from translator.serve.app import _info
    from translator.serve.limits import Limits
    from translator.serve.parse import Door

    def info(engine) -> dict:
        found = _info(engine, "m.pt", Door(engine, Limits(), engine.cfg.decode))
        return {k: found[k] for k in ("languages", "source_languages", "target_languages")}

    one = load_engine(untrained(tmp_path), "cpu")
    assert info(one) == {"languages": ["de", "en"], "source_languages": ["de"],
                         "target_languages": ["en"]}  # fmt: skip
    several = load_engine(multi, "cpu", any_language=True)
    assert info(several) == {"languages": ["en", "de", "fr"], "source_languages": ["en"],
                             "target_languages": ["de", "fr"]}  # fmt: skip
    codes = Codes({"deu_Latn": 5, "eng_Latn": 6, "fra_Latn": 7})
    cfg = one.cfg.replace(data=one.cfg.data.replace(src_lang="deu_Latn", tgt_lang="eng_Latn"))
    nllb = SimpleNamespace(cfg=cfg, language_codes=codes, describe=lambda: {})
    found = _info(nllb, "nllb.pt", Door(nllb, Limits(), cfg.decode))
    assert found["languages"] == found["source_languages"] == found["target_languages"]
    assert found["languages"] == list(codes) and found["tgt_lang"] == "eng_Latn"
    for engine in (one, several):  # what the engine says of itself agrees
        assert engine.describe()["languages"] == info(engine)["languages"]
