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


def edges(reader, start: int, raw: str, close: str, gaps: tuple[int, int] = (0, 0)):
    """A pair's span (`start` to the reader's end of text) less the whitespace at its edges,
    which its opening `raw` / `close` take: (start, end, raw, close, Mark.held). Whitespace
    its markup has at its edge with a space outside it is taken out of the plain text (that
    space stays the separator); next to a word it stays as the separator, which it holds.
    `gaps`: the spaces first and last in the text that `raw` / `close` already hold (between
    the pieces kept in them: markdown_within.edge_pieces)."""
    spaced = reader._spaced(reader.at)
    before = max(start - 1, 0)  # the span's text and the character before it
    tail = since(reader.plain, reader.size, before)
    text = tail[start - before :]
    forms = reader.forms[start : reader.size]  # (as written: `&nbsp;` stays so in markup)
    # (at most the span's own: more whitespace before it would fail the test below too)
    space, lead = len(text) - len(text.rstrip()), len(text) - len(text.lstrip())
    free, holder = unheld(reader.spans, start, start + lead, reader.size - space)
    held = ("", "")
    if holder is not None:  # (whitespace an inner one holds: not this one's)
        a, b, inner = reader.spans[holder]
        if spaced:  # (`[<b>w </b>](u) ab`: no longer the separator)
            reader.spans[holder] = (a, b, replace(inner, held=(inner.held[0], "")))
            reader._drop(reader.size - space, space)
        elif gaps[1]:  # (and the spaces between the pieces its closing holds)
            held = ("", text[len(text) - gaps[1] :])
        space = 0
    lead = lead if free else gaps[0]
    if 0 < space < reader.size - start:  # `[runtime ](url)`: the space stays inside it
        close = "".join(forms[len(text) - space : len(text) - gaps[1]]) + close
        if spaced:
            reader._drop(reader.size - space, space)
        else:  # (`[w ](u)ab`: its words' separator, which it holds)
            held = ("", text[len(text) - space :])
    end = reader.size - space * bool(held[1])
    if lead and (start == 0 or tail[0].isspace()):  # `[ text](url)`: its opening
        reader._drop(start, lead)
        raw, end = raw + "".join(forms[gaps[0] : lead]), end - lead
    elif lead:  # (`x[ w](u)`: the separator before its first word, which it holds)
        raw, start = raw + "".join(forms[gaps[0] : lead]), start + lead
        held = (text[:lead], held[1])
    return start, end, raw, close, held


def released(reader, at: int, space: str) -> int:
    """Where a lone piece written right after a pair's closing, which the word after it does
    not touch (`[w ](u)<br> x`, `[w ](u)<br>` at the end), goes: before the whitespace
    `space` that plain position `at` follows, where that is the separator the pair holds
    (Mark.held): no longer the separator, it is taken out (its closing writes it)."""
    start, last = at - len(space), reader.pending[-1] if reader.pending else (0, 0)
    if not space or sum(last) > start:  # (whitespace taken out there: not the pair's)
        return at
    for k in range(len(reader.spans) - 1, -1, -1):
        a, b, mark = reader.spans[k]
        if mark is not None and mark.kind == "pair" and b == start and mark.held[1] == space:
            reader.spans[k] = (a, b, replace(mark, held=(mark.held[0], "")))
            reader._drop(start, len(space))
            return start
        if b < start:
            return at
    return at


# the tokens that close markup (an inline HTML tag: where it closed a pair)
_CLOSING = ("em_close", "strong_close", "s_close", "link_close", "html_inline")


def held_code(reader, start: int, content: str) -> tuple[str, str]:
    """The spaces a code span from `start` to the reader's place shows at its edges (its
    `content`, less the space CommonMark strips at both) where a word touches it outside
    (`` cc` dd` ``): the separator between that word and its own, which its raw holds
    (Mark.held), as a pair's markup does. The one after it is held only once a word
    follows (held_after): markup closing there holds its own."""
    src, end = reader.src, reader.at
    inner = src[start:end].strip("`")
    lead = content[: len(content) - len(content.lstrip(" "))]
    trail = content[len(content.rstrip(" ")) :]
    if not content.strip() or not inner.startswith(lead) or not inner.endswith(trail):
        return "", ""  # (a line break there: the source's separator stays)
    before = since(reader.plain, reader.size, reader.size - 1)
    # (a word, or a pair closing after one: not markup just opened, nor a lone piece)
    last = reader.spans[-1][2] if reader.spans else None
    closed = reader.last in _CLOSING and last is not None and last.kind == "pair"
    worded = (reader.last == "text" or closed) and before and not before.isspace()
    lead = lead if worded and not src[start - 1].isspace() else ""
    return lead, trail if end < len(src) and not src[end].isspace() else ""


def held_after(reader, tok) -> None:
    """The space a code span just read holds after it (held_code), held where the token
    `tok` after it starts a word: in the plain text as that word's separator."""
    trail, reader.trail = reader.trail, ""
    if trail and tok.type == "text" and not reader.src[reader.at : reader.at + 1].isspace():
        a, b, mark = reader.spans[-1]
        reader.spans[-1] = (a, b, replace(mark, held=(mark.held[0], trail)))
        reader.add(trail)


def held_seps(spans, seps: list[str]) -> list[str]:
    """The separators before the words less the whitespace a pair's markup holds, as the
    source wrote it inside its closing (on the word before) or its opening (on the word)."""
    out = list(seps)
    for start, end, mark in spans:
        if mark.kind not in ("pair", "atom") or end <= start:
            continue
        if mark.held[1] and end < len(out):
            out[end] = out[end].removeprefix(mark.held[1])
        if mark.held[0] and 0 < start < len(out) and not mark.shared:
            out[start] = out[start].removesuffix(mark.held[0])
    return out


def held_edges(spans, n: int) -> tuple[str, str]:
    """The whitespace a pair's markup holds before the first of a unit's `n` words (its
    opening on it) and after the last (its closing on it), as held_seps reads it: there
    the unit ends, and the text between units, which holds it too, must leave it out."""
    lead = trail = ""
    for start, end, mark in spans:
        if mark.kind not in ("pair", "atom") or end <= start:
            continue
        if end == n and len(mark.held[1]) > len(trail):
            trail = mark.held[1]
        if start == 0 and not mark.shared and len(mark.held[0]) > len(lead):
            lead = mark.held[0]
    return lead, trail


def unheld_gaps(written: list[str], plain: str, units, edges) -> list[str]:
    """`written` (each plain character as written) with the whitespace between units that
    a pair's markup at a unit's edge holds (`held_edges`, per unit) left out: the markup
    writes it (`[One. ](u)Two.`)."""
    out, free = list(written), 0  # (the first character no earlier unit has taken)
    for (a, b), (lead, trail) in zip(units, edges, strict=True):
        if lead and a - len(lead) >= free and plain[:a].endswith(lead):
            out[a - len(lead) : a] = [""] * len(lead)
        if trail and plain.startswith(trail, b):
            out[b : b + len(trail)] = [""] * len(trail)
        free = b + len(trail)
    return out
