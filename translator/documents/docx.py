"""Word files: `translate_docx(data, translate, lang) -> bytes`.

The document is opened with python-docx and edited in place, then saved: styles, images,
numbering, sections and every part not translated are kept as they are. Translated are
the paragraphs of the body, of tables (nested ones too), text boxes, of each section's
headers and footers, and of the footnotes, endnotes and comments (docx_notes.py).

A paragraph's text is read from its runs of text (text, tabs, line breaks, hyphens:
docx_runs.py), hyperlinks and the other wrappers of runs (docx_parts.WRAPPERS, nested too:
a tracked insertion, a smart tag, a content control); a run of anything else (an image, a
field, a footnote mark, a page or column break, a positional tab) ends a stretch of text
and stays where it is, and each stretch is translated on its own. A field's text, its
result included, is left as it is, over however many paragraphs it runs (one never ended:
to its paragraph's end). Within a stretch, runs formatted otherwise than most of its text,
and wrappers, are spans that inline.transfer carries to the words aligned to theirs; the
translation is written as clones of the source runs (so bold, italics, fonts, colours come
along) and of the wrappers (a link's target kept), in place of the stretch's runs. The
languages the file names become the target's (docx_language.py).
"""

from __future__ import annotations

import copy
import io
import re

from lxml import etree

from translator.documents.docx_language import retag_docx, turn_paragraphs
from translator.documents.docx_notes import Notes, paragraphs
from translator.documents.docx_parts import (
    _NS,
    CODE_PARAGRAPHS,
    CODE_RUNS,
    WRAPPERS,
    _code_styles,
    _key,
    _open,
    _parts,
    _props,
    _style,
    absorbed,
    emptied,
    flattened,
    joined,
    shared,
    tracked_around,
    wordless,
    wrapped_runs,
    wrapper_spans,
)
from translator.documents.docx_runs import (
    Fields,
    R,
    Specials,
    _paired,
    gaps,
    run_text,
    split_breaks,
    stretches,
)
from translator.documents.language import Retag
from translator.documents.units import GLUED, Marked, Translate, translate_all

MARK = object()  # a segment that is an element holding no text, moved to its place


