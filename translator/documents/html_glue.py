"""What a sentence of HTML keeps beside its words and spans (`Sentence`), and how `glue`
reads it from the unit's text: the text glued to a tagged word outside its tag, the text
around a piece copied whole inside its word, and which empty pieces are glued to the word
before or after them (html_sentences.py cuts the sentences; html.py renders them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from translator.documents.html_units import Mark, Unit


@dataclass
class Sentence:
    """A sentence of a unit: its words, the inline spans over them (word ranges with the
    index of their mark) and their parents, and the edges of marks that cross its ends,
    put before or after its words."""

    at: tuple[int, int]  # its characters in the unit's text, and those of pieces it copies whole
    text: str
    spans: list[tuple[int, int, int]]
    parents: list[int | None]
    head: list[str]
    tail: list[str]
    # per span: the text glued before its first word outside it ("(" of "(<b>Hund", "0.9."
    # of "0.9.<em>x</em>") and after its last ("." of "hier</a>.")
    leads: dict[int, str] = field(default_factory=dict)
    trails: dict[int, str] = field(default_factory=dict)
    # spans whose own text begins / ends with a letter or digit: the translated word's
    # punctuation there stays outside them ("dog</b>." of "<b>hinter</b>", "(dog</b>)." of
    # "<b>hinter</b>,"), but text like the source's glued there ("dog</b>'s")
    bare_starts: set[int] = field(default_factory=set)
    bare_ends: set[int] = field(default_factory=set)
    # pieces written as in the source (_ranges): their text as the model reads it, the text
    # glued before and after them in their words, and their pieces of markup and text
    # ("(", "):", "<code>x</code>" of "(<code>x</code>):")
    atoms: dict[int, tuple[str, str, str, list]] = field(default_factory=dict)
    # empty pieces glued to the word before them (with the rest of that word, "." of
    # "crates.io</a><!-- x -->.") and to the word after them
    after: dict[int, str] = field(default_factory=dict)
    before: set[int] = field(default_factory=set)
    # empty pieces between two words, glued to neither: the source's whitespace before and
    # after them, so that whitespace is split around them rather than written on both sides
    # (and the whitespace-only text of the piece itself, which its own source writes)
    apart: dict[int, tuple[str, str, str]] = field(default_factory=dict)
    # pieces whose own text ends in spaces ("<code># </code>,"): the spaces are theirs, so
    # the whitespace before the next word is less those, none where the source glued it
    tight: dict[int, tuple[str, bool]] = field(default_factory=dict)
    # and those whose text begins in spaces ("<kbd> Ctrl</kbd>"): the whitespace before them
    # is less those, none where the source glued the piece to the word before it
    loose: dict[int, tuple[str, bool]] = field(default_factory=dict)
    # elements whose text ends in the space before the next word ("<a>Macro </a>X"): that
    # space is written before their closing tag
    spaced: set[int] = field(default_factory=set)
    # spans opening in a word where a sibling of several words ends ("<b>a b</b>c<i>d e</i>"):
    # where that one's end tag stands in their lead, and that one
    shut: dict[int, tuple[int, int]] = field(default_factory=dict)
    # spans cut to start at the word after the one their previous sibling ends in, where
    # they open ("<em>w,</em><b>1(y z)</b>"): its trail as pieces (a tag or a piece copied
    # whole, with the length of text it stands for; None for text), and that sibling
    opened: dict[int, tuple[list[tuple[str | None, int]], int]] = field(default_factory=dict)
    # elements opening in the whitespace between two words ("Project <a>\n DocBook</a>"):
    # that whitespace before their start tag and after it, written so around it
    split: dict[int, tuple[str, str]] = field(default_factory=dict)
    # edges of `head` and `tail` inside the first word and the last ("Ein</i><b>Mann."):
    # (the word's text before it, edge) and (edge, the word's text after it), written there
    # where the translation keeps that text, else with the rest of `head` and `tail`
    head_in: list[tuple[str, str]] = field(default_factory=list)
    tail_in: list[tuple[str, str]] = field(default_factory=list)


def within(unit: Unit, n: int, members: list[int]) -> bool:
    """Whether mark `n` is one of `members` or inside one of them."""
    while n is not None:
        if n in members:
            return True
        n = unit.marks[n].parent
    return False


def _pieces(unit: Unit, text: str, lo: int, hi: int, members) -> list[tuple[bool, str]]:
    """text[lo:hi] with the marks `members` and those inside them, as (is markup, its
    text) pieces: a piece copied whole stands for its own text."""
    edges = []
    for n in range(min(members), len(unit.marks)):  # (marks are in the order they open)
        mark = unit.marks[n]
        if mark.open_at is not None and mark.open_at > hi:
            break
        # (not one ending in a later unit: its start tag is written with the sentence's
        # edges, or in place)
        if within(unit, n, members) and mark.close_at is not None:
            edges.append((mark.open_at, mark.order[0], 0, mark))
            if not mark.atom:
                edges.append((mark.close_at, mark.order[1], 1, mark))
    out, at = [], lo
    for offset, _, closing, mark in sorted(edges, key=lambda x: x[:3]):
        if offset > at:
            out.append((False, text[at:offset]))
        out.append((True, mark.close_raw if closing else mark.open_raw))
        at = mark.close_at if mark.atom else offset
    return out + ([(False, text[at:hi])] if hi > at else [])


def _inside_parent(unit: Unit, mark: Mark, first: int, last: int) -> tuple[int, int]:
    """The characters [first, last) of a word, less those outside `mark`'s parent."""
    if mark.parent is not None:
        parent = unit.marks[mark.parent]
        first = max(first, parent.open_at if parent.open_at is not None else first)
        last = min(last, parent.close_at if parent.close_at is not None else last)
    return first, last


