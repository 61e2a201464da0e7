"""Inline markup carried across a translation by its word alignment.

A span is a word range [start, end) of `source.split()` with an opaque payload (a tag, a
run's formatting). `transfer` gives each span a word range of `translation.split()`: the
smallest range covering the target words aligned to the span's words (of the several one
source word may have, its longest; of far-apart groups, the largest: `core`), made to nest
exactly as the source spans nest (a child inside its parent, siblings apart), so a renderer
never has to drop or split a tag. A span no alignment places (no aligned word, or no
alignment at all) keeps its relative position inside its parent. Every span survives.

Spans nest by their ranges; a range equal to another's is inside it when it comes later in
the list, and an empty span at the end of a nonempty one sits after it. A caller that knows
its tree better (empty elements at edges) passes `parents` itself.
"""

from bisect import bisect_left
from collections.abc import Sequence
from typing import TypeVar

P = TypeVar("P")
Span = tuple[int, int, P]
Alignment = Sequence[tuple[int, int]] | None


def nesting(spans: Sequence[tuple[int, int, object]]) -> list[int | None]:
    """Each span's parent (an index into `spans`) or None at the top, read from the ranges;
    ValueError when a range is backwards or two spans cross."""
    order = sorted(range(len(spans)), key=lambda k: (spans[k][0], -spans[k][1], k))
    parents: list[int | None] = [None] * len(spans)
    stack: list[int] = []
    for k in order:
        start, end = spans[k][0], spans[k][1]
        if not 0 <= start <= end:
            raise ValueError(f"span {k} has range [{start}, {end})")
        while stack and not _contains(spans[stack[-1]], start, end):
            top = spans[stack.pop()]
            if start < top[1] < end:
                raise ValueError(f"span {k} crosses another span")
        parents[k] = stack[-1] if stack else None
        stack.append(k)
    return parents


MAX_NESTING = 100  # spans inside spans: deeper is no prose, and carrying it recurses


def deepest(parents: Sequence[int | None]) -> int:
    """How deep spans of these parents (nesting) nest, 0 for none; each parent is read once,
    so thousands of levels cost no more than thousands of siblings."""
    depths = [0] * len(parents)
    for k in range(len(parents)):
        chain, at = [], k
        while at is not None and not depths[at]:
            chain.append(at)
            at = parents[at]
        depth = depths[at] if at is not None else 0
        for node in reversed(chain):
            depth += 1
            depths[node] = depth
    return max(depths, default=0)


def _contains(outer: tuple[int, int, object], start: int, end: int) -> bool:
    if start == end == outer[1] and outer[0] < outer[1]:
        return False  # an empty span at a nonempty one's end follows it
    return outer[0] <= start and end <= outer[1]


def transfer(
    spans: Sequence[Span],
    source: str,
    translation: str,
    alignment: Alignment,
    parents: Sequence[int | None] | None = None,
) -> list[Span]:
    """The spans as word ranges of `translation.split()`, in the order given, each with its
    payload; `alignment` holds (source word, target word) pairs, or None when there is none."""
    n_src, n_tgt = len(source.split()), len(translation.split())
    words = translation.split()
    if any(end > n_src for _, end, _ in spans):
        raise ValueError(f"a span ends after the source's {n_src} words")
    if parents is None:
        parents = nesting(spans)
    children: dict[int | None, list[int]] = {}
    for k, parent in enumerate(parents):
        children.setdefault(parent, []).append(k)
    aligned: list[list[int]] = [[] for _ in range(n_src)]
    for i, j in alignment or ():
        if 0 <= i < n_src and 0 <= j < n_tgt:
            aligned[i].append(j)
    placed = [(0, 0)] * len(spans)
    needs = _needs(spans, children)

    def place(kids: list[int], src: tuple[int, int], lo: int, hi: int) -> None:
        targets = {}
        for k in kids:
            start, end = spans[k][0], spans[k][1]
            by_source = [[j for j in aligned[i] if lo <= j < hi] for i in range(start, end)]
            targets[k] = core(by_source, words)
        wanted = _apart(targets, lo, hi)
        for k in kids:
            if src[0] == spans[k][0] < spans[k][1] == src[1]:
                wanted[k] = (lo, hi)  # all its parent's words (the whole sentence): all of theirs
            if k not in wanted:
                start, end = spans[k][0], spans[k][1]
                wanted[k] = (_scale(start, src, lo, hi), _scale(end, src, lo, hi))
        wanted = sorted((*at, k) for k, at in wanted.items())
        for k, at in zip([k for *_, k in wanted], _pack(wanted, needs, lo, hi)):
            placed[k] = at
            place(children.get(k, []), (spans[k][0], spans[k][1]), *at)

    place(children.get(None, []), (0, n_src), 0, n_tgt)
    return [(start, end, span[2]) for (start, end), span in zip(placed, spans)]


def core(by_source: list[list[int]], words: list[str]) -> list[int]:
    """The target words a span wraps, from those aligned to each of its source words
    (`by_source`): of the several words one source word has (`spielt`: "is playing",
    `vor`: "in front of"), its longest, since the short ones around it are the articles,
    auxiliaries and prepositions the target language adds, which the head aligns to the
    nearest content word (a tag around `spielt` wraps "playing"); then, of those words, the
    largest group with at most one word between neighbours, so a stray link to a far word
    does not stretch the tag over the words between. Both rules were chosen on
    bench_tags.py's tagged sources (docs/documents.md has the figures)."""
    picked = sorted({max(found, key=lambda j: (_letters(words[j]), j)) for found in by_source
                     if found})  # fmt: skip
    if not picked:
        return picked
    groups = [[picked[0]]]
    for j in picked[1:]:
        if j - groups[-1][-1] <= 2:
            groups[-1].append(j)
        else:
            groups.append([j])
    return max(groups, key=len)


