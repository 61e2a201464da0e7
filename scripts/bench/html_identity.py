"""How exactly translate_html gives pages back: each HTML file run through a model that
returns its input word for word (each sentence as it is, word i aligned to word i), and
counted as the same bytes, the same but for whitespace inside sentences, or changed; the
markup kept well-formed under a model that reverses each sentence's words is checked too.
One JSON line (docs/documents.md, HTML).

    python scripts/bench/html_identity.py --list files.txt [--show 5]
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from pathlib import Path

from translator.documents.html import build, translate_html
from translator.documents.html_units import tokens
from translator.errors import UserError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from fake_translate import reverse, same  # noqa: E402  (the tests' word-for-word models)


def well_formed(text: str) -> bool:
    try:
        build(tokens(text))
    except UserError:
        return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", required=True, help="a file naming one HTML file a line")
    ap.add_argument("--show", type=int, default=0, help="print the first N changes")
    args = ap.parse_args()
    counts = {"pages": 0, "refused": 0, "same_bytes": 0, "same_but_spaces": 0, "changed": 0,
              "reversed_well_formed": 0}  # fmt: skip
    for name in Path(args.list).read_text().split():
        try:
            text = Path(name).read_text(encoding="utf-8")
            out = translate_html(text, same, "en")
        except (UnicodeDecodeError, UserError):
            counts["refused"] += 1  # not UTF-8, or HTML whose elements do not nest
            continue
        counts["pages"] += 1
        squeeze = [re.sub(r"(\s|&nbsp;)+", " ", t) for t in (text, out)]
        kind = "same_bytes" if out == text else (
            "same_but_spaces" if squeeze[0] == squeeze[1] else "changed")  # fmt: skip
        counts[kind] += 1
        counts["reversed_well_formed"] += well_formed(translate_html(text, reverse, "en"))
        if kind == "changed" and args.show > 0:
            args.show -= 1
            at = next((i for i, (a, b) in enumerate(zip(*squeeze)) if a != b), 0)
            print(
                f"{name}\n  {squeeze[0][at - 60 : at + 60]!r}\n  {squeeze[1][at - 60 : at + 60]!r}"
            )
    print(json.dumps({"date": datetime.date.today().isoformat(), **counts}))


if __name__ == "__main__":
    main()