class Stretch(Marked):
    """A stretch's runs, read as plain text with spans: ('link', hyperlink) and
    ('run', first run of a group formatted alike, not the stretch's usual formatting)."""

    def __init__(self, items: list, lang, code: frozenset[str] = frozenset()):
        # each run with its innermost wrapper; each wrapper with those around it, outermost
        # first (wrappers nest: a tracked insertion in a smart tag)
        found = wrapped_runs(items)
        runs = [(r, chain[-1] if chain else None) for r, chain in found]
        self.chains = {id(c[n]): c[: n + 1] for _, c in found for n in range(len(c))}
        self.items, texts = items, [run_text(r) for r, _ in runs]
        plain, at, starts = "".join(texts), 0, []
        for text in texts:
            starts.append(at)
            at += len(text)
        spans, self.edges = wrapper_spans(found, starts, texts, plain)
        # a wrapper holding no word (a tracked insertion of a space) is a mark, moved whole:
        # its runs are left out of the spans (its text stays, parting the words around it,
        # as spaces: a tab or line break it holds is written once, in it)
        self.blank = wordless(found, texts, starts, plain) if plain.strip() else {}
        keep = [not any(id(w) in self.blank for w in c) for _, c in found]
        plain = "".join(t if ok else " " * len(t) for t, ok in zip(texts, keep, strict=True))
        runs, starts, texts = ([x for x, ok in zip(seq, keep, strict=True) if ok]
                               for seq in (runs, starts, texts))  # fmt: skip
        # the usual formatting is the one holding most of the spaces between words, then
        # most of the text, code aside: the spaces around a formatted word belong to the
        # text around it
        weight: dict[tuple[bool, bytes], tuple[int, int]] = {}  # (spelling settings too?, key)
        for (r, link), text in zip(runs, texts, strict=True):
            if link is None and _style(r) not in code:
                for key in ((False, _key(r)), (True, _props(r))):
                    spaces, size = weight.get(key, (0, 0))
                    weight[key] = (spaces + sum(c.isspace() for c in text), size + len(text))
        first = next((r for r, link in runs if link is None), runs[0][0])
        self.base = max((key for full, key in weight if not full),
                        key=lambda key: weight[False, key], default=_key(first))  # fmt: skip
        alike = [r for r, _ in runs if _key(r) == self.base] or [first]
        self.template = max(alike, key=lambda r: weight.get((True, _props(r)), (0, 0)))
        # each character's (link, run to clone), for words the translation copies
        self.code: dict[int, str] = {}  # a run in a code style -> its group's text
        self.owners: list[tuple[object, object]] = [(None, self.template)] * len(plain)
        k = 0
        while k < len(runs):  # groups of consecutive runs formatted alike, in one link
            j = k
            while j + 1 < len(runs) and runs[j + 1][1] is runs[k][1] and (
                _key(runs[j + 1][0]) == _key(runs[k][0])):  # fmt: skip
                j += 1
            end = starts[j] + len(texts[j])
            if end > starts[k] and (_key(runs[k][0]) != self.base or runs[k][1] is not None
                                    or _style(runs[k][0]) in code):  # fmt: skip
                spans.append((starts[k], end, ("run", runs[k][0])))
                self.owners[starts[k] : end] = [(runs[k][1], runs[k][0])] * (end - starts[k])
                if _style(runs[k][0]) in code:
                    self.code[id(runs[k][0])] = plain[starts[k] : end]
            else:  # copied words keep the spelling settings of their own runs
                for m in range(k, j + 1):
                    if _props(runs[m][0]) != _props(self.template):
                        at, size = starts[m], len(texts[m])
                        self.owners[at : at + size] = [(None, runs[m][0])] * size
            k = j + 1
        spans += self._markers(runs, starts, plain)
        super().__init__(plain, spans, lang)
        # nothing to translate where every letter is code (a heading naming a command)
        self.only_code = all(id(self.owners[c][1]) in self.code
                             for c, ch in enumerate(plain) if ch.isalpha())  # fmt: skip

    def _markers(self, runs, starts: list[int], plain: str) -> list:
        """Empty spans ('mark', element) for the elements between the stretch's runs that
        hold no text (a bookmark's or a comment's start and end, in a link too): placed by
        the alignment of the words before them, they keep marking the translation of the
        words they did, glued to the word before them where they were (else after the
        space)."""
        at = {id(r): start for (r, _), start in zip(runs, starts, strict=True)}
        siblings = [self.items[0], *self.items[0].itersiblings()]
        flat = flattened(siblings[: siblings.index(self.items[-1]) + 1], self.blank)
        found = []
        for k, el in enumerate(flat):
            if el.tag != R:
                ahead = next((x for x in flat[k + 1 :] if x.tag == R and id(x) in at), None)
                where = len(plain) if ahead is None else at[id(ahead)]
                glued = where > 0 and not plain[where - 1].isspace()
                found.append((where, where, ("mark", (el, glued))))
        return found

    def segments(self, results) -> list[tuple[object, object, str]]:
        """(hyperlink or None, run to clone, text) in order, from the units' results."""
        out, at = [], 0
        for (a, b), spans, (text, alignment), (words, _, placed, glued) in zip(
                self.units, self.spans, results, self.placed(results), strict=True):  # fmt: skip
            seps = gaps(self.plain[a:b], text, alignment)  # (tabs and line breaks all kept)
            out += self._copied(at, a)
            twins = self._twins(words, a, b, alignment)
            placed = _paired(spans, placed, alignment, words)
            if not words:  # no word to put the unit's tabs and line breaks before
                out += [seg for seg in self._copied(a, b) if seg[2] in "\t\n"]
            out += self._unit(words, seps, placed, glued, twins)
            at = b
        out += self._copied(at, len(self.plain))
        return joined(absorbed(joined(out), self.blank, MARK))

    def _copied(self, a: int, b: int) -> list[tuple[object, object, str]]:
        """The source's text `a:b` as it was, each character with its own formatting."""
        return [(*self.owners[c], self.plain[c]) for c in range(a, b)]

    def _twins(self, words, a: int, b: int, alignment) -> list[tuple[int, int] | None]:
        """For each target word, the character range of the source word it copies (the
        same word, in any case, aligned to it), or None."""
        src = [(m.start() + a, m.end() + a) for m in re.finditer(r"\S+", self.plain[a:b])]
        texts = [self.plain[x:y] for x, y in src]
        if alignment is None and [w.casefold() for w in words] == [t.casefold() for t in texts]:
            alignment = [(i, i) for i in range(len(words))]
        out: list[tuple[int, int] | None] = [None] * len(words)
        for i, j in alignment or ():
            if 0 <= i < len(src) and 0 <= j < len(words) and out[j] is None and len(
                    words[j]) == len(texts[i]) and words[j].casefold() == texts[i].casefold():  # fmt: skip
                out[j] = src[i]
        return out

    def _marked(self, segment) -> bool:
        return segment[0] is not None or segment[1] is not self.template

    def _unit(self, words, seps, placed, glued, twins):
        """A unit's segments: a word copied from the source with each character's formatting;
        another with the innermost run span and the link holding it, its glued punctuation
        outside a span that left it out in the source. The spaces between two copied words
        that were neighbours keep theirs; other spaces stay out of the markup."""
        pieces: list[tuple] = []  # (link, run, text); (None, text) for a space to place
        instead, alone = self._atoms(words, placed, glued, twins)
        starts, spaced = [], []  # per target word, where its pieces begin, and its space
        for k, word in enumerate(words):
            here, before = twins[k], twins[k - 1] if k else None
            pieces += alone.get(k, [])
            spaced.append(len(pieces))
            if k in instead and instead[k] is None:
                continue  # a later word of copied code
            between = self.plain[before[1] : here[0]] if here and before else "x"
            if (
                between == seps[k]
                or between.isspace()
                and not {"\t", "\n"} & set(between + seps[k])
            ):
                pieces += self._copied(before[1], here[0])  # tabs, no-break spaces kept
            elif seps[k]:
                pieces.append((None, seps[k]))
            starts.append(len(pieces))
            if k in instead:
                pieces += instead[k]
            elif here:
                pieces += [self._char(here[0] + n, ch) for n, ch in enumerate(word)]
            if k in instead or here:
                continue
            lead, core, trail = GLUED.match(word).groups()
            parts = (("lead", lead), ("core", core), ("trail", trail)) if core else ()
            parts = [(part, text) for part, text in parts if text] or [("core", word)]
            pieces += [(*self._owner(k, part, placed, glued), text) for part, text in parts]
        pieces += alone.get(len(words), [])
        out = []
        for n, piece in enumerate(pieces):
            if len(piece) == 2:  # a space goes with the word after it only out of markup
                after = pieces[n + 1] if n + 1 < len(pieces) else None
                owner = out[-1][:2] if out else after[:2]
                if after and out and self._marked(out[-1]) and not self._marked(after):
                    owner = after[:2]
                piece = (*self._edge(out[-1] if out else None, after, owner), piece[1])
            out.append(piece)
        places, last = [], 0  # in the source's order (a range's start before its end)
        for s, _, (_, (item, glued)) in (p for p in placed if p[2][0] == "mark"):
            last = max(last, (spaced if glued else starts)[s] if s < len(starts) else len(out))
            places.append((last, item))
        for at, item in reversed(places):  # from the end: the places before hold
            out.insert(at, (MARK, item, ""))
        return out

    def _edge(self, before, after, owner) -> tuple:
        """The (link, run) a space between pieces `before` and `after` goes in: a wrapper
        ending or starting there holds it only where it held a space at that edge in the
        source (a tracked insertion says what it inserted); else `owner`."""
        was = self.chains.get(id(before[0]), ()) if before else ()
        now = self.chains.get(id(after[0]), ()) if after and len(after) == 3 else ()
        n = next(
            (n for n, (a, b) in enumerate(zip(was, now)) if a is not b), min(len(was), len(now))
        )
        if any(self.edges.get(id(w), (0, 0))[1] for w in was[n:]):
            return before[:2]
        if any(self.edges.get(id(w), (0, 0))[0] for w in now[n:]):
            return after[:2]
        if was[n:] and now[n:]:  # between two wrappers: in the one holding both
            return (was[n - 1] if n else None), self.template
        return after[:2] if was[n:] else owner

    def _atoms(self, words, placed, glued, twins) -> tuple[dict, dict]:
        """Code copied as it was where the translation changed its words: ({first target
        word its span took: pieces in place of the words, each later one: None}, {word: code
        that took no word, standing before it})."""
        instead: dict[int, list | None] = {}
        before: dict[int, list] = {}
        for (start, end, (_, item)), (lead, trail) in zip(placed, glued, strict=True):
            text = self.code.get(id(item))
            if text is None or not text.strip() or self._kept(words, twins, start, end):
                continue  # a space in a code run is a space between words
            if end == start:
                before.setdefault(start, []).extend([(None, " "), (None, item, text)])
                continue
            link = self._owner(start, "core", placed, glued)[0]
            first, last = GLUED.match(words[start]), GLUED.match(words[end - 1])
            lead_text = first.group(1) if lead and first.group(2) else ""
            trail_text = last.group(3) if trail and last.group(2) else ""
            instead[start] = [(link, self.template, lead_text), (link, item, text),
                              (link, self.template, trail_text)]  # fmt: skip
            instead |= dict.fromkeys(range(start + 1, end))
        return instead, before

    def _char(self, at: int, ch: str) -> tuple[object, object, str]:
        """Target character `ch` of a copied word, formatted as the source's character `at`;
        the source's own character where that is code."""
        link, run = self.owners[at]
        return link, run, self.plain[at] if id(run) in self.code else ch

    def _kept(self, words, twins, start: int, end: int) -> bool:
        """Whether target words start:end (at least one) are source words in their order
        (twins: the same in any case)."""
        if end <= start:
            return False
        for j in range(start, end):
            if twins[j] is None:
                return False
            if j > start and not self.plain[twins[j - 1][1] : twins[j][0]].isspace():
                return False
        return True

    def _owner(self, k: int, part: str, placed, glued) -> tuple:
        """(link, run) of piece `part` of word `k`: the link and the innermost run span
        over it."""
        link, run, size = None, self.template, None
        for (start, end, (kind, item)), (lead, trail) in zip(placed, glued, strict=True):
            if not start <= k < end or (lead and part == "lead" and k == start) or (
                    trail and part == "trail" and k == end - 1):  # fmt: skip
                continue
            if kind == "link":
                link = item
            elif size is None or end - start <= size:
                run, size = item, end - start
        return link, run

    def write(self, results) -> None:
        """Replace the stretch's runs and links by the translation's (module docstring)."""
        parent = self.items[0].getparent()
        anchor = etree.Comment("")  # (before the items, which wrappers moved whole are of)
        self.items[0].addprevious(anchor)
        specials = Specials([r for r, c in wrapped_runs(self.items)
                            if not any(id(w) in self.blank for w in c)])  # fmt: skip
        held: list[tuple] = []  # the wrapper copies the last segment is in: (wrapper, holder)
        copied: set[int] = set()  # the wrappers copied
        segments = self.segments(results)
        specials.plan("".join(text for _, _, text in segments))
        for k, (link, run, text) in enumerate(segments):
            if link is MARK:  # (moved: it stands between the source's runs)
                # in the wrappers of the words after it; a mark a tracked insertion holds
                # stays in its copy while open (the revision inserted it), or opens it for
                # the words after it
                after = self.chains.get(
                    id(next((s[0] for s in segments[k:] if s[0] is not MARK), None)), ()
                )
                own = tracked_around(run, parent, run.tag in WRAPPERS)
                # a wrapper moved whole goes in no copy but of its own wrappers (a link
                # in a link is no Word file)
                keep = shared(held, after) if run.tag not in WRAPPERS else 0
                del held[max(keep, shared(held, own)) :]
                both = own[: shared([(w, None) for w in own], after)]
                if shared(held, both) == len(held):
                    self._enter(held, copied, both, anchor)
                (held[-1][1].append if held else anchor.addprevious)(run)
                continue
            new = copy.deepcopy(run)
            specials.fill(new, text)
            self._enter(held, copied, self.chains.get(id(link), ()), anchor)
            (held[-1][1].append if held else anchor.addprevious)(new)
        moved = {id(el) for link, el, _ in segments if link is MARK}
        for item in [anchor, *(x for x in self.items if id(x) not in moved)]:
            parent.remove(item)

    @staticmethod
    def _enter(held: list, copied: set, chain: tuple, anchor) -> None:
        """`held` made the copies of the wrappers `chain`: those it shares kept, the rest
        closed, and a copy of each further one opened (a wrapper the translation parts: a
        copy for each part, `copied` holding the wrappers copied before)."""
        n = shared(held, chain)
        del held[n:]
        for wrapper in chain[n:]:
            clone, holder = emptied(wrapper, id(wrapper) in copied)
            (held[-1][1].append if held else anchor.addprevious)(clone)
            copied.add(id(wrapper))
            held.append((wrapper, holder))


