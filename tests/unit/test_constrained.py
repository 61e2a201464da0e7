"""Constrained beam search (decode/constrained.py, dynamic beam allocation): every required
phrase appears in every output, sentences with different phrases share a batch, and without
phrases the search gives what the plain beam search gives."""

import pytest
from decoding import FAMILIES
from decoding import family_model as build
from decoding import prefixed_batch as sources
from util import model_score

from translator.config import DecodeConfig
from translator.decode.constrained import Progress, allocate, constrained_beam_search
from translator.decode.search import beam_search
from translator.specials import PAD

DC = DecodeConfig(beam=4, max_len_a=1.0, max_len_b=4, len_penalty=0.6)


def batch():
    return sources()[0]


def contains(tokens: list[int], phrase: list[int]) -> bool:
    return any(tokens[i : i + len(phrase)] == phrase for i in range(len(tokens)))


PHRASES = [[[7, 8]], [], [[12], [20, 21, 22]], [[5]], [[9, 9], [4]], [[25, 26]]]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_output_holds_every_phrase_whatever_the_batch(family):
    model, src = build(family), batch()
    together = constrained_beam_search(model, src, DC, PHRASES, nbest=2)
    for i, phrases in enumerate(PHRASES):
        real = src[i : i + 1, : int((src[i] != PAD).sum())]
        alone = constrained_beam_search(model, real, DC, [phrases], nbest=2)[0]
        assert [h.tokens for h in alone] == [h.tokens for h in together[i]], (family, i)
        holds = [all(contains(h.tokens, p) for p in phrases) for h in together[i]]
        assert all(holds), (family, i)  # an n-best list holds only those that keep them all
        scores = [h.score for h in together[i]]
        assert scores == sorted(scores, reverse=True), (family, i)
        for h in together[i]:
            score = model_score(model, real, h.tokens, 0.6)
            assert h.score == pytest.approx(score, abs=1e-3)


@pytest.mark.parametrize("family", ["transformer", "luong"])
def test_without_phrases_it_is_the_plain_beam_search(family):
    model, src = build(family), batch()
    plain = beam_search(model, src, DC, nbest=3)
    free = constrained_beam_search(model, src, DC, [[] for _ in range(src.size(0))], nbest=3)
    assert [[h.tokens for h in s] for s in plain] == [[h.tokens for h in s] for s in free]
    assert [h.score for s in plain for h in s] == pytest.approx(
        [h.score for s in free for h in s], abs=1e-5
    )


def test_phrases_and_a_prefix_together():
    model, src = build("transformer"), batch()
    prefixes = [[6, 6], [], [13], [], [10], []]
    out = constrained_beam_search(model, src, DC, PHRASES, prefixes=prefixes)
    for hyps, phrases, prefix in zip(out, PHRASES, prefixes):
        assert hyps[0].tokens[: len(prefix)] == prefix
        assert all(contains(hyps[0].tokens, p) for p in phrases)


def test_progress_through_phrases_starts_a_broken_phrase_again():
    phrases = [[5, 6, 7], [9]]
    p = Progress((False, False))
    assert sorted(p.wants(phrases)) == [5, 9] and p.bank(phrases) == 0
    p = p.after(5, phrases).after(6, phrases)
    assert p.wants(phrases) == [7] and p.bank(phrases) == 2
    p = p.after(5, phrases)  # broken off, and the token begins the phrase again
    assert p == Progress((False, False), 0, 1)
    p = p.after(6, phrases).after(7, phrases).after(9, phrases)
    assert p.done() and p.bank(phrases) == 4


def test_the_beam_is_shared_out_between_banks():
    phrases = [[5, 6]]
    start, one, two = Progress((False,)), Progress((False,), 0, 1), Progress((True,))
    pool = [(-1.0, 0, 10, start), (-1.5, 0, 11, start), (-2.0, 0, 12, start),
            (-5.0, 1, 5, one), (-9.0, 2, 6, two)]  # fmt: skip
    chosen = allocate(pool, 3, phrases)
    assert [c[2] for c in chosen] == [10, 5, 6]  # one from each bank before a second from any
    assert [c[2] for c in allocate(pool, 4, phrases)] == [10, 11, 5, 6]
