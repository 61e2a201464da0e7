"""serve/parse.py without a server: a request body becomes its texts and one DecodeRequest
(prefixes and phrases read into target ids once, the source prefix of its language), or
the client's error with its status."""

from __future__ import annotations

import dataclasses

import pytest
from checkpoints import untrained

from translator.errors import UserError
from translator.serve.limits import LimitError, Limits
from translator.serve.parse import Door, parse_attention, parse_score, parse_translate
from translator.serve.requests import AttentionRequest, ScoreRequest, TranslateRequest


def never() -> bool:
    return False


@pytest.fixture(scope="module")
def door(tmp_path_factory):
    from translator.engines.load import load_engine

    engine = load_engine(untrained(tmp_path_factory.mktemp("parse")), "cpu", any_language=True)
    return Door(engine, Limits(max_texts=4, max_chars=40, max_beam=6), engine.cfg.decode)


def status(fn, *args) -> int:
    try:
        fn(*args)
    except LimitError as err:
        return err.status
    except UserError:
        return 400
    return 200


def test_a_translate_body_becomes_its_texts_and_one_request(door):
    body = TranslateRequest(texts=["Ein Hund.", "Eine Katze."], beam=4, nbest=2, prefix="A")
    texts, request = parse_translate(door, body, never)
    assert texts == ["Ein Hund.", "Eine Katze."]
    assert (request.decode.beam, request.nbest) == (4, 2)
    assert request.source == door.engine.source_prefix
    want = door.engine.tokenizer.encode_tgt(["A"])[0][1:-1]
    assert request.prefixes == [want, want] and request.phrases is None
    # the rest of the settings are the server's own
    assert request.decode.replace(beam=door.decode.beam) == door.decode


def test_terms_found_in_a_text_become_its_required_phrases(door):
    body = TranslateRequest(texts=["Ein Hund läuft.", "Eine Katze."], terms={"Hund": "dog"})
    texts, request = parse_translate(door, body, never)
    dog = door.engine.tokenizer.encode_tgt(["dog"])[0][1:-1]
    assert request.phrases == [[dog], []] and request.prefixes is None
    plain = parse_translate(door, TranslateRequest(text="Eine Katze."), never)[1]
    assert plain.guides is None and plain.decode.beam == door.decode.beam


@pytest.mark.parametrize(
    "body, code",
    [
        ({"texts": ["a"] * 5}, 413),  # over max_texts
        ({"text": "x" * 41}, 413),  # over max_chars
        ({"text": "a", "beam": 7}, 422),  # over max_beam
        ({"text": "a", "beam": 2, "nbest": 3}, 422),
        ({"texts": ["a", "b"], "prefixes": ["A"]}, 422),
        ({"text": "a", "prefix": "A", "prefixes": ["A"]}, 422),
        ({"text": "a", "texts": ["b"]}, 422),
        ({"text": "a", "constraints": [" "], "beam": 2}, 400),  # a blank phrase
        ({"text": "a", "prefix": "\u200b "}, 400),  # a prefix for every text of nothing
        ({"texts": ["a", "b"], "prefixes": ["", "A"]}, 200),  # (a text's own may be none)
        ({"text": "a", "constraints": ["x", "y"], "beam": 2}, 422),  # more than the beam holds
        ({"text": "a", "tgt_lang": "xx"}, 400),
        # what an output must hold is bounded as a text is (max_chars 40)
        ({"text": "a", "constraints": ["x" * 21, "y" * 20], "beam": 4}, 413),
        ({"text": "a", "prefix": "p" * 30, "constraints": ["x" * 11], "beam": 2}, 413),
        ({"text": "a", "constraints": ["x" * 20, "y" * 20], "beam": 4}, 200),
    ],
)
def test_a_bad_translate_body_is_the_clients_error(door, body, code):
    assert status(parse_translate, door, TranslateRequest(**body), never) == code


def test_an_nbest_over_the_servers_beam_is_named_as_the_nbest(door):
    from translator.serve.limits import LimitError

    for body, said in (({"nbest": 7}, "nbest 7 (a beam of 7)"), ({"beam": 7}, "beam 7")):
        with pytest.raises(LimitError) as caught:
            parse_translate(door, TranslateRequest(text="a", **body), never)
        assert str(caught.value.message).startswith(f"{said} is over this server's limit of 6")


