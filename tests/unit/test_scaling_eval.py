"""Eval's sacreBLEU scores, taken chunk by chunk: the same scores and signatures as one
`corpus_score` call, with memory that stays flat as the test set grows."""

import random
import tracemalloc

import pytest
from sacrebleu.metrics import BLEU, CHRF, TER

from translator.decode import evaluate

WORDS = "der die das Haus Mädchen läuft schnell , . ! ? 42 über-all naïve 東京 l'eau".split()


def sentences(n: int, seed: int, empty: float = 0.0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 12))]
        line = " ".join(words) + rng.choice(["", " .", ".", "  "])
        out.append("" if rng.random() < empty else line)
    return out


@pytest.mark.parametrize("metric", [BLEU, CHRF, TER])
@pytest.mark.parametrize("n_refs", [1, 2, "variable"])
def test_chunked_scores_equal_corpus_score(monkeypatch, metric, n_refs):
    monkeypatch.setattr(evaluate, "CHUNK", 37)  # many chunks, the last one short
    hyps = sentences(300, seed=1, empty=0.1)
    refs = [sentences(300, seed=2)]
    if n_refs != 1:
        refs.append(sentences(300, seed=3, empty=0.05))
    if n_refs == "variable":  # sacreBLEU's None: no such reference for this line
        refs[1] = [None if i % 7 == 0 else r for i, r in enumerate(refs[1])]
    whole, chunked = metric(), metric()
    expected = whole.corpus_score(hyps, refs)
    got = evaluate.corpus_score(chunked, hyps, refs)
    assert vars(got) == vars(expected)  # score and every field, BLEU's precisions and BP
    assert str(chunked.get_signature()) == str(whole.get_signature())


def test_old_sacrebleu_falls_back_to_corpus_score(monkeypatch):
    def moved(*args):
        raise AttributeError("_extract_corpus_statistics")

    monkeypatch.setattr(BLEU, "_extract_corpus_statistics", moved)
    hyps, refs = sentences(50, seed=4), [sentences(50, seed=5)]
    calls = []
    monkeypatch.setattr(BLEU, "corpus_score", lambda self, h, r: calls.append((h, r)))
    evaluate.corpus_score(BLEU(), hyps, refs)
    assert calls == [(hyps, refs)]


def peak(n: int) -> int:
    hyps, refs = sentences(n, seed=6), sentences(n, seed=7)
    tracemalloc.start()
    try:
        evaluate.corpus_score(CHRF(), hyps, [refs])  # chrF's cache: most of the memory
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_scoring_memory_does_not_grow_with_the_test_set(monkeypatch):
    monkeypatch.setattr(evaluate, "CHUNK", 100, raising=False)
    small, large = peak(400), peak(1600)  # a whole-corpus cache would grow about 4x
    assert large < 1.5 * small, (small, large)
