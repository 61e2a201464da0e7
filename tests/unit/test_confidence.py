"""translator.decode.confidence: features, word confidences and labels, the fitted
calibration and its rank statistics."""

import math

import numpy as np
import pytest

from translator.decode.confidence import (
    Calibration,
    Output,
    agreement,
    best_threshold,
    features,
    ranks,
    spearman,
    ter_alignment,
    word_labels,
    words,
)


def test_word_confidences_average_the_log_probabilities_of_their_pieces():
    pieces = ["\u2581A", "\u2581do", "g", "\u2581", "runs", "."]
    lps = [-0.1, -1.0, -3.0, -0.5, -0.7, -0.2]
    got = words(pieces, lps)
    # words: "A", "dog", "runs." (a bare mark joins the next piece)
    assert len(got) == 3 == len("A dog runs.".split())
    assert got[0] == pytest.approx(math.exp(-0.1))
    assert got[1] == pytest.approx(math.exp(-2.0))
    assert got[2] == pytest.approx(math.exp((-0.7 - 0.2) / 2))


def test_word_labels_mark_the_words_an_alignment_matches_to_the_reference():
    assert word_labels("a dog runs fast", "a dog runs") == [True, True, True, False]
    assert word_labels("the cat runs", "a dog runs") == [False, False, True]
    assert word_labels("", "a dog") == []
    assert word_labels("dog a", "a dog", shifts=False).count(True) <= 1  # one order only


def test_word_labels_count_a_shifted_phrase_ok_as_ter_does():
    # the phrase "on the mat" is at the other end of the reference: shifted, every word is OK
    hyp, ref = "on the mat the cat sat", "the cat sat on the mat"
    assert word_labels(hyp, ref) == [True] * 6
    assert word_labels(hyp, ref, shifts=False).count(True) < 6
    # a shift does not excuse a wrong word: "dog" is BAD wherever it goes
    assert word_labels("on the mat the dog sat", ref) == [True, True, True, True, False, True]
    assert word_labels("dog a", "a dog") == [True, True]
    assert word_labels("a b c", "") == [False] * 3


def test_ter_edits_with_shifts_agree_with_sacrebleu_on_reordered_sentences():
    from sacrebleu.metrics.lib_ter import translation_edit_rate

    pairs = [
        ("on the mat the cat sat", "the cat sat on the mat"),
        ("a dog runs in the park fast", "a dog runs fast in the park"),
        ("two men a boat in", "two men in a boat"),
        ("the old woman reads a book", "the old woman reads a book"),
        ("xx yy", "a b c"),
    ]
    for hyp, ref in pairs:
        _, _, edits = ter_alignment(hyp.split(), ref.split())
        assert edits == translation_edit_rate(hyp.split(), ref.split())[0], (hyp, ref)


def test_ranks_share_ties_and_spearman_follows_order_not_values():
    assert ranks([3.0, 1.0, 3.0]).tolist() == [2.5, 1.0, 2.5]
    x = [0.1, 0.5, 0.2, 0.9]
    assert spearman(x, [v**3 for v in x]) == pytest.approx(1.0)
    assert spearman(x, [-v for v in x]) == pytest.approx(-1.0)


def test_features_of_an_output():
    out = Output(["\u2581A", "\u2581dog"], [-0.5, -1.5, -0.1], source_len=4)
    got = dict(zip(("mean", "min", "std", "ratio", "loglen", "agree"), features(out)))
    assert got["mean"] == pytest.approx(-0.7) and got["min"] == -1.5
    assert got["ratio"] == 0.5 and got["loglen"] == pytest.approx(math.log(2))
    assert got["agree"] == 1.0  # a list of one agrees with itself
    assert agreement(["a dog runs", "a dog runs"]) == pytest.approx(1.0)
    assert agreement(["a dog runs", "two cats sleep"]) < 0.3


def test_the_fitted_combination_ranks_better_than_either_feature_alone():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 2))
    y = 1 / (1 + np.exp(-(1.5 * x[:, 0] - 1.0 * x[:, 1])))
    rows = [[a, b] for a, b in x]
    cal = Calibration.fit(rows, y)
    pred = cal.predict(rows)
    assert ((0 <= pred) & (pred <= 1)).all()
    assert spearman(pred, y) > 0.99
    assert spearman(pred, y) > max(abs(spearman(x[:, 0], y)), abs(spearman(x[:, 1], y))) + 0.1
    again = Calibration.from_dict(cal.to_dict())
    assert np.array_equal(again.predict(rows), pred)


def test_the_word_threshold_separates_bad_words_where_it_can():
    conf = [0.9, 0.8, 0.2, 0.1, 0.95]
    ok = [True, True, False, False, True]
    threshold, f1 = best_threshold(conf, ok)
    assert f1 == 1.0 and 0.2 < threshold <= 0.8


def test_bootstrap_intervals_are_seeded_paired_and_hold_the_truth():
    from translator.decode.confidence_report import bootstrap_spearman

    rng = np.random.default_rng(1)
    y = rng.normal(size=300)
    good, poor = y + 0.5 * rng.normal(size=300), y + 3 * rng.normal(size=300)
    (g_low, g_high), (p_low, p_high), (d_low, d_high) = bootstrap_spearman(y, [good, poor])
    assert bootstrap_spearman(y, [good, poor]) == [
        (g_low, g_high),
        (p_low, p_high),
        (d_low, d_high),
    ]
    assert g_low <= spearman(good, y) <= g_high and p_low <= spearman(poor, y) <= p_high
    assert 0 < d_low < d_high  # the better predictor's lead is clear of 0
    assert g_high - g_low < p_high - p_low  # a closer relation is known more narrowly
    (low, high), *_ = bootstrap_spearman(y, [rng.normal(size=300)])
    assert low < 0 < high  # no relation: the interval holds 0
    assert bootstrap_spearman(y, [y]) == [(1.0, 1.0)]


def test_word_detection_figures():
    from translator.decode.confidence_report import detection

    got = detection([True, True, False, False], [True, False, True, False])
    assert got == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert detection([False, False], [True, False])["f1"] == 0.0
