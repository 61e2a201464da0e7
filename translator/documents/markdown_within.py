"""Lone Markdown marks (a tag left open, an autolink) that the source wrote right after a
pair's opening on the same word (`[<a href="v">c](u)`): rendered inside that opening."""

from __future__ import annotations


def opened_before(spans, start: int, mark) -> bool:
    """Whether a pair the source opened before the lone `mark` (and closed after it) opens
    on word `start` of `spans`, where the mark is glued: it goes inside that word, after
    the opening (a mark before the word would come before it)."""
    return any(
        m.kind == "pair" and b > a == start and m.src < mark.src < m.close_src for a, b, m in spans
    )


def lone_rank(at: int, mark, spans: dict, closed: dict) -> float:
    """Where a lone `mark` at `at` in a word goes among the markup there: after the
    openings there where the source wrote it after all of them, after the closings there
    where it wrote it after those, else first."""
    opening = [m for m, (a, _) in spans.items() if a == at]
    if opening and all(m.src < mark.src for m in opening):
        return 2.5
    return 1.5 if mark.src > closed.get(at, mark.src) else 0