def test_phrases_the_beam_cannot_hold_name_the_requests_beam_field(door):
    """(The command line's own message names its --beam option.)"""
    narrow = dataclasses.replace(door, limits=dataclasses.replace(door.limits, max_beam=3))
    bodies = (
        (door, {"constraints": ["x", "y"], "beam": 2}, "text 0: 2 required", 'set "beam" to 3'),
        (narrow, {"constraints": list("xyz"), "beam": 3}, "beam is 3", "beam limit is 3"),
    )
    for checker, body, *said in bodies:
        with pytest.raises(LimitError) as caught:
            parse_translate(checker, TranslateRequest(text="a", **body), never)
        assert caught.value.status == 422
        assert all(s in caught.value.message for s in said), caught.value.message
        assert "--beam" not in caught.value.message


def test_limits_on_prefixes_and_phrases_name_them_not_the_texts(door):
    from translator.serve.limits import LimitError

    bodies = (
        ({"text": "a", "constraints": list("bcdef"), "beam": 6}, "5 required phrases in one"),
        ({"text": "a", "prefix": "p" * 41}, "prefix 0 has 41 characters; the limit is 40"),
    )
    for body, said in bodies:
        with pytest.raises(LimitError) as caught:
            parse_translate(door, TranslateRequest(**body), never)
        assert str(caught.value.message).startswith(said), caught.value.message


def test_a_glossary_stops_once_its_request_has_timed_out(door):
    from translator.serve.requests import Cancelled

    body = TranslateRequest(texts=["Ein Hund."] * 3, terms={"Hund": "dog"})
    with pytest.raises(Cancelled):
        parse_translate(door, body, lambda: True)


def test_score_and_attention_bodies(door):
    request = parse_score(door, ScoreRequest(sources=["a"], targets=["b"]), never)
    assert request.source == door.engine.source_prefix
    assert status(parse_score, door, ScoreRequest(sources=["a", "b"], targets=["c"]), never) == 422
    seen = parse_attention(door, AttentionRequest(text="Ein Hund.", prefix="A dog"), never)
    assert seen.prefixes == [door.engine.tokenizer.encode_tgt(["A dog"])[0][1:-1]]
    layers = door.engine.attention_layers
    assert status(parse_attention, door, AttentionRequest(text="a", layer=layers), never) == 422
    assert status(parse_attention, door, AttentionRequest(text=" "), never) == 422


def test_a_text_the_model_would_cut_is_a_413_naming_it(tmp_path):
    """What a model cannot read whole is refused, not cut without the client knowing: a
    text or a scored pair of more subwords than the model takes."""
    from translator.engines.load import load_engine

    engine = load_engine(untrained(tmp_path, max_positions=12), "cpu", any_language=True)
    door = Door(engine, Limits(max_chars=2000), engine.cfg.decode)
    fits, long = "ein hund", " ".join(["ein hund läuft"] * 8)
    assert status(parse_translate, door, TranslateRequest(texts=[fits, fits]), never) == 200
    with pytest.raises(LimitError, match=r"text 1 is \d+ subwords; the model takes at most 12"):
        parse_translate(door, TranslateRequest(texts=[fits, long]), never)
    with pytest.raises(LimitError, match="target 0 is .* at most 13") as err:
        parse_score(door, ScoreRequest(sources=[fits], targets=[long]), never)
    assert err.value.status == 413
    with pytest.raises(LimitError, match="source 0 is"):
        parse_score(door, ScoreRequest(sources=[long], targets=[fits]), never)


@pytest.mark.parametrize("family", ["lstm", "bahdanau", "luong"])
def test_a_recurrent_model_scores_targets_of_any_length(tmp_path, family):
    """A recurrent decoder writes sequences of any length (its max_target is None): a long
    scored target is no breach: the length check has no limit to hold it to."""
    from translator.engines.load import load_engine

    path = untrained(tmp_path, type=family, embed_dim=16, hidden_size=16)
    engine = load_engine(path, "cpu", any_language=True)
    assert engine.max_target is None
    door = Door(engine, Limits(max_chars=2000), engine.cfg.decode)
    long = " ".join(["ein hund läuft"] * 40)
    request = parse_score(door, ScoreRequest(sources=["ein hund"], targets=[long]), never)
    assert engine.score(["ein hund"], [long], request)[0].tokens > 40
