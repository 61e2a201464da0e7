"""A user's text where it is matched (translate --constraint, --prefix, --terms and the
in-process API): valid Unicode, NFC, refused where it holds nothing visible, and matched
without case by full case folding mapped back to the text it was found in."""

from __future__ import annotations

import unicodedata

import pytest
import torch
from commandline import assert_success_or_one_error, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from util import fuzz_examples, guided_translate, tiny_config, user_error

from translator.config import TokenizerConfig
from translator.data.tokenizer import Tokenizer
from translator.data.user_text import blank, folded
from translator.decode.guide import Guides
from translator.decode.line_guides import LineGuides, Terms

PAIRS = [
    (f"Der Hund {i} läuft über die Straße, Café!", f"The dog {i} runs across the street, café!")
    for i in range(40)
] + [("Die Katze schläft im Garten.", "The cat sleeps in the garden.")] * 20
ZERO_WIDTH = ["\u200b", "\u200b\u200c\u200d", "\ufeff", " \u2060 ", "\u00ad", "\ufe0f\u034f"]


def tiny_translator():
    """A Transformer with random weights on a small trained subword model (no training)."""
    from translator.config import config_from_dict
    from translator.decode.translator import Translator
    from translator.models.family import build_model

    cfg = config_from_dict(tiny_config(tokenizer={"vocab_size": 400}))
    tok = Tokenizer.train(PAIRS, TokenizerConfig(vocab_size=400), seed=1)
    torch.manual_seed(0)
    model = build_model(cfg.model, tok.src_vocab_size, tok.tgt_vocab_size, True)
    return Translator(model, tok, cfg, device=torch.device("cpu"))


