"""HTML translated with its markup: `translate_html(text, translate, lang) -> str`.

Markup outside translated text is copied byte for byte (html_units.py says how).

Block elements (and br, hr) end a unit; a unit's text is split into sentences
(segment.py). Inline elements inside a sentence become spans over its words, carried to
the translation's words by its alignment (inline.py). code, kbd, samp, svg, math and
elements marked translate="no" travel whole inside their sentence (the model sees their
text, their place follows its alignment); pre, script, style, textarea and blocks marked
translate="no" are copied and end a unit. The attributes readers see (alt, title,
placeholder, aria-label) are translated in their tags (html_attributes.py).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from translator.documents.html_attributes import translate_attributes
from translator.documents.html_units import Builder, Mark, Unit, tokens
from translator.documents.inline import events, transfer
from translator.documents.segment import sentence_spans
from translator.documents.units import GLUED, punctuation, target_seps, translate_all


@dataclass
class Sentence:
    """A sentence of a unit: its words, the inline spans over them (word ranges with the
    index of their mark) and their parents, and the edges of marks that cross its ends,
    put before or after its words."""

    at: tuple[int, int]  # its characters in the unit's text
    text: str
    spans: list[tuple[int, int, int]]
    parents: list[int | None]
    head: list[str]
    tail: list[str]
    # spans whose mark opens after punctuation glued to its first word ("(<b>Hund") and
    # those that close before punctuation glued to their last ("hier</a>.")
    leads: set[int] = field(default_factory=set)
    trails: set[int] = field(default_factory=set)


def _bounds(unit: Unit, lang: str | None) -> list[tuple[int, int]]:
    """The unit's sentence spans, those a piece copied whole would cut joined again."""
    text = "".join(unit.text)
    out: list[tuple[int, int]] = []
    for a, b in sentence_spans(text, lang):
        if out and any(m.atom and m.open_at < a and m.close_at > out[-1][1] for m in unit.marks):
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _sentence_of(bounds: list[tuple[int, int]], mark: Mark) -> tuple[int | None, int | None]:
    """The sentences a mark opens and closes in: an edge between sentences goes with the
    words it stands next to (an opening with the next, a closing with the one before)."""
    last = len(bounds) - 1
    opens = closes = None
    if mark.open_at is not None:
        opens = next((k for k, (_, b) in enumerate(bounds) if mark.open_at < b), last)
    if mark.close_at is not None:
        closes = next((k for k in range(last, -1, -1) if bounds[k][0] < mark.close_at), 0)
        if opens is not None and (closes < opens or mark.close_at == mark.open_at):
            closes = opens
    return opens, closes


def _sentences(unit: Unit, lang: str | None) -> list[Sentence]:
    text = "".join(unit.text)
    bounds = _bounds(unit, lang)
    where = [_sentence_of(bounds, m) for m in unit.marks]
    out = []
    for k, (a, b) in enumerate(bounds):
        starts = [a + w.start() for w in re.finditer(r"\S+", text[a:b])]
        ends = [a + w.end() for w in re.finditer(r"\S+", text[a:b])]
        inside = [n for n, w in enumerate(where) if w == (k, k)]
        spans, parents = [], []
        for n in inside:
            mark = unit.marks[n]
            s = sum(e <= mark.open_at for e in ends)
            e = s if mark.close_at == mark.open_at else sum(t < mark.close_at for t in starts)
            spans.append((s, max(s, e), n))
            parents.append(inside.index(mark.parent) if mark.parent in inside else None)
        head: list[tuple[tuple[int, int], str]] = []
        tail: list[tuple[tuple[int, int], str]] = []
        for n, (opens, closes) in enumerate(where):
            mark = unit.marks[n]
            if closes == k and opens != k:
                after = all(t < mark.close_at for t in starts)
                (tail if after else head).append(((0, mark.order[1]), mark.close_raw))
            if opens == k and closes != k:
                before = all(e > mark.open_at for e in ends)
                (head if before else tail).append(((1, mark.order[0]), mark.open_raw))
        sentence = Sentence((a, b), text[a:b], spans, parents, [r for _, r in sorted(head)],
                            [r for _, r in sorted(tail)])  # fmt: skip
        for j, (s, e, n) in enumerate(spans):
            mark = unit.marks[n]
            if e > s and not mark.atom and punctuation(text[starts[s] : mark.open_at]):
                sentence.leads.add(j)
            if e > s and not mark.atom and punctuation(text[mark.close_at : ends[e - 1]]):
                sentence.trails.add(j)
        out.append(sentence)
    return out


