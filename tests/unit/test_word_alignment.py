"""Subword attention turned into word alignments (translator/decode/alignment.py)."""

import numpy as np
import pytest
import torch
from util import family_config, tiny_model

from translator.data.pharaoh import pharaoh, read_pharaoh
from translator.decode.alignment import forced_attention, word_alignment, word_of_piece
from translator.decode.search import decode

SRC = ["▁Ein", "▁Hund", "e", "▁läuft", "."]  # "Ein Hunde läuft."
TGT = ["▁A", "▁do", "g", "▁runs", "."]  # "A dog runs."


def test_pieces_join_into_the_words_they_spell():
    assert word_of_piece(SRC, [0, 1, 2]) == [0, 1, 1, 2, 2]
    # a first piece without the mark still begins the first word
    assert word_of_piece(["Hund", "e", "▁läuft"], [0, 1]) == [0, 0, 1]
    # more marked starts than the text has words: the extras join the last word
    assert word_of_piece(["▁a", "▁b", "▁c"], [0, 1]) == [0, 1, 1]
    # a word the normaliser dropped begins no pieces: the next pieces are the next word's
    assert word_of_piece(["▁a", "▁c"], [0, 2]) == [0, 2]


class Normalising:
    """What word_alignment reads of a tokenizer: each side's sentencepiece normaliser, here
    one that drops a zero-width space or control character and splits a word at the first."""

    class Side:
        @staticmethod
        def normalize(text: str) -> str:
            text = text.replace("\u200b", " ").replace("\x01", "")
            return "".join("▁" + word for word in text.split())

    src = tgt = Side


def test_a_word_the_normaliser_drops_or_splits_keeps_the_indices_of_the_others():
    """Pieces "▁a ▁c" of "a \u200b c": the zero-width space alone is a whitespace word
    with no piece, so "c" is word 2, not 1; "x\u200by z" is two whitespace words of three
    piece words, "x" and "y" voting together."""
    w = np.array([[0.2, 0.0], [0.0, 0.9], [0.0, 0.5]])  # x <- a, y <- c, z <- c
    texts = (["▁a", "▁c"], ["▁x", "▁y", "▁z"], "a \u200b c", "x\u200by z")
    assert word_alignment(w, *texts, Normalising) == ((2, 0), (2, 1))
    # counting piece words as whitespace words would shift them
    assert word_alignment(w, *texts) == ((0, 0), (1, 1))
    # a text its pieces do not spell (bytes decoded into characters the normaliser drops)
    # is counted word by word: its one word is still aligned
    assert word_alignment(w, ["▁a", "▁c"], ["▁x"], "a c", "\x01", Normalising) == ((0, 0),)


def test_a_real_subword_model_tells_which_words_gave_pieces():
    from translator.config import TokenizerConfig
    from translator.data.tokenizer import Tokenizer
    from translator.decode.alignment import started_words

    pairs = [(f"Ein Hund {i} läuft.", f"A dog {i} runs.") for i in range(30)]
    normalize = Tokenizer.train(pairs, TokenizerConfig(vocab_size=400), seed=1).src.normalize
    assert started_words("Ein \u200b Hund \x01 läuft", normalize) == [0, 2, 4]
    assert started_words("Ein\u200bHund läuft", normalize) == [0, 0, 1]
    assert started_words("Ein Hund", None) == [0, 1]


def test_each_target_word_takes_the_source_word_of_most_summed_weight():
    w = np.zeros((6, 6))  # rows: TGT and <eos>; columns: SRC and </s>
    w[0, 0] = 1.0  # A <- Ein
    # "dog": its pieces' weights on "Hunde" split over its two pieces (0.3 + 0.3) beat
    # "läuft"'s single larger piece (0.4): the word's whole weight counts
    w[1, 1], w[1, 3], w[2, 2] = 0.3, 0.4, 0.3
    w[3, 3] = 0.9  # runs <- läuft
    w[4, 4] = 0.6  # "." belongs to the word "runs." in whitespace words
    w[:, 5] = 5.0  # </s> and anything past the pieces is left out
    pairs = word_alignment(w, SRC, TGT, "Ein Hunde läuft.", "A dog runs.")
    assert pairs == ((0, 0), (1, 1), (2, 2))
    assert pharaoh(pairs) == "0-0 1-1 2-2"


def test_alignments_are_sorted_by_source_then_target_and_take_tensors():
    w = torch.tensor([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    pairs = word_alignment(w, ["▁a", "▁b"], ["▁x", "▁y", "▁z"], "a b", "x y z")
    assert pairs == ((0, 1), (1, 0), (1, 2))


@pytest.mark.parametrize("source, target", [("", "x"), ("a", ""), ("   ", "x"), ("a", " ")])
def test_a_blank_side_gives_no_pairs(source, target):
    assert word_alignment(np.ones((2, 2)), ["▁a"], ["▁x"], source, target) == ()


def test_pharaoh_text_reads_back_and_refuses_other_tokens():
    assert read_pharaoh("2-1 0-0  1-2\n") == ((0, 0), (1, 2), (2, 1))
    assert pharaoh(None) == pharaoh(()) == ""
    with pytest.raises(ValueError, match="'0-x'"):
        read_pharaoh("0-0 0-x")


@pytest.mark.parametrize("family", ["transformer", "bahdanau", "luong"])
def test_forced_attention_gives_the_weights_the_search_kept(family):
    torch.manual_seed(0)
    model = tiny_model(family).eval()
    src = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, 0, 0]])
    layer = model.alignment_layer
    hyps = decode(model, src, model_dc(), 1, None, layer)
    tokens = [sent[0].tokens for sent in hyps]
    forced = forced_attention(model, src, tokens, layer)
    for sent, weights in zip(hyps, forced):
        assert weights.shape == sent[0].attention.shape
        assert torch.allclose(weights, sent[0].attention, atol=1e-5)


def model_dc():
    from translator.config import DecodeConfig

    return DecodeConfig(beam=2, max_len_a=1.0, max_len_b=4)


def test_families_name_the_layer_alignments_read():
    assert tiny_model("lstm").alignment_layer is None  # no attention: no alignments
    assert tiny_model("bahdanau").alignment_layer == 0
    from translator.models.family import build_model

    deep = build_model(
        family_config("transformer", dec_layers=3, d_model=32, heads=4), 30, 30, True
    )
    assert deep.alignment_layer == 1  # the penultimate decoder layer


def test_an_ensemble_aligns_where_its_members_align_from_one_depth():
    from translator.models.ensemble import Ensemble
    from translator.models.family import build_model

    one = Ensemble([tiny_model("transformer"), tiny_model("bahdanau"), tiny_model("lstm")])
    assert one.alignment_layer == -1  # each one's last (and only) attention layer
    deep = build_model(
        family_config("transformer", dec_layers=3, d_model=32, heads=4), 30, 30, True
    )
    assert Ensemble([deep, tiny_model("bahdanau")]).alignment_layer is None
    assert Ensemble([tiny_model("lstm")]).alignment_layer is None
