"""Inline spans carried to the translation's words by hand-made alignments
(translator/documents/inline.py), and properties that hold for any alignment."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from translator.documents.inline import events, nesting, transfer

SRC = "the big red house stands here"
TGT = "das grosse rote Haus steht hier"
DIAGONAL = [(i, i) for i in range(6)]


def test_a_span_follows_its_aligned_words():
    assert transfer([(1, 3, "b")], SRC, TGT, DIAGONAL) == [(1, 3, "b")]
    # "house" moved to the front: the tag goes with it
    moved = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 4), (5, 5)]
    assert transfer([(3, 4, "i")], SRC, "Haus das grosse rote steht hier", moved) == [(0, 1, "i")]


def test_aligned_words_apart_are_made_contiguous():
    # "big" and "house" aligned to target words around another: the smallest covering range
    split = [(0, 0), (1, 2), (3, 4), (2, 3)]
    assert transfer([(1, 4, "b")], SRC, "a b c d e f", split) == [(2, 5, "b")]


def test_a_word_translated_by_several_wraps_the_longest_of_them():
    # "stands" became "is standing", "here" "over there": the content word, not the filler
    al = [(0, 0), (3, 1), (4, 2), (4, 3), (5, 4), (5, 5)]
    tgt = "the house is standing over there"
    assert transfer([(4, 5, "b")], SRC, tgt, al) == [(3, 4, "b")]
    assert transfer([(4, 6, "i")], SRC, tgt, al) == [(3, 6, "i")]


def test_a_stray_link_far_away_does_not_stretch_a_tag():
    # <b>big red house</b>: "big red" aligned to words 1 and 2, "house" to the last word
    al = [(0, 0), (1, 1), (2, 2), (3, 6), (4, 3), (5, 4)]
    out = transfer([(1, 4, "b")], SRC, "das grosse rote steht hier so Haus", al)
    assert out == [(1, 3, "b")]


def test_nested_spans_stay_nested_when_alignment_swaps_them():
    # <b>big <i>red</i></b> where the translation swaps the adjectives
    swapped = [(0, 0), (1, 2), (2, 1), (3, 3)]
    out = transfer([(1, 3, "b"), (2, 3, "i")], SRC, "das rote grosse Haus", swapped)
    assert out == [(1, 3, "b"), (1, 2, "i")]


def test_a_child_aligned_outside_its_parent_is_kept_inside():
    # <b>big <i>red</i></b>, but "red" aligns to the last word, beyond "big"'s range
    al = [(1, 1), (2, 5)]
    out = transfer([(1, 2, "b"), (1, 2, "i")], SRC, TGT, al, parents=[None, 0])
    assert out == [(1, 2, "b"), (1, 2, "i")]


def test_a_sibling_whose_words_lie_apart_does_not_swallow_its_neighbour():
    # <b>the</b> <i>big</i>: "the" aligns to target words 0 and 3, "big" to word 1
    al = [(0, 0), (0, 3), (1, 1)]
    out = transfer([(0, 1, "b"), (1, 2, "i")], SRC, TGT, al)
    assert out == [(3, 4, "b"), (1, 2, "i")]


def test_siblings_aligned_to_one_word_each_keep_a_word_when_there_is_room():
    both = [(1, 1), (2, 1)]
    out = transfer([(1, 2, "b"), (2, 3, "i")], SRC, TGT, both)
    assert out[0][:2] == (1, 2) and out[1][:2] == (2, 3)


def test_without_alignment_spans_keep_their_relative_place():
    assert transfer([(3, 6, "b")], SRC, "a b c d e f g h i j k l", None) == [(6, 12, "b")]
    assert transfer([(0, 1, "b")], SRC, "eins", None) == [(0, 1, "b")]
    assert transfer([(2, 4, "b")], SRC, "", []) == [(0, 0, "b")]


def test_unaligned_span_takes_its_place_among_aligned_siblings():
    al = [(0, 0), (1, 1), (2, 2)]  # "stands here" align to nothing
    out = transfer([(0, 1, "a"), (4, 6, "b")], SRC, TGT, al)
    assert out == [(0, 1, "a"), (4, 6, "b")]


def test_a_span_over_all_its_parents_words_covers_all_of_the_translation():
    al = [(1, 1), (2, 2)]  # the ends align to nothing
    assert transfer([(0, 6, "b"), (1, 2, "i")], SRC, TGT, al) == [(0, 6, "b"), (1, 2, "i")]
    assert transfer([(0, 6, "b"), (0, 6, "i")], SRC, TGT, al, [None, 0])[1] == (0, 6, "i")


def test_empty_spans_and_payloads_survive():
    out = transfer([(2, 2, {"name": "x"}), (0, 6, "p")], SRC, TGT, DIAGONAL)
    assert out[0] == (2, 2, {"name": "x"}) and out[1] == (0, 6, "p")


def test_nesting_reads_parents_and_rejects_crossing():
    assert nesting([(0, 3, 0), (1, 2, 0), (3, 3, 0), (1, 2, 0)]) == [None, 0, None, 1]
    with pytest.raises(ValueError, match="crosses"):
        nesting([(0, 2, 0), (1, 3, 0)])
    with pytest.raises(ValueError, match="ends after"):
        transfer([(0, 9, 0)], SRC, TGT, DIAGONAL)


def test_events_give_reading_order():
    placed = [(1, 3, "b"), (1, 2, "i")]
    assert events(placed, 4, [None, 0]) == [
        ("word", 0), ("open", 0), ("open", 1), ("word", 1), ("close", 1),
        ("word", 2), ("close", 0), ("word", 3),
    ]  # fmt: skip


@st.composite
def nested_spans(draw):
    """A sentence length and properly nested spans over it (built as a random tree)."""
    n = draw(st.integers(0, 12))
    spans, parents = [], []

    def fill(lo, hi, parent, depth):
        at = lo
        for _ in range(draw(st.integers(0, 3 if depth < 3 else 0))):
            if at > hi:
                break
            start = draw(st.integers(at, hi))
            end = draw(st.integers(start, hi))
            k = len(spans)
            spans.append((start, end, k))
            parents.append(parent)
            fill(start, end, k, depth + 1)
            at = end if end > start else end + 1

    fill(0, n, None, 0)
    return n, spans, parents


@settings(max_examples=300, deadline=None)
@given(
    tree=nested_spans(),
    m=st.integers(0, 12),
    pairs=st.one_of(st.none(), st.lists(st.tuples(st.integers(0, 14), st.integers(0, 14)))),
)
def test_every_span_survives_nested_and_in_bounds(tree, m, pairs):
    n, spans, parents = tree
    source, target = " ".join(["w"] * n), " ".join(["t"] * m)
    out = transfer(spans, source, target, pairs, parents=parents)
    assert [p for *_, p in out] == [p for *_, p in spans]  # every span, in order
    assert all(0 <= s <= e <= m for s, e, _ in out)
    for k, parent in enumerate(parents):
        if parent is not None:  # inside its parent
            assert out[parent][0] <= out[k][0] and out[k][1] <= out[parent][1]
    for k in range(len(spans)):  # siblings apart
        for j in range(k):
            if parents[j] == parents[k]:
                (a, b), (c, d) = out[j][:2], out[k][:2]
                assert b <= c or d <= a
    # a nonempty span keeps a word wherever the translation has a word for each
    if m >= len(spans):
        assert all(e > s for (s, e, _), (s0, e0, _) in zip(out, spans) if e0 > s0)
    ev = events(out, m, parents)  # renders: each span opened and closed once, words in order
    assert [j for kind, j in ev if kind == "word"] == list(range(m))
    assert sorted(k for kind, k in ev if kind == "open") == list(range(len(spans)))
