"""A translation's words rendered back with the Markdown markup that
markdown_inline.read_inline read from the source: pairs around the words aligned to theirs,
atoms in place of the words that stand for them, lone marks glued where they were, and
characters escaped as the source escaped them."""

from __future__ import annotations

import dataclasses
import re

from translator.documents.markdown_escapes import Escapes
from translator.documents.markdown_held import held_edges, held_seps
from translator.documents.markdown_labels import labelled, marked_labels
from translator.documents.markdown_marks import Mark
from translator.documents.markdown_within import lone_rank, opened_before
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
        where = max(at, len(mark.prefix))  # after the glued text as in the source first
        found = (where if joined.startswith(text, where) else joined.find(text, at)) if text else -1
        if found < 0 and text:  # in other case
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
        # (but a literal delimiter stays in a link, where it cannot pair with one outside;
        # not where the word has one at its other end too, which it could pair with)
        inner, outer = (lead, trail) if opening else (trail, lead)
        kept = _A.match(mark.raw) and _DELIMITER.search(inner) and not _DELIMITER.search(outer)
        if core and not kept:
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
    if _crossed(pairs) or any(p in inner for pair in pairs for p in pair):
        spans = plain
    lone = []
    for m in inside:
        at = len(m.prefix)
        fits = at <= n and folded.startswith(m.prefix.lower()) and at not in inner
        lone.append((at if fits else None, m))
    return spans, lone


def _crossed(pairs) -> bool:
    return any(a1 < a2 < b1 < b2 for a1, b1 in pairs for a2, b2 in pairs)


def _early(folded: str, early: list[Edge], spans: dict, lone: list, inner: set[int], starts):
    """The openings of pairs that share their first word with the word before (`early`,
    Mark.shared) put in that word after their glued prefix, where it still has that text
    and nothing else of the word (an edge, an atom) comes after them there; the marks of
    those that found no place, to open on their own first word."""
    unplaced = []
    for edge in early:
        mark, lo, hi = edge
        at = _fits(folded, edge, True)
        edges = [p for m, pair in spans.items() if m is not mark for p in pair]
        later = [p for p in [*edges, *(a for a, _ in lone if a is not None), *starts]
                 if p is not None and at is not None and at < p <= hi]  # fmt: skip
        pairs = [*spans.values(), [at, spans.get(mark, [0, len(folded) + 1])[1]]]
        if at is None or at in inner or at < lo or later or _crossed(pairs):
            unplaced.append(mark)
            continue
        spans[mark] = [at, spans.get(mark, [0, len(folded) + 1])[1]]
    return unplaced


def _word(word: str, segments: Segments, opens, closes, inside, chars, early=()):
    """`word` rendered: its characters as `chars` writes them, the atoms' raws in place of
    their `segments`, the markup of the pairs opening (`opens`, and where they fit `early`:
    _early) and closing (`closes`) on it and the lone marks glued inside it (`inside`) at
    their edges (_edges); the raws of lone marks that found no place in it, to go after it;
    and the marks of `early` that found none."""
    inner = {p for s, e, _ in segments for p in range(s + 1, e)}
    spans, lone = _edges(word, opens, closes, inside, inner)
    unplaced = _early(_fold(word), list(early), spans, lone, inner, [s for s, _, _ in segments])
    _links_apart(spans, len(word), inner)
    _emphasis_apart(spans, len(word))
    lost = [m.raw for at, m in lone if at is None]
    # at one place: lone marks, closings (inner first), openings (outer first); a lone mark
    # the source wrote after a closing there comes after the closings (`[a](u)<br>[b](v)`)
    closed: dict[int, int] = {}
    for m, (_, b) in spans.items():
        closed[b] = max(closed.get(b, -1), m.close_src)
    events = [(at, lone_rank(at, m, spans, closed), 0, m.raw)
              for at, m in lone if at is not None]  # fmt: skip
    # (a link _links_apart left no letter opens and closes after the closings there)
    events += [(b, 1, (-a, -m.order), m.close) for m, (a, b) in spans.items()
               if a < b <= len(word)]  # fmt: skip
    events += [(a, 2, (-b, m.order), m.raw + (m.close if a == b else ""))
               for m, (a, b) in spans.items() if a >= 0]  # fmt: skip
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
    return "".join(out), lost, unplaced