def _letters(word: str) -> int:
    return sum(c.isalnum() for c in word)


def _apart(targets: dict[int, list[int]], lo: int, hi: int) -> dict[int, tuple[int, int]]:
    """Ranges for siblings with aligned target words (`targets`, sorted), apart from each
    other: taken in the order of their middle aligned word, each pair of neighbours is cut
    where both keep words of their own and fewest fall on the wrong side, and each range
    covers its own words on its side of the cuts. Smallest covering ranges alone would let one tag's range
    swallow a neighbour's words whenever the two are interleaved."""
    order = sorted((t[len(t) // 2], k) for k, t in targets.items() if t)
    keys = [k for _, k in order]
    cuts = [lo]
    for a, b in zip(keys, keys[1:]):
        left, right = targets[a], targets[b]
        # the cost only changes just after a word of either side: those and the first
        # candidate are the only cuts that can be cheapest (ties go to the smaller cut)
        tried = [cuts[-1], *(j + 1 for j in (*left, *right) if cuts[-1] < j + 1 <= hi)]
        cuts.append(min(tried, key=lambda c, left=left, right=right: _cut_cost(c, left, right)))
    cuts.append(hi)
    out = {}
    for n, k in enumerate(keys):
        mine = [j for j in targets[k] if cuts[n] <= j < cuts[n + 1]]
        if mine:
            out[k] = (mine[0], mine[-1] + 1)
        else:  # all its words went to neighbours: its edge of the region nearest them
            edge = cuts[n + 1] if targets[k][0] >= cuts[n + 1] else cuts[n]
            out[k] = (edge, edge)
    return out


def _cut_cost(c: int, left: list[int], right: list[int]) -> tuple[int, int, int, int]:
    """How bad a cut before word `c` is between two siblings' words: a side left without a
    word of its own (its tag would wrap words aligned to nothing it wrapped), then words on
    the wrong side, then the left side's loss before the right's, then c."""
    has_left, has_right = left[0] < c, right[-1] >= c
    wrong = len(left) - bisect_left(left, c) + bisect_left(right, c)  # both sorted
    return -(has_left + has_right), wrong, -has_left, c


def _scale(at: int, src: tuple[int, int], lo: int, hi: int) -> int:
    """A source position carried to the same relative place in [lo, hi] (rounded half up)."""
    width = src[1] - src[0]
    if width <= 0:
        return lo
    offset = (2 * (at - src[0]) * (hi - lo) + width) // (2 * width)
    return min(max(lo + offset, lo), hi)


def _needs(spans: Sequence[Span], children: dict[int | None, list[int]]) -> list[int]:
    """The words each span needs so that it and every nonempty span inside it wrap one."""
    needs = [0] * len(spans)

    def need(k: int) -> int:
        inner = sum(need(c) for c in children.get(k, []))
        needs[k] = max(inner, 1 if spans[k][1] > spans[k][0] else 0)
        return needs[k]

    for k in children.get(None, []):
        need(k)
    return needs


def _pack(wanted: list[tuple[int, int, int]], needs: list[int], lo: int, hi: int):
    """Sibling ranges made disjoint and ordered inside [lo, hi): each as near its wanted
    range as room allows, and as wide as it needs (`needs`), leaving what later siblings
    need while there are words enough."""
    need = [needs[k] for *_, k in wanted]
    after = [0] * (len(need) + 1)  # what the siblings after each need, summed once
    for n in range(len(need) - 1, -1, -1):
        after[n] = after[n + 1] + need[n]
    cursor = lo
    out = []
    for n, (start, end, _) in enumerate(wanted):
        last = hi - after[n + 1]
        x = max(cursor, min(max(start, cursor), last - need[n]))
        y = max(x, min(max(end, x + need[n]), last))
        out.append((x, y))
        cursor = y
    return out


def events(
    placed: Sequence[tuple[int, int, object]], n_words: int, parents: Sequence[int | None]
) -> list[tuple[str, int]]:
    """The words and span edges in reading order: ("open", k), ("word", j), ("close", k),
    for spans placed as `transfer` places them (nested as `parents` says)."""
    children: dict[int | None, list[int]] = {}
    for k, parent in enumerate(parents):
        children.setdefault(parent, []).append(k)
    out: list[tuple[str, int]] = []

    def emit(kids: list[int], lo: int, hi: int) -> None:
        at = lo
        for k in sorted(kids, key=lambda k: (placed[k][0], placed[k][1], k)):
            start, end = placed[k][0], placed[k][1]
            if not at <= start <= end <= hi:
                raise ValueError(f"span {k} at [{start}, {end}) is outside [{at}, {hi})")
            out.extend(("word", j) for j in range(at, start))
            out.append(("open", k))
            emit(children.get(k, []), start, end)
            out.append(("close", k))
            at = end
        out.extend(("word", j) for j in range(at, hi))

    emit(children.get(None, []), 0, n_words)
    return out
