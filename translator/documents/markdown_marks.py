"""The markup spans a Markdown inline is read into (markdown_inline.py) and rendered back
from (markdown_render.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Mark:
    """A span's payload. kind: 'pair' (opening + words + closing), 'atom' (raw replaces the
    words), 'after' / 'before' (raw glued to the word before / after it), 'inside' (raw
    inside a word, after its `prefix`), 'lead' (raw before the first word). order: the
    opening's rank."""

    kind: str
    raw: str
    close: str = ""
    order: int = 0
    prefix: str = ""  # the text glued before it in its word: '(' of '(**a**)'
    suffix: str = ""  # the text glued after it in its word: '),' of '(**a**),'
    text: str = ""  # an atom's words as the model read them
    label: str = ""  # a shortcut or collapsed reference link's label: its words as written
    src: int = -1  # where it starts in the inline's source (marks in one place: its order)
    close_src: int = -1  # where a pair's closing starts in the source
    # a pair's start / end with no glued text, at a letter or digit: its translated word's
    bare: tuple[bool, bool] = (False, False)  # punctuation there stays out ("*dog*.")
    # its first word is the last of markup before it, which kept that word (`*a b*w*c d*`,
    # `` `c d`*a b* ``): it opens inside the word before its own where that word allows
    shared: bool = False
    # the whitespace between its first / last word and the word before / after it that its
    # opening / closing holds, as the source wrote it (`x[ w](u)`, `[w ](u)ab`): not written
    # twice
    held: tuple[str, str] = ("", "")


def glued(plain: str, span, code: set[int]):
    """The span with the text its word holds before and after it (Mark.prefix, .suffix); a
    mark inside a word spans that word, so the word's alignment carries it. An atom's word
    runs on over spaces inside code (`code`: their positions), as its rendering joins the
    words of atoms glued together."""
    start, end, mark = span
    if not (end > start and mark.kind in ("pair", "atom")) and mark.kind != "inside":
        return span
    code = code if mark.kind == "atom" else set()
    head, tail = start, end
    while head > 0 and (not plain[head - 1].isspace() or head - 1 in code):
        head -= 1
    while tail < len(plain) and (not plain[tail].isspace() or tail in code):
        tail += 1
    if head == tail:  # (between tags, with no word around it: glued to the one before)
        return start, end, dataclasses.replace(mark, kind="after")
    prefix, suffix = plain[head:start], plain[end:tail]
    bare = (not prefix and plain[start].isalnum(), not suffix and plain[end - 1].isalnum())
    glued = dataclasses.replace(mark, prefix=prefix, suffix=suffix, bare=bare)
    return (head, tail, glued) if mark.kind == "inside" else (start, end, glued)