@pytest.fixture(scope="module")
def translator(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRANSLATOR_CACHE", str(tmp_path_factory.mktemp("cache")))
        return tiny_translator()


@pytest.mark.parametrize("phrase", ZERO_WIDTH + ["", "  "])
def test_a_required_phrase_of_nothing_visible_is_a_user_error(translator, phrase):
    message = user_error(guided_translate, translator, ["Der Hund läuft."], None, [[phrase]])
    assert "the sentence: a constraint is empty" in message


def test_a_phrase_the_subword_model_drops_is_a_user_error(translator):
    # U+0001 is a control character, which sentencepiece's normaliser removes
    assert translator.tokenizer.encode_tgt(["\x01"]) == [[2, 3]]
    message = user_error(Guides.read, translator.tokenizer, ["a", "b"], 50, 4, None, [[], ["\x01"]])
    assert "line 2: a constraint is empty" in message


def test_a_prefix_of_nothing_visible_is_no_prefix(translator):
    guides = Guides.read(translator.tokenizer, ["a", "b"], 50, 2, ["\u200b", "The dog"])
    assert guides.prefixes[0] == [] and guides.prefixes[1]


def test_a_lone_surrogate_is_a_user_error_naming_the_line(translator):
    message = user_error(translator.translate, ["Der Hund.", "Die \ud800 Katze."])
    assert message.startswith("line 2: not valid Unicode (lone surrogate U+D800)")
    message = user_error(guided_translate, translator, ["Der Hund."], None, [["dog\udfff"]])
    assert "lone surrogate U+DFFF" in message
    assert "U+DC80" in user_error(Terms, [("Hund", "\udc80")])


@pytest.mark.parametrize("term", ZERO_WIDTH)
def test_a_term_of_nothing_visible_names_the_file_and_line(tmp_path, term):
    path = tmp_path / "terms.tsv"
    path.write_text(f"Hund\tdog\n{term}\tnothing\n", encoding="utf-8")
    assert "terms.tsv:2: " in (message := user_error(Terms.read, path))
    assert "holds no text" in message
    path.write_text(f"Hund\t{term}\n", encoding="utf-8")
    assert "terms.tsv:1:" in user_error(Terms.read, path)
    assert "a source term" in user_error(Terms, [(term, "x")])  # the server's terms


def test_terms_and_lines_are_matched_in_nfc():
    composed, decomposed = "Caf\u00e9", "Cafe\u0301"
    assert Terms([(composed, "coffee")]).found(f"Ein {decomposed} hier") == ["coffee"]
    assert Terms([(decomposed, "coffee")]).found(f"Ein {composed} hier") == ["coffee"]
    guides = LineGuides(terms=Terms([(decomposed, "coffee")]))
    assert guides.reader()([f"{composed}."]) == (None, [["coffee"]])


@pytest.mark.parametrize(
    "term, line, found",
    [
        ("Straße", "IN DER STRASSE", "STRASSE"),  # ß folds to ss: longer
        ("STRASSE", "in der straße", "straße"),
        ("ﬁle", "the FILE", "FILE"),  # the ligature folds to fi
        ("file", "the ﬁle", "ﬁle"),
        ("İstanbul", "nach İSTANBUL", "İSTANBUL"),  # İ folds to i + U+0307
        ("ΣΟΦΟΣ", "σοφος", "σοφος"),  # final sigma
    ],
)
def test_case_insensitive_matches_map_back_to_the_text(term, line, found):
    terms = Terms([(term, "T")], ignore_case=True)
    assert [line[s:e] for s, e, _ in terms.spans(line)] == [found]
    assert terms.found(line) == ["T"]


def test_a_folding_that_is_not_the_words_own_finds_nothing():
    # 'istanbul' is not İstanbul's folding (i + U+0307): no match, and no error either
    assert Terms([("İstanbul", "T")], ignore_case=True).found("istanbul") == []
    assert Terms([("s", "T")], ignore_case=True).found("ß") == []  # half of a letter's folding
    assert Terms([("i", "T")], ignore_case=True).found("İ x") == []


@settings(max_examples=fuzz_examples(60))
@given(
    word=st.text(st.characters(categories=("Lu", "Ll", "Lt")), min_size=1, max_size=6),
    case=st.sampled_from([str.upper, str.lower, str.title, str.swapcase, str.casefold]),
)
def test_every_letters_case_variant_is_found_where_it_is(word, case):
    variant = unicodedata.normalize("NFC", case(word))
    term = unicodedata.normalize("NFC", word)
    line = f"1 {variant} 2"  # (no letters around it that the word could be)
    spans = Terms([(term, "T")], ignore_case=True).spans(line)
    if folded(variant)[0] == folded(term)[0]:
        assert [line[s:e] for s, e, _ in spans] == [variant]
    assert all(0 <= s < e <= len(line) for s, e, _ in spans)


def test_blank_is_whitespace_and_zero_width_characters():
    assert all(blank(t) for t in ZERO_WIDTH + ["", " \t", "\x01"])
    assert not any(blank(t) for t in ["a", "\u200ba", "\u0301", "<bt>", "・"])


@pytest.mark.parametrize(
    "option, text, needle",
    [
        ("--constraint", "\u200b", "--constraint"),
        ("--prefix", "\u2060", "--prefix"),
        # a byte that is not UTF-8 arrives as a lone surrogate
        ("--constraint", "dog\udcff", "--constraint: not valid"),
    ],
)
def test_the_cli_names_the_option_of_a_blank_or_invalid_phrase(
    tmp_path, capsys, option, text, needle
):
    checkpoint = tmp_path / "model.pt"  # refused before it is read
    checkpoint.write_bytes(b"not read")
    code, _, err = run_cli(capsys, "translate", "--checkpoint", checkpoint, option, text, "x")
    line = assert_success_or_one_error(code, err)
    assert line is not None and needle in line, err
    assert "not valid" in line or "holds no text" in line, line


def test_scoring_a_lone_surrogate_names_its_side_and_line(translator):
    """Every text reaches the model through the tokenizer, which names what it cannot take:
    the in-process score API too, where no command checked the lines first."""
    message = user_error(translator.score, ["Der Hund.", "Die Katze."], ["The dog.", "\udcff"])
    assert message.startswith("target line 2: not valid Unicode (lone surrogate U+DCFF)")
    assert "source line 1" in user_error(translator.tokenizer.encode_src, ["\ud800"])


def test_a_line_that_shows_nothing_is_translated_as_a_blank_one(translator):
    """A zero-width space, a word joiner, a BOM, NUL or another control character alone is
    no sentence: an empty translation of confidence 0, as a blank line gets, never words the
    model made up."""
    from translator.decode.request import DecodeRequest

    lines = ["\u200b", "\u2060 ", "\ufeff", "\x00", "\x01\t", "", "Der Hund."]
    found = translator.translate(lines, DecodeRequest(translator.cfg.decode, confidence=True))
    assert [f[0].text for f in found[:-1]] == [""] * 6
    assert all(f[0].confidence == 0 for f in found[:-1])
    assert found[-1][0].text and found[-1][0].confidence > 0
