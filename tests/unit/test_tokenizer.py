"""Tests for translator.data.tokenizer: fixed special ids, exact round trips, byte fallback,
joint and per-side vocabularies, state round trips and the on-disk model cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from phrases import PAIRS, TARGETS, VOCAB, pieces

from translator.config import TokenizerConfig
from translator.data import tokenizer as tok_mod
from translator.data.tokenizer import Tokenizer, cache_dir
from translator.errors import UserError
from translator.specials import BOS, EOS, PAD, UNK

# -- ids and framing --------------------------------------------------------------------------


# -- byte fallback ----------------------------------------------------------------------------


def test_without_byte_fallback_unseen_characters_are_unk(monkeypatch, tmp_path):
    monkeypatch.setenv("TRANSLATOR_CACHE", str(tmp_path))
    cfg = TokenizerConfig(vocab_size=150, byte_fallback=False)
    tok = Tokenizer.train(PAIRS, cfg, seed=1)
    assert UNK in tok.encode_tgt(["The snowman ☃ sleeps."])[0]
    assert UNK not in tok.encode_tgt([TARGETS[0]])[0]


# -- joint and per-side vocabularies ----------------------------------------------------------


# -- state ------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"not a sentencepiece model", None])
def test_corrupt_model_bytes_are_a_user_error(data):
    with pytest.raises(UserError) as excinfo:
        Tokenizer(data)
    assert "\n" not in str(excinfo.value) and "sentencepiece" in str(excinfo.value)


def test_vocab_too_small_for_the_characters_is_a_user_error(monkeypatch, tmp_path):
    monkeypatch.setenv("TRANSLATOR_CACHE", str(tmp_path))
    with pytest.raises(UserError) as excinfo:
        Tokenizer.train(PAIRS, TokenizerConfig(vocab_size=100), seed=1)  # < 256 byte pieces
    message = str(excinfo.value)
    assert "\n" not in message and "tokenizer.vocab_size=100" in message


def test_a_vocabulary_smaller_than_asked_is_said(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("TRANSLATOR_CACHE", str(tmp_path))
    with caplog.at_level("INFO", logger="translator"):
        tokenizer = Tokenizer.train(PAIRS, TokenizerConfig(vocab_size=50_000), seed=1)
    said = [r.getMessage() for r in caplog.records if "fewer than" in r.getMessage()]
    size = f"{tokenizer.src_vocab_size:,}"
    assert said == [
        f"sentencepiece: {size} pieces, fewer than tokenizer.vocab_size=50,000: all this text gives"
    ]


# -- cache ------------------------------------------------------------------------------------


def _count_training(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = tok_mod._train_model

    def counting(sentences, cfg, seed, *symbols):
        calls.append(len(sentences))
        return real(sentences, cfg, seed, *symbols)

    monkeypatch.setattr(tok_mod, "_train_model", counting)
    return calls


def _forbid_training(monkeypatch) -> None:
    def fail(*args, **kwargs):
        raise AssertionError("trained again instead of using the cache")

    monkeypatch.setattr(tok_mod, "_train_model", fail)


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TRANSLATOR_CACHE", str(tmp_path / "c"))
    assert cache_dir().is_relative_to(tmp_path / "c")
    monkeypatch.delenv("TRANSLATOR_CACHE")
    assert cache_dir().is_relative_to(Path.home())


def test_same_inputs_reuse_the_cached_model(monkeypatch, tmp_path):
    monkeypatch.setenv("TRANSLATOR_CACHE", str(tmp_path))
    cfg = TokenizerConfig(vocab_size=VOCAB)
    calls = _count_training(monkeypatch)
    first = Tokenizer.train(PAIRS, cfg, seed=1)
    assert len(calls) == 1
    models = list(cache_dir().glob("*.model"))
    assert len(models) == 1 and cache_dir().is_relative_to(tmp_path)
    assert models[0].read_bytes() == first.state()["src"]
    assert [p.name for p in cache_dir().iterdir()] == [models[0].name]  # no temp files left

    _forbid_training(monkeypatch)
    second = Tokenizer.train(list(PAIRS), TokenizerConfig(vocab_size=VOCAB), seed=1)
    assert second.state() == first.state()
    assert second.encode_tgt(TARGETS[:5]) == first.encode_tgt(TARGETS[:5])


def test_per_side_models_are_cached_separately(monkeypatch, tmp_path):
    monkeypatch.setenv("TRANSLATOR_CACHE", str(tmp_path))
    cfg = TokenizerConfig(vocab_size=VOCAB, joint=False)
    calls = _count_training(monkeypatch)
    first = Tokenizer.train(PAIRS, cfg, seed=1)
    assert calls == [len(PAIRS), len(PAIRS)]
    assert len(list(cache_dir().glob("*.model"))) == 2
    _forbid_training(monkeypatch)
    assert Tokenizer.train(PAIRS, cfg, seed=1).state() == first.state()


@pytest.mark.parametrize("change", ["one pair", "vocab_size", "seed", "model_type", "joint"])
def test_different_inputs_train_a_new_model(monkeypatch, tmp_path, change):
    monkeypatch.setenv("TRANSLATOR_CACHE", str(tmp_path))
    cfg = TokenizerConfig(vocab_size=VOCAB)
    calls = _count_training(monkeypatch)
    Tokenizer.train(PAIRS, cfg, seed=1)
    assert len(calls) == 1

    pairs, seed = list(PAIRS), 1
    if change == "one pair":
        pairs[17] = (pairs[17][0], pairs[17][1] + " Quickly.")
    elif change == "vocab_size":
        cfg = TokenizerConfig(vocab_size=VOCAB + 10)
    elif change == "seed":
        seed = 2
    elif change == "model_type":
        cfg = TokenizerConfig(vocab_size=VOCAB, model_type="bpe")
    else:
        cfg = TokenizerConfig(vocab_size=VOCAB, joint=False)
    new = Tokenizer.train(pairs, cfg, seed=seed)
    assert len(calls) > 1
    assert len(list(cache_dir().glob("*.model"))) == len(calls)
    if change == "one pair":  # the new model saw the new text ('Q' occurs nowhere else)
        assert any("Q" in p for p in pieces(new.tgt))


def test_unwritable_cache_only_costs_a_retrain(monkeypatch, tmp_path):
    blocker = tmp_path / "a file, not a folder"
    blocker.write_text("x")
    monkeypatch.setenv("TRANSLATOR_CACHE", str(blocker))
    calls = _count_training(monkeypatch)
    tok = Tokenizer.train(PAIRS, TokenizerConfig(vocab_size=VOCAB), seed=1)
    assert tok.decode_tgt(tok.encode_tgt(TARGETS[:5])) == TARGETS[:5]
    Tokenizer.train(PAIRS, TokenizerConfig(vocab_size=VOCAB), seed=1)
    assert len(calls) == 2
    assert blocker.read_text() == "x"


def test_the_tokenizer_gives_the_special_ids_of_translator_specials():
    assert (tok_mod.PAD, tok_mod.UNK, tok_mod.BOS, tok_mod.EOS) == (PAD, UNK, BOS, EOS)