def _links_apart(spans: dict, n: int, inner: set[int]) -> None:
    """Links (Markdown's or HTML <a>) the source had side by side in one word (`[a](u)[b](v)`)
    that `spans` put one inside another (CommonMark reads a link inside a link as text, a
    browser ends an <a> at the next) cut apart, in the order
    of the source but for one running on over words before (first) or after (last): where
    the second's opening or the first's closing found its place, else where the source's
    text between them falls in proportion, and not inside an atom (`inner`)."""
    links = sorted((m for m in spans if _A.match(m.raw)),
                   key=lambda m: ((spans[m][1] > n) - (spans[m][0] < 0), m.src))  # fmt: skip
    for p, q in zip(links, links[1:]):
        (a, b), (c, d) = spans[p], spans[q]
        if b <= c or b > n or c < 0:
            continue  # (apart, or both run on the same way: neither is inside the other)
        if p.src < q.src < p.close_src or q.src < p.src < q.close_src:
            continue  # (the source wrote them so: `<a href="v">[l](u)</a>`)
        lo, hi = max(a + 1, 0), min(d - 1, n)
        if lo <= c <= hi:
            cut = c
        elif lo <= b <= hi:
            cut = b
        else:
            share = len(q.prefix) / max(len(q.prefix) + len(p.suffix), 1)
            cut = round(n * (share if p.src < q.src else 1 - share))
        cut = min(max(cut, lo), max(hi, lo), n)  # (an earlier cut may leave p none)
        while cut in inner and cut > lo:
            cut -= 1
        while cut in inner:
            cut += 1
        spans[p][1] = spans[q][0] = cut


def _emphasis_apart(spans: dict, n: int) -> None:
    """Emphasis opening and closing in the word kept apart from the markup beside it: inside
    the link that held it in the source (a link cut apart from another leaves it room), and,
    where two of one delimiter still cover the same letters, the inner written with the
    other (`*_a_*`: `**a**` would read as strong)."""
    emphasis = sorted((m for m, (a, b) in spans.items()
                       if m.raw in ("*", "_") and 0 <= a < b <= n), key=lambda m: m.order)  # fmt: skip
    for m in emphasis:
        for link in (k for k in spans if _A.match(k.raw) and k.src < m.src < k.close_src):
            a, b = max(spans[m][0], spans[link][0], 0), min(spans[m][1], spans[link][1], n)
            if a < b:
                spans[m] = [a, b]
    # the markup last written around those letters, any pair (`*`, `**`, a link): only
    # one of the same opening and closing right around it is beside it (`*</span>*` is not)
    outer: dict[tuple, tuple[str, str]] = {}
    within = sorted((m for m, (a, b) in spans.items() if 0 <= a < b <= n), key=lambda m: m.order)
    for m in within:
        bounds, raw, close = tuple(spans[m]), m.raw, m.close
        if m in emphasis and outer.get(bounds) == (raw, close):
            raw = "_" if raw == "*" else "*"
            close = close[:-1] + raw  # (after the tags it holds)
            spans[dataclasses.replace(m, raw=raw, close=close)] = spans.pop(m)
        outer[bounds] = (raw, close)


def _links_unnested(spans) -> list:
    """The spans with links (Markdown's or HTML <a>) the source had apart that the words'
    order put one inside another, or sharing more than one word, cut back to share one word
    at most (_links_apart parts them inside it): the later's first, or the word before it
    where the later opens there (Mark.shared)."""
    links = sorted((k for k, (a, b, m) in enumerate(spans) if b > a and m.kind == "pair"
                    and _A.match(m.raw)), key=lambda k: (spans[k][0], spans[k][2].src))  # fmt: skip
    out = list(spans)
    for p, q in zip(links, links[1:]):
        (a, b, outer), (c, _, inner) = out[p], out[q]
        if outer.src < inner.src < outer.close_src:
            continue  # (written one inside the other: kept so)
        if inner.shared and a < c < b:  # (it opens in the word before its own, inside p)
            out[p] = (a, c, outer)
        elif b > c + 1:
            out[p] = (a, c + 1, outer)
    return out


def _sorted(marks) -> list[Mark]:
    return [m for *_, m in sorted(marks, key=lambda x: x[:2])]


