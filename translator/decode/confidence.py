"""How sure the model is of a translation.

A sentence's confidence is its predicted sentence chrF / 100: features of the model's own
output (its tokens' and words' log-probabilities: their mean, spread, quantiles and lows;
how much its n-best list agrees; its length against the source's; the words it copied) and
of how rare the pieces of source and translation are (the sentencepiece model's unigram
log-probability of each piece, its score), combined by a logistic model fitted on a dev
set's translations against their references (`Calibration.fit`). One feature alone,
mapped monotonically, could not rank sentences differently from that feature; the fitted
combination can. It takes every feature, regularised, rather than a subset picked on the
dev set: docs/guide.md has the comparison. Without a calibration the confidence is
exp(mean token log-probability), reported as uncalibrated.

A word's confidence is exp(the mean log-probability of its subwords), and words under the
calibration's threshold (chosen on dev for the F1 of words that differ from the
reference) count as doubtful.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from translator.decode.agreement import agreements, chrf_scorer
from translator.decode.ter import ter_alignment, word_labels  # noqa: F401 (callers take them here)
from translator.errors import UserError

WORD_START = "\u2581"  # sentencepiece's mark of a piece that begins a word
LOW, VERY_LOW = math.log(0.5), math.log(0.1)  # a token or word "low" under these
# Every feature `features` computes, mean_logprob first (the uncalibrated confidence). A
# calibration names those it uses, so one fitted on fewer still predicts as it did.
FEATURES = (
    "mean_logprob",
    "min_logprob",
    "std_logprob",
    "length_ratio",
    "log_length",
    "nbest_agreement",
    "nbest_min_agreement",
    "median_logprob",
    "word_mean_logprob",
    "word_ratio",
    "target_piece_score",
    "source_piece_score",
    "source_pieces_per_word",
    "q10_logprob",
    "q25_logprob",
    "low_share",
    "very_low_share",
    "min_position",
    "eos_logprob",
    "sum_logprob",
    "mean_logprob_before_eos",
    "word_min_logprob",
    "low_word_share",
    "source_log_length",
    "source_log_words",
    "source_min_piece_score",
    "source_q10_piece_score",
    "source_piece_score_sum",
    "target_min_piece_score",
    "target_pieces_per_word",
    "copied_share",
    "log_chars",
)
LEGACY_FEATURES = FEATURES[:6]  # what a calibration that names none was fitted on


@dataclass(frozen=True)
class Output:
    """What the search gives for one sentence: the best hypothesis's pieces and their
    log-probabilities (the </s> last), the source's subword count and the n-best texts;
    the source line and its word count, and the scores (`piece_scores`) of the source's
    and the best hypothesis's pieces."""

    pieces: Sequence[str]
    logprobs: Sequence[float]
    source_len: int
    nbest: Sequence[str] = ()
    source_words: int = 0
    source_scores: Sequence[float] = ()
    target_scores: Sequence[float] = ()
    source: str = ""


def feature_rows(outs: Sequence[Output]) -> list[list[float]]:
    """The FEATURES of each output (their n-best agreements counted in one pass)."""
    return [features(o, a) for o, a in zip(outs, agreements([o.nbest for o in outs]))]