def glue(sentence: Sentence, unit: Unit, text: str, found, words_at, solid) -> None:
    """The sentence's leads, trails, atoms, after, before, shut and opened (Sentence), from the
    groups and the spans cut off in a word (`found`) and its words' starts and ends."""
    (groups, (shut, opened)), (starts, ends) = found, words_at
    index = {n: j for j, (_, _, n) in enumerate(sentence.spans)}
    gaps: list[tuple[int, int]] = []  # the pieces standing apart so far: (offset, word)
    cuts: dict[int, int] = {}  # per word, the end of the text written before a piece in it
    for j, (s, e, n) in enumerate(sentence.spans):
        mark = unit.marks[n]
        if e == s:  # an empty piece: glued to a word, or standing apart
            at = mark.open_at
            if n in solid and s < len(starts) and starts[s] < at:  # (_leads_into)
                first = _inside_parent(unit, mark, max(starts[s], cuts.get(s, 0)), at)[0]
                sentence.leads[j] = text[first:at]
                sentence.before.add(j)
                if shut.get(n) in index and first <= unit.marks[shut[n]].close_at:
                    sentence.shut[j] = (unit.marks[shut[n]].close_at - first, index[shut[n]])
                cuts[s] = at
            elif (
                n in solid
                and s > 0
                and ends[s - 1] >= at
                and not text[at - 1].isspace()
                and (not text[at : mark.close_at].isspace())
            ):  # (" " of "a<kbd> </kbd>b": apart)
                sentence.after[j] = text[at : ends[s - 1]]
            elif n in solid and s == len(starts) and 0 < at and not text[at - 1].isspace():
                sentence.after[j] = ""  # (whitespace of its own after the last word: glued)
            elif n in solid and s == 0 and starts and mark.close_at == starts[0] > at:
                sentence.before.add(j)  # (and before the first word)
            elif n in solid and s < len(starts) and starts[s] == at:
                sentence.before.add(j)
            elif n in solid and 0 < s < len(starts):
                # (after another such piece between the same words: the whitespace after it)
                lo = max([ends[s - 1]] + [a for a, w in gaps if w == s])
                end = mark.close_at  # (past a piece of whitespace only: "<kbd> </kbd>")
                sentence.apart[j] = (text[lo:at], text[at:end], text[end : starts[s]])
                gaps.append((end, s))
        elif n in groups:  # (the word's text outside its parent is the parent's: "a<b><code>")
            lo, hi, members = groups[n]
            first, last = _inside_parent(unit, mark, max(starts[s], cuts.get(s, 0)), ends[e - 1])
            sentence.atoms[j] = (" ".join(text[lo:hi].split()), text[first:lo], text[hi:last],
                                 _pieces(unit, text, lo, hi, members))  # fmt: skip
            if own := text[lo:hi][len(text[lo:hi].rstrip()) :]:
                sentence.tight[j] = (own, bool(text[hi : hi + 1].strip()))
            if own := text[lo:hi][: len(text[lo:hi]) - len(text[lo:hi].lstrip())]:
                sentence.loose[j] = (own, lo > 0 and bool(text[lo - 1].strip()))
        elif not mark.atom:  # (a translated word that no longer holds them: all inside)
            # (a lead outside its parent is the parent's; a trail is cut by the innermost)
            first = _inside_parent(unit, mark, max(starts[s], cuts.get(s, 0)), ends[e - 1])[0]
            if lead := text[first : mark.open_at]:
                sentence.leads[j] = lead
            if shut.get(n) in index and first <= unit.marks[shut[n]].close_at:
                sentence.shut[j] = (unit.marks[shut[n]].close_at - first, index[shut[n]])
            if n in opened and opened[n][0] in index:  # (its lead: the other's trail)
                lo = unit.marks[opened[n][0]].close_at
                sentence.opened[j] = (_trail(unit, lo, opened[n][1], n), index[opened[n][0]])
            elif text[mark.open_at : mark.open_at + 1].isalnum():
                sentence.bare_starts.add(j)
            if trail := text[mark.close_at : ends[e - 1]]:
                sentence.trails[j] = trail
            inner = unit.marks[n + 1 : n + 2]  # (a child opening there too splits it instead)
            if (
                s < len(starts)
                and starts[s] > mark.open_at > 0
                and text[mark.open_at].isspace()
                and (not (inner and inner[0].open_at == mark.open_at and inner[0].parent == n))
            ):
                lo = len(text[: mark.open_at].rstrip())
                sentence.split[j] = (text[lo : mark.open_at], text[mark.open_at : starts[s]])
            if text[mark.close_at - 1 : mark.close_at].isalnum():
                sentence.bare_ends.add(j)
            at = mark.close_at
            if 0 < at < len(text) and text[at - 1].isspace() and not text[at].isspace():
                sentence.spaced.add(j)


