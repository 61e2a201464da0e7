"""Which features the confidence calibration should take, decided on the dev set alone.

    python scripts/bench/confidence_features.py --checkpoint CKPT

Translates the checkpoint's dev split as `translator calibrate` does, computes every
feature of decode/confidence.py, and compares two ways of fitting `Calibration` by nested
cross-validation (--folds outer folds, --repeats shuffles): all the features, regularised
(what `calibrate` does), against a subset chosen by forward selection. The selection runs
inside each outer fold on that fold's training part (inner 5-fold Spearman, adding the
feature that helps most while it adds 0.001 or more), so the selected subset's figure is
not flattered by having been chosen on the sentences it is scored on. Prints one JSON line:
each way's Spearman against sentence chrF per repeat and their mean, and the subsets chosen.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def fold_predictions(fit, x: np.ndarray, y: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """Each row's prediction by `fit(x_train, y_train)` fitted without the row's fold."""
    order = np.random.default_rng(seed).permutation(len(y))
    found = np.zeros(len(y))
    for held in np.array_split(order, folds):
        kept = np.setdiff1d(order, held)
        found[held] = fit(x[kept], y[kept])(x[held])
    return found


def forward_selection(x: np.ndarray, y: np.ndarray, names, spearman, calibration) -> list[str]:
    """Features added one by one, each time the one whose inner 5-fold Spearman is highest,
    while it adds 0.001 or more."""
    chosen: list[str] = []
    best = -1.0
    while len(chosen) < len(names):
        tried = []
        for name in names:
            if name in chosen:
                continue
            fit = calibration(chosen + [name])
            tried.append((spearman(fold_predictions(fit, x, y, 5, 0), y), name))
        score, name = max(tried)
        if score < best + 0.001:
            break
        chosen.append(name)
        best = score
    return chosen


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", type=Path, required=True)
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    from translator.data.corpus import load_split
    from translator.decode.calibrate import confidence_request, outputs
    from translator.decode.confidence import (
        FEATURES,
        Calibration,
        feature_rows,
        sentence_chrf,
        spearman,
    )
    from translator.engines.load import load_engine

    engine = load_engine(args.checkpoint, args.device)
    pairs = load_split(engine.cfg.data, "dev", engine.cfg.seed)
    sources, refs = [s for s, _ in pairs], [t for _, t in pairs]
    nbests = engine.translate(sources, confidence_request(engine.request()), progress=True)
    x = np.array(feature_rows(outputs(engine, sources, nbests)))
    y = np.asarray(sentence_chrf([n[0].text for n in nbests], refs))

    def calibration(names):
        return lambda xs, ys: Calibration.fit(xs, ys, features=names).predict

    def selected(xs, ys):
        names = forward_selection(xs, ys, FEATURES, spearman, calibration)
        subsets.append(names)
        return calibration(names)(xs, ys)

    subsets: list[list[str]] = []
    ways = {"all_features": calibration(FEATURES), "forward_selection": selected}
    found: dict[str, list[float]] = {name: [] for name in ways}
    for repeat in range(args.repeats):
        for name, fit in ways.items():
            pred = fold_predictions(fit, x, y, args.folds, 100 + repeat)
            found[name].append(round(spearman(pred, y), 4))
        print(json.dumps({"repeat": repeat, **{k: v[-1] for k, v in found.items()}}),
              file=sys.stderr, flush=True)  # fmt: skip
    row = {
        "bench": "confidence_features",
        "checkpoint": str(args.checkpoint),
        "dev_sentences": len(y),
        "folds": args.folds,
        "spearman": found,
        "mean": {k: round(float(np.mean(v)), 4) for k, v in found.items()},
        "mean_logprob_alone": round(spearman(x[:, 0], y), 4),
        "subsets_selected": subsets,
    }
    print(json.dumps(row))
    return row


if __name__ == "__main__":
    main()
