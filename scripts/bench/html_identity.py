"""How exactly documents come back: each HTML (or, with --format markdown, Markdown) file
run through a model that returns its input word for word (each sentence as it is, word i
aligned to word i), and counted as the same bytes, the same but for whitespace inside
sentences, or changed; under a model that reverses each sentence's words, HTML is checked
to stay well-formed and Markdown to translate without an error. One JSON line
(docs/documents.md, HTML and Markdown).

    python scripts/bench/html_identity.py --list files.txt [--show 5]
    python scripts/bench/html_identity.py --format markdown --list files.txt
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
from translator.documents.markdown import translate_markdown
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
    ap.add_argument("--list", required=True, help="a file naming one document a line")
    ap.add_argument("--show", type=int, default=0, help="print the first N changes")
    ap.add_argument("--format", choices=("html", "markdown"), default="html")
    args = ap.parse_args()
    translate = translate_html if args.format == "html" else translate_markdown
    # HTML must stay well-formed; Markdown has no such thing, so it must only not fail
    check = well_formed if args.format == "html" else lambda text: True
    reversed_key = "reversed_well_formed" if args.format == "html" else "reversed_without_error"
    counts = {"pages": 0, "refused": 0, "same_bytes": 0, "same_but_spaces": 0, "changed": 0,
              reversed_key: 0}  # fmt: skip
    for name in Path(args.list).read_text().split():
        try:
            text = Path(name).read_text(encoding="utf-8")
            out = translate(text, same, "en")
        except (UnicodeDecodeError, UserError):
            counts["refused"] += 1  # not UTF-8, or HTML whose elements do not nest
            continue
        counts["pages"] += 1
        squeeze = [re.sub(r"(\s|&nbsp;)+", " ", t) for t in (text, out)]
        kind = "same_bytes" if out == text else (
            "same_but_spaces" if squeeze[0] == squeeze[1] else "changed")  # fmt: skip
        counts[kind] += 1
        counts[reversed_key] += check(translate(text, reverse, "en"))
        if kind == "changed" and args.show > 0:
            args.show -= 1
            at = next((i for i, (a, b) in enumerate(zip(*squeeze)) if a != b), 0)
            print(
                f"{name}\n  {squeeze[0][at - 60 : at + 60]!r}\n  {squeeze[1][at - 60 : at + 60]!r}"
            )
    row = {"date": datetime.date.today().isoformat(), "format": args.format, **counts}
    print(json.dumps(row))


if __name__ == "__main__":
    main()
