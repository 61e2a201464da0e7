"""A unit of HTML (html_units.py) cut into the sentences the model translates, with its
inline elements as spans over each sentence's words (html.py renders them back).

Beside the word ranges, a sentence keeps what word alignment alone would lose: the text
glued to a tagged word outside its tag ("(<b>Hund</b>).", "will<sup>1</sup>"), the text
around a piece copied whole inside its word ("(<code>x</code>):", pieces glued in one word
taken as one), and which empty pieces (a comment, an image) are glued to the word before or after
them (html_glue.py reads those). Elements before the first sentence or after the last are
not spans: the unit writes their edges in place (`sentences` returns them beside the
sentences).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from translator.documents.html_glue import Sentence, glue, within
from translator.documents.html_units import Mark, Unit
from translator.documents.segment import sentence_spans


class Bounds(list):
    """Sentence spans (sorted and apart) with their starts and ends, to find by bisection
    the sentence an offset falls in: each mark's costs no pass over the sentences."""

    def __init__(self, spans: list[tuple[int, int]]):
        super().__init__(spans)
        self.starts, self.ends = [a for a, _ in spans], [b for _, b in spans]


def _bounds(unit: Unit, lang: str | None) -> Bounds:
    """The unit's sentence spans, those a piece copied whole would cut joined again (an
    empty one, an image, cuts nothing)."""
    text = re.sub(r"\s", " ", "".join(unit.text))  # a line break in the source is a space
    out: list[tuple[int, int]] = []
    # pieces that hold text, by their start: the furthest end of those before a sentence
    # (not one holding whitespace alone, "<b> </b>": it parts words as a space does)
    pieces = sorted(
        (m.open_at, m.close_at)
        for m in unit.marks
        if m.atom and m.close_at > m.open_at and text[m.open_at : m.close_at].strip()
    )
    reach, n = -1, 0
    for a, b in sentence_spans(text, lang):
        while n < len(pieces) and pieces[n][0] < a:
            reach, n = max(reach, pieces[n][1]), n + 1
        if out and reach > out[-1][1]:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return Bounds(_join_crossed(unit, out))