def features(out: Output, others: Sequence[float] | None = None) -> list[float]:
    """The FEATURES of one output, in that order; `others`: its n-best agreements
    (decode/agreement.py), where they are counted already. Plain Python: the lists are a
    sentence long, where each numpy call costs more than its arithmetic."""
    lp = [float(x) for x in out.logprobs] or [0.0]
    ordered, mean = sorted(lp), _mean(lp)
    length = max(1, len(out.pieces))
    per_word = [_log(w) for w in words(out.pieces, out.logprobs)] or [mean]
    source_words = max(1, out.source_words)
    others = agreements([out.nbest])[0] if others is None else others
    src, tgt = list(out.source_scores), list(out.target_scores)
    said = out.nbest[0].split() if out.nbest else []
    return [
        mean,
        ordered[0],
        math.sqrt(_mean([(x - mean) ** 2 for x in lp])),
        length / max(1, out.source_len),
        math.log(length),
        _mean(others),
        min(others),
        _quantile(ordered, 0.5),
        _mean(per_word),
        len(per_word) / source_words,
        _mean(tgt) if tgt else 0.0,
        _mean(src) if src else 0.0,
        len(src) / source_words,
        _quantile(ordered, 0.1),
        _quantile(ordered, 0.25),
        sum(x < LOW for x in lp) / len(lp),
        sum(x < VERY_LOW for x in lp) / len(lp),
        lp.index(ordered[0]) / len(lp),
        lp[-1],
        sum(lp),
        _mean(lp[:-1]) if len(lp) > 1 else lp[0],
        min(per_word),
        sum(x < LOW for x in per_word) / len(per_word),
        math.log(max(1, out.source_len)),
        math.log(source_words),
        min(src) if src else 0.0,
        _quantile(sorted(src), 0.1) if src else 0.0,
        sum(src),
        min(tgt) if tgt else 0.0,
        len(out.pieces) / max(1, len(said)),
        _copied(said, out.source),
        math.log(1 + len(out.nbest[0])) if out.nbest else 0.0,
    ]


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf  # a word whose probability underflowed


