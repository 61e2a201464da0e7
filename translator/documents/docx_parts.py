"""The parts of a Word file that docx.py translates, and how it is opened: the XML
elements to translate (body, headers, footers), the styles for code, a run's or a
paragraph's style, a file python-docx cannot open refused in one line; and the wrappers
of runs a sentence reads through (WRAPPERS), at any depth, and their copies.
"""

from __future__ import annotations

import copy
import io
import re
import zipfile

from lxml import etree

from translator.errors import UserError

_NS = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
P, R, SDT, SDT_CONTENT = _NS + "p", _NS + "r", _NS + "sdt", _NS + "sdtContent"
_RPR = _NS + "rPr"
# elements around runs a sentence reads through (a link, a tracked insertion, a smart tag,
# an inline content control...): their runs are translated with it and written back in
# copies of them
WRAPPERS = {_NS + n for n in ("hyperlink", "ins", "moveTo", "smartTag", "customXml", "sdt",
                              "dir", "bdo")}  # fmt: skip
INSERTED = {_NS + "ins", _NS + "moveTo"}  # tracked insertions


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


# styles for code (pandoc's, Word's and common custom names): paragraphs in one are not
# translated, and runs in one are copied as they are where the translation changes them
CODE_PARAGRAPHS = {"source code", "html preformatted", "macro", "code", "verbatim", "preformatted"}
CODE_RUNS = {"verbatim char", "html code", "html keyboard", "html sample", "html typewriter",
             "code char", "source code char", "macro text char", "code", "inline code"}  # fmt: skip


def _code_styles(doc, kind: str, names: set[str]) -> frozenset[str]:
    """The ids of the styles of `kind` ("PARAGRAPH", "CHARACTER") that are, or are based on,
    a style named in `names` (in any case)."""
    from docx.enum.style import WD_STYLE_TYPE

    out = set()
    for style in doc.styles:
        if style.type != getattr(WD_STYLE_TYPE, kind):
            continue
        seen, at = set(), style
        while at is not None and at.style_id not in seen:
            seen.add(at.style_id)
            if (at.name or "").lower() in names:
                out.add(style.style_id)
                break
            at = at.base_style
    return frozenset(out)


def _style(el, kind: str = "r") -> str | None:
    """The style id of a run (`kind` "r") or a paragraph ("p"), None for none."""
    props = el.find(f"{_NS}{kind}Pr")
    style = None if props is None else props.find(f"{_NS}{kind}Style")
    return None if style is None else style.get(_NS + "val")


# a run's language and "do not check spelling": Word's proofing, which no reader sees, so
# runs differing in these alone are not set apart as spans (runs written as Word's spell
# checker left them)
PROOFING = {_NS + "lang", _NS + "noProof"}


def _props(r) -> bytes:
    """A run's properties, b"" for none."""
    rpr = r.find(_RPR)
    return b"" if rpr is None or not (len(rpr) or rpr.attrib) else etree.tostring(rpr)


def _key(r) -> bytes:
    """A run's formatting as a reader sees it: its properties bar the spelling settings
    (PROOFING)."""
    rpr = r.find(_RPR)
    if rpr is None or not any(child.tag in PROOFING for child in rpr):
        return _props(r)
    seen = copy.deepcopy(r)
    for child in [c for c in seen.find(_RPR) if c.tag in PROOFING]:
        seen.find(_RPR).remove(child)
    return _props(seen)


def _open(data: bytes, name: str):
    import docx

    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise UserError(f"{name}: not a docx file (a docx is a zip archive)")
    try:
        doc = docx.Document(io.BytesIO(data))
    except Exception as err:  # python-docx raises several kinds for a zip that is no docx
        raise UserError(f"{name}: not a docx file ({_why(err)})") from None
    for part in doc.part.package.iter_parts():
        element = getattr(part, "_element", None)
        if element is not None:
            _refuse_dtd(element, part.partname, name)
    return doc


def _refuse_dtd(element, partname: str, name: str) -> None:
    """Refuse a part whose XML declares a DTD: its entities would be left undefined in the
    file written (lxml drops the DTD)."""
    if element.getroottree().docinfo.doctype:
        raise UserError(
            f"{name}: {partname} declares a DTD, which Office files never do",
            "open it in Word or LibreOffice and save it again",
        )


