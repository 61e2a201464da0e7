"""Each character of translated HTML spelled as its source spelled it, where it can be.

A page may write one character several ways ("&lt;" and "&#60;", "’" and "&rsquo;"). The
page's escaper (`escaper`) has one spelling per character, which translated sentences take;
text copied from the source (`Spelling.own`) and a sentence whose words come back as they
were (`Spelling.sentence`) take the source's own spelling of each occurrence instead.
"""

from __future__ import annotations

import html

# noncharacters, which no page writes: each stands for a character spelled several ways while
# a sentence is rendered, so that its occurrences can be told apart in the written text
_STANDS = [chr(c) for c in range(0xFDD0, 0xFDF0)]
_STANDING = frozenset(_STANDS)


def escaper(entities: dict[str, str]):
    # a character outside ASCII is written as the page wrote it ("&copy;"); ASCII's letters,
    # digits and signs plainly, not every "." as "&#46;" because the page wrote one so
    kept = {c: r for c, r in entities.items() if not c.isascii()}
    table = str.maketrans(kept)

    def escape(text: str) -> str:
        return html.escape(text, quote=False).translate(table)

    return escape


def note(spelled: dict[int, str | None], at: int, raw: str, value: str) -> None:
    """Record how the text token `raw` (read as `value`, from offset `at` of its unit's text)
    spells its characters: a reference its own way (None: a reference read as several
    characters, or without its ";", spelled as the page spells them); text plainly (no entry)."""
    if raw == value:
        return
    one = len(value) == 1 and raw.endswith(";")
    for n in range(len(value)):
        spelled[at + n] = raw if one else None


class Spelling:
    """A unit's characters as its source spells them (html_units.Unit.spelled)."""

    def __init__(self, unit, text: str, escape):
        self.text, self.spelled, self.escape = text, unit.spelled, escape
        # text inside pieces copied whole is written with their source, not escaped
        self.copied = [(m.open_at, m.close_at) for m in unit.marks
                       if m.atom and m.close_at is not None and m.close_at > m.open_at]  # fmt: skip

    def _source(self, at: int) -> str | None:
        return self.spelled.get(at, self.text[at])

    def own(self, lo: int, hi: int) -> str:
        """text[lo:hi], copied: each character spelled as in the source (where it is safe)."""
        out = []
        for at in range(lo, hi):
            c, next_ = self.text[at], self.text[at + 1] if at + 1 < hi else ""
            out.append(_safe(self._source(at), c, next_) or self.escape(c))
        return "".join(out)

    def sentence(self, lo: int, hi: int, words: str, translation: str):
        """(escape, fill) for rendering the sentence text[lo:hi] (read as `words`) translated
        as `translation`; where its words come back as they were, `escape` writes each
        character the source spells otherwise than the page's escaper as a stand-in, and
        `fill` puts the source's spellings in their place in the rendered text, in order
        (where it holds as many of that character as the source)."""
        if translation.split() != words.split():
            return self.escape, lambda rendered: rendered
        kept = [(lo_, hi_) for lo_, hi_ in self.copied if lo_ < hi and hi_ > lo]
        seen: dict[str, list[str | None]] = {}
        for at in range(lo, hi):
            if any(a <= at < b for a, b in kept):
                continue
            seen.setdefault(self.text[at], []).append(self._source(at))
        odd = [c for c, ways in seen.items() if any(w != self.escape(c) for w in ways)]
        if not odd or _STANDING & set(self.text[lo:hi]):
            return self.escape, lambda rendered: rendered
        stand = dict(zip(odd, _STANDS, strict=False))
        table, escape = str.maketrans(stand), self.escape

        def marked(text: str) -> str:
            return escape(text.translate(table))

        def fill(rendered: str) -> str:
            found = {c: rendered.count(s) for c, s in stand.items()}
            back = {s: c for c, s in stand.items()}
            left = {c: iter(seen[c]) for c in stand if found[c] == len(seen[c])}
            out = []
            for n, ch in enumerate(rendered):
                if ch not in back:
                    out.append(ch)
                    continue
                c = back[ch]
                way = next(left[c]) if c in left else None
                following = back.get(rendered[n + 1 : n + 2], rendered[n + 1 : n + 2])
                out.append(_safe(way, c, following) or escape(c))
            return "".join(out)

        return marked, fill


def _safe(way: str | None, c: str, following: str) -> str | None:
    """`way` of writing `c`, where it reads as `c` before `following`: a plain "<" or "&"
    only before whitespace (before a letter it would begin a tag or a reference)."""
    if way is None or (way in ("<", "&") and not following[:1].isspace()):
        return None
    return way
