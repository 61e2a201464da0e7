"""Confidence from an engine's translations (decode/confidence.py): the features of each
line's n-best, the calibration fitted on a dev set against its references, and each
translation's sentence and word confidences."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from translator.decode.confidence import (
    Calibration,
    Output,
    best_threshold,
    feature_rows,
    pearson,
    piece_scores,
    sentence_chrf,
    spearman,
    uncalibrated,
    word_labels,
    words,
)
from translator.decode.request import DecodeRequest, warn_once
from translator.errors import UserError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Confidence:
    sentence: float  # predicted chrF / 100, or exp(mean log-probability) when uncalibrated
    words: tuple[float, ...]  # one per word of the translation's text
    calibrated: bool
    doubtful: tuple[bool, ...] = ()  # words under the calibration's threshold


def confidence_request(request: DecodeRequest) -> DecodeRequest:
    """The request whose n-best the features read: the whole beam (the agreement of its
    hypotheses is a feature; a search finds them anyway)."""
    beam = request.decode.beam
    return request if request.sampling or request.nbest >= beam else request.replace(nbest=beam)


def outputs(engine, lines: Sequence[str], nbests) -> list[Output]:
    """Each line's Output: the best translation's pieces and log-probabilities, the
    source's subword count and the n-best texts, the source's words and the scores of its
    and the translation's pieces."""
    tok = engine.tokenizer
    piece = tok.tgt.id_to_piece
    out = []
    for line, nbest, ids in zip(lines, nbests, tok.encode_src(list(lines))):
        best = nbest[0]
        source = {"source_words": len(line.split()), "source_scores": piece_scores(tok.src, ids),
                  "source": line}  # fmt: skip
        if not best.tokens and best.logprobs is None:  # a blank line: nothing was decoded
            out.append(Output([], [0.0], len(ids), [best.text], **source))
            continue
        if best.logprobs is None:
            raise UserError(f"{engine.name} gives no token log-probabilities: use a checkpoint")
        pieces = [piece(int(t)) for t in best.tokens]
        texts, scores = [t.text for t in nbest], piece_scores(tok.tgt, best.tokens)
        out.append(Output(pieces, best.logprobs, len(ids), texts, **source, target_scores=scores))
    return out


def confidences(engine, lines, nbests, calibration: Calibration | None) -> list[Confidence]:
    """Each line's Confidence (module docstring); an empty translation gets 0."""
    outs = outputs(engine, lines, nbests)
    if calibration is not None:
        rows = feature_rows(outs)
        sentence = calibration.predict(rows).tolist() if rows else []
    else:
        sentence = [uncalibrated(o) for o in outs]
    found = []
    for out, value, nbest in zip(outs, sentence, nbests):
        per_word = tuple(words(out.pieces, out.logprobs))
        doubtful = () if calibration is None else tuple(w < calibration.threshold for w in per_word)
        found.append(
            Confidence(value if nbest[0].text else 0.0, per_word, calibration is not None, doubtful)
        )
    return found


def other_search(calibration: Calibration | None, request: DecodeRequest) -> str | None:
    """How `request` searches, where it is not how `calibration` was fitted (its beam, or
    sampling): its features, the beam's agreement first, then mean something else."""
    if calibration is None or not calibration.decode.get("beam"):
        return None
    if request.sampling is not None:
        return "sampling"
    beam = request.decode.beam
    return None if beam == calibration.decode["beam"] else f"beam {beam}"


def with_confidence(engine, lines, found, request: DecodeRequest) -> list[list]:
    """The request's n-best translations of each line (of `found`, the whole beam's) with
    their `confidence` and `word_confidence`, each hypothesis judged against the others."""
    import dataclasses

    nbest = request.nbest
    if search := other_search(engine.calibration, request):
        beam = engine.calibration.decode["beam"]
        warn_once(engine, ("calibrated search", search), log,
                  f"the confidence is calibrated under beam {beam}; under {search} it is "
                  "less reliable (translator calibrate --beam fits it again)")  # fmt: skip

    # every kept hypothesis first in its own list, judged in one call (one encoding pass)
    rows = [(n, i) for n, hyps in enumerate(found) for i in range(min(nbest, len(hyps)))]
    judged = [[found[n][i], *found[n][:i], *found[n][i + 1 :]] for n, i in rows]
    confs = confidences(engine, [lines[n] for n, _ in rows], judged, engine.calibration)
    out: list[list] = [[] for _ in found]
    for (n, _), hyps, conf in zip(rows, judged, confs):
        out[n].append(dataclasses.replace(hyps[0], confidence=conf.sentence,
                                          word_confidence=conf.words))  # fmt: skip
    return out


def fit(engine, sources: list[str], refs: list[str], request: DecodeRequest):
    """(the Calibration of `engine` under `request`, fitted on `sources` against `refs`,
    and how it ranks them: Spearman and Pearson against sentence chrF, beside the raw mean
    log-probability's). A blank source line is left out: its confidence is 0 by rule, and
    so is the chrF of its empty pair, a point that would agree with any fit."""
    pairs = [(s, r) for s, r in zip(sources, refs, strict=True) if s.strip()]
    blank = len(sources) - len(pairs)
    sources, refs = [s for s, _ in pairs], [r for _, r in pairs]
    if len(sources) < 10:
        left = f" ({blank} blank lines left out)" if blank else ""
        raise UserError(
            f"calibrate needs 10 or more sentences with references, got {len(sources)}{left}"
        )
    asked = confidence_request(request)
    nbests = engine.translate(sources, asked)
    outs = outputs(engine, sources, nbests)
    rows = feature_rows(outs)
    targets = sentence_chrf([n[0].text for n in nbests], refs)
    if len(set(targets)) < 2 or len({tuple(r) for r in rows}) < 2:
        # (a fit to a constant has nothing to learn, and would rate every translation alike)
        alike = "translations score" if len(set(targets)) < 2 else "sentences are scored"
        raise UserError(
            f"calibrate: all {len(sources)} {alike} the same, so confidence has nothing to "
            "learn from them",
            "give varied held-out pairs, such as the model's dev split",
        )
    conf, ok = [], []
    for out, nbest, ref in zip(outs, nbests, refs):
        per_word = words(out.pieces, out.logprobs)
        labels = word_labels(nbest[0].text, ref)
        if len(per_word) == len(labels):  # (a text whose pieces make other words: left out)
            conf += per_word
            ok += labels
    threshold, f1 = best_threshold(conf, ok) if conf else (0.5, 0.0)
    cal = Calibration.fit(
        rows, targets, threshold, {**request.decode.to_dict(), "nbest": asked.nbest}
    )
    predicted = cal.predict(rows)
    raw = [r[0] for r in rows]
    report = {
        "sentences": len(sources),
        "blank_left_out": blank,
        "spearman": round(spearman(predicted, targets), 4),
        "pearson": round(pearson(predicted, targets), 4),
        "spearman_mean_logprob": round(spearman(raw, targets), 4),
        "mae": round(float(np.mean(np.abs(predicted - np.asarray(targets)))), 4),
        "word_threshold": round(threshold, 4),
        "word_bad_f1": round(f1, 4),
    }
    return cal, report
