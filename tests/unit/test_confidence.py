"""translator.decode.confidence: features, word confidences and labels, the fitted
calibration and its rank statistics."""

import math
import warnings

import numpy as np
import pytest

from translator.decode.confidence import (
    FEATURES,
    LEGACY_FEATURES,
    Calibration,
    Output,
    best_threshold,
    features,
    piece_scores,
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
    out = Output(["\u2581A", "\u2581do", "g"], [-0.5, -1.5, -0.5, -0.1], source_len=4,
                 source_words=4, source_scores=[-8.0, -10.0, -6.0], target_scores=[-3.0, -5.0])  # fmt: skip
    got = dict(zip(FEATURES, features(out)))
    assert got.keys() == set(FEATURES) and len(features(out)) == len(FEATURES)
    assert got["mean_logprob"] == pytest.approx(-0.65) and got["min_logprob"] == -1.5
    assert got["length_ratio"] == 0.75 and got["log_length"] == pytest.approx(math.log(3))
    assert got["median_logprob"] == pytest.approx(-0.5)
    assert got["word_mean_logprob"] == pytest.approx((-0.5 + (-1.5 - 0.5) / 2) / 2)
    assert got["word_ratio"] == 0.5  # two words out for four in
    assert got["source_piece_score"] == -8.0 and got["target_piece_score"] == -4.0
    assert got["source_pieces_per_word"] == 0.75
    assert got["nbest_agreement"] == got["nbest_min_agreement"] == 1.0  # a list of one
    assert got["q10_logprob"] == pytest.approx(-1.2) and got["q25_logprob"] == pytest.approx(-0.75)
    assert got["low_share"] == 0.25 and got["very_low_share"] == 0.0  # under log 0.5, log 0.1
    assert got["min_position"] == 0.25 and got["eos_logprob"] == -0.1
    assert got["sum_logprob"] == pytest.approx(-2.6)
    assert got["mean_logprob_before_eos"] == pytest.approx(-2.5 / 3)
    assert got["word_min_logprob"] == pytest.approx(-1.0) and got["low_word_share"] == 0.5
    assert got["source_log_length"] == got["source_log_words"] == pytest.approx(math.log(4))
    assert got["source_min_piece_score"] == -10.0 and got["source_piece_score_sum"] == -24.0
    assert got["source_q10_piece_score"] == pytest.approx(-9.6)
    assert got["target_min_piece_score"] == -5.0
    named = Output(["\u2581A", "\u2581dog", "\u2581called", "\u2581R", "ex", "."], [-0.1] * 7, 6,
                   ["A dog called Rex."], source_words=4, source="Ein Hund namens Rex.")  # fmt: skip
    got = dict(zip(FEATURES, features(named)))
    assert got["copied_share"] == 0.25  # "Rex." (case and punctuation aside)
    assert got["target_pieces_per_word"] == 1.5 and got["log_chars"] == pytest.approx(math.log(18))
    assert _agreement(["a dog runs", "a dog runs"]) == pytest.approx(1.0)
    assert _agreement(["a dog runs", "two cats sleep"]) < 0.3
    torn = dict(zip(FEATURES, features(Output(["\u2581A"], [-1.0, -1.0], 1, ["a dog runs",
                "a dog runs", "two cats sleep"]))))  # fmt: skip
    assert torn["nbest_min_agreement"] < 0.3 < torn["nbest_agreement"] < 1.0


def _agreement(nbest: list[str]) -> float:
    """The nbest_agreement feature of a one-piece output with this n-best."""
    return dict(zip(FEATURES, features(Output(["\u2581A"], [-1.0], 1, nbest))))["nbest_agreement"]


def test_piece_scores_leave_out_control_pieces_and_unknown():
    class Pieces:  # sentencepiece's calls: ids 0-2 control, 3 unknown
        def GetScore(self, i):
            return -float(i)

        def IsControl(self, i):
            return i < 3

        def IsUnknown(self, i):
            return i == 3

    assert piece_scores(Pieces(), [5, 0, 3, 7, 2]) == [-5.0, -7.0]


def _rows(rng, n: int) -> np.ndarray:
    """`n` random rows of FEATURES."""
    return rng.normal(size=(n, len(FEATURES)))


def test_the_fitted_combination_ranks_better_than_either_feature_alone():
    rng = np.random.default_rng(0)
    rows = _rows(rng, 400)
    a, b = FEATURES.index("word_ratio"), FEATURES.index("nbest_agreement")
    y = 1 / (1 + np.exp(-(1.5 * rows[:, a] - 1.0 * rows[:, b])))
    cal = Calibration.fit(rows, y)
    assert cal.features == FEATURES and len(cal.weights) == len(FEATURES)
    pred = cal.predict(rows)
    assert ((0 <= pred) & (pred <= 1)).all()
    assert spearman(pred, y) > 0.99
    assert spearman(pred, y) > max(abs(spearman(rows[:, a], y)), abs(spearman(rows[:, b], y))) + 0.1
    assert np.abs(pred - y).mean() < 0.05  # the fitted ranking is scaled back to the targets
    again = Calibration.from_dict(cal.to_dict())
    assert np.array_equal(again.predict(rows), pred)


def test_a_feature_that_hardly_varied_in_the_fit_does_not_decide_alone():
    """A small dev set whose sources all had about the same rarest piece: that feature's
    scale is tiny, and a new sentence's other value must not push the sigmoid to 0 or 1."""
    rng = np.random.default_rng(3)
    rows = _rows(rng, 100)
    a, rare = FEATURES.index("word_ratio"), FEATURES.index("source_min_piece_score")
    rows[:, rare] = -9.0 + 1e-4 * rng.normal(size=100)
    y = 1 / (1 + np.exp(-(rows[:, a] - 0.5 * rows[:, rare] * 1e4 - 45)))
    cal = Calibration.fit(rows, y)
    seen = cal.predict(rows)
    new = rows[:5].copy()
    new[:, rare] = -3.0  # far outside what the fit saw
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no overflow in the sigmoid either)
        pred = cal.predict(new)
    assert seen.min() - 1e-9 <= pred.min() and pred.max() <= seen.max() + 1e-9
    assert np.abs(pred - seen[:5]).max() < 0.2  # the other features still speak
    assert Calibration.from_dict(cal.to_dict()).low == cal.low