def _why(err: Exception) -> str:
    """What python-docx's error says of the file, without its internals (object ids)."""
    text = str(err)
    if isinstance(err, KeyError) and "[Content_Types].xml" in text:
        return "a zip without the [Content_Types].xml every Office file holds"
    kind = re.search(r"content type is '([^']+)'", text)
    if kind:
        return f"an Office file of another kind: {kind.group(1)}"
    return f"{type(err).__name__}: {re.sub(r' object at 0x[0-9a-f]+', '', text)}"


def content(el) -> list:
    """What wrapper `el` holds around its runs, its properties aside (a paragraph's
    children, its own properties included, for a paragraph)."""
    holder = el.find(SDT_CONTENT) if el.tag == SDT else el
    if holder is None:
        return []
    return [c for c in holder if el.tag == P or not c.tag.endswith("Pr")]


def emptied(el, fresh: bool) -> tuple:
    """(a copy of wrapper `el` without its runs, the element in it to put runs in); `fresh`:
    a further copy, given an id of its own where `el` has one (a tracked change's, a
    content control's: Word's must be unique)."""
    clone = copy.deepcopy(el)
    holder = clone.find(SDT_CONTENT) if el.tag == SDT else clone
    for c in content(clone):
        holder.remove(c)
    control = clone.find(f"{_NS}sdtPr/{_NS}id")
    if fresh and clone.get(_NS + "id") is not None:
        clone.set(_NS + "id", str(_next_id(el)))
    if fresh and control is not None:
        control.set(_NS + "val", str(_next_id(el)))
    return clone, holder


def _next_id(el) -> int:
    """An id no element of `el`'s part holds (w:id, a content control's w:id/@w:val)."""
    root, taken = el.getroottree().getroot(), [0]
    for x in root.iter():
        for value in (x.get(_NS + "id"), x.get(_NS + "val") if x.tag == _NS + "id" else None):
            if value is not None and value.lstrip("-").isdigit():
                taken.append(abs(int(value)))
    return max(taken) + 1


def wrapped_runs(items, chain: tuple = ()) -> list[tuple]:
    """(run, the wrappers around it from the outermost) for each run of a stretch's
    `items`, in document order; `chain`: the wrappers around the items."""
    out = []
    for item in items:
        if item.tag in WRAPPERS:
            out += wrapped_runs(content(item), (*chain, item))
        elif item.tag == R:
            out.append((item, chain))
    return out


def flattened(items, whole=frozenset()) -> list:
    """`items` (a stretch's, and the siblings between them) with each wrapper of runs
    replaced by what it holds, at any depth: the runs and the marks between them in order
    (a wrapper without runs is a mark, and one whose id is in `whole`)."""
    out = []
    for el in items:
        if el.tag in WRAPPERS and id(el) not in whole and any(True for _ in el.iter(R)):
            out += flattened(content(el), whole)
        else:
            out.append(el)
    return out


def tracked_around(el, top, every: bool = False) -> tuple:
    """The wrappers between `el` and `top` (its paragraph, a wrapper a stretch is read in),
    outermost first, where a tracked insertion (w:ins, w:moveTo) is among them, or
    `every`: what `el` is part of for the revision (a link the insertion holds too); none
    where none is."""
    out = []
    for x in el.iterancestors():
        if x is top:
            break
        out += [x] if x.tag in WRAPPERS else []
    return tuple(reversed(out)) if every or any(x.tag in INSERTED for x in out) else ()


def wrapper_spans(found: list[tuple], starts: list[int], texts: list[str], plain: str):
    """(the spans ('link', wrapper) of the wrappers holding words, outer ones first, each
    one's (leading, trailing) space in it by id), from `found` (wrapped_runs) and its runs'
    `starts` and `texts` in the stretch's text `plain`."""
    spans, edges, held = [], {}, {}  # held: a wrapper's id -> [it, first run, last run]
    for k, (_, chain) in enumerate(found):  # (one pass: a paragraph may hold many wrappers)
        for w in chain:
            held.setdefault(id(w), [w, k, k])[2] = k
    for item, first, last in held.values():  # outer ones first, in the order they come
        a, b = starts[first], starts[last] + len(texts[last])
        if plain[a:b].strip():
            spans.append((a, b, ("link", item)))
            edges[id(item)] = (plain[a].isspace(), plain[b - 1].isspace())
    return spans, edges


