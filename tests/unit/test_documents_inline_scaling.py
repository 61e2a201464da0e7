"""The documents layer's work on a long paragraph without a sentence stop grows linearly
with its inline spans: counted in calls and characters read, not in time."""

import re
from pathlib import Path

from translator.documents import inline, translate_bytes, units


def _same(texts):
    return [(t, [(i, i) for i in range(len(t.split()))]) for t in texts]


def _markdown(n: int) -> bytes:
    return translate_bytes(("word *it* " * n).encode(), Path("f.md"), "markdown", _same, "en", "de")


def test_placing_siblings_apart_tries_few_cuts_per_span(monkeypatch):
    calls = []
    cost = inline._cut_cost
    monkeypatch.setattr(inline, "_cut_cost", lambda *a: calls.append(1) or cost(*a))
    counts = []
    for n in (200, 400):
        calls.clear()
        assert _markdown(n).decode() == "word *it* " * n  # (the words as they were)
        counts.append(len(calls))
    assert 0 < counts[1] <= 2.5 * counts[0]


class _Counting:
    """The `re` module, counting the characters `finditer` is given."""

    def __init__(self):
        self.read = 0

    def __getattr__(self, name):
        return getattr(re, name)

    def finditer(self, pattern, text, *args):
        self.read += len(text)
        return re.finditer(pattern, text, *args)


def test_spans_find_their_words_without_rereading_the_unit(monkeypatch):
    counting = _Counting()
    monkeypatch.setattr(units, "re", counting)
    read = []
    for n in (200, 400):
        counting.read = 0
        _markdown(n)
        read.append(counting.read)
    assert 0 < read[1] <= 2.5 * read[0]


def test_tags_left_open_rebuild_the_text_a_bounded_number_of_times(monkeypatch):
    """Inline HTML tags that nothing closes (`<br>`) are each taken out of the text: the
    characters rebuilt doing so grow linearly with their number in one paragraph."""
    from translator.documents import markdown_inline, markdown_source

    rebuilt = []
    drop, taken_out = markdown_inline._Reader._drop, markdown_source.taken_out

    def counted_drop(self, at, n):
        if self.pending is None and at + n != self.size:  # (a drop inside the text)
            rebuilt.append(self.size)
        return drop(self, at, n)

    def counted_taken_out(text, *args):
        rebuilt.append(len(text))
        return taken_out(text, *args)

    monkeypatch.setattr(markdown_inline._Reader, "_drop", counted_drop)
    monkeypatch.setattr(markdown_inline, "taken_out", counted_taken_out)
    for paragraph in (lambda n: "word <br> " * n, lambda n: "*a " + "<b> " * n + "b* c"):
        counts = []  # (at the paragraph's end, and inside emphasis, which crosses them)
        for n in (200, 400):
            rebuilt.clear()
            src = paragraph(n).encode()
            assert translate_bytes(src, Path("f.md"), "markdown", _same, "en", "de") == src
            counts.append(sum(rebuilt))
        assert 0 < counts[1] <= 2.5 * counts[0]
