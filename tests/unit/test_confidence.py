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
    assert word_labels("dog a", "a dog").count(True) <= 1  # no shifts: one order only


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
