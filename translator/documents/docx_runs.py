"""A paragraph's stretches of text runs, and a run's text as docx.py reads and writes it.

A run's text is read from its children: w:t, w:tab ("\t"), a line break (w:br, w:cr:
"\n"), a no-break hyphen ("-"); a soft hyphen reads as nothing. The translation is written
back keeping them: each tab and line break of the source goes where `gaps` puts it among
the translated words, written as the source's element (a w:br's w:clear, a w:cr kept), and
a word the translation copies keeps its no-break and soft hyphens. A page or column break
and a positional tab (w:ptab: the left, centre and right parts of a header) are put in a
run of their own, which ends a stretch: the text on each side is translated apart.
"""

from __future__ import annotations

import copy
import re

from docx.oxml import OxmlElement

from translator.documents.docx_parts import _NS, INSERTED, WRAPPERS, R, content
from translator.documents.inline import core
from translator.documents.units import Alignment, words_and_seps

HYPERLINK, RPR, T = _NS + "hyperlink", _NS + "rPr", _NS + "t"
BR, CR, TAB, PTAB = _NS + "br", _NS + "cr", _NS + "tab", _NS + "ptab"
NO_BREAK, SOFT, RENDERED_BREAK = (
    _NS + "noBreakHyphen",
    _NS + "softHyphen",
    _NS + "lastRenderedPageBreak",
)
FLD_CHAR, P = _NS + "fldChar", _NS + "p"
TEXT_PARTS = {_NS + n for n in ("rPr", "t", "tab", "ptab", "br", "cr", "noBreakHyphen",
                                "softHyphen", "lastRenderedPageBreak")}  # fmt: skip
# kept where they are and not a stretch's end: they hold no text (in a hyperlink too)
# (deleted text too, as it is: after the translation of the word it followed, or before
# that of an insertion it touches, which it reads as replaced: _deleted_at)
QUIET = {_NS + n for n in ("pPr", "bookmarkStart", "bookmarkEnd", "proofErr", "permStart",
                           "permEnd", "commentRangeStart", "commentRangeEnd", "del",
                           "moveFrom")}  # fmt: skip
DELETED = {_NS + "del", _NS + "moveFrom"}
_CHARS = {TAB: "\t", CR: "\n", NO_BREAK: "-"}
_WORD = re.compile(r"[\w-]+")


class Fields:
    """How many fields are open (w:fldChar begin without its end yet) where a part's next
    paragraph starts: a field's text, its result included, may run over paragraphs. A
    field whose end the part never holds is taken to end with its paragraph, so one broken
    field does not leave the rest of the part untranslated."""

    def __init__(self):
        self.depth = 0
        self.dangling = 0  # begins counted in this paragraph whose end the part lacks
        self.unended: list | None = None  # those begins, kept alive while their ids are used
        self.unended_ids: set[int] = set()

    def count(self, el) -> bool:
        """Count the field characters in `el` (a run, a link, a tracked change, a content
        control: anything a paragraph holds), in document order; whether it has any."""
        chars = [c for c in el.iter(FLD_CHAR) if _own(c, el)]
        for c in chars:
            kind = c.get(_NS + "fldCharType")
            if kind == "begin" and id(c) in self._unended(c):
                self.dangling += 1
            self.depth = max(0, self.depth + {"begin": 1, "end": -1}.get(kind, 0))
        return bool(chars)

    def paragraph_end(self) -> None:
        """Close the fields begun in the paragraph that never end in its part."""
        self.depth, self.dangling = max(0, self.depth - self.dangling), 0

    def _unended(self, c) -> set[int]:
        """The ids of the begins of the part holding `c` (its XML tree) that no end closes."""
        if self.unended is None:
            opened: list = []
            for x in c.getroottree().getroot().iter(FLD_CHAR):
                kind = x.get(_NS + "fldCharType")
                if kind == "begin":
                    opened.append(x)
                elif kind == "end" and opened:
                    opened.pop()
            self.unended, self.unended_ids = opened, {id(x) for x in opened}
        return self.unended_ids


def _own(c, el) -> bool:
    """Whether field character `c` inside `el` is the paragraph's own, not one of a
    paragraph nested in it (a text box's, read as a paragraph of its own)."""
    up = c.getparent()
    while up is not el and up.tag != P:
        up = up.getparent()
    return up is el


def _page_break(el) -> bool:
    return el.tag == BR and el.get(_NS + "type") in ("page", "column")


def _parting(el) -> bool:
    """Whether a run's child ends a stretch: a page or column break, a positional tab."""
    return el.tag == PTAB or _page_break(el)


def _text_run(r) -> bool:
    return all(c.tag in TEXT_PARTS and not _parting(c) for c in r)


def stretches(p, fields: Fields | None = None) -> list[list]:
    """The paragraph `p`'s stretches: lists of consecutive text runs and wrappers of text
    runs and quiet marks, each ended by anything else it holds, outside fields; a wrapper
    holding more (a field, an image) ends one and its own text runs are stretches apart;
    `fields`: those open before `p` (none where not given), counted on."""
    fields = fields or Fields()
    out: list[list] = []
    _collect(p, fields, out)
    fields.paragraph_end()
    return out


