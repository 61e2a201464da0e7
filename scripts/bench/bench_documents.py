"""Documents against lines: BLEU and time per sentence of `--format text` on paragraphs
built from a test set, beside line-by-line translation of the same sentences; one JSON
line (docs/documents.md).

    python scripts/bench/bench_documents.py --checkpoint runs/multi30k_transformer/best.pt \\
        --source ../shared/data/multi30k/test_2016_flickr.de.gz \\
        --reference ../shared/data/multi30k/test_2016_flickr.en.gz

The paragraphs are bench_segment.py's (1 to 5 consecutive sources joined by a space,
seeded). BLEU is scored per paragraph for both: the document translation's paragraph, and
the line-by-line translations of its sources joined by a space, each against the
references joined the same way. The two runs share the machine's state; their ratio is
the figure (the issue's target: at most 1.15), the absolute times vary with its load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_segment import paragraphs, read_lines  # noqa: E402

from translator.commands.translate_document import engine_translate  # noqa: E402
from translator.decode.evaluate import bleu  # noqa: E402
from translator.decode.request import DecodeRequest  # noqa: E402
from translator.documents.text import translate_text  # noqa: E402
from translator.engines.load import load_engine  # noqa: E402


def timed(fn):
    started = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - started


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--lang", default=None, help="segmenter rules (default: the model's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="first N sources only")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--repeats", type=int, default=5, help="timed turns of each way")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats: at least 1")
    sources, references = read_lines(args.source), read_lines(args.reference)
    if args.limit:
        sources, references = sources[: args.limit], references[: args.limit]
    engine = load_engine(args.checkpoint, args.device)
    request = DecodeRequest(engine.cfg.decode)
    lang = args.lang or engine.cfg.data.src_lang
    paras = paragraphs(sources, args.seed)
    refs, at = [], 0
    for para in paras:
        refs.append(" ".join(references[at : at + len(para)]))
        at += len(para)
    translate = engine_translate(engine, request)
    text = "\n\n".join(" ".join(p) for p in paras)
    run_lines = lambda: [h[0].text for h in engine.translate(sources, request)]  # noqa: E731
    run_document = lambda: translate_text(text, translate, lang)  # noqa: E731
    lines, document = run_lines(), run_document()  # warm-up turn, and the outputs scored
    line_times, doc_times = [], []
    for _ in range(args.repeats):  # A B A B ...: both ways see the same drift in load
        line_times.append(timed(run_lines)[1])
        doc_times.append(timed(run_document)[1])
    by_line, at = [], 0
    for para in paras:
        by_line.append(" ".join(lines[at : at + len(para)]))
        at += len(para)
    doc_paras = [p.strip() for p in document.split("\n\n")]
    ratios = [d / t for d, t in zip(doc_times, line_times, strict=True)]
    row = {
        "checkpoint": str(args.checkpoint),
        "sentences": len(sources),
        "paragraphs": len(paras),
        "bleu_lines": round(bleu(by_line, refs), 2),
        "bleu_document": round(bleu(doc_paras, refs), 2),
        "repeats": args.repeats,
        "ms_per_sentence_lines": round(1000 * statistics.median(line_times) / len(sources), 3),
        "ms_per_sentence_document": round(1000 * statistics.median(doc_times) / len(sources), 3),
        "time_ratio_median": round(statistics.median(ratios), 3),
        "time_ratios": [round(r, 3) for r in ratios],
    }
    print(json.dumps(row), flush=True)
    return row


if __name__ == "__main__":
    main()