def _join_crossed(unit: Unit, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The sentence spans with those an element crosses joined, where it opens or closes
    inside one's words ("A b <i>c d. E f</i> g."): a sentence writes an edge that crosses
    its ends only before or after its words."""
    starts, ends = [a for a, _ in spans], [b for _, b in spans]
    joins = []
    for mark in unit.marks:
        if mark.atom or mark.open_at is None or mark.close_at is None:
            continue
        i = bisect_right(ends, mark.open_at)  # the first sentence ending after it opens
        j = bisect_left(starts, mark.close_at) - 1  # the last starting before it closes
        if 0 <= i < j < len(spans) and (starts[i] < mark.open_at or mark.close_at < ends[j]):
            joins.append((i, j))
    if not joins:
        return spans
    out, reach, last = [], -1, {}  # (per sentence, the last one joined to it)
    for i, j in joins:
        last[i] = max(last.get(i, i), j)
    for n, (a, b) in enumerate(spans):
        if n <= reach:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
        reach = max(reach, last.get(n, n))
    return out


def _sentence_of(bounds: Bounds, mark: Mark, text: str):
    """The sentences a mark opens and closes in: an edge between sentences goes with the
    words it stands next to (an opening with the next, a closing with the one before; an
    empty piece glued to the word before it, with that word); (None, None) for a mark
    whose edges in this unit all lie before the first sentence or after the last."""
    last, at, close = len(bounds) - 1, mark.open_at, mark.close_at
    edges = [x for x in (at, close) if x is not None]
    if bounds and (all(x >= bounds[-1][1] for x in edges) or all(x <= bounds[0][0] for x in edges)):
        return None, None
    if _between(bounds, mark, text):
        return None, None  # an empty piece in the whitespace between sentences: in place
    opens = closes = None
    if at is not None:
        glued = mark.atom and at == close and at > 0 and not text[at - 1].isspace()
        # the first ending after it (glued: at it), else the last
        opens = min((bisect_left if glued else bisect_right)(bounds.ends, at), last)
    if close is not None:  # the last starting before it, else the first
        closes = max(bisect_left(bounds.starts, close) - 1, 0)
        if opens is not None and (closes < opens or close == at):
            closes = opens
    return opens, closes


def _between(bounds: Bounds, mark: Mark, text: str) -> bool:
    """Whether `mark` is an empty piece (or one holding whitespace alone) in the whitespace
    between two sentences."""
    at = mark.open_at
    if not bounds or not mark.atom or text[at : mark.close_at].strip():
        return False
    k = bisect_right(bounds.starts, at) - 1  # the last sentence starting at or before it
    # (an empty one at a sentence's end is glued to its last word; whitespace parts it)
    end = bounds[k][1] - (mark.close_at > at) if k >= 0 else -1
    return bounds[0][0] < at < bounds[-1][1] and not (k >= 0 and at <= end)


def _loose(bounds: Bounds, mark: Mark, text: str) -> bool:
    """Whether `mark` is an empty piece between two sentences: one holding whitespace goes
    with its parent's sentence instead, so that it stays inside that element."""
    return mark.open_at == mark.close_at and _between(bounds, mark, text)


def _outer(bounds: list[tuple[int, int]], where, mark: Mark, closing: bool) -> bool:
    """Whether an edge of `mark` lies before the unit's first sentence or after its last,
    outside the spans and the sentences' heads and tails: the unit writes it in place."""
    if where == (None, None):
        return True
    opens, closes = where
    if opens == closes:  # in one sentence: outside it where it wraps the unit's only one
        # (not a piece copied whole, which stands for the words it holds)
        return len(bounds) == 1 and not mark.atom and mark.open_at <= bounds[0][0] and (
            mark.close_at >= bounds[0][1])  # fmt: skip
    if closing:
        return closes == len(bounds) - 1 and mark.close_at is not None and (
            mark.close_at >= bounds[-1][1])  # fmt: skip
    return opens == 0 and mark.open_at is not None and mark.open_at <= bounds[0][0]


def _outside(unit: Unit, bounds, where) -> list[tuple[int, tuple[int, int], str, int]]:
    """The edges of marks before the first sentence or after the last (_outer), as (offset
    in the unit's text, order, source, the offset its source ends at: past the text of a
    piece copied whole, "<b> </b>", which its source writes)."""
    edges = []
    for mark, w in zip(unit.marks, where, strict=True):
        if mark.open_at is not None and _outer(bounds, w, mark, False):
            end = mark.close_at if mark.atom and mark.close_at is not None else mark.open_at
            edges.append((mark.open_at, (mark.order[0], 0), mark.open_raw, end))
        if mark.close_at is not None and _outer(bounds, w, mark, True):
            edges.append((mark.close_at, (mark.order[1], 1), mark.close_raw, mark.close_at))
    return sorted(edges)


def sentences(unit: Unit, lang: str | None):
    """(the unit's sentences, the edges of marks it writes in place around them: _outer)."""
    text = "".join(unit.text)
    bounds = _bounds(unit, lang)
    where = [_sentence_of(bounds, m, text) for m in unit.marks]
    for n, mark in enumerate(unit.marks):  # (a parent comes before its children)
        # (not one left open into a later unit, after a line break: its start tag is in place)
        if where[n] == (None, None) and mark.parent is not None and mark.close_at is not None and (
                where[mark.parent][1] is not None) and not _loose(bounds, mark, text) and not (
                _outer(bounds, where[mark.parent], unit.marks[mark.parent], False)):  # fmt: skip
            where[n] = (where[mark.parent][1],) * 2  # inside an element a sentence writes
    solid, out = _solid(unit), []
    by_sentence: dict = {}  # (each sentence's marks found once, not by a pass per sentence)
    crossing: dict = {}  # per sentence, the marks with one edge in it and one elsewhere
    for n, w in enumerate(where):
        by_sentence.setdefault(w, []).append(n)
        for k in {*w} - {None} if w[0] != w[1] else ():
            crossing.setdefault(k, []).append(n)
    for k, (a, b) in enumerate(bounds):
        starts = [a + w.start() for w in re.finditer(r"\S+", text[a:b])]
        ends = [a + w.end() for w in re.finditer(r"\S+", text[a:b])]
        inside = [n for n in by_sentence.get((k, k), [])
                  if not _outer(bounds, (k, k), unit.marks[n], False)]  # fmt: skip
        ranges, groups, shut = _ranges(unit, text, inside, starts, ends, solid)
        kept = [n for n in inside if n in ranges]
        spans = [(*ranges[n], n) for n in kept]
        at = {n: i for i, n in enumerate(kept)}
        parents = [at.get(unit.marks[n].parent) for n in kept]
        head, tail, head_in, tail_in = _edges(unit, text, bounds, where, k, crossing.get(k, []),
                                              (starts, ends))  # fmt: skip
        # (its extent takes in the spaces at the ends of a piece copied whole: the piece
        # writes them, not the whitespace around the sentence)
        reach = (
            min([a] + [g[0] for g in groups.values()]),
            max([b] + [g[1] for g in groups.values()]),
        )
        sentence = Sentence(reach, text[a:b], spans, parents, head, tail,
                            head_in=head_in, tail_in=tail_in)  # fmt: skip
        glue(sentence, unit, text, (groups, shut), (starts, ends), solid)
        out.append(sentence)
    return out, _outside(unit, bounds, where) if bounds else []


def _ranges(unit: Unit, text: str, inside: list[int], starts: list[int], ends: list[int],
            solid: set[int]):  # fmt: skip
    """The word range of each mark inside a sentence but those written with another, and
    the pieces written as in the source, by their first mark: a piece copied whole that
    holds text, and sibling marks that share one word ("<a>core</a><span>1.9</span>",
    "<code>a</code>/<code>b c</code>"), which word alignment cannot place apart, with
    everything inside them. Each group's characters in the unit's text."""
    ranges, groups, last, members, shut, opened = {}, {}, {}, {}, {}, {}
    for i, n in enumerate(inside):
        mark = unit.marks[n]
        if any(
            n != o and mark.open_at < end and within(unit, n, [o]) for o, (_, end) in opened.items()
        ):
            continue  # (inside a span cut to start at the next word, before it: in its lead)
        s = bisect_right(ends, mark.open_at)  # (words before it: the lists are sorted)
        if mark.close_at == mark.open_at:
            if n in solid and mark.open_at > 0 and not text[mark.open_at - 1].isspace() and (
                    s == len(ends) or not _leads_into(unit, inside[i:], ends[s])):  # fmt: skip
                s = bisect_left(starts, mark.open_at)  # glued to the word before it
            elif n in solid and last.get(mark.parent) not in groups and (
                    _shuts_before(unit, ranges, last.get(mark.parent), s, starts)):  # fmt: skip
                # (in the word its previous sibling ends in, after it: that one's end tag is
                # written in its lead, "<b>x 1</b><img><a>bc</a>")
                prev = last[mark.parent]
                ranges[prev], shut[n] = (ranges[prev][0], s), prev
            ranges[n] = (s, s)
            continue
        ranges[n] = (s, max(s, bisect_left(starts, mark.close_at)))
        prev = last.get(mark.parent)
        width = max(ranges[prev][1], ranges[n][1]) - ranges[prev][0] if prev is not None else 0
        # siblings sharing a word: one cut to end or to start there where it can be (_shuts,
        # _opens_late), else both written as in the source, as pieces copied whole are (a
        # piece inside one crossing that word, "<em>)</em><i><code>, (y</code></i>")
        overlap = prev is not None and ranges[prev][1] > s
        # (not a group: written whole as a piece is, its end tag is among its pieces)
        cut = overlap and width > 1 and not (mark.atom or unit.marks[prev].atom or prev in groups)
        shuts = cut and _shuts(unit, ranges, prev, s)
        late = cut and not shuts and ranges[n][1] > s + 1 and _opens_late(unit, inside, n, ends[s])
        if overlap and not (shuts or late):
            last[mark.parent] = _group(unit, ranges, (groups, members, opened), prev, n)
            continue
        if shuts:  # (it ends in the word this one opens in: its end tag is written in that word)
            ranges[prev], shut[n] = (ranges[prev][0], s), prev
        elif late:  # (it goes on past the word the other ends in: its start tag is written there)
            ranges[n], opened[n] = (s + 1, ranges[n][1]), (prev, ends[s])
        last[mark.parent] = n
        if mark.atom:
            groups[n], members[n] = (mark.open_at, mark.close_at), [n]
    for g, (lo, hi) in groups.items():  # empty pieces between its members join it too
        members[g] += [n for n in inside if unit.marks[n].open_at == unit.marks[n].close_at
                       and lo < unit.marks[n].open_at < hi and n not in members[g]
                       and unit.marks[n].parent == unit.marks[g].parent]  # fmt: skip
    for n in inside:  # the group's other members, and what they hold, are written with it
        # (those skipped in a late span's lead have none: that span joined a group)
        if n in ranges and any(g != n and within(unit, n, members[g]) for g in groups):
            del ranges[n]
    return ranges, {g: (*groups[g], members[g]) for g in groups}, (shut, opened)


def _group(unit: Unit, ranges, found, prev: int, n: int) -> int:
    """Join span `n` to the group of its previous sibling `prev`, with which it shares a
    word (_ranges), and return the group's first mark. A `prev` cut to open late shares its
    first word with the sibling it opened after too: that cut undone, the group starts there
    ("<b>.</b><b><b>b</b>a ba</b><u>a</u>"), its start tag no longer in a trail."""
    groups, members, opened = found
    chain = [prev]
    while chain[-1] in opened and chain[-1] not in groups:
        chain.append(opened.pop(chain[-1])[0])
    g, mark = chain[-1], unit.marks[n]
    lo = groups[g][0] if g in groups else unit.marks[g].open_at
    groups[g] = (lo, max(mark.close_at, groups.get(g, (0, 0))[1]))
    members.setdefault(g, [g])
    for m in [*reversed(chain[:-1]), n]:
        members[g] += [x for x in members.pop(m, [m]) if x not in members[g]]
        groups.pop(m, None)
    ranges[g] = (ranges[g][0], max(ranges[g][1], *(ranges[m][1] for m in chain), ranges[n][1]))
    return g


def _shuts(unit: Unit, ranges, prev: int, s: int) -> bool:
    """Whether span `prev`, which ends inside word `s` where its next sibling opens, keeps
    words before it and nothing inside it reaches that word: it is cut off there, its end
    tag written in that sibling's lead ("<b>a b</b>c<i>d e</i>")."""
    return ranges[prev][0] < s and not any(
        m != prev and ranges[m][1] > s and within(unit, m, [prev]) for m in ranges
    )


def _shuts_before(unit: Unit, ranges, prev: int | None, s: int, starts: list[int]) -> bool:
    """Whether sibling `prev` of an empty piece in word `s` (after the word's start) ends in
    that word and is cut off there (_shuts)."""
    return (
        prev is not None
        and s < len(starts)
        and ranges[prev][1] > s
        and unit.marks[prev].close_at > starts[s]
        and _shuts(unit, ranges, prev, s)
    )


def _opens_late(unit: Unit, inside: list[int], n: int, end: int) -> bool:
    """Whether all inside span `n` that opens in the word (ending at `end`) where `n` opens
    and its previous sibling ends, `n` going on past it, ends in it too: `n` is cut to start
    at the next word, its start tag and those written in that sibling's trail
    ("<em>w,</em><b>1(y z)</b>", "<b>Note</b><span>: long text</span>")."""
    return all(
        unit.marks[m].close_at is not None and unit.marks[m].close_at <= end
        for m in inside
        if m != n and unit.marks[m].open_at < end and within(unit, m, [n])
    )


def _leads_into(unit: Unit, inside: list[int], end: int) -> bool:
    """Whether a sibling of the empty piece `inside[0]` (or of the elements it ends) opens
    after it before `end`, the end of its word, or it starts its element: the piece goes
    with the word's text before it, ahead of that element ("a<!--c--><b>x</b>"), not after
    the word as the end of a word does ("x86_<wbr>64")."""
    piece, marks = unit.marks[inside[0]], unit.marks
    owners = [piece.parent]
    while owners[-1] is not None and marks[owners[-1]].close_at == piece.open_at:
        owners.append(marks[owners[-1]].parent)
    for n in inside[1:]:  # (in the order they open)
        if marks[n].open_at >= end:
            return False
        if marks[n].parent in owners and marks[n].close_at != marks[n].open_at:
            return True
    return False


def _edges(unit: Unit, text: str, bounds, where, k: int, crossing: list[int], words_at):
    """(head, tail, head_in, tail_in): the edges of marks that cross the sentence's ends
    (`crossing`: the marks with an edge in it and one elsewhere), in source order, but those
    the unit writes in place (_outer); those inside its first word (head_in) and its last
    (tail_in) apart, with the word's text glued to them (Sentence)."""
    starts, ends = words_at
    head: list[tuple[tuple[int, int], int, str]] = []
    tail: list[tuple[tuple[int, int], int, str]] = []
    for n in crossing:
        (opens, closes), mark, at = where[n], unit.marks[n], unit.marks[n].close_at
        if closes == k and opens != k and not _outer(bounds, where[n], mark, True):
            # (one inside the first word goes before it, as an opening there does)
            after = all(t < at for t in starts) and not (starts and starts[0] < at < ends[0])
            (tail if after else head).append(((0, mark.order[1]), at, mark.close_raw))
        at = mark.open_at
        if opens == k and closes != k and not _outer(bounds, where[n], mark, False):
            before = all(e > at for e in ends)
            (head if before else tail).append(((1, mark.order[0]), at, mark.open_raw))
    head.sort()
    tail.sort()
    if not starts:
        return [r for *_, r in head], [r for *_, r in tail], [], []
    # (in source order, those inside a word come after the others in the head, before them
    # in the tail; none is glued where some lie in a word between)
    glued = [(at, r) for _, at, r in head if at > starts[0]]
    if any(at >= ends[0] for at, _ in glued) or any(
        at > starts[0] for _, at, _ in head[: len(head) - len(glued)]
    ):
        glued = []
    outside = [r for _, at, r in head][: len(head) - len(glued)]
    head_in = [(text[lo:at], r) for (at, r), lo in zip(glued, [starts[0]] + [a for a, _ in glued])]
    inside = [(at, r) for _, at, r in tail if at < ends[-1]]
    if any(at <= starts[-1] for at, _ in inside) or any(
        at < ends[-1] for _, at, _ in tail[len(inside) :]
    ):
        inside = []
    ats = [a for a, _ in inside[1:]] + [ends[-1]]
    tail_in = [(r, text[at:hi]) for (at, r), hi in zip(inside, ats)]
    return outside, [r for _, _, r in tail][len(inside) :], head_in, tail_in


def _solid(unit: Unit) -> set[int]:
    """The marks placed as empty pieces copied whole: those pieces (atoms), and empty
    elements with nothing inside (`<i></i>`)."""
    holders = {m.parent for m in unit.marks}
    return {n for n, m in enumerate(unit.marks)
            if m.atom or (m.open_at == m.close_at and n not in holders)}  # fmt: skip
