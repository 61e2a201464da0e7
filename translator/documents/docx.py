"""Word files: `translate_docx(data, translate, lang) -> bytes`.

The document is opened with python-docx and edited in place, then saved: styles, images,
numbering, sections and every part not translated are kept as they are. Translated are
the paragraphs of the body, of tables (nested ones too), text boxes, and of each section's
headers and footers.

A paragraph's text is read from its runs of text (text, tabs, breaks) and hyperlinks; a
run of anything else (an image, a field, a footnote mark) ends a stretch of text and stays
where it is, and each stretch is translated on its own. Within a stretch, runs formatted
otherwise than most of its text, and hyperlinks, are spans that inline.transfer carries to
the words aligned to theirs; the translation is written as clones of the source runs (so
bold, italics, fonts, colours come along) and of the hyperlink elements (their targets
kept), in place of the stretch's runs.
"""

from __future__ import annotations

import copy
import io
import zipfile
from collections import Counter

from translator.documents.units import GLUED, Marked, Translate, translate_all
from translator.errors import UserError

_NS = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
R, HYPERLINK, RPR = _NS + "r", _NS + "hyperlink", _NS + "rPr"
TEXT_PARTS = {_NS + n for n in ("rPr", "t", "tab", "br", "cr", "noBreakHyphen", "softHyphen",
                                "lastRenderedPageBreak")}  # fmt: skip
# kept where they are and not a stretch's end: they hold no text
QUIET = {_NS + n for n in ("pPr", "bookmarkStart", "bookmarkEnd", "proofErr", "permStart",
                           "permEnd", "commentRangeStart", "commentRangeEnd")}  # fmt: skip


def _text_run(r) -> bool:
    return all(child.tag in TEXT_PARTS for child in r)


def stretches(p) -> list[list]:
    """The paragraph `p`'s stretches: lists of consecutive text runs and hyperlinks (of text
    runs only), each ended by anything else it holds (module docstring)."""
    out, cur, field = [], [], 0
    for child in p:
        tag = child.tag
        if tag == R and child.find(_NS + "fldChar") is not None:
            kind = child.find(_NS + "fldChar").get(_NS + "fldCharType")
            field += {"begin": 1, "end": -1}.get(kind, 0)
            ok = False
        elif tag == R:
            ok = not field and _text_run(child)
        elif tag == HYPERLINK:
            ok = not field and all(r.tag == R and _text_run(r) for r in child)
        else:
            ok = None if tag in QUIET else False
        if ok:
            cur.append(child)
        elif ok is False and cur:
            out.append(cur)
            cur = []
    return [s for s in out + [cur] if s]


def _key(r) -> bytes:
    from lxml import etree

    rpr = r.find(RPR)
    return b"" if rpr is None else etree.tostring(rpr)


