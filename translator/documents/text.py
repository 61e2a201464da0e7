"""Plain text as paragraphs: `translate_text(text, translate, lang)`.

Paragraphs are separated by blank lines (lines of whitespace only). Each is split into
sentences (segment.py) with its line breaks read as spaces, so a sentence wrapped over
lines is translated whole; the breaks inside a sentence are put back in its translation
(units.py), and everything between sentences (blank lines, the break or spaces between two
sentences, indentation, a final newline) is kept byte for byte.
"""

from __future__ import annotations

import re

from translator.documents.segment import sentence_spans
from translator.documents.units import Translate, translate_all, with_breaks

_BLANK_LINES = re.compile(r"\n[ \t\r\f\v]*\n(?:[ \t\r\f\v]*\n)*")


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) of the text between blank-line runs (whitespace included)."""
    spans, at = [], 0
    for m in _BLANK_LINES.finditer(text):
        spans.append((at, m.start()))
        at = m.end()
    spans.append((at, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def unit_spans(text: str, lang: str | None) -> list[tuple[int, int]]:
    """Sentence spans of the whole text, never across a blank line."""
    spans = []
    for a, b in paragraph_spans(text):
        flat = re.sub(r"\s", " ", text[a:b])  # same length: offsets stay those of `text`
        spans.extend((a + s, a + e) for s, e in sentence_spans(flat, lang))
    return spans


def replace_spans(text: str | list[str], spans: list[tuple[int, int]], pieces: list[str]) -> str:
    """`text` (or its characters, each as a string to write) with each span (sorted,
    disjoint) replaced by its piece."""
    out, at = [], 0
    for (a, b), piece in zip(spans, pieces, strict=True):
        out += ["".join(text[at:a]), piece]
        at = b
    out.append("".join(text[at:]))
    return "".join(out)


def translate_text(text: str, translate: Translate, lang: str | None = "en") -> str:
    """`text` translated sentence by sentence, its layout kept (module docstring)."""
    spans = unit_spans(text, lang)
    units = [text[a:b] for a, b in spans]
    done = translate_all(units, translate)
    pieces = [with_breaks(u, t, al) for u, (t, al) in zip(units, done, strict=True)]
    return replace_spans(text, spans, pieces)