def _trail(unit: Unit, lo: int, hi: int, n: int) -> list[tuple[str | None, int]]:
    """The characters [lo, hi) of a word with the start tag of span `n` and what opens
    inside it there (Sentence.opened)."""
    edges = []
    for m in range(n, len(unit.marks)):  # (marks are in the order they open)
        mark = unit.marks[m]
        if m != n and mark.open_at >= hi:
            break
        if within(unit, m, [n]):
            width = mark.close_at - mark.open_at if mark.atom else 0
            edges.append((mark.open_at, mark.order[0], mark.open_raw, width))
            if m != n and not mark.atom:
                edges.append((mark.close_at, mark.order[1], mark.close_raw, 0))
    out, at = [], lo
    for offset, _, raw, width in sorted(edges):
        out += [(None, offset - at)] if offset > at else []
        out.append((raw, width))
        at = offset + width
    return out + ([(None, hi - at)] if hi > at else [])


def in_trail(pieces: list[tuple[str | None, int]], held: str, escape) -> str:
    """The trail `held` (as long as the source's) written with the tags in it (_trail)."""
    out, at = [], 0
    for raw, width in pieces:
        out.append(escape(held[at : at + width]) if raw is None else raw)
        at += width
    return "".join(out)


def outside(pieces: list[tuple[str | None, int]], held: str) -> str:
    """The trail `held` less the text its pieces copied whole write themselves: what stays
    to write where its sibling opened apart from it, those pieces written there."""
    out, at = [], 0
    for raw, width in pieces:
        out.append(held[at : at + width] if raw is None else "")
        at += width
    return "".join(out)
