"""Units of translation (a sentence, or sentences that inline markup joins) sent to a
`translate` callable in batches, and their translations put back with the unit's line
breaks.

The model sees a unit with its whitespace collapsed to single spaces. A line break inside a
unit (a paragraph wrapped at a width, a Markdown soft break) is put back after the target
word aligned last to the source words before it, or, without an alignment, at the same
share of the words; so a paragraph keeps its number of lines and each line's indentation.
Line breaks between units are never touched: callers keep the text between units as it is.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection

from translator.documents.segment import sentence_spans

Alignment = list[tuple[int, int]] | None
Translate = Callable[[list[str]], list[tuple[str, Alignment]]]

BATCH = 256  # units per call of `translate`: few calls, and progress between them
# the most words a unit is sent with whole; a longer one (text that runs on without a stop)
# goes in pieces of at most that many, so that no model's length limit cuts it off
LONGEST = 120
# A run of more characters than this without a space, mostly not ASCII (Chinese, Japanese or
# Thai text), is cut into runs where clauses end, each counting a word per CHARS_A_WORD
# characters.
LONGEST_RUN = 40
CHARS_A_WORD = 2
_CLAUSE_END = re.compile(r"[,;:)\]»“”\"–—，、；：）。！？」』]$")


def _unspaced(word: str) -> bool:
    """Whether `word` is text of a script written without spaces, longer than LONGEST_RUN
    characters and mostly not ASCII (a long URL or identifier is never cut)."""
    return len(word) > LONGEST_RUN and sum(c.isascii() for c in word) * 2 < len(word)


def _runs(word: str) -> list[tuple[str, int]]:
    """(run, its count of words) of `word`: itself, one word; or where `_unspaced`, runs of
    at most LONGEST_RUN characters, each ending where a clause does in the second half of
    its room where one can, a word per CHARS_A_WORD characters."""
    if not _unspaced(word):
        return [(word, 1)]
    out, at = [], 0
    while len(word) - at > LONGEST_RUN:
        room = range(at + LONGEST_RUN, at + LONGEST_RUN // 2, -1)
        end = next((e for e in room if _CLAUSE_END.search(word[e - 1])), at + LONGEST_RUN)
        out.append(word[at:end])
        at = end
    return [(run, -(-len(run) // CHARS_A_WORD)) for run in [*out, word[at:]]]


def pieces(words: list[str], weights: list[int] | None = None) -> list[tuple[int, int]]:
    """(start, end) word ranges covering `words`, each of at most LONGEST in `weights`
    (each word's count, 1 where not given) and at least one word, each ending where a
    clause does (a word ending in `,` or `;`) in the second half of its room where one can,
    else where the room ends."""
    weights = weights or [1] * len(words)
    out, at, left = [], 0, sum(weights)
    while left > LONGEST:
        full, total = at, 0
        while full < len(words) and total + weights[full] <= LONGEST:
            total += weights[full]
            full += 1
        full = max(full, at + 1)
        room = range(full, at + (full - at) // 2, -1)
        end = next((e for e in room if _CLAUSE_END.search(words[e - 1])), full)
        out.append((at, end))
        left -= sum(weights[at:end])
        at = end
    return out + [(at, len(words))]


def in_pieces(units: list[str]) -> tuple[list[str], list[list[list[int]]]]:
    """(the texts to send: each unit as it is, or one longer than LONGEST words as its
    `pieces`, a long run without spaces cut into `_runs`; per unit, per piece, the unit's
    word each word of the piece belongs to)."""
    flat, parts = [], []
    for unit in units:
        words = unit.split()
        runs = [(n, run, weight) for n, word in enumerate(words) for run, weight in _runs(word)]
        ranges = pieces([run for _, run, _ in runs], [weight for _, _, weight in runs])
        if len(ranges) == 1:
            parts.append([list(range(len(words)))])
            flat.append(unit)
            continue
        parts.append([[n for n, _, _ in runs[a:b]] for a, b in ranges])
        flat += [" ".join(run for _, run, _ in runs[a:b]) for a, b in ranges]
    return flat, parts


def _translate_long(translate: Translate, units: list[str]) -> list[tuple[str, Alignment]]:
    """`translate` over `units`, each longer than LONGEST words sent in pieces (in_pieces):
    its translation the pieces' joined, its alignment theirs moved to its word offsets."""
    flat, parts = in_pieces(units)
    results = translate(flat)
    if len(results) != len(flat):
        raise ValueError(f"translate gave {len(results)} results for {len(flat)} units")
    found = iter(results)
    out = []
    for ps in parts:
        texts, alignment, shift = [], [], 0
        for owners, (text, pairs) in zip(ps, (next(found) for _ in ps)):
            texts.append(text)
            if alignment is not None and pairs is not None:
                alignment += [(owners[i], j + shift) for i, j in pairs if i < len(owners)]
            else:
                alignment = None
            shift += len(text.split())
        out.append((" ".join(t for t in texts if t), alignment))
    return out


def words_and_seps(text: str) -> tuple[list[str], list[str]]:
    """`text.split()` and, for each word, the whitespace before it ('' for the first)."""
    words, seps, last = [], [], None
    for m in re.finditer(r"\S+", text):
        seps.append("" if last is None else text[last : m.start()])
        words.append(m.group())
        last = m.end()
    return words, seps


def translate_all(
    units: list[str], translate: Translate, kept: Collection[int] = ()
) -> list[tuple[str, Alignment]]:
    """Each unit's (translation, alignment), `translate` called once per BATCH units. A unit
    of whitespace only is its own translation; so is one without a letter (a number, a
    date, a rule of dashes: a table cell, a list item), word for word, which a model would
    only get wrong, and so are the units numbered in `kept` (code alone, say)."""
    flat = [" ".join(u.split()) for u in units]
    todo = [k for k, u in enumerate(flat) if has_letters(u) and k not in kept]
    out: list[tuple[str, Alignment]] = [
        (u, [(i, i) for i in range(len(u.split()))]) if u else (units[k], None)
        for k, u in enumerate(flat)
    ]
    if callable(expect := getattr(translate, "expect", None)):  # a progress bar's total
        expect(len(in_pieces([flat[k] for k in todo])[0]))  # (the texts sent)
    for at in range(0, len(todo), BATCH):
        rows = todo[at : at + BATCH]
        results = _translate_long(translate, [flat[k] for k in rows])
        for k, (text, alignment) in zip(rows, results, strict=True):
            out[k] = (text, None if alignment is None else [tuple(p) for p in alignment])
    return out


def punctuation(text: str) -> bool:
    """Whether `text` is one or more characters, none a letter or digit."""
    return bool(text) and not any(ch.isalnum() for ch in text)


# a word's punctuation before its letters and digits, those, and its punctuation after
GLUED = re.compile(r"^(\W*)(.*?)(\W*)$", re.S)


def has_letters(text: str) -> bool:
    """Whether `text` holds a letter of any script: what is worth a model's translation."""
    return any(ch.isalpha() for ch in text)


def break_targets(breaks: list[int], n_src: int, n_tgt: int, alignment: Alignment):
    """Target word indices (each > 0, increasing) to put the source's breaks before: each
    source break before word k goes after the last target word aligned to a source word
    before k (before the last word at the latest), else at k's share of the target. None
    for a break with no room left (fewer target words than lines)."""
    placed, prev = [], 0
    for k in breaks:
        linked = [j for i, j in alignment or () if i < k]
        t = max(linked) + 1 if linked else round(k * n_tgt / max(n_src, 1))
        t = max(min(t, n_tgt - 1), prev + 1)  # a break never ends the unit while room is left
        if t >= n_tgt:
            placed.append(None)
            continue
        placed.append(t)
        prev = t
    return placed


def target_seps(source: str, translation: str, alignment: Alignment) -> list[str]:
    """The whitespace before each word of `translation.split()`: single spaces, with the
    line breaks of `source` (whitespace runs holding one) put back (module docstring); the
    source's own whitespace where the translation has its words unchanged. A
    break with no room left (fewer target words than lines) is dropped: the two lines are
    joined rather than a line left empty, which would end a paragraph."""
    words, seps = words_and_seps(source)
    if translation.split() == words:  # the words as they were (a name, code)
        return seps
    n = len(translation.split())
    out = [""] + [" "] * (n - 1)
    breaks = [k for k, sep in enumerate(seps) if "\n" in sep]
    for k, t in zip(breaks, break_targets(breaks, len(words), n, alignment), strict=True):
        if t is not None:
            out[t] = seps[k]
    return out


def with_breaks(source: str, translation: str, alignment: Alignment) -> str:
    """`translation` with the line breaks of `source` put back (target_seps); an empty one
    (a model may end a sentence at once) has no words to put them between."""
    if "\n" not in source or not translation.split():
        return translation
    seps = target_seps(source, translation, alignment)
    return "".join(s + w for s, w in zip(seps, translation.split(), strict=True))


def _units(plain: str, spans, lang) -> list[tuple[int, int]]:
    """Sentence spans of `plain`, those that one markup span crosses merged."""
    flat = re.sub(r"\s", " ", plain)
    units = sentence_spans(flat, lang)
    starts, ends = [a for a, _ in units], [b for _, b in units]  # sorted, units apart
    for start, end, _ in spans:
        if end <= start:
            continue
        # it meets the units from the first ending after its start to the last starting
        # before its end
        first, last = bisect_right(ends, start), bisect_left(starts, end) - 1
        if last > first:
            ends[first] = ends[last]
            del starts[first + 1 : last + 1], ends[first + 1 : last + 1]
    return list(zip(starts, ends))


def _word_range(words_at: tuple[list[int], list[int]], start: int, end: int) -> tuple[int, int]:
    """The word range of a character span (an empty one: after the words before it), from
    the unit's word starts and ends."""
    starts, ends = words_at
    before = bisect_right(ends, start)  # the words ending before it, which all come first
    if end <= start:
        return before, before
    last = bisect_left(starts, end) - 1  # the last word starting before its end
    if last < before:
        return before, before
    return before, last + 1


def _unit_of(starts: list[int], ends: list[int], start: int, end: int) -> int:
    """The first unit a span overlaps (an empty one: touches), else the last starting at
    or before it; units are sorted and apart, so both are found by bisection."""
    if end <= start:
        k = bisect_left(ends, start)
        if k < len(starts) and starts[k] <= start:
            return k
    else:
        k = bisect_right(ends, start)
        if k < len(starts) and starts[k] < end:
            return k
    return max(bisect_right(starts, start) - 1, 0)


def _any_cross(spans: list) -> bool:
    """Whether two ranges cross (s1 < s2 < e1 < e2), in one sweep: taken by start (longer
    first), the open ranges nest while none cross, so only the innermost can be crossed."""
    open_ends: list[int] = []  # each inside the one before while none cross
    for start, end, _ in sorted(spans, key=lambda span: (span[0], -span[1])):
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        if open_ends and open_ends[-1] < end:
            return True
        open_ends.append(end)
    return False


class Marked:
    """A text with markup spans (character ranges with a payload) split into units: its
    sentences, those that one span crosses merged; each span is kept as a word range of its
    unit (an empty span sits after the words before it)."""

    def __init__(self, plain: str, spans, lang):
        self.plain = plain
        self.units = _units(plain, spans, lang)
        self.sources = [plain[a:b] for a, b in self.units]
        self.spans: list[list] = [[] for _ in self.units]
        # per unit, per span: whether its translated first and last words' punctuation stays
        # outside it: it starts after and ends before punctuation glued to its first and last
        # words ("(" and ")." of "(Hund)."), or at their letters or digits ("Hund")
        self.glued: list[list[tuple[bool, bool]]] = [[] for _ in self.units]
        starts, ends = [a for a, _ in self.units], [b for _, b in self.units]
        words: dict[int, tuple[list[int], list[int]]] = {}  # per unit, its word offsets
        for start, end, mark in spans if self.units else ():  # no words: nothing to place
            k = _unit_of(starts, ends, start, end)
            if k not in words:
                a, b = self.units[k]
                found = [m.span() for m in re.finditer(r"\S+", plain[a:b])]
                words[k] = [x + a for x, _ in found], [y + a for _, y in found]
            s, e = _word_range(words[k], start, end)
            self.spans[k].append((s, e, mark))
            inside = e > s and start < end
            if not inside:
                self.glued[k].append((False, False))
                continue
            lead, trail = plain[words[k][0][s] : start], plain[end : words[k][1][e - 1]]
            self.glued[k].append((
                punctuation(lead) or not lead and plain[start].isalnum(),
                punctuation(trail) or not trail and plain[end - 1].isalnum(),
            ))  # fmt: skip
        for unit in self.spans:
            self._uncross(unit)

    def letterless(self, kinds: Collection[str]) -> list[bool]:
        """Per unit, whether its only letters lie in spans of `kinds` (code and images,
        which stay as written): such a unit is copied, as one without a letter is."""
        out = []
        for (a, b), spans in zip(self.units, self.spans):
            words = self.plain[a:b].split()
            inside = {i for s, e, mark in spans if mark.kind in kinds for i in range(s, e)}
            out.append(not has_letters(" ".join(w for i, w in enumerate(words) if i not in inside)))
        return out

    def joins(self, a, b) -> bool:
        """Whether two payloads whose word ranges cross (markup glued together in one word,
        `a`/`b`) render as one span over both ranges; else the later one gives up the
        words it shares."""
        return False

    def _uncross(self, spans: list) -> None:
        """The unit's word ranges made to nest (inline.transfer needs a tree): two that
        cross share a word, which markup glued inside one word gives."""
        crossed = _any_cross(spans)  # rare: only then the passes below, which try every pair
        for _ in range(len(spans) ** 2 + 1):  # each pass joins or narrows: few passes
            if not crossed:
                return
            crossed = False
            for i, (s1, e1, m1) in enumerate(spans):
                for j, (s2, e2, m2) in enumerate(spans):
                    if s1 < s2 < e1 < e2:
                        crossed = True
                        if self.joins(m1, m2):
                            spans[i], spans[j] = (s1, e2, m1), (s1, e2, m2)
                        else:
                            spans[j] = (e1, e2, m2)

    def placed(self, results):
        """Per unit, from its (translation, alignment): (target words, the whitespace before
        each, the unit's spans as target word ranges, their `glued` flags)."""
        from translator.documents.inline import transfer

        for source, spans, glued, (text, alignment) in zip(self.sources, self.spans,
                                                           self.glued, results, strict=True):  # fmt: skip
            seps = target_seps(source, text, alignment)
            placed = transfer(spans, source, text, alignment) if spans else []
            yield text.split(), seps, placed, glued
