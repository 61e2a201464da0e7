"""Where a piece of a Markdown inline's markup or text ends in its source, as written:
what markdown_inline.py walks the source with. A piece it cannot find is Unreadable."""

from __future__ import annotations

import html
import re

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
