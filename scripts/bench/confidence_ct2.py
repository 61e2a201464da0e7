"""A calibrated checkpoint's confidence against its CTranslate2 exports' (docs/guide.md,
Confidence): one JSON line with, per export (float32, int8), the share of lines whose best
translation and whose whole n-best list are the checkpoint's, and the gap between the two
confidences where the lists are the same and over all lines.

    python scripts/bench/confidence_ct2.py --checkpoint runs/multi30k_transformer/best.pt \\
        --src data/multi30k/test_2016_flickr.de.gz --work /tmp/confidence_ct2

The exports are written under --work (kept for a second run). The confidence reads the
beam's n-best list (its agreement feature), so a line whose lists differ can differ in
confidence though every token's log-probability is the same.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import numpy as np

from translator.engines.ct2 import ExportedTranslator
from translator.engines.export import export_checkpoint
from translator.engines.load import load_engine


def read_lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def compare(ours, ours_beam, theirs, theirs_beam) -> dict:
    same = np.array(
        [[h.tokens for h in a] == [h.tokens for h in b] for a, b in zip(ours_beam, theirs_beam)]
    )
    best = np.mean([a[0].tokens == b[0].tokens for a, b in zip(ours, theirs)])
    gap = np.array([abs(a[0].confidence - b[0].confidence) for a, b in zip(ours, theirs)])
    return {
        "same_best_share": round(float(best), 4),
        "same_nbest_share": round(float(same.mean()), 4),
        "max_gap_where_same": round(float(gap[same].max()), 6) if same.any() else None,
        "mean_gap_all": round(float(gap.mean()), 6),
        "max_gap_all": round(float(gap.max()), 6),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, required=True, help="a calibrated checkpoint")
    parser.add_argument("--src", type=Path, required=True, help="source lines (.gz or text)")
    parser.add_argument("--work", type=Path, required=True, help="folder for the exports")
    args = parser.parse_args()
    lines = read_lines(args.src)
    pytorch = load_engine(args.checkpoint, "cpu")
    request = pytorch.request(confidence=True)
    whole = request.replace(nbest=request.decode.beam, confidence=False)
    ours, ours_beam = pytorch.translate(lines, request), pytorch.translate(lines, whole)
    out = {"lines": len(lines), "beam": request.decode.beam}
    out["calibrated"] = pytorch.calibration is not None
    for quantization in ("float32", "int8"):
        folder = args.work / quantization
        if not folder.exists():
            export_checkpoint(args.checkpoint, "ctranslate2", quantization, folder)
        ct2 = ExportedTranslator(folder)
        theirs, theirs_beam = ct2.translate(lines, request), ct2.translate(lines, whole)
        out[quantization] = compare(ours, ours_beam, theirs, theirs_beam)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
