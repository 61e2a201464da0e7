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
