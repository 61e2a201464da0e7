"""A translation's words rendered back with the Markdown markup that
markdown_inline.read_inline read from the source: pairs around the words aligned to theirs,
atoms in place of the words that stand for them, lone marks glued where they were, and
characters escaped as the source escaped them."""

from __future__ import annotations

import dataclasses
import re

from translator.documents.markdown_escapes import Escapes
from translator.documents.markdown_marks import Mark
from translator.documents.units import GLUED

Segments = list[tuple[int, int, str]]  # atoms' (start, end, raw) in a word's plain text


Edge = tuple[Mark, int, int]  # a pair's mark and the [lo, hi) of its word in the text


def _fold(text: str) -> str:
    """`text` in small letters, where that keeps its length (offsets stay valid)."""
    return text.lower() if len(text.lower()) == len(text) else text


def _atoms(words: list[str], start: int, atoms: list[tuple[int, Mark]]):
    """The plain text of the target words from `start` that the atoms (each (end, Mark))
    cover, where each atom stands in it, and where each of those words does ([lo, hi); all
    of the text where it is not theirs): where the words hold what the model read for each atom (a copied code span; as
    written first, else in any case, after its glued text first), there; else the source
    word's own text, glued text and all, with the atoms where they were in it."""
    last = max(end for end, _ in atoms)
    joined = " ".join(words[start:last])
    folded = _fold(joined)
    segments: Segments = []
    at = 0
    for _, mark in atoms:
        text = " ".join(mark.text.split())
        found = joined.find(text, at) if text else -1
        if found < 0 and text:  # in other case: after the glued text as in the source first
            where = max(at, len(mark.prefix))
            found = (
                where if folded.startswith(text.lower(), where) else folded.find(text.lower(), at)
            )
        if found < 0:
            break
        segments.append((found, found + len(text), mark.raw))
        at = found + len(text)
    else:
        bounds, lo = [], 0
        for word in words[start:last]:
            bounds.append((lo, lo + len(word)))
            lo += len(word) + 1
        return joined, segments, bounds
    marks = [mark for _, mark in atoms]
    word = marks[-1].prefix + marks[-1].text + marks[-1].suffix
    segments = [(len(m.prefix), len(m.prefix) + len(m.text), m.raw) for m in marks]
    return word, segments, [(0, len(word))] * (last - start)


def _fits(folded: str, edge: Edge, opening: bool) -> int | None:
    """Where in its word the markup opens (after its glued prefix) or closes (before its
    glued suffix), when the word still has that text (in any case) and some of its own."""
    mark, lo, hi = edge
    glued = (mark.prefix if opening else mark.suffix).lower()
    if len(glued) >= hi - lo:
        return None
    if mark.bare[0 if opening else 1]:  # the word's own punctuation stays outside
        lead, core, trail = GLUED.match(folded[lo:hi]).groups()
        if core:
            return lo + len(lead) if opening else hi - len(trail)
    if opening:
        return lo + len(glued) if folded.startswith(glued, lo) else None
    return hi - len(glued) if folded[lo:hi].endswith(glued) else None


def _edges(word: str, opens: list[Edge], closes: list[Edge], inside: list[Mark], inner):
    """{mark: [where it opens, where it closes]} in `word` (-1: before it, len + 1: after
    it) for the pairs opening and closing on it, and [(where, mark)] for the lone marks glued
    inside it. Each edge goes where the source had it inside its word; where the word no
    longer has that text, or the edges would cross or fall inside an atom (`inner`),
    openings go to their word's start and closings to its end."""
    folded, n = _fold(word), len(word)
    plain = {edge[0]: [-1, n + 1] for edge in opens + closes}  # the edges at word bounds
    for mark, lo, _ in opens:
        plain[mark][0] = lo
    for mark, _, hi in closes:
        plain[mark][1] = hi
    spans = {m: list(edges) for m, edges in plain.items()}
    for edge in opens:
        if (at := _fits(folded, edge, True)) is not None:
            spans[edge[0]][0] = at
    for edge in closes:
        if (at := _fits(folded, edge, False)) is not None:
            spans[edge[0]][1] = at
    for m, (a, b) in spans.items():
        if a >= b:
            spans[m] = plain[m]
    pairs = list(spans.values())
    if any(a1 < a2 < b1 < b2 for a1, b1 in pairs for a2, b2 in pairs) or any(
        p in inner for pair in pairs for p in pair
    ):
        spans = plain
    lone = []
    for m in inside:
        at = len(m.prefix)
        fits = at <= n and folded.startswith(m.prefix.lower()) and at not in inner
        lone.append((at if fits else None, m))
    return spans, lone