def wordless(found: list[tuple], texts: list[str], starts: list[int], plain: str) -> dict:
    """The wrappers holding runs but no word, by id, each with (how many characters it
    holds, how many spaces stand just before it), from `found` (wrapped_runs) and its runs'
    `texts` and `starts` in the stretch's text `plain`."""
    held: dict[int, list] = {}  # a wrapper's id -> [start, end, text]
    for (_, chain), text, start in zip(found, texts, starts, strict=True):
        for w in chain:
            span = held.setdefault(id(w), [start, start, ""])
            span[1], span[2] = start + len(text), span[2] + text
    out = {}
    for key, (a, b, text) in held.items():
        if not text.strip():
            before = a
            while before and plain[before - 1] == " ":
                before -= 1
            out[key] = (b - a, a - before)
    return out


def absorbed(segments: list[tuple], blank: dict[int, tuple], mark) -> list[tuple]:
    """`segments` (link or `mark`, run or element, text) bar empty texts, as many spaces as
    each wrapper `blank` holds (moved whole: a `mark` segment) taken out of the text beside
    it, before it first, so that the translation has its space once, in the wrapper; the
    spaces left on its two sides parted as in the source, as many before it as there
    (`blank`: wordless's)."""
    out = [list(s) for s in segments]
    for k, (link, el, _) in enumerate(out):
        if link is not mark or id(el) not in blank:
            continue
        left, before = blank[id(el)]
        # the text beside it, past the marks holding no text (a bookmark's start)
        sides = [_beside(out, k, step, blank, mark) for step in (-1, 1)]
        for side, end in zip(sides, (-1, 0), strict=True):  # (its end, its start)
            while left and side and _dropped(side, end):
                left -= 1
        a, b = sides
        if not (a and b):
            continue
        was = len(a[2]) - len(a[2].rstrip(" "))
        spaces = was + len(b[2]) - len(b[2].lstrip(" "))
        n = min(before, spaces)
        to, of = (a, b) if n > was else (b, a)
        if to[0] is not None and to[0] is not of[0] or _key(to[1]) != _key(of[1]):
            n = was  # (a space moves into a wrapper, or a run formatted otherwise, not)
        a[2], b[2] = a[2].rstrip(" ") + " " * n, " " * (spaces - n) + b[2].lstrip(" ")
    return [tuple(s) for s in out if s[2] or s[0] is mark]


def _beside(out: list, k: int, step: int, blank: dict, mark) -> list | None:
    """The segment of text nearest to segment `k` of `out` on the side `step` (-1, 1), past
    the marks that hold no text; None where another wrapper moved whole or nothing is."""
    j = k + step
    while 0 <= j < len(out) and out[j][0] is mark and id(out[j][1]) not in blank:
        j += step
    return out[j] if 0 <= j < len(out) and out[j][0] is not mark else None


def _dropped(side: list, end: int) -> bool:
    """Whether a space of the whitespace at `side`'s end (-1) or start (0) was taken out
    of its text, the one nearest to that edge (a tab or a line break stays)."""
    text = side[2]
    for i in range(len(text) - 1, -1, -1) if end else range(len(text)):
        if not text[i].isspace():
            return False
        if text[i] not in "\t\n":
            side[2] = text[:i] + text[i + 1 :]
            return True
    return False


def joined(segments: list[tuple]) -> list[tuple]:
    """`segments` (link, run, text) with neighbours in the same link and run made one."""
    out: list[tuple] = []
    for seg in segments:
        if out and out[-1][:2] == seg[:2]:
            out[-1] = (*seg[:2], out[-1][2] + seg[2])
        else:
            out.append(seg)
    return out


def shared(held: list[tuple], chain: tuple) -> int:
    """How many of the copies `held` (outermost first) are of the wrappers `chain` begins
    with: those a segment in `chain` goes on in."""
    return next((n for n, (w, _) in enumerate(held) if n >= len(chain) or w is not chain[n]),
                len(held))  # fmt: skip