def test_a_calibration_of_the_six_first_features_predicts_as_it_was_stored():
    # a checkpoint calibrated before the features grew: six weights over LEGACY_FEATURES,
    # with the names or without (the first stored calibrations named them)
    rows = _rows(np.random.default_rng(2), 20)
    saved = {"weights": [0.5, 0.2, -0.3, 0.1, -0.2, 0.4], "bias": 0.3, "mean": [-1.0] * 6,
             "scale": [2.0] * 6, "threshold": 0.6, "decode": {"beam": 5}}  # fmt: skip
    x = (rows[:, : len(LEGACY_FEATURES)] + 1.0) / 2.0
    expected = 1 / (1 + np.exp(-(x @ np.asarray(saved["weights"]) + 0.3)))
    assert FEATURES[:6] == LEGACY_FEATURES
    for stored in (saved, {**saved, "features": list(LEGACY_FEATURES)}):
        cal = Calibration.from_dict(stored)
        assert np.allclose(cal.predict(rows), expected)


def test_a_calibration_of_features_this_translator_lacks_is_a_one_line_error():
    from translator.errors import UserError

    saved = {"weights": [1.0], "bias": 0.0, "mean": [0.0], "scale": [1.0], "features": ["x"]}
    with pytest.raises(UserError, match=r"\(x\): run `translator calibrate`") as err:
        Calibration.from_dict(saved)
    assert "\n" not in str(err.value)


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


def test_a_ranking_against_a_constant_is_reported_undefined_not_zero(monkeypatch):
    """All confidences equal (blank sources) or all chrF equal: no Spearman or Pearson to
    measure, said so in the report and its lines, rather than a certain 0; and no bootstrap
    of them is drawn."""
    from translator.decode import confidence_report as module
    from translator.decode.confidence_report import confidence_report, report_lines
    from translator.decode.translator import Translation

    drawn = []
    bootstrap = module.bootstrap_spearman
    monkeypatch.setattr(module, "bootstrap_spearman", lambda *a: drawn.append(1) or bootstrap(*a))

    blank = [Translation("", 0.0, (), None, (), 0.0, ()) for _ in range(4)]
    report, _ = confidence_report(blank, ["A dog.", "A cat.", "Two men.", "Rain."], None)
    assert report["undefined"] == "every confidence is the same"
    assert report["spearman"] is None and report["pearson"] is None
    assert report["spearman_ci"] is None
    assert report_lines(report)[0] == (
        "confidence on 4 sentences: Spearman and Pearson undefined (every confidence is the same)"
    )
    said = [Translation(t, -1.0, (5,), None, (-0.1 * (k + 1),), None, ())
            for k, t in enumerate(["A dog.", "A cat.", "Two men.", "Rain."])]  # fmt: skip
    report, _ = confidence_report(said, ["A dog.", "A cat.", "Two men.", "Rain."], None)
    assert report["undefined"] == "every sentence chrF is the same"
    assert not drawn and "bootstrap" not in report
    varied, _ = confidence_report(said, ["A dog.", "The cat.", "Men.", "Snow fell."], None)
    assert "undefined" not in varied and isinstance(varied["spearman"], float)
    assert drawn and varied["bootstrap"]["resamples"] == 1000