def translate_docx(data: bytes, translate: Translate, lang: str | None = "en",
                   name: str = "the document", retag: Retag | None = None) -> bytes:  # fmt: skip
    """The docx `data` translated (module docstring), as the bytes of a docx; `name`: the
    file's name in errors; `retag`: how its languages change (docx_language.py)."""
    doc = _open(data, name)
    notes = Notes(doc, name)
    found, parts = [], _parts(doc) + notes.roots
    blocks = _code_styles(doc, "PARAGRAPH", CODE_PARAGRAPHS)
    code = _code_styles(doc, "CHARACTER", CODE_RUNS)
    for part in parts:
        fields = Fields()  # a field's text may run over paragraphs (docx_runs.py)
        for p in paragraphs(part):
            prose = _style(p, "p") not in blocks
            if prose:
                split_breaks(p)
            held = stretches(p, fields)  # (a code paragraph's fields are counted too)
            found += [x for s in held if prose and not (x := Stretch(s, lang, code)).only_code]
    results = iter(translate_all([u for s in found for u in s.sources], translate))
    turned = list(
        {
            id(p): p
            for s in found
            if s.sources
            for p in [next(s.items[0].iterancestors(_NS + "p"))]
        }.values()
    )
    for stretch in found:
        if stretch.sources:  # a stretch of spaces alone is left as it is
            stretch.write([next(results) for _ in stretch.sources])
    retag_docx(doc, parts, retag)
    turn_paragraphs(turned, retag, lang)
    notes.save()
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()
