"""The batched n-best agreement (translator/decode/agreement.py) against sacrebleu's own
sentence chrF, hypothesis by hypothesis."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import CHRF

from translator.decode.agreement import agreements

# few letters so that n-grams repeat and match; spaces, a tab, accents, CJK and an emoji
LETTERS = "ab c\té漢字😀.,"


def sacrebleu_agreements(nbest: list[str]) -> list[float]:
    chrf = CHRF()
    if len(nbest) < 2:
        return [1.0]
    return [chrf.sentence_score(h, [nbest[0]]).score / 100 for h in nbest[1:]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.text(LETTERS, max_size=25), max_size=5), max_size=6))
def test_each_hypothesis_scores_as_sacrebleu_scores_it_against_the_best(nbests):
    got = agreements(nbests)
    assert len(got) == len(nbests)
    for nbest, row in zip(nbests, got):
        assert row == sacrebleu_agreements(nbest), nbest


def test_lists_in_one_batch_never_match_each_other():
    # the same words in another list's best must not count for this list
    alone = agreements([["a dog runs", "two cats sleep"]])
    beside = agreements([["two cats sleep", "x"], ["a dog runs", "two cats sleep"]])
    assert beside[1] == alone[0] and alone[0][0] < 0.3
    assert agreements([["the same", "the same", "thesame"]]) == [[1.0, 1.0]]  # spaces aside


def test_repeated_ngrams_count_as_often_as_both_have_them():
    # "aaaa" against "aa": each order matches only as many as the shorter has
    assert agreements([["aa", "aaaa"]]) == [sacrebleu_agreements(["aa", "aaaa"])]
    assert agreements([["aa", "aaaa"]])[0][0] < 1.0
