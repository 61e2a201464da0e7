"""Directions and languages (config/languages.py, data/multilingual.py): the config's checks,
the direction `eval` scores, temperature sampling across corpora, two tags before a source,
and the per-language sample the joint subword model learns from."""

import numpy as np
import pytest
from util import pair_ids as corpus
from util import tiny_config, user_error

from translator.config import config_from_dict
from translator.config.languages import (
    check_target,
    eval_direction,
    lang_tags,
    model_language,
    scored_direction,
)
from translator.data.corpora import MixedIds, WeightedDraw
from translator.data.corpus import Source
from translator.data.multilingual import language_sample
from translator.engines.lang_codes import code_id


def data_config(**data):
    raw = tiny_config(data={"dir": "corpus", **data})
    raw["data"].pop("dataset")
    return config_from_dict(raw)


@pytest.mark.parametrize(
    "data, needle",
    [
        ({"directions": ["ende"]}, "SRC-TGT"),
        ({"directions": ["en-en"]}, "SRC-TGT"),
        ({"directions": ["en-de", "en-de"]}, "twice"),
        ({"directions": []}, "lists none"),
        ({"directions": ["en-de"], "corpora": [{"dir": "x"}]}, "src_lang and tgt_lang"),
        ({"directions": ["en-de"], "dir": None}, "data.dir or data.dataset"),
        ({"corpora": [{"dir": "x", "src_lang": "en", "tgt_lang": "en"}]}, "two languages"),
    ],
)
def test_impossible_directions_are_one_line_errors(data, needle):
    assert needle in user_error(data_config, **data)


def test_several_directions_need_one_joint_vocabulary():
    raw = tiny_config(data={"dir": "c", "directions": ["en-de", "en-fr"]})
    raw["tokenizer"]["joint"] = False
    assert "tokenizer.joint" in user_error(config_from_dict, raw)


def test_tags_only_for_several_target_languages():
    assert data_config(directions=["en-de", "en-fr"]).data.tags == ["<2de>", "<2fr>"]
    assert data_config(directions=["de-en", "fr-en"]).data.tags == []
    both = [{"dir": "a", "src_lang": "en", "tgt_lang": "de", "tag": "<bt>"},
            {"dir": "b", "src_lang": "en", "tgt_lang": "cs"}]  # fmt: skip
    cfg = data_config(corpora=both)
    assert cfg.data.tags == ["<bt>", "<2de>", "<2cs>"] and lang_tags(cfg.data) == ["<2de>", "<2cs>"]
    assert [c.dir for c in cfg.data.training_corpora()] == ["a", "b"]


def test_eval_scores_the_direction_asked_for_or_the_only_one():
    zero = data_config(directions=["de-en", "en-de", "fr-en", "en-fr"]).data
    assert eval_direction(zero, "de", "fr") == ("de", "fr")  # zero-shot is allowed
    assert eval_direction(zero, None, "de") == ("en", "de")  # only English goes into German
    assert "--src-lang (one of de, en, fr)" in user_error(eval_direction, zero, None, "en")
    assert "one of en, de, fr" in user_error(eval_direction, zero, "de", None)
    assert "its target languages: en, de, fr" in user_error(eval_direction, zero, "de", "cs")
    one = data_config(directions=["en-cs"]).data
    assert eval_direction(one, None, None) == ("en", "cs")
    scored = scored_direction(one, None, None)
    assert (scored.src_lang, scored.tgt_lang, scored.directions) == ("en", "cs", None)
    plain = data_config().data
    assert eval_direction(plain, None, None) == (plain.src_lang, plain.tgt_lang)


def test_a_language_may_be_named_in_any_spelling():
    """A regional variant names its language, and a two-letter code the model's longer one;
    a code shared by two of the model's (zh: Hans and Hant) goes to the first."""
    assert model_language("en-GB", ["de", "en"]) == "en"
    assert model_language("EN", ["de", "en"]) == "en"
    nllb = ["deu_Latn", "fra_Latn", "zho_Hans", "zho_Hant"]
    assert model_language("fr", nllb) == "fra_Latn"
    assert model_language("de-AT", nllb) == "deu_Latn"
    assert model_language("zh-TW", nllb) == "zho_Hant"
    assert model_language("zh", nllb) == "zho_Hans"
    assert model_language("cs", nllb) is None
    assert model_language("fra", ["fr", "de"]) == "fr"
    several = data_config(directions=["en-de", "en-fr"]).data
    assert check_target(several, "fr-CA") == "<2fr>"
    assert "its target languages: de, fr" in user_error(check_target, several, "cs")
    assert check_target(data_config(directions=["de-en"]).data, "en-GB") is None
    assert eval_direction(several, "en", "de-CH") == ("en", "de")
    assert code_id({"deu_Latn": 7, "fra_Latn": 9}, "fr-BE", "--tgt-lang") == 9
    assert "its languages: deu_Latn" in user_error(code_id, {"deu_Latn": 7}, "cs", "--src-lang")


@pytest.mark.parametrize("temperature", [None, 1.0, 5.0])
def test_temperature_sampling_shares(temperature):
    """share_c ~ weight_c * n_c^(1/T): T=1 follows the sizes, a large T evens them out."""
    sizes, weights = (400, 100), [1.0, 2.0]
    ids = MixedIds([corpus(n, 1000 * (c + 1)) for c, n in enumerate(sizes)], [[], []])
    draw = WeightedDraw(ids, weights, seed=1, temperature=temperature)
    power = 0.0 if temperature is None else 1 / temperature
    raw = [w * n**power for w, n in zip(weights, sizes)]
    assert draw.shares() == pytest.approx([r / sum(raw) for r in raw], abs=1 / sum(sizes))
    rows = draw(0)
    assert np.mean(rows >= 400) == pytest.approx(raw[1] / sum(raw), abs=0.01)


def test_two_tags_go_before_a_source_in_order():
    ids = MixedIds([corpus(5, 1000), corpus(5, 2000)], [[7], [7, 8]])
    src, _ = ids.draw([0, 5])
    assert src[0][:2] == [7, 1000] and src[1][:3] == [7, 8, 2000]
    assert ids.lengths(np.array([0, 5]))[0].tolist() == [4, 5]
    assert ids.collate([5]).src[0, :3].tolist() == [7, 8, 2000]


def source(pairs):
    return Source("made up", {"train": lambda: iter(pairs)}, {})


def test_each_language_gets_as_many_sentences_in_the_subword_sample():
    """en->de and en->fr share their English side (counted once); the small French corpus
    is repeated up to the largest language's count."""
    de = [(f"english {i}", f"deutsch {i}") for i in range(60)]
    fr = [(f"english {i}", f"francais {i}") for i in range(20)]
    cfg = data_config(directions=["en-de", "en-fr"])
    sample = language_sample(cfg, [(source(de), "en", "de"), (source(fr), "en", "fr")])
    assert {lang: len(s) for lang, s in sample.items()} == {"en": 60, "de": 60, "fr": 60}
    assert len(set(sample["en"])) == 60 and len(set(sample["fr"])) == 20
    assert sorted(sample["fr"]) == sorted([t for _, t in fr] * 3)
    small = cfg.replace(tokenizer=cfg.tokenizer.replace(max_sentences=90))  # 30 a language
    capped = language_sample(small, [(source(de), "en", "de"), (source(fr), "en", "fr")])
    assert {lang: len(s) for lang, s in capped.items()} == {"en": 30, "de": 30, "fr": 30}
    assert len(set(capped["fr"])) == 20 and len(set(capped["de"])) == 30
