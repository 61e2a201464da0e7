"""The text of the words a piece copied whole (`code`) stands in place of (html.py writes
the piece from its source): where the piece's own text lies in them, and the text beyond
it, glued outside the piece, that is kept beside it.
"""

from __future__ import annotations

import re
from collections import Counter

from translator.documents.units import punctuation


def places(joined: str, text: str) -> list[int]:
    """Where `text` (nonempty) begins in `joined`, each place (in any case, where the case
    keeps the length: a piece copied whole keeps its source's case, the words may not)."""
    if len(joined.lower()) == len(joined) and len(text.lower()) == len(text):
        joined, text = joined.lower(), text.lower()
    out, at = [], joined.find(text) if text else -1
    while at >= 0:
        out.append(at)
        at = joined.find(text, at + 1)
    return out


def around(covered: list[str], text: str) -> tuple[str, str] | None:
    """(prefix, suffix): the text of the words a piece copied whole covers beyond its own
    words, where each of those lies in one of them ("y aax" of "aa" and "x y"): glued text
    outside an element round the piece, kept in place of the source's. Text between them
    is kept too: punctuation after the piece, letters and digits before it."""
    rest = list(covered)
    if not text.split():  # (whitespace alone: nothing of its own to find)
        return None
    for word in text.lower().split():
        n = next((n for n, w in enumerate(rest) if word in w.lower()), None)
        if n is None or len(rest[n].lower()) != len(rest[n]):
            return None
        at = rest[n].lower().find(word)
        rest[n] = rest[n][:at] + "\0" + rest[n][at + len(word) :]
    joined = " ".join(rest)
    first, last = joined.find("\0"), joined.rfind("\0")
    middle = [p for p in re.split(r"[\0\s]+", joined[first + 1 : last]) if p]
    prefix = joined[:first].strip() + "".join(p for p in middle if not punctuation(p))
    return prefix, "".join(p for p in middle if punctuation(p)) + joined[last + 1 :].strip()


def scattered(covered: list[str], text: str) -> tuple[str, str] | None:
    """(prefix, suffix): the text of the words a piece copied whole covers less the piece's
    own characters, taken out one by one in any case, where the words hold all of them
    (the model scattered them: "b. !!b" of "b b."): what stands before the first of them,
    and the rest; None where they do not (the model translated them)."""
    need = Counter(c.lower() for c in text if not c.isspace())
    prefix, suffix, seen = [], [], False
    for c in " ".join(covered):
        if need[c.lower()] > 0:
            need[c.lower()] -= 1
            seen = True
        elif not c.isspace():
            (suffix if seen else prefix).append(c)
    return None if +need else ("".join(prefix), "".join(suffix))


def beside(covered: list[str], text: str, near: int) -> tuple[str, str] | None:
    """(prefix, suffix): what the words a piece copied whole covers hold before and after
    its text, found whole (of its places, the nearest to `near`: "z)<kbd>z)</kbd>"), in
    their words turned round (around) or scattered in them (scattered); None where they
    do not hold it (the model translated it)."""
    joined = " ".join(covered)
    found = min(places(joined, text), key=lambda at: abs(at - near), default=-1)
    if found >= 0:
        return joined[:found], joined[found + len(text) :]
    return around(covered, text) or scattered(covered, text)


def holds(covered: list[str], text: str) -> bool:
    """Whether the words hold a piece's text as _Writer._close_atom finds it (beside)."""
    # (whitespace alone: nothing of its own to find)
    return not text.strip() or beside(covered, text, 0) is not None
