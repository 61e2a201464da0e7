"""A paragraph's stretches of text runs, and a run's text as docx.py reads and writes it.

A run's text is read from its children: w:t, w:tab and w:ptab ("\t"), a line break (w:br,
w:cr: "\n"), a no-break hyphen ("-"); a soft hyphen reads as nothing. The translation is
written back keeping them: each "\n" and "\t" of a stretch's translation takes the source's
line break or tab of its rank (a w:br's w:clear, a w:cr, a w:ptab's position kept), and a
word the translation copies keeps its no-break and soft hyphens. A page or column break is
put in a run of its own, which ends a stretch: the text on each side is translated apart.
"""

from __future__ import annotations

import copy
import re

from docx.oxml import OxmlElement

from translator.documents.docx_parts import _NS

R, HYPERLINK, RPR, T = _NS + "r", _NS + "hyperlink", _NS + "rPr", _NS + "t"
BR, CR, TAB, PTAB = _NS + "br", _NS + "cr", _NS + "tab", _NS + "ptab"
NO_BREAK, SOFT = _NS + "noBreakHyphen", _NS + "softHyphen"
TEXT_PARTS = {_NS + n for n in ("rPr", "t", "tab", "ptab", "br", "cr", "noBreakHyphen",
                                "softHyphen", "lastRenderedPageBreak")}  # fmt: skip
# kept where they are and not a stretch's end: they hold no text (in a hyperlink too)
QUIET = {_NS + n for n in ("pPr", "bookmarkStart", "bookmarkEnd", "proofErr", "permStart",
                           "permEnd", "commentRangeStart", "commentRangeEnd")}  # fmt: skip
_CHARS = {TAB: "\t", PTAB: "\t", CR: "\n", NO_BREAK: "-"}
_WORD = re.compile(r"[\w-]+")


class Fields:
    """How many fields are open (w:fldChar begin without its end yet) where a part's next
    paragraph starts: a field's text, its result included, may run over paragraphs."""

    depth = 0

    def count(self, el) -> bool:
        """Count the field characters in run `el` (or a link's runs); whether it has any."""
        chars = [c for r in ([el] if el.tag == R else el.iterchildren(R))
                 for c in r.iterchildren(_NS + "fldChar")]  # fmt: skip
        for c in chars:
            kind = c.get(_NS + "fldCharType")
            self.depth = max(0, self.depth + {"begin": 1, "end": -1}.get(kind, 0))
        return bool(chars)


def _page_break(el) -> bool:
    return el.tag == BR and el.get(_NS + "type") in ("page", "column")


def _text_run(r) -> bool:
    return all(c.tag in TEXT_PARTS and not _page_break(c) for c in r)


def stretches(p, fields: Fields | None = None) -> list[list]:
    """The paragraph `p`'s stretches: lists of consecutive text runs and hyperlinks (of text
    runs and quiet marks), each ended by anything else it holds, outside fields; `fields`:
    those open before `p` (none where not given), counted on."""
    fields = fields or Fields()
    out, cur = [], []
    for child in p:
        tag = child.tag
        if tag in (R, HYPERLINK) and fields.count(child):
            ok = False
        elif tag == R:
            ok = not fields.depth and _text_run(child)
        elif tag == HYPERLINK and not any(r.tag == R for r in child):
            ok = None  # a link without runs holds no text: kept where it is
        elif tag == HYPERLINK:
            ok = not fields.depth and all(
                r.tag == R and _text_run(r) or r.tag in QUIET for r in child)  # fmt: skip
        else:
            ok = None if tag in QUIET else False
        if ok:
            cur.append(child)
        elif ok is False and cur:
            out.append(cur)
            cur = []
    return [s for s in out + [cur] if s]


def split_breaks(p) -> None:
    """Each page or column break in a run of `p` moved to a run of its own (the run's
    properties copied) where the run holds more: there it ends a stretch."""
    for r in list(p.iter(R)):
        kids = [c for c in r if c.tag != RPR]
        if len(kids) < 2 or not any(_page_break(c) for c in kids):
            continue
        pieces: list[list] = [[]]
        for c in kids:
            if _page_break(c):
                pieces += [[c], []]
            else:
                pieces[-1].append(c)
        at = r
        for piece in [piece for piece in pieces if piece][1:]:
            new = copy.deepcopy(r)
            for c in [c for c in new if c.tag != RPR]:
                new.remove(c)
            new.extend(piece)  # (moved out of r)
            at.addnext(new)
            at = new


def _text(c) -> str:
    """The text of a run's child `c`."""
    if c.tag == T:
        return c.text or ""
    if c.tag == BR:
        return "" if _page_break(c) else "\n"
    return _CHARS.get(c.tag, "")


def run_text(r) -> str:
    """The text of run `r` (module docstring)."""
    return "".join(_text(c) for c in r)


class Specials:
    """A stretch's line breaks and tabs in their order, and its words holding no-break or
    soft hyphens (in any case: where each stands in the word), to write back."""

    def __init__(self, runs):
        self.lines, self.tabs, self.words = [], [], {}
        for r in runs:
            text, marks = "", []  # marks: (where in text, its tag)
            for c in r:
                if c.tag in (BR, CR) and not _page_break(c):
                    self.lines.append(c)
                elif c.tag in (TAB, PTAB):
                    self.tabs.append(c)
                elif c.tag in (NO_BREAK, SOFT):
                    marks.append((len(text), c.tag))
                text += _text(c)
            for m in _WORD.finditer(text) if marks else ():
                inside = [(at - m.start(), tag) for at, tag in marks if m.start() <= at <= m.end()]
                if inside:
                    self.words.setdefault(m.group().casefold(), inside)

    def fill(self, r, text: str) -> None:
        """Run `r`'s content (not its properties) replaced by `text`, with the stretch's
        line breaks and tabs in turn, and the hyphens of the words it copies."""
        for c in [c for c in r if c.tag != RPR]:
            r.remove(c)
        hyphens = {}
        for m in _WORD.finditer(text):
            for at, tag in self.words.get(m.group().casefold(), ()):
                hyphens[m.start() + at] = tag
        chunk = []
        for at, ch in enumerate(text + "\0"):
            tag = hyphens.get(at)
            if tag == NO_BREAK and ch != "-":
                tag = None  # (a word whose case folds to another length)
            if ch in "\t\n\0" or tag:
                _add_text(r, "".join(chunk))
                chunk = []
            if tag:
                r.append(OxmlElement("w:" + tag.rsplit("}", 1)[1]))
            if ch in "\t\n":
                queue = self.tabs if ch == "\t" else self.lines
                r.append(copy.deepcopy(queue.pop(0)) if queue else OxmlElement(
                    "w:tab" if ch == "\t" else "w:br"))  # fmt: skip
            elif ch != "\0" and tag != NO_BREAK:
                chunk.append(ch)


def _add_text(r, text: str) -> None:
    if text:
        t = OxmlElement("w:t")
        t.text = text
        if text != text.strip():
            t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
        r.append(t)