def _word(word: str, segments: Segments, opens, closes, inside, chars) -> tuple[str, list[str]]:
    """`word` rendered: its characters as `chars` writes them, the atoms' raws in place of
    their `segments`, the markup of the pairs opening (`opens`) and closing (`closes`) on it
    and the lone marks glued inside it (`inside`) at their edges (_edges); and the raws of
    lone marks that found no place in it, to go after it."""
    inner = {p for s, e, _ in segments for p in range(s + 1, e)}
    spans, lone = _edges(word, opens, closes, inside, inner)
    lost = [m.raw for at, m in lone if at is None]
    # at one place: lone marks, closings (inner first), openings (outer first); a lone mark
    # the source wrote after a closing there comes after the closings (`[a](u)<br>[b](v)`)
    closed: dict[int, int] = {}
    for m, (_, b) in spans.items():
        closed[b] = max(closed.get(b, -1), m.close_src)
    events = [(at, 1.5 if m.src > closed.get(at, m.src) else 0, 0, m.raw)
              for at, m in lone if at is not None]  # fmt: skip
    events += [(b, 1, (-a, -m.order), m.close) for m, (a, b) in spans.items() if b <= len(word)]
    events += [(a, 2, (-b, m.order), m.raw) for m, (a, b) in spans.items() if a >= 0]
    forms = chars(word, bool(segments))
    starts = {s: (e, raw) for s, e, raw in segments}
    out, at = [], 0

    def text_to(end: int) -> None:
        nonlocal at
        while at < end:
            if at in starts:
                out.append(starts[at][1])
                at = starts[at][0]
            else:
                out.append(forms[at])
                at += 1

    for where, *_, raw in sorted(events, key=lambda e: e[:3]):
        text_to(where)
        out.append(raw)
    text_to(len(word))
    return "".join(out), lost


def _sorted(marks) -> list[Mark]:
    return [m for *_, m in sorted(marks, key=lambda x: x[:2])]


def render(words: list[str], seps: list[str], spans, escapes: Escapes | None = None) -> str:
    """The target `words` joined by `seps` with each span's markup: spans are
    (start, end, Mark) word ranges of `words` as inline.transfer gives them; characters the
    source escaped are escaped the same way in the words."""
    chars = escapes.writer() if escapes else list
    spans, labels = _marked_labels(spans)
    n = len(words)
    opens, closes = [[] for _ in range(n + 1)], [[] for _ in range(n + 1)]
    after, before, lead = [[] for _ in range(n + 1)], [[] for _ in range(n + 1)], []
    inside: list[list[Mark]] = [[] for _ in range(n + 1)]
    atoms: dict[int, list[tuple[int, Mark]]] = {}
    covered: dict[int, int] = {}  # a word inside an atom -> the word the atom starts at
    for start, end, mark in sorted(spans, key=lambda span: span[:2]):
        if mark.kind == "pair" and end > start:
            opens[start].append((-end, mark.order, mark))
            closes[end - 1].append((-start, -mark.order, mark))
        elif mark.kind == "atom" and end > start:
            first = covered.get(start, start)  # one atom starting inside another joins it
            atoms.setdefault(first, []).append((end, mark))
            covered |= dict.fromkeys(range(first + 1, max(end for end, _ in atoms[first])), first)
        elif mark.kind == "inside" and start < n:
            inside[start].append(mark)
        elif mark.kind == "pair" and mark.raw.strip("*_~") == "":
            continue  # emphasis left no word: bare delimiters would read as text (or a rule)
        elif mark.kind == "lead" or (start == 0 and n):
            lead.append(mark.raw + mark.close)
        elif mark.kind == "before" and start < n:
            before[start].append(mark.raw)
        else:  # an empty span, or a lone raw: after the word before it
            after[start - 1 if n else 0].append(mark.raw + mark.close)
    out = list(lead)
    for k in range(n):
        if k in covered:  # inside an atom, whose first word has its markup
            out += [*after[k], *(m.raw for m in inside[k])]
            continue
        if k in atoms:  # the atoms' words as one, with the markup on any of them
            word, segments, bounds = _atoms(words, k, atoms[k])
            o = [(m, *at) for j, at in enumerate(bounds, k) for m in _sorted(opens[j])]
            c = [(m, *at) for j, at in enumerate(bounds, k) for m in _sorted(closes[j])]
            text, _ = _word(word, segments, o, c, [], chars)
            lost = [m.raw for m in inside[k]]
        else:
            o = [(m, 0, len(words[k])) for m in _sorted(opens[k])]
            c = [(m, 0, len(words[k])) for m in _sorted(closes[k])]
            text, lost = _word(words[k], [], o, c, inside[k], chars)
        out += [seps[k] if k else "", *before[k], text, *after[k], *lost]
    if not n:
        out += after[0]
    return _labelled("".join(out), labels)


_LINK = re.compile(r"\0(\d+)\[(.*?)\0\1\]", re.S)
_LEFT = re.compile(r"\0(\d+)([\[\]])")


def _marked_labels(spans) -> tuple[list, list[Mark]]:
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


def _labelled(text: str, labels: list[Mark]) -> str:
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
