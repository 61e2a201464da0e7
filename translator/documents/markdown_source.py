"""Where a piece of a Markdown inline's markup or text ends in its source, as written:
what markdown_inline.py walks the source with. A piece it cannot find is Unreadable."""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});")


class Unreadable(Exception):
    """The source does not hold what the parser read from it."""


def match_text(src: str, at: int, text: str, forms: list[str] | None = None) -> int:
    """Where `text` (a text token's decoded content) ends in `src` read from `at`: each
    character as is, backslash-escaped or as an entity (each as written: `forms`)."""
    forms = [] if forms is None else forms
    for ch in text:
        if (m := _ENTITY.match(src, at)) and html.unescape(m.group()) == ch:
            forms.append(m.group())  # before the character itself: '&' of '&amp;'
            at = m.end()
        elif src.startswith("\\" + ch, at):  # first: `\\"` is an escaped \ then a "
            forms.append("\\" + ch)
            at += 2
        elif src.startswith(ch, at):
            forms.append(ch)
            at += 1
        else:
            raise Unreadable(f"text {text!r} not found at {at}")
    return at


def expect(src: str, at: int, raw: str) -> int:
    if not src.startswith(raw, at):
        raise Unreadable(f"{raw!r} not found at {at}")
    return at + len(raw)


def balanced(src: str, at: int, opening: str, closing: str) -> int:
    """The end of the bracketed run starting at `at` (src[at] == opening)."""
    depth, k = 0, at
    while k < len(src):
        ch = src[k]
        if ch == "\\":
            k += 2
            continue
        depth += (ch == opening) - (ch == closing)
        k += 1
        if depth == 0:
            return k
    raise Unreadable(f"unclosed {opening} at {at}")


def destination(src: str, at: int) -> int:
    """The end of a link's `]` and what follows it: `(url "title")`, `[label]` or nothing."""
    at = expect(src, at, "]")
    if src.startswith("(", at):
        return balanced(src, at, "(", ")")
    if src.startswith("[", at):
        return balanced(src, at, "[", "]")
    return at


def taken_out(
    text: str, forms: list[str], drops: list[tuple[int, int]]
) -> tuple[list[str], list[str], Callable[[int], int]]:
    """The plain text and its characters' forms with `drops` ((start, length), in order and
    apart) taken out in one pass, and where each of their positions moves."""
    kept, kept_forms, last = [], [], 0
    for at, n in drops:
        kept.append(text[last:at])
        kept_forms += forms[last:at]
        last = at + n
    kept.append(text[last:])
    kept_forms += forms[last:]
    starts = [at for at, _ in drops]
    before = list(accumulate((n for _, n in drops), initial=0))  # taken out before each

    def moved(p: int) -> int:
        i = bisect_right(starts, p) - 1  # the last drop starting at or before p
        return p if i < 0 else p - before[i] - min(drops[i][1], p - drops[i][0])

    return ["".join(kept)], kept_forms, moved


def since(plain: list[str], size: int, at: int) -> str:
    """The plain text (its pieces `plain`, `size` characters in all) from `at` on, joined
    from the last pieces only: a span's closing reads its own words, not the whole
    paragraph's."""
    parts, begin = [], size
    for piece in reversed(plain):
        if begin <= at:
            break
        parts.append(piece)
        begin -= len(piece)
    return "".join(reversed(parts))[at - begin :]


def ending(plain: list[str], size: int, at: int, floor: int) -> tuple[bool, str]:
    """Whether the plain text (its pieces `plain`, `size` characters in all) before `at`
    holds a word, and the whitespace it ends in, read back from `at` only as far as its
    last word; whitespace ending at `floor` is a word's (one taken out was there)."""
    begin, space = size, ""
    for piece in reversed(plain):
        begin -= len(piece)
        if begin >= at:
            continue  # after `at`
        end = word = min(at - begin, len(piece))
        while word and piece[word - 1].isspace() and begin + word != floor:
            word -= 1
        if word:
            return True, piece[word:end] + space
        space = piece[:end] + space
    return False, space
