"""The lone pieces (markup with no words) a Markdown inline's reading has placed, by where
they stand in its source: markdown_inline.py joins a piece with one right beside it."""

from __future__ import annotations


class Lones:
    """Each standing lone piece's span index, by where it starts and ends in the source."""

    def __init__(self) -> None:
        self.starts: dict[int, int] = {}
        self.ends: dict[int, int] = {}
        self.bounds: dict[int, tuple[int, int]] = {}  # index -> where it starts and ends

    def add(self, k: int, start: int, end: int) -> None:
        self.starts[start] = self.ends[end] = k
        self.bounds[k] = (start, end)

    def take(self, k: int) -> tuple[int, int]:
        """Where piece `k` starts and ends, no longer standing."""
        start, end = self.bounds.pop(k)
        del self.starts[start], self.ends[end]
        return start, end

    def beside(self, spans: list, start: int, end: int, at: int, pending) -> int | None:
        """The index of a piece at plain position `at` (of `spans`) that ends where
        src[start:end] starts or starts where it ends, if any; `pending`: the whitespace
        noted to be taken out, not yet taken out (a place right after its last run is where
        that run starts)."""
        last = pending[-1] if pending else (-1, 0)
        for k in (self.ends.get(start), self.starts.get(end)):
            if k is not None and (last[0] if spans[k][0] == sum(last) else spans[k][0]) == at:
                return k
        return None
