"""translate_html's work on a paragraph of many sentences grows linearly with them:
counted in the lines of the HTML modules run, not in time."""

import re
import sys
from pathlib import Path

from fake_translate import same

from translator.documents import html_sentences
from translator.documents.html import translate_html

MODULES = Path(html_sentences.__file__).parent


def _lines_run(doc: str) -> int:
    """The lines of translator/documents/html*.py, inline.py and units.py run translating
    `doc` through an identity model (which gives it back)."""
    count, ours = 0, {}  # per code object, whether it is in those modules

    def lines(frame, event, arg):
        nonlocal count
        count += event == "line"
        return lines

    def counted(frame, event, arg):
        code = frame.f_code
        if code not in ours:
            path = Path(code.co_filename)
            ours[code] = path.parent == MODULES and (
                path.stem.startswith("html") or path.stem in ("inline", "units"))  # fmt: skip
        return lines if ours[code] else None

    sys.settrace(counted)
    try:
        out = translate_html(doc, same, "en")
    finally:
        sys.settrace(None)
    assert out == doc
    return count


def _stops(text: str, lang) -> list[tuple[int, int]]:
    """Sentences ending at each full stop: quick to find, so that tracing stays quick."""
    return [m.span() for m in re.finditer(r"\S.*?\.(?=\s|$)", text)]


def test_a_paragraph_of_many_sentences_costs_work_linear_in_them(monkeypatch):
    monkeypatch.setattr(html_sentences, "sentence_spans", _stops)
    # each sentence with an element, a piece copied whole, a comment, an image, and a
    # piece whose text ends in spaces; every 5th with an element crossing into the next
    sentence = "Word <b>bold</b> <code>c{0}</code><!-- x --> <img src=a> <kbd>K </kbd> {0} here."
    crossing = "<i>Bold {0}. Cat d</i>."

    def paragraph(n: int) -> str:
        return "<p>" + " ".join((crossing if i % 5 == 4 else sentence).format(i)
                                for i in range(n)) + "</p>"  # fmt: skip

    small, large = _lines_run(paragraph(100)), _lines_run(paragraph(200))
    assert 0 < large <= 2.3 * small, (small, large)


def test_elements_nested_deep_round_short_text_cost_work_linear_in_their_depth():
    # each element holds at most a reference mark's length of text, or nothing: checked
    # as one on closing, it reads no more than its own text and the mark just inside it
    def nested(n: int) -> str:
        return f"<p>a {'<b>' * n}{'</b>' * n} {'<i>' * n}ab{'</i>' * n} cd</p>"

    small, large = _lines_run(nested(300)), _lines_run(nested(600))
    assert 0 < large <= 2.3 * small, (small, large)
