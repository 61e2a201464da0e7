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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--lang", default=None, help="segmenter rules (default: the model's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="first N sources only")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
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
    engine.translate(sources[:8], request)  # warm up
    started = time.perf_counter()
    lines = [h[0].text for h in engine.translate(sources, request)]
    line_seconds = time.perf_counter() - started
    translate = engine_translate(engine, request)
    started = time.perf_counter()
    document = translate_text("\n\n".join(" ".join(p) for p in paras), translate, lang)
    doc_seconds = time.perf_counter() - started
    by_line, at = [], 0
    for para in paras:
        by_line.append(" ".join(lines[at : at + len(para)]))
        at += len(para)
    doc_paras = [p.strip() for p in document.split("\n\n")]
    row = {
        "checkpoint": str(args.checkpoint),
        "sentences": len(sources),
        "paragraphs": len(paras),
        "bleu_lines": round(bleu(by_line, refs), 2),
        "bleu_document": round(bleu(doc_paras, refs), 2),
        "ms_per_sentence_lines": round(1000 * line_seconds / len(sources), 3),
        "ms_per_sentence_document": round(1000 * doc_seconds / len(sources), 3),
        "time_ratio": round(doc_seconds / line_seconds, 3),
    }
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
