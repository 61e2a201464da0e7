"""How a Markdown inline's source wrote its characters (markdown_inline.read_inline reads
it, markdown_render.render writes a translation's words so)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SYNTAX = set("*_`[]<\\&~!|")  # what starts markup anywhere in a line, unescaped


@dataclass(frozen=True)
class Escapes:
    """How the source wrote characters otherwise than as themselves (a backslash escape, an
    entity): `written`, each plain character as written; `words`, for each word of the
    source, its characters as written at each place it stands, in order;
    `always`, the characters to escape in other words: those written so wherever the
    source's text (code aside) has them, and those that make markup inside a line where
    the source escaped them once. A target word the source has is written as the source
    wrote it at its next place; other words escape the characters in `always`."""

    written: list[str]
    words: dict[str, list[list[str]]]
    always: dict[str, str]

    @classmethod
    def of(cls, plain: str, forms: list[str], code: set[int]) -> Escapes:
        words: dict[str, list[list[str]]] = {}
        for m in re.finditer(r"\S+", plain):
            # words with code in them apart: their code is written as its raw
            key = m.group() if code.isdisjoint(range(m.start(), m.end())) else "\0" + m.group()
            words.setdefault(key, []).append(forms[m.start() : m.end()])
        seen: dict[str, set[str]] = {}
        for at, (ch, form) in enumerate(zip(plain, forms, strict=True)):
            if at not in code:
                seen.setdefault(ch, set()).add(form)
        always = {}
        for ch, written in seen.items():
            escaped = sorted(written - {ch})
            if escaped and (ch in _SYNTAX or ch not in written):
                always[ch] = escaped[0]
        return cls(forms, words, always)

    def writer(self):
        """A function giving each character of a text as it is to be written, for the
        texts of one rendering in their order (`code`: words with code in them)."""
        used: dict[str, int] = {}

        def chars(text: str, code: bool = False) -> list[str]:
            out: list[str] = []
            for m in re.finditer(r"\S+|\s+", text):
                word = m.group()
                key = "\0" + word if code else word
                if places := self.words.get(key):
                    k = used[key] = used.get(key, -1) + 1
                    out += places[min(k, len(places) - 1)]
                else:
                    out += [self.always.get(ch, ch) for ch in word]
            return out

        return chars
