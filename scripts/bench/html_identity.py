"""How exactly documents come back: each HTML (or, with --format markdown, Markdown) file
run through a model that returns its input word for word (each sentence as it is, word i
aligned to word i), and counted as the same bytes, the same but for whitespace inside
sentences, or changed; under a model that reverses each sentence's words, HTML is checked
to stay well-formed and Markdown to translate without an error. Word files (--format
docx) are compared by their paragraphs' text and each character's formatting and link,
word for word and in capitals (code kept as it is), and must translate without an error
when reversed; a listed Markdown or HTML file is first made a Word file by pandoc. One JSON line (docs/documents.md).

    python scripts/bench/html_identity.py --list files.txt [--show 5]
    python scripts/bench/html_identity.py --format markdown --list files.txt
    python scripts/bench/html_identity.py --format docx --list files.txt [--pandoc P]
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
from fake_translate import reverse, same, upper  # noqa: E402  (the tests' fake models)


def well_formed(text: str) -> bool:
    try:
        build(tokens(text))
    except UserError:
        return False
    return True


def docx_text(data: bytes, capitals: bool = False) -> list:
    """A Word file's translated paragraphs: (style, [(formatting, link, text)]) with runs
    formatted alike joined, tabs and breaks as marks; in capitals but for code."""
    import io

    import docx
    from lxml import etree

    from translator.documents import docx_parts as word
    from translator.documents.docx_runs import RPR, Fields, stretches

    doc = docx.Document(io.BytesIO(data))
    blocks = word._code_styles(doc, "PARAGRAPH", word.CODE_PARAGRAPHS)
    code = word._code_styles(doc, "CHARACTER", word.CODE_RUNS)
    out = []
    marks = [word._NS + n for n in ("t", "tab", "ptab", "br", "cr")]
    for part in word._parts(doc):
        fields = Fields()  # (a field may run over paragraphs, as translate_docx counts)
        for p in part.iter(word._NS + "p"):
            segments: list[list] = []
            # the runs translate_docx translates (kept alive: lxml reuses a dropped proxy's id)
            alive = [r for s in stretches(p, fields) for r, _ in word.wrapped_runs(s)]
            translated = {id(r) for r in alive}
            for el in p.iter(*marks):
                r = el.getparent()
                link = r.getparent().get(f"{{{RELS}}}id") or r.getparent().get(word._NS + "anchor")
                rpr = r.find(RPR)
                key = (b"" if rpr is None else etree.tostring(rpr), link)
                if el.tag != word._NS + "t":  # a tab or a break: a mark of its own
                    segments.append([(el.tag, link), ""])
                    continue
                text = el.text or ""
                if capitals and id(r) in translated and word._style(p, "p") not in blocks and (
                        word._style(r) not in code):  # fmt: skip
                    text = text.upper()
                if segments and segments[-1][0] == key:
                    segments[-1][1] += text
                else:
                    segments.append([key, text])
            out.append(segments)
    return out


def docx_bytes(name: str, pandoc: str) -> bytes:
    """The Word file `name`, or the one pandoc makes of a Markdown or HTML file."""
    if name.endswith(".docx"):
        return Path(name).read_bytes()
    import subprocess
    import tempfile

    kind = "gfm" if name.endswith((".md", ".markdown")) else "html"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.docx"
        subprocess.run([pandoc, "-f", kind, "-t", "docx", name, "-o", str(out)], check=True)
        return out.read_bytes()


def check_docx(name: str, counts: dict, pandoc: str) -> None:
    from translator.documents.docx import translate_docx

    data = docx_bytes(name, pandoc)
    counts["pages"] += 1
    same_out = docx_text(translate_docx(data, same, "en"))
    counts["same_text_and_formatting" if same_out == docx_text(data) else "changed"] += 1
    upper_out = docx_text(translate_docx(data, upper, "en"))
    counts["capitals_same_formatting"] += upper_out == docx_text(data, capitals=True)
    translate_docx(data, reverse, "en")
    counts["reversed_without_error"] += 1


RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", required=True, help="a file naming one document a line")
    ap.add_argument("--show", type=int, default=0, help="print the first N changes")
    ap.add_argument("--format", choices=("html", "markdown", "docx"), default="html")
    ap.add_argument("--pandoc", default="pandoc", help="docx: the pandoc that converts "
                    "listed Markdown and HTML files (pip install pypandoc_binary has one)")  # fmt: skip
    args = ap.parse_args()
    if args.format == "docx":
        counts = {"pages": 0, "same_text_and_formatting": 0, "changed": 0,
                  "capitals_same_formatting": 0, "reversed_without_error": 0}  # fmt: skip
        for name in Path(args.list).read_text().split():
            check_docx(name, counts, args.pandoc)
        print(json.dumps({"date": datetime.date.today().isoformat(), "format": "docx", **counts}))
        return
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
