"""What confidence costs: the same sentences translated with and without it, in one run.

    python scripts/bench/bench_confidence.py --checkpoint runs/multi30k_transformer/best.pt
    python scripts/bench/bench_confidence.py --checkpoint CKPT --export DIR   # a CTranslate2 one too

Each engine translates the source (Multi30k test_2016_flickr by default) as `translate` does,
text in and text out, with the checkpoint's decode settings: once untimed, then --repeats
times each way, alternating (plain, confidence, plain, ...) so a change in the machine's pace
falls on both. The ratio is the median of confidence's time over plain's, pair by pair (the
issue's budget: at most 1.05). `step_share` is the confidence work after the search, timed
alone (`confidence_step`), over the median plain time. One JSON line is appended to
--output.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pretrained import machine  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "multi30k"


def read_lines(path: Path, limit: int | None) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    return lines[:limit] if limit else lines


def timed_pairs(engine, lines: list[str], repeats: int) -> dict:
    """Seconds of each plain and confidence run, alternating, after one untimed run each."""
    plain, judged = engine.request(), engine.request(confidence=True)
    engine.translate(lines[:64], plain)
    engine.translate(lines[:64], judged)
    times: dict[str, list[float]] = {"plain": [], "confidence": []}
    for _ in range(repeats):
        for name, request in (("plain", plain), ("confidence", judged)):
            start = time.perf_counter()
            engine.translate(lines, request)
            times[name].append(round(time.perf_counter() - start, 3))
    ratios = [c / p for p, c in zip(times["plain"], times["confidence"])]
    step = statistics.median(confidence_step(engine, lines, judged, repeats))
    return {
        "seconds": times,
        "ratio_median": round(statistics.median(ratios), 4),
        "ratios": [round(r, 4) for r in ratios],
        "step_seconds": round(step, 3),
        "step_share": round(step / statistics.median(times["plain"]), 4),
    }


def confidence_step(engine, lines: list[str], request, repeats: int) -> list[float]:
    """Seconds of the work confidence adds after the search, alone, once untimed and then
    `repeats` times: the n-best's features and calibration, and for an export the scoring
    of its hypotheses again. Far steadier than the difference of two whole runs, whose
    turns spread by a tenth on 2 shared cores."""
    from translator.decode.calibrate import confidence_request, with_confidence

    found = engine.translate(lines, confidence_request(request).replace(confidence=False))
    seconds = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        if hasattr(engine, "_keep_logprobs"):  # an export: its log-probabilities scored again
            engine._keep_logprobs(lines, found, request)
        with_confidence(engine, lines, found, request.nbest)
        seconds.append(time.perf_counter() - start)
    return seconds[1:]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", type=Path, required=True)
    ap.add_argument("--export", type=Path, help="a CTranslate2 export of it, timed as well")
    ap.add_argument("--source", type=Path, default=DATA / "test_2016_flickr.de.gz")
    ap.add_argument("--sentences", type=int, default=0, help="the first N only (0: all)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--output", type=Path, default=ROOT / "results" / "bench_confidence.jsonl")
    args = ap.parse_args(argv)
    import torch

    from translator.engines.load import load_engine

    torch.set_num_threads(args.threads)
    lines = read_lines(args.source, args.sentences or None)
    engines = {"pytorch": load_engine(args.checkpoint, "cpu")}
    if args.export:
        engines["ctranslate2"] = load_engine(args.export, "cpu")
    row = {
        "bench": "confidence_cost",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "checkpoint": str(args.checkpoint),
        "source": str(args.source),
        "sentences": len(lines),
        "threads": args.threads,
        "beam": engines["pytorch"].cfg.decode.beam,
        "calibrated": engines["pytorch"].calibration is not None,
        "engines": {name: timed_pairs(e, lines, args.repeats) for name, e in engines.items()},
        "target_ratio": 1.05,
    }
    print(json.dumps(row), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
    return row


if __name__ == "__main__":
    main()