def _collect(parent, fields: Fields, out: list) -> None:
    """The stretches in `parent` (a paragraph, a wrapper read into) added to `out`."""
    cur: list = []
    for child in content(parent):
        tag = child.tag
        if tag in WRAPPERS and not any(True for _ in child.iter(R)):
            ok = None  # a wrapper without runs holds no text: kept where it is
        elif tag in WRAPPERS:
            fielded = fields.depth or any(True for _ in child.iter(FLD_CHAR))
            ok = not fielded and _readable(child)
            if not ok:
                out += [cur] if cur else []
                cur = []
                _collect(child, fields, out)
                continue
        elif fields.count(child):
            ok = False
        elif tag == R:
            ok = not fields.depth and _text_run(child)
        else:
            ok = None if tag in QUIET else False
        if ok:
            cur.append(child)
        elif ok is False and cur:
            out.append(cur)
            cur = []
    out += [cur] if cur else []


def _readable(el) -> bool:
    """Whether wrapper `el` holds text runs, quiet marks and such wrappers alone, at any
    depth (a w:ins in a w:smartTag, a w:sdt in a w:ins): read with its sentence."""
    return all(c.tag == R and _text_run(c) or c.tag in QUIET or c.tag in WRAPPERS and (
        not any(True for _ in c.iter(R)) or _readable(c)) for c in content(el))  # fmt: skip


def split_breaks(p) -> None:
    """Each page or column break and positional tab in a run of `p` moved to a run of its
    own (the run's properties copied) where the run holds more: there it ends a stretch."""
    for r in list(p.iter(R)):
        kids = [c for c in r if c.tag != RPR]
        if len(kids) < 2 or not any(_parting(c) for c in kids):
            continue
        pieces: list[list] = [[]]
        for c in kids:
            if _parting(c):
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
    """A stretch's line breaks and tabs in their order, and its no-break and soft hyphens
    by the word holding them (whitespace to whitespace, punctuation too, in any case; a
    hyphen between words by the word before it), to write back; and where Word last broke
    the page in it (w:lastRenderedPageBreak, a hint for readers), put in its first run."""

    def __init__(self, runs):
        self.lines, self.tabs, text, marks = [], [], "", []  # marks: (where in text, tag)
        self.hints = [c for r in runs for c in r if c.tag == RENDERED_BREAK]
        for r in runs:  # (the stretch's text as a whole: a word may span runs)
            for c in r:
                if c.tag in (BR, CR) and not _page_break(c):
                    self.lines.append(c)
                elif c.tag == TAB:
                    self.tabs.append(c)
                elif c.tag in (NO_BREAK, SOFT):
                    marks.append((len(text), c.tag))
                text += _text(c)
        # casefolded word -> each of its (word, [(where in it, tag)]) in order
        self.words: dict[str, list] = {}
        spans = [m.span() for m in re.finditer(r"\S+", text)]
        for k, (a, b) in enumerate(spans):
            nxt = spans[k + 1][0] if k + 1 < len(spans) else len(text) + 1
            inside = [(min(max(at - a, 0), b - a), tag) for at, tag in marks
                      if (at >= a or not k) and at < nxt]  # fmt: skip
            self.words.setdefault(text[a:b].casefold(), []).append((text[a:b], inside))
        # a word's letters alone, for a target word that is no source word
        self.cores: dict[str, tuple] = {}
        for m in _WORD.finditer(text) if marks else ():
            inside = [(at - m.start(), tag) for at, tag in marks if m.start() <= at <= m.end()]
            if inside:
                self.cores.setdefault(m.group().casefold(), (m.group(), inside))
        self.hyphens: dict[int, list] = {}  # where in the target -> [(tag, at a word's end)]
        self.offset = 0

    def plan(self, text: str) -> None:
        """Place the hyphens in `text`, the stretch's translation that `fill` writes in turn:
        the n-th target word the same as a source word takes the n-th's, another takes the
        hyphens inside its letters of a source word's letters."""
        self.hyphens, self.offset, seen = {}, 0, {}
        for m in re.finditer(r"\S+", text):
            key = m.group().casefold()
            n = seen[key] = seen.get(key, -1) + 1
            if key in self.words:
                if n < len(self.words[key]):
                    self._put(m.start(), m.group(), *self.words[key][n])
                continue
            for w in _WORD.finditer(m.group()):
                source, marks = self.cores.get(w.group().casefold(), ("", ()))
                self._put(m.start() + w.start(), w.group(), source, marks)

    def _put(self, start: int, word: str, source: str, marks) -> None:
        for at, tag in marks:
            if (to := _shifted(source, word, at)) is not None:
                self.hyphens.setdefault(start + to, []).append((tag, to == len(word)))

    def fill(self, r, text: str) -> None:
        """Run `r`'s content (not its properties) replaced by `text`, the next piece of the
        text `plan` placed the hyphens in, with the stretch's line breaks and tabs in turn
        and its hyphens (one at a word's end goes with the word)."""
        for c in [c for c in r if c.tag != RPR]:
            r.remove(c)
        r.extend(copy.deepcopy(c) for c in self.hints)
        self.hints = []
        start, self.offset = self.offset, self.offset + len(text)
        hyphens: dict[int, list] = {}
        for at, tags in self.hyphens.items():
            for tag, end in tags:
                if start <= at - end < start + len(text):
                    hyphens.setdefault(at - start, []).append(tag)
        chunk = []
        for at, ch in enumerate(text + "\0"):
            # (a no-break hyphen stands for a "-": none where a word's case folds to
            # another length)
            tags = [t for t in hyphens.get(at, ()) if t != NO_BREAK or ch == "-"]
            if ch in "\t\n\0" or tags:
                _add_text(r, "".join(chunk))
                chunk = []
            r.extend(OxmlElement("w:" + tag.rsplit("}", 1)[1]) for tag in tags)
            if ch in "\t\n":
                queue = self.tabs if ch == "\t" else self.lines
                r.append(copy.deepcopy(queue.pop(0)) if queue else OxmlElement(
                    "w:tab" if ch == "\t" else "w:br"))  # fmt: skip
            elif ch != "\0" and NO_BREAK not in tags:
                chunk.append(ch)


