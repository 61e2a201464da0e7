"""Word alignments as text: the Pharaoh format ("i-j i-j ...", source word i with target
word j) that fast_align, eflomal and Moses write. Light: no torch."""

from __future__ import annotations

Alignment = tuple[tuple[int, int], ...]  # (source word, target word) pairs, sorted


def pharaoh(alignment: Alignment | None) -> str:
    """ "i-j i-j ..." (empty for None or no pairs)."""
    return " ".join(f"{i}-{j}" for i, j in alignment or ())


def read_pharaoh(text: str) -> Alignment:
    """The pairs of a Pharaoh line; a token that is not "i-j" raises ValueError."""
    pairs = []
    for token in text.split():
        i, sep, j = token.partition("-")
        if not sep or not i.isdigit() or not j.isdigit():
            raise ValueError(f"{token!r} is not an i-j pair")
        pairs.append((int(i), int(j)))
    return tuple(sorted(pairs))
