"""Inline elements the HTML builder (html_units.py) makes pieces copied whole once they
close: reference marks ("<sup>[1]</sup>", "*"), and elements holding whitespace alone.
Each `unit` is an html_units.Unit (not imported: that module imports this one)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace

MARKER = 8  # the longest text of a reference mark (_marker)
SIGNS = frozenset("*†‡§¶#※⁂")  # reference signs among punctuation
_BRACKETED = re.compile(r"\[(?:\d+|[a-z])\]|\(\d+\)")


def _marker(text: str, sup: bool) -> bool:
    """Whether an inline element's text is a reference mark: reference signs or symbols
    alone (`*`, `†`, an emoji; not a stop or a comma, which belong to the sentence), a
    number or letter in brackets (`[1]`, `[a]`), or in a `sup`, a number."""
    text = text.strip()
    if _BRACKETED.fullmatch(text) or (sup and text.isdigit()):
        return True
    return bool(text) and all(c in SIGNS or unicodedata.category(c) == "So" or c.isspace()
                              for c in text)  # fmt: skip


def _blank(unit, size: int) -> bool:
    """Whether the last `size` characters of the unit's text are whitespace (read from the
    end, and only while they are)."""
    held = 0
    for piece in reversed(unit.text):
        if held >= size:
            break
        part = piece[max(0, len(piece) - (size - held)) :]
        if part.strip():
            return False
        held += len(part)
    return True


def collapse(unit, k: int, sup: bool) -> None:
    """The inline element of mark `k`, just closed, made an empty piece copied whole
    where it is a reference mark (_marker; `sup`: it is or is inside a `sup`), or holds
    nothing but such pieces: the model never sees it, and it stays glued to the word
    it followed, as an image does, where no translated word could stand for it. One
    holding whitespace alone ("a<b> </b>b") becomes a piece copied whole over that
    whitespace, as "<kbd> </kbd>" is: its source comes back as it was."""
    mark, size, marks = unit.marks[k], unit.length - unit.marks[k].open_at, unit.marks
    # (the marks inside read in place, and only while each is an empty piece: an
    # element closing round thousands of others costs no more than one)
    inside = (marks[n] for n in range(k + 1, len(marks)))
    if size and _blank(unit, size):
        if all(marks[n].open_at is not None for n in range(k, len(marks))):
            marks[k:] = [_piece(unit, k, unit.length)]
        return
    if size > MARKER or size == 0 and k + 1 == len(marks):
        return
    if size == 0 and not all(m.atom and m.open_at == m.close_at for m in inside):
        return
    cut, held = 0, 0  # the last pieces of the unit's text, holding the element's
    while held < size:
        cut += 1
        held += len(unit.text[-cut])
    tail = "".join(unit.text[-cut:]) if cut else ""
    if size and not _marker(tail[-size:], sup):
        return
    if any(marks[n].open_at is None for n in range(k, len(marks))):
        return  # (read only where it becomes one piece, in place of all it reads)
    if cut:
        del unit.text[-cut:]
        if tail[:-size]:
            unit.text.append(tail[:-size])
    unit.length -= size
    unit.spelled = {at: way for at, way in unit.spelled.items() if at < unit.length}
    marks[k:] = [_piece(unit, k, mark.open_at)]


def _piece(unit, k: int, close_at: int):
    """Mark `k` and all after it as one piece copied whole, its source, ending at `close_at`."""
    mark = unit.marks[k]
    raw = "".join(unit.raw[mark.raw_at :])
    order = (mark.order[0], mark.order[0])
    return replace(mark, close_at=close_at, open_raw=raw, close_raw="", atom=True, order=order)