def _render(sentence: Sentence, unit: Unit, result, escape) -> str:
    """A sentence's translation with its marks placed on the words aligned to theirs, and
    the source's line breaks inside it put back after the words aligned before them."""
    translation, alignment = result
    words = translation.split()
    placed = transfer(sentence.spans, sentence.text, translation, alignment, sentence.parents)
    seps = target_seps(sentence.text, translation, alignment) if words else []
    steps = events(placed, len(words), sentence.parents)
    following, upcoming = [], len(words)  # per event, the word it comes before
    for kind, k in reversed(steps):
        upcoming = k if kind == "word" else upcoming
        following.append(upcoming)
    out = list(sentence.head)
    spaced = skipping = False
    pending, last = "", None  # punctuation cut off the word last written; that word's place
    for (kind, k), ahead in zip(steps, reversed(following)):
        sep = (seps[ahead] if 0 < ahead < len(words) else " ") if spaced else ""
        if kind == "close" and k in sentence.trails:  # "hier</a>.": the tag closes before
            if not pending and last is not None and last[0] == len(out) - 1:
                lead, core, trail = GLUED.match(last[2]).groups()
                if core and trail:
                    out[-1], pending = last[1] + escape(lead + core), trail
            out.append(unit.marks[sentence.spans[k][2]].close_raw)
            skipping = False
            continue
        if pending:
            out.append(escape(pending))
            pending = ""
        if kind == "word":
            if not skipping:
                out.append(sep + escape(words[k]))
                last, spaced = (len(out) - 1, sep, words[k]), True
            continue
        mark = unit.marks[sentence.spans[k][2]]
        if kind == "open":
            lead = GLUED.match(words[ahead]).group(1) if ahead < len(words) else ""
            if k in sentence.leads and lead and lead != words[ahead]:  # "(<b>Hund"
                words[ahead] = words[ahead][len(lead) :]
                out.append(sep + escape(lead) + mark.open_raw)
            else:
                out.append(sep + mark.open_raw)
            spaced, skipping = mark.atom, mark.atom  # a piece copied whole stands for its words
        else:
            out.append(mark.close_raw)
            skipping = False
    return "".join(out + [escape(pending)] + sentence.tail)


def _escaper(entities: dict[str, str]):
    table = str.maketrans({c: r for c, r in entities.items() if c not in "&<>"})

    def escape(text: str) -> str:
        return html.escape(text, quote=False).translate(table)

    return escape


def translate_html(text: str, translate, lang: str | None) -> str:
    """`text` (an HTML document or fragment) with its text translated by `translate`
    (sentences -> [(translation, alignment or None)]) and its markup kept; HTML whose
    elements do not nest is a UserError naming the line and column."""
    toks = tokens(text)
    builder = _built(toks)
    if translate_attributes(toks, builder.carriers, translate):
        builder = _built(toks)  # the same units, with the start tags' new source
    plans = {id(p): _sentences(p, lang) for p in builder.out if isinstance(p, Unit)}
    results = translate_all([s.text for plan in plans.values() for s in plan], translate)
    escape, found, out = _escaper(builder.entities), iter(results), []
    for piece in builder.out:
        if isinstance(piece, str):
            out.append(piece)
        elif not plans[id(piece)]:
            out.append("".join(piece.raw))
        else:
            out.append(_unit_text(piece, plans[id(piece)], found, escape))
    return "".join(out)


def _built(toks) -> Builder:
    builder = Builder()
    for tok in toks:
        builder.feed(tok)
    builder.finish()
    return builder


def _unit_text(unit: Unit, plan: list[Sentence], found, escape) -> str:
    """The unit with each sentence translated and the whitespace around them kept."""
    text, at, out = "".join(unit.text), 0, []
    for sentence in plan:
        a, b = sentence.at
        out.append(escape(text[at:a]) + _render(sentence, unit, next(found), escape))
        at = b
    return "".join(out) + escape(text[at:])