def render(words: list[str], seps: list[str], spans, escapes: Escapes | None = None):
    """(the target `words` joined by `seps` with each span's markup, the whitespace its
    markup holds at the words' two edges: held_edges): spans are (start, end, Mark) word
    ranges of `words` as inline.transfer gives them; characters the source escaped are
    escaped the same way in the words."""
    chars = escapes.writer() if escapes else list
    words = list(words)  # (_parted cuts a word an atom shares)
    spans = _links_unnested(spans)
    edges = held_edges(spans, len(words))
    spans, labels = marked_labels(spans)
    seps = held_seps(spans, seps)
    n = len(words)
    opens, closes = [[] for _ in range(n + 1)], [[] for _ in range(n + 1)]
    early = [[] for _ in range(n + 1)]  # pairs to open in the word before their own (_early)
    after, before, lead = [[] for _ in range(n + 1)], [[] for _ in range(n + 1)], []
    inside: list[list[Mark]] = [[] for _ in range(n + 1)]
    atoms: dict[int, list[tuple[int, Mark]]] = {}
    covered: dict[int, int] = {}  # a word inside an atom -> the word the atom starts at
    for start, end, mark in sorted(spans, key=lambda span: span[:2]):
        if mark.kind == "pair" and end > start:
            (early[start - 1] if mark.shared and start else opens[start]).append(
                (-end, mark.order, mark)
            )
            closes[end - 1].append((-start, -mark.order, mark))
        elif mark.kind == "atom" and end > start:
            if mark.shared and start and start not in atoms and _begins(words, start, end, mark):
                start -= 1  # its text begins in the word before, which it shares
            elif mark.shared:
                mark = _parted(words, start, end, mark)
            first = covered.get(start, start)  # one atom starting inside another joins it
            atoms.setdefault(first, []).append((end, mark))
            covered |= dict.fromkeys(range(first + 1, max(end for end, _ in atoms[first])), first)
        elif mark.kind == "inside" and start < n:
            inside[start].append(mark)
        elif mark.kind in ("lead", "before") and opened_before(spans, start, mark):
            inside[start].append(dataclasses.replace(mark, kind="inside"))
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
            out += [*before[k], *(m.raw for m in inside[k]), *after[k]]  # (inside it: first)
            continue
        text, lost = _rendered(words, k, atoms.get(k), (opens, closes, early), inside[k], chars)
        # (a separator as the source wrote it: `&nbsp;` stays an entity)
        out += [*(chars(seps[k]) if k else ()), *before[k], text, *lost, *after[k]]
    if not n:
        out += after[0]
    return labelled("".join(out), labels), edges


def _parted(words: list[str], start: int, end: int, mark: Mark) -> Mark:
    """An atom that shares its first word with markup before it (Mark.shared), where the
    target words moved that word away from it: that word, where it is still its glued
    prefix and the atom's first word, left with the prefix (the atom's raw writes the
    rest), and the atom without it (or both would be written twice)."""
    shared = _fold(mark.prefix + mark.text.split()[0])
    for k, word in enumerate(words):
        if not start <= k < end and _fold(word) == shared:
            words[k] = word[: len(mark.prefix)]
            return dataclasses.replace(mark, prefix="")
    return mark


def _begins(words: list[str], start: int, end: int, mark: Mark) -> bool:
    """Whether the target words from the one before `start` to `end` hold an atom's glued
    prefix and then its text, as the source's shared word did."""
    joined = _fold(" ".join(words[start - 1 : end]))
    prefix, text = mark.prefix.lower(), " ".join(mark.text.split()).lower()
    return bool(prefix) and joined.startswith(prefix + text)


def _rendered(words: list[str], k: int, atoms, edges, inside: list[Mark], chars):
    """Word `k` rendered, or with `atoms` (those starting there) the atoms' words from it as
    one, with the markup on any of them (`edges`: per word, the pairs opening, closing and
    opening early on it); and the raws to go after it. A pair that found no place in the
    word before its own opens on its own first word: after these, or again among them."""
    opens, closes, early = edges
    while True:
        if atoms:
            word, segments, bounds = _atoms(words, k, atoms)
        else:
            word, segments, bounds = words[k], [], [(0, len(words[k]))]
        o, c, e = ([(m, *at) for j, at in enumerate(bounds, k) for m in _sorted(table[j])]
                   for table in (opens, closes, early))  # fmt: skip
        text, lost, unplaced = _word(word, segments, o, c, inside, chars, e)
        again = False
        for mark in unplaced:
            j = next(j for j in range(k, k + len(bounds)) if any(e[2] is mark for e in early[j]))
            entry = next(e for e in early[j] if e[2] is mark)
            early[j].remove(entry)
            opens[j + 1].append(entry)
            again |= j + 1 < k + len(bounds)
        if not again:
            return text, lost


_DELIMITER = re.compile(r"[*_~]")
_A = re.compile(r"\[|<a[\s>]", re.I)  # a link's opening: Markdown's, or an HTML <a>