class Stretch(Marked):
    """A stretch's runs, read as plain text with spans: ('link', hyperlink) and
    ('run', first run of a group formatted alike, not the stretch's usual formatting)."""

    def __init__(self, items: list, lang):
        runs = [(r, item if item.tag == HYPERLINK else None)
                for item in items for r in (item if item.tag == HYPERLINK else [item])]  # fmt: skip
        self.items, texts = items, [r.text or "" for r, _ in runs]
        plain, at, starts = "".join(texts), 0, []
        for text in texts:
            starts.append(at)
            at += len(text)
        weight = Counter()
        for (r, link), text in zip(runs, texts, strict=True):
            weight[_key(r)] += 0 if link is not None else len(text)
        first = next((r for r, link in runs if link is None), runs[0][0])
        self.base = weight.most_common(1)[0][0] if weight else _key(first)
        self.template = next((r for r, _ in runs if _key(r) == self.base), first)
        spans = []
        for item in items:
            if item.tag == HYPERLINK:
                ends = [starts[k] + len(texts[k]) for k, (_, h) in enumerate(runs) if h is item]
                begins = [starts[k] for k, (_, h) in enumerate(runs) if h is item]
                if begins and ends[-1] > begins[0]:
                    spans.append((begins[0], ends[-1], ("link", item)))
        k = 0
        while k < len(runs):  # groups of consecutive runs formatted alike, in one link
            j = k
            while j + 1 < len(runs) and runs[j + 1][1] is runs[k][1] and (
                _key(runs[j + 1][0]) == _key(runs[k][0])):  # fmt: skip
                j += 1
            end = starts[j] + len(texts[j])
            if end > starts[k] and (_key(runs[k][0]) != self.base or runs[k][1] is not None):
                spans.append((starts[k], end, ("run", runs[k][0])))
            k = j + 1
        super().__init__(plain, spans, lang)

    def segments(self, results) -> list[tuple[object, object, str]]:
        """(hyperlink or None, run to clone, text) in order, from the units' results."""
        out, at = [], 0
        for (a, b), (words, seps, placed, glued) in zip(self.units, self.placed(results),
                                                       strict=True):  # fmt: skip
            out.append((None, self.template, self.plain[at:a]))
            out += self._unit(words, seps, placed, glued)
            at = b
        out.append((None, self.template, self.plain[at:]))
        merged = []
        for seg in (s for s in out if s[2]):
            if merged and merged[-1][:2] == seg[:2]:
                merged[-1] = (*seg[:2], merged[-1][2] + seg[2])
            else:
                merged.append(seg)
        return merged

    def _marked(self, segment) -> bool:
        return segment[0] is not None or segment[1] is not self.template

    def _unit(self, words, seps, placed, glued):
        """A unit's segments: each word with the innermost run span and the link holding it;
        punctuation glued to a word stays outside a span that left it out in the source."""
        pieces = []  # (word, part of it: lead, core or trail, its text, whitespace before)
        for k, word in enumerate(words):
            lead, core, trail = GLUED.match(word).groups()
            parts = (("lead", lead), ("core", core), ("trail", trail)) if core else ()
            parts = [(part, text) for part, text in parts if text] or [("core", word)]
            pieces += [(k, part, text, seps[k] if k and n == 0 else "")
                       for n, (part, text) in enumerate(parts)]  # fmt: skip
        out = []
        for k, part, text, sep in pieces:
            owner = self._owner(k, part, placed, glued)
            if out and out[-1][:2] == owner:
                out[-1] = (*owner, out[-1][2] + sep + text)
                continue
            if out and not (self._marked(out[-1]) and not self._marked(owner)):
                out[-1] = (*out[-1][:2], out[-1][2] + sep)  # spaces stay out of the markup
                sep = ""
            out.append((*owner, sep + text))
        return out

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
        anchor = self.items[0]
        parent = anchor.getparent()
        links: dict[int, object] = {}
        for link, run, text in self.segments(results):
            new = copy.deepcopy(run)
            new.text = text
            if link is None:
                anchor.addprevious(new)
            elif id(link) in links:
                links[id(link)].append(new)
            else:
                links[id(link)] = holder = copy.deepcopy(link)
                for r in list(holder):
                    holder.remove(r)
                holder.append(new)
                anchor.addprevious(holder)
        for item in self.items:
            parent.remove(item)


def _parts(doc):
    """The XML elements to translate: the body, each distinct header and footer."""
    seen, out = set(), [doc.element.body]
    for section in doc.sections:
        for hf in (section.header, section.footer, section.first_page_header,
                   section.first_page_footer, section.even_page_header,
                   section.even_page_footer):  # fmt: skip
            if not hf.is_linked_to_previous and id(hf._element) not in seen:
                seen.add(id(hf._element))
                out.append(hf._element)
    return out


def _open(data: bytes, name: str):
    import docx

    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise UserError(f"{name}: not a docx file (a docx is a zip archive)")
    try:
        return docx.Document(io.BytesIO(data))
    except Exception as err:  # python-docx raises several kinds for a zip that is no docx
        raise UserError(f"{name}: not a docx file ({type(err).__name__}: {err})") from None


def translate_docx(data: bytes, translate: Translate, lang: str | None = "en",
                   name: str = "the document") -> bytes:  # fmt: skip
    """The docx `data` translated (module docstring), as the bytes of a docx; `name`: the
    file's name in errors."""
    doc = _open(data, name)
    found = []
    for part in _parts(doc):
        for p in list(part.iter(_NS + "p")):
            found += [Stretch(s, lang) for s in stretches(p)]
    results = iter(translate_all([u for s in found for u in s.sources], translate))
    for stretch in found:
        if stretch.sources:  # a stretch of spaces alone is left as it is
            stretch.write([next(results) for _ in stretch.sources])
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()
