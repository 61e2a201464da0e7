"""Sentence splitting on paragraphs built from a test set: one JSON line per segmenter
(docs/documents.md).

    python scripts/bench/bench_segment.py \\
        --source ../shared/data/multi30k/test_2016_flickr.de.gz --lang de

Consecutive sources are joined by one space into paragraphs of 1 to 5 sentences (lengths
drawn with --seed). A boundary is the offset where a paragraph's second, third, ...
sentence starts; it is recovered when the segmenter starts a sentence there. Boundaries
after a sentence ending in punctuation are counted apart from those after one without
(which no splitter can be expected to find). `extra` counts the sentence starts a segmenter
put inside a source sentence; `seconds`, the time it took (the machine's load varies it).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import time
import unicodedata
from pathlib import Path

from translator.documents.segment import cuts_to_spans, segments_to_cuts, sentence_spans


def read_lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


def paragraphs(lines: list[str], seed: int) -> list[list[str]]:
    rng, out, at = random.Random(seed), [], 0
    while at < len(lines):
        size = rng.randint(1, 5)
        out.append(lines[at : at + size])
        at += size
    return out


def ends_in_punctuation(sentence: str) -> bool:
    return unicodedata.category(sentence.rstrip()[-1]).startswith("P")


def segmenters(lang: str) -> dict:
    """name -> function(text) -> sentence start offsets."""
    found = {}
    try:  # as translator splits documents: segment.py (pysbd, its shortcut included)
        import pysbd  # noqa: F401

        found["pysbd"] = lambda text: [a for a, _ in sentence_spans(text, lang)]
    except ImportError:
        pass
    try:
        import sentencex

        found["sentencex"] = lambda text: segments_to_cuts(
            text, list(sentencex.segment(lang, text))
        )
    except ImportError:
        pass
    return found


def measure(cut, paras: list[list[str]]) -> dict:
    counts = {"punct": [0, 0], "bare": [0, 0]}  # kind -> [recovered, total]
    extra, started = 0, time.perf_counter()
    for para in paras:
        text = " ".join(para)
        starts = {a for a, _ in cuts_to_spans(text, cut(text))}
        offset, truth = 0, set()
        for prev in para[:-1]:
            offset += len(prev) + 1
            truth.add(offset)
            kind = counts["punct" if ends_in_punctuation(prev) else "bare"]
            kind[0] += offset in starts
            kind[1] += 1
        extra += len(starts - truth - {0})
    seconds = time.perf_counter() - started
    share = {k: round(r / t, 4) if t else None for k, (r, t) in counts.items()}
    return {
        "recovered_after_punctuation": share["punct"],
        "boundaries_after_punctuation": counts["punct"][1],
        "recovered_without_punctuation": share["bare"],
        "boundaries_without_punctuation": counts["bare"][1],
        "extra_splits": extra,
        "seconds": round(seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--lang", default="de")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    paras = paragraphs(read_lines(args.source), args.seed)
    for name, cut in segmenters(args.lang).items():
        row = {"segmenter": name, "lang": args.lang, "seed": args.seed}
        row |= {"paragraphs": len(paras), **measure(cut, paras)}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
