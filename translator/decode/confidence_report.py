"""How well a model's confidence ranks a scored test set (`translator eval --confidence`):
sentence confidence against sentence chrF, with bootstrap intervals, beside the raw mean
log-probability; word confidence against the OK/BAD labels of TER's alignment with the
reference, beside marking every word under the median probability."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from translator.decode.confidence import (
    Calibration,
    f1_score,
    pearson,
    sentence_chrf,
    spearman,
    word_labels,
)

RESAMPLES, SEED = 1000, 1234  # the bootstrap's: the same intervals on every run


def bootstrap_spearman(
    target: Sequence[float],
    predictors: Sequence[Sequence[float]],
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = 0.95,
) -> list[tuple[float, float]]:
    """Percentile intervals of each predictor's Spearman against `target` and, where there
    are two, of the first's minus the second's: the sentences drawn again with replacement,
    the same draws for every predictor (paired), `resamples` times."""
    y = np.asarray(target, dtype=np.float64)
    xs = [np.asarray(p, dtype=np.float64) for p in predictors]
    draws = np.random.default_rng(seed).integers(0, len(y), size=(resamples, len(y)))
    stats = np.array([[spearman(x[d], y[d]) for x in xs] for d in draws])
    if len(xs) == 2:
        stats = np.hstack([stats, stats[:, :1] - stats[:, 1:2]])
    low, high = np.quantile(stats, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return [(round(float(a), 4), round(float(b), 4)) for a, b in zip(low, high)]


def detection(flagged: Sequence[bool], bad: Sequence[bool]) -> dict:
    """Precision and recall of the flagged words as BAD ones, and the F1 of BAD."""
    flagged, bad = np.asarray(flagged, dtype=bool), np.asarray(bad, dtype=bool)
    hits = int((flagged & bad).sum())
    precision = hits / int(flagged.sum()) if flagged.any() else 0.0
    recall = hits / int(bad.sum()) if bad.any() else 0.0
    f1 = f1_score(flagged, bad)
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def raw_confidence(translation) -> float:
    """exp(mean token log-probability) of a Translation; 0 for an empty one."""
    lps = translation.logprobs
    return math.exp(sum(lps) / len(lps)) if translation.text and lps else 0.0


RANKS = ("spearman", "pearson", "spearman_ci")
RAW_RANKS = ("spearman_mean_logprob", "pearson_mean_logprob", "spearman_mean_logprob_ci",
             "spearman_gain", "spearman_gain_ci")  # fmt: skip


def rankings(shown: list[float], raw: list[float] | None, chrf: list[float]) -> dict:
    """Spearman and Pearson of the confidences `shown` against `chrf`, with the bootstrap's
    interval; where `raw` is given (a calibration's report), the same of the raw mean
    log-probability and the calibration's gain over it."""
    out = {"spearman": round(spearman(shown, chrf), 4), "pearson": round(pearson(shown, chrf), 4)}
    if raw is None:
        out["spearman_ci"] = bootstrap_spearman(chrf, [shown])[0]
        return out
    out["spearman_mean_logprob"] = round(spearman(raw, chrf), 4)
    out["pearson_mean_logprob"] = round(pearson(raw, chrf), 4)
    intervals = bootstrap_spearman(chrf, [shown, raw])
    out["spearman_ci"], out["spearman_mean_logprob_ci"] = intervals[:2]
    out["spearman_gain"] = round(out["spearman"] - out["spearman_mean_logprob"], 4)
    out["spearman_gain_ci"] = intervals[2]
    return out


def confidence_report(
    best: Sequence, references: Sequence[str], calibration: Calibration | None, sources=None
):
    """(the report of `best`, each sentence's best Translation with its confidence, against
    `references`; the points a picture draws: (confidence, sentence chrF / 100) each). A
    pair whose source line (`sources`) is blank is left out: its confidence and chrF are
    both 0 by rule, a point that would agree with any ranking."""
    keep = [k for k, s in enumerate(sources) if s.strip()] if sources else range(len(best))
    blank = len(best) - len(keep)
    best, references = [best[k] for k in keep], [references[k] for k in keep]
    chrf = sentence_chrf([t.text for t in best], references)
    raw = [raw_confidence(t) for t in best]
    calibrated = calibration is not None
    shown = [t.confidence for t in best] if calibrated else raw
    report: dict = {"calibrated": calibrated, "sentences": len(best), "blank_left_out": blank}
    if calibrated and best:
        report["mae"] = round(float(np.mean(np.abs(np.subtract(shown, chrf)))), 4)
    flat = [name for name, xs in (("confidence", shown), ("sentence chrF", chrf))
            if len(xs) < 2 or np.std(xs) == 0]  # fmt: skip
    if flat:  # a rank correlation with a constant is undefined, not 0: none is computed
        report["undefined"] = f"every {flat[0]} is the same"
        report.update(dict.fromkeys(RANKS + (RAW_RANKS if calibrated else ())))
    else:
        report.update(rankings(shown, raw if calibrated else None, chrf))
        report["bootstrap"] = {"resamples": RESAMPLES, "seed": SEED, "level": 0.95}
    report["words"] = word_report(best, references, calibration)
    return report, list(zip(shown, chrf))


def word_report(best: Sequence, references: Sequence[str], calibration) -> dict:
    """The doubtful words (under the calibration's threshold) and the words under the median
    word probability, each as detectors of the words TER's alignment (with shifts) marks BAD."""
    conf: list[float] = []
    ok: list[bool] = []
    for t, ref in zip(best, references):
        per_word, labels = t.word_confidence or (), word_labels(t.text, ref)
        if len(per_word) == len(labels):  # (a text whose pieces make other words: left out)
            conf += per_word
            ok += labels
    bad = ~np.asarray(ok, dtype=bool)
    median = float(np.median(conf)) if conf else 0.0
    report = {
        "labels": "TER with shifts",
        "words": len(conf),
        "bad": int(bad.sum()),
        "median_baseline": {
            "threshold": round(median, 4),
            **detection(np.asarray(conf) < median, bad),
        },  # fmt: skip
    }
    if calibration is not None:
        flagged = np.asarray(conf) < calibration.threshold
        report["doubtful"] = {"threshold": round(calibration.threshold, 4),
                              **detection(flagged, bad)}  # fmt: skip
    return report


def report_lines(report: dict) -> list[str]:
    """The plain-text lines of a confidence report."""
    n, w = report["sentences"], report["words"]
    if "undefined" in report:
        mae = f", MAE of the predicted chrF / 100 {report['mae']:.3f}" if "mae" in report else ""
        lines = [f"confidence on {n:,} sentences: Spearman and Pearson undefined "
                 f"({report['undefined']}){mae}"]  # fmt: skip
    elif report["calibrated"]:
        low, high = report["spearman_ci"]
        lines = [
            f"confidence (calibrated) on {n:,} sentences: Spearman {report['spearman']:.3f} "
            f"[{low:.3f}, {high:.3f}] against sentence chrF, Pearson {report['pearson']:.3f}, "
            f"MAE of the predicted chrF / 100 {report['mae']:.3f}",
            "  mean log-probability alone: Spearman {:.3f} [{:.3f}, {:.3f}]; calibrated minus "
            "it {:+.3f} [{:+.3f}, {:+.3f}]".format(
                report["spearman_mean_logprob"],
                *report["spearman_mean_logprob_ci"],
                report["spearman_gain"],
                *report["spearman_gain_ci"],
            ),  # fmt: skip
        ]
    else:
        low, high = report["spearman_ci"]
        lines = [
            f"confidence (uncalibrated: exp(mean log-probability); translator calibrate fits "
            f"one) on {n:,} sentences: Spearman {report['spearman']:.3f} [{low:.3f}, "
            f"{high:.3f}] against sentence chrF, Pearson {report['pearson']:.3f}"
        ]
    share = 100 * w["bad"] / max(1, w["words"])
    lines.append(f"  words ({w['labels']}): {w['words']:,}, {share:.1f}% BAD")
    for key, name in (("doubtful", "doubtful"), ("median_baseline", "under the median")):
        if key in w:
            d = w[key]
            lines.append(
                f"    {name} (< {d['threshold']:.3f}): precision {d['precision']:.3f}, "
                f"recall {d['recall']:.3f}, F1 of BAD {d['f1']:.3f}"
            )
    return lines
