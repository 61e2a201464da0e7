"""The open elements of an HTML document as documents/html_units.py reads it: a list,
innermost last, that also counts the open elements of each tag, keeps the inline ones
apart, and (inside an element copied as it is) counts those opened within it, so that
each tag costs the same at any depth: a document of thousands of nested tags is read in
time that grows with its length, not its square."""

from __future__ import annotations

from collections import Counter


class OpenStack(list):
    def __init__(self):
        super().__init__()
        self.counts: Counter = Counter()
        self.inline: list = []  # the open elements that carry a mark (inline markup)
        self.region: Counter | None = None  # the tags open inside the copied element

    def append(self, item) -> None:
        super().append(item)
        self.counts[item.tag] += 1
        if item.mark is not None:
            self.inline.append(item)
        if self.region is not None:
            self.region[item.tag] += 1

    def pop(self):
        item = super().pop()
        self.counts[item.tag] -= 1
        if item.mark is not None:
            self.inline.pop()
        if self.region is not None:
            self.region[item.tag] -= 1
        return item

    def holds(self, tag: str) -> bool:
        return self.counts[tag] > 0

    def copying(self) -> None:
        """The innermost element starts a region copied as it is."""
        self.region = Counter({self[-1].tag: 1})

    def holds_in_region(self, tag: str) -> bool:
        return self.region is not None and self.region[tag] > 0