def _quantile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, interpolated linearly (numpy's default)."""
    at = q * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def _copied(said: list[str], source: str) -> float:
    """The share of the translation's words found, as they are, among the source's (names,
    numbers and words the model copied because it did not know them)."""
    if not said:
        return 0.0
    strip = lambda w: w.lower().strip(string.punctuation)  # noqa: E731
    seen = {strip(w) for w in source.split()}
    return sum(strip(w) in seen for w in said) / len(said)


def piece_scores(sp, ids: Sequence[int]) -> list[float]:
    """The sentencepiece model's score of each piece (a unigram model's log-probability of
    it: rare pieces, rare words, score low), leaving out control pieces and <unk>."""
    ids = [int(i) for i in ids]
    return [sp.GetScore(i) for i in ids if not (sp.IsControl(i) or sp.IsUnknown(i))]


def sentence_chrf(hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
    """Each hypothesis's sentence chrF / 100 against its reference: what a calibration
    predicts."""
    chrf = chrf_scorer()
    return [chrf.sentence_score(h, [r]).score / 100 for h, r in zip(hypotheses, references)]


def words(pieces: Sequence[str], logprobs: Sequence[float]) -> list[float]:
    """Each output word's confidence: exp(mean log-probability of its pieces); the words are
    the text's whitespace tokens, a piece starting with WORD_START beginning one."""
    groups: list[list[float]] = []
    for piece, lp in zip(pieces, logprobs):
        if piece.startswith(WORD_START) or not groups:
            if piece == WORD_START:  # a bare word mark: the word is the next piece
                groups.append([])
                continue
            groups.append([lp])
        else:
            groups[-1].append(lp)
    return [math.exp(sum(g) / len(g)) for g in groups if g]


def ranks(x: Sequence[float]) -> np.ndarray:
    """Ranks from 1, ties sharing their mean rank."""
    _, inverse, counts = np.unique(np.asarray(x, dtype=np.float64), return_inverse=True,
                                        return_counts=True)  # fmt: skip
    return (np.cumsum(counts) - (counts - 1) / 2)[inverse.reshape(-1)]


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    return pearson(ranks(a), ranks(b))


def pearson(a: Sequence[float], b: Sequence[float]) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.std() == 0 or b.std() == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def best_threshold(confidences: Sequence[float], ok: Sequence[bool]) -> tuple[float, float]:
    """The word confidence under which words count as doubtful that gives the best F1 of
    the words that differ from the reference (BAD); (threshold, that F1)."""
    conf, bad = np.asarray(confidences), ~np.asarray(ok, dtype=bool)
    best = (0.0, 0.0)
    for t in np.unique(np.concatenate([conf, [1.0 + 1e-9]])):
        flagged = conf < t
        f1 = f1_score(flagged, bad)
        if f1 > best[1]:
            best = (float(t), f1)
    return best


def f1_score(flagged: np.ndarray, bad: np.ndarray) -> float:
    hits = int((flagged & bad).sum())
    if hits == 0:
        return 0.0
    precision, recall = hits / int(flagged.sum()), hits / int(bad.sum())
    return 2 * precision * recall / (precision + recall)


@dataclass
class Calibration:
    """A logistic model over standardised features (`features`, of FEATURES) predicting
    sentence chrF / 100, the word threshold, and the decoding settings it was fitted under."""

    weights: list[float]
    bias: float
    mean: list[float]
    scale: list[float]
    threshold: float = 0.5
    decode: dict = field(default_factory=dict)
    features: tuple[str, ...] = FEATURES
    # each feature's least and greatest value in the fitted rows ([]: unknown)
    low: list[float] = field(default_factory=list)
    high: list[float] = field(default_factory=list)

    def predict(self, rows: Sequence[Sequence[float]]) -> np.ndarray:
        """The predicted chrF / 100 of each row of FEATURES (`features`). A feature beyond
        the range the fit saw counts as its nearest end: one that hardly varied there (a
        small dev set's) would otherwise lie thousands of its scales out and decide alone."""
        x = _columns(rows, self.features)
        if self.low:
            z = (np.clip(x, self.low, self.high) - self.mean) / np.asarray(self.scale)
        else:  # (a calibration stored without its ranges: ten scales out at most)
            z = np.clip((x - self.mean) / np.asarray(self.scale), -10.0, 10.0)
        return 0.5 * (1.0 + np.tanh(0.5 * (z @ np.asarray(self.weights) + self.bias)))

    def to_dict(self) -> dict:
        out = asdict(self)
        out["features"] = list(self.features)
        return out

    @classmethod
    def from_dict(cls, d: dict) -> Calibration:
        names = tuple(d.get("features", LEGACY_FEATURES))
        unknown = [n for n in names if n not in FEATURES]
        if unknown:
            raise UserError(
                f"the model's calibration uses features this translator does not compute "
                f"({', '.join(map(str, unknown))}): run `translator calibrate` on it again"
            )
        return cls(**{**d, "features": names})

    @classmethod
    def fit(cls, rows, targets, threshold: float = 0.5, decode: dict | None = None, l2=1e-3,
            features: Sequence[str] = FEATURES):  # fmt: skip
        """A logistic model of `targets` in [0, 1] over the named `features` of `rows` (rows
        of FEATURES). Spearman asks for the order, and sentence chrF piles up at 1 for short
        sentences, so the weights' direction is fitted to the targets' ranks (as soft labels
        in (0, 1)), then its scale and the bias to the targets themselves: the same order,
        its values a predicted chrF / 100."""
        x = _columns(rows, features)
        y = np.clip(np.asarray(targets, dtype=np.float64), 0.0, 1.0)
        mean, scale = x.mean(0), x.std(0)
        scale[scale == 0] = 1.0
        z = (x - mean) / scale
        direction = _logistic(z, (ranks(y) - 0.5) / len(y), l2)[:-1]
        gain, bias = _logistic((z @ direction)[:, None], y, 0.0)
        return cls(
            list(map(float, gain * direction)), float(bias), list(map(float, mean)),
            list(map(float, scale)), threshold, decode or {}, tuple(features),
            list(map(float, x.min(0))), list(map(float, x.max(0))),
        )  # fmt: skip


def _columns(rows, names: Sequence[str]) -> np.ndarray:
    """The named FEATURES' columns of `rows`, as floats [rows, names]."""
    x = np.asarray(rows, dtype=np.float64).reshape(-1, len(FEATURES))
    return x[:, [FEATURES.index(n) for n in names]]


def _logistic(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """Least cross-entropy of sigmoid(w . x + b) against soft labels `y`, with `l2` times
    the rows' count of L2 on w, by Newton's method: (w..., b)."""
    z = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.diag([l2 * len(x)] * (z.shape[1] - 1) + [0.0])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(z @ w)))
        grad = z.T @ (p - y) + penalty @ w
        hess = (z * (p * (1 - p))[:, None]).T @ z + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w


def uncalibrated(out: Output) -> float:
    """exp(mean token log-probability), `features`' first: the confidence of a model without
    a calibration, read without the others (its n-best's chrF is most of their cost)."""
    return (
        math.exp(float(np.mean(np.asarray(out.logprobs, dtype=np.float64))))
        if len(out.logprobs)
        else 1.0
    )
