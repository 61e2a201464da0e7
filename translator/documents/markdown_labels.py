"""Shortcut and collapsed reference links (`[label]`, `[label][]`) rendered by
markdown_render.py: their words marked at their edges while rendering, then their closings
written back so that each still finds its definition."""

from __future__ import annotations

import dataclasses
import re

from translator.documents.markdown_marks import Mark

_LINK = re.compile(r"\0(\d+)\[(.*?)\0\1\]", re.S)
_LEFT = re.compile(r"\0(\d+)([\[\]])")


def marked_labels(spans) -> tuple[list, list[Mark]]:
    """The spans with each shortcut or collapsed reference link's words marked at their
    edges (NUL, which no text holds, and its number), and those links' marks."""
    labels, out = [], []
    for start, end, mark in spans:
        if mark.label:
            k = len(labels)
            labels.append(mark)
            mark = dataclasses.replace(mark, raw=f"{mark.raw}\0{k}[", close=f"\0{k}]")
        out.append((start, end, mark))
    return out, labels


def labelled(text: str, labels: list[Mark]) -> str:
    """`text` with the marked links' closings written back: as they were where the words
    still match the label (CommonMark matches labels case- and spacing-blind), else naming
    the label (`[guitar][Gitarre]`), so the link still finds its definition."""

    def same(a: str, b: str) -> bool:
        return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()

    def closing(k: int, words: str | None) -> str:
        close, label = labels[k].close, labels[k].label
        if words is None or same(words, label):
            return close
        space = close[: len(close) - len(close.lstrip())]
        return f"{space}][{label}]"

    if not labels:
        return text
    text = _LINK.sub(lambda m: m.group(2) + closing(int(m.group(1)), m.group(2)), text)
    # a link's edge rendered without the other: its raw as it was
    return _LEFT.sub(lambda m: closing(int(m.group(1)), None) if m.group(2) == "]" else "", text)
