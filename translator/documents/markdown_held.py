"""Whitespace a Markdown pair's markup holds between its words and the words beside it
(`[w ](u)ab`, `x[ w](u)`): read into Mark.held (markdown_inline.py), and the separator
it stands for left out when rendering (markdown_render.py)."""

from __future__ import annotations

from dataclasses import replace

from translator.documents.markdown_source import since


def unheld(spans: list, start: int, lead: int, trail: int) -> tuple[bool, int | None]:
    """Whether the whitespace from plain position `start` to `lead` is free of the pairs
    read inside the one opened at `start` (those in `spans` after it), and the index of the
    one holding the whitespace from `trail` on, if any: an inner pair holding it keeps it
    (`[<b>w </b>](u)ab`), and the outer does not."""
    free, holder = True, None
    for k in range(len(spans) - 1, -1, -1):
        a, b, mark = spans[k]
        if a < start:
            break
        if mark is not None and mark.kind == "pair":
            free &= not (mark.held[0] and a == lead)
            holder = k if mark.held[1] and b == trail else holder
    return free, holder


def edges(reader, start: int, raw: str, close: str):
    """A pair's span (`start` to the reader's end of text) less the whitespace at its edges,
    which its opening `raw` / `close` take: (start, end, raw, close, Mark.held). Whitespace
    its markup has at its edge with a space outside it is taken out of the plain text (that
    space stays the separator); next to a word it stays as the separator, which it holds."""
    spaced = reader.at >= len(reader.src) or reader.src[reader.at].isspace()
    before = max(start - 1, 0)  # the span's text and the character before it
    tail = since(reader.plain, reader.size, before)
    text = tail[start - before :]
    # (at most the span's own: more whitespace before it would fail the test below too)
    space, lead = len(text) - len(text.rstrip()), len(text) - len(text.lstrip())
    free, holder = unheld(reader.spans, start, start + lead, reader.size - space)
    if holder is not None:  # (whitespace an inner one holds: not this one's)
        a, b, inner = reader.spans[holder]
        if spaced:  # (`[<b>w </b>](u) ab`: no longer the separator)
            reader.spans[holder] = (a, b, replace(inner, held=(inner.held[0], False)))
            reader._drop(reader.size - space, space)
        space = 0
    lead *= free
    held = (False, False)
    if 0 < space < reader.size - start:  # `[runtime ](url)`: the space stays inside it
        close = text[len(text) - space :] + close
        if spaced:
            reader._drop(reader.size - space, space)
        else:  # (`[w ](u)ab`: its words' separator, which it holds)
            held = (False, True)
    end = reader.size - space * held[1]
    if lead and (start == 0 or tail[0].isspace()):  # `[ text](url)`: its opening
        reader._drop(start, lead)
        raw, end = raw + text[:lead], end - lead
    elif lead:  # (`x[ w](u)`: the separator before its first word, which it holds)
        raw, start, held = raw + text[:lead], start + lead, (True, held[1])
    return start, end, raw, close, held


def held_seps(spans, seps: list[str]) -> list[str]:
    """The separators before the words less the whitespace a pair's markup holds, as the
    source wrote it inside its closing (on the word before) or its opening (on the word)."""
    out = list(seps)
    for start, end, mark in spans:
        if mark.kind != "pair" or end <= start:
            continue
        if mark.held[1] and end < len(out):
            held = mark.close[: len(mark.close) - len(mark.close.lstrip())]
            out[end] = out[end].removeprefix(held)
        if mark.held[0] and 0 < start < len(out) and not mark.shared:
            held = mark.raw[len(mark.raw.rstrip()) :]
            out[start] = out[start].removesuffix(held)
    return out
