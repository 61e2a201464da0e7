"""Tests for translator.data.tokenizer: fixed special ids, exact round trips, byte fallback,
joint and per-side vocabularies, state round trips and the on-disk model cache."""

from __future__ import annotations

import pytest
from phrases import NEW_TARGETS, PAIRS, SOURCES, TARGETS, VOCAB, pieces

from translator.config import TokenizerConfig
from translator.data.tokenizer import BOS, EOS, PAD, UNK, Tokenizer
from translator.models.checkpoint import load_checkpoint, save_checkpoint

# -- ids and framing --------------------------------------------------------------------------


def test_special_ids_are_fixed(tok):
    assert (PAD, UNK, BOS, EOS) == (0, 1, 2, 3)
    for sp in (tok.src, tok.tgt):
        assert (sp.pad_id(), sp.unk_id(), sp.bos_id(), sp.eos_id()) == (PAD, UNK, BOS, EOS)
        assert [sp.id_to_piece(i) for i in (PAD, UNK, BOS, EOS)] == [
            "<pad>",
            "<unk>",
            "<s>",
            "</s>",
        ]
    assert tok.src_vocab_size <= VOCAB and tok.tgt_vocab_size <= VOCAB


def test_encode_src_ends_with_eos_only(tok):
    for ids in tok.encode_src(SOURCES[:20] + [""]):
        assert ids[-1] == EOS
        assert all(i > EOS for i in ids[:-1]), ids  # no bos, pad, unk or second eos


def test_encode_tgt_is_framed_by_bos_and_eos(tok):
    for ids in tok.encode_tgt(TARGETS[:20] + [""]):
        assert ids[0] == BOS and ids[-1] == EOS
        assert all(i > EOS for i in ids[1:-1]), ids


def test_encode_works_in_batches(tok):
    batch = tok.encode_tgt(TARGETS[:10])
    assert batch == [tok.encode_tgt([t])[0] for t in TARGETS[:10]]
    assert len(tok.encode_src(SOURCES[:7])) == 7


def test_target_round_trip_gives_back_the_text(tok):
    lines = TARGETS + NEW_TARGETS
    assert tok.decode_tgt(tok.encode_tgt(lines)) == lines


def test_decode_ignores_special_ids_and_padding(tok):
    ids = tok.encode_tgt(TARGETS[:3])
    padded = [seq + [PAD] * 4 for seq in ids]
    assert tok.decode_tgt(padded) == TARGETS[:3]
    assert tok.decode_tgt([seq[1:-1] for seq in ids]) == TARGETS[:3]  # unframed ids too


def test_a_decoded_line_break_becomes_a_space(tok):
    newline = tok.tgt.piece_to_id("<0x0A>")  # a byte-fallback piece
    assert newline > 3 and tok.tgt.id_to_piece(newline) == "<0x0A>"
    ids = tok.encode_tgt(TARGETS[:2])
    joined = [ids[0][1:-1] + [newline] + ids[1][1:-1]]
    (text,) = tok.decode_tgt(joined)
    assert "\n" not in text and text.split() == (TARGETS[0] + " " + TARGETS[1]).split()


# -- byte fallback ----------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["The snowman ☃ sleeps.", "你好 dog", "ok 🐍", "ç", "Ω ≈ ∞"])
def test_unseen_characters_round_trip_as_bytes_not_unk(tok, text):
    ids = tok.encode_tgt([text])[0]
    assert UNK not in ids
    assert tok.decode_tgt([ids]) == [text]
    assert UNK not in tok.encode_src([text])[0]


# -- joint and per-side vocabularies ----------------------------------------------------------


def test_joint_shares_one_vocabulary(trained):
    tok = trained["joint"]
    assert tok.joint is True
    assert tok.src_vocab_size == tok.tgt_vocab_size
    assert pieces(tok.src) == pieces(tok.tgt)
    assert tok.state()["tgt"] is None
    text = ["Der Hund läuft im Garten."]
    assert tok.encode_src(text)[0][:-1] == tok.encode_tgt(text)[0][1:-1]
    # characters of both languages are in the one vocabulary
    for char in "äüßw":
        assert any(char in p for p in pieces(tok.src)), char


def test_per_side_vocabularies_differ(trained):
    tok = trained["split"]
    assert tok.joint is False
    assert tok.state()["tgt"] is not None and tok.state()["src"] != tok.state()["tgt"]
    assert pieces(tok.src) != pieces(tok.tgt)
    # 'ä' occurs only on the German side: a piece in the source vocabulary, not the target one
    assert any("ä" in p for p in pieces(tok.src))
    assert not any("ä" in p for p in pieces(tok.tgt))


# -- state ------------------------------------------------------------------------------------


def test_state_round_trip_gives_identical_ids(tok):
    again = Tokenizer.from_state(tok.state())
    assert again.joint == tok.joint
    lines = TARGETS[:30] + NEW_TARGETS + ["☃ 你好"]
    assert again.encode_src(SOURCES[:30]) == tok.encode_src(SOURCES[:30])
    assert again.encode_tgt(lines) == tok.encode_tgt(lines)
    assert again.decode_tgt(again.encode_tgt(lines)) == lines


def test_state_survives_a_checkpoint(tok, tmp_path):
    path = tmp_path / "best.pt"
    save_checkpoint(path, {"model": {}, "tokenizer": tok.state()})
    again = Tokenizer.from_state(load_checkpoint(path)["tokenizer"])
    assert again.joint == tok.joint
    assert again.encode_tgt(TARGETS[:20]) == tok.encode_tgt(TARGETS[:20])
    assert again.encode_src(SOURCES[:20]) == tok.encode_src(SOURCES[:20])


# -- cache ------------------------------------------------------------------------------------


@pytest.fixture(params=["joint", "split"])
def tok(request, trained) -> Tokenizer:
    return trained[request.param]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Joint and per-side tokenizers, trained once for the module in a private cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRANSLATOR_CACHE", str(tmp_path_factory.mktemp("tok_cache")))
        return {
            "joint": Tokenizer.train(PAIRS, TokenizerConfig(vocab_size=VOCAB, joint=True), seed=1),
            "split": Tokenizer.train(PAIRS, TokenizerConfig(vocab_size=VOCAB, joint=False), seed=1),
        }