def _shifted(source: str, word: str, at: int) -> int | None:
    """Where offset `at` of word `source` stands in `word`, the same word in another case:
    moved as far as the case change lengthened the letters before it ("Fuß|ball",
    "FUSS|BALL"); None where the change is not that (no place to tell)."""
    for case in (str, str.upper, str.lower):
        if case(source) == word:
            return len(case(source[:at]))
    return at if len(word) == len(source) else None


def gaps(source: str, text: str, alignment: Alignment) -> list[str]:
    """The whitespace before each word of `text.split()`, the translation of `source`:
    single spaces, but the source's whitespace holding a tab or a line break goes before
    the target word after the last one aligned to the source words before it (without an
    alignment: at the same share of the words), between two words while there are two;
    several may meet in one place, in the source's order, so none is lost. The source's
    own whitespace where the translation has its words unchanged."""
    words, seps = words_and_seps(source)
    target = text.split()
    if target == words:
        return seps
    out, n = [""] + [" "] * (len(target) - 1), len(target)
    at, moved = (1 if n > 1 else 0), set()
    for k, sep in enumerate(seps):
        if not n or not k or not set(sep) & {"\t", "\n"}:
            continue
        linked = [j for i, j in alignment or () if i < k and 0 <= j < n]
        at = max(at, min(max(linked) + 1 if linked else round(k * n / len(words)), n - 1))
        out[at] = out[at] + sep if at in moved else sep
        moved.add(at)
    return out


def _add_text(r, text: str) -> None:
    if text:
        t = OxmlElement("w:t")
        t.text = text
        if text != text.strip():
            t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
        r.append(t)


def _paired(spans: list, placed: list, alignment, words: list[str]) -> list:
    """`placed` with each start and end of one range in the unit (a bookmark's, a comment's:
    empty marks of one w:id) moved to either side of the target words aligned to the source
    words between them (inline.core's choice), so the range marks their translation however
    the words moved; a range whose words align to nothing keeps its places."""
    out, opened = list(placed), {}
    targets: dict[int, list[int]] = {}  # source word -> the target words aligned to it
    for w, t in alignment or ():
        if 0 <= t < len(words):
            targets.setdefault(w, []).append(t)
    for i, (s, _, (kind, payload)) in enumerate(spans):
        if kind != "mark":
            continue
        at = _deleted_at(payload[0], s, targets, words) if payload[0].tag in DELETED else None
        if at is not None:
            out[i] = (at, at, out[i][2])
        name = payload[0].tag.rsplit("}", 1)[-1]
        key = (name.removesuffix("Start").removesuffix("End"), payload[0].get(_NS + "id"))
        if name.endswith("Start"):
            opened[key] = i
        elif name.endswith("End") and key in opened:
            j = opened.pop(key)
            links = [targets.get(k, []) for k in range(spans[j][0], s)]
            if picked := core(links, words):
                out[j] = (picked[0], picked[0], out[j][2])
                out[i] = (picked[-1] + 1, picked[-1] + 1, out[i][2])
    return out


def _deleted_at(el, s: int, targets: dict, words: list[str]) -> int | None:
    """Where deleted text `el`, before source word `s`, goes among the target `words`
    (`targets`: each source word's aligned target words): after the translation of the
    word it followed; before that of the word it precedes where that word is inserted (a
    replacement) or none precedes it. None: not aligned."""
    ahead = next((x for x in el.itersiblings() if x.tag not in QUIET), None)
    forward = not s or ahead is not None and ahead.tag in INSERTED
    for k in [s] if forward else range(s - 1, -1, -1):
        if picked := core([targets.get(k, [])], words):
            return picked[0] if forward else picked[0] + 1
    return None
